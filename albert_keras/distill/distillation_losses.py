"""DistilBERT's three loss terms (Sanh et al., 2019), per position, in `keras.ops`.

Each function returns one value per position; the `AlbertDistiller` averages them with the
records' `masked_lm_weights`, as the pretrainer averages its MLM loss.
"""

from keras import ops


def soft_target_cross_entropy(student_logits, teacher_logits, temperature=2.0):
    """Cross entropy of the student's distribution against the teacher's, both softened by
    `temperature`, times `temperature ** 2` (Hinton et al., 2015: keeps the gradients' scale
    independent of T).

    DistilBERT minimises the KL divergence instead; the two differ by the teacher's entropy,
    a constant for the student, so the gradients are the same.

    Args:
        student_logits: float tensor (..., V).
        teacher_logits: float tensor (..., V). Not differentiated through.
        temperature: float. T > 0; 1 is the plain softmax.

    Returns:
        float32 tensor (...): `-T^2 * sum_v softmax(t / T)_v * log_softmax(s / T)_v`.

    Example:
    >>> logits = np.zeros((1, 4), "float32")
    >>> float(soft_target_cross_entropy(logits, logits, 2.0)[0])  # 4 * log(4)
    5.545...
    """
    if temperature <= 0:
        raise ValueError(f"temperature={temperature} must be > 0")
    student = ops.cast(student_logits, "float32") / temperature
    teacher = ops.stop_gradient(ops.cast(teacher_logits, "float32")) / temperature
    targets = ops.softmax(teacher, axis=-1)
    return -(temperature**2) * ops.sum(targets * ops.log_softmax(student, axis=-1), axis=-1)


def cosine_distance(student_hidden, teacher_hidden, epsilon=1e-12):
    """`1 - cos(student, teacher)` along the last axis: DistilBERT's cosine embedding loss
    with target 1, which aligns the directions of the two models' hidden states.

    Args:
        student_hidden: float tensor (..., H) (projected to the teacher's width if narrower).
        teacher_hidden: float tensor (..., H). Not differentiated through.
        epsilon: float. Keeps an all-zero vector (padding) finite.

    Returns:
        float32 tensor (...), in [0, 2].

    Example:
    >>> x = np.array([[1.0, 0.0]], "float32")
    >>> float(cosine_distance(x, np.array([[0.0, 2.0]], "float32"))[0])
    1.0
    """
    student = ops.cast(student_hidden, "float32")
    teacher = ops.stop_gradient(ops.cast(teacher_hidden, "float32"))
    dot = ops.sum(student * teacher, axis=-1)
    norms = ops.sqrt(ops.sum(student**2, axis=-1) * ops.sum(teacher**2, axis=-1) + epsilon)
    return 1.0 - dot / norms


def weighted_mean(values, weights):
    """`sum(w * v) / (sum(w) + 1e-5)`: the official code's normaliser for masked positions
    (the 1e-5 keeps a batch with no predictions finite).

    Example:
    >>> round(float(weighted_mean(np.array([1.0, 3.0]), np.array([1.0, 0.0]))), 4)
    1.0
    """
    weights = ops.cast(weights, "float32")
    return ops.sum(ops.cast(values, "float32") * weights) / (ops.sum(weights) + 1e-5)
