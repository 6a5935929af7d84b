#!/usr/bin/env bash
# Runs colab/pretrain_albert.ipynb's JAX path headless on this machine's accelerator (a GPU or a
# TPU VM): Keras on JAX, keras.distribution.DataParallel over every device, a tiny ALBERT
# pretrained 30 steps with model.fit on records made from this repository's own docs.
#
# The notebook's code cells are run as one plain Python script (no Jupyter needed), with tiny
# settings put right after its settings cell, as CI does. What it prints (the runtime line, what
# fit ran over, the losses) goes to stdout and to $OUT/device_check.log.
#
# Needs, besides JAX for the accelerator: TensorFlow 2.21 (the CPU wheel is enough: it only runs
# tf.data and tf.io.gfile on the host), tensorflow-text, keras, keras-hub, sentencepiece,
# matplotlib and this package (`pip install -e .`, or PYTHONPATH=the checkout). On a machine
# with no network these must already be installed; the script stops in one line naming what is
# missing. About 2 minutes on a GPU, most of it XLA compiling.
#
# Usage: colab/device_check.sh   (OUT=folder for the log and the run; PYTHON=interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
export KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=2 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

"$PYTHON" - "$OUT" <<'PY' 2>&1 | tee "$OUT/device_check.log"
import importlib.util
import json
import pathlib
import sys

needed = ["jax", "tensorflow", "tensorflow_text", "keras", "keras_hub", "sentencepiece"]
missing = [name for name in needed + ["matplotlib"] if importlib.util.find_spec(name) is None]
if missing:
    sys.exit(f"device_check: missing {', '.join(missing)} (pip install -e . ; TensorFlow may be the CPU wheel)")
import jax

print("device_check: JAX", jax.__version__, "devices:", jax.devices())
out = pathlib.Path(sys.argv[1]).resolve()
notebook = json.loads(pathlib.Path("colab/pretrain_albert.ipynb").read_text())
cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
devices = len(jax.devices())
settings = {
    "KERAS_BACKEND": "jax",
    "CORPUS": "docs/*.md,docs/*/*.md",
    "HELDOUT": "README.md",
    "WORK_DIR": str(out / "run"),
    "VOCAB_SIZE": 2000,
    "MAX_SEQ_LENGTH": 64,
    "MAX_PREDICTIONS_PER_SEQ": 10,
    "DUPE_FACTOR": 1,
    "NUM_SHARDS": 2,
    "NUM_WORKERS": 1,
    "CONFIG": {"num_layers": 2, "num_heads": 2, "embedding_dim": 32, "hidden_dim": 64,
               "intermediate_dim": 128, "max_sequence_length": 64},
    "BATCH_SIZE": 16 * devices,  # 16 per device: splits evenly
    "MAX_STEPS": 30,
    "LEARNING_RATE": 5e-3,
    "CHECKPOINT_EVERY": 10,
    "EVAL_STEPS": 4,
    "SEED": 7,
}
injected = "\n".join(f"{name} = {value!r}" for name, value in settings.items())
script = "\n\n".join([cells[0], injected, *cells[1:]])
(out / "pretrain_albert_jax.py").write_text(script)
import matplotlib

matplotlib.use("Agg")  # no display: plt.show() is a no-op
namespace = {"__name__": "__main__"}
exec(compile(script, "pretrain_albert.ipynb (JAX path)", "exec"), namespace)
summary = json.loads((out / "run" / "pretrain" / "summary.json").read_text())
print("device_check: summary device", json.dumps(summary["device"]))
print("device_check: train", json.dumps(summary["train"]))
print("device_check: held-out", json.dumps(summary["eval"]))
print("device_check: done")
PY
