import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_keras.layers.gather_rows import gather_rows


def _case(shape, rows, seed=0):
    rng = np.random.default_rng(seed)
    sequence = rng.normal(size=shape).astype("float32")
    positions = rng.integers(0, shape[1], size=(shape[0], rows))
    positions[:, -1] = positions[:, 0]  # a repeated row in every sequence
    return sequence, positions


@pytest.mark.parametrize("shape", [(3, 7, 5), (2, 6, 3, 4), (1, 1, 2)])
def test_values_equal_take_along_axis(shape):
    sequence, positions = _case(shape, rows=4)
    expected = np.take_along_axis(
        sequence, positions.reshape(positions.shape + (1,) * (len(shape) - 2)), axis=1
    )
    got = keras.ops.convert_to_numpy(gather_rows(sequence, positions.astype("int64")))
    assert got.shape == (shape[0], 4, *shape[2:])
    np.testing.assert_array_equal(got, expected)


def test_gradient_equals_take_along_axis_gradient():
    # The gradient adds the upstream rows back at their positions (twice for a repeated one).
    sequence, positions = _case((4, 9, 6), rows=5, seed=1)
    upstream = np.random.default_rng(2).normal(size=(4, 5, 6)).astype("float32")

    def gradient(gather):
        x = tf.constant(sequence)
        with tf.GradientTape() as tape:
            tape.watch(x)
            rows = gather(x, tf.constant(positions, tf.int32))
        return tf.convert_to_tensor(tape.gradient(rows, x, output_gradients=upstream)).numpy()

    got = gradient(gather_rows)
    reference = gradient(
        lambda x, p: keras.ops.take_along_axis(x, keras.ops.expand_dims(p, -1), axis=1)
    )
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-6)
    expected = np.zeros_like(sequence)
    for b in range(4):
        np.add.at(expected[b], positions[b], upstream[b])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_keeps_dtype_and_works_in_a_traced_function_of_unknown_sizes():
    sequence, positions = _case((2, 5, 3), rows=2)

    @tf.function(
        input_signature=[
            tf.TensorSpec((None, None, 3), tf.bfloat16),
            tf.TensorSpec((None, None), tf.int32),
        ]
    )
    def traced(x, p):
        return gather_rows(x, p)

    got = traced(tf.constant(sequence, tf.bfloat16), tf.constant(positions, tf.int32))
    assert got.dtype == tf.bfloat16
    expected = np.take_along_axis(sequence, positions[..., None], axis=1)
    np.testing.assert_array_equal(
        got.numpy().astype("float32"), expected.astype(tf.bfloat16.as_numpy_dtype).astype("float32")
    )
