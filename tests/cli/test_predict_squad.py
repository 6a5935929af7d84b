"""`albert-keras predict` on a `finetune-squad` model: a SQuAD file gives finetune-squad's own
predictions and scores, JSON lines give one answer each, bad input is one line and exit 2, and a
vocabulary that is not the model's is refused (issue #30)."""

import io
import json
import sys

import keras
import pytest

from albert_keras.models import AlbertBackbone
from albert_keras.squad.squad_answers import answer_questions
from albert_keras_cli.main import main
from albert_keras_contracts.vocabulary_identity import file_sha256

SPM = "vocab/30k-clean.reconstructed.model"
SQUAD = "squad/squad-v2.0-dev-part.json"
WINDOWS = ["--doc_stride", "32", "--max_query_length", "16"]


@pytest.fixture(scope="module")
def squad_run(tmp_path_factory, shared_data):
    """(model.keras, dev.json, the run folder) of `finetune-squad --epochs 0` (a new v2 head on
    a tiny random backbone) on 3 paragraphs of the shared dev file."""
    folder = tmp_path_factory.mktemp("squad")
    AlbertBackbone(vocabulary_size=30000, num_layers=1, num_heads=2, embedding_dim=8,
                   hidden_dim=16, intermediate_dim=32,
                   max_sequence_length=64).save(folder / "backbone.keras")  # fmt: skip
    (folder / "spm.model").symlink_to(shared_data / SPM)
    data = json.loads((shared_data / SQUAD).read_text())
    dev = folder / "dev.json"
    dev.write_text(json.dumps({"version": "v2.0", "data": [
        {"title": "a", "paragraphs": data["data"][0]["paragraphs"][:3]}]}))  # fmt: skip
    out = folder / "run"
    argv = ["finetune-squad", "--version", "2.0", "--predict_file", str(dev), "--model",
            str(folder / "backbone.keras"), "--output_dir", str(out), "--epochs", "0",
            "--max_seq_length", "64", *WINDOWS, "--batch_size", "16", "--strategy", "cpu",
            "--mixed_precision", "float32"]  # fmt: skip
    assert main(argv) == 0
    return out / "model.keras", dev, out


def test_a_squad_file_gives_finetune_squads_predictions_and_scores(squad_run, tmp_path, capsys):
    model, dev, out = squad_run
    capsys.readouterr()
    output = tmp_path / "predictions.json"
    argv = ["predict", "--model", str(model), "--input", str(dev), "--output", str(output)]
    assert main([*argv, *WINDOWS]) == 0
    summary = json.loads((out / "metrics.json").read_text())
    metrics, threshold = summary["metrics"], summary["null_threshold"]
    assert capsys.readouterr().out == (
        f"SQuAD 2.0 ({summary['predict_examples']} questions): exact {metrics['exact']:.2f}, "
        f"f1 {metrics['f1']:.2f}, HasAns_exact {metrics['HasAns_exact']:.2f}, "
        f"HasAns_f1 {metrics['HasAns_f1']:.2f}, NoAns_exact {metrics['NoAns_exact']:.2f}, "
        f"NoAns_f1 {metrics['NoAns_f1']:.2f}, null threshold {threshold:.4f}\n"
    )
    assert json.loads(output.read_text()) == json.loads((out / "predictions.json").read_text())


def test_json_lines_give_one_answer_each(squad_run, monkeypatch, capsys):
    model, dev, out = squad_run
    paragraphs = json.loads(dev.read_text())["data"][0]["paragraphs"]
    rows = [(qa["id"], qa["question"], p["context"]) for p in paragraphs for qa in p["qas"]][:5]
    # The first two lines carry an id, which their answers echo; the others echo the question.
    lines = "".join(
        json.dumps({"question": q, "context": c, **({"id": i} if n < 2 else {})}) + "\n\n"
        for n, (i, q, c) in enumerate(rows)
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines.encode())))
    capsys.readouterr()
    assert main(["predict", "--model", str(model), *WINDOWS]) == 0
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    nbest = json.loads((out / "nbest_predictions.json").read_text())
    assert [a["answer"] for a in answers] == [nbest[qid][0]["text"] for qid, _, _ in rows]
    loaded = keras.saving.load_model(model)  # the Python path gives the same
    expected = answer_questions(loaded, [q for _, q, _ in rows], [c for _, _, c in rows],
                                doc_stride=32, max_query_length=16)  # fmt: skip
    echoes = [{"id": i} if n < 2 else {"question": q} for n, (i, q, _) in enumerate(rows)]
    assert answers == [{**echo, **answer} for echo, answer in zip(echoes, expected)]
    assert (
        next(iter(answers[0])) == "id" and next(iter(answers[2])) == "question"
    )  # first in the line


def test_bad_input_and_another_vocabulary_are_one_line(squad_run, tmp_path, capsys, tiny_spm):
    model, dev, out = squad_run
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "who?", "context": "me"}\n{"question": "who?"}\n')
    cases = {
        f"{bad} line 2: needs {{\"question\": ..., \"context\": ...}} (strings), or give a SQuAD file": [
            "--input", str(bad)],
        f"{model} is a question answerer: --task / --pairs are for a classifier": [
            "--input", str(bad), "--pairs"],
        f"--spm_model {tiny_spm} (sha256 {file_sha256(tiny_spm)[:12]}) is not the vocabulary "
        f"{model} was trained with (sha256 {file_sha256(out.parent / 'spm.model')[:12]})": [
            "--input", str(dev), "--spm_model", str(tiny_spm)],
    }  # fmt: skip
    for message, argv in cases.items():
        assert main(["predict", "--model", str(model), *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("albert-keras predict: error: ") and message in err, err
        assert err.count("\n") == 1
    # finetune-squad refuses it too, before any training.
    argv = ["finetune-squad", "--version", "2.0", "--predict_file", str(dev), "--model",
            str(model), "--spm_model", str(tiny_spm), "--output_dir", str(tmp_path / "again"),
            "--epochs", "0", "--max_seq_length", "64", *WINDOWS, "--strategy", "cpu"]  # fmt: skip
    assert main(argv) == 2
    assert "is not the vocabulary" in capsys.readouterr().err
