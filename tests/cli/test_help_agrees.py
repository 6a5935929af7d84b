"""Every command's `--help` agrees with its parser (issue 46): a flag the usage line shows
outside brackets is one the command requires, a flag whose help says "(required)" is shown
so, and a required flag's help shows no "(default: None)". (`export --help` showed
`[--model MODEL]` beside "the model to export (required)".)"""

import contextlib
import io

import pytest

from albert_keras_cli.main import SUBCOMMANDS, main


def _help(command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([command, "--help"])
    return out.getvalue()


def _usage_and_flags(text: str) -> tuple[str, dict[str, str]]:
    """The usage (one line) and each flag's help (one line), from `--help`'s text."""
    head, _, options = text.partition("\noptions:\n")
    usage = " ".join(head.split("\n\n")[0].split())
    flags, current = {}, None
    for line in options.splitlines():
        stripped = line.strip()
        if line.startswith("  -") and not line.startswith("   "):
            current = stripped.split()[0].rstrip(",")
            flags[current] = stripped
        elif current and stripped:
            flags[current] += " " + stripped
    return usage, flags


def _shown_required(usage: str, flag: str) -> bool | None:
    """Whether the usage shows `flag` required (out of brackets); None when not shown."""
    at = usage.find(f" {flag} ") if f" {flag} " in usage else usage.find(f"[{flag}")
    if at < 0:
        at = usage.find(f" {flag}")
        if at < 0:
            return None
    return usage[at] == " " and usage[at - 1] != "|" and not usage[:at].endswith("[")


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_the_usage_line_agrees_with_the_help_text(command):
    usage, flags = _usage_and_flags(_help(command))
    assert flags, command
    for flag, text in flags.items():
        if flag in ("-h", "--help"):
            continue
        says_required = "(required)" in text
        shown = _shown_required(usage, flag)
        assert shown is not None, f"{command}: {flag} is missing from the usage: {usage}"
        assert shown == says_required, f"{command} {flag}: usage {usage!r} vs help {text!r}"
        if shown:
            assert "(default: None)" not in text, f"{command} {flag}: {text}"
