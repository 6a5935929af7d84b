"""When the layers' TensorFlow-only fast paths pay off."""

import functools

import keras


@functools.lru_cache(maxsize=1)
def use_hand_written_gradients() -> bool:
    """True on TensorFlow without oneDNN: there the hand-written GELU and LayerNorm gradients
    save elementwise passes (benchmarks/README.md).

    JAX (XLA) and torch fuse these ops themselves. So does TensorFlow with oneDNN (on by default
    on Intel CPUs with AVX512-VNNI or AMX, or with `TF_ENABLE_ONEDNN_OPTS=1`): its graph
    rewrites fuse MatMul + BiasAdd + GELU and LayerNorm when they see the plain formulas, which
    a custom gradient would hide (measured: ~6% slower with them than without).
    """
    if keras.backend.backend() != "tensorflow":
        return False
    try:  # TF's own query of its runtime oneDNN switch (not a public API: default to Eigen)
        from tensorflow.python.util import _pywrap_util_port

        return not _pywrap_util_port.IsMklEnabled()
    except (ImportError, AttributeError):
        return True
