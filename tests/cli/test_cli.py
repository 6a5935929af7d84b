"""The `albert-keras` shell: fast help without TensorFlow, one `--config` style, quiet logs."""

import os
import re
import subprocess
import sys

import pytest

from albert_keras_cli import __version__
from albert_keras_cli.config_flags import parse_config_flags
from albert_keras_cli.quiet_logging import drop_cpp_log_lines

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code, *args, env=None):
    environment = {**os.environ, "PYTHONPATH": REPO_ROOT, **(env or {})}
    environment.pop("TF_CPP_MIN_LOG_LEVEL", None)  # as a user's shell: nothing set
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False,
        capture_output=True,
        text=True,
        env=environment,
    )


# Runs main(argv) and prints the exit code and whether TensorFlow got imported.
PROBE = """
import sys
from albert_keras_cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
print("EXIT", code, "tensorflow" in sys.modules, "keras" in sys.modules)
"""


@pytest.mark.parametrize(
    "argv, code",
    [
        (["--help"], 0),
        (["--version"], 0),
        (["pretrain", "--help"], 0),
        (["finetune-glue", "--help"], 0),
        (["finetune-squad", "--help"], 0),
        (["finetune-squad", "--version", "3.0", "--model", "m", "--output_dir", "o"], 2),
        (["convert", "--help"], 0),
        (["distill", "--help"], 0),
        (
            [
                "distill",
                "--student_init",
                "half",
                "--teacher",
                "t",
                "--records",
                "r",
                "--output_dir",
                "o",
            ],
            2,
        ),
        ([], 2),
        (["train"], 2),
        (["pretrain", "--max_steps", "many", "--records", "x", "--output_dir", "y"], 2),
        (["pretrain", "--output_dir", "y"], 2),
        # A bad setting is refused by the settings class, before TensorFlow loads.
        (["pretrain", "--records", "x", "--output_dir", "y", "--batch_size", "0"], 2),
        (
            [
                "distill",
                "--teacher",
                "t",
                "--records",
                "x",
                "--output_dir",
                "y",
                "--max_steps",
                "0",
            ],
            2,
        ),
        (["convert", "--source", "onnx", "x"], 2),
    ],
)
def test_help_version_and_argument_errors_do_not_import_tensorflow(argv, code):
    result = run_python(PROBE, *argv)
    assert result.stdout.strip().splitlines()[-1] == f"EXIT {code} False False", result.stderr
    if argv == ["--version"]:
        assert f"albert-keras {__version__}" in result.stdout
    if code == 2:
        assert "error:" in result.stderr


def test_config_flags():
    flags = ["num_layers=2", "sharing=none", "dropout=0.1", 'tasks=["RTE", "MRPC"]', "x=null"]
    assert parse_config_flags(flags) == {
        "num_layers": 2,
        "sharing": "none",
        "dropout": 0.1,
        "tasks": ["RTE", "MRPC"],
        "x": None,
    }
    assert parse_config_flags(["a=1", "a=2", "b="]) == {"a": 2, "b": ""}
    assert parse_config_flags(["name=a=b"]) == {"name": "a=b"}
    for bad in ("num_layers", "=3"):
        with pytest.raises(ValueError, match=f"--config '{bad}' is not KEY=VALUE"):
            parse_config_flags([bad])
    with pytest.raises(
        ValueError, match="--config num_layer: not a setting here; choose from a, b"
    ):
        parse_config_flags(["num_layer=2"], allowed=["a", "b"])


# TensorFlow's C++ log lines: "I0000 00:00:1795461883.041857    3748 port.cc:153] ..."
CPP_LOG_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\S+ +\d+ \S+:\d+\]|absl::InitializeLog")


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
@pytest.mark.parametrize("verbose", [False, True])
def test_commands_are_quiet_unless_verbose(tmp_path, verbose):
    argv = ["convert", "--source", "keras", str(tmp_path / "none.keras")]
    argv += ["--output", str(tmp_path / "out.keras")] + (["--verbose"] if verbose else [])
    result = run_python(PROBE, *argv)
    assert result.stdout.strip().splitlines()[-1] == "EXIT 2 True True"
    lines = result.stderr.strip().splitlines()
    cpp_lines = [line for line in lines if CPP_LOG_LINE.search(line)]
    if verbose:
        assert cpp_lines  # TensorFlow's own start-up lines are back
    else:
        assert cpp_lines == [] and lines == [
            f"albert-keras convert: error: {tmp_path / 'none.keras'}: no such file"
        ]


def test_only_tensorflow_log_lines_are_dropped():
    text = (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
        "I0000 00:00:1795461883.041857    3748 port.cc:153] oneDNN custom operations are on.\n"
        "E0000 00:00:1795461792.895239    1487 cuda_platform.cc:52] failed call to cuInit\n"
        "To enable the following instructions: AVX2 FMA, in other operations, rebuild\n"
        "/x.py:3: UserWarning: a real warning\n"
        "  warnings.warn('a real warning')\n"
    )
    assert drop_cpp_log_lines(text) == (
        "/x.py:3: UserWarning: a real warning\n  warnings.warn('a real warning')\n"
    )
