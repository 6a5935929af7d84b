"""A Keras callback that scores the model on a GLUE dev split with GLUE's own metrics."""

from __future__ import annotations

import math

import keras
import numpy as np
import tensorflow as tf

from albert_keras.glue.glue_metrics import glue_metrics
from albert_keras.glue.glue_task import GlueTask
from albert_keras.glue.glue_tasks import get_glue_task


class GlueEvaluation(keras.callbacks.Callback):
    """At each epoch's end, predicts a dev split and adds GLUE's metrics to the logs.

    The metrics go in as `val_<name>` (`val_accuracy`, `val_matthews_corrcoef`, ...), so Keras's
    own `ModelCheckpoint(save_best_only=True)` and `EarlyStopping` placed *after* this callback
    in the list can monitor them. `fit(steps_per_epoch=N)` makes an "epoch" N steps: the
    official code evaluates every saved checkpoint the same way. A NaN score (a correlation of
    constant predictions) is logged as -inf so that it never counts as the best.

    Args:
        task: str or GlueTask.
        dataset: tf.data.Dataset of inputs only (no labels), in the order of `labels`; rows
            after the last label (padding, as `AcceleratorRuntime.even_batches` adds) are ignored.
        labels: array of the split's class ids (or STS-B scores).

    Example:
    >>> from albert_keras.glue import GlueEncoder, glue_dataset, read_glue_tsv
    >>> from albert_keras.models import AlbertBackbone, AlbertClassifier
    >>> encoder = GlueEncoder("30k-clean.model", sequence_length=16)
    >>> dev = read_glue_tsv("glue_data", "RTE", "dev")
    >>> dev_inputs = glue_dataset(dev, encoder, 64, with_labels=False)
    >>> evaluation = GlueEvaluation("RTE", dev_inputs, dev.labels)
    >>> model = AlbertClassifier(AlbertBackbone(
    ...     vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
    ...     intermediate_dim=32, max_sequence_length=16))
    >>> model.compile()
    >>> train = glue_dataset(read_glue_tsv("glue_data", "RTE", "train"), encoder, 32,
    ...                      training=True, seed=0)
    >>> _ = model.fit(train, steps_per_epoch=2, epochs=1, verbose=0, callbacks=[evaluation])
    >>> len(evaluation.history), sorted(evaluation.history[-1]), evaluation.history[-1]["step"]
    (1, ['accuracy', 'step'], 2)
    """

    def __init__(self, task: str | GlueTask, dataset: tf.data.Dataset, labels: np.ndarray):
        super().__init__()
        self.task = get_glue_task(task)
        self.dataset = dataset
        self.labels = np.asarray(labels)
        self.history: list[dict] = []

    def on_epoch_end(self, epoch, logs=None):
        outputs = self.model.predict(self.dataset, verbose=0)
        # Rows past the labels pad the last batch to split over the replicas (even_batches).
        outputs = keras.tree.map_structure(lambda rows: rows[: len(self.labels)], outputs)
        scores = glue_metrics(self.task, self.labels, self.task.predictions(outputs))
        step = int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))
        self.history.append({"step": step, **scores})
        if logs is not None:
            for name, value in scores.items():
                logs[f"val_{name}"] = -math.inf if math.isnan(value) else value
