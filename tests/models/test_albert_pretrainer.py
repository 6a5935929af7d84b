import keras
import numpy as np
import pytest
import tensorflow as tf
from model_inputs import make_pretraining_batch

import albert_keras as ak
from albert_keras.layers.fast_paths import fast_paths
from albert_keras.models.albert_pretrainer import backbone_inputs

METRICS = {"loss", "mlm_loss", "mlm_accuracy", "sentence_loss", "sentence_accuracy"}


def _log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _expected_losses(batch, outputs):
    """The official run_pretraining.py losses, in NumPy."""
    mlm_log_probs = _log_softmax(np.asarray(outputs["mlm_logits"], "float64"))
    ids = batch["masked_lm_ids"]
    per_position = -np.take_along_axis(mlm_log_probs, ids[..., None], axis=-1)[..., 0]
    weights = batch["masked_lm_weights"]
    mlm_loss = (per_position * weights).sum() / (weights.sum() + 1e-5)
    sentence_log_probs = _log_softmax(np.asarray(outputs["sentence_logits"], "float64"))
    labels = batch["next_sentence_labels"][:, 0]
    sentence_loss = -sentence_log_probs[np.arange(len(labels)), labels].mean()
    mlm_hits = (mlm_log_probs.argmax(-1) == ids) * weights
    return {
        "mlm_loss": mlm_loss,
        "sentence_loss": sentence_loss,
        "loss": mlm_loss + sentence_loss,
        "mlm_accuracy": mlm_hits.sum() / weights.sum(),
        "sentence_accuracy": (sentence_log_probs.argmax(-1) == labels).mean(),
    }


def _predicted(pretrainer, batch):
    """What `predict` computes (`training=False`), called eagerly: no predict function to
    trace for one small batch."""
    return pretrainer(batch, training=False)


@pytest.fixture
def pretrainer(tiny_config):
    return ak.AlbertPretrainer(ak.AlbertBackbone(**tiny_config))


def test_outputs_from_record_features(pretrainer, pretraining_batch):
    outputs = pretrainer(pretraining_batch)  # int64 features, token_boundary ignored
    assert outputs["mlm_logits"].shape == (4, 3, 100)
    assert outputs["sentence_logits"].shape == (4, 2)
    # Gathering before the head equals running the head everywhere and then gathering.
    backbone_outputs = pretrainer.backbone(
        {
            "token_ids": pretraining_batch["input_ids"].astype("int32"),
            "segment_ids": pretraining_batch["segment_ids"].astype("int32"),
            "padding_mask": pretraining_batch["input_mask"].astype("int32"),
        }
    )
    length = pretraining_batch["input_ids"].shape[1]
    everywhere = pretrainer.mlm_head(
        backbone_outputs["sequence_output"], mask_positions=np.tile(np.arange(length), (4, 1))
    )
    positions = pretraining_batch["masked_lm_positions"]
    np.testing.assert_allclose(
        outputs["mlm_logits"],
        np.take_along_axis(np.asarray(everywhere), positions[..., None], axis=1),
        atol=1e-5,
    )


def _full_outputs(pretrainer, batch):
    """The pretrainer's outputs with every row of the last layer computed (no sparse layer)."""
    outputs = pretrainer.backbone(backbone_inputs(batch))
    positions = tf.cast(batch["masked_lm_positions"], "int32")
    return {
        "mlm_logits": pretrainer.mlm_head(outputs["sequence_output"], mask_positions=positions),
        "sentence_logits": pretrainer.sentence_head(outputs["pooled_output"]),
    }


def _outputs_loss_and_gradients(pretrainer, batch, call):
    with tf.GradientTape() as tape:
        outputs = call(pretrainer, batch)
        loss = pretrainer.compute_loss(x=batch, y_pred=outputs)
    gradients = tape.gradient(loss, pretrainer.trainable_variables)
    return outputs, loss, gradients


