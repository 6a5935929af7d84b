"""SquadSpanLoss: the official SQuAD fine-tuning loss for either head of AlbertQuestionAnswerer."""

import keras


@keras.saving.register_keras_serializable(package="albert_keras")
class SquadSpanLoss(keras.losses.Loss):
    """Cross-entropy of the gold start and end pieces, averaged; plus, for the v2 head, half the
    sigmoid cross-entropy of `cls_logits` against `is_impossible` (official `run_squad_v2`).

    `y_true`: dict with `start_positions`, `end_positions` (and `is_impossible` for v2), each
    (batch,). `y_pred`: the model's training outputs, `start_logits` / `end_logits` (simple
    head) or `start_log_probs` / `end_log_probs` / `cls_logits` (v2 head). Per example:
    `(start + end) / 2 [+ answerability / 2]`, then the mean over the batch.

    Args:
        **kwargs: passed to `keras.losses.Loss` (e.g. `name`, `reduction`).

    Example:
    >>> loss = SquadSpanLoss()
    >>> y_pred = {"start_logits": np.zeros((1, 4)), "end_logits": np.zeros((1, 4))}
    >>> round(float(loss({"start_positions": [1], "end_positions": [2]}, y_pred)), 4)
    1.3863
    """

    def __init__(self, name="squad_span_loss", **kwargs):
        super().__init__(name=name, **kwargs)

    def call(self, y_true, y_pred):
        def cross_entropy(log_probs, positions):
            positions = keras.ops.reshape(keras.ops.cast(positions, "int32"), (-1, 1))
            return -keras.ops.squeeze(keras.ops.take_along_axis(log_probs, positions, 1), 1)

        if "cls_logits" in y_pred:
            start, end = y_pred["start_log_probs"], y_pred["end_log_probs"]
        else:
            start = keras.ops.log_softmax(y_pred["start_logits"], axis=-1)
            end = keras.ops.log_softmax(y_pred["end_logits"], axis=-1)
        loss = 0.5 * (
            cross_entropy(start, y_true["start_positions"])
            + cross_entropy(end, y_true["end_positions"])
        )
        if "cls_logits" in y_pred:
            impossible = keras.ops.cast(
                keras.ops.reshape(y_true["is_impossible"], (-1,)), y_pred["cls_logits"].dtype
            )
            loss = loss + 0.5 * keras.ops.binary_crossentropy(
                impossible, y_pred["cls_logits"], from_logits=True
            )
        return loss
