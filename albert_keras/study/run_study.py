"""`run_study`: data once, then every cell at every seed, then the report.

    out/
        study.json        the checked spec (a rerun must match it)
        data/             records per objective, held-out records of each kind, capped GLUE
        cells/<cell>/seed-<s>/   one folder per run (see `study_cell`)
        report.md, report.json, pretraining_curves.png, downstream.png

Runs go in two passes: first every run's pretraining and intrinsic evaluation, then every run's
fine-tuning; each pass seed by seed (every cell at the first seed, then the second, ...). A
study stopped early so still has every cell, and the report is rewritten after each step. Running the same command
again skips finished runs and resumes the one in progress from its checkpoint.
"""

from __future__ import annotations

import json
import os
import time

from albert_keras.study.study_cell import read_summary, run_cell, run_folder
from albert_keras.study.study_data import capped_glue_dir, make_records
from albert_keras.study.study_progress import StudyProgress
from albert_keras.study.study_report import write_report
from albert_keras.study.study_spec import StudySpec, load_spec
from albert_keras_contracts import atomic_write
from albert_keras_contracts.output_folder import (
    MANIFEST,
    OutputFolder,
    OutputFolderError,
    check_apart,
)

# Keys that change nothing a finished run measured: a rerun may change them.
_FREE_KEYS = ("description",)
COMMAND = "albert-keras study"
# What a study writes at the top of its folder (an --overwrite removes these, nothing else).
ENTRIES = ("study.json", "data", "cells", "report.md", "report.json", "pretraining_curves.png",
           "downstream.png")  # fmt: skip


def run_study(
    spec: str | dict | StudySpec,
    output_dir: str,
    *,
    overrides: dict | None = None,
    command: str | None = None,
    stream=None,
    report_only: bool = False,
    overwrite: bool = False,
) -> dict:
    """Runs (or resumes) a study and writes its report; returns the report's data.

    Args:
        spec: a built-in name (`"table3"`, `"table4"`, `"table5"`), a YAML / JSON path, a dict,
            or a `StudySpec`.
        output_dir: str. The study's folder (see the module docstring).
        overrides: dict. Spec keys over the spec's (e.g. `{"steps": 200, "seeds": [1]}`).
        command: str. The command line that reproduces the study, quoted in the report.
        stream: file. Progress lines (default stdout).
        report_only: bool. Only rewrite the report from the runs finished so far (e.g. while
            the study still runs elsewhere: it takes no lock); nothing is trained.
        overwrite: bool. Over an earlier study with another budget in `output_dir`, remove
            what that study wrote (and nothing else) and start anew, instead of refusing.

    Returns:
        dict: what `report.json` holds.

    Example (not run as a doctest: three pretraining runs and their fine-tuning, minutes of CPU;
    tests/study runs a small study):
    >>> report = run_study("table5", "out/table5", overrides={   # doctest: +SKIP
    ...     "corpus": "books/*.txt", "heldout": "books/1661.txt",
    ...     "spm_model": "spm.model", "glue_dir": "glue_data", "steps": 500})
    >>> report["rows"][0]["cell"]  # doctest: +SKIP
    'None'
    """
    if not isinstance(spec, StudySpec):
        spec = load_spec(spec, overrides)
    elif overrides:
        raise ValueError("overrides go with a spec name, path or dict, not a StudySpec")
    if report_only:
        _check_is_study(output_dir)
        return _run(spec, output_dir, command, stream, report_only=True)
    # The budget decides resume, as `study.json` did; cells may be added to a study.
    budget = {k: v for k, v in spec.to_dict().items() if k not in (*_FREE_KEYS, "cells")}
    # Never over what it reads: the study's folder is none of its spec's files, nor holds one.
    read = {f"{key} (spec)": spec.settings.get(key) for key in _SPEC_INPUTS}
    check_apart("--output_dir", output_dir, read)
    # A first study that fails before a run wrote anything (a bad value found late) leaves no
    # folder behind: `study.json` alone is rewritten from the spec by the corrected rerun.
    rewritten = ("study.json",)
    with OutputFolder(
        output_dir, COMMAND, budget, overwrite=overwrite, rewritten=rewritten
    ) as folder:
        for name in ENTRIES:
            folder.claim(name)
        return _run(spec, output_dir, command, stream)


# The spec's keys that name files or folders the study reads.
_SPEC_INPUTS = ("corpus", "heldout", "spm_model", "glue_dir")


