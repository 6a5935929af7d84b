"""What a user opening the notebooks on Colab meets first: how the package is installed, the
runtime the notebooks ask for, no placeholder left, and paths that chain from one notebook to
the next."""

import ast
import pathlib
import re
import subprocess
import sys
import types

import nbformat
import pytest

from albert_keras_cli import notebook_places
from albert_keras_cli.keras_backend import TENSORFLOW_TPU_INSTALL

COLAB = pathlib.Path(__file__).resolve().parents[2] / "colab"
NOTEBOOKS = sorted(COLAB.glob("*.ipynb"))
# Placeholders a user would have to notice and replace: an org, owner or bucket of nobody's.
PLACEHOLDER = re.compile(r"YOUR[-_]|OWNER/|<(owner|org|user|bucket|repo)>|example\.(com|org)")


def settings_of(path: pathlib.Path) -> dict:
    """The notebook's `parameters` cell, evaluated (its settings are literals)."""
    notebook = nbformat.read(path, as_version=4)
    (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    return {
        node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body
    }


def test_the_three_notebooks_are_checked():
    assert [p.name for p in NOTEBOOKS] == [
        "finetune_glue.ipynb",
        "finetune_squad.ipynb",
        "pretrain_albert.ipynb",
    ]


@pytest.mark.parametrize("path", [*NOTEBOOKS, COLAB / "README.md"], ids=lambda p: p.name)
def test_no_placeholder_url_or_path(path):
    text = path.read_text(encoding="utf-8")
    assert not PLACEHOLDER.search(text), PLACEHOLDER.search(text)
    # Every link goes somewhere real: no badge or clone of a repository that is not there.
    for url in re.findall(r"https?://[^\s\"'`)\]>]+", text):
        assert "github.com" not in url or "/albert-keras" not in url, url


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_metadata_asks_for_a_tpu_runtime(path):
    metadata = nbformat.read(path, as_version=4).metadata
    assert metadata["accelerator"] == "TPU"
    assert metadata["colab"]["gpuType"] == "V28"  # what Colab writes for a TPU v2-8 runtime
    assert metadata["kernelspec"]["name"] == "python3"


def test_pretraining_output_is_the_fine_tuning_default(tmp_path, monkeypatch):
    pretraining = settings_of(COLAB / "pretrain_albert.ipynb")
    written = f"{pretraining['WORK_DIR']}/pretrain"  # where its save cell writes
    assert notebook_places.LOCAL_PRETRAINED == f"{written}/model.keras"
    squad = settings_of(COLAB / "finetune_squad.ipynb")
    assert settings_of(COLAB / "finetune_glue.ipynb")["PRETRAINED"] == "auto"
    assert (squad["PRETRAINED"], squad["SPM_MODEL"]) == ("auto", "")  # spm.model beside it
    source = "\n".join(c.source for c in nbformat.read(COLAB / "pretrain_albert.ipynb", 4).cells)
    assert 'out = work / "pretrain"' in source and 'pretrainer.save(out / "model.keras")' in source
    assert 'shutil.copyfile(spm_model, out / "spm.model")' in source
    assert 'save_folder(SAVE_TO, "pretrain")' in source
    # A fresh runtime finds the pretraining notebook's copy where "auto" put it on Drive.
    drive = tmp_path / "MyDrive"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="PRETRAINED = 'auto': no pretrained model"):
        notebook_places.pretrained_model("auto", str(drive))
    drive.mkdir()  # mounted
    saved = pathlib.Path(notebook_places.save_folder("auto", "pretrain", str(drive)))
    assert saved == drive / "albert-keras" / "pretrain"
    saved.mkdir(parents=True)
    for name in ("model.keras", "spm.model"):
        (saved / name).write_bytes(b"")
    found = notebook_places.pretrained_model("auto", str(drive))
    assert found == str(saved / "model.keras")
    assert notebook_places.sentencepiece_beside(found) == str(saved / "spm.model")
    (tmp_path / written).mkdir(parents=True)  # this runtime's own run comes first
    (tmp_path / written / "model.keras").write_bytes(b"")
    assert notebook_places.pretrained_model("auto", str(drive)) == f"{written}/model.keras"
    assert notebook_places.save_folder("auto", "glue", str(tmp_path / "not-mounted")) == ""


