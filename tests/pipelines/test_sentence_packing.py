"""RoBERTa's packed inputs (`--packing full_sentences | doc_sentences`): exact spans on small
cases, then the records on the books: lengths, document boundaries, masking shares, the reader
and the pretrainer."""

import numpy as np
import pytest

from pipelines.documents import iter_documents
from pipelines.pretraining_data import main, write_pretraining_data
from pipelines.sentence_packing import pack_sentences, separated_tokens
from pipelines.tokenization import SentencePieceEncoder

SPM = "vocab/30k-clean.reconstructed.model"
BOOKS = "corpus/gutenberg/*.txt"  # tests/data's six book slices (0.5 MB) and their licence
CLS, SEP, MASK = 2, 3, 4
# RoBERTa packs 512 tokens; 128 here gives the half-megabyte of book slices ~3,000 examples at
# dupe_factor 3, enough for the masking shares to be measured within their tolerances.
SEQ = 128


def _runs(documents, packing, max_seq_length=12):
    pairs = pack_sentences(documents, max_seq_length=max_seq_length, packing=packing)
    assert (pairs.b_length == 0).all() and (pairs.label == 0).all()
    return list(zip(pairs.a_start.tolist(), pairs.a_length.tolist()))


def test_full_sentences_cross_documents_over_their_separator():
    # Capacity 10. Tokens: doc0 = [0,3) [3,7), SEP at 7; doc1 = [8,10), SEP 10; doc2 = [11,20).
    documents = [[3, 4], [2], [9]]
    assert _runs(documents, "full_sentences") == [(0, 10), (11, 9)]
    # The separator is dropped where no sentence follows it in the run.
    assert _runs([[3, 4], [5]], "full_sentences") == [(0, 7), (8, 5)]


def test_doc_sentences_stop_at_each_document():
    assert _runs([[3, 4], [2], [9]], "doc_sentences") == [(0, 7), (7, 2), (9, 9)]
    assert _runs([[3, 4, 5]], "doc_sentences") == [(0, 7), (7, 5)]


def test_a_sentence_longer_than_an_example_is_cut_into_full_pieces():
    # Capacity 10: 23 tokens are 10 + 10 + 3, and the 3 stay open for the next sentence.
    assert _runs([[23, 4]], "doc_sentences") == [(0, 10), (10, 10), (20, 7)]
    assert _runs([[23], [4]], "full_sentences") == [(0, 10), (10, 10), (20, 8)]


def test_separated_tokens_and_bad_settings():
    np.testing.assert_array_equal(
        separated_tokens(np.array([5, 6, 7]), [1, 3], SEP), [5, 3, 6, 7, 3]
    )
    with pytest.raises(ValueError, match="packing='rows'"):
        pack_sentences([[3]], max_seq_length=12, packing="rows")


def test_packing_needs_the_none_objective(shared_data, tmp_path, capsys):
    code = main(
        [
            "--input", str(shared_data / BOOKS), "--spm_model", str(shared_data / SPM),
            "--output_dir", str(tmp_path), "--packing", "full_sentences", "--quiet",
        ]
    )  # fmt: skip
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert "packing='full_sentences' needs sentence_objective='none' (got 'sop')" in error


# === The books ===


def _write(shared_data, folder, **settings):
    return write_pretraining_data(
        input=str(shared_data / BOOKS),
        spm_model=str(shared_data / SPM),
        output_dir=str(folder),
        max_seq_length=SEQ,
        dupe_factor=3,
        num_shards=1,
        progress=False,
        **settings,
    )


@pytest.fixture(scope="module")
def book_runs(shared_data, tmp_path_factory):
    runs = {}
    for name, settings in [
        ("sop", {}),
        ("full_sentences", {"sentence_objective": "none", "packing": "full_sentences"}),
        ("doc_sentences", {"sentence_objective": "none", "packing": "doc_sentences"}),
    ]:
        folder = tmp_path_factory.mktemp(name)
        runs[name] = folder, _write(shared_data, folder, **settings)
    return runs


def _records(folder, stats):
    import tensorflow as tf

    spec = {
        name: tf.io.FixedLenFeature([n], tf.float32 if name.endswith("weights") else tf.int64)
        for name, n in [
            ("input_ids", SEQ), ("input_mask", SEQ), ("segment_ids", SEQ),
            ("token_boundary", SEQ), ("masked_lm_positions", 20), ("masked_lm_ids", 20),
            ("masked_lm_weights", 20), ("next_sentence_labels", 1),
        ]
    }  # fmt: skip
    dataset = tf.data.TFRecordDataset([str(folder / n) for n in stats["shards"]])
    dataset = dataset.map(lambda r: tf.io.parse_single_example(r, spec)).batch(1 << 13)
    batches = list(dataset.as_numpy_iterator())
    values = {k: np.concatenate([b[k] for b in batches]) for k in spec}
    original = values["input_ids"].copy()
    rows, slots = np.nonzero(values["masked_lm_weights"])
    original[rows, values["masked_lm_positions"][rows, slots]] = values["masked_lm_ids"][
        rows, slots
    ]
    return values, original


