"""AlbertQuestionAnswerer: both heads against NumPy restatements of the official graphs."""

import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer, SquadSpanLoss


@pytest.fixture
def backbone(tiny_config):
    return AlbertBackbone(**tiny_config)


@pytest.fixture
def squad_inputs(backbone_inputs):
    inputs = dict(backbone_inputs)
    p_mask = np.ones_like(inputs["padding_mask"])
    p_mask[:, 0] = 0  # [CLS]
    p_mask[:, 4:] = 1 - inputs["padding_mask"][:, 4:]  # the context: real tokens after 4
    p_mask[:, 4:][inputs["padding_mask"][:, 4:] == 0] = 1
    inputs["p_mask"] = p_mask
    return inputs


def _np(x):
    return keras.ops.convert_to_numpy(x)


def _sequence(backbone, inputs):
    names = ("token_ids", "segment_ids", "padding_mask")
    return _np(backbone({name: inputs[name] for name in names})["sequence_output"])


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _layer_norm(x, gamma, beta):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def _v2_reference(head, sequence, p_mask, start_positions=None):
    """The official `create_v2_model` in NumPy (eval mode), from the head's weights."""
    w = {
        f"{name}/{weight}": _np(getattr(getattr(head, layer), weight))
        for name, layer, weights in (
            ("start_logits", "start_dense", ("kernel", "bias")),
            ("end_logits_dense_0", "end_hidden", ("kernel", "bias")),
            ("end_logits_layer_norm", "end_layer_norm", ("gamma", "beta")),
            ("end_logits_dense_1", "end_dense", ("kernel", "bias")),
            ("answer_class_dense_0", "answer_hidden", ("kernel", "bias")),
            ("answer_class_dense_1", "answer_dense", ("kernel",)),
        )
        for weight in weights
    }
    p = p_mask.astype("float64")
    start = (sequence @ w["start_logits/kernel"])[..., 0] + w["start_logits/bias"][0]
    start_masked = start * (1 - p) - 1e30 * p
    start_log_probs = _log_softmax(start_masked)

    def end_log_probs(tokens, start_features, mask):
        x = np.concatenate([tokens, np.broadcast_to(start_features, tokens.shape)], -1)
        x = np.tanh(x @ w["end_logits_dense_0/kernel"] + w["end_logits_dense_0/bias"])
        x = _layer_norm(x, w["end_logits_layer_norm/gamma"], w["end_logits_layer_norm/beta"])
        logits = (x @ w["end_logits_dense_1/kernel"])[..., 0] + w["end_logits_dense_1/bias"][0]
        return _log_softmax(logits * (1 - mask) - 1e30 * mask)

    probs = np.exp(_log_softmax(start_masked))
    answer = np.concatenate([np.einsum("bth,bt->bh", sequence, probs), sequence[:, 0]], -1)
    answer = np.tanh(answer @ w["answer_class_dense_0/kernel"] + w["answer_class_dense_0/bias"])
    cls_logits = (answer @ w["answer_class_dense_1/kernel"])[..., 0]
    if start_positions is not None:
        chosen = sequence[np.arange(len(sequence)), start_positions][:, None]
        return start_log_probs, end_log_probs(sequence, chosen, p), cls_logits
    k = head.start_n_top
    top = np.argsort(-start_log_probs, axis=-1, kind="stable")[:, :k]
    ends = np.stack(
        [end_log_probs(sequence, sequence[np.arange(len(sequence)), top[:, i]][:, None], p)
         for i in range(k)], 1,
    )  # fmt: skip
    return start_log_probs, top, ends, cls_logits


def test_simple_head_is_dense_2_on_the_sequence(backbone, squad_inputs):
    answerer = AlbertQuestionAnswerer(backbone)
    out = answerer.predict(squad_inputs, verbose=0)
    sequence = _sequence(backbone, squad_inputs)
    logits = sequence @ _np(answerer.span_head.kernel) + _np(answerer.span_head.bias)
    np.testing.assert_allclose(out["start_logits"], logits[..., 0], atol=1e-5)
    np.testing.assert_allclose(out["end_logits"], logits[..., 1], atol=1e-5)
    assert out["start_logits"].dtype == np.float32 and out["start_logits"].shape == (4, 12)


