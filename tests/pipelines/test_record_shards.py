"""The readers hold a writer's output folder to its `stats.json`: the shards it lists, their
record count, the vocabulary's identity; token ids are checked at both ends."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf
from release_tarball import train_tiny_sentencepiece

from albert_keras_contracts.vocabulary_identity import check_same_vocabulary, describe, file_sha256
from pipelines.pretraining_data import write_pretraining_data
from pipelines.record_files import check_token_ids, count_records, list_record_files
from pipelines.record_reader import read_pretraining_records

SENTENCES = ["The cat sat on the mat.", "A dog ran in the park.", "It was a fine day."]
SHARDS = ["pretraining-00000-of-00002.tfrecord", "pretraining-00001-of-00002.tfrecord"]


@pytest.fixture(scope="module")
def written(tmp_path_factory, tiny_spm):
    """A finished two-shard writer run; returns (folder, stats)."""
    root = tmp_path_factory.mktemp("shards")
    (root / "corpus").mkdir()
    text = "\n\n".join(" ".join(SENTENCES[i % 3 :] + SENTENCES[: i % 3]) for i in range(60))
    (root / "corpus" / "a.txt").write_text(text + "\n")
    stats = write_pretraining_data(
        input=str(root / "corpus" / "*.txt"), spm_model=str(tiny_spm), output_dir=str(root / "records"),
        max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2, num_shards=2,
        paragraphs_per_document=4, group_chars=200, progress=False,
    )  # fmt: skip
    return root / "records", stats


@pytest.fixture
def copy(written, tmp_path):
    """A fresh copy of the run's shards and stats.json."""
    folder, _ = written
    for name in [*SHARDS, "stats.json"]:
        shutil.copy(folder / name, tmp_path / name)
    return tmp_path


def read_all(pattern):
    dataset = read_pretraining_records(
        pattern, 1, max_seq_length=32, max_predictions_per_seq=5, shuffle=False, repeat=False
    )
    return sum(1 for _ in dataset)


def test_stats_json_records_the_vocabulary_identity(written, tiny_spm):
    _, stats = written
    assert stats["vocabulary_sha256"] == file_sha256(str(tiny_spm))
    assert stats["settings"]["vocabulary_sha256"] == stats["vocabulary_sha256"]
    assert stats["vocabulary_size"] == describe(str(tiny_spm))["pieces"] == 29
    assert stats["shards"] == SHARDS


def test_a_stray_file_beside_listed_shards_is_left_out_and_named(copy, written, capsys):
    _, stats = written
    shutil.copy(copy / SHARDS[0], copy / f"{SHARDS[0]}.bak")  # a valid TFRecord, not listed
    files = list_record_files(str(copy / "*"), "--records")
    assert files == [str(copy / name) for name in SHARDS]
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "--records: ignored 1 file(s) that the writer's stats.json beside them does not list: "
        f"{SHARDS[0]}.bak"
    )
    assert read_all(str(copy / "*")) == stats["examples"]  # not 1.5 times the data
    # Named explicitly, a file is read as asked.
    named = list_record_files([str(copy / "*"), str(copy / f"{SHARDS[0]}.bak")], "--records")
    assert len(named) == 3


def test_an_empty_or_short_listed_shard_is_refused(copy, written):
    _, stats = written
    (copy / SHARDS[1]).write_bytes(b"")
    with pytest.raises(ValueError, match=(
        rf"^--records: the 2 shards in .* hold \d+ records, but .*stats\.json says its run wrote "
        rf"{stats['examples']}: {SHARDS[1]} is empty; write them again$"
    )):  # fmt: skip
        list_record_files(str(copy / "*.tfrecord"), "--records")
    with pytest.raises(ValueError, match=rf"{SHARDS[1]} is empty"):
        read_all(str(copy / "*"))
    # Cut at a record boundary: whole records, fewer of them (count_records, as training does).
    data = (copy / SHARDS[0]).read_bytes()
    first = 16 + int.from_bytes(data[:8], "little")
    (copy / SHARDS[1]).write_bytes(data[:first])
    files = list_record_files(str(copy / "*"), "--records")
    with pytest.raises(ValueError, match=r"^--records: the 2 shards in .* hold \d+ records, but "):
        count_records(files, "--records")


