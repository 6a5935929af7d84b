"""warm_start copies exactly the layers it says: every other one, or the shared block itself."""

import numpy as np
import pytest
import tensorflow as tf
from distill_helpers import make_student, make_teacher

from albert_keras.distill.warm_start import teacher_layer, warm_start, warm_start_mismatch


def by_path(model):
    return {w.path: w.numpy() for w in model.weights}


def test_teacher_layer_is_every_other_one_at_half_depth():
    assert [teacher_layer(i, 6, 12) for i in range(6)] == [0, 2, 4, 6, 8, 10]  # DistilBERT
    assert [teacher_layer(i, 2, 4) for i in range(2)] == [0, 2]
    assert [teacher_layer(i, 4, 4) for i in range(4)] == [0, 1, 2, 3]


def test_unshared_teacher_gives_every_other_layer():
    teacher, student = make_teacher(sharing="none"), make_student(sharing="none")
    copied = warm_start(teacher, student)
    # Every student variable is copied, from the teacher variable the map names.
    assert (
        len(copied) == len(student.weights) == 38
    )  # 7 embedding, 2 x (6 + 6) block, 2 pooler, 5 MLM head
    teacher_values, student_values = by_path(teacher), by_path(student)
    for s_path, t_path in copied.items():
        np.testing.assert_array_equal(student_values[s_path], teacher_values[t_path])
    for half in ("attention/qkv/kernel", "ffn/intermediate/kernel", "ffn/layer_norm/gamma"):
        assert copied[f"encoder/layer_0_inner_0_{half}"] == f"encoder/layer_0_inner_0_{half}"
        assert copied[f"encoder/layer_1_inner_0_{half}"] == f"encoder/layer_2_inner_0_{half}"
    # Not layer 1 of the teacher (random inits differ, so this can fail).
    assert not np.array_equal(
        student_values["encoder/layer_1_inner_0_attention/qkv/kernel"],
        teacher_values["encoder/layer_1_inner_0_attention/qkv/kernel"],
    )
    mlm_paths = [p for p in copied if "mlm_head" in p]
    assert len(mlm_paths) == 5  # bias, dense kernel + bias, LayerNorm gamma + beta


def test_shared_teacher_gives_the_block_itself_run_fewer_times(distill_records):
    teacher, student = make_teacher(), make_student()
    copied = warm_start(teacher, student)
    assert (
        len(copied) == len(student.weights) == 26
    )  # one attention and one FFN block: 7 + 12 + 2 + 5
    inputs = {
        "token_ids": tf.constant([[2, 7, 4, 9, 3, 0]]),
        "segment_ids": tf.zeros((1, 6), "int32"),
        "padding_mask": tf.constant([[1, 1, 1, 1, 1, 0]]),
    }
    # The student is the teacher's embeddings then its shared block applied twice.
    encoder = teacher.backbone.encoder
    x = teacher.backbone.embeddings(inputs["token_ids"], inputs["segment_ids"])
    mask = tf.cast(inputs["padding_mask"], "bool")[:, None, None, :]
    for _ in range(2):
        x = encoder.feedforward_blocks[0](encoder.attention_blocks[0](x, attention_mask=mask))
    got = student.backbone(inputs)["sequence_output"]
    np.testing.assert_allclose(got.numpy(), x.numpy(), atol=1e-6)


def test_two_groups_are_copied_group_for_group():
    teacher, student = make_teacher(num_groups=2), make_student(num_groups=2)
    copied = warm_start(teacher, student)
    assert copied["encoder/group_1_inner_0_attention/qkv/kernel"] == (
        "encoder/group_1_inner_0_attention/qkv/kernel"
    )


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"hidden_dim": 8, "intermediate_dim": 16}, "hidden_dim: student 8, teacher 16"),
        ({"num_layers": 8}, "num_layers: student 8 > teacher 4"),
        ({"sharing": "none"}, "sharing: student none, teacher all"),
        ({"num_groups": 2}, "num_groups: student 2, teacher 1"),
    ],
)
def test_a_student_that_cannot_start_from_the_teacher(overrides, message):
    teacher = make_teacher()
    config = {**teacher.backbone.get_config(), "num_layers": 2, **overrides}
    assert warm_start_mismatch(teacher.backbone.get_config(), config) == message
    with pytest.raises(ValueError, match=message):
        warm_start(teacher, make_student(**overrides))
