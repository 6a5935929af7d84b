"""`finetune_glue` under a MirroredStrategy over two logical CPUs, against one CPU; prints a
JSON report. Run as `python glue_distributed_check.py SPM_MODEL FOLDER` (a subprocess: the
device layout must be fixed before TensorFlow starts).

`--strategy mirrored` takes every GPU; this machine has none, so `get_strategy` is replaced by
one that gives what two GPUs would: a MirroredStrategy over two devices.
"""

import json
import pathlib
import sys

import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras
import numpy as np

import albert_keras as ak
from albert_keras.jobs import finetune_glue_job as job
from albert_keras.training import strategy as strategies

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
from finetuned_classifier import write_tiny_sst2

SPM, FOLDER = sys.argv[1], pathlib.Path(sys.argv[2])
one_device = strategies.get_strategy


def two_devices(name):
    if name == "mirrored":
        return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    return one_device(name)


strategies.get_strategy = two_devices

backbone = ak.AlbertBackbone(vocabulary_size=64, num_layers=1, num_heads=2, embedding_dim=8,
                             hidden_dim=16, intermediate_dim=32, max_sequence_length=32)  # fmt: skip
backbone.save(FOLDER / "backbone.keras")
glue_dir = write_tiny_sst2(FOLDER / "glue")  # 16 train rows, 8 dev rows
common = {"task": "SST-2", "glue_dir": glue_dir, "spm_model": SPM, "max_steps": 4,
          "batch_size": 4, "max_seq_length": 16, "eval_every": 2, "patience": 0,
          "mixed_precision": "float32", "jit_compile": False}  # fmt: skip


def run(name, strategy, **settings):
    summary = job.finetune_glue(**common, output_dir=FOLDER / name, strategy=strategy, **settings)
    reloaded = keras.saving.load_model(FOLDER / name / "model.keras")
    return {
        "replicas": summary["distribution"]["replicas"],
        "steps_trained": summary["steps_trained"],
        "history": summary["history"],
        "predictions": (FOLDER / name / "dev_predictions" / "SST-2.tsv").read_text(),
        "finite": bool(all(np.isfinite(w).all() for w in reloaded.get_weights())),
        "weights": [w.tolist() for w in reloaded.get_weights()[-2:]],  # the head
    }


report = {
    # A learning rate of 0: the same function on one device and on two (the in-memory
    # backbone copied into each strategy, the head from the same seed).
    "frozen_one": run("frozen_one", "cpu", init_from=backbone, learning_rate=0.0),
    "frozen_two": run("frozen_two", "mirrored", init_from=backbone, learning_rate=0.0),
    # Training from a path across two replicas.
    "trained_two": run(
        "trained_two", "mirrored", init_from=FOLDER / "backbone.keras", learning_rate=1e-3
    ),
}
try:
    job.finetune_glue(**{**common, "batch_size": 3}, init_from=backbone,
                      output_dir=FOLDER / "odd", strategy="mirrored")  # fmt: skip
except ValueError as error:
    report["odd_batch"] = str(error)
print("REPORT " + json.dumps(report))
