"""A tiny study end to end: records, two cells, intrinsic evaluation, fine-tuning, the report;
then a kill in the middle and a resume that redoes nothing finished.

The kill-and-resume test (two cells, no fine-tuning) runs by default; the whole-study tests
(fine-tuning included) are marked slow."""

import json
import os
import pathlib
import shlex

import keras
import pytest

from albert_keras.study import load_spec, run_study, study_cell
from albert_keras.study.study_cell import run_folder
from albert_keras_cli import main as cli
from albert_keras_contracts.output_folder import MANIFEST

SPM = "vocab/30k-clean.reconstructed.model"


def _corpus(shared_data, root: pathlib.Path) -> tuple[str, str]:
    """Two small "books" for training and one held out: slices of real books."""
    root.mkdir(parents=True, exist_ok=True)
    source = (shared_data / "corpus" / "gutenberg" / "1342-0.txt").read_text(encoding="utf-8")
    for i, name in enumerate(["a.txt", "b.txt"]):
        (root / name).write_text(source[20_000 + i * 40_000 : 60_000 + i * 40_000])
    heldout = (shared_data / "corpus" / "gutenberg" / "1661.txt").read_text(encoding="utf-8")
    (root / "held.txt").write_text(heldout[20_000:50_000])
    return str(root / "*.txt"), str(root / "held.txt")


def _spec(shared_data, root: pathlib.Path) -> dict:
    corpus, heldout = _corpus(shared_data, root / "text")
    return {
        "name": "tiny",
        "backbone": {
            "num_layers": 1,
            "hidden_dim": 16,
            "num_heads": 1,
            "intermediate_dim": 32,
            "embedding_dim": 8,
            "max_sequence_length": 32,
        },
        "steps": 4,
        "batch_size": 8,
        "max_seq_length": 32,
        "max_predictions_per_seq": 5,
        "checkpoint_every": 2,
        "seeds": [1],
        "corpus": corpus,
        "heldout": heldout,
        "spm_model": str(shared_data / SPM),
        "dupe_factor": 1,
        "heldout_max_examples": 32,
        "glue_dir": str(shared_data / "glue"),
        "tasks": ["RTE"],
        "finetune_steps": 2,
        "finetune_batch_size": 8,
        "finetune_max_seq_length": 32,
        "finetune_max_dev_examples": 24,
        "cells": [{"name": "NSP", "sentence_objective": "nsp"}],
    }


