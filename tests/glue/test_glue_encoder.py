"""GlueEncoder and glue_dataset against the official classifier_utils behaviour."""

import dataclasses
import unicodedata

import numpy as np
import pytest
import tensorflow as tf

from albert_keras.glue import GlueEncoder, GlueExamples, glue_dataset

CLS, SEP, PAD = 2, 3, 0


@pytest.fixture(scope="module")
def spm_model(shared_data):
    return shared_data / "vocab" / "30k-clean.reconstructed.model"


@pytest.fixture(scope="module")
def encoder(spm_model):
    return GlueEncoder(spm_model, sequence_length=16)


def official_preprocess_text(text):
    """google-research/albert tokenization.preprocess_text(remove_space=True, lower=True)."""
    text = " ".join(text.strip().split())  # ALBERT's keeps `` and '' (XLNet's maps them to ")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.lower()


def official_pack(ids_a, ids_b, max_seq_length):
    """classifier_utils.convert_single_example with _truncate_seq_pair, on ids."""
    ids_a, ids_b = list(ids_a), None if ids_b is None else list(ids_b)
    if ids_b is not None:
        while len(ids_a) + len(ids_b) > max_seq_length - 3:
            (ids_a if len(ids_a) > len(ids_b) else ids_b).pop()
    else:
        ids_a = ids_a[: max_seq_length - 2]
    tokens = [CLS, *ids_a, SEP]
    segments = [0] * len(tokens)
    if ids_b is not None:
        tokens += [*ids_b, SEP]
        segments += [1] * (len(ids_b) + 1)
    mask = [1] * len(tokens)
    pad = max_seq_length - len(tokens)
    return tokens + [PAD] * pad, segments + [0] * pad, mask + [0] * pad


def test_release_vocabulary_ids_and_lower_casing(encoder):
    # PROVENANCE.md: "hello, my dog is cute" -> 10975 15 51 1952 25 10901 in the ALBERT release.
    ids = tf.function(encoder.tokenize)(tf.constant(["Hello, my DOG is cute", "hello, my dog"]))
    assert ids.to_list() == [[10975, 15, 51, 1952, 25, 10901], [10975, 15, 51, 1952]]
    inputs = encoder(tf.constant(["Hello, my dog"]), tf.constant(["is cute"]))
    assert inputs["token_ids"].numpy().tolist() == [[2, 10975, 15, 51, 1952, 3, 25, 10901, 3]
                                                    + [0] * 7]  # fmt: skip
    assert inputs["segment_ids"].numpy().tolist() == [[0] * 6 + [1] * 3 + [0] * 7]
    assert inputs["padding_mask"].numpy().tolist() == [[1] * 9 + [0] * 7]
    assert {v.dtype for v in inputs.values()} == {tf.int32}


def test_normalization_matches_the_official_preprocess_text(encoder):
    texts = [
        "  Two  spaces\tand a tab  ",
        "``Quoted'' text",
        "Café Crème brûlée NAÏVE",
        "no\u00a0break\u2009thin space",
        "Ångström ﬁ ligature ①",
        "already clean",
    ]
    ours = [t.decode() for t in encoder.normalize(tf.constant(texts)).numpy()]
    assert ours == [official_preprocess_text(t) for t in texts]


def test_packing_matches_the_official_truncation_loop(encoder):
    rng = np.random.default_rng(0)
    for _ in range(60):
        length_a, length_b = rng.integers(0, 25, size=2)
        ids_a = list(rng.integers(5, 30000, size=length_a))
        ids_b = list(rng.integers(5, 30000, size=length_b))
        for pair in (True, False):
            b = ids_b if pair else None
            packed = encoder.pack(
                tf.ragged.constant([ids_a], dtype=tf.int32, ragged_rank=1)
                if ids_a else tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), [0]),
                None if b is None else (
                    tf.ragged.constant([b], dtype=tf.int32, ragged_rank=1)
                    if b else tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), [0])
                ),
            )  # fmt: skip
            tokens, segments, mask = official_pack(ids_a, b, 16)
            assert packed["token_ids"].numpy()[0].tolist() == tokens
            assert packed["segment_ids"].numpy()[0].tolist() == segments
            assert packed["padding_mask"].numpy()[0].tolist() == mask


def test_bad_spm_models_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing.model: SentencePiece model not found"):
        GlueEncoder(tmp_path / "missing.model", 16)
    (tmp_path / "junk.model").write_text("not a proto")
    with pytest.raises(ValueError, match=r"junk.model: not a usable ALBERT SentencePiece model"):
        GlueEncoder(tmp_path / "junk.model", 16)
    with pytest.raises(ValueError, match=r"sequence_length=2 leaves no room"):
        GlueEncoder(tmp_path / "junk.model", 2)


def _examples(n, pair=True, labels=True):
    return GlueExamples(
        task="RTE",
        split="dev",
        source="memory",
        index=[str(i) for i in range(n)],
        text_a=[f"sentence number {i}" for i in range(n)],
        text_b=[f"second {i}" for i in range(n)] if pair else None,
        labels=np.arange(n, dtype="int32") % 2 if labels else None,
        label_names=("entailment", "not_entailment"),
    )


def test_evaluation_pipeline_keeps_order_and_the_last_partial_batch(encoder):
    examples = _examples(10)
    batches = list(glue_dataset(examples, encoder, 4))
    assert [len(labels) for _, labels in batches] == [4, 4, 2]
    expected = encoder(tf.constant(examples.text_a), tf.constant(examples.text_b))
    token_ids = np.concatenate([inputs["token_ids"] for inputs, _ in batches])
    np.testing.assert_array_equal(token_ids, expected["token_ids"])
    labels = np.concatenate([labels for _, labels in batches])
    np.testing.assert_array_equal(labels, examples.labels)
    inputs_only = next(iter(glue_dataset(_examples(3, pair=False), encoder, 8, with_labels=False)))
    assert sorted(inputs_only) == ["padding_mask", "segment_ids", "token_ids"]
    assert (
        inputs_only["token_ids"].shape == (3, 16) and not inputs_only["segment_ids"].numpy().any()
    )


def test_training_pipeline_is_a_seeded_shuffle_of_full_batches(encoder):
    examples = _examples(10)
    # Labels 0..9 name the examples, so the stream shows which example went where.
    examples = dataclasses.replace(examples, labels=np.arange(10, dtype="int32"))

    def stream(seed):
        ds = glue_dataset(examples, encoder, 4, training=True, seed=seed)
        batches = [labels.numpy().tolist() for _, labels in ds.take(5)]
        assert all(len(batch) == 4 for batch in batches)  # partial batches dropped
        return [label for batch in batches for label in batch]

    run = stream(seed=1)
    assert run == stream(seed=1) and run != stream(seed=2)
    # Iterators that end at once (albert_keras_contracts.autotune_off), training and evaluation.
    for training, seed in ((True, 1), (False, None)):
        dataset = glue_dataset(examples, encoder, 4, training=training, seed=seed)
        assert dataset.options().autotune.enabled is False
    # Shuffled over the whole split, then repeated: each pass of 10 holds every example once,
    # and the second pass comes in a new order.
    assert sorted(run[:10]) == sorted(run[10:]) == list(range(10))
    assert run[:10] != run[10:] and run[:10] != list(range(10))
    with pytest.raises(ValueError, match=r"needs a seed"):
        glue_dataset(examples, encoder, 4, training=True)
    with pytest.raises(ValueError, match=r"memory: no examples"):
        glue_dataset(_examples(0), encoder, 4)
