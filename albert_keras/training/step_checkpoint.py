"""StepCheckpoint: the whole training state at the end of each epoch, written so a kill -9 at
any moment leaves the last complete checkpoint loadable."""

import json
import os

import keras
import numpy as np

from pipelines import atomic_write

STATE_FILE = "checkpoint.json"


class StepCheckpoint(keras.callbacks.Callback):
    """Saves every model and optimizer variable at each epoch's end; `restore` loads the last.

    Written by hand because `keras.callbacks.BackupAndRestore` does not resume exactly: it
    restores the epoch number only (a half-done epoch restarts from its start, on data that has
    moved on), its weights and its metadata are two separate writes (a `kill -9` between them
    leaves them disagreeing), and `.weights.h5` files leave out the dropout seed-generator states.
    Here a checkpoint is one `.npz` of `model.variables + model.optimizer.variables` (the
    seed-generator states, the iteration count that drives the learning-rate schedule, the
    optimizer moments) written under a temporary name and renamed; then `checkpoint.json`, the
    commit point, is replaced the same way. Only the newest checkpoint is kept.

    Epoch e is taken to end at step `min((e + 1) * steps_per_epoch, max_steps)`.

    Args:
        directory: str. Where the checkpoints go.
        run_config: dict (JSON-able). What a resumed run must share with the saved one;
            `restore` refuses a checkpoint saved with another.
        steps_per_epoch: int. Steps between checkpoints.
        max_steps: int. The run's last step.

    Example:
    >>> checkpoint = StepCheckpoint("run/checkpoints", {"seed": 1}, 100, 1000)
    >>> step, history = checkpoint.restore(model)  # 0, [] the first time
    >>> model.fit(data, initial_epoch=step // 100, epochs=10, steps_per_epoch=100,
    ...           callbacks=[checkpoint])
    """

    def __init__(self, directory: str, run_config: dict, steps_per_epoch: int, max_steps: int):
        super().__init__()
        self.directory = directory
        self.run_config = run_config
        self.steps_per_epoch = steps_per_epoch
        self.max_steps = max_steps
        self.state_path = os.path.join(directory, STATE_FILE)
        self.history = []

    def saved_state(self) -> dict | None:
        """The last checkpoint's `checkpoint.json`, or `None`; refuses another run's."""
        if not os.path.exists(self.state_path):
            return None
        with open(self.state_path) as f:
            state = json.load(f)
        saved = state["run_config"]
        changed = sorted(
            k for k in set(saved) | set(self.run_config) if saved.get(k) != self.run_config.get(k)
        )
        if changed:
            raise ValueError(
                f"{self.state_path} is a checkpoint of another run (changed: {', '.join(changed)}); "
                "rerun with the same arguments, or use a new output directory"
            )
        return state

    def restore(self, model: keras.Model) -> tuple[int, list[dict]]:
        """Loads the last checkpoint into `model` (built, optimizer built); returns its step
        (0 when there is none) and the history so far: one dict of logs (and `step`) per
        epoch, including those of the runs it resumes."""
        state = self.saved_state()
        if state is None:
            self.history = []
            return 0, []
        variables = _state_variables(model)
        path = os.path.join(self.directory, state["file"])
        with np.load(path) as arrays:
            if len(arrays.files) != len(variables):
                raise ValueError(
                    f"{path} holds {len(arrays.files)} variables, the model {len(variables)}"
                )
            for i, variable in enumerate(variables):
                variable.assign(arrays[f"v{i}"])
        self.history = state["history"]
        return state["step"], list(self.history)

    def on_epoch_end(self, epoch, logs=None):
        step = min((epoch + 1) * self.steps_per_epoch, self.max_steps)
        os.makedirs(self.directory, exist_ok=True)
        name = f"ckpt-{step}.npz"
        values = {
            f"v{i}": keras.ops.convert_to_numpy(v)
            for i, v in enumerate(_state_variables(self.model))
        }
        path = os.path.join(self.directory, name)
        with atomic_write.atomic_path(path) as temporary, open(temporary, "wb") as f:
            np.savez(f, **values)
            f.flush()
            os.fsync(f.fileno())
        self.history.append({"step": step, **{k: float(v) for k, v in (logs or {}).items()}})
        state = {
            "step": step,
            "file": name,
            "run_config": self.run_config,
            "history": self.history,
        }
        atomic_write.write_json(self.state_path, state, fsync=True)
        for old in os.listdir(self.directory):
            if old.startswith("ckpt-") and old != name:
                os.remove(os.path.join(self.directory, old))


def _state_variables(model: keras.Model) -> list:
    return list(model.variables) + list(model.optimizer.variables)
