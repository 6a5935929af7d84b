"""`albert-keras distill` writes only into a folder it owns (issue 29): never into its
teacher's folder, never over another run's without --overwrite."""

import hashlib
import os
import shutil

import pytest

from albert_keras_cli.main import main


def _checksums(folder):
    return {
        os.path.relpath(os.path.join(root, name), folder): hashlib.sha256(
            open(os.path.join(root, name), "rb").read()
        ).hexdigest()
        for root, _, names in os.walk(folder)
        for name in names
    }


def _argv(teacher, records, output_dir, seed, *extra):
    return ["distill", "--teacher", str(teacher), "--records", records, "--output_dir",
            str(output_dir), "--config", "num_layers=1", "--batch_size", "16", "--max_steps",
            "2", "--checkpoint_every", "1", "--seed", str(seed), *extra]  # fmt: skip


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_the_teachers_folder_and_another_runs_folder_are_refused(
    teacher_path, distill_records, tmp_path, capsys
):
    run = tmp_path / "run"
    run.mkdir()
    teacher = run / "model.keras"  # a pretraining run's folder, its model the teacher
    shutil.copyfile(teacher_path, teacher)
    before = _checksums(run)
    for extra in ((), ("--overwrite",)):
        assert main(_argv(teacher, distill_records["train"], run, 1, *extra)) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and "--teacher" in error[0], error
        assert "lies inside --output_dir" in error[0]
    assert _checksums(run) == before  # the teacher was not overwritten by its student

    out = tmp_path / "student"
    assert main(_argv(teacher, distill_records["train"], out, 1)) == 0
    before = _checksums(out)
    capsys.readouterr()
    assert main(_argv(teacher, distill_records["train"], out, 2)) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "other arguments (seed: 1 before, 2 now)" in error[0], error
    assert "--overwrite" in error[0]
    assert _checksums(out) == before
    assert main(_argv(teacher, distill_records["train"], out, 2, "--overwrite")) == 0
    assert _checksums(out) != before
