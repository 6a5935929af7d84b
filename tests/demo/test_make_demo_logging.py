"""`make demo` runs the command (`albert-keras demo`), whose TensorFlow start-up lines ("failed
call to cuInit", oneDNN notices) are hidden by the CLI's quiet logging (issue 30)."""

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[2]


def test_make_demo_runs_the_command_line():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n\t(.*)$", makefile, re.MULTILINE).group(1)
    assert recipe == "$(PY) -m albert_keras_cli demo $(DEMO_ARGS)"


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_the_demo_loads_tensorflow_without_a_cpp_log_line(tmp_path):
    # A bad --config is refused by the demo itself, after TensorFlow and Keras have loaded: all
    # stderr holds then is that one line.
    result = subprocess.run(
        [sys.executable, "-m", "albert_keras_cli", "demo", f"--output_dir={tmp_path / 'out'}",
         "--config=bogus=1"],
        cwd=ROOT, check=False, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("albert-keras demo: error: --config bogus: not a backbone argument")
