"""The demo's fine-tuning stage: the pretrained model and the same model without pretraining,
fine-tuned alike on one task, so the summary shows what pretraining bought.

The score reported is each run's dev score at its last step. `finetune_glue` keeps the weights
of its best dev evaluation, but that choice is made on the very rows it is then scored on, which
flatters both runs by their luckiest evaluation; the last step's score involves no choice.
"""

import pathlib

from albert_keras.demo.source_task import write_source_task
from albert_keras.glue import get_glue_task
from albert_keras.jobs.finetune_glue_job import finetune_glue

# The two starting points, in the order they are fine-tuned and reported.
STARTS = ("pretrained", "untrained")
# What the reported score is, in summary.json and the printed line.
SCORED = "dev score at the last step (no checkpoint chosen on dev)"


def run_finetuning(
    out: pathlib.Path,
    spm_model: str,
    *,
    task: str | None,
    glue_dir: str | None,
    steps: int,
    batch_size: int,
    learning_rate: float,
    max_seq_length: int,
    seed: int,
    verbose: str | int = 2,
) -> dict:
    """Fine-tunes `pretrain/model.keras` and `untrained/model.keras` with the same settings.

    Args:
        out: pathlib.Path. The demo's folder; gets `finetune/pretrained/` and
            `finetune/untrained/` (each `finetune_glue`'s outputs).
        spm_model: str. The SentencePiece model of both.
        task, glue_dir: str or None. A GLUE task and GLUE's folder; default (both None): the
            docstring-source task made from the demo corpus (`source_task`).
        steps, batch_size, learning_rate, max_seq_length, seed: fine-tuning settings.
        verbose: passed to `fit`.

    Returns:
        dict: per start, `finetune_glue`'s summary (its `metrics` are those of the best dev
        evaluation, chosen on dev) with `last` added (the last evaluation: `step` and scores);
        and `task`, `metric`, `scored` (`SCORED`), `gain` (pretrained minus untrained on the
        task's main metric at the last step).
    """
    if (task is None) != (glue_dir is None):
        raise ValueError("--finetune_task and --glue_dir go together")
    if task is None:
        # The task's files in a folder of their own (`source_task/source_task/*.tsv`): the
        # fine-tuning runs write into `finetune/`, which may not lie inside a folder they read.
        task = write_source_task(out / "corpus", out / "source_task" / "source_task", seed=seed)
        glue_dir = out / "source_task"
    results = {}
    for start in STARTS:
        model = out / ("pretrain" if start == "pretrained" else "untrained") / "model.keras"
        print(f"--- fine-tuning the {start} model ---", flush=True)
        results[start] = finetune_glue(
            task=task,
            glue_dir=str(glue_dir),
            init_from=str(model),
            output_dir=str(out / "finetune" / start),
            spm_model=spm_model,
            max_steps=steps,
            batch_size=batch_size,
            learning_rate=learning_rate,
            max_seq_length=max_seq_length,
            eval_every=max(1, steps // 10),
            patience=0,  # both run every step: the curves compare step for step
            seed=seed,
            verbose=verbose,
        )
    name, metric = get_glue_task(task).name, get_glue_task(task).main_metric
    for start, summary in results.items():
        summary["last"] = last_evaluation(summary)
    gain = results["pretrained"]["last"][metric] - results["untrained"]["last"][metric]
    return {"task": name, "metric": metric, "scored": SCORED, "gain": gain, **results}


def last_evaluation(summary: dict) -> dict:
    """The dev evaluation of a `finetune_glue` run's last step (`step` and scores).

    Args:
        summary: dict. `finetune_glue`'s summary (`history`, `steps_trained`).

    Example:
    >>> last_evaluation({"steps_trained": 20, "history": [{"step": 10, "accuracy": 0.7},
    ...                                                   {"step": 20, "accuracy": 0.6}]})
    {'step': 20, 'accuracy': 0.6}
    """
    last = summary["history"][-1]
    if last["step"] != summary["steps_trained"]:  # the demo evaluates at the end, always
        raise ValueError(
            f"the last dev evaluation is of step {last['step']}, training ended at step "
            f"{summary['steps_trained']}: no score of the last step to report"
        )
    return dict(last)
