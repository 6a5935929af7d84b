"""`HelpFormatter`: every command's `--help` format: each flag's default in its help, and a
required flag said to be required (not "(default: None)", which argparse's own formatter wrote
beside a flag its usage line showed as required)."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """`argparse.ArgumentDefaultsHelpFormatter`, with "(required)" for a required flag.

    Example:
    >>> parser = argparse.ArgumentParser(prog="cmd", formatter_class=HelpFormatter)
    >>> _ = parser.add_argument("--model", required=True, help="the model")
    >>> _ = parser.add_argument("--steps", type=int, default=10, help="steps")
    >>> print(" ".join(parser.format_help().split()))
    usage: cmd [-h] --model MODEL [--steps STEPS] options: -h, --help show this help message and exit --model MODEL the model (required) --steps STEPS steps (default: 10)
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "(required)" in text:  # e.g. one of a required group (`convert --from`)
            return text
        if action.required and action.option_strings:
            return f"{text} (required)".strip()
        return super()._get_help_string(action)


class RawEpilogHelpFormatter(HelpFormatter):
    """`HelpFormatter` that prints the parser's epilog as written (a table of lines): argparse's
    own `RawDescriptionHelpFormatter` would keep the description's line breaks too."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:  # the epilog's lines, not a description's sentences
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)