@pytest.fixture(scope="module")
def book_stream(shared_data):
    """Every document's tokens, each followed by [SEP]: the array full_sentences packs."""
    encoder = SentencePieceEncoder(str(shared_data / SPM))
    pieces = []
    for document in iter_documents(str(shared_data / BOOKS)):
        ids, _ = encoder.encode(document)
        if ids.size:
            pieces += [ids, [SEP]]
    return np.concatenate(pieces).astype("<i4").tobytes()


def _inner_runs(values, original):
    """Each example's tokens between [CLS] and its last [SEP]."""
    lengths = values["input_mask"].sum(axis=1)
    return [original[row, 1 : lengths[row] - 1] for row in range(len(lengths))]


@pytest.mark.parametrize("packing", ["full_sentences", "doc_sentences"])
def test_packed_records_on_the_books(packing, book_runs, book_stream):
    folder, stats = book_runs[packing]
    values, original = _records(folder, stats)
    assert len(original) == stats["examples"] > 2000
    lengths = values["input_mask"].sum(axis=1)
    assert (original[:, 0] == CLS).all() and (
        original[np.arange(len(lengths)), lengths - 1] == SEP
    ).all()
    assert (values["segment_ids"] == 0).all() and (values["next_sentence_labels"] == 0).all()
    runs = _inner_runs(values, original)
    crossing = np.array([(run == SEP).any() for run in runs])
    if packing == "doc_sentences":
        assert not crossing.any()  # no example crosses a document
    else:
        # Long documents: crossing examples are the minority, but there.
        assert 0.05 < crossing.mean() < 0.5
        # The separator is never first or last: it always stands between two documents.
        assert all(run[0] != SEP and run[-1] != SEP for run in runs)
        # Full but for the sentence that did not fit: ~half a sentence short at 128 tokens.
        assert stats["reference_comparable"]["mean_len"] >= 0.85 * SEQ
    # Every example is a contiguous run of the books' tokens: within one document (no [SEP]
    # inside) for doc_sentences, over the separators between documents for full_sentences.
    for row in np.random.default_rng(0).choice(len(runs), 200, replace=False):
        assert book_stream.find(runs[row].astype("<i4").tobytes()) >= 0, row
    boundary = values["token_boundary"]
    inner_sep = (original == SEP) & (np.arange(SEQ) < (lengths - 1)[:, None])
    assert (boundary[inner_sep] == 1).all()


@pytest.mark.parametrize("packing", ["full_sentences", "doc_sentences"])
def test_packing_keeps_the_masking_shares(packing, book_runs):
    packed = book_runs[packing][1]["reference_comparable"]
    sop = book_runs["sop"][1]["reference_comparable"]
    assert packed["masked_count_formula_share"] == 1.0
    np.testing.assert_allclose(list(packed["replace_shares"].values()), [0.8, 0.1, 0.1], atol=0.005)
    drawn = list(packed["ngram_drawn_shares"].values())
    np.testing.assert_allclose(drawn, [6 / 11, 3 / 11, 2 / 11], atol=0.006)
    for n, share in sop["ngram_shares"].items():
        assert abs(packed["ngram_shares"][n] - share) < 0.01, (n, packed["ngram_shares"], sop)


@pytest.mark.slow  # ~45 s on 2 busy cores at length 512 (before the book slices: 128 now)
def test_the_reader_and_the_pretrainer_take_packed_records(book_runs, shared_data):
    import keras

    import albert_keras as ak
    from pipelines import read_pretraining_records

    folder, stats = book_runs["full_sentences"]
    dataset = read_pretraining_records(
        [str(folder / n) for n in stats["shards"]], 4, max_seq_length=SEQ, seed=0
    )
    batch = next(iter(dataset))
    assert batch["input_ids"].shape == (4, SEQ)
    assert int(batch["segment_ids"].numpy().max()) == 0
    backbone = ak.AlbertBackbone(
        vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=SEQ, num_segments=2,
    )  # fmt: skip
    pretrainer = ak.AlbertPretrainer(backbone, sentence_objective=None)
    pretrainer.compile(optimizer=keras.optimizers.Adam(1e-3))
    history = pretrainer.fit(dataset, steps_per_epoch=2, epochs=1, verbose=0)
    assert all(np.isfinite(v[-1]) for v in history.history.values())