@pytest.mark.parametrize(
    "sharing, inner, fast",
    [("all", 1, True), ("none", 1, True), ("all", 2, True), ("none", 2, True), ("all", 2, False)],
)
def test_sparse_last_layer_equals_the_full_computation(tiny_config, sharing, inner, fast):
    # The pretrainer computes the last block at [CLS] and the masked positions only: logits,
    # loss and every weight's gradient equal those of the full last layer, gathered after.
    config = {**tiny_config, "num_layers": 3}
    pretrainer = ak.AlbertPretrainer(
        ak.AlbertBackbone(**config, sharing=sharing, num_inner_repetitions=inner)
    )
    # Rows of 12 down to 3 real tokens; positions in any order, repeated, and a padded slot
    # (weight 0) at position 0, as the records have.
    batch = make_pretraining_batch(seed=5, predictions=4)
    batch["masked_lm_positions"] = np.array(
        [[3, 9, 1, 10], [2, 2, 7, 5], [4, 1, 5, 0], [2, 1, 0, 0]]
    )
    batch["masked_lm_weights"] = np.array([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 0]])
    with fast_paths(fast):
        sparse = _outputs_loss_and_gradients(pretrainer, batch, lambda model, x: model(x))
        full = _outputs_loss_and_gradients(pretrainer, batch, _full_outputs)
    for name in ("mlm_logits", "sentence_logits"):
        np.testing.assert_allclose(sparse[0][name], full[0][name], atol=1e-5, err_msg=name)
    np.testing.assert_allclose(sparse[1], full[1], atol=1e-5)
    variables = pretrainer.trainable_variables
    for variable, ours, theirs in zip(variables, sparse[2], full[2], strict=True):
        assert ours is not None, variable.path
        np.testing.assert_allclose(
            tf.convert_to_tensor(ours),
            tf.convert_to_tensor(theirs),
            atol=1e-5,
            rtol=1e-4,
            err_msg=variable.path,
        )


def test_mlm_output_is_tied_to_the_token_embedding(pretrainer):
    # Built at construction: counts and summary() need no batch.
    pretrainer.summary(print_fn=lambda *args, **kwargs: None)
    assert pretrainer.mlm_head.token_embedding is pretrainer.backbone.token_embedding
    # Only the head's Dense H->E, LayerNorm(E), output bias(V) and Dense(2) are new weights.
    head = (16 * 8 + 8) + 2 * 8 + 100 + (16 * 2 + 2)
    assert pretrainer.count_params() == pretrainer.backbone.count_params() + head


def test_evaluate_reports_the_official_losses(pretrainer, pretraining_batch):
    pretrainer.compile()
    results = pretrainer.evaluate(pretraining_batch, batch_size=4, verbose=0, return_dict=True)
    assert set(results) == METRICS
    expected = _expected_losses(pretraining_batch, _predicted(pretrainer, pretraining_batch))
    for name in METRICS:
        np.testing.assert_allclose(results[name], expected[name], rtol=1e-4, err_msg=name)


def test_fit_on_a_dataset_of_dicts_lowers_the_loss(pretrainer, pretraining_batch):
    before = _expected_losses(pretraining_batch, _predicted(pretrainer, pretraining_batch))
    pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2))
    dataset = tf.data.Dataset.from_tensors(pretraining_batch).repeat(12)  # feature dicts, no y
    history = pretrainer.fit(dataset, verbose=0).history
    assert set(history) == METRICS
    after = _expected_losses(pretraining_batch, _predicted(pretrainer, pretraining_batch))
    assert after["loss"] < 0.75 * before["loss"]


def test_no_sentence_objective_means_mlm_only(tiny_config, pretraining_batch):
    pretrainer = ak.AlbertPretrainer(ak.AlbertBackbone(**tiny_config), sentence_objective=None)
    assert set(pretrainer(pretraining_batch)) == {"mlm_logits"}
    pretrainer.compile()
    results = pretrainer.evaluate(pretraining_batch, batch_size=4, verbose=0, return_dict=True)
    assert set(results) == {"loss", "mlm_loss", "mlm_accuracy"}
    np.testing.assert_allclose(results["loss"], results["mlm_loss"], rtol=1e-6)


