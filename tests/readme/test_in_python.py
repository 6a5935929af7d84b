"""The README's "In Python" snippet runs as written (issue 46), in a fresh folder holding only
the text it reads (`docs/*.md`), with its step counts cut (200 pretraining steps -> 2, 3
fine-tuning epochs -> 1): the README says it runs in minutes on a CPU."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
CUTS = {"steps_per_epoch=200": "steps_per_epoch=2", "epochs=3": "epochs=1"}


def readme_snippet() -> str:
    """The first ```python block after the README's "## In Python" heading."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## In Python") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


@pytest.mark.slow
def test_the_in_python_snippet_runs_as_written(tmp_path):
    code = readme_snippet()
    for written, cut in CUTS.items():
        assert written in code, f"the README's snippet no longer says {written}"
        code = code.replace(written, cut)
    (tmp_path / "docs").mkdir()
    for path in (REPO_ROOT / "docs").glob("*.md"):
        shutil.copy(path, tmp_path / "docs")
    (tmp_path / "snippet.py").write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    run = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "out" / "pretrainer.keras").is_file()
    assert "Warning" not in run.stderr, run.stderr[-3000:]  # no Python warning in its output
