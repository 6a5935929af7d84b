"""Pretrains a tiny ALBERT with `model.fit` on the JAX backend, as one process of a
`jax.distributed` job or alone; prints a JSON report line (`REPORT {...}`): the per-step losses,
the process's devices and the global mesh.

Run by tests/distributed/test_jax_processes.py as `KERAS_BACKEND=jax
XLA_FLAGS=--xla_force_host_platform_device_count=2 python jax_process_run.py RECORDS
NUM_PROCESSES PROCESS_ID COORDINATOR_PORT` (each process 2 CPU devices), and with
`NUM_PROCESSES=1` and 4 devices for the one-process run of the same global batch. This is the
path of a multi-host TPU pod slice (docs/scaling.md): `keras.distribution.initialize` starts
`jax.distributed`, `DataParallel` spans every process's devices, and `fit` gives each process
its own rows of every global batch (`DataParallel.distribute_dataset`).
"""

import json
import sys

from albert_keras_cli.keras_backend import choose_keras_backend

choose_keras_backend("jax")  # before Keras is imported

import jax
import keras

import albert_keras as ak
from albert_keras.optimizers import Lamb, WarmupLinearDecay
from pipelines import read_pretraining_records

STEPS, BATCH, SEQ, PREDICTIONS, VOCAB = 6, 16, 32, 5, 100


class Losses(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["loss"]))


def main(records: str, num_processes: int, process_id: int, port: int) -> dict:
    if num_processes > 1:
        keras.distribution.initialize(
            job_addresses=f"localhost:{port}", num_processes=num_processes, process_id=process_id
        )
    distribution = keras.distribution.DataParallel(devices=keras.distribution.list_devices())
    keras.distribution.set_distribution(distribution)
    keras.utils.set_random_seed(0)
    backbone = ak.AlbertBackbone(
        vocabulary_size=VOCAB, num_layers=2, num_heads=2, embedding_dim=16, hidden_dim=32,
        intermediate_dim=64, max_sequence_length=SEQ,
    )  # fmt: skip
    model = ak.AlbertPretrainer(backbone)
    model.compile(optimizer=Lamb(WarmupLinearDecay(0.05, 1, STEPS)))
    # The global stream, the same in every process (a pure function of seed and step); `fit`
    # keeps this process's rows of each batch.
    data = read_pretraining_records(
        records, BATCH, max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS, seed=1,
        start_step=0,
    )  # fmt: skip
    losses = Losses()
    model.fit(data, steps_per_epoch=STEPS, epochs=1, verbose=0, callbacks=[losses])
    return {
        "process": jax.process_index(),
        "processes": jax.process_count(),
        "local_devices": jax.local_device_count(),
        "global_devices": jax.device_count(),
        "mesh": dict(zip(distribution.device_mesh.axis_names, distribution.device_mesh.shape)),
        "losses": losses.losses,
    }


if __name__ == "__main__":
    records, processes, process, port = sys.argv[1], *map(int, sys.argv[2:5])
    print("REPORT " + json.dumps(main(records, processes, process, port)), flush=True)
