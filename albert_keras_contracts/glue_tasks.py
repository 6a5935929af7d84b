"""GLUE's tasks: the nine plus AX, as GLUE's download lays their files out (the catalogue's
entries: `albert_keras_contracts.catalogue` holds them, and any task a user registers).

Columns follow the official `classifier_utils.py` processors (which read GLUE's own TSVs), found
by their header names (a file lacking one is refused; CoLA's header-less train/dev by count);
label lists keep the official order, so class ids match official checkpoints' heads.
Fine-tuning defaults are the official `run_glue.sh` (learning rate, batch size, warmup steps,
train steps, checkpoint-and-evaluate interval) with max_seq_length 512.
"""

from __future__ import annotations

from albert_keras_contracts.glue_task import GlueTask, TsvLayout

_BINARY = ("0", "1")
_NLI = ("contradiction", "entailment", "neutral")
_ENTAILMENT = ("entailment", "not_entailment")
_MNLI_TFDS = ("entailment", "neutral", "contradiction")


_SENTENCES = ("sentence1", "sentence2")
_QQP = ("question1", "question2")
_MRPC = ("#1 String", "#2 String")


def _pair(file, a, b, label, index="index"):
    return TsvLayout(file, text_a=a, text_b=b, label=label, index=index)


def _train_dev_test(text_a, text_b, label, *, index="index", test_index="index"):
    """GLUE's usual three files: `train.tsv` and `dev.tsv` with the label column, `test.tsv`
    without (`index` is the id column of the first two, `test_index` of the test file)."""
    return {
        "train": TsvLayout("train.tsv", text_a, text_b, label=label, index=index),
        "dev": TsvLayout("dev.tsv", text_a, text_b, label=label, index=index),
        "test": TsvLayout("test.tsv", text_a, text_b, label=None, index=test_index),
    }


