"""The fine-tuning commands never lose what a user has (issue 29): `finetune-glue` into a
pretraining run's folder is refused before anything is written (it deleted `checkpoints/` and
overwrote `model.keras`); a full disk is one line with no half-written file; `finetune-squad`
checks its predict file before training and saves the model before predicting."""

import hashlib
import json
import os
import subprocess
import sys
import time

import pytest
from full_disk import full_disk

import albert_keras as ak
from albert_keras.jobs import finetune_squad_job as squad_job
from albert_keras_cli.main import main
from albert_keras_contracts.output_folder import OutputFolder

SPM = "vocab/30k-clean.reconstructed.model"
SENTENCES = ["a gorgeous , witty , seductive movie .", "dull and lifeless .",
             "it 's a charming and often affecting journey .", "the plot is nothing new ."]  # fmt: skip


def _checksums(folder):
    return {
        os.path.relpath(os.path.join(root, name), folder): hashlib.sha256(
            open(os.path.join(root, name), "rb").read()
        ).hexdigest()
        for root, _, names in os.walk(folder)
        for name in names
    }


def _save_tiny_model(folder, shared_data):
    folder.mkdir(parents=True, exist_ok=True)
    ak.AlbertBackbone(vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=16,
                      hidden_dim=32, intermediate_dim=64,
                      max_sequence_length=32).save(folder / "backbone.keras")  # fmt: skip
    (folder / "spm.model").write_bytes((shared_data / SPM).read_bytes())
    return folder / "backbone.keras"


@pytest.fixture(scope="module")
def small_glue(tmp_path_factory):
    """SST-2 in GLUE's layout, 32 training and 16 dev sentences: seconds to fine-tune."""
    root = tmp_path_factory.mktemp("glue")
    (root / "SST-2").mkdir()
    for split, rows in (("train", 32), ("dev", 16)):
        lines = [f"{SENTENCES[i % 4]}\t{i % 2}" for i in range(rows)]
        (root / "SST-2" / f"{split}.tsv").write_text("sentence\tlabel\n" + "\n".join(lines) + "\n")
    return root


def _glue_argv(glue_dir, model, output_dir, *extra):
    return ["finetune-glue", "--task", "SST-2", "--glue_dir", str(glue_dir), "--model",
            str(model), "--output_dir", str(output_dir), "--max_steps", "4", "--batch_size", "8",
            "--max_seq_length", "32", "--eval_every", "2", *extra]  # fmt: skip


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_finetune_glue_into_a_pretraining_folder_is_refused(
    small_glue, shared_data, tmp_path, capsys
):
    # A pretraining run's folder: its model, checkpoints and manifest.
    run = tmp_path / "run"
    with OutputFolder(run, "albert-keras pretrain", {"seed": 1}) as folder:
        model = _save_tiny_model(run, shared_data)
        (run / "checkpoints").mkdir()
        (run / "checkpoints" / "ckpt-10.npz").write_bytes(b"the pretraining state")
        for name in ("backbone.keras", "spm.model", "checkpoints"):
            folder.claim(name)
    before = _checksums(run)
    other = tmp_path / "other_model"
    _save_tiny_model(other, shared_data)
    for argv, message in (
        # The model's own folder: --overwrite does not make it the fine-tuning's.
        (_glue_argv(small_glue, model, run), "lies inside --output_dir"),
        (_glue_argv(small_glue, model, run, "--overwrite"), "lies inside --output_dir"),
        # Another model, into the pretraining folder: not this command's folder.
        (_glue_argv(small_glue, other / "backbone.keras", run, "--overwrite"),
         "holds the output of `albert-keras pretrain`, not of `albert-keras finetune-glue`"),
    ):  # fmt: skip
        assert main(argv) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error
        assert _checksums(run) == before  # the checkpoints and the model, byte for byte

    # Into a folder of its own: written, with no checkpoints/ left to delete.
    out = tmp_path / "finetuned"
    assert main(_glue_argv(small_glue, model, out)) == 0
    assert sorted(os.listdir(out)) == [
        ".albert-keras.json", "dev_predictions", "metrics.json", "model.keras",
    ]  # fmt: skip
    manifest = json.loads((out / ".albert-keras.json").read_text())
    assert manifest["command"] == "albert-keras finetune-glue"
    assert sorted(manifest["files"]) == ["dev_predictions", "metrics.json", "model.keras"]
    # Other arguments into it: refused (--overwrite would replace its own files).
    assert main(_glue_argv(small_glue, model, out, "--seed", "7")) == 2
    assert "other arguments (seed: 12345 before, 7 now)" in capsys.readouterr().err


