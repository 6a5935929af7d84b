"""Per-row tensor steps of the dynamic masking (`pipelines.dynamic_masking`), written for XLA.

Each works on a batch of rows, (B, T), with T static: reading and writing at per-row indices
with one flat gather or scatter, and running counts along the rows. `xla_compiled` is the
decorator the masking's draw-free functions are compiled with.
"""

import tensorflow as tf

__all__ = ["gather_rows", "running_counts", "write_rows", "xla_compiled"]

# Compiled by XLA, traced as written: the masking's functions branch and loop only on Python
# values (the loop on tensors is an explicit `tf.while_loop`), so AutoGraph has nothing to
# convert, yet converting them and every helper they call (parsing and rewriting their source)
# cost ~0.7 CPU-s of the reader's time to its first dynamically masked batch
# (benchmarks/first_batch.py).
xla_compiled = tf.function(jit_compile=True, autograph=False)


def gather_rows(values: tf.Tensor, index: tf.Tensor) -> tf.Tensor:
    """`values[b, index[b, ...]]` for (B, W) values: one flat gather, cheaper than batch_dims.

    Args:
        values: tensor (B, W).
        index: int32 tensor (B, ...). Positions into each row of `values`.

    Returns:
        A tensor of `index`'s shape and `values`' dtype.

    Example:
    >>> values = tf.constant([[10, 11, 12], [20, 21, 22]])
    >>> gather_rows(values, tf.constant([[2, 0], [1, 1]])).numpy().tolist()
    [[12, 10], [21, 21]]
    """
    width = values.shape[1]
    offsets = tf.reshape(tf.range(tf.shape(values)[0]) * width, [-1] + [1] * (index.shape.rank - 1))
    return tf.gather(tf.reshape(values, [-1]), index + offsets)


def write_rows(
    values: tf.Tensor, positions: tf.Tensor, updates: tf.Tensor, use: tf.Tensor
) -> tf.Tensor:
    """`values[b, positions[b, i]] = updates[b, i]` where `use[b, i]` (used positions distinct).

    Adds the differences, so an unused slot adds 0 wherever it points (with plain updates a
    duplicate index would leave the result undefined). Meant for XLA, which scatters in place.

    Args:
        values: tensor (B, W).
        positions: int tensor (B, P). Where to write in each row.
        updates: tensor (B, P). What to write there.
        use: bool tensor (B, P). Which slots to write; the used positions of a row are distinct.

    Returns:
        A tensor (B, W): `values` with the used updates written.

    Example:
    >>> write_rows(tf.constant([[1, 2, 3]]), tf.constant([[2, 2]]), tf.constant([[9, 7]]),
    ...            tf.constant([[True, False]])).numpy().tolist()
    [[1, 2, 9]]
    """
    positions = tf.cast(positions, tf.int32)
    delta = tf.where(use, tf.cast(updates, values.dtype) - gather_rows(values, positions), 0)
    rows = tf.broadcast_to(tf.range(tf.shape(positions)[0])[:, None], tf.shape(positions))
    return tf.tensor_scatter_nd_add(values, tf.stack([rows, positions], axis=-1), delta)


def running_counts(flags: list[tf.Tensor], block: int = 16) -> list[tf.Tensor]:
    """Inclusive cumulative sums along axis 1 of (B, T) bool tensors, as int32.

    Two small matmuls with triangular ones (within blocks of `block`, then across blocks), which
    run faster than a `cumsum` on a CPU, in TF or XLA alike. Exact: float32 holds every count up
    to 2**24.

    Args:
        flags: list of bool tensors (B, T), T static, all of one shape.
        block: int. The width of the blocks counted within by the first matmul.

    Returns:
        A list of int32 tensors (B, T), one per flag tensor.

    Example:
    >>> [c.numpy().tolist() for c in running_counts([tf.constant([[True, False, True]])])]
    [[[1, 1, 2]]]
    """
    batch_size, width = tf.shape(flags[0])[0], flags[0].shape[1]
    padding = -width % block
    num_blocks = (width + padding) // block
    stacked = tf.pad(tf.cast(tf.stack(flags), tf.float32), [[0, 0], [0, 0], [0, padding]])
    within = tf.linalg.band_part(tf.ones([block, block]), 0, -1)
    counts = tf.matmul(tf.reshape(stacked, [-1, block]), within)
    counts = tf.reshape(counts, [len(flags) * batch_size, num_blocks, block])
    earlier_blocks = tf.linalg.band_part(tf.ones([num_blocks, num_blocks]), 0, -1)
    offsets = tf.matmul(counts[:, :, -1], earlier_blocks - tf.eye(num_blocks))
    counts = tf.reshape(counts + offsets[:, :, None], [len(flags), batch_size, -1])
    return tf.unstack(tf.cast(counts[:, :, :width], tf.int32))
