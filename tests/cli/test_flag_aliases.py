"""One name per idea (issue 30): `convert --from` (it was `--source`, which elsewhere names where
data comes from) and `--lower_case` in both data commands (`--do_lower_case`, the official
script's name, still works); the old spellings parse to the same values and print nothing."""

import argparse

import pytest

from albert_keras_cli import convert
from pipelines.pretraining_data import build_parser


def _convert_args(*argv):
    parser = argparse.ArgumentParser()
    convert.add_arguments(parser)
    return vars(parser.parse_args(["model.keras", *argv]))


def test_convert_takes_from_and_still_source(capsys):
    assert _convert_args("--from", "hf") == _convert_args("--source", "hf")
    assert _convert_args("--from", "hf")["source"] == "hf"
    assert capsys.readouterr() == ("", "")
    with pytest.raises(SystemExit):
        _convert_args("--from", "pytorch")
    assert "argument --from: invalid choice: 'pytorch'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, lower_case",
    [([], None), (["--lower_case"], True), (["--no-lower_case"], False),
     (["--do_lower_case"], True), (["--no-do_lower_case"], False)],
)  # fmt: skip
def test_pretraining_data_takes_lower_case_as_train_vocab(flags, lower_case, capsys):
    required = ["--input", "c.txt", "--spm_model", "s.model", "--output_dir", "out"]
    assert build_parser().parse_args([*required, *flags]).do_lower_case is lower_case
    assert capsys.readouterr() == ("", "")
