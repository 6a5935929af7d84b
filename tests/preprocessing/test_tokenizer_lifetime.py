"""AlbertTokenizer keeps tokenizing after TensorFlow's kernel cache is cleared: by
`keras.utils.set_random_seed` (every tutorial seeds after making its model), `tf.random.set_seed`
or `keras.backend.clear_session`. tf-text's SentencePiece op keeps its model in a resource its
kernel owns, and the cache clear deleted it ("Resource ... SentencepieceOp ... does not exist",
tensorflow/text#570); see `AlbertTokenizer._sentencepiece`. And a tokenizer called eagerly
can still be exported."""

import keras
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops a loaded SavedModel runs)

from albert_keras.preprocessing import AlbertTokenizer

PUBLISHED = [10975, 15, 51, 1952, 25, 10901]  # "hello, my dog is cute" (HF's AlbertTokenizer)
CLEARS = {
    "keras.utils.set_random_seed": lambda: keras.utils.set_random_seed(1),
    "tf.random.set_seed": lambda: tf.random.set_seed(2),
    "keras.backend.clear_session": keras.backend.clear_session,
}


@pytest.fixture(scope="module")
def release_vocabulary(shared_data):
    return str(shared_data / "vocab" / "30k-clean.reconstructed.model")


def _every_path(tokenizer, dataset):
    """The ids of each way in: a batch, one string, padded, with offsets, in tf.data."""
    return {
        "batch": tokenizer(["Hello, my  dog is cute", "dog"]).to_list(),
        "one": tokenizer("hello, my dog is cute").numpy().tolist(),
        "offsets": [
            [part.tolist() for part in row]
            for row in tokenizer.encode_normalized_with_offsets(["hello, my dog"])
        ],
        "tf.data": [ids.to_list() for ids in dataset],
    }


@pytest.mark.parametrize("clear", list(CLEARS))
def test_a_tokenizer_made_before_the_cache_is_cleared_gives_the_same_ids(release_vocabulary, clear):
    tokenizer = AlbertTokenizer(release_vocabulary)
    # A pipeline made before the clear too (tf/text#802: its map captured the op's resource).
    dataset = tf.data.Dataset.from_tensor_slices(["hello, my dog is cute"]).batch(1)
    dataset = dataset.map(tokenizer)
    before = _every_path(tokenizer, dataset)
    assert before["batch"] == [PUBLISHED, [1952]] and before["one"] == PUBLISHED
    assert before["offsets"] == [[[10975, 15, 51, 1952], [0, 5, 6, 9], [5, 6, 9, 13]]]
    assert before["tf.data"] == [[PUBLISHED]]
    CLEARS[clear]()
    assert _every_path(tokenizer, dataset) == before
    CLEARS[clear]()  # and again: each clear loses what the one before made
    assert _every_path(tokenizer, dataset) == before


def test_a_padded_tokenizer_made_before_seeding_pads_and_cuts(release_vocabulary):
    # keras-hub's `sequence_length` output, which AlbertTokenizer builds itself in its graph.
    tokenizer = AlbertTokenizer(release_vocabulary, sequence_length=8)
    keras.utils.set_random_seed(3)
    padded = tokenizer(["hello, my dog is cute", "a b c d e f g h i j"]).numpy().tolist()
    assert padded[0] == PUBLISHED + [tokenizer.pad_token_id] * 2
    assert len(padded[1]) == 8 and tokenizer.pad_token_id not in padded[1]  # cut to 8
    assert tokenizer("hello, my dog is cute").numpy().tolist() == padded[0]


def test_a_tokenizer_called_eagerly_exports_and_serves_the_same_ids(release_vocabulary, tmp_path):
    tokenizer = AlbertTokenizer(release_vocabulary)
    texts = ["Hello, my  dog is cute", "dog"]
    eager = tokenizer(texts).to_list()  # traces the eager call's functions, kept on the layer
    tokenizer.encode_normalized_with_offsets(["hello"])
    archive = keras.export.ExportArchive()
    archive.track(tokenizer)
    archive.add_endpoint(
        "serve", lambda text: tokenizer(text).to_tensor(), [tf.TensorSpec([None], tf.string)]
    )
    archive.write_out(str(tmp_path / "served"), verbose=False)
    keras.utils.set_random_seed(4)  # the loaded graph makes its own resource: seeding is harmless
    served = tf.saved_model.load(str(tmp_path / "served")).serve(tf.constant(texts)).numpy()
    assert [[i for i in row if i != tokenizer.pad_token_id] for row in served.tolist()] == eager
    assert eager == [PUBLISHED, [1952]]


def test_detokenizing_in_a_graph_survives_seeding_and_matches_eager(release_vocabulary):
    tokenizer = AlbertTokenizer(release_vocabulary)
    decode = tf.function(tokenizer.detokenize)
    padded = tf.constant([PUBLISHED, [1952] + [tokenizer.pad_token_id] * 5])
    eager = tokenizer.detokenize(padded)  # keras-hub's Python path
    keras.utils.set_random_seed(5)
    in_graph = decode(padded).numpy().tolist()
    assert in_graph == [b"hello, my dog is cute", b"dog"] == [t.encode() for t in eager]
    ragged = tf.ragged.constant([PUBLISHED[:4], [1952]])
    assert decode(ragged).numpy().tolist() == [b"hello, my dog", b"dog"]
    assert decode(tf.constant(PUBLISHED)).numpy() == b"hello, my dog is cute"
