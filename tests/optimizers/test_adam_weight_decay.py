import keras
import numpy as np
import pytest
from lamb_reference import TINY_BLOCK_FLAGS, make_problem, run_keras, tiny_block
from layer_walk import all_layers

import albert_keras as ak
from albert_keras.optimizers import AdamWeightDecay, Lamb, WarmupLinearDecay


def adam_weight_decay_reference(weights, gradient_steps, learning_rates, decays,
                                weight_decay=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6):  # fmt: skip
    """The official `AdamWeightDecayOptimizer.apply_gradients` after `create_optimizer`'s
    `tf.clip_by_global_norm(grads, 1.0)`, in NumPy: no bias correction, decay in the update."""
    weights = [np.array(w, np.float64) for w in weights]
    ms = [np.zeros_like(w) for w in weights]
    vs = [np.zeros_like(w) for w in weights]
    for grads, lr in zip(gradient_steps, learning_rates):
        norm = np.sqrt(sum(np.sum(np.square(g)) for g in grads))
        for i, g in enumerate(grads):
            g = np.asarray(g, np.float64) / max(norm, 1.0)
            ms[i] = beta_1 * ms[i] + (1 - beta_1) * g
            vs[i] = beta_2 * vs[i] + (1 - beta_2) * g**2
            update = ms[i] / (np.sqrt(vs[i]) + epsilon)
            if decays[i]:
                update = update + weight_decay * weights[i]
            weights[i] = weights[i] - lr * update
    return weights


def test_matches_the_official_update_over_several_steps():
    variables = tiny_block()
    start = [keras.ops.convert_to_numpy(v) for v in variables]
    # 10 steps, global norms ~0.1 to ~10: clipping on and off.
    gradient_steps = make_problem(seed=0)[1] + make_problem(seed=1)[1]
    schedule = WarmupLinearDecay(0.05, warmup_steps=2, total_steps=12)
    got = run_keras(AdamWeightDecay(learning_rate=schedule), variables, gradient_steps)
    rates = [float(schedule(step)) for step in range(len(gradient_steps))]
    # Only the two kernels decay: the bias and LayerNorm's gamma / beta are excluded by path.
    want = adam_weight_decay_reference(start, gradient_steps, rates, TINY_BLOCK_FLAGS)
    for g, w, v in zip(got, want, variables):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6, err_msg=v.path)


def test_is_lamb_without_the_trust_ratio_and_differs_from_keras_adamw():
    _, gradient_steps = make_problem()
    results = {
        name: run_keras(optimizer, tiny_block(), gradient_steps)
        for name, optimizer in {
            "ours": AdamWeightDecay(learning_rate=0.01),
            "lamb_no_ratio": Lamb(learning_rate=0.01, exclude_from_layer_adaptation=[""]),
            "lamb": Lamb(learning_rate=0.01),
            # Keras's AdamW corrects the moments' bias and decays before the step.
            "keras": keras.optimizers.AdamW(
                learning_rate=0.01, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0
            ),
        }.items()
    }

    def gap(other):
        return max(np.abs(a - b).max() for a, b in zip(results["ours"], results[other]))

    assert gap("lamb_no_ratio") == 0.0
    assert gap("lamb") > 1e-3 and gap("keras") > 1e-3


def test_exclusions_on_the_classifier(tiny_config):
    """LayerNorm weights and biases are not decayed; no variable gets a trust ratio."""
    classifier = ak.AlbertClassifier(ak.AlbertBackbone(**tiny_config), num_classes=3)
    optimizer = AdamWeightDecay()
    optimizer.build(classifier.trainable_variables)
    layer_norms = {
        id(v)
        for layer in all_layers(classifier)
        if isinstance(layer, keras.layers.LayerNormalization)
        for v in layer.weights
    }
    for variable, decays in zip(classifier.trainable_variables, optimizer._decays):
        excluded = id(variable) in layer_norms or variable.name == "bias"
        assert decays == (not excluded), variable.path
    assert not any(optimizer._adapts)
    # 3 embedding tables and 7 kernels: projection, 4 in the one shared block, pooler, logits.
    assert sum(optimizer._decays) == 10


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_compile_default_and_keras_round_trip(tmp_path, tiny_config):
    classifier = ak.AlbertClassifier(ak.AlbertBackbone(**tiny_config), num_classes=2, dropout=0.0)
    classifier.compile(jit_compile=False)
    assert type(classifier.optimizer) is AdamWeightDecay
    assert classifier.optimizer.get_config()["learning_rate"] == pytest.approx(2e-5)
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": rng.integers(1, 100, (8, 6)).astype("int32"),
        "segment_ids": np.zeros((8, 6), "int32"),
        "padding_mask": np.ones((8, 6), "int32"),
    }
    labels = rng.integers(0, 2, (8,))
    classifier.fit(inputs, labels, batch_size=4, epochs=1, shuffle=False, verbose=0)
    classifier.save(tmp_path / "classifier.keras")
    loaded = keras.saving.load_model(tmp_path / "classifier.keras")  # no custom_objects
    assert type(loaded.optimizer) is AdamWeightDecay
    assert loaded.optimizer.get_config() == classifier.optimizer.get_config()
    assert "exclude_from_layer_adaptation" not in loaded.optimizer.get_config()
    # The moments reload too: one more epoch from either gives the same weights.
    for model in (classifier, loaded):
        model.fit(inputs, labels, batch_size=4, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(loaded.get_weights(), classifier.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert int(loaded.optimizer.iterations.numpy()) == 4