def test_several_model_files_are_told_apart(tmp_path):
    for name in ("books8k.model", "other.model"):
        (tmp_path / name).write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="2 .model files beside .* set SPM_MODEL"):
        notebook_places.sentencepiece_beside(tmp_path / "model.keras")
    (tmp_path / "model.spiece.model").write_bytes(b"")  # convert's, named after the model
    assert notebook_places.sentencepiece_beside(tmp_path / "model.keras").endswith(
        "model.spiece.model"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_notebook_keeps_its_work_or_says_it_will_not(path):
    assert settings_of(path)["SAVE_TO"] == "auto"  # Drive's folder when it is mounted
    code = [c.source for c in nbformat.read(path, 4).cells if c.cell_type == "code"]
    last = code[-1]
    assert "if save_to:" in last and "tf.io.gfile.copy(" in last and "tf.io.gfile.makedirs(" in last
    # The training cell says, before it trains, that nothing will be kept.
    (fit_cell,) = [c for c in code if ".fit(" in c]
    assert fit_cell.index("lost_with_the_runtime(save_to, IN_COLAB)") < fit_cell.index(".fit(")
    assert notebook_places.lost_with_the_runtime("", in_colab=True).startswith("NOT SAVED")
    assert notebook_places.lost_with_the_runtime("/content/drive/MyDrive/x", True) is None


# === The install cell, run as on Colab ===


def run_install_cell(path: pathlib.Path, monkeypatch, **settings) -> dict:
    """Runs the notebook's install cell with `google.colab` importable (so IN_COLAB is true) and
    pip recorded, not run; returns what it did."""
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    done = {"pip": [], "mounted": []}
    colab = types.ModuleType("google.colab")
    colab.drive = types.SimpleNamespace(mount=done["mounted"].append)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setattr(subprocess, "run", lambda argv, check: done["pip"].append(argv[1:]))
    namespace = {**settings_of(path), **settings}
    # The cell's own code, as Colab runs it (a test of the notebook, not of a copy of it).
    exec(compile(code[1].source, f"{path.name} install cell", "exec"), namespace)  # noqa: S102
    return {**done, "IN_COLAB": namespace["IN_COLAB"], "BACKEND": namespace["BACKEND"]}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_install_cell_without_a_source_stops_in_one_line(path, monkeypatch):
    with pytest.raises(SystemExit) as stop:
        run_install_cell(path, monkeypatch)
    assert str(stop.value) == (
        "Set REPO_URL (your albert-keras repository) or PACKAGE_PATH (a wheel or folder on Drive) "
        "in the settings cell, then run all again."
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_install_cell_installs_what_the_user_set(path, monkeypatch):
    pip = ["-m", "pip", "install", "-q"]
    done = run_install_cell(path, monkeypatch, REPO_URL="https://github.com/a/b", REPO_REF="v1")
    assert done["pip"] == [[*pip, "git+https://github.com/a/b@v1"]] and done["IN_COLAB"]
    wheel = "/content/drive/MyDrive/albert_keras-0.1.0-py3-none-any.whl"
    done = run_install_cell(path, monkeypatch, PACKAGE_PATH=wheel, REPO_URL="https://x/y")
    assert done["pip"] == [[*pip, wheel]] and done["mounted"] == ["/content/drive"]
    done = run_install_cell(path, monkeypatch, PACKAGE_PATH="/content/albert-keras")
    assert done["pip"] == [[*pip, "/content/albert-keras"]] and done["mounted"] == []
    # tensorflow-tpu: the line the notebook shows, for the pinned TensorFlow.
    done = run_install_cell(path, monkeypatch, PACKAGE_PATH="/p", TENSORFLOW_TPU=True)
    assert done["pip"][1] == [*pip, *TENSORFLOW_TPU_INSTALL.split()[2:]]
    text = "\n".join(c.source for c in nbformat.read(path, 4).cells)
    assert f"`{TENSORFLOW_TPU_INSTALL}`" in text
