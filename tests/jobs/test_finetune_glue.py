"""`albert-keras finetune-glue` end to end on GLUE-layout files (the shared_data fixture's SST-2,
written from book sentences with a learnable verdict word) with a tiny model."""

import csv
import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import albert_keras as ak
from albert_keras.glue import read_glue_tsv
from albert_keras.jobs import finetune_glue_job as job
from albert_keras_cli import main as cli

SPM = "vocab/30k-clean.reconstructed.model"
DISTRIBUTED_CHECK = pathlib.Path(__file__).parents[1] / "training" / "glue_distributed_check.py"


def _tiny_backbone():
    # L2 H64 E32 over the 30k release vocabulary: trains a few hundred steps in seconds.
    return ak.AlbertBackbone(
        vocabulary_size=30000,
        num_layers=2,
        num_heads=2,
        embedding_dim=32,
        hidden_dim=64,
        intermediate_dim=128,
        max_sequence_length=64,
    )


def _read_tsv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory, shared_data):
    """A saved tiny backbone with the release SentencePiece model beside it (as spm.model)."""
    folder = tmp_path_factory.mktemp("model")
    _tiny_backbone().save(folder / "backbone.keras")
    (folder / "spm.model").symlink_to(shared_data / SPM)
    return folder / "backbone.keras"


@pytest.fixture(scope="module")
def glue_dir(tmp_path_factory, shared_data):
    """GLUE's layout: the fixture's SST-2 train/dev, and a small file in GLUE's test format."""
    root = tmp_path_factory.mktemp("glue")
    (root / "SST-2").mkdir()
    for split in ("train", "dev"):
        (root / "SST-2" / f"{split}.tsv").symlink_to(
            shared_data / "glue" / "SST-2" / f"{split}.tsv"
        )
    sentences = ["a gorgeous , witty , seductive movie .", "dull and lifeless .", "it 's fine ."]
    rows = [f"{i}\t{s}" for i, s in enumerate(sentences)]
    (root / "SST-2" / "test.tsv").write_text("index\tsentence\n" + "\n".join(rows) + "\n")
    return root


@pytest.fixture(scope="module")
def sst2_run(saved_model, glue_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("sst2")
    argv = ["finetune-glue", "--task", "SST-2", "--glue_dir", str(glue_dir),
            "--init_from", str(saved_model), "--output_dir", str(out), "--max_steps", "200",
            "--batch_size", "32", "--max_seq_length", "64", "--learning_rate", "3e-4",
            "--eval_every", "100", "--seed", "1"]  # fmt: skip
    # 3e-4: without bias correction AdamWeightDecay's steps are ~2-6x Adam's over these 200
    # updates; at 1e-3 this tiny model stays on the majority class (0.509 from 3 inits; 3e-4
    # reaches 0.70-0.73).
    assert cli.main(argv) == 0
    return out


def test_tiny_model_beats_the_majority_class_on_sst2_dev(sst2_run, glue_dir):
    summary = json.loads((sst2_run / "metrics.json").read_text())
    dev = read_glue_tsv(glue_dir, "SST-2", "dev")
    majority = max(dev.label_counts().values()) / len(dev)
    assert (summary["task"], summary["split"], summary["num_examples"]) == ("SST-2", "dev", 300)
    assert summary["metrics"]["accuracy"] > majority + 0.1
    assert summary["steps_trained"] == 200 and not summary["stopped_early"]
    assert [h["step"] for h in summary["history"]] == [100, 200]
    # metrics.json scores the reloaded best checkpoint: the same number as during training.
    best = max(summary["history"], key=lambda h: h["accuracy"])
    assert summary["best_step"] == best["step"]
    assert summary["metrics"]["accuracy"] == pytest.approx(best["accuracy"], abs=1e-9)
    assert summary["hyperparameters"]["warmup_steps"] == round(1256 * 200 / 20935)  # official share

    # The dev prediction file is GLUE's format and gives the reported accuracy.
    rows = _read_tsv(sst2_run / "dev_predictions" / "SST-2.tsv")
    assert rows[0] == ["index", "prediction"] and len(rows) == 301
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(300)]
    predicted = np.array([int(r[1]) for r in rows[1:]])
    assert np.mean(predicted == dev.labels) == pytest.approx(summary["metrics"]["accuracy"])
    # The submission file covers the test file's index column.
    submission = _read_tsv(sst2_run / "submission" / "SST-2.tsv")
    assert submission[0] == ["index", "prediction"]
    assert [r[0] for r in submission[1:]] == ["0", "1", "2"]
    assert {r[1] for r in submission[1:]} <= {"0", "1"}
    assert sorted(p.name for p in sst2_run.iterdir()) == [
        ".albert-keras.json", "dev_predictions", "metrics.json", "model.keras", "submission",
    ]  # fmt: skip


