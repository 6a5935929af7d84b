"""The README's first workflow command runs from a fresh shell after the README's set-up line,
`. .venv/bin/activate` (issue 46: `albert-keras: command not found`, `python -m
pipelines.train_vocab` -> `No module named 'sentencepiece'` without it), in a folder of its own."""

import os
import pathlib
import subprocess
import sys

# The environment the tests run in is the one `make install` made; its `activate` is the set-up
# line's (`.venv/bin/activate` under `make`, wherever VENV= put it otherwise).
ACTIVATE = pathlib.Path(sys.executable).parent / "activate"
TEXT = "the cat sat on the mat . a dog ran in the park . we looked at the sky .\n\n" * 40


def test_the_first_workflow_command_runs_after_the_set_up_line(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text(TEXT)
    # As the README has it (a vocabulary a tiny corpus can give), then the CLI on PATH.
    script = (
        f". {ACTIVATE} && "
        "python -m pipelines.train_vocab --input 'corpus/*.txt' --vocab_size 33 "
        "--output_prefix out/spm && albert-keras --version"
    )
    # A fresh login-like shell: nothing of this process's PATH or virtual environment.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, check=False,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out" / "spm.model").is_file()
    assert done.stdout.strip().splitlines()[-1].startswith("albert-keras ")
    # Without the set-up line the same shell has neither.
    bare = subprocess.run(["bash", "-c", "albert-keras --version"], cwd=tmp_path, env=env, check=False,
                          capture_output=True, text=True)  # fmt: skip
    assert bare.returncode == 127 and "command not found" in bare.stderr
    assert os.access(ACTIVATE, os.R_OK)
