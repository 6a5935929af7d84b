"""`albert-keras finetune-squad` end to end on real SQuAD 2.0 questions with a tiny model."""

import json

import keras
import pytest

import albert_keras as ak
from albert_keras.squad import evaluate_squad
from albert_keras_cli import main as cli

SPM = "vocab/30k-clean.reconstructed.model"
SQUAD = "squad/squad-v2.0-dev-part.json"
SMALL = ["--max_seq_length", "64", "--doc_stride", "32", "--max_query_length", "16",
         "--batch_size", "16", "--strategy", "cpu"]  # fmt: skip


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory, shared_data):
    folder = tmp_path_factory.mktemp("model")
    ak.AlbertBackbone(vocabulary_size=30000, num_layers=2, num_heads=2, embedding_dim=32,
                      hidden_dim=64, intermediate_dim=128,
                      max_sequence_length=64).save(folder / "backbone.keras")  # fmt: skip
    (folder / "spm.model").symlink_to(shared_data / SPM)
    return folder / "backbone.keras"


@pytest.fixture(scope="module")
def squad_files(tmp_path_factory, shared_data):
    """Train: 12 paragraphs of one article (first answers only); predict: 6 of another."""
    data = json.loads((shared_data / SQUAD).read_text())
    folder = tmp_path_factory.mktemp("squad")
    train = {"version": "v2.0", "data": [{"title": "a", "paragraphs":
             data["data"][0]["paragraphs"][:12]}]}  # fmt: skip
    for paragraph in train["data"][0]["paragraphs"]:
        for qa in paragraph["qas"]:
            qa["answers"] = qa["answers"][:1]
    dev = {
        "version": "v2.0",
        "data": [{"title": "b", "paragraphs": data["data"][1]["paragraphs"][:6]}],
    }
    (folder / "train.json").write_text(json.dumps(train))
    (folder / "dev.json").write_text(json.dumps(dev))
    return folder / "train.json", folder / "dev.json"


def test_v2_run_writes_official_files(tmp_path, saved_model, squad_files, capsys):
    train, dev = squad_files
    code = cli.main(["finetune-squad", "--version", "2.0", "--train_file", str(train),
                     "--predict_file", str(dev), "--init_from", str(saved_model),
                     "--output_dir", str(tmp_path / "out"), "--epochs", "1", *SMALL])  # fmt: skip
    assert code == 0
    out = tmp_path / "out"
    summary = json.loads((out / "metrics.json").read_text())
    predictions = json.loads((out / "predictions.json").read_text())
    null_odds = json.loads((out / "null_odds.json").read_text())
    dev_ids = [qa["id"] for p in json.loads(dev.read_text())["data"][0]["paragraphs"]
               for qa in p["qas"]]  # fmt: skip
    assert sorted(predictions) == sorted(dev_ids) == sorted(null_odds)
    assert all(isinstance(v, float) for v in null_odds.values())
    # The reported scores are the official ones of the written files, at the chosen threshold.
    assert summary["metrics"] == evaluate_squad(
        dev, out / "predictions.json", out / "null_odds.json"
    )
    threshold = summary["null_threshold"]
    # The threshold is the official best one, or below every null odd where answering nothing
    # is best (the official search then says 0.0, meant for probabilities): F1 == best_f1.
    assert summary["metrics"]["f1"] == pytest.approx(summary["metrics"]["best_f1"])
    assert threshold in (summary["metrics"]["best_f1_thresh"], min(null_odds.values()) - 1.0)
    assert all((text == "") == (null_odds[q] > threshold) or text == ""
               for q, text in predictions.items())  # fmt: skip
    assert summary["head"] == "v2" and summary["steps"] == summary["train_features"] // 16
    assert summary["hyperparameters"]["learning_rate"] == 3e-5
    assert "HasAns_f1" in summary["metrics_always_answering"]
    loaded = keras.saving.load_model(out / "model.keras")
    assert isinstance(loaded, ak.models.AlbertQuestionAnswerer) and loaded.head == "v2"
    printed = capsys.readouterr().out
    assert "SQuAD 2.0:" in printed
    steps = summary["steps"]
    assert f"step {steps}/{steps} (100%)" in printed and "Epoch" not in printed  # in steps

    # The fine-tuned model.keras, predicting only: its trained head is kept (same answers).
    # `--model`, the flag's name before `--init_from`, still works.
    code = cli.main(["finetune-squad", "--version", "2.0", "--predict_file", str(dev),
                     "--model", str(out / "model.keras"), "--spm_model",
                     str(saved_model.parent / "spm.model"), "--output_dir",
                     str(tmp_path / "again"), "--epochs", "0", *SMALL])  # fmt: skip
    assert code == 0 and "its trained v2 head kept" in capsys.readouterr().out
    again = json.loads((tmp_path / "again" / "metrics.json").read_text())
    assert again["head"] == "v2"
    assert json.loads((tmp_path / "again" / "null_odds.json").read_text()) == pytest.approx(
        null_odds, abs=1e-3
    )