def test_saved_classifier_reloads_and_reproduces_the_predictions(sst2_run, glue_dir, shared_data):
    model = keras.saving.load_model(sst2_run / "model.keras")  # no custom_objects
    assert isinstance(model, ak.AlbertClassifier) and model.num_classes == 2
    # Trained with the official AdamWeightDecay under warmup + linear decay.
    assert type(model.optimizer) is ak.optimizers.AdamWeightDecay
    schedule = keras.optimizers.schedules.deserialize(model.optimizer.get_config()["learning_rate"])
    assert isinstance(schedule, ak.optimizers.WarmupLinearDecay)
    dev = read_glue_tsv(glue_dir, "SST-2", "dev")
    encoder = ak.glue.GlueEncoder(shared_data / SPM, 64)
    inputs = encoder(dev.text_a[:64])
    predicted = model.predict(inputs, verbose=0).argmax(-1)
    rows = _read_tsv(sst2_run / "dev_predictions" / "SST-2.tsv")[1:65]
    assert predicted.tolist() == [int(r[1]) for r in rows]


MNLI_COLUMNS = ["index", "promptID", "pairID", "genre", "s1_binary_parse", "s2_binary_parse",
                "s1_parse", "s2_parse", "sentence1", "sentence2"]  # fmt: skip
PAIRS = [
    ("A man plays a guitar.", "A man plays music.", "entailment"),
    ("A man plays a guitar.", "A woman sleeps.", "contradiction"),
    ("A child runs in a park.", "The child is happy.", "neutral"),
]


