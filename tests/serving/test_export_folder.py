"""`albert-keras export MODEL DIR` writes only into a folder it owns: never removes a user's
files or the model it exports, refuses files and unwritable places in one line, and a full disk
leaves no partial folder."""

import contextlib
import errno
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

import keras
import pytest
import tensorflow as tf

from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras_cli.main import main
from albert_keras_contracts.output_folder import MANIFEST, OutputFolder

SAVED_MODEL = ["assets", "assets.extra", "fingerprint.pb", "saved_model.pb", "variables"]


@pytest.fixture(scope="module")
def model_file(shared_data, tmp_path_factory):
    keras.utils.set_random_seed(3)
    backbone = AlbertBackbone(
        vocabulary_size=30000,
        num_layers=1,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=16,
    )
    vocabulary = str(shared_data / "vocab" / "30k-clean.reconstructed.model")
    preprocessor = AlbertPreprocessor(AlbertTokenizer(vocabulary), sequence_length=16)
    path = tmp_path_factory.mktemp("export_model") / "model.keras"
    AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor).save(path)
    return path


def _digest(root):
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
        for p in sorted(pathlib.Path(root).rglob("*"))
    }


def _refused(argv, capsys) -> str:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("albert-keras export: error: ") and error.count("\n") == 1, error
    return error


@pytest.mark.slow  # three exports, ~30 s each on a busy 2-core machine
def test_its_own_folder_is_redone_and_overwritten_only_with_the_flag(model_file, tmp_path, capsys):
    out = tmp_path / "served"
    assert main(["export", str(model_file), str(out)]) == 0
    assert sorted(os.listdir(out)) == sorted([MANIFEST, *SAVED_MODEL])
    assert json.loads((out / MANIFEST).read_text())["command"] == "albert-keras export"
    (out / "NOTES.txt").write_text("mine\n")  # a user's note dropped in later
    assert main(["export", str(model_file), str(out)]) == 0  # the same export: redone
    other = tmp_path / "other.keras"
    shutil.copyfile(model_file, other)
    error = _refused(["export", str(other), str(out)], capsys)
    assert "holds an earlier `albert-keras export` run with other arguments (model: " in error
    assert main(["export", str(other), str(out), "--overwrite"]) == 0
    assert sorted(os.listdir(out)) == sorted([MANIFEST, "NOTES.txt", *SAVED_MODEL])
    assert (out / "NOTES.txt").read_text() == "mine\n"
    served = tf.saved_model.load(str(out))
    assert set(served.signatures) == {"serving_default", "pairs", "tokenize"}


def test_the_models_own_folder_and_other_outputs_are_left_alone(model_file, tmp_path, capsys):
    # The case: `export run/model.keras run/` deleted the very model it exports.
    run = tmp_path / "run"
    run.mkdir()
    shutil.copyfile(model_file, run / "model.keras")
    (run / "notes.txt").write_text("mine\n")
    before = _digest(run)
    error = _refused(["export", str(run / "model.keras"), str(run)], capsys)
    # Refused as what it reads before the folder is looked at (`check_apart`).
    assert f"--model {run / 'model.keras'} lies inside --output_dir {run}: choose" in error
    assert _digest(run) == before
    pretrained = tmp_path / "pretrained"
    with OutputFolder(pretrained, "albert-keras pretrain", {"seed": 1}) as folder:
        shutil.copyfile(model_file, folder.claim("model.keras"))
    before = _digest(pretrained)
    error = _refused(["export", str(pretrained / "model.keras"), str(pretrained)], capsys)
    assert f"--model {pretrained / 'model.keras'} lies inside --output_dir {pretrained}" in error
    assert _digest(pretrained) == before


def test_a_file_in_the_way_is_one_line(model_file, tmp_path, capsys):
    target = tmp_path / "served"
    target.write_text("a file, not a folder\n")
    error = _refused(["export", str(model_file), str(target)], capsys)
    assert f"{target} is a file, not a folder" in error
    assert target.read_text() == "a file, not a folder\n"


def test_bad_vocabulary_paths_are_one_true_line(model_file, tmp_path, capsys):
    error = _refused(
        ["export", str(model_file), str(tmp_path / "out"), "--spm_model", str(tmp_path)], capsys
    )
    assert f"--spm_model {tmp_path} is a folder: give the SentencePiece .model file" in error
    missing = tmp_path / "missing.model"
    error = _refused(
        ["export", str(model_file), str(tmp_path / "out"), "--spm_model", str(missing)], capsys
    )
    assert f"--spm_model {missing}: no such file" in error
    assert not (tmp_path / "out").exists()


@contextlib.contextmanager
def _read_only_folder(tmp_path):
    """A read-only folder: a tmpfs remounted read-only (root), else a chmod (others)."""
    folder = tmp_path / "read_only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)],
                             capture_output=True, check=False).returncode == 0  # fmt: skip
    if not mounted:
        pytest.skip("root without mount rights: no read-only folder to try")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def test_a_read_only_parent_is_one_line(model_file, tmp_path, capsys):
    with _read_only_folder(tmp_path) as parent:
        error = _refused(["export", str(model_file), str(parent / "served")], capsys)
    assert f"{parent / 'served'}: not writable (" in error and "choose a folder you can" in error


def test_a_full_disk_is_one_line_and_leaves_no_folder(model_file, tmp_path, capsys, monkeypatch):
    # TensorFlow's writer, as it fails on a full disk (the real one: the next test).
    def full(self, path, **kwargs):
        os.makedirs(os.path.join(path, "variables"))
        raise tf.errors.ResourceExhaustedError(None, None, f"{path}/saved_model.pb; No space")

    # `keras.export.ExportArchive()` makes the backend's subclass: patch that one.
    monkeypatch.setattr(type(keras.export.ExportArchive()), "write_out", full)
    out = tmp_path / "served"
    error = _refused(["export", str(model_file), str(out)], capsys)
    assert f"{out}: no space left on the device; free some space and rerun" in error
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # a fresh process loads TensorFlow and writes until the disk is full
def test_a_real_full_disk_is_one_line_and_leaves_no_folder(model_file, tmp_path):
    sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
    from full_disk import full_disk

    with full_disk(tmp_path, size_mb=8) as disk:
        if disk.kind != "tmpfs":
            pytest.skip("TensorFlow writes the SavedModel in C++: only a real full disk stops it")
        disk.fill()
        out = disk.root / "served"
        result = subprocess.run(
            [sys.executable, "-m", "albert_keras_cli.main", "export", str(model_file), str(out)],
            capture_output=True,
            text=True,
            check=False,
            cwd=pathlib.Path(__file__).parents[2],
        )
        left = os.listdir(disk.root)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.endswith(
        f"albert-keras export: error: {out}: no space left on the device; free some space and "
        "rerun\n"
    )
    assert left == []


def test_os_errors_of_tensorflow_are_named():
    from albert_keras.serving.export_saved_model import _as_os_error

    error = _as_os_error(tf.errors.PermissionDeniedError(None, None, "denied"), "x")
    assert error.errno == errno.EACCES and error.filename == "x"
