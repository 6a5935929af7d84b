import keras
import numpy as np
import tensorflow as tf

from albert_keras.layers.activations import gelu_approximate
from albert_keras.layers.fast_paths import fused_gelu


def _numpy_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def test_values_match_the_official_formula():
    x = np.linspace(-12.0, 12.0, 2001)
    # float64 in, float64 out: the same formula to rounding.
    np.testing.assert_allclose(gelu_approximate(tf.constant(x)), _numpy_gelu(x), atol=1e-8)


def test_hand_written_gradient_matches_automatic_differentiation():
    x = tf.constant(np.linspace(-12.0, 12.0, 2001))
    upstream = tf.constant(np.random.default_rng(0).normal(size=2001))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ours = tf.reduce_sum(fused_gelu(x) * upstream)
        reference = tf.reduce_sum(tf.nn.gelu(x, approximate=True) * upstream)
    # 1e-8, not float64's eps: TF's gelu holds its constants as float32.
    np.testing.assert_allclose(tape.gradient(ours, x), tape.gradient(reference, x), atol=1e-8)


def test_second_call_in_a_graph_and_float32_gradient():
    x = tf.Variable(np.linspace(-5.0, 5.0, 11, dtype="float32"))

    @tf.function
    def gradient():
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(fused_gelu(x))
        return tape.gradient(y, x)

    expected = (
        _numpy_gelu(x.numpy().astype("float64") + 1e-6)
        - _numpy_gelu(x.numpy().astype("float64") - 1e-6)
    ) / 2e-6
    np.testing.assert_allclose(gradient(), expected, atol=1e-5)


def test_serializes_as_a_dense_activation():
    dense = keras.layers.Dense(3, activation=gelu_approximate)
    config = keras.saving.serialize_keras_object(dense)
    assert keras.saving.deserialize_keras_object(config).activation is gelu_approximate


def test_bfloat16_is_computed_in_float32_and_rounded_once():
    x = tf.constant(np.linspace(-6.0, 6.0, 1001), "bfloat16")
    upstream = tf.constant(np.random.default_rng(1).normal(size=1001), "bfloat16")
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fused_gelu(x)
    gradient = tape.gradient(y, x, output_gradients=upstream)
    assert y.dtype == gradient.dtype == tf.bfloat16
    exact = x.numpy().astype("float64")
    slope = tf.constant(exact)
    with tf.GradientTape() as tape:
        tape.watch(slope)
        reference = tf.nn.gelu(slope, approximate=True)
    reference_gradient = tape.gradient(
        reference, slope, output_gradients=tf.cast(upstream, "float64")
    )
    # One rounding to bfloat16 (8 bits of mantissa) at the end, within 2**-8 relative; near
    # x = -6, where the GELU is ~1e-10, float32's 1 + tanh cancels to 0 (the 1e-6).
    np.testing.assert_allclose(
        y.numpy().astype("float64"), _numpy_gelu(exact), rtol=2**-8, atol=1e-6
    )
    np.testing.assert_allclose(
        gradient.numpy().astype("float64"), reference_gradient.numpy(), rtol=2**-8, atol=1e-5
    )
