"""`albert-keras finetune-glue --train_file ...`: the user's own files, through the GLUE job."""

import csv
import json

import keras
import numpy as np
import pytest

import albert_keras as ak
from albert_keras.jobs import finetune_glue_job as job
from albert_keras.serving.text_predictions import predict_texts
from albert_keras_cli import main as cli

LABELS = ("meh", "neg", "pos")  # sorted: the class ids of the saved model
WORDS = {"pos": "good fun", "neg": "bad dull", "meh": "so so"}


def _backbone():
    return ak.AlbertBackbone(
        vocabulary_size=64, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=16,
    )  # fmt: skip


def _rows(count, offset=0):
    order = ("pos", "neg", "meh")
    return [
        {
            "id": i,
            "review": f"{WORDS[order[i % 3]]} {i}",
            "title": f"film {i}",
            "stars": order[i % 3],
        }
        for i in range(offset, offset + count)
    ]


def _write_csv(path, rows, columns=("id", "review", "title", "stars")):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _read_tsv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.fixture(scope="module")
def saved_backbone(tmp_path_factory, tiny_spm):
    folder = tmp_path_factory.mktemp("model")
    _backbone().save(folder / "backbone.keras")
    (folder / "spm.model").symlink_to(tiny_spm)
    return folder / "backbone.keras"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    _write_csv(root / "train.csv", _rows(24))
    _write_csv(root / "dev.csv", _rows(9, offset=100))
    _write_csv(root / "test.csv", _rows(5, offset=200), columns=("id", "review", "title"))
    return root


