import keras
import numpy as np
from lamb_reference import TINY_BLOCK_FLAGS, lamb_reference, make_problem, run_keras, tiny_block
from layer_walk import all_layers

from albert_keras.optimizers import Lamb, WarmupLinearDecay


def test_matches_the_official_update_with_exclusions_and_clipping():
    variables = tiny_block()
    start = [keras.ops.convert_to_numpy(v) for v in variables]
    _, gradient_steps = make_problem()
    schedule = WarmupLinearDecay(0.05, warmup_steps=2, total_steps=6)
    got = run_keras(Lamb(learning_rate=schedule), variables, gradient_steps)

    decays = adapts = TINY_BLOCK_FLAGS
    rates = [float(schedule(step)) for step in range(len(gradient_steps))]
    want = lamb_reference(start, gradient_steps, rates, decays, adapts)
    for g, w, v in zip(got, want, variables):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6, err_msg=v.path)
    # The zero-initialised kernel moved (ratio 1 when ‖w‖ = 0), the excluded ones did too.
    assert all(np.abs(g - s).max() > 1e-4 for g, s in zip(got, start))


def test_differs_from_keras_lamb_and_from_unclipped():
    _, gradient_steps = make_problem()
    results = {}
    for name, optimizer in {
        "ours": Lamb(learning_rate=0.01),
        "unclipped": Lamb(learning_rate=0.01, global_clipnorm=None),
        "keras": keras.optimizers.Lamb(learning_rate=0.01),
    }.items():
        results[name] = run_keras(optimizer, tiny_block(), gradient_steps)
    for other in ("unclipped", "keras"):
        assert max(np.abs(a - b).max() for a, b in zip(results["ours"], results[other])) > 1e-4


def test_exclusions_are_configurable():
    variables = tiny_block()
    start = [keras.ops.convert_to_numpy(v) for v in variables]
    _, gradient_steps = make_problem(steps=2)
    optimizer = Lamb(
        learning_rate=0.01,
        weight_decay=0.1,
        exclude_from_weight_decay=["zero_dense"],
        exclude_from_layer_adaptation=[],
    )
    got = run_keras(optimizer, variables, gradient_steps)
    want = lamb_reference(
        start,
        gradient_steps,
        [0.01, 0.01],
        decays=[True, True, True, True, False],
        adapts=[True] * 5,
        weight_decay=0.1,
    )
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)


def test_config_round_trip_and_saved_model(tmp_path):
    optimizer = Lamb(
        learning_rate=WarmupLinearDecay(1e-3, 2, 10),
        weight_decay=0.02,
        epsilon=1e-5,
        exclude_from_weight_decay=["norm"],
        exclude_from_layer_adaptation=["bias"],
        gradient_accumulation_steps=2,
    )
    clone = Lamb.from_config(optimizer.get_config())
    assert clone.get_config() == optimizer.get_config()
    assert clone.get_config()["global_clipnorm"] == 1.0

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="head")])
    model.compile(optimizer=optimizer, loss="mse")
    x = np.random.default_rng(0).standard_normal((8, 4)).astype("float32")
    model.fit(x, x[:, :2], epochs=1, batch_size=4, verbose=0)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")  # no custom_objects
    assert isinstance(loaded.optimizer, Lamb)
    assert loaded.optimizer.get_config() == optimizer.get_config()
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))


def test_mixed_precision_fit_keeps_float32_state():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = keras.Sequential(
            [keras.Input((4,)), keras.layers.Dense(8, name="hidden"), keras.layers.Dense(1)]
        )
        model.compile(optimizer=Lamb(learning_rate=1e-2), loss="mse")
        x = np.random.default_rng(0).standard_normal((64, 4)).astype("float32")
        y = x.sum(axis=1, keepdims=True)
        history = model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0]
    # Moments live in float32 beside the float32 master weights, not in bfloat16.
    moments = [v for v in model.optimizer.variables if "momentum" in v.path or "velocity" in v.path]
    assert len(moments) == 2 * len(model.trainable_variables)
    assert {v.dtype for v in moments} == {"float32"}


def test_official_exclusions_on_the_pretrainer(tiny_config):
    """Exactly the LayerNorm weights and the biases escape decay and the trust ratio."""
    import albert_keras as ak

    pretrainer = ak.AlbertPretrainer(ak.AlbertBackbone(**tiny_config))
    optimizer = Lamb()
    optimizer.build(pretrainer.trainable_variables)
    layer_norms = {
        id(v)
        for layer in all_layers(pretrainer)
        if isinstance(layer, keras.layers.LayerNormalization)
        for v in layer.weights
    }
    for variable, decays, adapts in zip(
        pretrainer.trainable_variables, optimizer._decays, optimizer._adapts
    ):
        excluded = id(variable) in layer_norms or "bias" in variable.name
        assert decays == adapts == (not excluded), variable.path
    # 3 embedding tables and 8 kernels: projection, 4 in the one shared block, pooler, 2 heads.
    assert sum(optimizer._decays) == 11
