"""GlueEvaluation on a dev set whose last batch was padded to split over the replicas (what
`AcceleratorRuntime.even_batches` does for JAX's DataParallel): only the real rows are scored."""

import keras
import numpy as np
import tensorflow as tf

from albert_keras.glue import GlueEvaluation
from albert_keras.training.accelerator_runtime import AcceleratorRuntime


def test_padded_rows_are_not_scored():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(21, 4)).astype("float32")
    labels = rng.integers(0, 2, 21)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    eight_replicas = AcceleratorRuntime("jax", None, "tpu", 8, 1, "")
    batches = tf.data.Dataset.from_tensor_slices(features).batch(16)
    padded = eight_replicas.even_batches(batches)
    assert sum(len(batch) for batch in padded) == 24  # 16 + 5 rows padded to 8
    scores = []
    for dataset in (batches, padded):
        evaluation = GlueEvaluation("RTE", dataset, labels)
        evaluation.set_model(model)
        logs = {}
        evaluation.on_epoch_end(0, logs)
        scores.append(logs)
    predicted = np.argmax(model.predict(features, verbose=0), axis=-1)
    assert scores[0] == scores[1] == {"val_accuracy": float(np.mean(predicted == labels))}
