"""The study's "Reproduce with" command names no absolute path of the machine it ran on."""

import argparse
import os
import shlex

from albert_keras_cli.study import add_arguments, command_line


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_absolute_paths_become_relative_to_the_folder_the_study_runs_from(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    vocabulary = str(tmp_path / "out" / "vocab" / "books8k.model")
    beside = os.path.join(os.path.dirname(tmp_path), "runs", "table3")
    args = _parse(
        ["table3", "--output_dir", beside, "--spm_model", vocabulary, "--corpus",
         f"{tmp_path}/a/*.txt,b.txt", "--config", "steps=2"]
    )  # fmt: skip

    words = shlex.split(command_line(args))

    assert words == [
        "albert-keras", "study", "table3", "--output_dir", "../runs/table3",
        "--corpus", "a/*.txt,b.txt", "--spm_model", "out/vocab/books8k.model",
        "--config", "steps=2",
    ]  # fmt: skip
    assert not any(os.path.isabs(word) for word in words)


def test_relative_paths_and_globs_are_kept_as_typed():
    args = _parse(
        ["docs/study/table3_h128.yaml", "--output_dir", "out/study/table3", "--corpus",
         "../shared/data/corpus/gutenberg/[0-9]*.txt", "--glue_dir", "../shared/data/glue"]
    )  # fmt: skip

    assert shlex.split(command_line(args)) == [
        "albert-keras", "study", "docs/study/table3_h128.yaml", "--output_dir",
        "out/study/table3", "--corpus", "../shared/data/corpus/gutenberg/[0-9]*.txt",
        "--glue_dir", "../shared/data/glue",
    ]  # fmt: skip
