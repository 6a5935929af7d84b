"""Ctrl-C and a full disk end a command in one line (they printed 40-line tracebacks); every
writing command has an --overwrite that says it removes only that command's files (issue 29)."""

import argparse
import errno
import json
import sys

import pytest
from test_cli import PROBE, run_python

from albert_keras_cli import main as cli

TRAINING = (
    "pretrain",
    "distill",
    "finetune-glue",
    "finetune-squad",
    "finetune-tokens",
    "finetune-choice",
    "study",
)


@pytest.mark.parametrize("command", TRAINING)
def test_overwrite_help_says_it_removes_only_the_commands_own_files(command):
    result = run_python(PROBE, command, "--help")
    assert result.stdout.strip().splitlines()[-1] == "EXIT 0 False False", result.stderr
    help_text = " ".join(result.stdout.split())
    assert f"--overwrite when --output_dir holds an earlier `albert-keras {command}` run" in (
        help_text
    )
    assert "remove only the files that run wrote" in help_text


def _failing(monkeypatch, command, error):
    """`command`'s run raises `error` (as a job interrupted or out of space would)."""
    module = sys.modules.get(cli.SUBCOMMANDS[command][0]) or __import__(
        cli.SUBCOMMANDS[command][0], fromlist=["run"]
    )

    def run(args):
        raise error

    monkeypatch.setattr(module, "run", run)


def test_ctrl_c_is_one_line_saying_what_was_kept(monkeypatch, tmp_path, capsys):
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / "checkpoint.json").write_text(json.dumps({"step": 300}))
    _failing(monkeypatch, "pretrain", KeyboardInterrupt())
    assert cli.main(["pretrain", "--records", "r", "--output_dir", str(out)]) == 130
    assert capsys.readouterr().err.strip().splitlines() == [
        (
            f"albert-keras pretrain: interrupted; the checkpoint of step 300 is kept in "
            f"{out / 'checkpoints'}: rerun the same command to resume from it"
        )
    ]
    _failing(monkeypatch, "finetune-glue", KeyboardInterrupt())
    argv = ["finetune-glue", "--task", "RTE", "--glue_dir", "g", "--model", "m", "--output_dir",
            str(out)]  # fmt: skip
    assert cli.main(argv) == 130
    assert capsys.readouterr().err.strip().splitlines() == [
        (
            "albert-keras finetune-glue: interrupted; fine-tuning keeps no checkpoint: rerun the "
            "same command to start it again"
        )
    ]


@pytest.mark.parametrize(
    "command, step, said",
    [
        ("distill", None, "no checkpoint was saved yet: rerun the same command to start again"),
        ("distill", 20, ("the checkpoint of step 20 is kept in OUT/checkpoints: rerun the same "
         "command to resume from it")),
        ("study", None, ("the finished runs and the last checkpoint of the one in progress are "
         "kept in OUT: rerun the same command to resume")),
        ("demo", None, "only whole files were kept: rerun the same command to start it again"),
    ],
)  # fmt: skip
def test_what_an_interrupted_command_says(command, step, said, tmp_path):
    if step is not None:
        (tmp_path / "checkpoints").mkdir()
        (tmp_path / "checkpoints" / "checkpoint.json").write_text(json.dumps({"step": step}))
    args = argparse.Namespace(command=command, output_dir=str(tmp_path))
    assert cli.interrupted(args) == said.replace("OUT", str(tmp_path))


def test_a_full_disk_is_one_line(monkeypatch, tmp_path, capsys):
    error = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "run" / "x.npz"))
    _failing(monkeypatch, "distill", error)
    argv = ["distill", "--teacher", "t", "--records", "r", "--output_dir", str(tmp_path / "run")]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        (
            f"albert-keras distill: error: {tmp_path / 'run' / 'x.npz'}: no space left on the "
            "device; free some space and rerun"
        )
    ]
    # Any other OSError is a bug to report: its traceback stays.
    _failing(monkeypatch, "distill", OSError(errno.EIO, "Input/output error"))
    with pytest.raises(OSError, match="Input/output error"):
        cli.main(argv)
