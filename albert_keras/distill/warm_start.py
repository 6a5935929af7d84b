"""Warm start: a shallower student initialised from its teacher's layers (DistilBERT, section 3).

DistilBERT initialises its 6-layer student from every other layer of the 12-layer BERT. ALBERT
shares its layers, so there the "every other layer" of a teacher with one shared block is the
block itself: the student is the teacher's weights run fewer times (depth truncation).
"""

from albert_keras.models import AlbertPretrainer

# Everything but the depth must match for the weights to fit.
_SAME = (
    "vocabulary_size",
    "embedding_dim",
    "hidden_dim",
    "intermediate_dim",
    "num_heads",
    "num_inner_repetitions",
    "sharing",
    "max_sequence_length",
    "num_segments",
)


def teacher_layer(student_layer: int, student_layers: int, teacher_layers: int) -> int:
    """The teacher layer student layer `student_layer` starts from: every other one when the
    student is half as deep (0, 2, 4, ... as DistilBERT), evenly spread in general.

    Example:
    >>> [teacher_layer(i, 6, 12) for i in range(6)]
    [0, 2, 4, 6, 8, 10]
    """
    return student_layer * teacher_layers // student_layers


def warm_start_mismatch(teacher_config: dict, student_config: dict) -> str | None:
    """Why a student with backbone arguments `student_config` cannot start from a teacher's
    weights (`teacher_config`), or `None` when it can.

    Example:
    >>> teacher_config = keras.saving.load_model("albert.keras").backbone.get_config()
    >>> warm_start_mismatch(teacher_config, {**teacher_config, "num_layers": 1, "hidden_dim": 8})
    'hidden_dim: student 8, teacher 16'
    >>> warm_start_mismatch(teacher_config, {**teacher_config, "num_layers": 1}) is None
    True
    """
    t, s = teacher_config, student_config
    for key in _SAME:
        if t[key] != s[key]:
            return f"{key}: student {s[key]}, teacher {t[key]}"
    if s["num_layers"] > t["num_layers"]:
        return f"num_layers: student {s['num_layers']} > teacher {t['num_layers']}"
    if s["sharing"] != "none" and s["num_groups"] != t["num_groups"]:
        return f"num_groups: student {s['num_groups']}, teacher {t['num_groups']}"
    return None


def warm_start(teacher: AlbertPretrainer, student: AlbertPretrainer) -> dict[str, str]:
    """Copies the teacher's weights into a shallower student of the same width.

    The embeddings, the pooler and the MLM head are copied whole. In the encoder, a shared half
    of the block (see `SharedEncoder`) is copied group for group; an unshared half takes, for
    student layer i, teacher layer `teacher_layer(i, ...)` (every other one at half depth).
    With `sharing="all"` and one group the student is the teacher run fewer times.

    Args:
        teacher: `AlbertPretrainer`.
        student: `AlbertPretrainer` with the teacher's architecture but `num_layers` (at most
            the teacher's) and, if it has one, its sentence head (left as initialised).

    Returns:
        dict: student variable path -> the teacher variable path it was copied from.

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> config = {"vocabulary_size": 50, "num_layers": 4, "num_heads": 2, "embedding_dim": 8,
    ...           "hidden_dim": 16, "intermediate_dim": 32, "sharing": "none"}
    >>> teacher = AlbertPretrainer(AlbertBackbone(**config))
    >>> student = AlbertPretrainer(AlbertBackbone(**{**config, "num_layers": 2}))
    >>> copied = warm_start(teacher, student)
    >>> copied["encoder/layer_1_inner_0_attention/qkv/kernel"]  # sharing="none", 4 -> 2
    'encoder/layer_2_inner_0_attention/qkv/kernel'
    """
    mismatch = warm_start_mismatch(teacher.backbone.get_config(), student.backbone.get_config())
    if mismatch:
        raise ValueError(f"the student cannot start from the teacher's weights ({mismatch})")
    t_backbone, s_backbone = teacher.backbone, student.backbone
    pairs = [
        (s_backbone.embeddings, t_backbone.embeddings),
        (s_backbone.pooler, t_backbone.pooler),
        (student.mlm_head, teacher.mlm_head),
    ]
    s_encoder, t_encoder = s_backbone.encoder, t_backbone.encoder
    halves = (  # which halves the student shares: its sharing mode says (the catalogue's)
        ("attention_blocks", s_encoder.mode.shares("attention")),
        ("feedforward_blocks", s_encoder.mode.shares("ffn")),
    )
    repetitions = s_encoder.num_inner_repetitions
    for attribute, shared in halves:
        s_blocks, t_blocks = getattr(s_encoder, attribute), getattr(t_encoder, attribute)
        for owner in range(len(s_blocks) // repetitions):
            source = (
                owner
                if shared
                else teacher_layer(owner, s_encoder.num_layers, t_encoder.num_layers)
            )
            for inner in range(repetitions):
                pairs.append(
                    (s_blocks[owner * repetitions + inner], t_blocks[source * repetitions + inner])
                )
    copied, done = {}, set()
    for s_layer, t_layer in pairs:
        # A variable reached twice (the MLM head's output is the tied token embedding) is
        # copied once.
        s_weights = [w for w in s_layer.weights if id(w) not in done]
        t_weights = [w for w in t_layer.weights if id(w) not in done]
        if [w.shape for w in s_weights] != [w.shape for w in t_weights]:
            raise ValueError(f"{s_layer.name}: weights do not match {t_layer.name}'s")
        for s_weight, t_weight in zip(s_weights, t_weights, strict=True):
            s_weight.assign(t_weight)
            copied[s_weight.path] = t_weight.path
            done.update((id(s_weight), id(t_weight)))
    return copied
