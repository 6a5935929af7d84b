"""AnswerabilitySpanHead: the official `run_squad_v2.py` head (start, end given start, answerable)."""

import keras

from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.gather_rows import gather_rows

# Masked logits, as official: a large negative number, not -inf (log_softmax stays finite).
_MASKED = 1e30


@keras.saving.register_keras_serializable(package="albert_keras")
class AnswerabilitySpanHead(keras.layers.Layer):
    """The SQuAD 2.0 head of the official `squad_utils.create_v2_model` (XLNet's).

    Three parts over the sequence output (batch, time, H), `p_mask` 1 where no answer can be:
    - start: Dense(1) logits, masked, log-softmax over time;
    - end: conditioned on a start piece: Dense(H, tanh) over [token ; start piece], LayerNorm,
      Dense(1), masked, log-softmax. Training uses the gold start (`start_positions`); at
      inference each of the `start_n_top` best starts gets its `end_n_top` best ends (beam);
    - answerability: Dense(H, tanh) over [expected start representation under the start
      softmax ; [CLS]], dropout, Dense(1, no bias): `cls_logits`, higher for "no answer".

    Runs in float32 (its inputs are cast), so its log-probabilities are float32 under mixed
    precision.

    Args:
        hidden_dim: int. H, the width of the sequence output.
        start_n_top: int. Start pieces kept at inference.
        end_n_top: int. End pieces kept per start at inference.
        dropout: float. Dropout before the answerability logit (official `dropout_prob` 0.1).
        **kwargs: passed to `keras.layers.Layer`.

    Call args:
        sequence: float (batch, time, H).
        p_mask: int or float (batch, time).
        start_positions: int (batch,) or None. Given: training outputs `start_log_probs`,
            `end_log_probs` (batch, time) and `cls_logits` (batch,). None: the beam,
            `start_top_log_probs`, `start_top_index` (batch, start_n_top),
            `end_top_log_probs`, `end_top_index` (batch, start_n_top * end_n_top) and
            `cls_logits`.

    Example:
    >>> head = AnswerabilitySpanHead(hidden_dim=8, start_n_top=2, end_n_top=3)
    >>> out = head(np.zeros((1, 6, 8), "float32"), np.zeros((1, 6), "int32"))
    >>> tuple(out["end_top_index"].shape)
    (1, 6)
    """

    def __init__(self, hidden_dim, start_n_top=5, end_n_top=5, dropout=0.1, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.hidden_dim = int(hidden_dim)
        self.start_n_top = int(start_n_top)
        self.end_n_top = int(end_n_top)
        self.dropout = float(dropout)

        def dense(units, name, **options):
            return keras.layers.Dense(
                units, kernel_initializer=albert_initializer(), dtype=self.dtype_policy,
                name=name, **options,
            )  # fmt: skip

        # === Layers ===
        self.start_dense = dense(1, "start_logits")
        self.end_hidden = dense(self.hidden_dim, "end_logits_dense_0", activation="tanh")
        self.end_layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="end_logits_layer_norm"
        )
        self.end_dense = dense(1, "end_logits_dense_1")
        self.answer_hidden = dense(self.hidden_dim, "answer_class_dense_0", activation="tanh")
        # The head's policy, not the global one at construction: a mixed global policy would
        # round the answerability features to bfloat16 here, and a copy loaded under another
        # global policy would compute different `cls_logits`.
        self.answer_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="answer_class_dropout"
        )
        self.answer_dense = dense(1, "answer_class_dense_1", use_bias=False)

    def build(self, sequence_shape, *args, **kwargs):
        hidden = self.hidden_dim
        self.start_dense.build((None, None, hidden))
        self.end_hidden.build((None, None, 2 * hidden))
        self.end_layer_norm.build((None, None, hidden))
        self.end_dense.build((None, None, hidden))
        self.answer_hidden.build((None, 2 * hidden))
        self.answer_dense.build((None, hidden))
        self.built = True

    def _end_log_probs(self, tokens, start_features, p_mask):
        """tokens (..., time, H) and start features broadcast to it -> masked end log-probs."""
        start_features = keras.ops.broadcast_to(start_features, keras.ops.shape(tokens))
        hidden = self.end_hidden(keras.ops.concatenate([tokens, start_features], axis=-1))
        logits = keras.ops.squeeze(self.end_dense(self.end_layer_norm(hidden)), -1)
        return keras.ops.log_softmax(logits * (1.0 - p_mask) - _MASKED * p_mask, axis=-1)

    def call(self, sequence, p_mask, start_positions=None, training=False):
        sequence = keras.ops.cast(sequence, self.compute_dtype)
        p_mask = keras.ops.cast(p_mask, self.compute_dtype)
        start_logits = keras.ops.squeeze(self.start_dense(sequence), -1)
        start_masked = start_logits * (1.0 - p_mask) - _MASKED * p_mask
        start_log_probs = keras.ops.log_softmax(start_masked, axis=-1)

        # Answerability: [expected start representation ; [CLS]] (no dependence on the end,
        # so there is one cls_logit per window).
        start_probs = keras.ops.softmax(start_masked, axis=-1)
        start_feature = keras.ops.einsum("bth,bt->bh", sequence, start_probs)
        answer = self.answer_hidden(
            keras.ops.concatenate([start_feature, sequence[:, 0, :]], axis=-1)
        )
        answer = self.answer_dropout(answer, training=training)
        cls_logits = keras.ops.squeeze(self.answer_dense(answer), -1)

        if start_positions is not None:
            index = keras.ops.reshape(start_positions, (-1, 1))
            start_features = gather_rows(sequence, index)  # (b, 1, H)
            end_log_probs = self._end_log_probs(sequence, start_features, p_mask[:, :])
            return {
                "start_log_probs": start_log_probs,
                "end_log_probs": end_log_probs,
                "cls_logits": cls_logits,
            }
        start_top_log_probs, start_top_index = keras.ops.top_k(start_log_probs, self.start_n_top)
        # (b, k, H): each top start's representation; ends over time for each: (b, k, t, H).
        start_features = gather_rows(sequence, start_top_index)
        tokens = keras.ops.expand_dims(sequence, 1)
        tokens = keras.ops.broadcast_to(
            tokens, (keras.ops.shape(sequence)[0], self.start_n_top, *keras.ops.shape(sequence)[1:])
        )
        end_log_probs = self._end_log_probs(
            tokens, keras.ops.expand_dims(start_features, 2), keras.ops.expand_dims(p_mask, 1)
        )  # (b, k, t)
        end_top_log_probs, end_top_index = keras.ops.top_k(end_log_probs, self.end_n_top)
        flat = (-1, self.start_n_top * self.end_n_top)
        return {
            "start_top_log_probs": start_top_log_probs,
            "start_top_index": start_top_index,
            "end_top_log_probs": keras.ops.reshape(end_top_log_probs, flat),
            "end_top_index": keras.ops.reshape(end_top_index, flat),
            "cls_logits": cls_logits,
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_dim": self.hidden_dim,
                "start_n_top": self.start_n_top,
                "end_n_top": self.end_n_top,
                "dropout": self.dropout,
            }
        )
        return config
