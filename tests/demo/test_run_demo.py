"""`make demo`'s job at a tiny size: every stage runs and writes what the README promises."""

import json

import pytest

from albert_keras.demo.run_demo import run_demo


@pytest.mark.slow
def test_demo_end_to_end(tmp_path):
    summary = run_demo(
        str(tmp_path),
        vocab_size=1000,
        max_seq_length=32,
        max_predictions_per_seq=5,
        dupe_factor=1,
        config={"num_layers": 2, "hidden_dim": 32, "intermediate_dim": 64, "num_heads": 2},
        pretrain_steps=40,
        batch_size=16,
        finetune_steps=20,
        corpus_megabytes=0.1,
    )
    assert json.loads((tmp_path / "summary.json").read_text())["pretrain"]["steps"] == 40
    assert (tmp_path / "loss_curves.png").stat().st_size > 10_000
    assert summary["reload"]["max_abs_difference"] == 0.0
    # the reloaded pretrainer reproduces the job's own held-out evaluation
    assert summary["reload"]["eval"]["mlm_loss"] == pytest.approx(
        summary["pretrain"]["after"]["mlm_loss"], rel=1e-4
    )
    assert summary["pretrain"]["after"]["mlm_loss"] < summary["pretrain"]["before"]["mlm_loss"]
    assert set(summary["finetune"]["metrics"]) == {"accuracy"}
    assert (tmp_path / "finetune" / "model.keras").exists()
