"""Which Keras backend this machine should run, decided before Keras is imported.

Keras reads `KERAS_BACKEND` once, on its first import, and `import albert_keras` imports Keras:
so the choice lives here, in the standard-library-only package, and a notebook calls
`choose_keras_backend` before anything imports Keras.

`"auto"` follows what the machine has:

- A TPU and `tensorflow-tpu` installed: `tensorflow` (TensorFlow's `TPUStrategy`).
- A TPU without `tensorflow-tpu`: `jax`. Colab's TPU runtimes come with JAX and libtpu and, since
  March 2025, without TensorFlow (googlecolab/colabtools#5164); the plain `tensorflow` wheel this
  package installs cannot drive a TPU, so Keras runs on JAX (`keras.distribution.DataParallel`)
  and TensorFlow only reads the `tf.data` pipelines, on the host CPU.
- No TPU: `tensorflow`, the backend every job of the package is tested on (`jax` where TensorFlow
  is not installed).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys

BACKENDS = ("auto", "tensorflow", "jax")
# The TensorFlow the package pins (setup.cfg), and where Google publishes its TPU build.
TENSORFLOW_VERSION = "2.21.0"
LIBTPU_TF_INDEX = "https://storage.googleapis.com/libtpu-tf-releases/index.html"
TENSORFLOW_TPU_INSTALL = f"pip install tensorflow-tpu=={TENSORFLOW_VERSION} -f {LIBTPU_TF_INDEX}"


def choose_keras_backend(requested: str = "auto", facts: dict | None = None) -> tuple[str, str]:
    """Picks the Keras backend, sets `KERAS_BACKEND` to it, and says why.

    Args:
        requested: str. `"auto"` (see the module), `"tensorflow"` or `"jax"`.
        facts: dict. What the machine has (`machine_facts()`'s keys); `None` to look.

    Returns:
        (backend, reason): `decide_keras_backend`'s. Where Keras is already imported its backend
        is kept, and the reason says so.

    Example:
    >>> backend, reason = choose_keras_backend("auto")
    >>> backend in ("tensorflow", "jax") and bool(reason)
    True
    """
    if requested not in BACKENDS:
        raise ValueError(f"KERAS_BACKEND={requested!r} is not one of {', '.join(BACKENDS)}")
    facts = machine_facts() if facts is None else facts
    if "keras" in sys.modules:  # the backend is fixed for this process
        backend = sys.modules["keras"].backend.backend()
        why = "Keras was imported before the choice (restart the session to change it)"
        return backend, why
    backend, why = decide_keras_backend(requested, facts)
    os.environ["KERAS_BACKEND"] = backend
    return backend, why


def machine_facts() -> dict:
    """What decides the backend: `tpu` (where a TPU was seen, `""` for none), `tensorflow_tpu`
    (its installed version, `""` for none), and whether `tensorflow` and `jax` import."""
    return {
        "tpu": tpu_evidence(),
        "tensorflow_tpu": _installed_version("tensorflow-tpu"),
        "tensorflow": importlib.util.find_spec("tensorflow") is not None,
        "jax": importlib.util.find_spec("jax") is not None,
    }


def tpu_evidence() -> str:
    """Where this machine shows a TPU (an environment variable or a device file), `""` for none.

    TPU VMs (Colab's TPU runtimes among them) expose the chips as `/dev/accel*` (v2-v4) or
    `/dev/vfio/<n>` (v5e and later); a TPU node is named by `TPU_NAME` or `COLAB_TPU_ADDR`.
    """
    for name in ("TPU_NAME", "COLAB_TPU_ADDR"):
        if os.environ.get(name):
            return name
    accel = sorted(name for name in _listdir("/dev") if name.startswith("accel"))
    if accel:
        return f"/dev/{accel[0]}"
    vfio = sorted(name for name in _listdir("/dev/vfio") if name.isdigit())
    return f"/dev/vfio/{vfio[0]}" if vfio else ""


def decide_keras_backend(requested: str, facts: dict) -> tuple[str, str]:
    """The backend for `requested` on a machine with `facts`, and a one-line reason.

    Args:
        requested: str. `"auto"`, `"tensorflow"` or `"jax"`.
        facts: dict. `machine_facts()`'s keys.

    Example:
    >>> colab_tpu = {"tpu": "/dev/accel0", "tensorflow_tpu": "", "tensorflow": True, "jax": True}
    >>> decide_keras_backend("auto", colab_tpu)[0]
    'jax'
    >>> decide_keras_backend("auto", {**colab_tpu, "tensorflow_tpu": "2.21.0"})
    ('tensorflow', 'a TPU (/dev/accel0) and tensorflow-tpu 2.21.0: TPUStrategy')
    """
    tpu, tf_tpu = facts["tpu"], facts["tensorflow_tpu"]
    if requested != "auto":
        why = "asked for"
        if requested == "tensorflow" and tpu and not tf_tpu:
            why += f" (a TPU ({tpu}) but no tensorflow-tpu: TensorFlow will not see it)"
        return requested, why
    if tpu and tf_tpu:
        return "tensorflow", f"a TPU ({tpu}) and tensorflow-tpu {tf_tpu}: TPUStrategy"
    if tpu:
        return "jax", (
            f"a TPU ({tpu}) without tensorflow-tpu: Keras on JAX drives it, "
            "TensorFlow only reads the data on the CPU"
        )
    if not facts["tensorflow"] and facts["jax"]:
        return "jax", "no TPU here and no TensorFlow: JAX"
    return "tensorflow", "no TPU here: TensorFlow, the backend every job is tested on"


# === Helpers ===


def _installed_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []
