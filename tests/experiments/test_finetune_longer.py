"""experiments/finetune_longer.py: a finished study's runs fine-tuned for other lengths, on a
study folder laid out as `albert-keras study` leaves it (tiny model, tiny RTE)."""

import importlib.util
import json
import os
import pathlib

import keras
import pytest
import sentencepiece

from albert_keras.models import AlbertBackbone
from albert_keras.study import load_spec
from albert_keras.study.study_cell import run_folder

SCRIPT = pathlib.Path(__file__).parents[2] / "experiments" / "finetune_longer.py"
RTE_ROWS = [
    ("A cat sat on the mat.", "A cat sat.", "entailment"),
    ("The sky is blue today.", "It is raining hard.", "not_entailment"),
    ("We ran across the field.", "We ran.", "entailment"),
    ("The dog slept all day.", "The dog ran a race.", "not_entailment"),
]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("finetune_longer", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def study(tiny_spm, tiny_config, tmp_path):
    overrides = {"tasks": ["RTE"], "seeds": [1, 2], "spm_model": str(tiny_spm),
                 "finetune_batch_size": 4, "finetune_max_seq_length": 16}  # fmt: skip
    spec = load_spec("table5", overrides)
    root = tmp_path / "study"
    root.mkdir()
    (root / "study.json").write_text(json.dumps(spec.to_dict()))
    rte = root / "data" / "glue-dev500" / "RTE"
    rte.mkdir(parents=True)
    for split in ("train", "dev"):
        lines = ["index\tsentence1\tsentence2\tlabel"]
        lines += [f"{i}\t{a}\t{b}\t{label}" for i, (a, b, label) in enumerate(RTE_ROWS)]
        (rte / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    pieces = sentencepiece.SentencePieceProcessor(model_file=str(tiny_spm)).get_piece_size()
    config = {**tiny_config, "vocabulary_size": pieces, "max_sequence_length": 16}
    for cell in spec.cells:
        for seed, score in ((1, 50.0), (2, 54.0)):
            folder = pathlib.Path(run_folder(str(root), cell, seed))
            (folder / "pretrain").mkdir(parents=True)
            keras.utils.set_random_seed(seed)
            AlbertBackbone(**config).save(folder / "pretrain" / "backbone.keras")
            summary = {"seed": seed, "stage": "complete", "downstream": {"RTE": {"score": score}}}
            (folder / "summary.json").write_text(json.dumps(summary))
    return root


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_each_length_is_fine_tuned_per_seed_and_tabled_beside_the_study(
    script, study, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "longer"
    argv = [str(study), "--cells", "SOP", "--tasks", "RTE", "--steps", "2",
            "--output_dir", str(out)]  # fmt: skip
    assert script.main(argv) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1] == "| cell | task | 300 steps (the study) | 2 steps |"
    assert table[3].startswith("| SOP | RTE | 52.0 ± 2.8 | ")
    for steps in (2,):
        for seed in (1, 2):
            run = out / str(steps) / "SOP" / f"seed-{seed}" / "RTE"
            metrics = json.loads((run / "metrics.json").read_text())
            assert metrics["steps_trained"] == steps
            assert metrics["hyperparameters"]["seed"] == seed
            assert metrics["num_examples"] == len(RTE_ROWS)
            assert not (run / "model.keras").exists()
    # A second call resumes: every run is finished, nothing is trained again.
    monkeypatch.setattr(script, "finetune_as_study", lambda *_, **__: pytest.fail("again"))
    assert script.main(argv) == 0
    assert capsys.readouterr().out.splitlines()[3] == table[3]


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--cells", "SOPP", "--tasks", "RTE"], "no cell 'SOPP'"),
        (["--cells", "SOP", "--tasks", "MRPC"], "the study did not fine-tune on 'MRPC'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(script, study, tmp_path, capsys, flags, message):
    argv = [str(study), *flags, "--steps", "2", "--output_dir", str(tmp_path / "o")]
    assert script.main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
    assert not os.path.exists(tmp_path / "o")
