"""Which Keras dtype policy a run uses: `--mixed_precision auto` picks the fast safe one.

`"auto"` chooses bfloat16 where the hardware computes it natively, and says why:

- TPUs: `mixed_bfloat16`.
- NVIDIA GPUs of compute capability 8.0 or more (A100, L4, H100, ...): `mixed_bfloat16`.
- Older GPUs with tensor cores (7.x: V100, T4): `mixed_float16`, with loss scaling (the jobs wrap
  the optimizer in `keras.optimizers.LossScaleOptimizer`).
- CPUs with AVX512_BF16 or AMX-BF16 (Cooper Lake, Sapphire Rapids and later Xeons; Zen 4 and
  later), on the TensorFlow backend with oneDNN on (TensorFlow's default on these CPUs): oneDNN
  runs bfloat16 matmuls natively there (a training step 1.40-1.49x faster than float32 on the
  development machine, `benchmarks/train_step.py`). Without oneDNN, TensorFlow's Eigen kernels emulate bfloat16, and on
  the JAX backend XLA:CPU gains nothing from it (measured: 1,027 against 985 ms a step), so
  those get `float32`.
- Everything else: `float32`.

The CPU flags come from `/proc/cpuinfo` (Linux; elsewhere none are found and CPUs get float32).
Set `ALBERT_KERAS_CPU_FLAGS` to a space-separated flag list to override what is read (tests, or a
container that hides `/proc`).
"""

from __future__ import annotations

import os
import platform as platform_module

PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
# CPUs on which TensorFlow turns oneDNN on by default (its 2.9+ rule).
ONEDNN_CPU_FLAGS = {"avx512_vnni", "avx512_bf16", "avx_vnni", "amx_bf16", "amx_int8", "amx_tile"}


def choose_precision(precision: str, strategy) -> tuple[str, str]:
    """The dtype policy for `precision` and a one-line reason for it.

    Args:
        precision: str. One of `PRECISIONS`; `"auto"` picks per device (see the module).
        strategy: a `tf.distribute` strategy or a Keras distribution (what `get_strategy`
            returns); `None` for the default device.

    Returns:
        (policy, reason): e.g. `("mixed_bfloat16", "auto: this CPU has AVX512_BF16 ...")`.

    Example:
    >>> policy, reason = choose_precision("float32", None)
    >>> policy, reason
    ('float32', 'asked for')
    """
    if precision not in PRECISIONS:
        raise ValueError(f"mixed_precision={precision!r} is not one of {', '.join(PRECISIONS)}")
    if precision != "auto":
        return precision, "asked for"
    from albert_keras.training.strategy import gpu_compute_capability, platform

    kind = platform(strategy) if strategy is not None else _default_platform()
    if kind == "tpu":
        return "mixed_bfloat16", "auto: TPUs compute bfloat16 natively"
    if kind == "gpu":
        capability = gpu_compute_capability()
        if capability >= 8.0:
            return "mixed_bfloat16", f"auto: GPU compute capability {capability} >= 8.0"
        if capability >= 7.0:
            return "mixed_float16", (
                f"auto: GPU compute capability {capability} has float16 tensor cores, "
                "not bfloat16 (loss scaling on)"
            )
        return "float32", f"auto: GPU compute capability {capability} < 7.0 has no tensor cores"
    return _cpu_precision()


def resolve_precision(precision: str, strategy) -> str:
    """The dtype policy of `choose_precision`, without the reason."""
    return choose_precision(precision, strategy)[0]


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
    matmuls natively."""
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


# === Helpers ===


def _cpu_precision() -> tuple[str, str]:
    import keras

    found = bf16_cpu_flags()
    if not found:
        return "float32", "auto: this CPU has no AVX512_BF16 or AMX-BF16"
    names = " and ".join(flag.upper() for flag in found)
    if keras.backend.backend() != "tensorflow":
        return "float32", (
            f"auto: this CPU has {names}, but the {keras.backend.backend()} backend gains "
            "nothing from bfloat16 on CPUs"
        )
    if not onednn_enabled():
        return "float32", f"auto: this CPU has {names}, but TF_ENABLE_ONEDNN_OPTS=0"
    return "mixed_bfloat16", f"auto: this CPU has {names} and TensorFlow's oneDNN is on"


def _default_platform() -> str:
    import keras

    if keras.backend.backend() == "jax":
        import jax

        return jax.devices()[0].platform.replace("cuda", "gpu")
    import tensorflow as tf

    if tf.config.list_logical_devices("TPU"):
        return "tpu"
    return "gpu" if tf.config.list_physical_devices("GPU") else "cpu"


def in_precision(model, policy: str):
    """`model` with its layers computing in `policy`: the same model when it already does, else
    a copy built from its config with `dtype=policy` and the same weights (variables stay
    float32 under the mixed policies, so no weight changes value).

    Args:
        model: a Keras model whose `get_config` takes `dtype` (e.g. `AlbertBackbone`).
        policy: str. A Keras dtype policy name, e.g. `"mixed_bfloat16"`.

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=100, num_layers=1, num_heads=2,
    ...     hidden_dim=8, intermediate_dim=16, embedding_dim=4, max_sequence_length=8)
    >>> in_precision(backbone, "mixed_bfloat16").dtype_policy.name
    'mixed_bfloat16'
    """
    if model.dtype_policy.name == policy:
        return model
    copy = type(model).from_config({**model.get_config(), "dtype": policy})
    copy.set_weights(model.get_weights())
    return copy


def loss_scaled(optimizer, policy: str):
    """`optimizer` wrapped in `keras.optimizers.LossScaleOptimizer` under `mixed_float16`
    (float16 gradients underflow without loss scaling; bfloat16 has float32's range)."""
    import keras

    if policy == "mixed_float16":
        return keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer
