"""`autotune_off`: a tf.data pipeline whose iterators end at once (no autotuning thread).

While autotuning is on (tf.data's default), an iterator starts a model thread that re-tunes the
pipeline at growing intervals (10 ms, doubling up to a minute), and destroying the iterator
waits for that thread's current sleep to run out: measured on TensorFlow 2.21 by
`benchmarks/iterator_teardown.py` (half of the iterators dropped after 0.05-1.5 s of reading
waited over 50 ms, up to 1.2 s; none with autotuning off). Every `fit`, `evaluate` and
`predict` drops its iterator, so a long-lived one (a training run's) could hold the process up
to a minute at the end of training or at the next garbage collection: the 10-45 s pauses with
no CPU in use that `make test` showed (issue 46), caught by native stack dumps in
`RootDataset::Iterator::~Iterator` waiting on `Model::OptimizeLoop`.

With autotuning off there is no such thread. Parallel stages given `tf.data.AUTOTUNE` run at
tf.data's fixed default instead, the smaller of 16 and the schedulable CPUs: our pipelines'
parallel work (tokenizing, parsing records, remasking) is cheap next to a train step, and the
pretraining reader's rate with it is in `benchmarks/read_pretraining_records.py`'s output.

A contract because every layer that builds a pipeline follows it (the readers, the tasks'
datasets, the models' text inputs), and written by hand because no option of tf.data or Keras
shortens the model thread's sleep. TensorFlow is imported on use: the contracts load none.
"""

from __future__ import annotations


def autotune_off(dataset):
    """`dataset` with tf.data's autotuning switched off (its other options kept).

    Args:
        dataset: tf.data.Dataset.

    Returns:
        tf.data.Dataset. The same elements; its iterators start no autotuning thread.

    Example:
    >>> import tensorflow as tf
    >>> dataset = autotune_off(tf.data.Dataset.range(3).prefetch(tf.data.AUTOTUNE))
    >>> dataset.options().autotune.enabled, [int(x) for x in dataset]
    (False, [0, 1, 2])
    """
    import tensorflow as tf

    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)
