"""AlbertTokenizer: the release vocabulary's published ids, in tf.data, saved in .keras."""

import keras
import numpy as np
import pytest
import sentencepiece
import tensorflow as tf
from release_tarball import train_tiny_sentencepiece

from albert_keras.preprocessing import AlbertTokenizer

PUBLISHED = [10975, 15, 51, 1952, 25, 10901]  # "hello, my dog is cute" (HF's AlbertTokenizer)


@pytest.fixture(scope="module")
def release_vocabulary(shared_data):
    return shared_data / "vocab" / "30k-clean.reconstructed.model"


@pytest.fixture(scope="module")
def tokenizer(release_vocabulary):
    return AlbertTokenizer(str(release_vocabulary))


def test_release_vocabulary_gives_the_published_ids(tokenizer):
    assert tokenizer.lowercases  # no capitals in the release's pieces: uncased
    assert tokenizer(["hello, my dog is cute"]).to_list() == [PUBLISHED]
    # The official normalization runs first: case, spaces, accents and quotes do not matter.
    assert tokenizer(["  HÉLLO,   my Dög is cute "]).to_list() == [PUBLISHED]
    assert tokenizer("hello, my dog is cute").numpy().tolist() == PUBLISHED
    assert (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id) == (2, 3, 0)
    assert tokenizer.mask_token_id == 4 and tokenizer.unk_token_id == 1


def test_inside_tf_data(tokenizer):
    dataset = tf.data.Dataset.from_tensor_slices(["hello, my dog is cute", "Hello"]).batch(2)
    ids = next(iter(dataset.map(tokenizer)))
    assert ids.to_list() == [PUBLISHED, [10975]]


def test_equals_sentencepiece_on_officially_normalized_text(tokenizer, release_vocabulary):
    processor = sentencepiece.SentencePieceProcessor(model_file=str(release_vocabulary))
    texts = ["The quick brown fox.", "Don't STOP believing!", "naïve café, 1990s"]
    expected = processor.encode([t.lower().replace("ï", "i").replace("é", "e") for t in texts])
    assert tokenizer(texts).to_list() == expected


def test_a_cased_vocabulary_is_not_lower_cased(tmp_path):
    text = "The Cat sat . A Dog ran . The Dog sat . " * 30
    cased_model = train_tiny_sentencepiece(tmp_path / "cased", text, vocab_size=30)
    cased = AlbertTokenizer(str(cased_model))
    assert not cased.lowercases
    assert cased(["The Cat"]).to_list() != cased(["the cat"]).to_list()
    forced = AlbertTokenizer(str(cased_model), lowercase=True)
    assert forced.lowercases and forced.get_config()["lowercase"] is True


def test_a_vocabulary_without_albert_pieces_is_refused(tmp_path):
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["a b c d e f g"] * 20),
        model_prefix=str(tmp_path / "plain"),
        vocab_size=12,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    with pytest.raises(ValueError, match=r"no <pad>, \[CLS\], \[SEP\], \[MASK\] piece"):
        AlbertTokenizer(str(tmp_path / "plain.model"))


def test_saved_inside_a_keras_file_with_its_vocabulary(tokenizer, tmp_path):
    wrapper = keras.Sequential([tokenizer])
    wrapper.build(None)
    path = tmp_path / "tokenizer.keras"
    wrapper.save(path)
    restored = keras.saving.load_model(path).layers[0]
    assert isinstance(restored, AlbertTokenizer)
    assert restored.proto == tokenizer.proto and restored.lowercases
    assert np.array_equal(restored("Hello, my dog is cute").numpy(), PUBLISHED)


def test_nul_bytes_do_not_end_the_text(tokenizer, release_vocabulary):
    # ICU's lower-casing stopped at the first NUL: 'good movie' alone, 2 pieces of 5.
    from albert_keras_contracts.text_normalization import preprocess_text

    processor = sentencepiece.SentencePieceProcessor(model_file=str(release_vocabulary))
    texts = ["good movie\0\0 really\0", "\0Über\0", "no nul"]
    expected = processor.encode([preprocess_text(t, lower_case=True) for t in texts])
    assert len(expected[0]) == 5
    assert tokenizer(texts).to_list() == expected
    assert tokenizer(texts[0]).numpy().tolist() == expected[0]