def test_v2_head_beam_and_training_outputs_match_the_official_graph(backbone, squad_inputs):
    answerer = AlbertQuestionAnswerer(backbone, head="v2", start_n_top=3, end_n_top=2)
    sequence = _sequence(backbone, squad_inputs).astype("float64")
    p_mask = squad_inputs["p_mask"]
    out = answerer.predict(squad_inputs, verbose=0)
    start_log_probs, top, ends, cls_logits = _v2_reference(answerer.v2_head, sequence, p_mask)
    np.testing.assert_array_equal(out["start_top_index"], top)
    np.testing.assert_allclose(
        out["start_top_log_probs"], np.take_along_axis(start_log_probs, top, 1), atol=1e-4
    )
    end_top = np.argsort(-ends, axis=-1, kind="stable")[..., :2]
    np.testing.assert_array_equal(out["end_top_index"], end_top.reshape(4, 6))
    np.testing.assert_allclose(
        out["end_top_log_probs"], np.take_along_axis(ends, end_top, -1).reshape(4, 6), atol=1e-4
    )
    np.testing.assert_allclose(out["cls_logits"], cls_logits, atol=1e-5)
    # Masked positions are never proposed (rows with at least 3 unmasked positions).
    assert not np.take_along_axis(p_mask, out["start_top_index"], 1)[:3].any()
    # With gold starts in the inputs: the training outputs.
    gold = np.array([5, 6, 4, 0])
    trained = answerer({**squad_inputs, "start_positions": gold}, training=False)
    _, end_ref, _ = _v2_reference(answerer.v2_head, sequence, p_mask, gold)
    assert set(trained) == {"start_log_probs", "end_log_probs", "cls_logits"}
    valid = p_mask == 0
    np.testing.assert_allclose(_np(trained["end_log_probs"])[valid], end_ref[valid], atol=1e-4)


def test_loss_is_the_official_one():
    rng = np.random.default_rng(0)
    start, end = rng.normal(size=(3, 7)), rng.normal(size=(3, 7))
    y = {"start_positions": np.array([1, 2, 0]), "end_positions": np.array([3, 2, 0]),
         "is_impossible": np.array([0, 0, 1])}  # fmt: skip
    rows = np.arange(3)
    loss = SquadSpanLoss()
    simple = _np(loss(y, {"start_logits": start, "end_logits": end}))
    official = -(_log_softmax(start)[rows, y["start_positions"]].mean()
                 + _log_softmax(end)[rows, y["end_positions"]].mean()) / 2  # fmt: skip
    assert simple == pytest.approx(official, rel=1e-5)
    cls = rng.normal(size=3)
    v2 = _np(loss(y, {"start_log_probs": _log_softmax(start), "end_log_probs": _log_softmax(end),
                      "cls_logits": cls}))  # fmt: skip
    sigmoid_ce = np.mean(
        np.log1p(np.exp(-np.abs(cls))) + np.maximum(cls, 0) - cls * y["is_impossible"]
    )
    assert v2 == pytest.approx(official + 0.5 * sigmoid_ce, rel=1e-5)


@pytest.mark.parametrize("head", ["simple", "v2"])
def test_fit_then_save_load_round_trip(tmp_path, backbone, squad_inputs, head):
    answerer = AlbertQuestionAnswerer(backbone, head=head, start_n_top=2, end_n_top=2)
    answerer.compile(optimizer=keras.optimizers.Adam(1e-2))
    y = {"start_positions": np.array([5, 6, 4, 0]), "end_positions": np.array([6, 6, 5, 0]),
         "is_impossible": np.array([0, 0, 0, 1])}  # fmt: skip
    x = {**squad_inputs, "start_positions": y["start_positions"]}
    history = answerer.fit(x, y, epochs=20, batch_size=4, verbose=0).history["loss"]
    assert history[-1] < 0.5 * history[0]
    answerer.save(tmp_path / "qa.keras")
    loaded = keras.saving.load_model(tmp_path / "qa.keras")
    assert (
        isinstance(loaded, AlbertQuestionAnswerer) and loaded.get_config() == answerer.get_config()
    )
    # What `predict` computes (`training=False`), called eagerly: two traced predict functions
    # cost seconds, and both models are run the same way.
    ours, theirs = (
        {name: _np(value) for name, value in model(squad_inputs, training=False).items()}
        for model in (answerer, loaded)
    )
    assert set(ours) == set(theirs)
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], atol=1e-6)
    assert isinstance(loaded.loss, SquadSpanLoss)  # compiled again from the file
    if head == "simple":  # the gold spans are learned
        assert (ours["start_logits"].argmax(-1) == y["start_positions"]).all()


def test_default_learning_rates_and_bad_arguments(backbone):
    simple, v2 = AlbertQuestionAnswerer(backbone), AlbertQuestionAnswerer(backbone, head="v2")
    simple.compile()
    v2.compile()
    assert float(simple.optimizer.learning_rate) == pytest.approx(5e-5)
    assert float(v2.optimizer.learning_rate) == pytest.approx(3e-5)
    with pytest.raises(ValueError, match="head='v3': choose one of simple, v2"):
        AlbertQuestionAnswerer(backbone, head="v3")


def test_from_preset_builds_the_backbone_and_a_new_head():
    answerer = AlbertQuestionAnswerer.from_preset(
        "albert_base",
        head="v2",
        end_n_top=3,
        backbone_kwargs={"num_layers": 1, "hidden_dim": 32, "num_heads": 2, "intermediate_dim": 64},
    )
    config = answerer.backbone.get_config()
    assert (config["num_layers"], config["hidden_dim"], config["embedding_dim"]) == (1, 32, 128)
    assert config["vocabulary_size"] == AlbertBackbone.presets["albert_base"]["vocabulary_size"]
    assert (answerer.head, answerer.end_n_top) == ("v2", 3)
    with pytest.raises(ValueError, match="albert_huge"):
        AlbertQuestionAnswerer.from_preset("albert_huge")
