"""Every command that writes, as the data-safety suite runs it: tiny sizes, output into OUT.

`argv(inputs, out, model)` builds the command line: `inputs` is safety_inputs.make_inputs's
dict, `out` the folder the output goes into, `model` the input model's path (in case (b) a copy
inside the other command's folder, as `finetune-glue --model run/model.keras --output_dir run/`).
Single-file outputs (`train_vocab`'s PREFIX.model, `convert --output X.keras`) go into OUT too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from safety_inputs import TINY_BACKBONE

_CONFIG = [f"--config={key}={value}" for key, value in TINY_BACKBONE.items()]
_WRITER = ["--max_seq_length", "32", "--max_predictions_per_seq", "5", "--dupe_factor", "1"]
_WRITER += ["--num_shards", "1", "--quiet"]
_DEMO = ["--vocab_size=100", "--max_seq_length=32", "--max_predictions_per_seq=5"]
_DEMO += ["--dupe_factor=1", "--config=num_layers=1", "--config=hidden_dim=16"]
_DEMO += ["--config=intermediate_dim=32", "--config=num_heads=2", "--pretrain_steps=1"]
_DEMO += ["--warmup_steps=1", "--batch_size=4", "--finetune_steps=1"]


@dataclasses.dataclass(frozen=True)
class Command:
    """One writing command.

    Args:
        name: str. The test id.
        module: str or None. `python -m MODULE`; None for `albert-keras`.
        argv: callable (inputs, out, model) -> list of str.
        model: str or None. The input model (a key of the inputs), read from case (b)'s folder.
        single_file: bool. The output is named files in OUT (PREFIX.model, X.keras), not OUT
            itself: writing them beside a user's other files is a safe write.
        slow: bool. Its control run (a real run into a new folder) takes more than a few
            seconds: marked slow (the refusals stay in the default run).
    """

    name: str
    module: str | None
    argv: Callable[[dict, object, str | None], list]
    model: str | None = None
    single_file: bool = False
    slow: bool = False


def _train_vocab(i, out, m):
    return ["--input", i["corpus"], "--output_prefix", out / "spm", "--vocab_size", "80",
            "--allow_smaller_vocab", "--num_threads", "1", "--quiet"]  # fmt: skip


def _writer(i, out, m):
    return ["--input", i["corpus"], "--spm_model", i["spm"], "--output_dir", out, *_WRITER]


def _pretrain(i, out, m):
    return ["pretrain", "--records", i["records"], "--output_dir", out, "--batch_size", "4",
            "--max_steps", "1", "--max_predictions_per_seq", "5", *_CONFIG]  # fmt: skip


def _distill(i, out, m):
    return ["distill", "--teacher", m, "--records", i["records"], "--output_dir", out,
            "--config", "num_layers=1", "--batch_size", "4", "--max_steps", "1"]  # fmt: skip


def _finetune_glue(i, out, m):
    return ["finetune-glue", "--task", "SST-2", "--glue_dir", i["glue_dir"], "--model", m,
            "--output_dir", out, "--spm_model", i["spm"], "--max_steps", "1", "--batch_size", "4",
            "--max_seq_length", "16", "--eval_every", "1"]  # fmt: skip


def _finetune_squad(i, out, m):
    return ["finetune-squad", "--version", "2.0", "--train_file", i["squad_train"],
            "--predict_file", i["squad_dev"], "--model", m, "--output_dir", out,
            "--spm_model", i["spm"], "--epochs", "1", "--max_seq_length", "32",
            "--doc_stride", "16", "--max_query_length", "8", "--batch_size", "2",
            "--strategy", "cpu"]  # fmt: skip


def _study(i, out, m):
    return ["study", i["study_spec"], "--output_dir", out]


def _demo(i, out, m):
    # With --corpus, the fine-tuning task is a GLUE one (the default one is made of docstrings).
    return ["demo", "--output_dir", out, "--corpus", i["corpus"], "--heldout", i["heldout"],
            "--finetune_task", "SST-2", "--glue_dir", i["glue_dir"], *_DEMO]  # fmt: skip


COMMANDS = [
    Command("train_vocab", "pipelines.train_vocab", _train_vocab, single_file=True),
    Command(
        "pretraining_data",
        "pipelines.pretraining_data",
        lambda i, out, m: [*_writer(i, out, m), "--num_workers", "1"],
    ),
    Command(
        "pretraining_data_beam",
        "pipelines.pretraining_data",
        lambda i, out, m: [*_writer(i, out, m), "--runner", "DirectRunner"],
    ),
    Command("pretrain", None, _pretrain, slow=True),
    Command("distill", None, _distill, model="pretrainer", slow=True),
    Command("finetune_glue", None, _finetune_glue, model="pretrainer", slow=True),
    Command("finetune_squad", None, _finetune_squad, model="pretrainer", slow=True),
    Command(
        "convert",
        None,
        lambda i, out, m: ["convert", "--source", "keras", m, "--output", out / "model.keras"],
        model="pretrainer",
        single_file=True,
    ),
    Command(
        "convert_to_tf1",
        None,
        lambda i, out, m: ["convert", "--source", "keras", m, "--to", "tf1", out],
        model="pretrainer",
    ),
    Command("export", None, lambda i, out, m: ["export", m, out], model="classifier", slow=True),
    Command(
        "predict",
        None,
        lambda i, out, m: (
            ["predict", "--model", m, "--input", i["lines"]]
            + ["--output", out / "predictions.jsonl"]
        ),
        model="classifier",
        single_file=True,
    ),
    Command("study", None, _study, slow=True),
    Command("demo", None, _demo, slow=True),
]
