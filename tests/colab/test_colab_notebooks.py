"""The Colab notebooks: committed clean, and both executed end to end at tiny size.

CI runs `colab/pretrain_albert.ipynb` and then `colab/finetune_glue.ipynb` with nbclient in a
kernel of this Python (so of this virtual environment), with tiny settings put in a cell right
after each notebook's `parameters` cell (as papermill does). A cell that raises fails the test.
The fine-tuning notebook gets the model the pretraining notebook just wrote, exported in the
official TF1 release's layout, so its conversion path runs too.

Both notebooks run a second time on the JAX backend over 8 simulated host devices
(`XLA_FLAGS=--xla_force_host_platform_device_count=8`: a v2-8's or v5e-8's shape, the path a
Colab TPU runtime takes), the fine-tuning one from the model the pretraining one wrote.
"""

import ast
import csv
import json
import pathlib
import sys
import zipfile

import nbformat
import pytest
from nbclient import NotebookClient

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PRETRAIN_NOTEBOOK = REPO_ROOT / "colab" / "pretrain_albert.ipynb"
FINETUNE_NOTEBOOK = REPO_ROOT / "colab" / "finetune_glue.ipynb"
NOTEBOOKS = [PRETRAIN_NOTEBOOK, FINETUNE_NOTEBOOK]

# L2 H64 E32 on sequences of 64: pretrains 30 steps in seconds on 2 cores.
TINY_CONFIG = {
    "num_layers": 2,
    "num_heads": 2,
    "embedding_dim": 32,
    "hidden_dim": 64,
    "intermediate_dim": 128,
    "max_sequence_length": 64,
}
# Calls that only work (or only make sense) on Colab.
COLAB_CALLS = ("pip", "run_line_magic", "drive.mount", "authenticate_user")
TEST_ROWS = 40  # RTE "test" rows the CI GLUE folder gets (dev rows without their labels)
RTE_DEV_ROWS = 300  # the shared_data fixture's RTE dev file (tests/glue_data.py)
JAX_KERNEL = "albert-jax-8-devices"  # this Python on JAX over 8 simulated host devices
JAX_ENV = {
    "KERAS_BACKEND": "jax",
    "JAX_PLATFORMS": "cpu",
    "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
}


