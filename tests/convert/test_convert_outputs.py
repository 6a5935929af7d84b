"""What `albert-keras convert` writes, and what it never replaces: the vocabulary named after
`--output`, existing outputs refused without `--overwrite`, `--to` folders owned by convert,
keras-hub presets written without removing anything, and one true line for bad inputs."""

import hashlib
import json
import pathlib

import pytest
from convert_helpers import write_tf1_checkpoint_like_official
from release_tarball import train_tiny_sentencepiece, write_release_tarball

from albert_keras_cli.main import main
from albert_keras_contracts.output_folder import MANIFEST, OutputFolder


def _release(folder, config, weights, text):
    """A release tarball with its own vocabulary (trained on `text`)."""
    folder.mkdir()

    def write_checkpoint(release):
        (release / "albert_config.json").write_text(json.dumps(config))
        write_tf1_checkpoint_like_official(weights, release / "model.ckpt-best")

    spm_model = train_tiny_sentencepiece(folder / "30k-clean", text, vocab_size=40)
    return write_release_tarball(folder / "albert.tar.gz", write_checkpoint, spm_model), spm_model


@pytest.fixture
def releases(tmp_path, official_config, official_weights):
    first = "the cat sat on the mat . a dog ran in the park . " * 20
    second = "rain fell over quiet hills ; birds sang songs at dawn . " * 20
    return [
        _release(tmp_path / name, official_config, official_weights, text)
        for name, text in (("first", first), ("second", second))
    ]


