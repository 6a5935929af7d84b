"""TextInputs: `fit` / `evaluate` / `predict` on raw strings for a task with a preprocessor."""

import keras


class TextInputs:
    """A mixin for task models holding a `preprocessor` (keras-hub's Task pattern).

    With `self.preprocessor` set, `fit`, `evaluate` and `predict` take raw text: a list or
    array of strings, a tuple `(texts_a, texts_b)` of pairs, or a `tf.data.Dataset` of such
    (with labels); the preprocessor is mapped over batches in `tf.data`, so the model itself
    still takes the token-id dict (which it also accepts directly). Without a preprocessor, or
    when the inputs are already token ids, the calls are Keras's own.
    """

    def fit(self, x=None, y=None, batch_size=None, validation_data=None, **kwargs):
        if self._takes_text(x):
            # Keras shuffles arrays each epoch by default; the text dataset does the same.
            shuffle = kwargs.pop("shuffle", True)
            x = self._text_dataset(
                x, y, kwargs.pop("sample_weight", None), batch_size, shuffle=shuffle
            )
            y = batch_size = None
            kwargs["shuffle"] = False  # done in the dataset (Keras would warn otherwise)
        elif "shuffle" not in kwargs and _is_dataset(x):
            # Keras ignores `shuffle` for a dataset and warns, on every fit, about its default
            # (True): a dataset shuffles itself (ours do, seeded).
            kwargs["shuffle"] = False
        if validation_data is not None:
            val_x, val_y, val_w = (
                keras.utils.unpack_x_y_sample_weight(validation_data)
                if isinstance(validation_data, tuple)
                else (validation_data, None, None)
            )
            if self._takes_text(val_x):
                val_batch = kwargs.pop("validation_batch_size", None) or batch_size
                validation_data = self._text_dataset(val_x, val_y, val_w, val_batch)
        return super().fit(x, y, batch_size=batch_size, validation_data=validation_data, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
        if self._takes_text(x):
            x = self._text_dataset(x, y, kwargs.pop("sample_weight", None), batch_size)
            y = batch_size = None
        return super().evaluate(x, y, batch_size=batch_size, **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        if self._takes_text(x):
            x, batch_size = self._text_dataset(x, None, None, batch_size), None
        elif _is_arrays(x):
            # The batches Keras would make of arrays, in a pipeline of ours: Keras's own is
            # autotuned, and dropping its iterator can wait (albert_keras_contracts.autotune_off).
            x, batch_size = _array_batches(x, batch_size or 32), None
        return super().predict(x, batch_size=batch_size, **kwargs)

    def _takes_text(self, x) -> bool:
        return getattr(self, "preprocessor", None) is not None and _is_text(x)

    def _text_dataset(self, x, y, sample_weight, batch_size, shuffle=False):
        """A `tf.data.Dataset` of preprocessed batches from text `x` (and labels)."""
        import tensorflow as tf

        from albert_keras_contracts.autotune_off import autotune_off

        if isinstance(x, tf.data.Dataset):
            preprocess = self.preprocessor
            if isinstance(x.element_spec, tuple) and _all_string_specs(x.element_spec):
                # Unlabelled pairs: tf.data would pass the two segments as (x, y).
                preprocess = lambda *segments: self.preprocessor(tuple(segments))
            return autotune_off(x.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE))
        x = tuple(map(_strings, x)) if isinstance(x, tuple) else _strings(x)
        inputs = keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
        dataset = tf.data.Dataset.from_tensor_slices(inputs)
        if shuffle:
            dataset = dataset.shuffle(dataset.cardinality(), reshuffle_each_iteration=True)
        dataset = dataset.batch(batch_size or 32)
        dataset = dataset.map(self.preprocessor, num_parallel_calls=tf.data.AUTOTUNE)
        return autotune_off(dataset.prefetch(tf.data.AUTOTUNE))


def _is_dataset(x) -> bool:
    import tensorflow as tf

    return isinstance(x, (tf.data.Dataset, keras.utils.PyDataset))


def _is_arrays(x) -> bool:
    """A NumPy array or a dict of them (a tuple stays Keras's: a dataset's tuple reads as x, y)."""
    import numpy as np

    leaves = list(x.values()) if isinstance(x, dict) else [x]
    return bool(leaves) and all(isinstance(leaf, np.ndarray) for leaf in leaves)


def _array_batches(x, batch_size: int):
    import tensorflow as tf

    from albert_keras_contracts.autotune_off import autotune_off

    batches = tf.data.Dataset.from_tensor_slices(x).batch(batch_size)
    options = tf.data.Options()  # sharded by element across workers, as Keras shards arrays
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return autotune_off(batches.with_options(options).prefetch(tf.data.AUTOTUNE))


def _strings(texts):
    import tensorflow as tf

    return tf.convert_to_tensor(texts, tf.string)


def _is_text(x) -> bool:
    import numpy as np
    import tensorflow as tf

    if isinstance(x, tf.data.Dataset):
        spec = x.element_spec
        spec = spec[0] if isinstance(spec, tuple) and not _all_string_specs(spec) else spec
        return _all_string_specs(spec if isinstance(spec, tuple) else (spec,))
    leaves = x if isinstance(x, tuple) else (x,)
    for leaf in leaves:
        if isinstance(leaf, (list, np.ndarray)):
            first = np.asarray(leaf).reshape(-1)[:1]
            if first.size == 0 or first.dtype.kind not in "USO":
                return False
        elif not (isinstance(leaf, tf.Tensor) and leaf.dtype == tf.string):
            return False
    return True


def _all_string_specs(specs) -> bool:
    import tensorflow as tf

    return all(isinstance(s, tf.TensorSpec) and s.dtype == tf.string for s in specs)
