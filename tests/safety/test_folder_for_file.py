"""A folder given where a file is expected is called a folder (issue 43: it was "not found", or
a Python traceback), in one line."""

import errno

import pytest

from albert_keras.squad import read_squad_json
from albert_keras_cli import finetune_squad
from albert_keras_cli.main import main
from pipelines import pretraining_data
from pipelines.documents import list_input_files


def test_the_writer_input(tmp_path, tiny_spm, capsys):
    with pytest.raises(ValueError) as error:
        list_input_files(str(tmp_path))
    assert str(error.value) == (
        f"input {str(tmp_path)!r} is a folder; give a glob such as '{tmp_path / '*.txt'}'"
    )
    argv = [
        "--input",
        str(tmp_path),
        "--spm_model",
        str(tiny_spm),
        "--output_dir",
        str(tmp_path / "o"),
    ]
    assert pretraining_data.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"pretraining_data: error: {error.value}"]


def test_a_squad_file(tmp_path):
    with pytest.raises(ValueError, match=f"^{tmp_path} is a folder: give the SQuAD .json file$"):
        read_squad_json(tmp_path, is_training=False)


def test_any_command_says_it_in_one_line(tmp_path, monkeypatch, capsys):
    def opens_a_folder(args):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(tmp_path))

    monkeypatch.setattr(finetune_squad, "check_arguments", opens_a_folder)
    argv = ["finetune-squad", "--version", "2.0", "--train_file", "t.json", "--predict_file",
            "d.json", "--init_from", "m.keras", "--output_dir", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"albert-keras finetune-squad: error: {tmp_path} is a folder: give a file"]
