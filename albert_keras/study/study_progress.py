"""Progress lines for a study: which run, which step, how fast, and the time left.

Pretraining is watched from beside it: a thread reads the cell's `checkpoint.json` (written at
every checkpoint period by `StepCheckpoint`), so the training job itself needs no hook.
"""

from __future__ import annotations

import json
import sys
import threading
import time


class StudyProgress:
    """Prints `[study NAME] run i/n CELL seed S: ...` lines with time-left estimates.

    Args:
        name: str. The study's name.
        total_runs: int. Cell-seed runs in the study.
        steps: int. Pretraining steps per pretrained run.
        finetunes_per_run: int. Downstream tasks per run.
        finetune_steps: int. Steps per fine-tuning run (for the first estimate).
        stream: file. Where lines go (default stdout).
        poll_seconds: float. How often the pretraining watcher looks.
    """

    def __init__(self, name, total_runs, steps, finetunes_per_run, finetune_steps,
                 stream=None, poll_seconds=10.0):  # fmt: skip
        self.name = name
        self.total_runs = total_runs
        self.steps = steps
        self.finetunes_per_run = finetunes_per_run
        self.finetune_steps = finetune_steps
        self.stream = stream or sys.stdout
        self.poll_seconds = poll_seconds
        self.label = ""
        self.index = 0
        self.left_pretrain_steps = 0  # in runs not yet started
        self.left_finetunes = 0
        self.seconds_per_step = None
        self.finetune_seconds = []
        self._watch = None

    def say(self, message: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"{stamp} [study {self.name}] {self.label}{message}", file=self.stream, flush=True)

    def plan(self, pending_pretrain_steps: int, pending_finetunes: int) -> None:
        self.left_pretrain_steps = pending_pretrain_steps
        self.left_finetunes = pending_finetunes

    def start_run(self, index: int, cell_name: str, seed: int, pretrain_steps: int) -> None:
        """A run begins; `pretrain_steps` of the planned steps are now its own."""
        self.index = index
        self.label = f"run {index}/{self.total_runs} {cell_name} seed {seed}: "
        self.left_pretrain_steps -= pretrain_steps
        self.say(f"started; study ~{_minutes(self.study_left(pretrain_steps))} left")

    def study_left(self, steps_here: int = 0) -> float | None:
        """Seconds left in the study from the rates seen so far (None before any), with
        `steps_here` pretraining steps left in the current run."""
        if self.seconds_per_step is None:
            return None
        per_finetune = (
            sum(self.finetune_seconds) / len(self.finetune_seconds)
            if self.finetune_seconds
            else self.finetune_steps * self.seconds_per_step + 20.0
        )
        steps = self.left_pretrain_steps + steps_here
        return steps * self.seconds_per_step + self.left_finetunes * per_finetune

    # === Pretraining watcher ===

    def pretraining(self, state_path: str | None) -> None:
        """Starts watching `state_path` (a checkpoint.json), or stops with None."""
        if self._watch is not None:
            self._watch[1].set()
            self._watch[0].join()
            self._watch = None
        if state_path is None:
            return
        stop = threading.Event()
        thread = threading.Thread(target=self._poll, args=(state_path, stop), daemon=True)
        self._watch = (thread, stop)
        thread.start()

    def _poll(self, state_path, stop):
        seen, first = None, None
        while not stop.wait(self.poll_seconds):
            try:
                with open(state_path) as f:
                    state = json.load(f)
            except (OSError, ValueError):
                continue
            step = state["step"]
            now = time.time()
            if first is None:
                first, seen = (step, now), step  # a resumed run: rate from here on
                continue
            if step == seen:
                continue
            seen = step
            rate = (step - first[0]) / (now - first[1])
            if rate <= 0:
                continue
            self.seconds_per_step = 1.0 / rate
            logs = state["history"][-1] if state["history"] else {}
            scores = ", ".join(
                f"{k} {v:.3f}" for k, v in logs.items() if k in ("mlm_loss", "sentence_accuracy")
            )
            left = (self.steps - step) * self.seconds_per_step
            self.say(
                f"pretraining step {step}/{self.steps} ({scores}), {rate:.2f} steps/s, "
                f"pretraining ~{_minutes(left)} left, "
                f"study ~{_minutes(self.study_left(self.steps - step))} left"
            )

    # === Fine-tuning ===

    def finetuning(self, task: str) -> None:
        self.say(f"fine-tuning {task}; study ~{_minutes(self.study_left())} left")

    def finetuned(self, seconds: float) -> None:
        self.finetune_seconds.append(seconds)
        self.left_finetunes -= 1


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "? min"
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    return f"{max(1, round(seconds / 60))} min"
