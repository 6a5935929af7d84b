"""AlbertTask: the four task models share one config, compile and loading path, and the `.keras`
files of before the base class still load (the config keys, registered names and weight layout
below are those files')."""

import io
import re
import zipfile

import h5py
import keras
import numpy as np
import pytest
from model_inputs import make_backbone_inputs, make_pretraining_batch

from albert_keras.distill import AlbertDistiller
from albert_keras.models import (
    AlbertBackbone,
    AlbertClassifier,
    AlbertPretrainer,
    AlbertQuestionAnswerer,
)
from albert_keras.models.albert_task import AlbertTask
from albert_keras.optimizers import AdamWeightDecay

TINY = {
    "vocabulary_size": 100,
    "num_layers": 1,
    "num_heads": 2,
    "embedding_dim": 8,
    "hidden_dim": 16,
    "intermediate_dim": 32,
    "max_sequence_length": 32,
}
SPANS = {
    "start_positions": np.array([5, 6, 4, 0]),
    "end_positions": np.array([6, 6, 5, 0]),
    "is_impossible": np.array([0, 0, 0, 1]),
}

# What the saved files hold, as written by the code before `AlbertTask`: the config's keys, the
# registered name, the weight file's top groups (auto-numbering `_1` dropped) and its number of
# model arrays (optimizer slots aside). A change here breaks loading of existing files.
SAVED_LAYOUT = {
    "classifier": (
        {"name", "trainable", "backbone", "num_classes", "dropout", "preprocessor"},
        "albert_keras>AlbertClassifier",
        {"layers/albert_backbone", "layers/dense"},
        23,
    ),
    "question_answerer_simple": (
        {
            "name",
            "trainable",
            "backbone",
            "head",
            "start_n_top",
            "end_n_top",
            "dropout",
            "preprocessor",
            "doc_stride",  # added with defaults: older files load as before
            "max_query_length",
        },
        "albert_keras>AlbertQuestionAnswerer",
        {"backbone/layers", "layers/dense"},
        23,
    ),
    "question_answerer_v2": (
        {
            "name",
            "trainable",
            "backbone",
            "head",
            "start_n_top",
            "end_n_top",
            "dropout",
            "preprocessor",
            "doc_stride",  # added with defaults: older files load as before
            "max_query_length",
        },
        "albert_keras>AlbertQuestionAnswerer",
        {"backbone/layers", "layers/answerability_span_head"},
        32,
    ),
    "pretrainer": (
        {"name", "trainable", "backbone", "sentence_objective", "preprocessor"},
        "albert_keras>AlbertPretrainer",
        {"backbone/layers", "layers/dense", "layers/tied_masked_lm_head"},
        28,
    ),
    "distiller": (
        {"name", "trainable", "teacher", "student", "temperature", "soft_target_weight"}
        | {"mlm_weight", "cosine_weight", "cosine_positions"},
        "albert_keras>AlbertDistiller",
        {"layers/albert_pretrainer", "layers/dense"},
        54,
    ),
}


def make_trained(kind):
    """(a task compiled with its defaults and fitted one step, the inputs to predict on)."""
    inputs, batch = make_backbone_inputs(), make_pretraining_batch()
    if kind == "classifier":
        model = AlbertClassifier(AlbertBackbone(**TINY), num_classes=3)
        model.compile()
        model.fit(inputs, np.array([0, 1, 2, 0]), verbose=0)
        return model, inputs
    if kind.startswith("question_answerer"):
        head = kind.rsplit("_", 1)[1]
        model = AlbertQuestionAnswerer(AlbertBackbone(**TINY), head, start_n_top=2, end_n_top=3)
        if head == "v2":
            inputs = {**inputs, "p_mask": 1 - inputs["padding_mask"]}
        model.compile()
        model.fit({**inputs, "start_positions": SPANS["start_positions"]}, SPANS, verbose=0)
        return model, inputs
    if kind == "pretrainer":
        model = AlbertPretrainer(AlbertBackbone(**TINY), "sop")
    else:  # a narrower student: the distiller has its projection too
        teacher = AlbertPretrainer(AlbertBackbone(**TINY), "sop")
        student = AlbertPretrainer(AlbertBackbone(**{**TINY, "hidden_dim": 8}), None)
        model = AlbertDistiller(teacher, student, temperature=3.0, cosine_positions="tokens")
    model.compile()
    model.fit(batch, verbose=0)
    return model, batch


def saved_weight_groups(path):
    with zipfile.ZipFile(path) as archive:
        weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
        arrays = []
        weights.visititems(lambda k, v: arrays.append(k) if isinstance(v, h5py.Dataset) else None)
    model_arrays = [a for a in arrays if not a.startswith("optimizer")]
    groups = {re.sub(r"_\d+$", "", "/".join(a.split("/")[:2])) for a in model_arrays}
    return groups, len(model_arrays)


