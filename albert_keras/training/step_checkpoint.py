"""StepCheckpoint: the whole training state at the end of each epoch, written so a kill -9 at
any moment leaves the last complete checkpoint loadable."""

import io
import json
import os
import re
import sys
import zipfile
import zlib

import keras
import numpy as np

from albert_keras.training.model_files import one_line_os_errors
from albert_keras_contracts import atomic_write

STATE_FILE = "checkpoint.json"


class StepCheckpoint(keras.callbacks.Callback):
    """Saves every model and optimizer variable at each epoch's end; `restore` loads the last.

    Written by hand because `keras.callbacks.BackupAndRestore` does not resume exactly: it
    restores the epoch number only (a half-done epoch restarts from its start, on data that has
    moved on), its weights and its metadata are two separate writes (a `kill -9` between them
    leaves them disagreeing), and `.weights.h5` files leave out the dropout seed-generator states.
    Here a checkpoint is one `.npz` of `model.variables + model.optimizer.variables` (the
    seed-generator states, the iteration count that drives the learning-rate schedule, the
    optimizer moments) written under a temporary name and renamed; then its state
    (`ckpt-STEP.json`: step, run config, history) and `checkpoint.json`, the commit point (a
    copy of the newest state), are replaced the same way. The newest two checkpoints are kept:
    if the newest is unreadable (a corrupt `.npz`, a truncated `.json`), `restore` says so in
    one line and falls back to the one before; with none usable it names the file and says to
    delete the folder to start over.

    Epoch e is taken to end at step `min((e + 1) * steps_per_epoch, max_steps)`.

    Args:
        directory: str. Where the checkpoints go.
        run_config: dict (JSON-able). What a resumed run must share with the saved one;
            `restore` refuses a checkpoint saved with another.
        steps_per_epoch: int. Steps between checkpoints.
        max_steps: int. The run's last step.

    Example:
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(loss="mse", optimizer="sgd")
    >>> checkpoint = StepCheckpoint("run/checkpoints", {"seed": 1}, steps_per_epoch=2, max_steps=6)
    >>> step, history = checkpoint.restore(model)
    >>> step, history  # nothing saved yet
    (0, [])
    >>> _ = model.fit(np.zeros((4, 2)), np.zeros((4, 1)), batch_size=2, initial_epoch=step // 2,
    ...               epochs=3, verbose=0, callbacks=[checkpoint])
    >>> checkpoint.restore(model)[0]  # a new run would go on from here
    6
    """

    def __init__(self, directory: str, run_config: dict, steps_per_epoch: int, max_steps: int):
        super().__init__()
        self.directory = directory
        self.run_config = run_config
        self.steps_per_epoch = steps_per_epoch
        self.max_steps = max_steps
        self.state_path = os.path.join(directory, STATE_FILE)
        self.history = []
        self._loaded = None  # (state, arrays) read by `saved_state`, used by `restore`
        # The output folder's recorded temporary tokens (set by `PeriodicTraining`): the stale
        # temporaries of its killed runs are removed; with none known, none is.
        self.temporary_tokens: tuple[str, ...] = ()

    def saved_state(self) -> dict | None:
        """The state of the newest readable checkpoint, or `None`; refuses another run's.

        Reads (and keeps, for `restore`) its variables too, so a corrupt file is found here,
        before the step to resume from is decided.
        """
        if self._loaded is None:
            remove_stale_temporaries(self.directory, self.temporary_tokens)
            self._loaded = self._load_newest()
        if self._loaded is None:
            return None
        state = self._loaded[0]
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
        arrays, self._loaded = self._loaded[1], None
        variables = _state_variables(model)
        path = os.path.join(self.directory, state["file"])
        if len(arrays) != len(variables):
            raise ValueError(
                f"{path} holds {len(arrays)} variables, the model {len(variables)}; "
                f"delete {self.directory} to start the run over"
            )
        for i, variable in enumerate(variables):
            variable.assign(arrays[f"v{i}"])
        self.history = state["history"]
        return state["step"], list(self.history)

    def _load_newest(self) -> tuple[dict, dict] | None:
        """(state, arrays) of the newest checkpoint that reads whole, or None if there is none.

        Candidates: `checkpoint.json`, then each `ckpt-STEP.json` newest first.
        """
        candidates = [self.state_path] + [
            os.path.join(self.directory, f"ckpt-{step}.json")
            for step in sorted(_saved_steps(self.directory), reverse=True)
        ]
        existing = [path for path in candidates if os.path.exists(path)]
        failures = []
        for path in dict.fromkeys(existing):
            try:
                state, arrays = _read_checkpoint(self.directory, path)
            except _Unreadable as error:
                failures.append(str(error))
                continue
            if failures:
                print(
                    f"checkpoint: {failures[0]}; resuming from step {state['step']} "
                    f"({os.path.basename(path)}, {state['file']})",
                    file=sys.stderr,
                    flush=True,
                )
            return state, arrays
        if failures:
            raise ValueError(
                f"{failures[0]}, and no earlier checkpoint is usable; delete {self.directory} "
                "to start the run over"
            )
        return None

    def on_epoch_end(self, epoch, logs=None):
        step = min((epoch + 1) * self.steps_per_epoch, self.max_steps)
        name = f"ckpt-{step}.npz"
        path = os.path.join(self.directory, name)
        values = {
            f"v{i}": keras.ops.convert_to_numpy(v)
            for i, v in enumerate(_state_variables(self.model))
        }
        history = [*self.history, {"step": step, **{k: float(v) for k, v in (logs or {}).items()}}]
        state = {"step": step, "file": name, "run_config": self.run_config, "history": history}
        # A full disk is one line: the temporaries are gone, the last committed checkpoint whole.
        with one_line_os_errors(path):
            os.makedirs(self.directory, exist_ok=True)
            with atomic_write.atomic_path(path) as temporary, open(temporary, "wb") as f:
                np.savez(f, **values)
                f.flush()
                os.fsync(f.fileno())
            atomic_write.write_json(
                os.path.join(self.directory, f"ckpt-{step}.json"), state, fsync=True
            )
            atomic_write.write_json(self.state_path, state, fsync=True)
        self.history = history
        # Keep this checkpoint and the one before (the fallback if this one is damaged later).
        keep = sorted(s for s in _saved_steps(self.directory) if s <= step)[-2:]
        for old in os.listdir(self.directory):
            match = _CHECKPOINT_FILE.fullmatch(old)
            if match and int(match.group(1)) not in keep:
                os.remove(os.path.join(self.directory, old))


