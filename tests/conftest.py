"""Shared fixtures: tiny configs, tiny records, and real data: slices committed under
tests/data (see its PROVENANCE.md) laid out as the developers' ../shared/data."""

import collections
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


# Cases of parametrized tests that run in `make test-all` only (issue 46: `make test` within 8
# minutes on two cores). Each is one more variant of a check whose other case stays in `make
# test` (a second optimizer, head or model kind); chosen by CPU seconds against the lines only
# they run (coverage.py contexts), so `make test`'s line coverage fell by less than a point.
SLOW_CASES = {
    "tests/convert/test_hf_task_heads.py::test_hf_task_folder_loads_into_our_task_and_saves_back":
        ["AlbertForSequenceClassification"],
    "tests/distill/test_distillation_losses.py::test_distiller_terms_on_a_fixed_batch":
        ["same-width"],
    "tests/glue/test_one_text_path.py::test_training_ids_equal_serving_ids_on_glue_dev": ["CoLA"],
    "tests/models/test_albert_pretrainer.py::test_sparse_last_layer_equals_the_full_computation":
        ["all-1-True"],
    "tests/models/test_albert_question_answerer.py::test_fit_then_save_load_round_trip": ["v2"],
    "tests/models/test_albert_task.py::test_saved_file_layout_and_round_trip":
        ["distiller", "question_answerer_simple", "question_answerer_v2"],
    "tests/models/test_bf16_round_trip.py::test_distiller": ["mixed_bfloat16"],
    "tests/models/test_bf16_round_trip.py::test_pretrainer": ["mixed_bfloat16"],
    "tests/models/test_dense_gradient_train_step.py::"
    "test_stock_adam_in_fit_equals_adam_on_dense_gradients": ["distiller"],
    "tests/models/test_pretrainer_pooler.py::test_the_pooler_trains_only_under_a_sentence_head":
        ["sop"],
    "tests/models/test_question_answerer_pooler.py::"
    "test_fit_leaves_the_pooler_untouched_without_a_warning": ["v2"],
    "tests/optimizers/test_gradient_accumulation.py::test_accumulated_updates_equal_the_big_batch":
        ["lamb", "lamb_warmup_linear_decay"],
    "tests/optimizers/test_lamb_fused.py::"
    "test_five_steps_equal_the_official_lamb_on_separate_query_key_value":
        ["exclude_from_layer_adaptation1"],
    "tests/optimizers/test_learning_parity.py::"
    "test_thirty_steps_in_parity_and_the_command_prints_them": ["lamb-adam-0.01"],
    "tests/preprocessing/test_tokenizer_lifetime.py::"
    "test_a_tokenizer_made_before_the_cache_is_cleared_gives_the_same_ids":
        ["keras.backend.clear_session"],
    "tests/squad/test_squad_text_path.py::test_a_saved_answerer_answers_text_as_before_saving":
        ["simple"],
}  # fmt: skip


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(config, items):
    """Marks `SLOW_CASES` slow (a case that no longer exists is an error: a renamed case would
    otherwise run in `make test` unnoticed). A test that needs ../shared/data (`full_data`) must
    be marked slow: `make test` runs whole in a fresh clone, where ../shared/data is absent."""
    wanted = {f"{test}[{case}]" for test, cases in SLOW_CASES.items() for case in cases}
    for item in items:
        if item.nodeid in wanted:
            item.add_marker(pytest.mark.slow)
    # Checked where a test's cases were collected (not where one case was picked by its id).
    cases = collections.Counter(item.nodeid.split("[")[0] for item in items if "[" in item.nodeid)
    missing = sorted(
        node for node in wanted - {item.nodeid for item in items}
        if cases[node.split("[")[0]] > 1
    )  # fmt: skip
    if missing:
        raise pytest.UsageError(f"SLOW_CASES names cases that do not exist: {', '.join(missing)}")
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
