"""Which Keras dtype policy a run uses: `--mixed_precision auto` picks the fast safe one.

`"auto"` chooses bfloat16 where the hardware computes it natively, and says why:

- TPUs: `mixed_bfloat16`.
- NVIDIA GPUs of compute capability 8.0 or more (A100, L4, H100, ...): `mixed_bfloat16`.
- Older GPUs with tensor cores (7.x: V100, T4): `mixed_float16`, with loss scaling (the jobs wrap
  the optimizer in `keras.optimizers.LossScaleOptimizer`).
- CPUs with AVX512_BF16 or AMX-BF16 (Cooper Lake, Sapphire Rapids and later Xeons; Zen 4 and
  later), on the TensorFlow backend with oneDNN on (TensorFlow's default on these CPUs): oneDNN
  runs bfloat16 matmuls natively there, so a training step is faster than in float32
  (`benchmarks/train_step.py` prints both). Without oneDNN, TensorFlow's Eigen kernels emulate
  bfloat16, and on the JAX backend XLA:CPU gains nothing from it, so those get `float32`.
- Everything else: `float32`.

The device facts (platform, compute capability, CPU flags, oneDNN) come from `device_facts`; the
CPU flags from `/proc/cpuinfo` (elsewhere none are found and CPUs get float32), or from
`ALBERT_KERAS_CPU_FLAGS` where set.
"""

from __future__ import annotations

# The machine's facts have their own module (strategy reads them too); re-exported here, where
# callers found them first.
from albert_keras.training.device_facts import (  # noqa: F401
    BF16_CPU_FLAGS,
    ONEDNN_CPU_FLAGS,
    bf16_cpu_flags,
    cpu_flags,
    default_platform,
    gpu_compute_capability,
    onednn_enabled,
    platform,
)
from albert_keras_settings.choices import PRECISIONS


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
    kind = platform(strategy) if strategy is not None else default_platform()
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
