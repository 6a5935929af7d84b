"""Records and models say which text path made their ids (issue 42): the writer's stats.json
records it, pretrain refuses records of an older one in one line naming both unless
`--accept_old_text_path`, and then records the older one in what it saves."""

import json
import shutil

import keras
import pytest

from albert_keras_cli.main import main
from albert_keras_contracts.text_path import (
    TEXT_PATH,
    UNRECORDED_TEXT_PATH,
    check_model_text_path,
    saved_text_path,
)
from pipelines.pretraining_data import write_pretraining_data

SENTENCES = ["The cat sat in 1994, on the mat.", "A dog ran in the park.", "It was ''fine''."]
TINY = ["--config=num_layers=1", "--config=num_heads=2", "--config=embedding_dim=8"]
TINY += ["--config=hidden_dim=16", "--config=intermediate_dim=32"]


@pytest.fixture(scope="module")
def records(tmp_path_factory, tiny_spm):
    """Writer records of today's text path, and a copy whose stats.json records none (as the
    writer wrote before the version was recorded)."""
    root = tmp_path_factory.mktemp("text_path")
    (root / "corpus").mkdir()
    text = "\n\n".join(" ".join(SENTENCES[i % 3 :] + SENTENCES[: i % 3]) for i in range(40))
    (root / "corpus" / "a.txt").write_text(text + "\n")
    write_pretraining_data(
        input=str(root / "corpus" / "*.txt"),
        spm_model=str(tiny_spm),
        output_dir=str(root / "new"),
        max_seq_length=32,
        max_predictions_per_seq=5,
        num_shards=1,
        paragraphs_per_document=4,
        progress=False,
    )
    shutil.copytree(root / "new", root / "old")
    stats = json.loads((root / "old" / "stats.json").read_text())
    del stats["text_path"], stats["settings"]["text_path"]
    (root / "old" / "stats.json").write_text(json.dumps(stats))
    return root


def test_the_writer_records_its_text_path(records):
    stats = json.loads((records / "new" / "stats.json").read_text())
    assert stats["text_path"] == stats["settings"]["text_path"] == TEXT_PATH


@pytest.mark.slow  # two pretrain runs (~40 s on a loaded machine)
def test_pretrain_refuses_older_records_in_one_line_unless_accepted(
    records, tiny_spm, tmp_path, capsys
):
    argv = ["pretrain", "--records", str(records / "old" / "*.tfrecord"), "--batch_size", "4"]
    argv += ["--max_steps", "1", "--checkpoint_every", "1", "--spm_model", str(tiny_spm), *TINY]
    assert main([*argv, "--output_dir", str(tmp_path / "refused")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(records / "old" / "stats.json") in lines[0]
    assert UNRECORDED_TEXT_PATH in lines[0] and TEXT_PATH in lines[0]
    assert "--accept_old_text_path" in lines[0]
    assert not (tmp_path / "refused" / "model.keras").exists()

    run = tmp_path / "accepted"
    assert main([*argv, "--output_dir", str(run), "--accept_old_text_path"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["config"]["text_path"] == UNRECORDED_TEXT_PATH
    model = keras.saving.load_model(run / "model.keras")
    assert model.preprocessor.tokenizer.text_path == UNRECORDED_TEXT_PATH
    # What fine-tuning and predict read: the tokenizer's, or for backbone.keras the summary's.
    assert saved_text_path(model, str(run / "model.keras"))[0] == UNRECORDED_TEXT_PATH
    assert saved_text_path(object(), str(run / "backbone.keras")) == (
        UNRECORDED_TEXT_PATH,
        str(run / "summary.json"),
    )
    with pytest.raises(ValueError, match="accept_old_text_path"):
        check_model_text_path(object(), str(run / "backbone.keras"))
    check_model_text_path(object(), str(run / "backbone.keras"), accept=True)


def test_a_run_summary_of_today_or_none_passes(tmp_path):
    (tmp_path / "backbone.keras").write_bytes(b"")
    summary = {"vocabulary_sha256": None, "config": {"text_path": TEXT_PATH}}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    check_model_text_path(object(), str(tmp_path / "backbone.keras"))
    summary["config"]["text_path"] = None  # records without a stats.json: not known
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    assert saved_text_path(object(), str(tmp_path / "backbone.keras"))[0] is None
    (tmp_path / "summary.json").write_text(json.dumps({"vocabulary_sha256": None}))
    assert saved_text_path(object(), str(tmp_path / "backbone.keras"))[0] == UNRECORDED_TEXT_PATH
