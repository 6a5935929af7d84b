"""AlbertPreprocessor: the GLUE encoder's packing and truncation, labels through tf.data."""

import numpy as np
import pytest
import tensorflow as tf

from albert_keras.glue import GlueEncoder
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

FIRST = ["Hello, my dog is cute", "A  Café", "one two three four five six seven eight nine", ""]
SECOND = ["is it?", "Über ``quotes''", "short", "ten eleven twelve thirteen fourteen"]


@pytest.fixture(scope="module")
def vocabulary(shared_data):
    return str(shared_data / "vocab" / "30k-clean.reconstructed.model")


@pytest.fixture(scope="module")
def preprocessor(vocabulary):
    return AlbertPreprocessor(AlbertTokenizer(vocabulary), sequence_length=10)


def as_numpy(inputs):
    return {name: np.asarray(value) for name, value in inputs.items()}


@pytest.mark.parametrize("pairs", [False, True])
def test_equals_the_glue_encoder_including_truncation(preprocessor, vocabulary, pairs):
    encoder = GlueEncoder(vocabulary, sequence_length=10)
    if pairs:
        ours = preprocessor((FIRST, SECOND))
        theirs = encoder(tf.constant(FIRST), tf.constant(SECOND))
    else:
        ours, theirs = preprocessor(FIRST), encoder(tf.constant(FIRST))
    ours, theirs = as_numpy(ours), as_numpy(theirs)
    assert sorted(ours) == sorted(theirs)
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
    if pairs:  # the third pair is cut: 9 + 1 words in a budget of 7, the second kept whole
        assert ours["segment_ids"][2].tolist() == [0] * 8 + [1, 1]


def test_packed_layout(preprocessor):
    out = as_numpy(preprocessor((["Hello, my dog"], ["is cute"])))
    assert out["token_ids"].tolist() == [[2, 10975, 15, 51, 1952, 3, 25, 10901, 3, 0]]
    assert out["segment_ids"].tolist() == [[0, 0, 0, 0, 0, 0, 1, 1, 1, 0]]
    assert out["padding_mask"].tolist() == [[1] * 9 + [0]]


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_maps_over_tf_data_with_labels_and_weights(preprocessor):
    dataset = tf.data.Dataset.from_tensor_slices(((FIRST, SECOND), [1, 0, 1, 0], [1.0] * 4))
    x, y, weights = next(iter(dataset.batch(4).map(preprocessor)))
    assert x["token_ids"].shape == (4, 10) and y.numpy().tolist() == [1, 0, 1, 0]
    assert weights.shape == (4,)
    single = tf.data.Dataset.from_tensor_slices((FIRST, [0, 1, 0, 1])).batch(2).map(preprocessor)
    assert [batch[1].numpy().tolist() for batch in single] == [[0, 1], [0, 1]]


def test_one_unbatched_string(preprocessor):
    out = as_numpy(preprocessor("Hello, my dog"))
    assert out["token_ids"].tolist() == [2, 10975, 15, 51, 1952, 3, 0, 0, 0, 0]


def test_bad_arguments_are_named(vocabulary, preprocessor):
    tokenizer = preprocessor.tokenizer
    with pytest.raises(ValueError, match="sequence_length=2 leaves no room"):
        AlbertPreprocessor(tokenizer, sequence_length=2)
    with pytest.raises(ValueError, match="truncate='longest'"):
        AlbertPreprocessor(tokenizer, truncate="longest")
    with pytest.raises(ValueError, match="one or two segments, got 3"):
        preprocessor((["a"], ["b"], ["c"]))


def test_config_round_trip(preprocessor):
    config = preprocessor.get_config()
    assert (config["sequence_length"], config["truncate"]) == (10, "round_robin")
    assert config["tokenizer"]["class_name"] == "AlbertTokenizer"


def test_pairs_of_unequal_batches_are_refused(preprocessor):
    # keras-hub's packer paired 2 with 2 and dropped the third text_b, silently.
    with pytest.raises(ValueError, match=r"text_a and text_b need as many rows .*: 2 and 3$"):
        preprocessor((FIRST[:2], SECOND[:3]))
    # As the SavedModel's `pairs` signature: batch sizes unknown until run time.
    texts = tf.TensorSpec([None], tf.string)
    packed = tf.function(
        lambda a, b: preprocessor((a, b))["token_ids"], input_signature=[texts, texts]
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"text_a and text_b need as many"):
        packed(tf.constant(FIRST[:2]), tf.constant(SECOND[:3]))
    assert packed(tf.constant(FIRST[:3]), tf.constant(SECOND[:3])).shape == (3, 10)
