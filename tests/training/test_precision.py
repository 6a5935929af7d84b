import keras
import numpy as np
import pytest

from albert_keras.models import AlbertBackbone
from albert_keras.training import get_strategy
from albert_keras.training.precision import (
    bf16_cpu_flags,
    choose_precision,
    cpu_flags,
    in_precision,
    loss_scaled,
    onednn_enabled,
)


@pytest.mark.parametrize(
    ("flags", "onednn", "policy", "says"),
    [
        ("fpu sse avx512f avx512_bf16", None, "mixed_bfloat16", "AVX512_BF16 and TensorFlow"),
        ("fpu amx_bf16 amx_tile", "1", "mixed_bfloat16", "AMX_BF16"),
        ("fpu sse avx2 avx512f", None, "float32", "no AVX512_BF16 or AMX-BF16"),
        ("avx512_bf16", "0", "float32", "TF_ENABLE_ONEDNN_OPTS=0"),
    ],
)
def test_auto_on_cpu_follows_the_flags(monkeypatch, flags, onednn, policy, says):
    monkeypatch.setenv("ALBERT_KERAS_CPU_FLAGS", flags)
    if onednn is None:
        monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    else:
        monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", onednn)
    chosen, why = choose_precision("auto", get_strategy("cpu"))
    assert chosen == policy
    assert why.startswith("auto: ") and says in why


def test_an_explicit_choice_is_kept(monkeypatch):
    monkeypatch.setenv("ALBERT_KERAS_CPU_FLAGS", "avx512_bf16")
    for policy in ("float32", "mixed_bfloat16", "mixed_float16"):
        assert choose_precision(policy, None) == (policy, "asked for")
    with pytest.raises(ValueError, match="mixed_precision='bf16' is not one of auto"):
        choose_precision("bf16", None)


def test_bf16_cpu_flags_are_the_native_bfloat16_ones(monkeypatch):
    monkeypatch.setenv("ALBERT_KERAS_CPU_FLAGS", "fpu AMX_BF16 avx512f avx512_bf16 amx_tile")
    assert bf16_cpu_flags() == ["amx_bf16", "avx512_bf16"]
    monkeypatch.setenv("ALBERT_KERAS_CPU_FLAGS", "fpu avx2 avx512f avx512_vnni")
    assert bf16_cpu_flags() == []


def test_cpu_flags_read_this_machine(monkeypatch):
    monkeypatch.delenv("ALBERT_KERAS_CPU_FLAGS", raising=False)
    flags = cpu_flags()
    with open("/proc/cpuinfo") as f:
        line = next(line for line in f if line.startswith("flags"))
    assert flags == set(line.split(":", 1)[1].split())
    # The default strategy agrees with the flags read.
    expected = (
        "mixed_bfloat16" if flags & {"avx512_bf16", "amx_bf16"} and onednn_enabled() else "float32"
    )
    assert choose_precision("auto", None)[0] == expected


def test_in_precision_copies_weights_into_the_policy():
    backbone = AlbertBackbone(
        vocabulary_size=50, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16,
        embedding_dim=4, max_sequence_length=8,
    )  # fmt: skip
    assert in_precision(backbone, "float32") is backbone
    copy = in_precision(backbone, "mixed_bfloat16")
    assert copy.dtype_policy.name == "mixed_bfloat16"
    for before, after in zip(backbone.get_weights(), copy.get_weights(), strict=True):
        np.testing.assert_array_equal(before, after)  # variables stay float32
    inputs = {
        "token_ids": np.array([[2, 7, 9, 3, 0, 0, 0, 0]], "int32"),
        "segment_ids": np.zeros((1, 8), "int32"),
        "padding_mask": np.array([[1, 1, 1, 1, 0, 0, 0, 0]], "int32"),
    }
    reference = keras.ops.convert_to_numpy(backbone(inputs)["pooled_output"])
    mixed = keras.ops.convert_to_numpy(copy(inputs)["pooled_output"]).astype("float32")
    np.testing.assert_allclose(mixed, reference, atol=0.05)  # bfloat16 has ~3 digits
    assert not np.array_equal(mixed, reference)


def test_loss_scaling_only_for_float16():
    optimizer = keras.optimizers.SGD()
    assert loss_scaled(optimizer, "mixed_bfloat16") is optimizer
    assert isinstance(loss_scaled(optimizer, "mixed_float16"), keras.optimizers.LossScaleOptimizer)