def _convert(capsys, *argv):
    code = main(["convert", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def _refused(capsys, *argv) -> str:
    code, _, err = _convert(capsys, *argv)
    assert code == 2 and err.startswith("albert-keras convert: error: ") and err.count("\n") == 1
    return err


def _digest(root):
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
        for p in sorted(pathlib.Path(root).rglob("*"))
    }


def test_two_conversions_into_one_folder_keep_their_own_vocabularies(tmp_path, capsys, releases):
    (first, first_spm), (second, second_spm) = releases
    out = tmp_path / "models"
    assert _convert(capsys, "--from", "tf1", first, "--output", out / "a.keras")[0] == 0
    assert _convert(capsys, "--from", "tf1", second, "--output", out / "b.keras")[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "a.keras",
        "a.spiece.model",
        "b.keras",
        "b.spiece.model",
    ]
    assert (out / "a.spiece.model").read_bytes() == first_spm.read_bytes()
    assert (out / "b.spiece.model").read_bytes() == second_spm.read_bytes()
    # The fine-tuning jobs find each model's own vocabulary beside it.
    from albert_keras.training.model_files import find_spm_model

    assert find_spm_model(str(out / "b.keras"), None) == out / "b.spiece.model"
    # Converted again from a.keras, the vocabulary named after it is the one carried along.
    code, _, err = _convert(capsys, "--from", "keras", out / "a.keras", "--to", "hf", out / "hf")
    assert code == 0, err
    assert (out / "hf" / "spiece.model").read_bytes() == first_spm.read_bytes()


def test_existing_outputs_are_refused_unless_overwrite(tmp_path, capsys, releases):
    (first, first_spm), _ = releases
    out = tmp_path / "models"
    out.mkdir()
    (out / "a.keras").write_bytes(b"a user's model")
    error = _refused(capsys, "--from", "tf1", first, "--output", out / "a.keras")
    assert f"{out / 'a.keras'} exists: pass --overwrite to replace it" in error
    (out / "a.keras").unlink()
    (out / "a.spiece.model").write_bytes(b"a user's vocabulary")
    error = _refused(capsys, "--from", "tf1", first, "--output", out / "a.keras")
    assert f"{out / 'a.spiece.model'} exists: pass --overwrite" in error
    assert sorted(p.name for p in out.iterdir()) == ["a.spiece.model"]
    argv = ["--from", "tf1", first, "--output", out / "a.keras", "--overwrite"]
    assert _convert(capsys, *argv)[0] == 0
    assert (out / "a.spiece.model").read_bytes() == first_spm.read_bytes()


def test_to_folders_are_converts_own(tmp_path, capsys, releases):
    (first, _), (second, _) = releases
    users = tmp_path / "users"
    users.mkdir()
    (users / "config.json").write_text('{"mine": true}\n')
    before = _digest(users)
    error = _refused(capsys, "--from", "tf1", first, "--to", "hf", users)
    assert f"{users} holds files albert-keras did not write (config.json)" in error
    assert _digest(users) == before
    other = tmp_path / "pretrained"
    with OutputFolder(other, "albert-keras pretrain", {"seed": 1}) as folder:
        pathlib.Path(folder.claim("model.keras")).write_bytes(b"model")
    error = _refused(capsys, "--from", "tf1", first, "--to", "tf1", other)
    assert "holds the output of `albert-keras pretrain`, not of `albert-keras convert`" in error
    assert (other / "model.keras").read_bytes() == b"model"

    hf = tmp_path / "hf"
    assert _convert(capsys, "--from", "tf1", first, "--to", "hf", hf)[0] == 0
    manifest = json.loads((hf / MANIFEST).read_text())
    assert {"config.json", "model.safetensors", "spiece.model"} <= set(manifest["files"])
    assert _convert(capsys, "--from", "tf1", first, "--to", "hf", hf)[0] == 0  # the same again
    (hf / "NOTES.txt").write_text("mine\n")
    error = _refused(capsys, "--from", "tf1", second, "--to", "hf", hf)
    assert "holds an earlier `albert-keras convert` run with other arguments (path: " in error
    assert _convert(capsys, "--from", "tf1", second, "--to", "hf", hf, "--overwrite")[0] == 0
    assert (hf / "NOTES.txt").read_text() == "mine\n"
    assert (hf / "model.safetensors").is_file()


def test_a_keras_hub_preset_is_written_without_removing_anything(tmp_path, tiny_config):
    import albert_keras as ak
    from albert_keras.convert import write_keras_hub

    folder = tmp_path / "kh"
    (folder / "assets").mkdir(parents=True)
    (folder / "assets" / "mine.txt").write_text("mine\n")
    (folder / "notes.txt").write_text("mine too\n")
    write_keras_hub(ak.AlbertBackbone(**tiny_config), folder)
    assert (folder / "assets" / "mine.txt").read_text() == "mine\n"
    assert (folder / "notes.txt").read_text() == "mine too\n"
    assert {"config.json", "model.weights.h5"} <= {p.name for p in folder.iterdir()}
    assert not [p for p in folder.iterdir() if ".tmp-" in p.name]


def test_bad_files_are_one_true_line(tmp_path, capsys):
    truncated = tmp_path / "truncated.keras"
    truncated.write_bytes(b"PK\x03\x04" + b"\0" * 100)
    for source in ("keras", "keras-hub"):
        error = _refused(capsys, "--from", source, truncated, "--output", tmp_path / "o.keras")
        assert f"{truncated}: not a .keras file: not a whole zip archive" in error
        assert "File not found" not in error
    not_a_tarball = tmp_path / "albert.tar.gz"
    not_a_tarball.write_text("not a tarball\n")
    error = _refused(capsys, "--from", "tf1", not_a_tarball, "--output", tmp_path / "o.keras")
    assert str(not_a_tarball) in error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["albert.tar.gz", "truncated.keras"]


def test_a_folder_given_as_the_vocabulary_is_called_a_folder(tmp_path):
    # The fine-tuning jobs' --spm_model (it said "not found" of a folder).
    from albert_keras.training.model_files import find_spm_model

    with pytest.raises(ValueError, match=f"{tmp_path}: --spm_model is a folder; give the"):
        find_spm_model(str(tmp_path / "model.keras"), str(tmp_path))
