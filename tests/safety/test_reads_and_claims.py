"""No command writes over what it reads, and a run claims its folder only for good (issue 43).

- An output equal to (or resolving to) an input, lying inside an input folder, or (a folder)
  holding an input is refused in one line, exit 2, nothing changed: `predict --output` naming
  its `--model` (with `--overwrite` the model became 73 bytes of JSON), `train_vocab
  --output_prefix` naming what it reads, the data writer's `--output_dir` holding its
  `--spm_model`, a job's `--output_dir` holding its `--records`.
- A first run that fails after opening its folder (a value found wrong once the model is
  loaded, a study's corpus matching nothing, Ctrl-C, a full disk) leaves the folder as it found
  it, so that the corrected rerun is not refused as "an earlier run with other arguments".

Each test failed on the code before this change.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import pytest
from full_disk import full_disk
from safety_commands import _finetune_squad, _pretrain, _train_vocab, _writer
from safety_folders import tree_digest

from albert_keras_contracts.output_folder import MANIFEST, OutputFolder, OutputFolderError


def _one_line(result, *needles):
    lines = result.stderr.strip().splitlines()
    shown = f"exit {result.rc}; stderr:\n{result.stderr[-2000:]}"
    assert result.rc == 2 and len(lines) == 1 and "Traceback" not in result.stderr, shown
    for needle in needles:
        assert needle in lines[0], shown
    return lines[0]


# === No command writes over what it reads ===
def test_predict_refuses_an_output_that_is_its_model(tmp_path, safety_inputs, run_command):
    model = tmp_path / "model.keras"
    shutil.copyfile(safety_inputs["classifier"], model)
    before = tree_digest(tmp_path)
    argv = ["predict", "--model", model, "--input", safety_inputs["lines"], "--output", model]
    result = run_command(None, [*argv, "--overwrite"], cwd=tmp_path)
    _one_line(result, f"--output {model} is the --model file it reads: choose")
    assert tree_digest(tmp_path) == before


def test_predict_refuses_an_output_through_a_link_to_its_input(
    tmp_path, safety_inputs, run_command
):
    lines = tmp_path / "lines.txt"
    shutil.copyfile(safety_inputs["lines"], lines)
    os.symlink(lines, tmp_path / "out.jsonl")
    before = tree_digest(tmp_path)
    argv = ["predict", "--model", safety_inputs["classifier"], "--input", lines]
    result = run_command(None, [*argv, "--output", tmp_path / "out.jsonl", "--overwrite"],
                         cwd=tmp_path)  # fmt: skip
    _one_line(result, f"is the --input file it reads ({lines})")
    assert tree_digest(tmp_path) == before


def test_train_vocab_refuses_a_prefix_whose_files_it_reads(tmp_path, safety_inputs, run_command):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in pathlib.Path(safety_inputs["corpus"]).parent.glob("book-*.txt"):
        shutil.copyfile(path, corpus / path.name)
    (corpus / "spm.vocab").write_text("a user's text, read as the corpus\n")
    before = tree_digest(tmp_path)
    argv = _train_vocab({"corpus": str(corpus / "*")}, corpus, None)  # PREFIX corpus/spm
    result = run_command("pipelines.train_vocab", [*argv, "--overwrite"], cwd=tmp_path)
    _one_line(result, f"--output_prefix {corpus / 'spm.vocab'} is the --input file it reads")
    assert tree_digest(tmp_path) == before


def _earlier_run_holding(out, command: str, name: str, source) -> pathlib.Path:
    """`out`, an earlier `command` run's folder (other arguments) listing `name`, a copy of
    `source`: the input of the run under test, which its `--overwrite` removed before."""
    with OutputFolder(out, command, {"seed": 1}) as folder:
        shutil.copyfile(source, folder.claim(name))
    return out / name


def test_the_writer_refuses_an_output_folder_holding_its_vocabulary(
    tmp_path, safety_inputs, run_command
):
    out = tmp_path / "records"
    spm = _earlier_run_holding(out, "python -m pipelines.pretraining_data", "spm.model",
                               safety_inputs["spm"])  # fmt: skip
    before = tree_digest(tmp_path)
    argv = [*_writer({**safety_inputs, "spm": str(spm)}, out, None), "--num_workers", "1"]
    result = run_command("pipelines.pretraining_data", [*argv, "--overwrite"], cwd=tmp_path)
    _one_line(result, f"--spm_model {spm} lies inside --output_dir {out}")
    assert tree_digest(tmp_path) == before


def test_pretrain_refuses_an_output_folder_holding_its_records(
    tmp_path, safety_inputs, run_command
):
    out = tmp_path / "run"
    shard = next(pathlib.Path(safety_inputs["records"]).parent.iterdir())
    _earlier_run_holding(out, "albert-keras pretrain", "train-0.tfrecord", shard)
    before = tree_digest(tmp_path)
    argv = _pretrain({**safety_inputs, "records": str(out / "*.tfrecord")}, out, None)
    result = run_command(None, [*argv, "--overwrite"], cwd=tmp_path)
    _one_line(result, "--records", f"lies inside --output_dir {out}")
    assert tree_digest(tmp_path) == before


def test_convert_refuses_an_output_that_is_what_it_reads(tmp_path, safety_inputs, run_command):
    model = tmp_path / "model.keras"
    shutil.copyfile(safety_inputs["pretrainer"], model)
    before = tree_digest(tmp_path)
    argv = ["convert", "--source", "keras", model, "--output", model, "--overwrite"]
    result = run_command(None, argv, cwd=tmp_path)
    _one_line(result, f"--output {model} is the PATH file it reads: choose")
    assert tree_digest(tmp_path) == before


# === A failed first run leaves the folder as it found it ===
def test_a_value_found_wrong_after_the_folder_opened_leaves_no_folder(
    tmp_path, safety_inputs, run_command
):
    """finetune-squad's window longer than the model's positions is found once the model is
    loaded, after the folder is opened: the folder stayed, claimed, and the corrected rerun was
    refused ("holds an earlier run with other arguments")."""
    out = tmp_path / "squad"
    argv = _finetune_squad(safety_inputs, out, safety_inputs["pretrainer"])
    too_long = [*argv, "--max_seq_length", "64"]  # the last value wins; the model has 32
    first = run_command(None, too_long, cwd=tmp_path, timeout=120)
    _one_line(first, "exceeds the model's")
    assert not out.exists()
    again = run_command(None, [*argv, "--max_seq_length", "48"], cwd=tmp_path, timeout=120)
    _one_line(again, "exceeds the model's")  # the value, not the folder, is what it says


def test_a_study_whose_corpus_matches_nothing_leaves_no_folder(
    tmp_path, safety_inputs, run_command
):
    spec = json.loads(pathlib.Path(safety_inputs["study_spec"]).read_text())
    spec["corpus"] = str(tmp_path / "missing" / "*.txt")
    (tmp_path / "study.json").write_text(json.dumps(spec))
    out = tmp_path / "study"
    first = run_command(None, ["study", tmp_path / "study.json", "--output_dir", out],
                        cwd=tmp_path, timeout=120)  # fmt: skip
    _one_line(first, "missing")
    assert not out.exists()


def test_ctrl_c_in_a_first_run_leaves_no_claimed_folder(tmp_path):
    """As a fine-tuning job's first run meets Ctrl-C before it wrote anything to resume from
    (its `checkpoints/` made, still empty)."""
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt), OutputFolder(out, "albert-keras finetune-glue") as f:
        os.makedirs(f.claim("checkpoints", "best"))
        raise KeyboardInterrupt
    assert not out.exists()
    kept = tmp_path / "kept"
    with pytest.raises(KeyboardInterrupt), OutputFolder(kept, "albert-keras finetune-glue") as f:
        pathlib.Path(f.claim("model.keras")).write_text("written: a rerun resumes from it")
        raise KeyboardInterrupt
    assert sorted(os.listdir(kept)) == [MANIFEST, "model.keras"]


def test_a_failed_run_in_a_users_empty_folder_leaves_it_empty(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    with pytest.raises(OutputFolderError), OutputFolder(out, "albert-keras export"):
        raise OutputFolderError("a value found wrong")
    assert out.is_dir() and os.listdir(out) == []


def test_train_vocab_on_a_full_disk_leaves_no_folder(tmp_path, safety_inputs, run_command):
    with full_disk(tmp_path, size_mb=1) as disk:
        disk.fill()
        argv = _train_vocab(safety_inputs, disk.root / "vocab" / "new", None)
        env = {k: v for k, v in disk.env.items() if os.environ.get(k) != v}
        result = run_command("pipelines.train_vocab", argv, cwd=tmp_path, env=env)
        left = sorted(os.listdir(disk.root))
    _one_line(result, "no space left")
    assert "vocab" not in left, left