def settings_names(notebook) -> list[str]:
    """The names the notebook's `parameters` cell assigns, in order."""
    (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    return [target.id for node in ast.parse(cell.source).body for target in node.targets]


def with_settings(path: pathlib.Path, **settings):
    """The notebook at `path` with a cell setting `settings` right after its parameters cell."""
    notebook = nbformat.read(path, as_version=4)
    unknown = sorted(set(settings) - set(settings_names(notebook)))
    assert not unknown, f"{path.name} has no setting {unknown}"  # a typo would be ignored
    source = "\n".join(f"{name} = {value!r}" for name, value in settings.items())
    index = next(
        i for i, c in enumerate(notebook.cells) if "parameters" in c.metadata.get("tags", [])
    )
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    notebook.cells.insert(index + 1, cell)
    return notebook


def execute(notebook, cwd: pathlib.Path, kernel_name: str = "python3"):
    """Runs every cell in a fresh kernel; raises `CellExecutionError` (with the cell) on failure."""
    NotebookClient(
        notebook, timeout=300, kernel_name=kernel_name, resources={"metadata": {"path": str(cwd)}}
    ).execute()
    return notebook


def outputs_of(notebook, kind: str) -> list:
    return [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if kind in o]


def stream_text(notebook) -> str:
    return "".join(
        o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs
    )


def png_size(path: pathlib.Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def read_tsv(path: pathlib.Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def fit_cells(notebook) -> list:
    """The code cells that call `<something>.fit(...)`."""
    return [
        cell
        for cell in notebook.cells
        if cell.cell_type == "code"
        and any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fit"
            for node in ast.walk(ast.parse(cell.source))
        )
    ]


def fit_cell_output(notebook) -> str:
    """What the one cell calling `.fit(` printed (its last stream output) when executed."""
    (cell,) = fit_cells(notebook)
    assert cell.execution_count is not None, "the fit cell did not run"
    return [o for o in cell.outputs if o.get("name") == "stdout"][-1]["text"].splitlines(True)[-1]


# === Committed clean ===


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert [c.outputs for c in code] == [[]] * len(code)
    assert [c.execution_count for c in code] == [None] * len(code)
    assert notebook.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_one_settings_cell_first_holding_only_used_settings(path):
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert tagged == [code[0]], "the first code cell, and only it, is tagged `parameters`"
    body = ast.parse(code[0].source).body
    assert all(isinstance(node, ast.Assign) for node in body), "settings are plain assignments"
    names = settings_names(notebook)
    assert all(name.isupper() for name in names) and len(set(names)) == len(names)
    rest = "\n".join(c.source for c in code[1:])
    unused = [name for name in names if name not in rest]
    assert not unused, f"settings no cell reads: {unused}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_colab_only_steps_are_guarded(path):
    """pip, Drive, Colab auth and TensorBoard magics run only on Colab (never in CI)."""
    notebook = nbformat.read(path, as_version=4)
    for cell in (c for c in notebook.cells if c.cell_type == "code"):
        tree = ast.parse(cell.source)
        guarded = {
            id(node)
            for branch in ast.walk(tree)
            if isinstance(branch, ast.If) and "IN_COLAB" in ast.unparse(branch.test)
            for statement in branch.body
            for node in ast.walk(statement)
        }
        for node in ast.walk(tree):
            colab_only = (
                isinstance(node, ast.ImportFrom) and node.module.startswith("google.colab")
            ) or (
                isinstance(node, ast.Call)
                and any(word in ast.unparse(node) for word in COLAB_CALLS)
            )
            if colab_only:
                assert id(node) in guarded, f"{path.name}: `{ast.unparse(node)}` runs outside Colab"


# The Keras idiom each notebook must show: build in the strategy's scope, compile with our
# optimizer and schedule, fit with our callbacks (not the CLI's job functions).
IDIOM = {
    PRETRAIN_NOTEBOOK: ("AlbertPretrainer(", "Lamb(", "StepCheckpoint(", "validation_data="),
    FINETUNE_NOTEBOOK: (
        "AlbertClassifier(",
        "AdamWeightDecay(",
        "GlueEvaluation(",
        "EarlyStopping(",
    ),
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_trains_with_model_fit(path):
    notebook = nbformat.read(path, as_version=4)
    assert len(fit_cells(notebook)) == 1, "one cell calls .fit("
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    for piece in (".fit(", "strategies.scope(distribution)", "WarmupLinearDecay(", ".compile("):
        assert piece in code, piece
    for piece in IDIOM[path]:
        assert piece in code, piece
    called = {
        node.func.id
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & {"pretrain", "finetune_glue"}, "the notebook hides the loop in a job"


# === Executed end to end ===


@pytest.fixture(scope="module")
def kernel_of_this_python(tmp_path_factory):
    """A `python3` kernel spec for sys.executable, first on JUPYTER_PATH: the notebooks run in
    this environment whatever other `python3` kernels the machine has. Beside it `JAX_KERNEL`,
    the same Python with `JAX_ENV`."""
    root = tmp_path_factory.mktemp("jupyter")
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    for name, env in (("python3", {}), (JAX_KERNEL, JAX_ENV)):
        spec = root / "kernels" / name
        spec.mkdir(parents=True)
        kernel = {"argv": argv, "display_name": f"albert-keras tests {name}", "language": "python"}
        (spec / "kernel.json").write_text(json.dumps({**kernel, "env": env}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(root))
        patch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
        yield


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory):
    """Slices of two books: ~300 KB to train on, ~60 KB held out (a different book)."""
    root = tmp_path_factory.mktemp("corpus")
    books = shared_data / "corpus" / "gutenberg"
    (root / "train.txt").write_bytes((books / "1342-0.txt").read_bytes()[:300_000])
    (root / "heldout.txt").write_bytes((books / "1661.txt").read_bytes()[:60_000])
    return root


@pytest.fixture(scope="module")
def glue_dir(shared_data, tmp_path_factory):
    """GLUE's layout for RTE: the fixture's train and dev, and a test file made of dev rows."""
    root = tmp_path_factory.mktemp("glue")
    (root / "RTE").mkdir()
    for split in ("train", "dev"):
        (root / "RTE" / f"{split}.tsv").symlink_to(shared_data / "glue" / "RTE" / f"{split}.tsv")
    dev = read_tsv(shared_data / "glue" / "RTE" / "dev.tsv")
    rows = [row[:3] for row in dev[: TEST_ROWS + 1]]  # header too; the label column dropped
    (root / "RTE" / "test.tsv").write_text("\n".join("\t".join(r) for r in rows) + "\n")
    return root


def tiny_pretraining(corpus, work: pathlib.Path, **settings):
    """The pretraining notebook with the CI's tiny settings (and `settings`) for a run in `work`."""
    return with_settings(
        PRETRAIN_NOTEBOOK,
        CORPUS=str(corpus / "train.txt"),
        HELDOUT=str(corpus / "heldout.txt"),
        WORK_DIR=str(work / "run"),
        SAVE_TO=str(work / "saved"),
        VOCAB_SIZE=2000,
        MAX_SEQ_LENGTH=64,
        MAX_PREDICTIONS_PER_SEQ=10,
        DUPE_FACTOR=1,
        NUM_SHARDS=2,
        NUM_WORKERS=1,
        CONFIG=TINY_CONFIG,
        BATCH_SIZE=16,
        MAX_STEPS=30,
        LEARNING_RATE=5e-3,
        CHECKPOINT_EVERY=10,
        EVAL_STEPS=4,
        SEED=7,
        **settings,
    )


@pytest.fixture(scope="module")
def pretrain_run(kernel_of_this_python, corpus, tmp_path_factory):
    work = tmp_path_factory.mktemp("pretrain")
    notebook = execute(tiny_pretraining(corpus, work), work)
    return {"notebook": notebook, "work": work / "run", "saved": work / "saved"}


@pytest.fixture(scope="module")
def release_folder(pretrain_run, tmp_path_factory):
    """The pretrained model in the official TF1 release's layout (albert_config.json,
    model.ckpt.*, 30k-clean.model), as `albert-keras convert` writes it."""
    from albert_keras.convert import export_model, load_any_model

    folder = tmp_path_factory.mktemp("release")
    pretrain = pretrain_run["work"] / "pretrain"
    export_model(load_any_model(pretrain / "model.keras"), "tf1", folder, pretrain / "spm.model")
    return folder


def tiny_finetuning(glue_dir, work: pathlib.Path, **settings):
    """The GLUE notebook with the CI's tiny settings (and `settings`: the model) in `work`."""
    return with_settings(
        FINETUNE_NOTEBOOK,
        TASK="RTE",
        GLUE_SOURCE="tsv",
        GLUE_DIR=str(glue_dir),
        WORK_DIR=str(work / "run"),
        SAVE_TO=str(work / "saved"),
        MAX_STEPS=20,
        BATCH_SIZE=16,
        MAX_SEQ_LENGTH=64,
        LEARNING_RATE=1e-3,
        EVAL_EVERY=10,
        PATIENCE=0,
        SEED=7,
        **settings,
    )


@pytest.fixture(scope="module")
def finetune_run(kernel_of_this_python, release_folder, glue_dir, tmp_path_factory):
    work = tmp_path_factory.mktemp("finetune")
    notebook = tiny_finetuning(
        glue_dir, work, PRETRAINED=str(release_folder), PRETRAINED_FORMAT="tf1"
    )
    notebook = execute(notebook, work)
    return {"notebook": notebook, "work": work / "run", "saved": work / "saved"}


@pytest.fixture(scope="module")
def jax_runs(kernel_of_this_python, corpus, glue_dir, tmp_path_factory):
    """Both notebooks on JAX over 8 simulated devices: pretraining with its records copied to
    and read from a `GCS_DIR` (a local folder here: tf.io.gfile reads both), then fine-tuning
    from the `model.keras` it wrote (the notebooks' default chain)."""
    work = tmp_path_factory.mktemp("jax")
    pretraining = tiny_pretraining(
        corpus, work / "pretrain", KERAS_BACKEND="jax", GCS_DIR=str(work / "bucket")
    )
    execute(pretraining, work, kernel_name=JAX_KERNEL)
    model = work / "pretrain" / "run" / "pretrain" / "model.keras"
    finetuning = tiny_finetuning(
        glue_dir, work / "finetune", KERAS_BACKEND="jax", PRETRAINED=str(model)
    )
    execute(finetuning, work, kernel_name=JAX_KERNEL)
    return {"pretraining": pretraining, "finetuning": finetuning, "work": work}


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_both_notebooks_run_end_to_end(pretrain_run, finetune_run, glue_dir):
    # One test, not two: under pytest-xdist two tests could each run the pretraining notebook.
    check_pretraining(pretrain_run)
    check_finetuning(finetune_run, glue_dir)


def check_pretraining(pretrain_run):
    work, notebook = pretrain_run["work"], pretrain_run["notebook"]
    summary = json.loads((work / "pretrain" / "summary.json").read_text())
    vocab = json.loads((work / "vocab" / "spm.summary.json").read_text())
    stats = json.loads((work / "records" / "train" / "stats.json").read_text())
    assert summary["steps"] == 30
    assert summary["config"]["backbone"] == {
        **summary["config"]["backbone"],
        **TINY_CONFIG,
        "vocabulary_size": vocab["vocab_size"],
    }
    assert 13 < vocab["vocab_size"] <= 2000
    assert summary["config"]["num_examples"] == stats["examples"] > 30 * 16 // 2
    assert summary["config"]["warmup_steps"] == 1  # 2.5% of 30, rounded
    # fit's three periods of 10 steps, each with its held-out evaluation (validation_data)
    assert [entry["step"] for entry in summary["history"]] == [10, 20, 30]
    scores = {"loss", "mlm_loss", "mlm_accuracy", "sentence_loss", "sentence_accuracy"}
    assert set(summary["eval"]) == scores and set(summary["train"]) == scores
    assert all({f"val_{name}" for name in scores} <= set(e) for e in summary["history"])
    assert summary["history"][-1]["mlm_loss"] < summary["history"][0]["mlm_loss"]
    assert fit_cell_output(notebook) == "fit ran 3 period(s); 3 in all\n"
    # The Keras TensorBoard callback wrote the train and held-out runs.
    for run in ("train", "validation"):
        assert list((work / "pretrain" / "logs" / run).glob("events.out.tfevents.*")), run
    # The reload cell compared every held-out score (it asserts they agree).
    text = stream_text(notebook)
    assert text.count("reloaded\n") == len(summary["eval"])
    assert "model.keras vs backbone.keras: max |difference|" in text
    # One figure, shown inline and saved: three panels of 15 x 4 inches at 100 dpi.
    assert len(outputs_of(notebook, "data")) >= 1
    assert [o for o in outputs_of(notebook, "data") if "image/png" in o["data"]]
    assert png_size(work / "pretrain" / "loss_curves.png") == (1500, 400)
    for name in ("model.keras", "backbone.keras", "spm.model", "summary.json", "loss_curves.png"):
        saved = pretrain_run["saved"] / name
        assert saved.read_bytes() == (work / "pretrain" / name).read_bytes(), name
    assert not outputs_of(notebook, "ename")


def check_finetuning(finetune_run, glue_dir):
    work, notebook = finetune_run["work"], finetune_run["notebook"]
    # The TF1 release layout was converted and saved with its SentencePiece model beside it,
    # named after the model (save_imported).
    assert sorted(p.name for p in (work / "converted").iterdir()) == [
        "model.keras",
        "model.spiece.model",
    ]
    metrics = json.loads((work / "RTE" / "metrics.json").read_text())
    summary = (metrics["task"], metrics["split"], metrics["num_examples"])
    assert summary == ("RTE", "dev", RTE_DEV_ROWS)
    assert [h["step"] for h in metrics["history"]] == [10, 20]
    assert metrics["steps_trained"] == 20 and not metrics["stopped_early"]
    assert fit_cell_output(notebook) == "fit ran 2 period(s), 20 steps\n"
    assert metrics["hyperparameters"]["max_seq_length"] == 64
    assert 0.0 <= metrics["metrics"]["accuracy"] <= 1.0
    best = max(metrics["history"], key=lambda h: h["accuracy"])
    assert metrics["best_step"] == best["step"]
    assert metrics["metrics"]["accuracy"] == pytest.approx(best["accuracy"], abs=1e-6)

    dev_rows = read_tsv(work / "RTE" / "dev_predictions" / "RTE.tsv")
    assert len(dev_rows) == 1 + RTE_DEV_ROWS
    submission = read_tsv(work / "RTE" / "submission" / "RTE.tsv")
    test_ids = [row[0] for row in read_tsv(glue_dir / "RTE" / "test.tsv")[1:]]
    assert submission[0] == ["index", "prediction"]
    assert [row[0] for row in submission[1:]] == test_ids and len(test_ids) == TEST_ROWS
    assert {row[1] for row in submission[1:]} <= {"entailment", "not_entailment"}
    with zipfile.ZipFile(work / "glue_submission.zip") as archive:
        assert archive.namelist() == ["RTE.tsv"]
        assert archive.read("RTE.tsv") == (work / "RTE" / "submission" / "RTE.tsv").read_bytes()

    assert png_size(work / "RTE" / "dev_metric.png") == (700, 400)
    assert [o for o in outputs_of(notebook, "data") if "image/png" in o["data"]]
    assert f"{RTE_DEV_ROWS} predictions, the same as reloaded" in stream_text(notebook)
    saved = finetune_run["saved"] / "RTE"
    assert (saved / "model.keras").read_bytes() == (work / "RTE" / "model.keras").read_bytes()
    assert (saved / "submission" / "RTE.tsv").is_file()
    assert not outputs_of(notebook, "ename")


# === On JAX, over 8 simulated devices ===

JAX_LINE = (
    "runtime: jax backend, DataParallel over 8 cpu device(s), global batch 16 = 8 x 2, "
    "steps_per_execution=1; why: asked for\n"
)


def fit_ran_over(notebook) -> dict:
    """What the fit cell printed about the distribution `fit` ran in."""
    (cell,) = fit_cells(notebook)
    text = "".join(o.get("text", "") for o in cell.outputs)
    (line,) = [line for line in text.splitlines() if line.startswith("fit runs over ")]
    return json.loads(line[len("fit runs over ") :])


# The same two notebooks as test_both_notebooks_run_end_to_end (in make test), on the JAX
# backend over 8 devices: two more kernels compiling for 8 devices, ~90 s on 2 cores. The
# 8-device fit itself is also checked fast by tests/training/test_data_parallel.py.
@pytest.mark.slow
def test_both_notebooks_run_on_jax_over_8_devices(jax_runs):
    work = jax_runs["work"]
    eight = {"distribution": "DataParallel", "mesh": {"batch": 8}, "variable_devices": 8}
    for notebook in (jax_runs["pretraining"], jax_runs["finetuning"]):
        assert JAX_LINE in stream_text(notebook).splitlines(True)
        assert fit_ran_over(notebook) == eight
        assert not outputs_of(notebook, "ename")

    summary = json.loads((work / "pretrain" / "run" / "pretrain" / "summary.json").read_text())
    assert summary["device"] == {
        "strategy": "DataParallel",
        "replicas": 8,
        "platform": "cpu",
        "backend": "jax",
        "runtime": JAX_LINE.strip(),
    }
    # fit read the records from GCS_DIR, where the notebook copied them with tf.io.gfile.
    assert summary["config"]["records"] == f"{work / 'bucket'}/records/train/*.tfrecord"
    local = sorted(p.name for p in (work / "pretrain" / "run" / "records" / "train").iterdir())
    copied = sorted(p.name for p in (work / "bucket" / "records" / "train").iterdir())
    assert copied == [name for name in local if name.endswith(".tfrecord")] and len(copied) == 2
    assert [entry["step"] for entry in summary["history"]] == [10, 20, 30]
    assert fit_cell_output(jax_runs["pretraining"]) == "fit ran 3 period(s); 3 in all\n"
    assert "model.keras vs backbone.keras: max |difference|" in stream_text(jax_runs["pretraining"])

    metrics = json.loads((work / "finetune" / "run" / "RTE" / "metrics.json").read_text())
    assert metrics["model"] == str(work / "pretrain" / "run" / "pretrain" / "model.keras")
    assert [h["step"] for h in metrics["history"]] == [10, 20]
    assert fit_cell_output(jax_runs["finetuning"]) == "fit ran 2 period(s), 20 steps\n"
    text = stream_text(jax_runs["finetuning"])
    assert f"{RTE_DEV_ROWS} predictions, the same as reloaded" in text