BUILTIN_GLUE_TASKS: tuple[GlueTask, ...] = (
    GlueTask(
        name="CoLA",
        directory="CoLA",
        # Only CoLA's test file has a header; train/dev rows are
        # source, label, original label, sentence.
        splits={
            "train": TsvLayout("train.tsv", text_a=3, text_b=None, label=1, num_columns=4),
            "dev": TsvLayout("dev.tsv", text_a=3, text_b=None, label=1, num_columns=4),
            "test": TsvLayout("test.tsv", "sentence", text_b=None, label=None, index="index"),
        },
        labels=_BINARY,
        metrics=("matthews_corrcoef",),
        dev_splits=("dev",),
        test_splits={"test": "CoLA"},
        learning_rate=1e-5,
        batch_size=16,
        train_steps=5336,
        warmup_steps=320,
        eval_every=100,
        tfds_name="glue/cola",
        tfds_text=("sentence",),
        tfds_labels=("unacceptable", "acceptable"),
    ),
    GlueTask(
        name="SST-2",
        directory="SST-2",
        splits=_train_dev_test("sentence", None, "label", index=None),
        labels=_BINARY,
        metrics=("accuracy",),
        dev_splits=("dev",),
        test_splits={"test": "SST-2"},
        learning_rate=1e-5,
        batch_size=32,
        train_steps=20935,
        warmup_steps=1256,
        eval_every=100,
        tfds_name="glue/sst2",
        tfds_text=("sentence",),
        tfds_labels=("negative", "positive"),
    ),
    GlueTask(
        name="MRPC",
        directory="MRPC",
        # Quality, #1 ID, #2 ID, #1 String, #2 String (test: index instead of Quality).
        splits=_train_dev_test(*_MRPC, "Quality", index=None),
        labels=_BINARY,
        metrics=("f1", "accuracy"),
        dev_splits=("dev",),
        test_splits={"test": "MRPC"},
        learning_rate=2e-5,
        batch_size=32,
        train_steps=800,
        warmup_steps=200,
        eval_every=100,
        tfds_name="glue/mrpc",
        tfds_text=("sentence1", "sentence2"),
        tfds_labels=("not_equivalent", "equivalent"),
    ),
    GlueTask(
        name="STS-B",
        directory="STS-B",
        # index, genre, filename, year, old_index, source1, source2, sentence1, sentence2,
        # score (the test file stops before score).
        splits=_train_dev_test(*_SENTENCES, "score"),
        labels=None,
        metrics=("pearson", "spearman"),
        dev_splits=("dev",),
        test_splits={"test": "STS-B"},
        learning_rate=2e-5,
        batch_size=16,
        train_steps=3598,
        warmup_steps=214,
        eval_every=100,
        tfds_name="glue/stsb",
        tfds_text=("sentence1", "sentence2"),
        score_range=(0.0, 5.0),  # similarity from 0 (unrelated) to 5 (same meaning)
    ),
    GlueTask(
        name="QQP",
        directory="QQP",
        # id, qid1, qid2, question1, question2, is_duplicate; test: id, question1, question2.
        splits=_train_dev_test(*_QQP, "is_duplicate", index="id", test_index="id"),
        labels=_BINARY,
        metrics=("f1", "accuracy"),
        dev_splits=("dev",),
        test_splits={"test": "QQP"},
        learning_rate=5e-5,
        batch_size=128,
        train_steps=14000,
        warmup_steps=1000,
        eval_every=100,
        tfds_name="glue/qqp",
        tfds_text=("question1", "question2"),
        tfds_labels=("not_duplicate", "duplicate"),
    ),
    GlueTask(
        name="MNLI",
        directory="MNLI",
        # sentence1/sentence2 are columns 8/9 in every file; gold_label is the last column
        # of train (12 columns) and dev (16 columns: five annotator labels).
        splits={
            "train": _pair("train.tsv", *_SENTENCES, label="gold_label"),
            "dev_matched": _pair("dev_matched.tsv", *_SENTENCES, label="gold_label"),
            "dev_mismatched": _pair("dev_mismatched.tsv", *_SENTENCES, label="gold_label"),
            "test_matched": _pair("test_matched.tsv", *_SENTENCES, label=None),
            "test_mismatched": _pair("test_mismatched.tsv", *_SENTENCES, label=None),
        },
        labels=_NLI,
        metrics=("accuracy",),
        dev_splits=("dev_matched", "dev_mismatched"),
        test_splits={"test_matched": "MNLI-m", "test_mismatched": "MNLI-mm"},
        learning_rate=3e-5,
        batch_size=128,
        train_steps=10000,
        warmup_steps=1000,
        eval_every=100,
        tfds_name="glue/mnli",
        tfds_text=("premise", "hypothesis"),
        tfds_labels=_MNLI_TFDS,
        diagnostic="AX",
    ),
    GlueTask(
        name="QNLI",
        directory="QNLI",
        splits=_train_dev_test("question", "sentence", "label"),
        labels=_ENTAILMENT,
        metrics=("accuracy",),
        dev_splits=("dev",),
        test_splits={"test": "QNLI"},
        learning_rate=1e-5,
        batch_size=32,
        train_steps=33112,
        warmup_steps=1986,
        eval_every=200,
        tfds_name="glue/qnli",
        tfds_text=("question", "sentence"),
        tfds_labels=_ENTAILMENT,
    ),
    GlueTask(
        name="RTE",
        directory="RTE",
        splits=_train_dev_test(*_SENTENCES, "label"),
        labels=_ENTAILMENT,
        metrics=("accuracy",),
        dev_splits=("dev",),
        test_splits={"test": "RTE"},
        learning_rate=3e-5,
        batch_size=32,
        train_steps=800,
        warmup_steps=200,
        eval_every=100,
        tfds_name="glue/rte",
        tfds_text=("sentence1", "sentence2"),
        tfds_labels=_ENTAILMENT,
    ),
    GlueTask(
        name="WNLI",
        directory="WNLI",
        splits=_train_dev_test(*_SENTENCES, "label"),
        labels=_BINARY,
        metrics=("accuracy",),
        dev_splits=("dev",),
        test_splits={"test": "WNLI"},
        # Not in run_glue.sh: the row of the release README's hyperparameter table (2e-5,
        # batch 16, 2,000 steps, 250 warmup) as we recall it; not checked against the file.
        learning_rate=2e-5,
        batch_size=16,
        train_steps=2000,
        warmup_steps=250,
        eval_every=100,
        tfds_name="glue/wnli",
        tfds_text=("sentence1", "sentence2"),
        tfds_labels=("not_entailment", "entailment"),
    ),
    GlueTask(
        name="AX",
        directory="diagnostic",
        # GLUE's diagnostic set: predictions only, made with an MNLI model.
        splits={"test": _pair("diagnostic.tsv", *_SENTENCES, label=None)},
        labels=_NLI,
        metrics=("matthews_corrcoef",),
        dev_splits=(),
        test_splits={"test": "AX"},
        tfds_name="glue/ax",
        tfds_text=("premise", "hypothesis"),
        tfds_labels=_MNLI_TFDS,
    ),
)

# Spellings people use for the same task (tfds's, HF's, GLUE's MNLI-m/-mm).
GLUE_ALIASES = {
    "sst2": "SST-2",
    "stsb": "STS-B",
    "sts": "STS-B",
    "mnli-m": "MNLI",
    "mnli-mm": "MNLI",
    "diagnostic": "AX",
}
