"""`make demo`'s job: the CLI's flags, the report, and every stage at a tiny size."""

import json
import pathlib

import pytest

from albert_keras.demo import demo_finetuning
from albert_keras.demo import run_demo as run_demo_module
from albert_keras.demo.demo_report import plot_curves, print_summary
from albert_keras.demo.run_demo import DEFAULTS, run_demo
from albert_keras_cli.main import main
from albert_keras_settings import FinetuneGlueSettings

# Tiny sizes, given the way a user gives them: as flags.
TINY_FLAGS = [
    "--vocab_size=1000",
    "--max_seq_length=32",
    "--max_predictions_per_seq=5",
    "--dupe_factor=1",
    "--config=num_layers=2",
    "--config=hidden_dim=32",
    "--config=intermediate_dim=64",
    "--config=num_heads=2",
    "--pretrain_steps=40",
    "--warmup_steps=4",
    "--batch_size=16",
    "--finetune_steps=20",
    "--corpus_megabytes=0.1",
]


@pytest.fixture
def captured(monkeypatch):
    """Replaces run_demo with a recorder: what the CLI would run, without running it."""
    calls = []
    monkeypatch.setattr(
        run_demo_module, "run_demo", lambda *args, **kwargs: calls.append((args, kwargs))
    )
    return calls


def test_config_is_key_value_and_repeatable(captured):
    assert main(["demo", "--config", "num_layers=2", "--config", "sharing=none"]) == 0
    ((args, kwargs),) = captured
    assert args == ("demo_output",)
    assert kwargs["config"] == {"num_layers": 2, "sharing": "none"}
    assert {k: v for k, v in kwargs.items() if k in DEFAULTS} == DEFAULTS  # --help shows them


def test_flags_reach_the_settings(captured, tmp_path):
    assert main(["demo", f"--output_dir={tmp_path}", *TINY_FLAGS]) == 0
    ((_, kwargs),) = captured
    assert kwargs.pop("config") == {
        "num_layers": 2,
        "hidden_dim": 32,
        "intermediate_dim": 64,
        "num_heads": 2,
    }
    assert kwargs == {
        "corpus": None,
        "heldout": None,
        "input_format": "text",
        "finetune_task": None,
        "glue_dir": None,
        "vocab_size": 1000,
        "max_seq_length": 32,
        "max_predictions_per_seq": 5,
        "dupe_factor": 1,
        "pretrain_steps": 40,
        "warmup_steps": 4,
        "batch_size": 16,
        "finetune_steps": 20,
        "corpus_megabytes": 0.1,
        **{k: DEFAULTS[k] for k in ("paragraphs_per_document", "learning_rate", "seed")},
        "finetune_learning_rate": DEFAULTS["finetune_learning_rate"],
    }


def test_json_config_is_refused_with_one_line(capsys, tmp_path):
    assert main(["demo", f"--output_dir={tmp_path / 'out'}", "--config", '{"num_layers": 6}']) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "is not KEY=VALUE" in error
    assert not (tmp_path / "out").exists()


def test_unknown_config_key_fails_before_anything_is_written(capsys, tmp_path):
    out = tmp_path / "out"
    assert main(["demo", f"--output_dir={out}", "--config", "num_layer=2"]) == 2
    error = capsys.readouterr().err
    assert "num_layer" in error and "num_layers" in error
    assert not out.exists()


def test_unknown_setting_is_refused(tmp_path):
    with pytest.raises(ValueError, match="pretrain_step"):
        run_demo(str(tmp_path), pretrain_step=10)


