"""What this machine is: the device kind a strategy computes on, the GPU's compute capability,
the CPU's flags and whether TensorFlow runs oneDNN kernels.

Facts only, no choices: `strategy` (where training runs) and `precision` (which dtype policy)
both read them here, so neither imports the other for them.

The CPU flags come from `/proc/cpuinfo` (Linux; elsewhere none are found). Set
`ALBERT_KERAS_CPU_FLAGS` to a space-separated flag list to override what is read (tests, or a
container that hides `/proc`).
"""

from __future__ import annotations

import os
import platform as platform_module

BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
# CPUs on which TensorFlow turns oneDNN on by default (its 2.9+ rule).
ONEDNN_CPU_FLAGS = {"avx512_vnni", "avx512_bf16", "avx_vnni", "amx_bf16", "amx_int8", "amx_tile"}


def platform(strategy) -> str:
    """`"tpu"`, `"gpu"` or `"cpu"`: the kind of device the strategy computes on."""
    if hasattr(strategy, "device_mesh"):
        device = str(strategy.device_mesh.devices.flat[0]).lower()
    elif type(strategy).__name__.startswith("TPU"):
        return "tpu"
    else:
        try:
            device = str(strategy.extended.worker_devices[0]).lower()
        except RuntimeError:  # TensorFlow's default strategy names no devices
            return default_platform()
    return next((kind for kind in ("tpu", "gpu", "cuda") if kind in device), "cpu").replace(
        "cuda", "gpu"
    )


def default_platform() -> str:
    """`"tpu"`, `"gpu"` or `"cpu"`: the kind of the default device, without a strategy."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        return jax.devices()[0].platform.replace("cuda", "gpu")
    import tensorflow as tf

    if tf.config.list_logical_devices("TPU"):
        return "tpu"
    return "gpu" if tf.config.list_physical_devices("GPU") else "cpu"


def gpu_compute_capability() -> float:
    """The first GPU's CUDA compute capability (e.g. 8.0), 0.0 without a GPU."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        capability = getattr(jax.devices()[0], "compute_capability", "0")
        return float(capability)
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return 0.0
    major, minor = tf.config.experimental.get_device_details(gpus[0]).get(
        "compute_capability", (0, 0)
    )
    return major + minor / 10


def cpu_flags() -> set[str]:
    """The CPU's feature flags (lower case), from `ALBERT_KERAS_CPU_FLAGS` or `/proc/cpuinfo`;
    empty where neither says."""
    override = os.environ.get("ALBERT_KERAS_CPU_FLAGS")
    if override is not None:
        return set(override.lower().split())
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].lower().split())
    except OSError:
        pass
    return set()


def bf16_cpu_flags() -> list[str]:
    """The flags of `BF16_CPU_FLAGS` this CPU has (sorted): non-empty where it computes bfloat16
    matmuls natively.

    Example:
    >>> os.environ["ALBERT_KERAS_CPU_FLAGS"] = "fpu avx2 amx_bf16 avx512_bf16"
    >>> bf16_cpu_flags()
    ['amx_bf16', 'avx512_bf16']
    >>> del os.environ["ALBERT_KERAS_CPU_FLAGS"]
    """
    flags = cpu_flags()
    return sorted(flag for flag in BF16_CPU_FLAGS if flag in flags)


def onednn_enabled() -> bool:
    """Whether TensorFlow runs oneDNN kernels, by TensorFlow's own rule: `TF_ENABLE_ONEDNN_OPTS`
    decides when set; otherwise on for x86-64 Linux CPUs with neural-network features
    (AVX512_VNNI, AVX512_BF16, AVX_VNNI, AMX: Cascade Lake, Zen 4 and newer), off elsewhere."""
    setting = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    if setting is not None:
        return setting.strip().lower() not in ("0", "false", "")
    x86_linux = platform_module.system() == "Linux" and platform_module.machine() in (
        "x86_64",
        "AMD64",
    )
    return x86_linux and bool(cpu_flags() & ONEDNN_CPU_FLAGS)