def test_a_missing_listed_shard_is_refused_and_a_chosen_subset_is_read(copy, written):
    _, stats = written
    subset = list_record_files(str(copy / "pretraining-00000-*"), "--records")
    assert subset == [str(copy / SHARDS[0])]
    assert count_records(subset) < stats["examples"]  # a subset's count is not checked
    (copy / SHARDS[1]).unlink()
    with pytest.raises(FileNotFoundError, match=(
        rf"^--records: .*{SHARDS[1]} is missing, but .*stats\.json lists it among the 2 shards"
    )):  # fmt: skip
        list_record_files(str(copy / "*"), "--records")


def test_every_listed_shard_counts_to_the_stats_total(written):
    folder, stats = written
    assert count_records(list_record_files(str(folder / "*"))) == stats["examples"]


def write_ids(path, ids):
    features = {
        name: tf.train.Feature(int64_list=tf.train.Int64List(value=ids))
        for name in ("input_ids", "masked_lm_ids")
    }
    with tf.io.TFRecordWriter(str(path)) as writer:
        example = tf.train.Example(features=tf.train.Features(feature=features))
        writer.write(example.SerializeToString())


def test_negative_token_ids_are_refused(tmp_path):
    write_ids(tmp_path / "ok.tfrecord", [2, 7, 3, 0])
    check_token_ids([str(tmp_path / "ok.tfrecord")], 10, "--records")
    write_ids(tmp_path / "negative.tfrecord", [2, -7, 3, 0])
    with pytest.raises(ValueError, match=(
        r"^--records: .*negative\.tfrecord holds token id -7: ids are never negative"
    )):  # fmt: skip
        check_token_ids([str(tmp_path / "negative.tfrecord")], 10, "--records")


def test_another_vocabulary_is_refused_naming_both(written, tiny_spm, tmp_path):
    _, stats = written
    other = train_tiny_sentencepiece(tmp_path / "other", vocab_size=40, model_type="char")
    same = describe(str(tiny_spm))
    check_same_vocabulary(stats, "records/stats.json", vocabulary=same, model_vocabulary_size=29)
    given = describe(str(other))
    assert given["pieces"] != 29
    with pytest.raises(ValueError, match=(
        rf"^--spm_model other\.model \({given['pieces']} pieces, sha256 {given['sha256'][:12]}\) "
        rf"is not the vocabulary the records were written with \(records/stats\.json: 29 pieces, "
        rf"sha256 {stats['vocabulary_sha256'][:12]}\): give that one$"
    )):  # fmt: skip
        check_same_vocabulary(
            stats, "records/stats.json", vocabulary=given, vocabulary_name="--spm_model other.model"
        )
    # Same size, other pieces: only the hash tells them apart.
    with pytest.raises(ValueError, match=r"is not the vocabulary the records were written with"):
        check_same_vocabulary(stats, "s.json", vocabulary={**same, "sha256": "0" * 64})
    with pytest.raises(ValueError, match=r"^the model has 20 ids, but the records were written "):
        check_same_vocabulary(stats, "s.json", model_vocabulary_size=20)
    # Stats written before the hash was recorded: compared by size.
    old = {key: value for key, value in stats.items() if key != "vocabulary_sha256"}
    check_same_vocabulary(old, "s.json", vocabulary={**same, "sha256": "0" * 64})


def test_a_stats_json_that_is_not_json_is_refused(copy):
    (copy / "stats.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"^--records: .*stats\.json is not valid JSON \("):
        list_record_files(str(copy / "*"), "--records")
    (copy / "stats.json").write_text(json.dumps({"examples": 3}))  # no shard list: not used
    assert len(list_record_files(str(copy / "*"), "--records")) == 2


def test_dynamic_masking_takes_the_vocabulary_size_from_stats_json(written, tmp_path):
    # The README's call: no vocabulary_size (it raised "needs vocabulary_size").
    folder, stats = written
    batches = read_pretraining_records(
        str(folder / "*.tfrecord"), 8, max_seq_length=32, max_predictions_per_seq=5,
        dynamic_masking=True, seed=0,
    )  # fmt: skip
    ids = np.concatenate([batch["input_ids"].numpy() for batch in batches.take(20)])
    assert ids.max() < stats["vocabulary_size"] == 29
    assert (ids == 4).any()  # [MASK]: re-masked
    # Without stats.json beside the records the size must be given.
    shutil.copy(folder / SHARDS[0], tmp_path / SHARDS[0])
    with pytest.raises(ValueError, match=r"needs vocabulary_size .*: give it, or read records "):
        read_pretraining_records(str(tmp_path / "*.tfrecord"), 8, max_seq_length=32,
                                 max_predictions_per_seq=5, dynamic_masking=True)  # fmt: skip
