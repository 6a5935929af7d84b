"""When the layers' TensorFlow-only fast paths apply."""

import keras


def use_hand_written_gradients() -> bool:
    """True on TensorFlow: there the GELU (`fused_gelu`) and LayerNorm
    (`FastLayerNormalization`) are computed with hand-written gradients, which save
    elementwise passes over the activations (benchmarks/README.md).

    JAX (XLA) and torch fuse these ops themselves. TensorFlow with oneDNN (on by default on
    Intel CPUs with AVX512-VNNI or AMX, or with `TF_ENABLE_ONEDNN_OPTS=1`) fuses MatMul +
    BiasAdd + GELU when it sees the plain formula, but measured on a 2-core CPU the fast paths
    still win there: fused GELU 6.6% and the LayerNorm a further 3.4% of a train step.
    """
    return keras.backend.backend() == "tensorflow"
