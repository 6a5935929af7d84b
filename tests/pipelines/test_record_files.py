"""Record globs over a writer's output folder, record counting that names a corrupt file, and
what a failed writer run leaves behind."""

import os
import struct

import pytest
import tensorflow as tf

from pipelines.pretraining_data import main, write_pretraining_data
from pipelines.record_files import check_token_ids, count_records, list_record_files
from pipelines.record_reader import read_pretraining_records

SENTENCES = ["The cat sat on the mat.", "A dog ran in the park.", "It was a fine day."]


def _corpus(folder, paragraphs=60):
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n\n".join(" ".join(SENTENCES[i % 3 :] + SENTENCES[: i % 3]) for i in range(paragraphs))
    (folder / "a.txt").write_text(text + "\n")
    return str(folder / "*.txt")


@pytest.fixture(scope="module")
def writer_run(tmp_path_factory, tiny_spm):
    """A finished two-shard run of the real writer; returns (folder, stats)."""
    root = tmp_path_factory.mktemp("writer")
    _corpus(root / "corpus")
    (root / "corpus" / "loop").symlink_to(root / "corpus" / "loop")  # skipped, and counted
    stats = write_pretraining_data(
        input=str(root / "corpus" / "*"), spm_model=str(tiny_spm), output_dir=str(root / "records"),
        max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2, num_shards=2,
        paragraphs_per_document=4, group_chars=200, progress=False,
    )  # fmt: skip
    return root / "records", stats


def test_a_finished_run_holds_only_shards_and_stats_json(writer_run):
    folder, stats = writer_run
    # The bookkeeping (partial shards, progress, input stats) is in one hidden subfolder, the
    # folder's ownership in the hidden manifest (pipelines.writer_folder).
    assert sorted(os.listdir(folder)) == [
        ".albert-keras.json",
        ".albert_progress",
        *stats["shards"],
        "stats.json",
    ]
    assert stats["input"]["skipped"] == {"read_error": {str(folder.parent / "corpus/loop"): 1}}
    assert stats["shards"] == ["pretraining-00000-of-00002.tfrecord",
                               "pretraining-00001-of-00002.tfrecord"]  # fmt: skip
    assert sorted(os.listdir(folder / ".albert_progress")) == [
        "input_stats.json",
        "pretraining-00000-of-00002.tfrecord.progress.json",
        "pretraining-00001-of-00002.tfrecord.progress.json",
    ]


@pytest.mark.parametrize("pattern", ["*", "*.tfrecord*", "*.tfrecord", "pretraining-*"])
def test_usual_globs_match_the_shards_and_say_what_they_skipped(writer_run, pattern, capsys):
    folder, stats = writer_run
    files = list_record_files(str(folder / pattern), "--records")
    assert files == [str(folder / name) for name in stats["shards"]]
    skipped = capsys.readouterr().err
    if pattern == "*":
        assert skipped == (
            "--records: skipped 2 match(es) that are not record shards: "
            ".albert_progress, stats.json\n"
        )
    else:
        assert skipped == ""
    assert count_records(files) == stats["examples"]
    batch = next(iter(read_pretraining_records(str(folder / pattern), 4, max_seq_length=32,
                                               max_predictions_per_seq=5, seed=0)))  # fmt: skip
    assert batch["input_ids"].shape == (4, 32)


def test_old_layout_leftovers_and_other_files_are_skipped(tmp_path, writer_run, capsys):
    folder, stats = writer_run
    for name in stats["shards"]:
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    # The writer's files before the subfolder, a Spark marker, notes, a temporary file.
    (tmp_path / f".{stats['shards'][0]}.progress.json").write_text("{}")
    (tmp_path / ".input_stats.json").write_text("{}")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / "README").write_text("records of the six books\n")
    (tmp_path / "stats.json.tmp123").write_text("{")
    (tmp_path / "empty.tfrecord").write_bytes(b"")  # a shard with no records: kept
    files = list_record_files(str(tmp_path / "*"), "--records")
    assert [os.path.basename(f) for f in files] == ["empty.tfrecord", *stats["shards"]]
    assert capsys.readouterr().err == (
        "--records: skipped 5 match(es) that are not record shards: .input_stats.json, "
        f".{stats['shards'][0]}.progress.json, README, _SUCCESS, stats.json.tmp123\n"
    )