@pytest.mark.slow  # a start-up of TensorFlow in a subprocess: ~30 s on 2 quiet cores
def test_a_full_disk_in_finetune_glue_is_one_line_and_leaves_no_partial_file(
    small_glue, shared_data, tmp_path
):
    with full_disk(tmp_path) as disk:
        model = _save_tiny_model(disk.root / "run", shared_data)
        before = _checksums(disk.root / "run")
        out = disk.root / "finetuned"
        job = subprocess.Popen(
            [sys.executable, "-m", "albert_keras_cli", *_glue_argv(small_glue, model, out)],
            env={**disk.env, "TF_CPP_MIN_LOG_LEVEL": "3"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 300
        manifest = out / ".albert-keras.json"
        while not manifest.exists() and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        disk.fill()  # before anything but the manifest is written: every output fails
        _, stderr = job.communicate(timeout=300)
        lines = [line for line in stderr.splitlines() if line.startswith("albert-keras")]
        assert job.returncode == 2 and "Traceback" not in stderr, stderr  # was 139: a segfault
        assert len(lines) == 1 and "no space left on the device" in lines[0], stderr
        assert str(out) in lines[0]
        names = [name for _, _, files in os.walk(out) for name in files]
        assert not [n for n in names if ".tmp-" in n or n.endswith(".h5")], names
        assert _checksums(disk.root / "run") == before


# === finetune-squad ===


def _squad_file(path, version, paragraphs):
    path.write_text(json.dumps({"version": version, "data": [{"title": "t", "paragraphs":
                                                              paragraphs}]}))  # fmt: skip
    return path


TRAIN = [{"context": "The cat sat on the mat in the kitchen.", "qas": [
    {"id": f"q{i}", "question": "Where did the cat sit?", "is_impossible": False,
     "answers": [{"text": "on the mat", "answer_start": 12}]} for i in range(8)]}]  # fmt: skip


@pytest.fixture(scope="module")
def squad_model(tmp_path_factory, shared_data):
    return _save_tiny_model(tmp_path_factory.mktemp("squad_model"), shared_data)


def test_a_predict_file_with_no_usable_question_is_refused_before_training(
    squad_model, tmp_path, capsys
):
    train = _squad_file(tmp_path / "train.json", "v2.0", TRAIN)
    # Questions over empty contexts only: nothing to predict (UnboundLocalError after training).
    empty = [{"context": "", "qas": [{"id": "e1", "question": "Why?", "is_impossible": True,
                                      "answers": []}]}]  # fmt: skip
    predict = _squad_file(tmp_path / "dev.json", "v2.0", empty)
    argv = ["finetune-squad", "--version", "2.0", "--train_file", str(train), "--predict_file",
            str(predict), "--model", str(squad_model), "--output_dir", str(tmp_path / "out"),
            "--max_seq_length", "32", "--doc_stride", "16", "--max_query_length", "8",
            "--batch_size", "4", "--epochs", "1", "--strategy", "cpu"]  # fmt: skip
    assert main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1, error
    # (The question is read, kept to be scored as "", but gives no feature to predict.)
    assert f"--predict_file {predict}: no usable question (1 read, 0 features" in error[0]
    assert not (tmp_path / "out").exists()  # refused before anything was trained or written


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_the_model_is_saved_before_predicting(squad_model, tmp_path, monkeypatch):
    train = _squad_file(tmp_path / "train.json", "v2.0", TRAIN)

    def broken(*args, **kwargs):
        raise RuntimeError("the prediction step failed")

    monkeypatch.setattr(squad_job, "squad_predictions", broken)
    with pytest.raises(RuntimeError, match="prediction step failed"):
        squad_job.finetune_squad(version="2.0", train_file=train, predict_file=train,
                                 init_from=squad_model, output_dir=tmp_path / "out",
                                 max_seq_length=32, doc_stride=16, max_query_length=8,
                                 batch_size=4, epochs=1, strategy="cpu")  # fmt: skip
    import keras

    answerer = keras.saving.load_model(tmp_path / "out" / "model.keras")
    assert isinstance(answerer, ak.AlbertQuestionAnswerer)
    assert int(answerer.optimizer.iterations.numpy()) == 2  # fine-tuned: 8 features / 4
