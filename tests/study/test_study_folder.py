"""`albert-keras study` writes only into a folder it owns (issue 29): a folder of a user's
files, another command's, or a study with another budget is refused in one line before anything
runs; `--overwrite` removes only what the earlier study wrote; `--report_only` reads only a
study's folder. (The studies themselves run in test_run_study.py.)"""

import importlib
import json
import os

import pytest

from albert_keras.study import load_spec, run_study
from albert_keras_cli.main import main
from albert_keras_contracts.output_folder import OutputFolder, OutputFolderError

# The module (the package's `run_study` is the function of the same name).
run_study_module = importlib.import_module("albert_keras.study.run_study")
SPEC = {"name": "tiny", "steps": 4, "seeds": [1], "tasks": [], "baseline": False,
        "cells": [{"name": "A", "sentence_objective": "sop"}]}  # fmt: skip


def _spec(tmp_path):
    (tmp_path / "text").mkdir(exist_ok=True)
    (tmp_path / "text" / "a.txt").write_text("One sentence. Another one.\n")
    (tmp_path / "held.txt").write_text("Held out.\n")
    (tmp_path / "spm.model").write_bytes(b"not read before the folder is checked")
    return {**SPEC, "corpus": str(tmp_path / "text" / "*.txt"),
            "heldout": str(tmp_path / "held.txt"), "spm_model": str(tmp_path / "spm.model")}  # fmt: skip


def _earlier_study(out, spec):
    """A study's folder as an earlier run with `spec` leaves it, plus a user's note."""
    budget = {k: v for k, v in load_spec(spec).to_dict().items()
              if k not in ("description", "cells")}  # fmt: skip
    with OutputFolder(out, run_study_module.COMMAND, budget) as folder:
        for name in ("cells", "report.md"):
            folder.claim(name)
        (out / "cells" / "A" / "seed-1").mkdir(parents=True)
        (out / "cells" / "A" / "seed-1" / "summary.json").write_text("{}")
        (out / "report.md").write_text("# the earlier study\n")
    (out / "notes.txt").write_text("the user's, added later\n")


def test_a_folder_of_user_files_or_of_another_command_is_refused(tmp_path, capsys):
    spec = _spec(tmp_path)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work\n")
    pretrained = tmp_path / "pretrained"
    with OutputFolder(pretrained, "albert-keras pretrain", {"seed": 1}) as folder:
        (pretrained / "model.keras").write_bytes(b"a model")
        folder.claim("model.keras")
    for out, message in (
        (mine, "holds files albert-keras did not write (thesis.tex)"),
        (pretrained, "holds the output of `albert-keras pretrain`, not of `albert-keras study`"),
    ):
        assert main(["study", str(tmp_path / "spec.json"), "--output_dir", str(out),
                     "--overwrite"]) == 2  # fmt: skip
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error
    assert sorted(os.listdir(mine)) == ["thesis.tex"]
    assert (pretrained / "model.keras").read_bytes() == b"a model"
    with pytest.raises(OutputFolderError, match="holds no `albert-keras study` output"):
        run_study(spec, str(mine), report_only=True)


def test_another_budget_is_refused_and_overwrite_removes_only_the_studys_files(
    tmp_path, monkeypatch
):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    _earlier_study(out, spec)
    with pytest.raises(OutputFolderError, match=r"other arguments \(steps: 4 before, 8 now\)"):
        run_study({**spec, "steps": 8}, str(out))
    assert (out / "report.md").read_text() == "# the earlier study\n"

    ran = []
    monkeypatch.setattr(run_study_module, "_run", lambda *args, **kwargs: ran.append(args) or {})
    run_study({**spec, "steps": 8}, str(out), overwrite=True)
    assert len(ran) == 1
    assert sorted(os.listdir(out)) == [".albert-keras.json", "notes.txt"]  # the note stays
    manifest = json.loads((out / ".albert-keras.json").read_text())
    assert manifest["arguments"]["steps"] == 8
    assert sorted(manifest["files"]) == sorted(run_study_module.ENTRIES)
