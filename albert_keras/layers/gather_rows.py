"""`gather_rows`: the rows of a batch of sequences at given positions, as one flat row gather."""

from keras import ops


def gather_rows(sequence, positions):
    """`sequence[b, positions[b, p]]` for each b, p: (batch, P, ...) from (batch, time, ...).

    The same values as `ops.take_along_axis(sequence, positions[..., None], axis=1)`, written
    as one gather of whole rows from the (batch * time, ...) flattening. On TensorFlow,
    `take_along_axis` over the time axis transposes the whole sequence to put time last, gathers
    each feature separately and transposes back, and its gradient scatters feature by feature,
    where a row gather's gradient is the rows themselves (`tf.IndexedSlices`): at pretraining's
    (32, 64, 128) with 11 rows per sequence, ~2.2 ms against ~1.0 ms forward plus backward on a
    2-core CPU (`benchmarks/gather_rows.py`). Exact on every backend: only indexing.

    Args:
        sequence: tensor (batch, time, ...).
        positions: int tensor (batch, P), each in [0, time).

    Returns:
        A tensor (batch, P, ...) of `sequence`'s dtype.

    Example:
    >>> sequence = np.arange(2 * 3 * 2, dtype="float32").reshape(2, 3, 2)
    >>> rows = gather_rows(sequence, np.array([[2, 0], [1, 1]]))
    >>> keras.ops.convert_to_numpy(rows)[:, :, 0].tolist()  # first features: rows 2, 0 and 1, 1
    [[4.0, 0.0], [8.0, 8.0]]
    """
    sequence = ops.convert_to_tensor(sequence)
    positions = ops.cast(positions, "int32")
    shape = ops.shape(sequence)
    rows = ops.reshape(sequence, (-1, *sequence.shape[2:]))
    offsets = ops.arange(shape[0], dtype="int32") * ops.cast(shape[1], "int32")
    return ops.take(rows, positions + ops.expand_dims(offsets, -1), axis=0)
