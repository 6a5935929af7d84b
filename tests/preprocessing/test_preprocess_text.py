"""The tokenizer's in-graph normalization against the official and the project's Python
`preprocess_text`, on tricky strings."""

import unicodedata

import pytest
import tensorflow as tf

from albert_keras_contracts.text_normalization import preprocess_text, preprocess_text_tensor

TRICKY = [
    "Hello, my dog is cute",
    "  leading and trailing  ",
    "tabs\tand\nnew\r\nlines\x0band\x0cfeeds\x1cand\x85nel",
    "no\u00a0break\u2003em\u3000ideographic\u2028line\u2029para",
    "zero\u200bwidth stays",  # not whitespace for Python either
    "``quoted'' and `single' and ''''",
    "Café naïve façade Ångström coöperate",
    "Ｆｕｌｌｗｉｄｔｈ ﬁ ligature ² ½",  # NFKD compatibility forms
    "İstanbul ΟΔΟΣ Straße ǅ",  # dotted capital I, Greek final sigma, sharp s, titlecase
    "e\u0301 combined vs \u00e9 precomposed, a\u20dd enclosing",
    "हिन्दी कि",  # Devanagari vowel signs: nonspacing marks the official code keeps
    "😀 emoji and 中文 and العربية",
    "",
    "   ",
    "good MOVIE\0\0 Really\0",  # NUL bytes: ICU's lower-casing stopped at the first one
    "\0Über\0\0",
]


def official_preprocess_text(text, lower):
    """google-research/albert tokenization.preprocess_text(remove_space=True, lower=lower)."""
    text = " ".join(text.strip().split())  # ALBERT's keeps `` and '' (XLNet's maps them to ")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.lower() if lower else text


@pytest.mark.parametrize("lower", [True, False])
def test_graph_normalization_equals_the_official_python(lower):
    ours = preprocess_text_tensor(tf.constant(TRICKY), lower_case=lower).numpy()
    ours = [text.decode("utf-8") for text in ours]
    official = [official_preprocess_text(text, lower) for text in TRICKY]
    assert ours == official
    assert [preprocess_text(text, lower_case=lower) for text in TRICKY] == official


def test_runs_inside_tf_function_and_tf_data_with_any_shape():
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string)])
    def normalize(texts):
        return preprocess_text_tensor(texts, lower_case=True)

    out = normalize(tf.constant([["A  B", "Ç\0D"], ["``x''", " y "]])).numpy().tolist()
    assert out == [[b"a b", b"c\0d"], [b"``x''", b"y"]]
    dataset = tf.data.Dataset.from_tensor_slices(["Ünïcode  Text"])
    dataset = dataset.map(lambda text: preprocess_text_tensor(text, lower_case=True))
    assert next(iter(dataset)).numpy() == b"unicode text"


def test_the_tokenizer_encodes_what_the_python_normalization_gives(shared_data):
    """Through the layer, each tricky string gives SentencePiece's ids of its Python
    normalization (the data writer's path), so pretraining and serving see the same ids."""
    import sentencepiece

    from albert_keras.preprocessing import AlbertTokenizer

    vocabulary = str(shared_data / "vocab" / "30k-clean.reconstructed.model")
    processor = sentencepiece.SentencePieceProcessor(model_file=vocabulary)
    ours = AlbertTokenizer(vocabulary)(TRICKY).to_list()
    assert ours == processor.encode([preprocess_text(t, lower_case=True) for t in TRICKY])
