"""`python -m albert_keras.demo`: the demo at its defaults, with no import of the command line."""

import subprocess
import sys

import pytest


def run_module(*args):
    return subprocess.run(
        [sys.executable, "-m", "albert_keras.demo", *args],
        check=False,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_help_points_to_the_command_for_flags():
    result = run_module("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("`python -m albert_keras.demo [OUTPUT_DIR]`")
    assert "albert-keras demo\n--help" in result.stdout


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_flags_are_refused_in_one_line():
    result = run_module("--pretrain_steps=5")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "python -m albert_keras.demo: takes only OUTPUT_DIR, got --pretrain_steps=5; "
        "for flags run: albert-keras demo --help"
    )
