"""JobRun, the one skeleton of the four jobs: its order, its folder, and what a failure keeps."""

import dataclasses
import json
import random

import keras
import numpy as np
import pytest

from albert_keras.jobs.job_run import JobRun


@dataclasses.dataclass(frozen=True, kw_only=True)
class ToySettings:
    output_dir: str
    seed: int = 5
    strategy: str = "cpu"
    deterministic: bool = False
    mixed_precision: str = "float32"
    overwrite: bool = False
    fail_evaluation: bool = False


class ToyJob(JobRun):
    """Records the order of its hooks and the first random draw in two of them."""

    command, settings_class = "albert-keras toy", ToySettings

    def read_inputs(self):
        self.calls = ["read_inputs"]
        self.draw_reading = random.random()
        self.x = np.arange(6.0).reshape(6, 1)
        return {"seed": self.settings.seed}

    def output_folder(self, arguments):
        self.calls.append("output_folder")
        return super().output_folder(arguments)

    def prepare(self, folder):
        self.calls.append("prepare")

    def build(self, folder):
        self.calls.append("build")
        self.draw_building = random.random()
        model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        return model

    def fit(self, model):
        self.calls.append("fit")
        model.fit(self.x, self.x, verbose=0)

    def evaluate(self, folder, model):
        self.calls.append("evaluate")
        if self.settings.fail_evaluation:
            raise ValueError("held-out records: unreadable")
        return {"mse": model.evaluate(self.x, self.x, verbose=0)}

    def save(self, folder, model):
        self.calls.append("save")
        super().save(folder, model)

    def summary(self, model, figures):
        self.calls.append("summary")
        return {"strategy": self.settings.strategy, **figures}


def _first_draw(seed):
    keras.utils.set_random_seed(seed)
    return random.random()


def test_the_steps_run_in_order_and_write_the_folder(tmp_path, capsys):
    job = ToyJob(None, {"output_dir": str(tmp_path / "run")}, verbose=0)
    summary = job.run()
    assert job.calls == ["read_inputs", "output_folder", "prepare", "build", "fit", "evaluate",
                         "save", "summary"]  # fmt: skip
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == summary
    manifest = json.loads((tmp_path / "run" / ".albert-keras.json").read_text())
    assert manifest["command"] == "albert-keras toy" and manifest["arguments"] == {"seed": 5}
    assert sorted(manifest["files"]) == ["model.keras", "summary.json"]
    assert capsys.readouterr().out == "mixed precision: float32 (asked for)\n"
    # Seeded after the inputs are read (the pretraining jobs' order): the build draws first.
    assert job.draw_building == _first_draw(5) != job.draw_reading


def test_seed_first_seeds_before_the_inputs_and_a_quiet_job_says_nothing(tmp_path, capsys):
    class QuietSeededFirst(ToyJob):
        seed_first = True
        reports_precision_when_silent = False

    job = QuietSeededFirst(None, {"output_dir": str(tmp_path / "run")}, verbose=0)
    job.run()
    assert job.draw_reading == _first_draw(5)
    assert capsys.readouterr().out == ""


def test_a_failed_evaluation_still_saves_the_trained_model(tmp_path):
    job = ToyJob(None, {"output_dir": str(tmp_path / "run"), "fail_evaluation": True})
    with pytest.raises(ValueError, match="unreadable"):
        job.run()
    assert job.calls[-2:] == ["evaluate", "save"]
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [
        ".albert-keras.json",
        "model.keras",
    ]  # no summary.json: the run did not finish; the lock is gone
    again = ToyJob(None, {"output_dir": str(tmp_path / "run")}).run()  # resumes its own folder
    assert set(again) == {"strategy", "mse"}
