"""Nothing a user owns is ever lost: every writing command, output sent into five bad places.

For each command of safety_commands.COMMANDS and each case, the command runs in its own process
with its output into
    (a) user_files:   a folder holding a user's files (some named as our outputs are),
    (b) other_output: another command's output folder (the input model read from inside it),
    (c) live_writer:  a folder whose lock another live process holds,
    (d) full_disk:    a full tmpfs (or tests/full_disk.py's fake, where mounting is refused),
    (e) read_only:    a read-only tmpfs (or chmod / the fake),
the output going into an empty `run/` beside the user's files in (d) and (e),
and must end in a one-line error (exit 2, one stderr line naming the folder, no traceback) or,
in (a) and (b) and for a single-file output only (PREFIX.model, X.keras), a safe write (exit 0:
its files beside the others); either way every entry that was under the test's
folder before, the user's files and the other command's files alike, is there after, byte for
byte (sha256), and a refusal leaves nothing new but empty folders and our manifest and lock.
A control case, new_folder, runs the same command line into a new folder and must succeed: the
refusals above are the folder's doing, not a wrong flag's (marked slow where it trains).

Each `albert-keras` command is a fork of one warm interpreter (tests/safety/fork_server.py:
TensorFlow imported once, not fifty times); `python -m pipelines...` commands, which import no
TensorFlow, run in fresh interpreters; ALBERT_SAFETY_FRESH_INTERPRETERS=1 runs all in fresh ones.
"""

from __future__ import annotations

import contextlib
import os
import re

import pytest
from full_disk import full_disk
from safety_commands import COMMANDS
from safety_folders import (
    LiveHolder,
    other_output,
    read_only,
    restore_writable,
    tree_digest,
    unexpected_new_entries,
    unmount,
    user_folder,
    write_user_files,
)

# new_folder is the control: the command line is right, and the command writes.
CASES = ("new_folder", "user_files", "other_output", "live_writer", "full_disk", "read_only")
# Where a command with a single-file output may write instead of refusing: beside the user's
# or the other command's files, never over them. A folder output must refuse both.
SAFE_WRITE_ALLOWED = ("user_files", "other_output")
# What the one line must say, beyond naming the folder.
EXPECTED = {
    "live_writer": r"in use.*pid {pid}",
    "full_disk": r"no space left",
    "read_only": r"not writable|read-only",
}
# (command, case): why it fails today. Filled in at the end of the day with what still fails.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}
TIMEOUT_S = 60  # a refusal takes seconds; a control run (a real tiny run) gets CONTROL_TIMEOUT_S
CONTROL_TIMEOUT_S = 300


def _params():
    for command in COMMANDS:
        for case in CASES:
            marks = [pytest.mark.slow] if case == "new_folder" and command.slow else []
            reason = KNOWN_FAILURES.get((command.name, case))
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(command, case, marks=marks, id=f"{command.name}-{case}")


def _place(case, command, tmp_path, model, mount_allowed, stack):
    """Makes the case's folder; returns (folder, out, model, holder, request extras)."""
    holder, extras = None, {}
    if case == "new_folder":
        folder = out = tmp_path / "new"
    elif case == "user_files":
        folder = out = user_folder(tmp_path / "user")
    elif case == "other_output":
        other = "albert-keras distill" if command.name == "pretrain" else "albert-keras pretrain"
        folder = out = other_output(tmp_path / "other", other, model)
        model = str(folder / "model.keras") if model else None
    elif case == "live_writer":
        folder = out = tmp_path / "busy"
        holder = LiveHolder(folder, "albert-keras pretrain")
        stack.callback(holder.stop)
    elif case == "full_disk":
        disk = stack.enter_context(full_disk(tmp_path, size_mb=1))
        folder, out = disk.root, disk.root / "run"
        write_user_files(folder)
        out.mkdir()  # an empty folder made before the disk filled up, as (e) has one
        disk.fill()
        extras["env"] = {k: v for k, v in disk.env.items() if os.environ.get(k) != v}
    else:
        folder, out = tmp_path / "ro", tmp_path / "ro" / "run"
        extras["fake"] = read_only(folder, mount_allowed)
        stack.callback(unmount if mount_allowed else restore_writable, folder)
    return folder, out, model, holder, extras


@pytest.mark.parametrize("command, case", list(_params()))
def test_output_into_a_bad_place(
    command, case, tmp_path, safety_inputs, run_command, mount_allowed
):
    model = safety_inputs[command.model] if command.model else None
    with contextlib.ExitStack() as stack:
        folder, out, model, holder, extras = _place(
            case, command, tmp_path, model, mount_allowed, stack
        )
        before = tree_digest(tmp_path)
        argv = command.argv(safety_inputs, out, model)
        timeout = CONTROL_TIMEOUT_S if case == "new_folder" else TIMEOUT_S
        result = run_command(command.module, argv, cwd=tmp_path, timeout=timeout, **extras)
        after = tree_digest(tmp_path)  # with the holder still alive and the mounts still there
    shown = f"exit {result.rc} in {result.seconds:.1f} s; stderr:\n{result.stderr[-3000:]}"
    print(f"{command.name}-{case}: {shown}")  # shown with -rA: what each command did
    changed = sorted(key for key in before if after.get(key) != before[key])
    assert changed == [], f"entries changed or lost: {changed}; {shown}"
    assert not result.timed_out, f"no answer in {timeout} s; {shown}"
    if case == "new_folder":
        assert result.rc == 0 and any(folder.iterdir()), shown
        return
    if result.rc == 0 and case in SAFE_WRITE_ALLOWED and command.single_file:
        return
    lines = result.stderr.strip().splitlines()
    assert result.rc == 2 and len(lines) == 1 and "Traceback" not in result.stderr, shown
    assert str(folder) in lines[0], f"the line does not name {folder}; {shown}"
    if case in EXPECTED:
        pid = holder.process.pid if holder else None
        assert re.search(EXPECTED[case].format(pid=pid), lines[0], re.IGNORECASE), shown
    assert unexpected_new_entries(before, after) == [], shown
