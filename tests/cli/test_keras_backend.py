"""albert_keras_cli.keras_backend: the backend a machine should run, chosen before Keras loads."""

import os
import pathlib
import subprocess
import sys

import keras
import pytest

from albert_keras_cli import keras_backend
from albert_keras_cli.keras_backend import choose_keras_backend, decide_keras_backend

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
COLAB_TPU = {"tpu": "/dev/accel0", "tensorflow_tpu": "", "tensorflow": True, "jax": True}
NO_TPU = {**COLAB_TPU, "tpu": ""}


@pytest.mark.parametrize(
    ("requested", "facts", "backend", "reason"),
    [
        (
            "auto",
            COLAB_TPU,
            "jax",
            (
                "a TPU (/dev/accel0) without tensorflow-tpu: Keras on JAX drives it, "
                "TensorFlow only reads the data on the CPU"
            ),
        ),
        (
            "auto",
            {**COLAB_TPU, "tensorflow_tpu": "2.21.0"},
            "tensorflow",
            "a TPU (/dev/accel0) and tensorflow-tpu 2.21.0: TPUStrategy",
        ),
        (
            "auto",
            NO_TPU,
            "tensorflow",
            "no TPU here: TensorFlow, the backend every job is tested on",
        ),
        ("auto", {**NO_TPU, "tensorflow": False}, "jax", "no TPU here and no TensorFlow: JAX"),
        ("jax", NO_TPU, "jax", "asked for"),
        (
            "tensorflow",
            COLAB_TPU,
            "tensorflow",
            "asked for (a TPU (/dev/accel0) but no tensorflow-tpu: TensorFlow will not see it)",
        ),
    ],
)
def test_decide(requested, facts, backend, reason):
    assert decide_keras_backend(requested, facts) == (backend, reason)


def test_unknown_backend_is_one_line():
    with pytest.raises(ValueError, match=r"^KERAS_BACKEND='torch' is not one of auto, "):
        choose_keras_backend("torch", NO_TPU)


def test_tpu_evidence_reads_the_tpu_variables(monkeypatch):
    monkeypatch.setenv("TPU_NAME", "my-tpu")
    assert keras_backend.tpu_evidence() == "TPU_NAME"
    assert keras_backend.machine_facts()["tpu"] == "TPU_NAME"


def test_keras_already_imported_keeps_its_backend(monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    other = "jax" if keras.backend.backend() == "tensorflow" else "tensorflow"
    backend, reason = choose_keras_backend(other, NO_TPU)
    assert (backend, reason) == (
        keras.backend.backend(),
        "Keras was imported before the choice (restart the session to change it)",
    )
    assert "KERAS_BACKEND" not in os.environ


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_the_choice_reaches_keras_in_a_fresh_process():
    script = (
        "from albert_keras_cli.keras_backend import choose_keras_backend\n"
        "print(choose_keras_backend('jax')[0])\n"
        "import keras\n"
        "print(keras.backend.backend())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.stdout.split() == ["jax", "jax"], result.stderr[-2000:]


def test_tensorflow_tpu_matches_the_pinned_tensorflow():
    import tensorflow as tf

    pinned = (REPO_ROOT / "setup.cfg").read_text()
    major_minor = ".".join(keras_backend.TENSORFLOW_VERSION.split(".")[:2])
    assert f"tensorflow>={major_minor},<" in pinned
    assert tf.__version__.startswith(major_minor + ".")
    assert keras_backend.TENSORFLOW_TPU_INSTALL == (
        "pip install tensorflow-tpu==2.21.0 -f "
        "https://storage.googleapis.com/libtpu-tf-releases/index.html"
    )
