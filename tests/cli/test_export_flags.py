"""`albert-keras export` takes the other commands' flag names (issue #30): `--model` (as
`predict`), `--output_dir`, `--max_seq_length`; the positional `MODEL DIR` and
`--sequence_length` of earlier versions still work, hidden from `--help`; a thing given both
ways, or not at all, is one line and exit 2 before TensorFlow loads."""

import argparse
import importlib.util
import pathlib
import subprocess
import sys

import pytest

from albert_keras_cli import export

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _checked(*argv):
    parser = argparse.ArgumentParser()
    export.add_arguments(parser)
    args = parser.parse_args(list(argv))
    export.check_arguments(args)
    return args


def test_flags_and_the_old_positionals_give_the_same_export(tmp_path):
    model = tmp_path / "model.keras"
    model.write_bytes(b"")
    spm = tmp_path / "spm.model"
    spm.write_bytes(b"")
    flags = _checked("--model", str(model), "--output_dir", "out", "--spm_model", str(spm),
                     "--max_seq_length", "16")  # fmt: skip
    old = _checked(str(model), "out", "--spm_model", str(spm), "--sequence_length", "16")
    mixed = _checked(str(model), "--output_dir", "out", "--spm_model", str(spm))
    for args in (flags, old, mixed):
        assert (args.model, args.output_dir) == (str(model), "out")
        export.check_arguments(args)  # again, as run() does after main(): still one model
        assert (args.model, args.output_dir) == (str(model), "out")
    assert flags.max_seq_length == old.max_seq_length == 16


def test_help_shows_the_flags_only(capsys):
    parser = argparse.ArgumentParser(prog="albert-keras export")
    export.add_arguments(parser)
    parser.print_help()
    text = capsys.readouterr().out
    assert "--model MODEL" in text and "--output_dir OUTPUT_DIR" in text
    assert "--max_seq_length" in text
    assert "sequence_length" not in text.replace("max_sequence_length", "")
    assert "model_file" not in text and "output_folder" not in text


def _run_in_fresh_process(argv):
    """(exit code, stderr lines, whether TensorFlow was imported) of `albert-keras argv`."""
    script = (
        "import sys; from albert_keras_cli.main import main; rc = main(sys.argv[1:]); "
        "print('tensorflow' in sys.modules); sys.exit(rc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    return done.returncode, done.stderr.splitlines(), done.stdout.strip() == "True"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--output_dir", "out"], "give --model MODEL.keras and --output_dir DIR"),
        (["MODEL"], "give --model MODEL.keras and --output_dir DIR"),
        (["--model", "MODEL", "--output_dir", "out", "other.keras"],
         "--model {model} and the positional other.keras both given: give only --model"),
        (["MODEL", "out", "--output_dir", "out2"],
         "--output_dir out2 and the positional out both given: give only --output_dir"),
        (["--model", "nowhere.keras", "--output_dir", "out"], "--model nowhere.keras: no such file"),
        (["--model", "MODEL", "--output_dir", "out", "--max_seq_length", "8"],
         "--max_seq_length needs --spm_model (the saved preprocessor has one)"),
        (["--model", "MODEL", "--output_dir", "out", "--sequence_length", "8"],
         "--max_seq_length needs --spm_model (the saved preprocessor has one)"),
    ],
)  # fmt: skip
def test_flag_errors_are_one_line_before_tensorflow(tmp_path, argv, message):
    model = tmp_path / "model.keras"
    model.write_bytes(b"")
    argv = [str(model) if word == "MODEL" else word for word in argv]
    message = message.replace("{model}", str(model))
    rc, stderr, loaded_tensorflow = _run_in_fresh_process(["export", *argv])
    assert (rc, len(stderr), loaded_tensorflow) == (2, 1, False), stderr
    assert stderr[0] == f"albert-keras export: error: {message}"


def test_the_flags_page_shows_one_name_per_idea():
    spec = importlib.util.spec_from_file_location("flags_table", ROOT / "tools" / "flags_table.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    page = tool.render()
    # command -> its table; the shared flags' table first
    sections = {part.split("`", 1)[0]: part for part in page.split("\n## `")}
    export_section = sections["albert-keras export"]
    for hidden in ("--sequence_length", "MODEL_FILE", "OUTPUT_FOLDER"):
        assert hidden not in next(iter(sections.values())) + export_section
    assert "| `--model` |" in export_section and "| `--output_dir` |" in export_section
    assert "| `--from` |" in sections["albert-keras convert"]
    assert "--source" not in sections["albert-keras convert"]
    assert "| `--max_seq_length` |" in sections["albert-keras predict"]
    assert "--sequence_length" not in sections["albert-keras predict"]
