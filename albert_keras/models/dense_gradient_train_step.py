"""DenseGradientTrainStep: every optimizer gets summed (deduplicated) embedding gradients."""

import keras


class DenseGradientTrainStep:
    """A mixin for our models: Keras's own train step, with embedding gradients deduplicated.

    On TensorFlow the gradient of an embedding lookup is a `tf.IndexedSlices`: one row per id
    looked up, an id seen n times in the batch giving n rows. Keras's stock optimizers
    (`keras.optimizers.Adam`, AdamW, RMSprop, Adagrad, Lion, ...; Keras 3.15) apply their
    element-wise functions to those rows before they are summed, so Adam's second moment gets
    `g1² + g2²` where the gradient's square is `(g1 + g2)²`: too small, and the row moves too
    fast (3.45x for the 2-row segment table in a pretraining run). A gradient with each row once
    (its ids made unique, the rows of an id summed) is right for every element-wise update, and
    costs a `tf.unique` and a segment sum over the batch's rows, where densifying costs a
    table-sized tensor (30,000 x 128 at the release vocabulary) before the optimizer makes its
    own. So the step hands a deduplicated `tf.IndexedSlices` to whatever optimizer the model is
    compiled with. Our own `Lamb` and `AdamWeightDecay` densify anyway; JAX and torch gradients
    are dense already.

    How: Keras's TensorFlow train step has no public hook between `tape.gradient` and
    `optimizer.apply_gradients`, and copying its body would copy its private loss tracking. So
    at trace time the step gives the model's optimizer an `apply_gradients` that deduplicates
    and then calls the class's own: Python only, nothing in the traced graph but the
    deduplicating (a unique and an unsorted segment sum), installed once per optimizer and never removed (replica threads
    of a `tf.distribute` strategy may trace the step at the same time).

    Example:
    >>> class Model(DenseGradientTrainStep, keras.Model):
    ...     pass
    >>> inputs = keras.Input((3,), dtype="int32")
    >>> model = Model(inputs, keras.layers.Embedding(5, 2)(inputs))
    >>> model.compile(optimizer="adam", loss="mse")
    >>> ids = np.array([[1, 1, 1]])  # one id three times
    >>> _ = model.fit(ids, np.ones((1, 3, 2)), epochs=1, verbose=0)
    >>> keras.backend.backend() != "tensorflow" or "apply_gradients" in vars(model.optimizer)
    True
    """

    def train_step(self, *args):
        # *args: TensorFlow and torch pass (data,), JAX (state, data).
        deduplicate_applied_gradients(self.optimizer)
        return super().train_step(*args)


def deduplicate_applied_gradients(optimizer) -> None:
    """Makes `optimizer.apply_gradients` sum the repeated rows of `tf.IndexedSlices` first
    (TensorFlow only): what a dense gradient would give, row by row, without its size.

    Idempotent; a no-op on other backends and for `None`.

    Args:
        optimizer: a `keras.optimizers.Optimizer` or `None`.
    """
    if optimizer is None or keras.backend.backend() != "tensorflow":
        return
    if "apply_gradients" in vars(optimizer):  # installed already
        return
    import tensorflow as tf

    apply_gradients = type(optimizer).apply_gradients

    def summed_rows(gradient):
        if not isinstance(gradient, tf.IndexedSlices):
            return gradient
        ids, position = tf.unique(gradient.indices)
        values = tf.math.unsorted_segment_sum(gradient.values, position, tf.shape(ids)[0])
        return tf.IndexedSlices(values, ids, gradient.dense_shape)

    def deduplicated_apply_gradients(grads_and_vars):
        return apply_gradients(optimizer, [(summed_rows(g), v) for g, v in grads_and_vars])

    optimizer.apply_gradients = deduplicated_apply_gradients