@pytest.fixture(scope="module")
def classification_run(saved_backbone, data, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    argv = ["finetune-glue", "--train_file", str(data / "train.csv"),
            "--validation_file", str(data / "dev.csv"), "--test_file", str(data / "test.csv"),
            "--text_column", "review", "--text_pair_column", "title", "--label_column", "stars",
            "--init_from", str(saved_backbone), "--output_dir", str(out), "--max_steps", "4",
            "--batch_size", "8", "--max_seq_length", "16", "--eval_every", "2", "--seed", "0"]  # fmt: skip
    assert cli.main(argv) == 0
    return out


def test_classification_on_csv_pairs_with_string_labels(classification_run, data):
    summary = json.loads((classification_run / "metrics.json").read_text())
    assert (summary["task"], summary["split"], summary["num_examples"]) == ("custom", "dev", 9)
    assert list(summary["metrics"]) == ["accuracy", "macro_f1"]
    assert summary["train_examples"] == 24 and summary["steps_trained"] == 4
    assert summary["labels"] == list(LABELS)
    # The dev predictions are spelled as the file's labels and give the reported accuracy.
    rows = _read_tsv(classification_run / "dev_predictions" / "custom.tsv")
    assert rows[0] == ["index", "prediction"] and [r[0] for r in rows[1:]] == [
        str(i) for i in range(9)
    ]
    predicted = [r[1] for r in rows[1:]]
    assert set(predicted) <= set(LABELS)
    truth = [row["stars"] for row in _rows(9, offset=100)]
    accuracy = np.mean([p == t for p, t in zip(predicted, truth)])
    assert summary["metrics"]["accuracy"] == pytest.approx(accuracy)
    submission = _read_tsv(classification_run / "submission" / "custom.tsv")
    assert len(submission) == 6 and {r[1] for r in submission[1:]} <= set(LABELS)

    # The saved model carries the labels; predict answers with them, as the file says.
    model = keras.saving.load_model(classification_run / "model.keras")
    assert model.label_names == LABELS and model.num_classes == 3
    dev = _rows(9, offset=100)
    answers = predict_texts(model, [r["review"] for r in dev], [r["title"] for r in dev])
    assert [a["label"] for a in answers] == predicted
    assert [LABELS[a["class_id"]] for a in answers] == predicted


def test_predict_command_answers_with_label_names(classification_run, tmp_path, capsys):
    lines = tmp_path / "pairs.txt"
    lines.write_text("good fun 7\tfilm 7\nbad dull 8\tfilm 8\n")
    argv = ["predict", "--model", str(classification_run / "model.keras"), "--input", str(lines),
            "--pairs", "--output", str(tmp_path / "out.jsonl")]  # fmt: skip
    assert cli.main(argv) == 0
    answers = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(answers) == 2
    for answer in answers:
        assert {"class_id", "label", "probabilities"} <= set(answer)
        assert answer["label"] == LABELS[int(np.argmax(answer["probabilities"]))]


@pytest.mark.slow  # a second fine-tuning (~8 s quiet); the reader's tests cover regression files
def test_regression_on_json_lines_through_the_python_api(tmp_path, tiny_spm):
    def write(name, count):
        rows = [{"s": f"good {'fun ' * (i % 4)}", "score": float(i % 4)} for i in range(count)]
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        return tmp_path / name

    summary = job.finetune_glue(
        train_file=write("train.jsonl", 16), validation_file=write("dev.jsonl", 8),
        text_column="s", label_column="score", task_type="regression",
        init_from=_backbone(), spm_model=tiny_spm, output_dir=tmp_path / "out",
        max_steps=2, batch_size=4, max_seq_length=16, eval_every=2, seed=0,
    )  # fmt: skip
    assert list(summary["metrics"]) == ["pearson", "spearman"] and summary["labels"] is None
    rows = _read_tsv(tmp_path / "out" / "dev_predictions" / "custom.tsv")
    assert len(rows) == 9 and all(np.isfinite(float(r[1])) for r in rows[1:])
    assert summary["skipped"] == ["custom: no --test_file given"]
    model = keras.saving.load_model(tmp_path / "out" / "model.keras")
    assert model.num_classes == 1 and model.label_names is None


@pytest.mark.parametrize(
    "change,message",
    [
        ({"--text_column": "body"}, "train.csv:1: no column 'body' in the header"),
        (
            {"--validation_file": "{tmp}/unseen.csv"},
            "unseen.csv:3: label 'great' is not in the training file's labels (meh, neg, pos)",
        ),
        ({"--train_file": "{tmp}/empty.csv"}, "empty.csv: no examples"),
        ({"--task_type": "regression"}, "train.csv:2: 'pos' in column 'stars' is not a number"),
        ({"--task": "SST-2"}, "give --task (a GLUE task) or --train_file (your own), not both"),
        ({"--validation_file": None}, "--train_file needs --validation_file"),
        ({"--train_file": None}, "--validation_file needs --train_file"),
    ],
)
def test_bad_files_exit_2_with_one_line(change, message, data, saved_backbone, tmp_path, capsys):
    _write_csv(
        tmp_path / "unseen.csv", [*_rows(1), {"review": "x", "title": "y", "stars": "great"}]
    )
    (tmp_path / "empty.csv").write_text("")
    flags = {"--train_file": str(data / "train.csv"), "--validation_file": str(data / "dev.csv"),
             "--text_column": "review", "--label_column": "stars",
             "--init_from": str(saved_backbone), "--output_dir": str(tmp_path / "out"),
             "--max_seq_length": "16"}  # fmt: skip
    flags.update(change)
    argv = ["finetune-glue"]
    for flag, value in flags.items():
        if value is not None:
            argv += [flag, value.format(tmp=tmp_path)]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("albert-keras finetune-glue: error: ") and "\n" not in error
    assert message in error
    assert not (tmp_path / "out").exists()  # refused before the folder is made


@pytest.mark.slow  # a SavedModel export and load: ~15 s on a quiet machine
def test_exported_saved_model_answers_with_label_names(classification_run, tmp_path):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SavedModel's SentencePiece ops)

    from albert_keras.serving.export_saved_model import export_saved_model

    model = keras.saving.load_model(classification_run / "model.keras")
    outputs = export_saved_model(model, tmp_path / "served")
    assert outputs["pairs"] == ["probabilities", "label"]
    served = tf.saved_model.load(str(tmp_path / "served"))
    dev = _rows(9, offset=100)
    texts_a, texts_b = [r["review"] for r in dev], [r["title"] for r in dev]
    answer = served.signatures["pairs"](text_a=tf.constant(texts_a), text_b=tf.constant(texts_b))
    expected = predict_texts(model, texts_a, texts_b)
    assert [x.decode() for x in answer["label"].numpy()] == [e["label"] for e in expected]
    np.testing.assert_allclose(
        answer["probabilities"].numpy(), [e["probabilities"] for e in expected], atol=1e-5
    )