def _run(spec: StudySpec, output_dir: str, command, stream, *, report_only=False) -> dict:
    """The study itself, in its (checked, locked) folder: data, runs, report."""
    settings = spec.settings
    _check_same_study(spec, output_dir)
    runs = [(cell, seed) for seed in settings["seeds"] for cell in spec.cells]
    progress = StudyProgress(
        settings["name"],
        len(runs),
        settings["steps"],
        len(settings["tasks"]),
        settings["finetune_steps"],
        stream=stream,
    )
    data_dir = os.path.join(output_dir, "data")
    objectives = [cell.sentence_objective for cell in spec.cells if cell.pretrain]
    data = make_records(settings, objectives, data_dir, log=progress.say)
    if report_only:
        return write_report(spec, output_dir, data=data, command=command)
    glue_dir = capped_glue_dir(settings, data_dir) if settings["tasks"] else None
    _plan(progress, spec, runs, output_dir)
    started = time.time()
    # Two passes: every run's pretraining and intrinsic evaluation first (the paper's intrinsic
    # columns for every seed, soonest), then the fine-tuning, seed by seed.
    for downstream in (False, True) if settings["tasks"] else (False,):
        for index, (cell, seed) in enumerate(runs, 1):
            folder = run_folder(output_dir, cell, seed)
            done = read_summary(folder)
            if done is not None and (done["stage"] == "complete" or not downstream):
                continue
            progress.start_run(index, cell.name, seed, 0 if done or not cell.pretrain
                               else settings["steps"])  # fmt: skip
            summary = run_cell(
                spec, cell, seed, folder, data, glue_dir, progress, downstream=downstream
            )
            progress.say("done: " + _scores(summary))
            write_report(spec, output_dir, data=data, command=command)
    progress.label = ""
    report = write_report(spec, output_dir, data=data, command=command)
    progress.say(f"finished in {(time.time() - started) / 60:.1f} min -> {output_dir}/report.md")
    return report


def _scores(summary: dict) -> str:
    intrinsic = summary["intrinsic"]
    scores = {
        "mlm": intrinsic["mlm_accuracy"],
        "nsp": intrinsic["nsp_accuracy"],
        "sop": intrinsic["sop_accuracy"],
        "downstream avg": summary["downstream_average"],
    }
    return ", ".join(f"{k} {v:.3f}" for k, v in scores.items() if v is not None)


def _check_is_study(output_dir: str) -> None:
    """`--report_only` reads a study's folder without its lock: it must be a study's."""
    try:
        with open(os.path.join(output_dir, MANIFEST), encoding="utf-8") as f:
            command = json.load(f).get("command")
    except (OSError, ValueError, AttributeError):
        command = None
    if command != COMMAND:
        raise OutputFolderError(
            f"{output_dir} holds no `{COMMAND}` output: --report_only reports a study's folder"
        )


def _check_same_study(spec: StudySpec, output_dir: str) -> None:
    """Writes `study.json`, or checks that the one there has the same budget."""
    path = os.path.join(output_dir, "study.json")
    current = spec.to_dict()
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        changed = sorted(
            key
            for key in set(saved) | set(current)
            if key not in _FREE_KEYS and key != "cells" and saved.get(key) != current.get(key)
        )
        if changed:
            raise ValueError(
                f"{output_dir} holds a study with another budget (changed: {', '.join(changed)}); "
                "rerun with the same spec and --config, or use a new --output_dir"
            )
    atomic_write.write_json(path, current, indent=2)


def _plan(progress: StudyProgress, spec: StudySpec, runs, output_dir: str) -> None:
    steps = finetunes = 0
    for cell, seed in runs:
        folder = run_folder(output_dir, cell, seed)
        done = read_summary(folder)
        if done is not None and done["stage"] == "complete":
            continue
        if cell.pretrain and not os.path.exists(os.path.join(folder, "pretrain", "summary.json")):
            steps += spec.settings["steps"]
        finetunes += sum(
            not os.path.exists(os.path.join(folder, "glue", task, "metrics.json"))
            for task in spec.settings["tasks"]
        )
    progress.plan(steps, finetunes)
    progress.say(
        f"{len(runs)} runs ({len(spec.cells)} cells x {len(spec.settings['seeds'])} seeds), "
        f"{steps} pretraining steps and {finetunes} fine-tuning runs to go"
    )