def fake_summary(tmp_path) -> dict:
    history = [
        {"step": s, "mlm_loss": 7 - s / 100, "sentence_loss": 0.69, "mlm_accuracy": s / 1000,
         "sentence_accuracy": 0.5 + s / 10000}
        for s in (100, 200, 300)
    ]  # fmt: skip
    finetune = {
        start: {
            "metrics": {"accuracy": accuracy + 0.05},  # the best evaluation, chosen on dev
            "history": [
                {"step": 10, "accuracy": accuracy + 0.05},
                {"step": 20, "accuracy": accuracy},
            ],
            "last": {"step": 20, "accuracy": accuracy},
        }
        for start, accuracy in (("pretrained", 0.61), ("untrained", 0.43))
    }
    return {
        "output_dir": str(tmp_path),
        "seconds": {"total": 299.6},
        "pretrain": {
            "steps": 300,
            "history": history,
            "before": {"mlm_accuracy": 0.0, "sentence_accuracy": 0.5},
            "after": {"mlm_accuracy": 0.25, "sentence_accuracy": 0.6},
        },
        "finetune": {"task": "docstring-source", "metric": "accuracy", "gain": 0.18, **finetune},
    }


def test_report_shows_before_after_and_both_fine_tunings(tmp_path, capsys):
    summary = fake_summary(tmp_path)
    plot_curves(summary, str(tmp_path / "loss_curves.png"))
    assert (tmp_path / "loss_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp*"))
    print_summary(summary)
    text = capsys.readouterr().out
    assert "masked-LM accuracy       0.000 untrained -> 0.250 pretrained" in text
    assert "sentence-order accuracy  0.500 untrained -> 0.600 pretrained" in text
    assert "dev accuracy at the last step (20; no checkpoint chosen on dev):" in text
    assert "from the pretrained model: 0.610" in text
    assert "from the untrained model: 0.430" in text
    assert "pretraining adds +0.180" in text
    assert "Done in 300 s." in text


