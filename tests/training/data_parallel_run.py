"""Pretrains a tiny ALBERT with `model.fit` on the JAX backend over every host device; prints a
JSON report (the per-step losses, and what `fit` ran over).

Run by tests/training/test_data_parallel.py as
`KERAS_BACKEND=jax XLA_FLAGS=--xla_force_host_platform_device_count=N python data_parallel_run.py
RECORDS`, N = 8 (a v2-8's or v5e-8's shape) and N = 1: a subprocess each, because the device
count is fixed when JAX starts.
"""

import json
import sys

from albert_keras_cli.keras_backend import choose_keras_backend

BACKEND, WHY = choose_keras_backend("jax")  # before Keras is imported

import keras

import albert_keras as ak
from albert_keras.optimizers import Lamb, WarmupLinearDecay
from albert_keras.training.accelerator_runtime import (
    choose_accelerator_runtime,
    distribution_state,
)
from pipelines import read_pretraining_records

STEPS, BATCH, SEQ, PREDICTIONS, VOCAB = 6, 16, 32, 5, 100


class DistributionProbe(keras.callbacks.Callback):
    """Records, at each step's start inside `fit`, the distribution set and a weight's devices."""

    def __init__(self, runtime):
        super().__init__()
        self.runtime, self.states = runtime, []

    def on_train_batch_begin(self, batch, logs=None):
        variable = self.model.trainable_variables[0]
        self.states.append(distribution_state(self.runtime, variable))


def main(records: str) -> dict:
    runtime = choose_accelerator_runtime("auto", BATCH, steps_per_period=1, backend_reason=WHY)
    keras.utils.set_random_seed(0)
    with runtime.scope():
        backbone = ak.AlbertBackbone(
            vocabulary_size=VOCAB,
            num_layers=2,
            num_heads=2,
            embedding_dim=16,
            hidden_dim=32,
            intermediate_dim=64,
            max_sequence_length=SEQ,
        )
        model = ak.AlbertPretrainer(backbone)
        model.compile(
            optimizer=Lamb(WarmupLinearDecay(0.05, 1, STEPS)),
            steps_per_execution=runtime.steps_per_execution,
        )
    data = read_pretraining_records(
        records, BATCH, max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS, shuffle=False
    )
    probe = DistributionProbe(runtime)
    with runtime.scope():
        # One step per epoch: the history holds each step's loss, not a running mean.
        history = model.fit(data, epochs=STEPS, steps_per_epoch=1, callbacks=[probe], verbose=0)
    return {
        "line": runtime.line,
        "replicas": runtime.replicas,
        "states": probe.states,
        "history": {name: [float(v) for v in values] for name, values in history.history.items()},
    }


if __name__ == "__main__":
    print("REPORT " + json.dumps(main(sys.argv[1])))
