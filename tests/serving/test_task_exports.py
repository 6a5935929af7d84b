"""SavedModels of the token tagger and the multiple-choice model answer as their `predict`."""

import numpy as np
import pytest
import tensorflow as tf

from albert_keras.models import AlbertBackbone, AlbertMultipleChoice, AlbertTokenClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras.serving.task_exports import export_token_classifier
from albert_keras_cli import main as cli

LABELS = ["O", "B-ANIMAL", "I-ANIMAL", "B-PLACE"]


@pytest.fixture
def preprocessor(tiny_spm):
    return AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), 24)


def test_served_tags_and_offsets_equal_predict(tmp_path, tiny_config, preprocessor, capsys):
    """`albert-keras export` of a saved tagger serves `predict`'s words, tags and character
    offsets. One export, through the command (which calls `export_token_classifier` on the
    loaded tagger and prints the signatures it returns): a second, direct export of the same
    tagger wrote the same SavedModel at ~8 CPU-s more; the function's own call is also the
    docstring example's (tests/test_docstring_examples.py)."""
    import tensorflow_text  # noqa: F401  (the graph's SentencePiece ops)

    tagger = AlbertTokenClassifier(
        AlbertBackbone(**tiny_config), num_classes=4, labels=LABELS, preprocessor=preprocessor
    )
    # A strong bias per tag, so the argmax differs from word to word.
    head = tagger.output_dense
    head.kernel.assign(np.random.default_rng(0).normal(0, 3, head.kernel.shape))
    texts = [
        "the cat  sat on the mat",
        "Zoë's dog\tran home",  # offsets in characters, not bytes
        " ".join(["bird"] * 12),  # more pieces than fit: the last words get no tag
        "",
    ]
    tagger.save(tmp_path / "tagger.keras")
    argv = ["export", "--model", str(tmp_path / "tagger.keras"), "--output_dir"]
    assert cli.main([*argv, str(tmp_path / "served")]) == 0
    assert "  signature serving_default: words, tags, starts, ends\n" in capsys.readouterr().out
    expected = tagger.predict(texts)
    assert sum(t["tag"] is None for t in expected[2]) > 0  # the cut-off case is exercised
    served = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    out = {k: v.numpy() for k, v in served(text=tf.constant(texts)).items()}
    for row, words in enumerate(expected):
        got = [
            (w.decode(), t.decode() or None, int(s), int(e))
            for w, t, s, e in zip(out["words"][row], out["tags"][row], out["starts"][row],
                                  out["ends"][row])
            if s >= 0
        ]  # fmt: skip
        assert got == [(t["word"], t["tag"], t["start"], t["end"]) for t in words]


@pytest.mark.slow  # a second SavedModel export and load: ~12 s on a quiet machine
def test_served_choices_equal_choose(tmp_path, tiny_config, preprocessor):
    import tensorflow_text  # noqa: F401

    chooser = AlbertMultipleChoice(AlbertBackbone(**tiny_config), preprocessor=preprocessor)
    contexts = ["the cat sat", "a dog ran home"]
    options = [["on the mat", "in the sky", "at sea"], ["to the park", "on the river", "up"]]
    chooser.save(tmp_path / "chooser.keras")  # exported by `albert-keras export`
    argv = ["export", "--model", str(tmp_path / "chooser.keras"), "--output_dir"]
    assert cli.main([*argv, str(tmp_path / "served")]) == 0
    served = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    out = served(context=tf.constant(contexts), options=tf.constant(options))
    expected = chooser.predict((contexts, options))
    np.testing.assert_allclose(
        out["probabilities"].numpy(), [e["probabilities"] for e in expected], atol=1e-5
    )
    assert out["choice"].numpy().tolist() == [e["choice"] for e in expected]


def test_export_needs_the_preprocessor_and_labels(tmp_path, tiny_config):
    tagger = AlbertTokenClassifier(AlbertBackbone(**tiny_config), num_classes=2)
    with pytest.raises(ValueError, match="preprocessor and labels"):
        export_token_classifier(tagger, tmp_path / "served")
    assert not (tmp_path / "served").exists()