@pytest.mark.slow
def test_demo_end_to_end(tmp_path, capsys):
    assert main(["demo", f"--output_dir={tmp_path}", *TINY_FLAGS]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    pretrain = summary["pretrain"]
    assert pretrain["steps"] == 40 and pretrain["warmup_steps"] == 4
    assert pretrain["config"]["num_layers"] == 2 and pretrain["config"]["hidden_dim"] == 32
    assert [h["step"] for h in pretrain["history"]] == list(range(2, 41, 2))
    assert (tmp_path / "loss_curves.png").stat().st_size > 10_000
    assert summary["reload"]["max_abs_difference"] == 0.0
    # the reloaded pretrainer reproduces the job's own held-out evaluation
    assert summary["reload"]["eval"]["mlm_loss"] == pytest.approx(
        pretrain["after"]["mlm_loss"], rel=1e-4
    )
    assert pretrain["after"]["mlm_loss"] < pretrain["before"]["mlm_loss"]
    finetune = summary["finetune"]
    assert (finetune["task"], finetune["metric"]) == ("docstring-source", "accuracy")
    for start in ("pretrained", "untrained"):
        assert set(finetune[start]["metrics"]) == {"accuracy"}
        assert finetune[start]["steps_trained"] == 20
        assert (tmp_path / "finetune" / start / "model.keras").exists()
    assert finetune["untrained"]["model"].endswith("untrained/model.keras")
    assert finetune["scored"] == "dev score at the last step (no checkpoint chosen on dev)"
    for start in ("pretrained", "untrained"):
        assert finetune[start]["last"] == finetune[start]["history"][-1]
        assert finetune[start]["last"]["step"] == 20
    assert finetune["gain"] == pytest.approx(
        finetune["pretrained"]["last"]["accuracy"] - finetune["untrained"]["last"]["accuracy"]
    )
    text = capsys.readouterr().out
    assert f"pretraining adds {finetune['gain']:+.3f}" in text


def test_the_reported_score_is_the_last_steps_not_the_best_chosen_on_dev(tmp_path, monkeypatch):
    """The best evaluation is chosen on the dev rows it would be scored on (issue 30): the demo
    reports each run's last step instead, and says so."""
    scores = {"pretrained": (0.9, 0.6), "untrained": (0.8, 0.7)}  # (best, last)

    def fake_finetune_glue(*, verbose, **settings):
        output_dir = FinetuneGlueSettings(**settings).output_dir  # keywords the job takes
        best, last = scores[pathlib.Path(output_dir).name]
        history = [{"step": 10, "accuracy": best}, {"step": 20, "accuracy": last}]
        return {"metrics": {"accuracy": best}, "history": history, "steps_trained": 20}

    monkeypatch.setattr(demo_finetuning, "finetune_glue", fake_finetune_glue)
    result = demo_finetuning.run_finetuning(
        tmp_path, "spm.model", task="SST-2", glue_dir=str(tmp_path), steps=20, batch_size=8,
        learning_rate=1e-4, max_seq_length=32, seed=1,
    )  # fmt: skip
    assert result["pretrained"]["last"] == {"step": 20, "accuracy": 0.6}
    assert result["gain"] == pytest.approx(0.6 - 0.7)  # the best scores would say +0.1
    assert result["scored"] == "dev score at the last step (no checkpoint chosen on dev)"
    # A run whose last evaluation is not its last step has no last-step score: refused.
    with pytest.raises(ValueError, match="last dev evaluation is of step 20, training ended"):
        demo_finetuning.last_evaluation({"history": [{"step": 20}], "steps_trained": 25})


# === The demo's folder (issue 29): a rerun replaces the demo's own files, nothing else ===


def _fake_stages(out, s, *args):
    """What the stages write, in small: a file and a folder of the demo's."""
    (out / "summary.json").write_text(json.dumps({"seed": s["seed"]}))
    (out / "pretrain").mkdir()
    (out / "pretrain" / "model.keras").write_text(f"model of seed {s['seed']}")
    return {"seed": s["seed"]}


def test_a_rerun_replaces_the_demos_own_files_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setattr(run_demo_module, "_run_stages", _fake_stages)
    out = tmp_path / "demo_output"
    assert run_demo(str(out), seed=1) == {"seed": 1}
    (out / "my_notes.txt").write_text("written by the user between two runs\n")
    # Twice in a row, the same settings or others: each run starts over in its own files.
    for seed in (1, 2):
        assert run_demo(str(out), seed=seed) == {"seed": seed}
        assert (out / "pretrain" / "model.keras").read_text() == f"model of seed {seed}"
    assert sorted(p.name for p in out.iterdir()) == [
        ".albert-keras.json", "my_notes.txt", "pretrain", "summary.json",
    ]  # fmt: skip
    assert (out / "my_notes.txt").read_text() == "written by the user between two runs\n"


def test_a_folder_the_demo_did_not_write_is_refused_before_anything_runs(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work\n")
    pretrained = tmp_path / "pretrained"
    pretrained.mkdir()
    manifest = {"command": "albert-keras pretrain", "arguments": {}, "inputs": {},
                "created": "2026-01-01T00:00:00+00:00", "files": []}  # fmt: skip
    (pretrained / ".albert-keras.json").write_text(json.dumps(manifest))
    for out, message in (
        (mine, "holds files albert-keras did not write (thesis.tex)"),
        (pretrained, "holds the output of `albert-keras pretrain`, not of `albert-keras demo`"),
    ):
        assert main(["demo", f"--output_dir={out}", *TINY_FLAGS]) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]
    # A corpus inside the demo's folder would be deleted by the next run: refused.
    corpus = tmp_path / "demo_output" / "text.txt"
    corpus.parent.mkdir()
    corpus.write_text("my corpus\n")
    with pytest.raises(ValueError, match="--corpus .*text.txt lies inside --output_dir"):
        run_demo(str(corpus.parent), corpus=str(corpus), heldout=str(corpus))


@pytest.mark.slow  # two tiny demos: ~2-4 min on 2 quiet cores
def test_the_demo_runs_twice_in_a_row_in_one_folder(tmp_path, capsys):
    for _ in range(2):  # `make demo` twice: the second replaces the first's files
        assert main(["demo", f"--output_dir={tmp_path}", *TINY_FLAGS]) == 0
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert summary["pretrain"]["steps"] == 40
        assert summary["reload"]["max_abs_difference"] == 0.0
        assert (tmp_path / "finetune" / "untrained" / "model.keras").exists()
