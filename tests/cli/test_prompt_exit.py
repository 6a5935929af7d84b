"""`albert-keras` ends within a moment of its last line (issue 46: the demo's process exited 42 s
after "Done", Python tearing TensorFlow down), with the exit code it always had; `predict`'s
JSON lines each say which input they answer."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest

import albert_keras as ak

LINES = ["a film I loved", "it dragged"]


@pytest.fixture(scope="module")
def classifier(tmp_path_factory, tiny_spm):
    """An untrained tiny classifier that reads text (its preprocessor saved in it)."""
    path = tmp_path_factory.mktemp("classifier") / "model.keras"
    tokenizer = ak.AlbertTokenizer(str(tiny_spm))
    backbone = ak.AlbertBackbone(vocabulary_size=tokenizer.vocabulary_size(), num_layers=1,
                                 num_heads=2, embedding_dim=8, hidden_dim=16,
                                 intermediate_dim=32, max_sequence_length=16)  # fmt: skip
    preprocessor = ak.AlbertPreprocessor(tokenizer, 16)
    ak.AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor).save(path)
    return path


def _timed(argv, stdin=""):
    """(exit code, stdout lines, seconds from the last line written to the process's end)."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    process = subprocess.Popen([sys.executable, "-m", "albert_keras_cli", *argv], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    last = [time.monotonic()]
    errors = []

    def drain():  # stderr's lines count as output too
        for line in process.stderr:
            errors.append(line)
            last[0] = time.monotonic()

    reader = threading.Thread(target=drain)
    reader.start()
    process.stdin.write(stdin)
    process.stdin.close()
    lines = []
    for line in process.stdout:
        lines.append(line)
        last[0] = time.monotonic()
    code = process.wait(timeout=300)
    ended = time.monotonic()
    reader.join()
    return code, lines, ended - last[0], "".join(errors)


def test_predict_ends_promptly_and_echoes_each_line(classifier):
    code, lines, lag, errors = _timed(["predict", "--model", str(classifier)], "\n".join(LINES))
    assert code == 0, errors
    rows = [json.loads(line) for line in lines]
    assert [row["text"] for row in rows] == LINES and all(
        len(r["probabilities"]) == 2 for r in rows
    )
    # Python's teardown of TensorFlow took 2-14 s here (more on a busy machine); skipped, the
    # process ends in a fraction of a second.
    assert lag < 1.5, f"ended {lag:.1f} s after its last line"


def test_the_exit_codes_are_kept(tmp_path):
    code, _, _, errors = _timed(["predict", "--model", str(tmp_path / "missing.keras")])
    assert code == 2 and "no such file" in errors
    assert _timed(["predict", "--help"])[0] == 0
    assert _timed(["predict", "--no_such_flag"])[0] == 2
