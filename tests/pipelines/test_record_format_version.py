"""The record format's version: written to stats.json, read back, another refused in one line."""

import json
import shutil

import pytest

from albert_keras_contracts import record_format
from pipelines.pretraining_data import write_pretraining_data
from pipelines.record_files import list_record_files

SENTENCES = [
    "the cat sat on the mat.", "a dog ran in the park.", "we read a book today.",
    "the sun is warm.", "birds sing at dawn.", "rain fell all night.",
]  # fmt: skip


@pytest.fixture(scope="module")
def records(tmp_path_factory, tiny_spm):
    folder = tmp_path_factory.mktemp("records")
    corpus = folder.parent / f"{folder.name}-corpus.txt"
    documents = ["\n".join(SENTENCES[i:] + SENTENCES[:i]) for i in range(6)]
    corpus.write_text("\n\n".join(documents) + "\n")
    stats = write_pretraining_data(
        input=str(corpus), spm_model=str(tiny_spm), output_dir=str(folder / "out"),
        max_seq_length=32, max_predictions_per_seq=4, dupe_factor=1, num_shards=1,
        progress=False,
    )  # fmt: skip
    return folder / "out", stats


def _copy_with_version(records, tmp_path, version):
    folder = tmp_path / "copy"
    shutil.copytree(records, folder)
    stats = json.loads((folder / "stats.json").read_text())
    if version is None:
        del stats[record_format.VERSION_KEY]
    else:
        stats[record_format.VERSION_KEY] = version
    (folder / "stats.json").write_text(json.dumps(stats))
    return folder


def test_the_writer_records_the_format_version(records):
    folder, stats = records
    assert stats[record_format.VERSION_KEY] == record_format.VERSION == 1
    on_disk = json.loads((folder / "stats.json").read_text())
    assert on_disk[record_format.VERSION_KEY] == 1
    assert len(list_record_files(str(folder / "*"), verbose=False)) == 1


def test_records_of_another_version_are_refused_naming_both(records, tmp_path):
    folder = _copy_with_version(records[0], tmp_path, 2)
    with pytest.raises(ValueError) as error:
        list_record_files(str(folder / "*"), "--records", verbose=False)
    message = str(error.value)
    assert message.startswith(f"--records: {folder / 'stats.json'}: records of format version 2")
    assert "reads version 1" in message and "\n" not in message


def test_stats_without_a_version_are_version_one(records, tmp_path):
    folder = _copy_with_version(records[0], tmp_path, None)
    assert record_format.stats_version(json.loads((folder / "stats.json").read_text())) == 1
    assert len(list_record_files(str(folder / "*"), verbose=False)) == 1


def test_the_pretrain_command_refuses_them_in_one_line(records, tmp_path, capsys):
    from albert_keras_cli import main as cli

    folder = _copy_with_version(records[0], tmp_path, 7)
    argv = ["pretrain", "--records", str(folder / "*.tfrecord"), "--output_dir",
            str(tmp_path / "run"), "--config", "num_layers=1"]  # fmt: skip
    assert cli.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert "records of format version 7, but this albert-keras reads version 1" in error
    assert "\n" not in error and not (tmp_path / "run" / "model.keras").exists()


def test_one_table_names_the_features_and_the_model_inputs():
    assert record_format.FEATURE_NAMES[0] == record_format.INPUT_IDS
    assert set(record_format.MODEL_INPUTS.values()) <= set(record_format.FEATURE_NAMES)
    from albert_keras.models.albert_pretrainer import RECORD_FEATURES

    assert RECORD_FEATURES is record_format.MODEL_INPUTS
