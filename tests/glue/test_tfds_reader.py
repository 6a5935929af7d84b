"""The mapping from tensorflow_datasets' glue/* example dicts (no network: hand-made rows)."""

import pytest

from albert_keras.glue import get_glue_task, glue_examples_from_tfds


def test_mnli_labels_are_mapped_by_name_to_the_official_order():
    # tfds numbers MNLI's classes entailment=0, neutral=1, contradiction=2; the official
    # order (ours) is contradiction=0, entailment=1, neutral=2.
    rows = [
        {"premise": b"p2", "hypothesis": b"h2", "label": 2, "idx": 2},
        {"premise": b"p0", "hypothesis": b"h0", "label": 0, "idx": 0},
        {"premise": "p1", "hypothesis": "h1", "label": 1, "idx": 1},
    ]
    examples = glue_examples_from_tfds("MNLI", "dev_matched", rows)
    assert examples.text_a == ["p0", "p1", "p2"]  # bytes decoded, sorted by idx
    assert examples.text_b == ["h0", "h1", "h2"]
    names = [examples.label_names[i] for i in examples.labels]
    assert names == ["entailment", "neutral", "contradiction"]
    assert examples.labels.tolist() == [1, 2, 0]
    assert examples.index == ["0", "1", "2"]
    assert examples.source == "tfds:glue/mnli[validation_matched]"


@pytest.mark.parametrize(
    "task,features,tfds_label,ours",
    [
        ("WNLI", ("sentence1", "sentence2"), 1, "1"),  # tfds: not_entailment=0, entailment=1
        ("QNLI", ("question", "sentence"), 1, "not_entailment"),
        ("RTE", ("sentence1", "sentence2"), 0, "entailment"),
        ("CoLA", ("sentence",), 1, "1"),  # tfds "acceptable"
        ("QQP", ("question1", "question2"), 0, "0"),
    ],
)
def test_other_tasks_keep_label_meaning(task, features, tfds_label, ours):
    row = {name: f"{name} text".encode() for name in features} | {"label": tfds_label, "idx": 0}
    examples = glue_examples_from_tfds(task, "train", [row])
    assert examples.label_names[examples.labels[0]] == ours
    assert examples.text_a == [f"{features[0]} text"]
    assert examples.text_b == ([f"{features[1]} text"] if len(features) == 2 else None)


def test_stsb_scores_and_test_splits():
    rows = [{"sentence1": b"a", "sentence2": b"b", "label": 3.8, "idx": 0}]
    stsb = glue_examples_from_tfds("STS-B", "dev", rows)
    assert stsb.labels.dtype == "float32" and stsb.labels.tolist() == pytest.approx([3.8])
    test_rows = [{"sentence": b"x", "label": -1, "idx": i} for i in range(3)]
    test = glue_examples_from_tfds("SST-2", "test", test_rows)
    assert test.labels is None and len(test) == 3
    ax = glue_examples_from_tfds("AX", "test", [{"premise": b"p", "hypothesis": b"h", "label": -1,
                                                 "idx": 0}])  # fmt: skip
    assert ax.labels is None and ax.text_b == ["h"]


def test_a_label_outside_the_class_list_is_an_error():
    with pytest.raises(ValueError, match=r"tfds:glue/rte\[validation\]: label id 5"):
        glue_examples_from_tfds("RTE", "dev", [{"sentence1": b"a", "sentence2": b"b",
                                                "label": 5, "idx": 0}])  # fmt: skip


def test_every_task_but_stsb_names_its_tfds_classes():
    for name in ("CoLA", "SST-2", "MRPC", "QQP", "MNLI", "QNLI", "RTE", "WNLI", "AX"):
        task = get_glue_task(name)
        # Every tfds class name maps onto one of ours (0/1 tasks map by position).
        assert len(task.tfds_labels) == task.num_classes
        if task.labels != ("0", "1"):
            assert sorted(task.tfds_labels) == sorted(task.labels)
