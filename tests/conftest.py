"""Shared fixtures: tiny configs, tiny records, and real data: slices committed under
tests/data (see its PROVENANCE.md) laid out as the developers' ../shared/data."""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest
from release_tarball import train_tiny_sentencepiece

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST_DATA = REPO_ROOT / "tests" / "data"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _catalogue_as_it_was():
    """Every test leaves the catalogue's registries as it found them, in place (other modules
    hold the same dicts): a task or preset one test registers, a docstring example's included,
    is gone for the next test in the same worker."""
    from albert_keras_contracts import catalogue

    registries = (
        catalogue.GLUE_TASKS, catalogue._ALIASES, catalogue.SHARING_MODES,
        catalogue.ARCHITECTURE_PRESETS,
    )  # fmt: skip
    saved = [dict(registry) for registry in registries]
    yield
    for registry, contents in zip(registries, saved):
        if registry != contents:
            registry.clear()
            registry.update(contents)


@pytest.fixture(autouse=True)
def _environment_as_it_was():
    """Every test leaves `os.environ` as it found it: a variable a module sets on import (a
    benchmark script's `KERAS_BACKEND=jax` default) would otherwise reach every process a later
    test in the same worker starts (CI: `predict` in a subprocess ran on JAX and failed)."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def shared_data(tmp_path_factory):
    """Real data in ../shared/data's layout, in every checkout: the release vocabulary, the
    first pages of six Gutenberg books and two SQuAD 2.0 articles from tests/data, and GLUE's
    five tasks written here from the books' sentences (GLUE's own files are not ours to copy).
    `glue/COUNTS.json` holds the rows and labels each GLUE file was written with."""
    from glue_data import write_glue_tasks

    root = tmp_path_factory.mktemp("data")
    for name in ("vocab", "corpus", "squad", "reference"):  # copies: tests/data stays as committed
        shutil.copytree(TEST_DATA / name, root / name, ignore=shutil.ignore_patterns("*.md"))
    text = (TEST_DATA / "corpus" / "gutenberg" / "1342-0.txt").read_text(encoding="utf-8-sig")
    # Sentences for GLUE's rows: a plain split is enough, the rows need text, not linguistics.
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    counts = write_glue_tasks(root / "glue", sentences)
    table = {f"{task}/{split}": value for (task, split), value in counts.items()}
    (root / "glue" / "COUNTS.json").write_text(json.dumps(table, indent=1))
    return root


def pytest_collection_modifyitems(config, items):
    """A test that needs ../shared/data (`full_data`) must be marked slow: `make test` runs
    whole in a fresh clone, where ../shared/data is absent."""
    unmarked = [
        item.nodeid
        for item in items
        if "full_data" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("slow")
    ]
    if unmarked:
        raise pytest.UsageError(f"full_data needs @pytest.mark.slow: {', '.join(unmarked)}")


@pytest.fixture(scope="session")
def full_data():
    """../shared/data itself, for the few checks that need whole books or files (its 8 MB of
    official-format sentences); those tests are marked slow. Skips where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"whole-corpus data not found at {SHARED_DATA} (beside the dev checkout only)")
    return SHARED_DATA


@pytest.fixture
def tiny_config():
    """A backbone config small enough for a test to build and fit in seconds."""
    return {
        "vocabulary_size": 100,
        "num_layers": 2,
        "num_heads": 2,
        "embedding_dim": 8,
        "hidden_dim": 16,
        "intermediate_dim": 32,
        "max_sequence_length": 32,
        "num_segments": 2,
    }


@pytest.fixture(scope="session")
def tiny_spm(tmp_path_factory):
    """A real SentencePiece model (29 pieces) with ALBERT's special ids (<pad> 0, <unk> 1,
    [CLS] 2, [SEP] 3, [MASK] 4), trained in a fraction of a second."""
    return train_tiny_sentencepiece(tmp_path_factory.mktemp("spm") / "tiny")


@pytest.fixture
def kill_at_first_checkpoint():
    """`kill(argv, output_dir) -> step`: starts a training command, `kill -9`s it once its first
    checkpoint is committed, and returns the step that checkpoint ended at (the resume tests
    then run the same command again)."""
    return _kill_at_first_checkpoint


def _kill_at_first_checkpoint(argv: list[str], output_dir: pathlib.Path) -> int:
    job = subprocess.Popen(
        argv,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    state = output_dir / "checkpoints" / "checkpoint.json"
    deadline = time.monotonic() + 300
    while not state.exists() and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    job.send_signal(signal.SIGKILL)
    job.wait()
    return json.loads(state.read_text())["step"]


# === Pretraining records and teachers (tests/jobs, tests/training, tests/distill) ===


@pytest.fixture(scope="session")
def tiny_records(tmp_path_factory):
    """Synthetic pretraining records with a learnable signal: two training shards of 512
    examples and one eval shard of 64; returns their globs."""
    from synthetic_records import write_synthetic_records  # TensorFlow: only where used

    root = tmp_path_factory.mktemp("records")
    for shard in range(2):
        write_synthetic_records(root / f"train-{shard}.tfrecord", 512, seed=shard)
    write_synthetic_records(root / "eval-0.tfrecord", 64, seed=99)
    return {"train": str(root / "train-*.tfrecord"), "eval": str(root / "eval-*.tfrecord")}


@pytest.fixture
def tiny_overrides():
    """Backbone overrides on top of a preset for a model that trains in seconds."""
    from synthetic_records import SEQ_LENGTH, VOCABULARY_SIZE

    return {
        "vocabulary_size": VOCABULARY_SIZE,
        "num_layers": 2,
        "num_heads": 2,
        "embedding_dim": 16,
        "hidden_dim": 32,
        "intermediate_dim": 64,
        "max_sequence_length": SEQ_LENGTH,
    }


@pytest.fixture(scope="session")
def distill_records(tmp_path_factory):
    """One training shard of 256 examples and one eval shard of 64; returns their globs."""
    from synthetic_records import write_synthetic_records

    root = tmp_path_factory.mktemp("distill_records")
    write_synthetic_records(root / "train-0.tfrecord", 256, seed=0)
    write_synthetic_records(root / "eval-0.tfrecord", 64, seed=99)
    return {"train": str(root / "train-*.tfrecord"), "eval": str(root / "eval-*.tfrecord")}


@pytest.fixture(scope="session")
def teacher_path(tmp_path_factory):
    """A saved teacher (`model.keras`, as `albert-keras pretrain` writes)."""
    from distill_helpers import make_teacher

    path = tmp_path_factory.mktemp("teacher") / "model.keras"
    make_teacher().save(path)
    return str(path)