def test_save_load_round_trip_keeps_outputs_and_optimizer(tmp_path, pretrainer, pretraining_batch):
    pretrainer.compile(jit_compile=False)  # XLA compiling costs more than this one step
    pretrainer.fit(pretraining_batch, batch_size=4, epochs=1, verbose=0)
    path = tmp_path / "pretrainer.keras"
    pretrainer.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is ak.AlbertPretrainer and loaded.sentence_objective == "sop"
    for name, value in pretrainer(pretraining_batch).items():
        np.testing.assert_array_equal(loaded(pretraining_batch)[name], value)
    assert loaded.optimizer.iterations.numpy() == 1
    assert type(loaded.optimizer) is ak.optimizers.AdamWeightDecay


@pytest.mark.parametrize("objective", ["SOP", "mlm", ""])
def test_bad_sentence_objective_raises(tiny_config, objective):
    with pytest.raises(ValueError, match=f"sentence_objective='{objective}' is not one of"):
        ak.AlbertPretrainer(ak.AlbertBackbone(**tiny_config), sentence_objective=objective)


def test_compile_refuses_a_loss(pretrainer):
    with pytest.raises(ValueError, match="computes its own loss"):
        pretrainer.compile(loss="mse")


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_mixed_bfloat16_fit_keeps_float32_logits(tiny_config, pretraining_batch):
    backbone = ak.AlbertBackbone(**tiny_config, dtype="mixed_bfloat16")
    pretrainer = ak.AlbertPretrainer(backbone)
    outputs = pretrainer(pretraining_batch)
    assert {keras.backend.standardize_dtype(v.dtype) for v in outputs.values()} == {"float32"}
    pretrainer.compile()
    history = pretrainer.fit(pretraining_batch, batch_size=4, epochs=2, verbose=0).history
    assert np.isfinite(history["loss"]).all()


def test_mixed_policy_survives_save(tmp_path, tiny_config, pretraining_batch):
    pretrainer = ak.AlbertPretrainer(ak.AlbertBackbone(**tiny_config, dtype="mixed_bfloat16"))
    path = tmp_path / "pretrainer.keras"
    pretrainer.save(path)
    loaded = keras.saving.load_model(path)
    for layer in (loaded.backbone, loaded.backbone.get_layer("encoder"), loaded.mlm_head):
        assert layer.dtype_policy.name == "mixed_bfloat16"
    assert loaded.sentence_head.dtype_policy.name == "float32"
    assert {v.dtype for v in loaded.weights} == {"float32"}
    outputs = loaded(pretraining_batch)
    for name, value in pretrainer(pretraining_batch).items():
        assert keras.backend.standardize_dtype(outputs[name].dtype) == "float32"
        np.testing.assert_array_equal(outputs[name], value)


def test_evaluate_in_uneven_batches_equals_one_batch(pretrainer):
    # 13 examples with 0 to 5 real predictions each: batches of 5, 5 and 3 hold different
    # numbers of masked positions, so per-step means of the losses would be biased.
    batch = make_pretraining_batch(seed=3, batch_size=13, predictions=5)
    real = np.arange(13) % 6
    batch["masked_lm_weights"] = (np.arange(5)[None, :] < real[:, None]).astype("float32")
    pretrainer.compile()
    whole = pretrainer.evaluate(batch, batch_size=13, verbose=0, return_dict=True)
    dataset = tf.data.Dataset.from_tensor_slices(batch).batch(5)
    uneven = pretrainer.evaluate(dataset, steps=None, verbose=0, return_dict=True)
    assert set(uneven) == METRICS
    expected = _expected_losses(batch, _predicted(pretrainer, batch))
    for name in METRICS:
        np.testing.assert_allclose(uneven[name], whole[name], rtol=1e-5, err_msg=name)
        np.testing.assert_allclose(uneven[name], expected[name], rtol=1e-4, err_msg=name)