def remove_stale_temporaries(folder: str, tokens=()) -> list[str]:
    """Removes the atomic writer's temporaries in `folder` whose writer is no longer running.

    A `kill -9` in the middle of a save leaves its `.ckpt-N.tmp-PID-TOKEN.npz` (or
    `.model.tmp-PID-TOKEN.keras`) behind. Only a temporary whose token one of our runs drew and
    recorded (`tokens`: the output folder's manifest keeps them) is ours; its PID names the
    writer, so one whose process is gone is garbage. A name that merely looks like one (a
    user's `.notes.tmp-123.txt`) is never touched, nor a live process's.

    Args:
        folder: str. The folder to clean (missing: nothing to do).
        tokens: the tokens recorded by the folder's runs (`OutputFolder.temporary_tokens`).

    Returns:
        The names removed.

    Example:
    >>> import tempfile
    >>> from albert_keras_contracts.atomic_write import process_token
    >>> folder, token = tempfile.mkdtemp(), process_token()
    >>> for pid in (os.getpid(), 2**22 + 1):  # this process, and one above Linux's PID limit
    ...     _ = open(os.path.join(folder, f".ckpt-5.tmp-{pid}-{token}.npz"), "w").write("half")
    >>> _ = open(os.path.join(folder, ".notes.tmp-4194305.txt"), "w").write("a user's")
    >>> remove_stale_temporaries(folder, [token]) == [f".ckpt-5.tmp-4194305-{token}.npz"]
    True
    """
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    removed = []
    for name in names:
        pid = atomic_write.temporary_writer(name, tokens)
        if pid is not None and not _running(pid):
            try:
                os.remove(os.path.join(folder, name))
            except IsADirectoryError:
                continue
            except FileNotFoundError:
                pass
            removed.append(name)
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except OverflowError:
        return False
    return True


_CHECKPOINT_FILE = re.compile(r"ckpt-(\d+)\.(?:npz|json)")


class _Unreadable(Exception):
    """A checkpoint file that cannot be read whole (the message names it)."""


def _saved_steps(directory: str) -> set[int]:
    """Steps that have a `ckpt-STEP.npz`."""
    try:
        names = os.listdir(directory)
    except OSError:
        return set()
    return {
        int(m.group(1))
        for n in names
        if (m := _CHECKPOINT_FILE.fullmatch(n)) and n.endswith(".npz")
    }


def _read_checkpoint(directory: str, state_path: str) -> tuple[dict, dict]:
    """Reads a state file and every array of its `.npz`; raises `_Unreadable` naming the file."""
    try:
        with open(state_path) as f:
            state = json.load(f)
        missing = [k for k in ("step", "file", "run_config", "history") if k not in state]
        if not isinstance(state, dict) or missing:
            raise ValueError(f"no {', '.join(missing) or 'object'}")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise _Unreadable(f"{state_path} is unreadable or truncated ({error})") from None
    path = os.path.join(directory, state["file"])
    try:
        # Member by member through zipfile, which checks each one's CRC when read whole
        # (np.load reads an uncompressed array without reaching that check).
        with zipfile.ZipFile(path) as archive:
            arrays = {
                info.filename.removesuffix(".npy"): np.lib.format.read_array(
                    io.BytesIO(archive.read(info)), allow_pickle=False
                )
                for info in archive.infolist()
            }
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise _Unreadable(
            f"{path} is corrupt or truncated ({type(error).__name__}: {error})"
        ) from None
    return state, arrays


def _state_variables(model: keras.Model) -> list:
    return list(model.variables) + list(model.optimizer.variables)
