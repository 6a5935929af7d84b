"""Trains a tiny pretrainer on one device and on two, in one process; prints both as JSON.

Run as `python distributed_check.py tensorflow` (MirroredStrategy over two logical CPUs) or with
`KERAS_BACKEND=jax XLA_FLAGS=--xla_force_host_platform_device_count=2 ... jax`
(keras.distribution.DataParallel over two host devices). A subprocess, because the device
layout must be fixed before the backend starts (keras-team/keras#18422 is about this path).
"""

import json
import pathlib
import sys

BACKEND = sys.argv[1]
if BACKEND == "tensorflow":
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras
import numpy as np

import albert_keras as ak
from albert_keras.optimizers import Lamb, WarmupLinearDecay
from albert_keras.training import get_strategy, strategy

STEPS, BATCH, SEQ, PREDICTIONS, VOCAB = 6, 8, 16, 4, 50


def batches(seed):
    """Random token batches; every example has the same number of real predictions, so the
    per-replica MLM normalizers add up to the one-device one (as DESIGN's loss is per batch)."""
    rng = np.random.default_rng(seed)
    n = STEPS * BATCH
    features = {
        "input_ids": rng.integers(5, VOCAB, (n, SEQ)),
        "input_mask": np.ones((n, SEQ), "int64"),
        "segment_ids": np.repeat([[0] * (SEQ // 2) + [1] * (SEQ // 2)], n, axis=0),
        "masked_lm_positions": np.sort(rng.choice(np.arange(1, SEQ), (n, PREDICTIONS)), axis=1),
        "masked_lm_ids": rng.integers(5, VOCAB, (n, PREDICTIONS)),
        "masked_lm_weights": np.ones((n, PREDICTIONS), "float32"),
        "next_sentence_labels": rng.integers(0, 2, (n, 1)),
    }
    return features


def train(distribution, initial_weights=None):
    with strategy.scope(distribution):
        keras.utils.set_random_seed(0)
        backbone = ak.AlbertBackbone(
            vocabulary_size=VOCAB,
            num_layers=1,
            num_heads=2,
            embedding_dim=8,
            hidden_dim=16,
            intermediate_dim=32,
            max_sequence_length=SEQ,
        )
        model = ak.AlbertPretrainer(backbone)
        if initial_weights is not None:
            model.set_weights(initial_weights)
        start = model.get_weights()
        # Large steps, and clipping active from the first step (the gradient norm is > 1).
        model.compile(optimizer=Lamb(WarmupLinearDecay(0.05, 1, 2 * STEPS)))
        data = batches(seed=1)
        if BACKEND == "tensorflow":
            import tensorflow as tf

            dataset = tf.data.Dataset.from_tensor_slices(data).batch(BATCH)
            history = model.fit(dataset, epochs=2, verbose=0)
        else:
            history = model.fit(data, batch_size=BATCH, epochs=2, shuffle=False, verbose=0)
        evaluation = model.evaluate(data, batch_size=BATCH, return_dict=True, verbose=0)
        # TF splits a last batch of 1 unevenly over the replicas; JAX's DataParallel needs
        # every batch divisible by the device count (Keras does not pad), so 6 there.
        probe_size = 5 if BACKEND == "tensorflow" else 6
        uneven = {}
        if BACKEND == "tensorflow":
            # 0 to 4 real predictions per example, 21 examples: batches of 8, 8 and 5, the last
            # split 3 / 2 over the replicas; the metrics must still be those of one batch.
            varied = {k: v[:21] for k, v in batches(seed=3).items()}
            varied["masked_lm_weights"] = (
                np.arange(PREDICTIONS)[None, :] < (np.arange(21) % 5)[:, None]
            ).astype("float32")
            # One batch of 21 only on one device: Keras's symbolic build under tf.distribute
            # reduces the first batch over the replicas, and fails where that splits unevenly.
            one_device = strategy.num_replicas(distribution) == 1
            for batch_size in (8, 21) if one_device else (8,):
                results = model.evaluate(varied, batch_size=batch_size, return_dict=True, verbose=0)
                uneven[batch_size] = {k: float(v) for k, v in results.items()}
        probe = {k: v[:probe_size] for k, v in batches(seed=2).items()}
        predictions = model.predict(probe, batch_size=8, verbose=0)
        return start, {
            "devices": strategy.num_replicas(distribution) if distribution else 1,
            "history": {k: [float(x) for x in v] for k, v in history.history.items()},
            "evaluate": {k: float(v) for k, v in evaluation.items()},
            "evaluate_uneven": uneven,
            "predict_shapes": {k: list(v.shape) for k, v in predictions.items()},
            "predictions": {k: np.asarray(v).tolist() for k, v in predictions.items()},
            "finite": bool(all(np.isfinite(w).all() for w in model.get_weights())),
            "weights": [w.tolist() for w in model.get_weights()[:3]],
        }


def lamb_on_jax():
    """The LAMB NumPy-reference check on this backend."""
    sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "optimizers"))
    from lamb_reference import (
        TINY_BLOCK_FLAGS,
        lamb_reference,
        make_problem,
        run_keras,
        tiny_block,
    )

    variables = tiny_block()
    start = [keras.ops.convert_to_numpy(v) for v in variables]
    _, gradient_steps = make_problem()
    got = run_keras(Lamb(learning_rate=0.05), variables, gradient_steps)
    rates = [0.05] * len(gradient_steps)
    want = lamb_reference(start, gradient_steps, rates, TINY_BLOCK_FLAGS, TINY_BLOCK_FLAGS)
    return max(float(np.abs(g - w).max()) for g, w in zip(got, want))


if __name__ == "__main__":
    if BACKEND == "tensorflow":
        one_device = get_strategy("cpu")
        several = get_strategy("mirrored", devices=["/cpu:0", "/cpu:1"])
    else:
        one_device = None
        several = get_strategy("auto")
    start, single = train(one_device)
    _, distributed = train(several, initial_weights=start)
    report = {"one_device": single, "distributed": distributed}
    if BACKEND == "jax":
        report["lamb_max_error"] = lamb_on_jax()
    print("REPORT " + json.dumps(report))