@pytest.fixture(scope="module")
def tiny_study(shared_data, tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    spec = _spec(shared_data, root)
    report = run_study(spec, str(root / "out"), command="albert-keras study tiny.yaml")
    return spec, root / "out", report


@pytest.mark.slow  # a whole tiny study: ~1-2 min on 2 quiet cores
def test_every_run_has_its_folder_and_summary(tiny_study):
    _, out, report = tiny_study
    assert [row["cell"] for row in report["rows"]] == ["NSP", "no-pretraining"]
    assert report["complete"]
    for name in ("report.md", "report.json", "pretraining_curves.png", "downstream.png"):
        assert (out / name).stat().st_size > 0
    nsp = json.loads((out / "cells" / "NSP" / "seed-1" / "summary.json").read_text())
    assert nsp["pretraining"]["steps"] == 4
    assert [h["step"] for h in nsp["pretraining"]["history"]] == [2, 4]
    assert nsp["intrinsic"]["by_kind"]["nsp"]["examples"] == 32
    assert nsp["downstream"]["RTE"]["num_examples"] == 24  # the capped dev split
    assert nsp["downstream"]["RTE"]["steps_trained"] == 2
    base = json.loads((out / "cells" / "no-pretraining" / "seed-1" / "summary.json").read_text())
    assert base["pretraining"]["steps"] == 0
    # Records of every kind, made once: training records only for the objective a cell uses.
    records = sorted(os.listdir(out / "data" / "records"))
    assert records == ["heldout-none", "heldout-nsp", "heldout-sop", "train-nsp"]


@pytest.mark.slow  # a whole tiny study: ~1-2 min on 2 quiet cores
def test_report_numbers_equal_the_runs_summaries(tiny_study):
    _, out, report = tiny_study
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk["rows"] == json.loads(json.dumps(report["rows"]))
    for row in report["rows"]:
        summary = json.loads((out / "cells" / row["cell"] / "seed-1" / "summary.json").read_text())
        cols = row["columns"]
        assert row["parameters"] == summary["parameters"]
        assert cols["MLM"]["values"] == [100 * summary["intrinsic"]["mlm_accuracy"]]
        assert cols["NSP"]["values"] == [100 * summary["intrinsic"]["nsp_accuracy"]]
        assert cols["SOP"]["values"] == [100 * summary["intrinsic"]["sop_accuracy"]]
        assert cols["RTE"]["values"] == [summary["downstream"]["RTE"]["score"]]
        assert cols["Avg"]["mean"] == summary["downstream_average"]
        metrics = json.loads(
            (out / "cells" / row["cell"] / "seed-1" / "glue" / "RTE" / "metrics.json").read_text()
        )
        assert summary["downstream"]["RTE"]["score"] == 100 * metrics["metrics"]["accuracy"]
        # One seed: no standard deviation, so no "±" in the table.
        assert cols["MLM"]["std"] is None
    markdown = (out / "report.md").read_text()
    assert "albert-keras study tiny.yaml" in markdown
    nsp_line = next(line for line in markdown.splitlines() if line.startswith("| NSP |"))
    assert f"{report['rows'][0]['parameters']:,}" in nsp_line
    assert f"{report['rows'][0]['columns']['RTE']['mean']:.1f}" in nsp_line


@pytest.mark.slow  # a whole tiny study: ~1-2 min on 2 quiet cores
def test_parameter_counts_equal_count_params(tiny_study):
    _, out, report = tiny_study
    for row in report["rows"]:
        folder = out / "cells" / row["cell"] / "seed-1" / "pretrain"
        backbone = keras.saving.load_model(folder / "backbone.keras", compile=False)
        assert row["parameters"] == backbone.count_params()


@pytest.mark.slow  # a whole tiny study: ~1-2 min on 2 quiet cores
def test_intrinsic_columns_match_a_fresh_evaluation(tiny_study):
    """The NSP column is the sentence head's accuracy on the held-out NSP records."""
    import pipelines

    _, out, report = tiny_study
    pretrainer = keras.saving.load_model(
        out / "cells" / "NSP" / "seed-1" / "pretrain" / "model.keras", compile=False
    )
    pretrainer.compile()
    data = pipelines.read_pretraining_records(
        str(out / "data" / "records" / "heldout-nsp" / "*.tfrecord"), 8, max_seq_length=32,
        max_predictions_per_seq=5, shuffle=False, repeat=True,
    )  # fmt: skip
    logs = pretrainer.evaluate(data, steps=4, return_dict=True, verbose=0)
    nsp = report["rows"][0]["columns"]["NSP"]["values"][0]
    assert nsp == pytest.approx(100 * logs["sentence_accuracy"], abs=1e-4)


@pytest.mark.slow  # two tiny cells' runs three times over: ~27 s on 2 cores
def test_a_killed_study_resumes_without_redoing_finished_runs(shared_data, tmp_path, monkeypatch):
    spec = _spec(shared_data, tmp_path)
    spec["cells"] = [{"name": "A", "sentence_objective": "sop"},
                     {"name": "B", "sentence_objective": "none"}]  # fmt: skip
    spec.update({"baseline": False, "tasks": [], "steps": 2, "heldout_max_examples": 8})
    out = str(tmp_path / "out")
    real_finetune = study_cell._intrinsic
    calls = []

    def dies_in_b(spec_, cell, *args, **kwargs):
        calls.append(cell.name)
        if cell.name == "B" and len(calls) == 2:
            raise KeyboardInterrupt  # a kill after B's pretraining, before its evaluation
        return real_finetune(spec_, cell, *args, **kwargs)

    monkeypatch.setattr(study_cell, "_intrinsic", dies_in_b)
    with pytest.raises(KeyboardInterrupt):
        run_study(spec, out)
    loaded = load_spec(spec)
    a_folder = run_folder(out, loaded.cells[0], 1)
    a_summary = os.path.join(a_folder, "summary.json")
    a_mtime = os.stat(a_summary).st_mtime_ns
    b_pretrain = os.path.join(run_folder(out, loaded.cells[1], 1), "pretrain", "summary.json")
    assert os.path.exists(b_pretrain)
    b_mtime = os.stat(b_pretrain).st_mtime_ns

    # --report_only: the report of what is finished, nothing trained or evaluated.
    partial = run_study(spec, out, report_only=True)
    assert [len(row["seeds"]) for row in partial["rows"]] == [1, 0]
    assert not partial["complete"]
    assert calls == ["A", "B"]
    assert "| B | 0 | pending |" in (tmp_path / "out" / "report.md").read_text()

    report = run_study(spec, out)
    assert calls == ["A", "B", "B"]  # A was not evaluated again
    assert os.stat(a_summary).st_mtime_ns == a_mtime  # nor rewritten
    assert os.stat(b_pretrain).st_mtime_ns == b_mtime  # B's pretraining was not redone
    assert [len(row["seeds"]) for row in report["rows"]] == [1, 1]
    assert report["rows"][1]["columns"]["NSP"]["mean"] is None  # objective none: n/a
    assert "| B | 1 |" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.slow  # a whole tiny study: ~1-2 min on 2 quiet cores
def test_a_pretraining_killed_mid_run_resumes_from_its_checkpoint(shared_data, tmp_path):
    """A checkpoint at step 2 of 4: the rerun trains steps 3-4 only."""
    spec = _spec(shared_data, tmp_path)
    spec.update({"baseline": False, "tasks": [], "steps": 2})
    out = str(tmp_path / "out")
    run_study(spec, out)
    folder = run_folder(out, load_spec(spec).cells[0], 1)
    # As a kill after the step-2 checkpoint leaves it: no summaries yet.
    os.remove(os.path.join(folder, "summary.json"))
    os.remove(os.path.join(folder, "intrinsic.json"))
    os.remove(os.path.join(folder, "pretrain", "summary.json"))
    state = os.path.join(folder, "pretrain", "checkpoints", "checkpoint.json")
    with open(state) as f:
        saved = json.load(f)
    # The same run, planned for 4 steps (what the killed run was doing).
    saved["run_config"]["max_steps"] = 4
    saved["run_config"]["warmup_steps"] = round(4 * 3125 / 125_000)
    with open(state, "w") as f:
        json.dump(saved, f)
    spec["steps"] = 4
    with pytest.raises(ValueError, match=r"other arguments \(steps: 2 before, 4 now\)"):
        run_study(spec, out)  # the study refuses a changed budget in the same folder
    # The folders' manifests, as the killed run left them: planned for 4 steps.
    for manifest, planned in (
        (os.path.join(out, MANIFEST), {"steps": 4}),
        (os.path.join(folder, "pretrain", MANIFEST), {"max_steps": 4, "warmup_steps": 0}),
    ):
        with open(manifest) as f:
            record = json.load(f)
        record["arguments"].update(planned)
        with open(manifest, "w") as f:
            json.dump(record, f)
    os.remove(os.path.join(out, "study.json"))
    run_study(spec, out)
    with open(os.path.join(folder, "pretrain", "summary.json")) as f:
        pretrain = json.load(f)
    assert pretrain["steps"] == {"total": 4, "resumed_from": 2, "run": 2}


@pytest.mark.slow  # a whole tiny study: ~1-2 min on 2 quiet cores
def test_cli_runs_a_study_file(shared_data, tmp_path, capsys):
    spec = _spec(shared_data, tmp_path)
    spec.update({"baseline": False, "tasks": [], "steps": 2, "checkpoint_every": 2})
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(spec))
    code = cli.main(["study", str(path), "--output_dir", str(tmp_path / "out"),
                     "--config", "seeds=[3]"])  # fmt: skip
    assert code == 0
    assert "1 runs ->" in capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["rows"][0]["seeds"] == [3]
    # Paths as a reader can rerun them: relative to the folder the study ran from.
    assert report["command"].startswith(f"albert-keras study {os.path.relpath(path)} --output_dir")
    # No absolute path (a relative one to /tmp holds "/tmp/..." as a substring: "../../tmp/...").
    assert not [word for word in shlex.split(report["command"]) if os.path.isabs(word)]
    assert "--config 'seeds=[3]'" in report["command"]


@pytest.mark.slow  # a whole tiny study: ~1-2 min on 2 quiet cores
def test_chance_levels_are_the_held_out_majority_class(tiny_study):
    """The report's chance row: the majority label among the evaluated held-out examples."""
    import tensorflow as tf

    _, out, report = tiny_study
    for kind in ("nsp", "sop"):
        files = sorted((out / "data" / "records" / f"heldout-{kind}").glob("*.tfrecord"))
        labels = []
        for record in tf.data.TFRecordDataset([str(f) for f in files]).take(32):
            example = tf.train.Example.FromString(record.numpy())
            labels.append(example.features.feature["next_sentence_labels"].int64_list.value[0])
        share = sum(labels) / len(labels)
        assert report["chance"][kind.upper()] == pytest.approx(100 * max(share, 1 - share))
    assert f"NSP {report['chance']['NSP']:.1f}, SOP" in (out / "report.md").read_text()