def predictions(model, inputs):
    """What `predict` computes (`training=False`), called eagerly: a traced predict function
    costs seconds, and both models are run the same way, so their outputs compare exactly."""
    outputs = model(inputs, training=False)
    outputs = outputs if isinstance(outputs, dict) else {"logits": outputs}
    return {name: keras.ops.convert_to_numpy(value) for name, value in outputs.items()}


@pytest.mark.parametrize("kind", sorted(SAVED_LAYOUT))
def test_saved_file_layout_and_round_trip(tmp_path, kind):
    keys, registered_name, groups, arrays = SAVED_LAYOUT[kind]
    model, inputs = make_trained(kind)
    assert set(model.get_config()) == keys
    assert keras.saving.get_registered_name(type(model)) == registered_name
    model.save(tmp_path / "task.keras")
    assert saved_weight_groups(tmp_path / "task.keras") == (groups, arrays)

    loaded = keras.saving.load_model(tmp_path / "task.keras")
    assert type(loaded) is type(model) and loaded.get_config() == model.get_config()
    ours, theirs = predictions(model, inputs), predictions(loaded, inputs)
    assert set(ours) == set(theirs)
    for name in ours:
        np.testing.assert_array_equal(theirs[name], ours[name])
    # Compiled again from the file, the optimizer's state included (one step taken).
    assert type(loaded.optimizer) is type(model.optimizer)
    assert len(loaded.optimizer.variables) == len(model.optimizer.variables)
    for saved, restored in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(restored.numpy(), saved.numpy())
    assert int(loaded.optimizer.iterations.numpy()) == 1


def test_classifier_preprocessor_round_trip(tmp_path, tiny_spm):
    from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer

    preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), sequence_length=16)
    classifier = AlbertClassifier(AlbertBackbone(**TINY), preprocessor=preprocessor)
    texts = ["a delight from start to finish", "a mess"]
    classifier.save(tmp_path / "classifier.keras")
    loaded = keras.saving.load_model(tmp_path / "classifier.keras")
    assert type(loaded.preprocessor).__name__ == "AlbertPreprocessor"
    np.testing.assert_array_equal(
        loaded.predict(texts, verbose=0), classifier.predict(texts, verbose=0)
    )


@pytest.mark.parametrize(
    "kind, learning_rate",
    [
        ("classifier", 2e-5),
        ("question_answerer_simple", 5e-5),
        ("question_answerer_v2", 3e-5),
        ("pretrainer", 1e-4),
        ("distiller", 1e-4),
    ],
)
def test_compile_auto_is_the_official_optimizer(kind, learning_rate):
    model = build(kind)
    model.compile()
    assert isinstance(model, AlbertTask) and isinstance(model.optimizer, AdamWeightDecay)
    assert float(model.optimizer.learning_rate) == pytest.approx(learning_rate, rel=1e-6)
    model.compile(optimizer=keras.optimizers.SGD(0.5))  # a given optimizer is kept
    assert isinstance(model.optimizer, keras.optimizers.SGD)


def build(kind):
    if kind == "classifier":
        return AlbertClassifier(AlbertBackbone(**TINY))
    if kind.startswith("question_answerer"):
        return AlbertQuestionAnswerer(AlbertBackbone(**TINY), kind.rsplit("_", 1)[1])
    if kind == "pretrainer":
        return AlbertPretrainer(AlbertBackbone(**TINY))
    teacher = AlbertPretrainer(AlbertBackbone(**TINY))
    return AlbertDistiller(teacher, AlbertPretrainer(AlbertBackbone(**TINY), None))


def test_a_frozen_model_comes_back_frozen():
    """`trainable=False` in a config freezes every layer: a distiller's teacher is rebuilt frozen
    (its heads came back trainable, and a compiled distiller's file failed to load)."""
    distiller = build("distiller")
    copy = AlbertDistiller.from_config(distiller.get_config())
    assert copy.get_config()["teacher"]["config"]["trainable"] is False
    assert not any(v.trainable for v in copy.teacher.variables)
    # The student's variables only (same width: no projection), as before saving.
    assert len(copy.trainable_variables) == len(distiller.trainable_variables)
    # 26 less the MLM-only student's pooler (kernel and bias), which it never reads.
    assert len(copy.trainable_variables) == len(copy.student.trainable_variables) == 24
    pretrainer = AlbertPretrainer.from_config({**build("pretrainer").get_config(), "trainable": 0})
    assert pretrainer.trainable is False and not pretrainer.mlm_head.trainable