def _mnli_glue_dir(root):
    """GLUE's MNLI layout (train 12 columns, dev 16, test 10) and the AX diagnostic file."""
    (root / "MNLI").mkdir(parents=True)
    (root / "diagnostic").mkdir()

    def write(name, header_extra, rows, labelled):
        lines = ["\t".join(MNLI_COLUMNS + header_extra)]
        for i in range(rows):
            a, b, label = PAIRS[i % 3]
            labels = [label] * len(header_extra) if labelled else []
            lines.append(
                "\t".join([str(i), "1", "2", "fiction", "(", "(", "(", "(", a, b, *labels])
            )
        (root / "MNLI" / name).write_text("\n".join(lines) + "\n")

    # Each file's rows a multiple of 3, the batch size below: every batch has one shape, so
    # under XLA the predict step compiles once (not once per last-batch size).
    write("train.tsv", ["label1", "gold_label"], 24, True)
    dev_labels = ["label1", "label2", "label3", "label4", "label5", "gold_label"]
    write("dev_matched.tsv", dev_labels, 9, True)
    write("dev_mismatched.tsv", dev_labels, 6, True)
    write("test_matched.tsv", [], 12, False)
    write("test_mismatched.tsv", [], 15, False)
    rows = ["index\tsentence1\tsentence2"] + [f"{i}\t{a}\t{b}" for i, (a, b, _) in enumerate(PAIRS)]
    (root / "diagnostic" / "diagnostic.tsv").write_text("\n".join(rows) + "\n")


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_mnli_with_early_stopping_under_xla_through_the_python_api(tmp_path, tiny_spm):
    """MNLI's two dev splits, its test files and AX; early stopping after the warmup. Under XLA
    (what GPU / TPU runs get by default, "auto"): the train, eval and predict steps, the
    AdamWeightDecay update and the fused GELU must all compile with it."""
    _mnli_glue_dir(tmp_path / "glue")
    # A learning rate of 0 leaves the weights as they are, so the dev score never improves:
    # with patience 1 training stops at the first evaluation after the warmup (4 steps).
    # A 1-layer H16 backbone over the tiny vocabulary: what is checked here is the job, not
    # the model (the SST-2 run above checks learning with the release vocabulary).
    backbone = ak.AlbertBackbone(
        vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=16,
    )  # fmt: skip
    out = tmp_path / "out"
    summary = job.finetune_glue(
        task="MNLI", glue_dir=tmp_path / "glue", init_from=backbone, output_dir=out,
        spm_model=tiny_spm, jit_compile="true",
        max_steps=40, batch_size=3, max_seq_length=16, learning_rate=0.0, eval_every=2,
        patience=1, seed=0,
    )  # fmt: skip
    assert summary["hyperparameters"]["warmup_steps"] == 4
    assert summary["stopped_early"] and summary["steps_trained"] == 6
    assert [h["step"] for h in summary["history"]] == [2, 4, 6] and summary["best_step"] == 2
    assert summary["history"][0]["accuracy"] == summary["history"][2]["accuracy"]
    assert (summary["split"], summary["num_examples"], summary["train_examples"]) == (
        "dev_matched", 9, 24,
    )  # fmt: skip
    mismatched = summary["other_splits"]["dev_mismatched"]
    assert mismatched["num_examples"] == 6 and set(mismatched["metrics"]) == {"accuracy"}
    assert json.loads((out / "metrics.json").read_text())["best_step"] == 2

    nli = {"entailment", "neutral", "contradiction"}
    for path, rows in [("dev_predictions/MNLI-m.tsv", 9), ("dev_predictions/MNLI-mm.tsv", 6),
                       ("submission/MNLI-m.tsv", 12), ("submission/MNLI-mm.tsv", 15),
                       ("submission/AX.tsv", 3)]:  # fmt: skip
        table = _read_tsv(out / path)
        assert table[0] == ["index", "prediction"] and len(table) == rows + 1, path
        assert [r[0] for r in table[1:]] == [str(i) for i in range(rows)]
        assert {r[1] for r in table[1:]} <= nli
    # The matched accuracy is the dev prediction file's.
    predicted = [r[1] for r in _read_tsv(out / "dev_predictions/MNLI-m.tsv")[1:]]
    truth = [PAIRS[i % 3][2] for i in range(9)]
    accuracy = np.mean([p == t for p, t in zip(predicted, truth)])
    assert summary["metrics"]["accuracy"] == pytest.approx(accuracy)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--task", "SQuAD"], "unknown GLUE task 'SQuAD'"),
        (["--task", "AX"], "AX is prediction-only: fine-tune MNLI"),
        (["--glue_dir", "{tmp}/nowhere"], "nowhere: --glue_dir not found"),
        (["--task", "CoLA"], "no CoLA folder"),
        (["--model", "{tmp}/missing.keras"], "missing.keras: --model not found"),
        (["--model", "{tmp}/junk.keras"], "junk.keras: not a .keras file: not a whole zip archive"),
        (["--model", "{tmp}/dense.keras"], "dense.keras: a Sequential, not an AlbertBackbone"),
        (["--model", "{tmp}/lonely/backbone.keras"], "no SentencePiece model beside"),
        (["--spm_model", "{tmp}/junk.keras"], "junk.keras: not a usable ALBERT SentencePiece"),
        (["--max_seq_length", "128"], "--max_seq_length 128 exceeds the model's 64 positions"),
        (["--batch_size", "-4"], "--batch_size must be positive"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(args, message, tmp_path, saved_model, glue_dir, capsys):
    (tmp_path / "junk.keras").write_text("not a zip")
    keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]).save(tmp_path / "dense.keras")
    (tmp_path / "lonely").mkdir()
    (tmp_path / "lonely" / "backbone.keras").symlink_to(saved_model)
    base = {"--task": "SST-2", "--glue_dir": str(glue_dir), "--model": str(saved_model),
            "--output_dir": str(tmp_path / "out"), "--max_seq_length": "64"}  # fmt: skip
    given = dict(zip(args[::2], (a.format(tmp=tmp_path) for a in args[1::2])))
    argv = ["finetune-glue"] + [x for item in {**base, **given}.items() for x in item]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("albert-keras finetune-glue: error: ") and "\n" not in error
    assert message in error
    assert not (tmp_path / "out" / "model.keras").exists()


@pytest.mark.slow  # TensorFlow started in a subprocess, then three fine-tunes: ~1 min
def test_fine_tuning_across_two_replicas(tmp_path, tiny_spm):
    # --strategy as pretrain has it: a MirroredStrategy over two devices (two logical CPUs in
    # glue_distributed_check.py, standing in for two GPUs).
    result = subprocess.run(
        [sys.executable, str(DISTRIBUTED_CHECK), str(tiny_spm), str(tmp_path)],
        check=False,  # the assertion below shows stderr
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("REPORT ")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    report = json.loads(lines[-1][len("REPORT ") :])
    one, two, trained = report["frozen_one"], report["frozen_two"], report["trained_two"]
    assert (one["replicas"], two["replicas"], trained["replicas"]) == (1, 2, 2)
    # Learning rate 0: one device and two compute the same classifier, evaluated alike.
    assert two["predictions"] == one["predictions"]
    for got, want in zip(two["weights"], one["weights"]):
        np.testing.assert_allclose(got, want, atol=1e-7)
    assert [h["step"] for h in two["history"]] == [2, 4]
    assert [h["accuracy"] for h in two["history"]] == [h["accuracy"] for h in one["history"]]
    # Trained across the two replicas: every step, finite weights, a head that moved.
    assert trained["steps_trained"] == 4 and trained["finite"]
    assert not np.allclose(trained["weights"][0], one["weights"][0])
    assert report["odd_batch"] == "--batch_size=3 is not divisible by 2 replicas"