def test_v1_predict_only_and_bad_input(tmp_path, saved_model, squad_files, capsys):
    _, dev = squad_files
    v1 = json.loads(dev.read_text())
    v1["version"] = "1.1"
    for paragraph in v1["data"][0]["paragraphs"]:
        paragraph["qas"] = [qa for qa in paragraph["qas"] if not qa["is_impossible"]]
    (tmp_path / "dev-v1.json").write_text(json.dumps(v1))
    code = cli.main(["finetune-squad", "--version", "1.1", "--predict_file",
                     str(tmp_path / "dev-v1.json"), "--model", str(saved_model),
                     "--output_dir", str(tmp_path / "v1"), "--epochs", "0", *SMALL])  # fmt: skip
    assert code == 0
    summary = json.loads((tmp_path / "v1" / "metrics.json").read_text())
    assert set(summary["metrics"]) == {"exact_match", "f1"} and summary["head"] == "simple"
    assert not (tmp_path / "v1" / "null_odds.json").exists()
    # A v2.0 file under --version 1.1, malformed JSON, a missing train file: exit 2, one line.
    (tmp_path / "broken.json").write_text('{"data": [}')
    for args, message in (
        (["--version", "1.1", "--predict_file", str(dev), "--epochs", "0"],
         "a SQuAD 2.0 file, but --version 1.1"),
        (["--version", "2.0", "--predict_file", str(tmp_path / "broken.json"), "--epochs", "0"],
         "broken.json: not valid JSON"),
        (["--version", "2.0", "--predict_file", str(dev)],
         "--train_file unless --epochs 0"),
    ):  # fmt: skip
        capsys.readouterr()
        code = cli.main(["finetune-squad", *args, "--model", str(saved_model),
                         "--output_dir", str(tmp_path / "bad"), *SMALL])  # fmt: skip
        err = capsys.readouterr().err.strip()
        assert code == 2 and message in err and len(err.splitlines()) == 1, err


def test_dev_threshold_when_answering_nothing_is_best():
    """Null odds are score differences, often negative. Where no threshold beats answering
    nothing, the official search reports 0.0 (its start, meant for probabilities), which would
    still answer every question with null odds <= 0; the chosen threshold answers none."""
    from albert_keras.jobs.finetune_squad_job import _dev_threshold
    from albert_keras.squad import SquadPredictions

    qas = [{"id": "h", "question": "", "answers": [{"text": "right"}], "is_impossible": False},
           {"id": "n1", "question": "", "answers": [], "is_impossible": True},
           {"id": "n2", "question": "", "answers": [], "is_impossible": True}]  # fmt: skip
    dataset = {"version": "v2.0", "data": [{"paragraphs": [{"context": "", "qas": qas}]}]}
    result = SquadPredictions({"h": "wrong", "n1": "x", "n2": "y"}, {},
                              {"h": 0.5, "n1": -2.0, "n2": -1.0})  # fmt: skip
    best = evaluate_squad(dataset, result.answers(), result.null_odds)
    assert best["best_f1"] == pytest.approx(200 / 3) and best["best_f1_thresh"] == 0.0
    assert evaluate_squad(dataset, result.answers(0.0))["f1"] == 0.0  # n1, n2 answered
    threshold = _dev_threshold(dataset, result)
    assert threshold == -3.0 and set(result.answers(threshold).values()) == {""}
    assert evaluate_squad(dataset, result.answers(threshold))["f1"] == pytest.approx(200 / 3)
    # Where a real threshold wins, it is the official one.
    result.best_text["h"], result.null_odds["h"] = "right", -3.0
    assert (
        _dev_threshold(dataset, result)
        == evaluate_squad(dataset, result.answers(), result.null_odds)["best_f1_thresh"]
        == -3.0
    )
    assert evaluate_squad(dataset, result.answers(-3.0))["f1"] == 100.0


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_max_steps_wins_over_epochs_and_is_recorded_only_when_given(
    tmp_path, saved_model, squad_files, capsys
):
    """`--max_steps`, as finetune-glue's: the optimizer stops on it (not on a whole epoch of
    `--epochs`, here 3 of them); a run without it records what it always did."""
    train, dev = squad_files
    base = ["finetune-squad", "--version", "2.0", "--train_file", str(train),
            "--predict_file", str(dev), "--init_from", str(saved_model), *SMALL]  # fmt: skip
    assert cli.main([*base, "--output_dir", str(tmp_path / "s"), "--epochs", "3",
                     "--max_steps", "3"]) == 0  # fmt: skip
    summary = json.loads((tmp_path / "s" / "metrics.json").read_text())
    assert summary["train_features"] // 16 > 3  # an epoch is longer than --max_steps
    assert summary["steps"] == 3 and summary["hyperparameters"]["max_steps"] == 3
    assert summary["hyperparameters"]["epochs"] == 3.0  # as given, overruled
    assert len(summary["history"]["loss"]) == 1  # one fit epoch, cut at step 3
    loaded = keras.saving.load_model(tmp_path / "s" / "model.keras")
    assert int(loaded.optimizer.iterations) == 3
    manifest = json.loads((tmp_path / "s" / ".albert-keras.json").read_text())
    assert manifest["arguments"]["max_steps"] == 3
    capsys.readouterr()
    assert cli.main([*base, "--output_dir", str(tmp_path / "bad"), "--max_steps", "0"]) == 2
    assert capsys.readouterr().err.strip().endswith("--max_steps=0 must be a positive integer")
