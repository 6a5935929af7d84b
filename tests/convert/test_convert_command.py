"""`albert-keras convert` end to end: a release .tar.gz in, every format out and back."""

import io
import json
import tarfile

import keras
import numpy as np
import pytest
from convert_helpers import pretrainer_outputs, write_tf1_checkpoint_like_official
from reference_albert import albert_forward
from release_tarball import train_tiny_sentencepiece, write_release_tarball

from albert_keras_cli.main import main


@pytest.fixture
def release_archive(tmp_path, official_config, official_weights):
    """An archive laid out like the official albert_base_v2.tar.gz, its checkpoint written as the
    official code writes one (not by the package)."""

    def write_checkpoint(folder):
        (folder / "albert_config.json").write_text(json.dumps(official_config))
        write_tf1_checkpoint_like_official(official_weights, folder / "model.ckpt-best")

    text = "the cat sat on the mat . a dog ran in the park . " * 20
    spm_model = train_tiny_sentencepiece(tmp_path / "30k-clean", text, vocab_size=40)
    return write_release_tarball(tmp_path / "albert_tiny.tar.gz", write_checkpoint, spm_model)


def run_cli(capsys, *argv):
    code = main(["convert", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_release_archive_to_keras_and_every_format_back(
    tmp_path, capsys, release_archive, official_config, official_weights
):
    """tf1 release -> .keras equals the reference forward pass; .keras -> hf, keras-hub and tf1
    -> .keras gives the same outputs; keras-hub itself loads the keras-hub preset (checked on
    this conversion's folder, not a second one: the archive and both conversions cost ~2 CPU-s)."""
    output = tmp_path / "out" / "albert.keras"
    code, out, err = run_cli(capsys, "--from", "tf1", release_archive, "--output", output)
    assert code == 0, err
    assert "mapped encoder: 2 group(s) x 2 inner block(s) for 4 layers: 64 variables" in out
    assert "mapped sentence-order head: 2 variables" in out
    assert "skipped 3 optimizer/step variables" in out
    # The vocabulary is named after the output: another conversion into the folder keeps its own.
    assert sorted(p.name for p in output.parent.iterdir()) == [
        "albert.keras",
        "albert.spiece.model",
    ]
    assert f"wrote {output.parent / 'albert.spiece.model'}: the vocabulary of albert.keras" in out

    pretrainer = keras.saving.load_model(output)
    ours, inputs = pretrainer_outputs(pretrainer, official_config)
    expected = albert_forward(official_weights, official_config, *inputs)
    for name in ("sequence_output", "pooled_output", "mlm_logits", "sentence_logits"):
        np.testing.assert_allclose(ours[name], expected[name], atol=1e-5, rtol=0, err_msg=name)

    exports = {"hf": tmp_path / "hf", "keras-hub": tmp_path / "kh", "tf1": tmp_path / "tf1"}
    argv = ["--from", "keras", output]
    for target, directory in exports.items():
        argv += ["--to", target, directory]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "heads not written" in out  # keras-hub backbones have no pretraining heads
    assert (tmp_path / "hf" / "spiece.model").is_file()
    assert (tmp_path / "kh" / "assets" / "tokenizer" / "vocabulary.spm").is_file()
    _check_keras_hub_loads(tmp_path / "kh")

    for source, directory in exports.items():
        back = tmp_path / f"back_{source}.keras"
        code, out, err = run_cli(capsys, "--from", source, directory, "--output", back)
        assert code == 0, err
        copy, _ = pretrainer_outputs(keras.saving.load_model(back), official_config)
        names = ["sequence_output", "pooled_output"]
        if source != "keras-hub":
            names += ["mlm_logits", "sentence_logits"]
        else:
            assert "MLM head: absent in the source, left at fresh initialization" in out
        for name in names:
            np.testing.assert_array_equal(copy[name], ours[name], err_msg=f"{source} {name}")


def _check_keras_hub_loads(folder):
    """keras-hub's own classes load the preset `--to keras-hub` wrote."""
    import keras_hub

    tokenizer = keras_hub.models.AlbertTokenizer.from_preset(str(folder))
    assert tokenizer.token_to_id("[CLS]") == 2 and tokenizer.token_to_id("[MASK]") == 4
    kh_backbone = keras_hub.models.AlbertBackbone.from_preset(str(folder))
    assert (kh_backbone.num_groups, kh_backbone.num_inner_repetitions) == (2, 2)


def unsafe_archive(path):
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    return path


def _empty_folder(tmp):
    (tmp / "empty").mkdir()
    return tmp / "empty"


@pytest.mark.parametrize(
    "make_argv, message",
    [
        (
            lambda tmp: [
                "--from",
                "tf1",
                unsafe_archive(tmp / "evil.tar.gz"),
                "--output",
                tmp / "o.keras",
            ],
            "evil.tar.gz: member '../escape.txt' contains '..'; refused",
        ),
        (
            # The folder apart from the output: one inside what it reads is refused first.
            lambda tmp: ["--from", "tf1", _empty_folder(tmp), "--output", tmp / "o.keras"],
            "no TF1 checkpoint (*.index) in this folder",
        ),
        (lambda tmp: ["--from", "hf", tmp], "nothing to write"),
        (
            lambda tmp: ["--from", "hf", tmp, "--output", tmp / "model.h5"],
            "the file name must end in .keras",
        ),
        (lambda tmp: ["--from", "hf", tmp, "--to", "onnx", tmp / "x"], "--to onnx"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, make_argv, message):
    code, _, err = run_cli(capsys, *make_argv(tmp_path))
    assert code == 2
    assert err.startswith("albert-keras convert: error: ") and message in err
    assert err.count("\n") == 1
    assert not (tmp_path / "o.keras").exists()


def test_pickled_hf_folder_is_refused_by_the_cli(tmp_path, capsys, official_config):
    folder = _empty_folder(tmp_path)  # the output apart from what it reads
    (folder / "config.json").write_text(json.dumps(official_config))
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04")
    code, _, err = run_cli(capsys, "--from", "hf", folder, "--output", tmp_path / "o.keras")
    assert code == 2 and "pytorch_model.bin: pickled weights are refused" in err
