"""The pretraining-data writer end to end on a real book (the first 160 kB of Pride and Prejudice
in tests/data): records, statistics, determinism, resuming after a crash, and bad input; and, on
../shared/data's whole corpus where present, the statistics against the official script's."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from pipelines import pretraining_data, shard_worker, tokenization
from pipelines.pretraining_data import main, write_pretraining_data
from pipelines.record_writer import partial_path, read_progress
from pipelines.tokenization import SentencePieceEncoder

SPM = "vocab/30k-clean.reconstructed.model"
BOOK = "corpus/gutenberg/1342-0.txt"  # Pride and Prejudice, its first 160 kB (~30 documents)
CLS, SEP, MASK = 2, 3, 4
FEATURES = {  # docs/design.md's table: name -> (dtype, length at seq 128 / 20 predictions)
    "input_ids": ("int64", 128),
    "input_mask": ("int64", 128),
    "segment_ids": ("int64", 128),
    "token_boundary": ("int64", 128),
    "masked_lm_positions": ("int64", 20),
    "masked_lm_ids": ("int64", 20),
    "masked_lm_weights": ("float32", 20),
    "next_sentence_labels": ("int64", 1),
}
# One book, small groups so every shard gets several: the setting of the determinism tests.
BOOK_SETTINGS = {"max_seq_length": 128, "dupe_factor": 2, "num_shards": 3, "group_chars": 1 << 12}


def _read_records(paths, features=FEATURES):
    import tensorflow as tf

    spec = {k: tf.io.FixedLenFeature([n], getattr(tf, t)) for k, (t, n) in features.items()}
    dataset = tf.data.TFRecordDataset([str(p) for p in paths]).map(
        lambda record: tf.io.parse_single_example(record, spec)
    )
    batches = list(dataset.batch(1 << 14).as_numpy_iterator())
    first = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(str(paths[0])))).numpy())
    return {k: np.concatenate([b[k] for b in batches]) for k in spec}, set(first.features.feature)


def _shards(folder):
    return sorted(p for p in os.listdir(folder) if p.endswith(".tfrecord"))


def _shard_bytes(folder):
    return {name: (folder / name).read_bytes() for name in _shards(folder)}


# === The official reference input, as the official script was given it ===


@pytest.fixture(scope="module")
def reference_run(full_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference_run")
    stats = write_pretraining_data(
        input=str(full_data / "reference/gutenberg_sentences.txt"),
        spm_model=str(full_data / SPM),
        output_dir=str(folder),
        max_seq_length=128,
        dupe_factor=1,
        num_shards=2,
        input_format="sentences",
        progress=False,
    )
    return folder, stats


@pytest.fixture(scope="module")
def records(book_run):
    folder, _ = book_run
    return _read_records([folder / name for name in _shards(folder)])


def test_records_hold_exactly_the_design_features(records, book_run):
    values, names = records
    assert names == set(FEATURES)
    for name, (dtype, length) in FEATURES.items():
        assert values[name].dtype == dtype and values[name].shape[1] == length
    assert len(values["input_ids"]) == book_run[1]["examples"]


def test_layout_of_segments_and_mask(records):
    values, _ = records
    ids, mask, segments = values["input_ids"], values["input_mask"], values["segment_ids"]
    lengths = mask.sum(axis=1)
    positions = np.arange(128)[None, :]
    np.testing.assert_array_equal(mask, positions < lengths[:, None])  # a prefix of ones
    assert (ids[:, 0] == CLS).all()
    assert (ids[mask == 0] == 0).all() and (segments[mask == 0] == 0).all()
    original = _originals(values)
    separators = original == SEP
    assert (separators.sum(axis=1) == 2).all()
    assert (original[np.arange(len(ids)), lengths - 1] == SEP).all()
    first_separator = separators.argmax(axis=1)
    # Segment 0 is [CLS] A [SEP], segment 1 is B [SEP].
    np.testing.assert_array_equal(
        segments, (positions > first_separator[:, None]) & (positions < lengths[:, None])
    )
    boundary = values["token_boundary"]
    assert (boundary[separators] == 1).all() and (boundary[:, 0] == 1).all()
    assert (boundary[mask == 0] == 0).all()


def _originals(values):
    """input_ids with masked_lm_ids written back at masked_lm_positions."""
    original = values["input_ids"].copy()
    rows, slots = np.nonzero(values["masked_lm_weights"])
    original[rows, values["masked_lm_positions"][rows, slots]] = values["masked_lm_ids"][
        rows, slots
    ]
    return original


def test_masks_follow_the_official_rules(records, shared_data):
    values, _ = records
    weights = values["masked_lm_weights"]
    counts = weights.sum(axis=1).astype(int)
    lengths = values["input_mask"].sum(axis=1)
    # num_to_predict = min(max_predictions_per_seq, max(1, round(len(tokens) * masked_lm_prob))).
    expected = np.minimum(20, np.maximum(1, np.round(lengths * 0.15)))
    np.testing.assert_array_equal(counts, expected)
    assert set(np.unique(weights)) == {0.0, 1.0}
    assert (weights[:, :-1] >= weights[:, 1:]).all()  # real predictions first, then padding
    rows, slots = np.nonzero(weights)
    positions = values["masked_lm_positions"][rows, slots]
    original = _originals(values)
    masked_originals = original[rows, positions]
    # Never [CLS]/[SEP]/padding; positions sorted; masked_lm_ids are the original tokens.
    assert not np.isin(masked_originals, (0, CLS, SEP)).any()
    assert (values["input_mask"][rows, positions] == 1).all()
    real = weights[:, 1:] > 0
    assert (np.diff(values["masked_lm_positions"], axis=1)[real] > 0).all()
    np.testing.assert_array_equal(values["masked_lm_ids"][rows, slots], masked_originals)
    # 80% [MASK], 10% kept, 10% random.
    shown = values["input_ids"][rows, positions]
    shares = [np.mean(shown == MASK), np.mean(shown == masked_originals)]
    np.testing.assert_allclose(shares, [0.8, 0.1], atol=0.01)
    assert (shown[(shown != MASK) & (shown != masked_originals)] >= 5).all()
    # Whole words: the piece after a masked one is masked too unless it starts a word.
    masked = np.zeros_like(original, bool)
    masked[rows, positions] = True
    follows = masked[:, :-1] & ~masked[:, 1:] & (values["input_mask"][:, 1:] == 1)
    assert values["token_boundary"][:, 1:][follows].all()
    # token_boundary: the official start-piece rule, except a segment's first token starts one.
    encoder = SentencePieceEncoder(str(shared_data / SPM))
    inside = (
        (values["input_mask"][:, 2:] == 1) & (original[:, 1:-1] != SEP) & (original[:, 2:] != SEP)
    )
    np.testing.assert_array_equal(
        values["token_boundary"][:, 2:][inside], encoder.word_starts[original[:, 2:][inside]]
    )


def test_segments_are_runs_of_the_tokenized_input_in_or_out_of_order(records, shared_data):
    values, _ = records
    from pipelines.documents import iter_documents

    encoder = SentencePieceEncoder(str(shared_data / SPM))
    sentences = [s for document in iter_documents(str(shared_data / BOOK)) for s in document]
    ids, _ = encoder.encode(sentences)
    stream = ids.astype("<i4").tobytes()
    original = _originals(values)
    labels = values["next_sentence_labels"][:, 0]
    checked = 0
    for row in np.random.default_rng(0).choice(len(original), 300, replace=False):
        tokens = original[row, : values["input_mask"][row].sum()]
        sep = int(np.flatnonzero(tokens == SEP)[0])
        a, b = tokens[1:sep], tokens[sep + 1 : -1]
        if min(len(a), len(b)) < 12:
            continue  # short runs repeat in the books; their first match proves nothing
        # In order (label 0): B follows A (truncation may cut between them); swapped: B precedes.
        # (Texts repeat across books, the licence for one, so any pair of matches may do.)
        first, second = (a, b) if labels[row] == 0 else (b, a)
        gaps = [
            y - (x + len(first))
            for x in _find_all(stream, first)
            for y in _find_all(stream, second)
        ]
        assert any(0 <= gap < 600 for gap in gaps), (row, labels[row], gaps[:5])
        checked += 1
    assert checked > 100


def _find_all(stream, tokens):
    """Every token offset where `tokens` occurs in `stream` (int32 bytes)."""
    needle, found, at = np.asarray(tokens).astype("<i4").tobytes(), [], -1
    while (at := stream.find(needle, at + 1)) >= 0:
        if at % 4 == 0:
            found.append(at // 4)
    return found


@pytest.mark.slow  # the official script's input: 8 MB, ~70 s of writing
def test_statistics_match_the_official_script_where_we_behave_alike(reference_run, full_data):
    _, stats = reference_run
    ours = stats["reference_comparable"]
    official = json.loads((full_data / "reference/official_seq128_dupe1_stats.json").read_text())
    assert abs(ours["examples"] - official["examples"]) < 0.05 * official["examples"]
    assert abs(ours["mean_len"] - official["mean_len"]) < 2.5
    assert abs(ours["full_len_share"] - official["full_len_share"]) < 0.04
    assert abs(ours["short_len_share(<L/2)"] - official["short_len_share(<L/2)"]) < 0.04
    assert ours["masked_count_formula_share"] == official["masked_count_formula_share"] == 1.0
    assert abs(ours["masked_per_example"] - official["masked_per_example"]) < 0.4
    for key, share in official["replace_shares"].items():
        assert abs(ours["replace_shares"][key] - share) < 0.005
    for key, share in official["span_words_shares"].items():
        assert abs(ours["span_words_shares"][key] - share) < 0.015
    # Where we differ on purpose: SOP labels mean order only, so they are 50/50 (official 0.557).
    assert abs(ours["label_1_share"] - 0.5) < 0.015 and official["label_1_share"] > 0.55
    drawn = list(ours["ngram_drawn_shares"].values())
    np.testing.assert_allclose(drawn, [6 / 11, 3 / 11, 2 / 11], atol=0.005)


def test_stats_json_counts_what_was_read_and_written(book_run, records, shared_data):
    from pipelines.documents import iter_documents

    folder, stats = book_run
    values, _ = records
    documents = list(iter_documents(str(shared_data / BOOK)))
    assert json.loads((folder / "stats.json").read_text())["examples"] == stats["examples"]
    assert stats["input"]["documents"] == stats["documents"] == len(documents) > 20
    assert stats["input"]["files_read"] == 1 and stats["input"]["skipped"] == {}
    sentences = sum(map(len, documents))
    assert stats["sentences"]["read"] == stats["sentences"]["used"] == sentences > 1000
    labels = values["next_sentence_labels"][:, 0]
    assert stats["labels"] == {"0": int((labels == 0).sum()), "1": int((labels == 1).sum())}
    assert stats["masked_tokens"] == int(values["masked_lm_weights"].sum())
    counts = stats["counts"]
    assert sum(counts["lengths"]) == sum(counts["masked"]) == stats["examples"]
    assert stats["single_segment"]["split"] > 0
    assert stats["shards"] == _shards(folder)


# === One book: determinism, tasks, crashes ===


@pytest.fixture(scope="module")
def book_run(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("book_run")
    stats = write_pretraining_data(
        input=str(shared_data / BOOK),
        spm_model=str(shared_data / SPM),
        output_dir=str(folder),
        progress=False,
        **BOOK_SETTINGS,
    )
    return folder, stats


def _book(shared_data, folder, **overrides):
    settings = {**BOOK_SETTINGS, "progress": False, **overrides}
    return write_pretraining_data(
        input=str(shared_data / BOOK),
        spm_model=str(shared_data / SPM),
        output_dir=str(folder),
        **settings,
    )


def test_every_shard_gets_groups(book_run):
    folder, stats = book_run
    assert len(stats["shards"]) == 3
    assert all(os.path.getsize(folder / name) > 50_000 for name in stats["shards"])


def test_two_workers_write_the_same_bytes_as_one(book_run, shared_data, tmp_path, monkeypatch):
    # Spawned workers (what a process with TensorFlow or threads gets) load their own encoder.
    monkeypatch.setattr(shard_worker, "safe_start_method", lambda: "spawn")
    stats = _book(shared_data, tmp_path, num_workers=2)
    assert _shard_bytes(tmp_path) == _shard_bytes(book_run[0])
    assert stats["counts"] == book_run[1]["counts"]


def test_forked_workers_from_the_command_line_write_the_same_bytes(book_run, shared_data, tmp_path):
    # A fresh process has no TensorFlow and one thread: its workers are forked.
    arguments = [
        "--input", str(shared_data / BOOK), "--spm_model", str(shared_data / SPM),
        "--output_dir", str(tmp_path), "--max_seq_length", "128", "--dupe_factor", "2",
        "--num_shards", "3", "--group_chars", str(1 << 12), "--num_workers", "3", "--quiet",
    ]  # fmt: skip
    check = (
        "import sys, pipelines.pretraining_data as p, pipelines.shard_worker as w; "
        "assert w.safe_start_method() == 'fork'; sys.exit(p.main(sys.argv[1:]))"
    )
    subprocess.run(
        [sys.executable, "-c", check, *arguments],
        cwd=os.path.dirname(os.path.dirname(pretraining_data.__file__)),
        check=True,
    )
    assert _shard_bytes(tmp_path) == _shard_bytes(book_run[0])


def test_workers_are_forked_only_without_tensorflow_or_threads(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    monkeypatch.setattr(shard_worker.threading, "active_count", lambda: 1)
    assert shard_worker.safe_start_method() == "fork"
    monkeypatch.setattr(shard_worker.threading, "active_count", lambda: 2)
    assert shard_worker.safe_start_method() == "spawn"
    monkeypatch.setattr(shard_worker.threading, "active_count", lambda: 1)
    monkeypatch.setitem(sys.modules, "tensorflow", object())
    assert shard_worker.safe_start_method() == "spawn"
    monkeypatch.delitem(sys.modules, "tensorflow")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert shard_worker.safe_start_method() == "spawn"


def test_tasks_split_the_shards_and_together_write_the_same(book_run, shared_data, tmp_path):
    first = _book(shared_data, tmp_path, num_tasks=2, task_index=1)
    assert first["shards"] == ["pretraining-00001-of-00003.tfrecord"]
    assert not (tmp_path / "stats.json").exists()  # written once every shard is finished
    _book(shared_data, tmp_path, num_tasks=2, task_index=0)
    assert _shard_bytes(tmp_path) == _shard_bytes(book_run[0])
    merged = json.loads((tmp_path / "stats.json").read_text())
    assert merged["counts"] == book_run[1]["counts"]


def test_a_crash_then_a_rerun_gives_the_same_shards(book_run, shared_data, tmp_path, monkeypatch):
    real = shard_worker.make_records

    def failing(config, encoder, groups, stats):
        if any(group_index == 12 for group_index, _ in groups):
            raise OSError("disk on fire")
        return real(config, encoder, groups, stats)

    monkeypatch.setattr(shard_worker, "make_records", failing)
    with pytest.raises(OSError, match="disk on fire"):
        _book(shared_data, tmp_path, checkpoint_seconds=0)
    monkeypatch.undo()
    assert _shards(tmp_path) == []
    resumed = [read_progress(str(tmp_path / n))["next_group"] for n in book_run[1]["shards"]]
    assert resumed == [10, 11, 12]  # groups 0..11 were written, group g to shard g % 3
    stats = _book(shared_data, tmp_path)
    assert _shard_bytes(tmp_path) == _shard_bytes(book_run[0])
    assert stats["counts"] == book_run[1]["counts"]


def test_a_killed_run_resumes_to_the_same_shards(book_run, shared_data, tmp_path):
    arguments = [
        "--input", str(shared_data / BOOK), "--spm_model", str(shared_data / SPM),
        "--output_dir", str(tmp_path), "--max_seq_length", "128", "--dupe_factor", "2",
        "--num_shards", "3", "--group_chars", str(1 << 12), "--checkpoint_seconds", "0",
        "--quiet",
    ]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.pretraining_data", *arguments, "--num_workers", "1"],
        cwd=os.path.dirname(os.path.dirname(pretraining_data.__file__)),
        start_new_session=True,  # its own process group: a kill takes any workers too
    )
    shards = [str(tmp_path / name) for name in book_run[1]["shards"]]
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if any((read_progress(s) or {}).get("next_group", 0) >= 3 for s in shards):
            break
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert _shards(tmp_path) == [], "the run ended before it could be killed"
    checkpoints = [(read_progress(s) or {}).get("next_group", 0) for s in shards]
    assert max(checkpoints) >= 3
    assert main([*arguments, "--num_workers", "1"]) == 0
    assert _shard_bytes(tmp_path) == _shard_bytes(book_run[0])
    assert not any(os.path.exists(partial_path(s)) for s in shards)
    assert all(read_progress(s)["complete"] for s in shards)


def test_a_finished_run_is_kept_and_other_settings_are_refused(book_run, shared_data, capsys):
    folder, stats = book_run
    before = {name: os.stat(folder / name).st_mtime_ns for name in stats["shards"]}
    again = _book(shared_data, folder)
    assert again["counts"] == stats["counts"]
    assert {name: os.stat(folder / name).st_mtime_ns for name in stats["shards"]} == before
    code = main(
        [
            "--input",
            str(shared_data / BOOK),
            "--spm_model",
            str(shared_data / SPM),
            "--output_dir",
            str(folder),
            "--max_seq_length",
            "64",
            "--num_shards",
            "3",
            "--quiet",
        ]
    )
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    # The folder's manifest names the first setting that differs (pipelines.writer_folder).
    assert f"{folder} holds an earlier `python -m pipelines.pretraining_data` run" in error
    assert "(dupe_factor: 2 before, 40 now)" in error and "--overwrite" in error


# === Other objectives ===


@pytest.mark.parametrize("objective", ["nsp", "none"])
def test_other_sentence_objectives(objective, shared_data, tmp_path):
    stats = _book(shared_data, tmp_path, dupe_factor=1, num_shards=1, sentence_objective=objective)
    values, _ = _read_records([tmp_path / name for name in stats["shards"]])
    labels = values["next_sentence_labels"][:, 0]
    original = _originals(values)
    lengths = values["input_mask"].sum(axis=1)
    separators = (original == SEP).sum(axis=1)
    if objective == "none":
        # [CLS] A [SEP]: one segment, label 0, room for max_seq_length - 2 tokens of text.
        assert (labels == 0).all() and (separators == 1).all()
        assert (values["segment_ids"] == 0).all()
        assert (original[np.arange(len(lengths)), lengths - 1] == SEP).all()
    else:
        assert 0.45 < labels.mean() < 0.6 and (separators == 2).all()
        assert stats["single_segment"] == {"split": 0, "skipped_too_short": 0}


# === Tokenization ===


def test_encoder_gives_the_release_ids_and_official_word_starts(shared_data):
    encoder = SentencePieceEncoder(str(shared_data / SPM))
    assert encoder.lower_case  # the release vocabulary is uncased
    ids, lengths = encoder.encode(["Hello, my dog is cute", "", "Crème brûlée"])
    assert lengths[1] == 0
    assert ids[: lengths[0]].tolist() == [10975, 15, 51, 1952, 25, 10901]  # PROVENANCE.md
    assert encoder.preprocess(["Crème brûlée"]) == ["creme brulee"]
    assert encoder.preprocess(["two\nlines", "x"]) == ["two lines", "x"]
    specials = (encoder.cls_id, encoder.sep_id, encoder.mask_id, encoder.first_normal_id)
    assert specials == (2, 3, 4, 5)
    pieces = {p: i for i, p in enumerate(map(encoder._processor.id_to_piece, range(30000)))}
    # The official _is_start_piece_sp: "▁" pieces, punctuation and non-English pieces start words.
    cases = [("\u2581hello", True), (",", True), ("ing", False), ("'", True), ("19", True)]
    for piece, starts in cases:
        assert encoder.word_starts[pieces[piece]] == starts, piece
    # Upper case counts outside the control pieces only, with or without a line break in one.
    vocabulary = list(pieces)
    assert not encoder._has_upper_case(vocabulary)
    vocabulary[100] = "\u2581Foo"
    assert encoder._has_upper_case(vocabulary)
    vocabulary[101] = "a\nb"
    assert encoder._has_upper_case(vocabulary)
    vocabulary[100] = "\u2581foo"
    assert not encoder._has_upper_case(vocabulary)
    # The whole-vocabulary computation agrees with the piece-by-piece rule, odd pieces included.
    odd = ["\u0130", "\u212a", "A\u03a3", "", "a\nb", "<x", "\u2581A", "\u00e9t\u00e9", "a-b"]
    for vocabulary in (list(pieces), list(pieces) + odd, list(pieces) + odd[:-5]):
        expected = [tokenization._starts_word(p) for p in vocabulary]
        assert tokenization._word_starts(vocabulary).tolist() == expected


def test_preprocess_matches_the_official_preprocess_text(shared_data):
    """Per-character accent stripping of joined text equals the official per-text rule
    (whitespace collapsed, NFKD, marks dropped, lower-cased; `` and '' kept), on text mixing
    precomposed letters, loose and stacked marks, ligatures, Hangul, final sigma, quotes."""
    import random
    import unicodedata

    def official(text):
        text = " ".join(text.strip().split())
        text = unicodedata.normalize("NFKD", text)
        return "".join(c for c in text if not unicodedata.combining(c)).lower()

    encoder = SentencePieceEncoder(str(shared_data / SPM))
    ranges = [(0x20, 0x7F), (0xA0, 0x500), (0x1E00, 0x1F00), (0x300, 0x370), (0x2000, 0x2100)]
    ranges += [(0xAC00, 0xAC40), (0xFB00, 0xFB10), (0x3A3, 0x3A4)]
    alphabet = [chr(i) for low, high in ranges for i in range(low, high)]
    rng = random.Random(0)
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(2000)]
    texts += ["ΟΔΟΣ Σ", "A\u0301\u0323b", "ﬁne café", "Crème brûlée"]
    assert encoder.preprocess(texts) == [official(t) for t in texts]


# === Bad input ===


def _arguments(shared_data, tmp_path, *extra, input_pattern=None, spm_model=None):
    return [
        "--input", str(input_pattern or shared_data / BOOK),
        "--spm_model", str(spm_model or shared_data / SPM),
        "--output_dir", str(tmp_path / "out"), "--max_seq_length", "128", "--dupe_factor", "1",
        "--quiet", *extra,
    ]  # fmt: skip


def _fails(arguments, capsys, code=2):
    assert main(arguments) == code
    error = capsys.readouterr().err
    assert error.startswith("pretraining_data: error: ") and error.count("\n") == 1
    return error


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--max_seq_length", "4"], "max_seq_length=4 must be >= 5"),
        (["--masked_lm_prob", "1.5"], "masked_lm_prob=1.5 must be in (0, 1)"),
        (["--dupe_factor", "0"], "dupe_factor=0 must be >= 1"),
        (["--ngram", "0"], "ngram=0 must be >= 1"),
        (["--num_shards", "0"], "num_shards=0 must be >= 1"),
        (["--num_tasks", "2", "--task_index", "2"], "task_index=2 must be in [0, 2)"),
        (["--seed", "-1"], "seed=-1 must be >= 0"),
        (["--short_seq_prob", "2"], "short_seq_prob=2.0 must be in [0, 1]"),
    ],
)
def test_bad_settings(flags, message, shared_data, tmp_path, capsys):
    assert message in _fails(_arguments(shared_data, tmp_path, *flags), capsys)
    assert not (tmp_path / "out").exists()


def test_bad_flags_are_argparse_errors(shared_data, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(_arguments(shared_data, tmp_path, "--sentence_objective", "mlm"))
    assert exit_info.value.code == 2


def test_bad_models(shared_data, tmp_path, capsys):
    from pipelines.sentencepiece_proto import sentencepiece_model_pb2

    missing = tmp_path / "missing.model"
    error = _fails(_arguments(shared_data, tmp_path, spm_model=missing), capsys)
    assert f"SentencePiece model '{missing}' does not exist" in error
    text = tmp_path / "text.model"
    text.write_text("not a model")
    error = _fails(_arguments(shared_data, tmp_path, spm_model=text), capsys)
    assert f"'{text}' is not a SentencePiece model" in error
    model = sentencepiece_model_pb2.ModelProto.FromString((shared_data / SPM).read_bytes())
    model.pieces[4].piece = "[MASQ]"
    no_mask = tmp_path / "no_mask.model"
    no_mask.write_bytes(model.SerializeToString())
    error = _fails(_arguments(shared_data, tmp_path, spm_model=no_mask), capsys)
    assert f"SentencePiece model '{no_mask}' has no [MASK] piece" in error


def test_missing_and_unreadable_input(shared_data, tmp_path, capsys):
    pattern = tmp_path / "nothing" / "*.txt"
    error = _fails(_arguments(shared_data, tmp_path, input_pattern=pattern), capsys)
    assert f"input pattern '{pattern}' matches no file" in error
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "binary.txt").write_bytes(b"\x00\x01\x02 binary")
    (tmp_path / "bad" / "empty.txt").write_bytes(b"")
    error = _fails(_arguments(shared_data, tmp_path, input_pattern=tmp_path / "bad/*.txt"), capsys)
    assert "no document could be read" in error and "binary.txt" in error and "empty.txt" in error


def test_bad_files_beside_good_ones_are_skipped_and_named(shared_data, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    book = (shared_data / BOOK).read_bytes()
    (folder / "good.txt").write_bytes(book[:100_000])
    (folder / "crlf_bad_utf8.txt").write_bytes(
        book[100_000:160_000].replace(b"\n", b"\r\n") + b"\xff\xfe"
    )
    (folder / "binary.txt").write_bytes(b"\x00" * 100)
    (folder / "empty.txt").write_bytes(b"")
    stats = write_pretraining_data(
        input=str(folder / "*.txt"),
        spm_model=str(shared_data / SPM),
        output_dir=str(tmp_path / "out"),
        max_seq_length=128,
        dupe_factor=1,
        progress=False,
    )
    assert stats["examples"] > 200 and stats["input"]["files_read"] == 2
    skipped = stats["input"]["skipped"]
    assert list(skipped["binary_file"]) == [str(folder / "binary.txt")]
    assert list(skipped["empty_file"]) == [str(folder / "empty.txt")]
    assert list(stats["input"]["repaired"]["invalid_utf8"]) == [str(folder / "crlf_bad_utf8.txt")]


def _block_once_opened(monkeypatch, path):
    """Makes a folder at `path` once the writer owns its output folder (a user's folder made
    beforehand would be refused before any write)."""
    real = pretraining_data.writer_folder

    def opened(*args, **kwargs):
        folder = real(*args, **kwargs)
        os.makedirs(path)
        return folder

    monkeypatch.setattr(pretraining_data, "writer_folder", opened)


def test_an_unwritable_shard_is_one_line_and_exit_1(shared_data, tmp_path, capsys, monkeypatch):
    # The shard's temporary name is taken by a folder: the writer cannot open it.
    blocked = partial_path(str(tmp_path / "out" / "pretraining-00000-of-00001.tfrecord"))
    _block_once_opened(monkeypatch, blocked)
    error = _fails(_arguments(shared_data, tmp_path), capsys, code=1)
    assert "Is a directory" in error and blocked in error


@pytest.mark.slow  # two fresh processes import the whole pipelines package (TensorFlow)
def test_a_failing_worker_process_is_one_line_and_exit_1(
    shared_data, tmp_path, capsys, monkeypatch
):
    blocked = partial_path(str(tmp_path / "out" / "pretraining-00001-of-00002.tfrecord"))
    _block_once_opened(monkeypatch, blocked)
    arguments = _arguments(shared_data, tmp_path, "--num_shards", "2", "--num_workers", "2")
    error = _fails(arguments, capsys, code=1)
    assert "a pretraining-data worker failed: IsADirectoryError" in error and blocked in error


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0 and "--sentence_objective" in capsys.readouterr().out


def test_serialized_examples_parse_back_whatever_the_varint_widths():
    import tensorflow as tf

    from pipelines.record_writer import serialize_examples

    widths = [0, 1, 127, 128, 16383, 16384, 2**21 - 1, 2**21, 2**35, 2**62]
    values = np.array([widths, widths[::-1], [5] * len(widths)], np.int64)
    weights = np.array([[0.5, 1.0], [0.0, 2.0], [1.0, 1.0]], np.float32)
    records = serialize_examples({"ids": values, "small": values % 2, "weights": weights})
    for row, record in enumerate(records):
        example = tf.train.Example.FromString(record)
        feature = example.features.feature
        assert list(feature["ids"].int64_list.value) == values[row].tolist()
        assert list(feature["small"].int64_list.value) == (values[row] % 2).tolist()
        assert list(feature["weights"].float_list.value) == weights[row].tolist()