def test_bad_names_and_contents_are_one_line_errors(tmp_path, writer_run):
    folder, _ = writer_run
    with pytest.raises(ValueError, match=r"--records '.*records' is a folder; give a glob such "):
        list_record_files(str(folder), "--records")
    with pytest.raises(FileNotFoundError, match=r"--records '.*nothing-\*': no file matches"):
        list_record_files(str(tmp_path / "nothing-*"), "--records")
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(FileNotFoundError, match=r"no TFRecord shard among the 1 match\(es\) "):
        list_record_files(str(tmp_path / "*"), "--records")
    # A shard's name with a foreign header is a broken shard, not a file to skip.
    (tmp_path / "part-00001-of-00002").write_bytes(b"garbage that is no record header")
    with pytest.raises(ValueError, match=r"part-00001-of-00002: not a readable TFRecord file"):
        list_record_files(str(tmp_path / "*"), "--records")
    with pytest.raises(ValueError, match=r"notes.txt: not a readable TFRecord file"):
        list_record_files(str(tmp_path / "notes.txt"), "--records")  # named: must be one


def test_count_records_names_the_corrupt_or_cut_file(tmp_path, writer_run):
    folder, stats = writer_run
    good = [str(folder / name) for name in stats["shards"]]
    data = (folder / stats["shards"][1]).read_bytes()
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x01
    (tmp_path / "flipped.tfrecord").write_bytes(flipped)
    with pytest.raises(
        ValueError, match=r"^--records: .*flipped\.tfrecord is corrupt \(corrupted "
    ):
        count_records([*good, str(tmp_path / "flipped.tfrecord")], "--records")
    first = 16 + struct.unpack("<Q", data[:8])[0]  # the first record, framed
    (tmp_path / "cut.tfrecord").write_bytes(data[: first + 12 + 5])  # inside the second's data
    with pytest.raises(ValueError, match=r"cut\.tfrecord is corrupt \(truncated record at "):
        count_records([str(tmp_path / "cut.tfrecord"), *good], "--records")
    (tmp_path / "torn.tfrecord").write_bytes(data + data[:5])  # a header cut short at the end
    with pytest.raises(ValueError, match=r"torn\.tfrecord is truncated or padded: 5 byte\(s\) "):
        count_records([str(tmp_path / "torn.tfrecord")], "--records")


def test_token_ids_beyond_the_vocabulary_are_refused(writer_run, tiny_spm):
    folder, stats = writer_run
    files = [str(folder / name) for name in stats["shards"]]
    check_token_ids(files, stats["vocabulary_size"], "--records")
    with pytest.raises(ValueError, match=r"pretraining-00000-of-00002\.tfrecord holds token id "):
        check_token_ids(files, 6, "--records", "--spm_model small.model")


def test_a_failed_run_leaves_no_partial_files(tmp_path, tiny_spm, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "binary.txt").write_bytes(b"\0\1\2" * 100)
    code = main(["--input", str(tmp_path / "in" / "*"), "--spm_model", str(tiny_spm),
                 "--output_dir", str(tmp_path / "out"), "--num_shards", "3", "--quiet"])  # fmt: skip
    assert code == 2 and "no document could be read" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # no empty hidden .partial files, no manifest


def test_a_failed_resume_keeps_what_it_can_resume_from(tmp_path, tiny_spm, monkeypatch):
    from pipelines import shard_worker

    corpus = _corpus(tmp_path / "corpus", paragraphs=200)
    settings = {"max_seq_length": 32, "max_predictions_per_seq": 5, "dupe_factor": 1,
                "num_shards": 2, "paragraphs_per_document": 4, "group_chars": 200,
                "checkpoint_seconds": 0, "progress": False}  # fmt: skip
    real = shard_worker.make_records

    def failing(config, encoder, groups, stats):
        if any(index >= 6 for index, _ in groups):
            raise OSError("disk on fire")
        return real(config, encoder, groups, stats)

    monkeypatch.setattr(shard_worker, "make_records", failing)
    with pytest.raises(OSError, match="disk on fire"):
        write_pretraining_data(
            input=corpus, spm_model=str(tiny_spm), output_dir=str(tmp_path / "out"), **settings
        )
    monkeypatch.undo()
    partials = sorted(os.listdir(tmp_path / "out" / ".albert_progress"))
    assert [n for n in partials if n.endswith(".partial")] == [
        "pretraining-00000-of-00002.tfrecord.partial",
        "pretraining-00001-of-00002.tfrecord.partial",
    ]
    resumed = write_pretraining_data(
        input=corpus, spm_model=str(tiny_spm), output_dir=str(tmp_path / "out"), **settings
    )
    fresh = write_pretraining_data(
        input=corpus, spm_model=str(tiny_spm), output_dir=str(tmp_path / "fresh"), **settings
    )
    for name in fresh["shards"]:
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes()
    assert resumed["examples"] == fresh["examples"] > 0
    assert tf.io.gfile.glob(str(tmp_path / "out" / "*.partial")) == []


def test_comma_separated_globs_and_names(writer_run):
    folder, stats = writer_run
    first, second = (str(folder / name) for name in stats["shards"])
    assert list_record_files(f"{second},{folder}/*-00000-*") == [first, second]
    assert list_record_files([second, first, second]) == [first, second]
    with pytest.raises(ValueError, match=r"file_pattern is empty"):
        list_record_files(" , ")
