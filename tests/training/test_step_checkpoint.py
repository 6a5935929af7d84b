"""StepCheckpoint: a damaged newest checkpoint falls back to the one before, named in one line;
with nothing usable, a one-line error names the file and says how to start over."""

import errno
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from albert_keras.training.step_checkpoint import StepCheckpoint
from albert_keras_contracts.output_folder import OutputFolderError

RUN = {"seed": 1}


def _model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


@pytest.fixture
def saved(tmp_path):
    """Three checkpoint periods of 2 steps; returns (folder, the model's weights per step)."""
    folder = tmp_path / "checkpoints"
    model = _model()
    weights = {}

    class Remember(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            weights[2 * (epoch + 1)] = [v.numpy().copy() for v in model.variables]

    x, y = np.ones((4, 3), "float32"), np.zeros((4, 2), "float32")
    checkpoint = StepCheckpoint(str(folder), RUN, steps_per_epoch=2, max_steps=6)
    model.fit(x, y, batch_size=2, epochs=3, callbacks=[checkpoint, Remember()], verbose=0)
    return folder, weights


def _restore(folder):
    model = _model()
    step, history = StepCheckpoint(str(folder), RUN, 2, 6).restore(model)
    return step, history, [v.numpy() for v in model.variables]


def test_the_newest_two_checkpoints_are_kept(saved):
    folder, weights = saved
    assert sorted(os.listdir(folder)) == [
        "checkpoint.json", "ckpt-4.json", "ckpt-4.npz", "ckpt-6.json", "ckpt-6.npz",
    ]  # fmt: skip
    step, history, variables = _restore(folder)
    assert step == 6 and [h["step"] for h in history] == [2, 4, 6]
    for got, want in zip(variables, weights[6]):
        np.testing.assert_array_equal(got, want)


def test_a_corrupt_npz_falls_back_to_the_previous_checkpoint(saved, capsys):
    folder, weights = saved
    data = bytearray((folder / "ckpt-6.npz").read_bytes())
    # A bit flipped inside the last array's values (past its 128-byte .npy header): the file
    # still opens, and only the zip member's CRC tells.
    data[data.rfind(b"\x93NUMPY") + 130] ^= 0x10
    (folder / "ckpt-6.npz").write_bytes(data)
    step, history, variables = _restore(folder)
    assert step == 4 and [h["step"] for h in history] == [2, 4]
    for got, want in zip(variables, weights[4]):
        np.testing.assert_array_equal(got, want)
    message = capsys.readouterr().err
    assert message.count("\n") == 1
    assert message.startswith(f"checkpoint: {folder / 'ckpt-6.npz'} is corrupt or truncated (")
    assert message.endswith("; resuming from step 4 (ckpt-4.json, ckpt-4.npz)\n")


def test_a_truncated_checkpoint_json_falls_back_to_its_copy(saved, capsys):
    folder, weights = saved
    text = (folder / "checkpoint.json").read_text()
    (folder / "checkpoint.json").write_text(text[: len(text) // 2])
    step, _, variables = _restore(folder)
    assert step == 6
    for got, want in zip(variables, weights[6]):
        np.testing.assert_array_equal(got, want)
    message = capsys.readouterr().err
    assert message.startswith(
        f"checkpoint: {folder / 'checkpoint.json'} is unreadable or truncated"
    )
    assert message.endswith("resuming from step 6 (ckpt-6.json, ckpt-6.npz)\n")


def test_nothing_usable_is_one_error_naming_the_file_and_the_fix(saved):
    folder, _ = saved
    (folder / "ckpt-6.npz").write_bytes(b"PK\x03\x04 not a whole zip")
    (folder / "ckpt-4.npz").unlink()
    with pytest.raises(ValueError) as error:
        _restore(folder)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{folder / 'ckpt-6.npz'} is corrupt or truncated (BadZipFile: ")
    assert message.endswith(
        f"no earlier checkpoint is usable; delete {folder} to start the run over"
    )


def test_a_checkpoint_of_another_run_is_still_refused(saved):
    folder, _ = saved
    with pytest.raises(ValueError, match=r"checkpoint of another run \(changed: seed\)"):
        StepCheckpoint(str(folder), {"seed": 2}, 2, 6).saved_state()
    assert json.loads((folder / "checkpoint.json").read_text())["step"] == 6


def test_a_kill_9_in_a_save_leaves_temporaries_the_next_run_removes(saved):
    """`kill -9` during `np.savez` left `.ckpt-N.tmp-PID.npz` (15 MB for albert_base) for ever.
    Only temporaries carrying a recorded token are ours: a user's look-alike stays."""
    folder, weights = saved
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    pid, token = int(dead.stdout), "0123456789abcdef"
    stale = [f".ckpt-8.tmp-{pid}-{token}.npz", f".ckpt-8.tmp-{pid}-{token}.json",
             f".checkpoint.tmp-{pid}-{token}.json"]  # fmt: skip
    mine = f".ckpt-8.tmp-{os.getpid()}-{token}.npz"  # a live writer's (this process): kept
    users = [f".ckpt-8.tmp-{pid}.npz", f".notes.tmp-{pid}-fedcba9876543210.txt"]  # kept
    for name in [*stale, mine, *users]:
        (folder / name).write_bytes(b"half")
    model = _model()
    checkpoint = StepCheckpoint(str(folder), RUN, 2, 6)
    checkpoint.temporary_tokens = (token,)
    step, _ = checkpoint.restore(model)
    assert step == 6  # the resume is exact as before
    for got, want in zip([v.numpy() for v in model.variables], weights[6]):
        np.testing.assert_array_equal(got, want)
    assert sorted(os.listdir(folder)) == sorted([
        mine, *users, "checkpoint.json", "ckpt-4.json", "ckpt-4.npz", "ckpt-6.json", "ckpt-6.npz",
    ])  # fmt: skip


def test_a_full_disk_is_one_line_and_the_last_checkpoint_stays(saved, monkeypatch):
    folder, _ = saved
    model = _model()
    checkpoint = StepCheckpoint(str(folder), RUN, 2, 8)
    checkpoint.restore(model)
    checkpoint.set_model(model)

    def no_space(file, **arrays):
        file.write(b"PK\x03\x04 a partial archive")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez", no_space)
    with pytest.raises(OutputFolderError) as error:
        checkpoint.on_epoch_end(3)
    assert str(error.value) == (
        f"{folder / 'ckpt-8.npz'}: no space left on the device; free some space and rerun"
    )
    monkeypatch.undo()
    assert sorted(os.listdir(folder)) == [
        "checkpoint.json", "ckpt-4.json", "ckpt-4.npz", "ckpt-6.json", "ckpt-6.npz",
    ]  # fmt: skip
    assert _restore(folder)[0] == 6
