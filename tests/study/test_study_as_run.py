"""The study as run (issue 46): each committed report's settings live in its spec file (so
`albert-keras study docs/study/table5/spec.json` is the report's study), `--help` lists every
spec key with its default, a `quick` recipe, commas between globs, and the vocabulary the study
makes when none is given."""

import contextlib
import io
import json
import os
import pathlib

import pytest

from albert_keras.study import load_spec
from albert_keras.study.study_data import list_files, make_records
from albert_keras_cli.main import main
from albert_keras_settings.study_settings import STUDY_DEFAULTS, VOCABULARY_KEYS

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "study"


@pytest.mark.parametrize("table", ["table3", "table4", "table5"])
def test_each_committed_report_s_settings_are_its_spec_file(table):
    ran = json.loads((DOCS / table / "report.json").read_text())["study"]
    spec = load_spec(str(DOCS / table / "spec.json")).to_dict()
    # The one difference: the vocabulary (the runs read out/vocab/books8k.model, made by
    # docs/study's train_vocab command) is made by the study with that command's settings.
    assert ran.pop("spm_model") == "out/vocab/books8k.model" and spec.pop("spm_model") is None
    assert [spec.pop(key) for key in VOCABULARY_KEYS] == [8000, True]
    assert spec == ran


def test_help_lists_every_spec_key_with_its_default():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["study", "--help"])
    lines = out.getvalue().splitlines()
    for key, default in STUDY_DEFAULTS.items():
        shown = "{...}" if key == "backbone" else json.dumps(default)
        assert f"  {key} = {shown}: " in [line[: len(key) + len(shown) + 7] for line in lines]
    assert "    backbone.hidden_dim = 256" in lines
    assert any("docs/study/table5/spec.json" in line for line in lines)


def test_the_quick_recipe_is_table5_s_grid_at_a_few_minutes():
    quick = load_spec("quick")
    assert [c.name for c in quick.cells] == [c.name for c in load_spec("table5").cells]
    s = quick.settings
    assert (s["steps"], s["seeds"], s["tasks"], s["spm_model"]) == (200, [1], ["SST-2"], None)
    assert quick.backbone_config(quick.cells[0])["hidden_dim"] == 128


def test_a_given_vocabulary_leaves_the_budget_as_it_was():
    # Studies run before the vocabulary keys existed resume: their budget has none of them.
    spec = load_spec("table5", {"spm_model": "books8k.model"}).to_dict()
    assert not set(VOCABULARY_KEYS) & set(spec)
    assert set(VOCABULARY_KEYS) <= set(load_spec("table5").to_dict())


def _text(index: int) -> str:
    words = ["the cat", "a dog", "my friend", "the bird", "we", "they"]
    verbs = ["sat on", "ran to", "looked at", "found"]
    paragraphs = []
    for p in range(10):
        sentences = [
            f"{words[(index + p + s) % 6]} {verbs[(p * s + index) % 4]} {words[(p + 2 * s) % 6]}."
            for s in range(4)
        ]
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


def test_commas_between_globs_and_a_vocabulary_made_once(tmp_path):
    for i, name in enumerate(["a.txt", "b.txt", "held.txt"]):
        (tmp_path / name).write_text(_text(i))
    assert list_files(f"{tmp_path}/a.txt,{tmp_path}/b*.txt", "corpus") == [
        str(tmp_path / "a.txt"), str(tmp_path / "b.txt"),
    ]  # fmt: skip
    settings = {**load_spec("table5").settings, "vocab_size": 36, "dupe_factor": 1,
                "corpus": f"{tmp_path}/a.txt,{tmp_path}/b.txt,{tmp_path}/held.txt",
                "heldout": str(tmp_path / "held.txt"), "max_seq_length": 32}  # fmt: skip
    lines = []
    data = make_records(settings, ["sop"], str(tmp_path / "data"), log=lines.append)
    vocabulary = tmp_path / "data" / "vocab" / "spm.model"
    assert settings["spm_model"] == str(vocabulary) and vocabulary.is_file()
    assert lines[0] == "data: training a 36-piece vocabulary on 2 file(s)"  # not the held-out one
    stats = json.loads((tmp_path / "data" / "records" / "train-sop" / "stats.json").read_text())
    assert stats["examples"] == data["stats"]["train-sop"]["examples"] > 0
    made = os.stat(vocabulary).st_mtime_ns
    settings["spm_model"], lines[:] = None, []
    make_records(settings, ["sop"], str(tmp_path / "data"), log=lines.append)
    assert os.stat(vocabulary).st_mtime_ns == made and lines == []  # found, not made again
