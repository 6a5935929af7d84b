"""Fixtures of the data-safety suite: the tiny inputs, a command runner, mount rights."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import pytest
from safety_folders import can_mount
from safety_inputs import make_inputs

HERE = pathlib.Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
PYTHONPATH = os.pathsep.join([str(REPO_ROOT), str(HERE.parent)])
# Set to run each command in a fresh interpreter instead of a fork of a warm one (slower: each
# run then imports TensorFlow, 5-25 s).
FRESH_INTERPRETERS = os.environ.get("ALBERT_SAFETY_FRESH_INTERPRETERS") == "1"


@dataclasses.dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


@pytest.fixture(scope="session")
def safety_inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("safety-inputs"))


@pytest.fixture(scope="session")
def mount_allowed():
    """Whether a real tmpfs can be mounted here (root, or a container that allows it);
    ALBERT_SAFETY_NO_MOUNT=1 tries the fallbacks instead (with ALBERT_KERAS_FULL_DISK=fake for
    tests/full_disk.py's)."""
    return os.environ.get("ALBERT_SAFETY_NO_MOUNT") != "1" and can_mount()


class ForkServer:
    """tests/safety/fork_server.py, started once: each `run` is a fork of a warm interpreter."""

    def __init__(self, log: pathlib.Path):
        self.log = open(log, "w")  # noqa: SIM115 (closed in close())
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "fork_server.py")],
            cwd=REPO_ROOT,
            env=_user_environment({}),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        ready = self.process.stdout.readline()
        if not ready.strip():
            raise RuntimeError(f"the fork server did not start: see {log}")

    def run(self, request: dict) -> dict:
        if "PYTHONPATH" in request["env"]:  # the repository stays importable
            request["env"]["PYTHONPATH"] += os.pathsep + PYTHONPATH
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)
        self.log.close()


def _user_environment(extra: dict) -> dict:
    """This environment as a user's shell has it (tests/conftest.py's TF_CPP_MIN_LOG_LEVEL
    dropped: the commands quiet TensorFlow themselves), plus `extra`, the repository importable."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), PYTHONPATH) if p)
    return env


def _run_fresh(request: dict) -> dict:
    path = pathlib.Path(request["stdout"]).with_suffix(".request.json")
    path.write_text(json.dumps(request))
    env = _user_environment(request["env"])
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / "command_child.py"), str(path)],
            env=env,
            timeout=request["timeout"],
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"rc": -9, "timed_out": True, "seconds": request["timeout"]}
    return {"rc": done.returncode, "timed_out": False, "seconds": 0.0}


@pytest.fixture(scope="session")
def run_command(tmp_path_factory):
    """`run(module, argv, cwd, fake=None, env=None, timeout=60) -> Result`: runs
    `python -m MODULE ARGV` (a fresh interpreter) or `albert-keras ARGV` (`module` None: a fork of
    the warm one) in its own process, output captured; `env` is added to the environment (tests/full_disk.py's fake included), `fake` is
    tests/safety/fake_filesystem.py's."""
    logs = tmp_path_factory.mktemp("safety-logs")
    server = None if FRESH_INTERPRETERS else ForkServer(logs / "fork_server.log")
    counter = iter(range(1_000_000))

    def run(module, argv, cwd, fake=None, env=None, timeout=60):
        n = next(counter)
        request = {
            "module": module,
            "argv": [str(a) for a in argv],
            "cwd": str(cwd),
            "env": env or {},
            "stdout": str(logs / f"{n}.out"),
            "stderr": str(logs / f"{n}.err"),
            "fake": fake,
            "timeout": timeout,
        }
        # `python -m pipelines...` imports no TensorFlow, and TensorFlow's absl handler on the
        # root logger would hide what such a command logs: those run in a fresh interpreter.
        answer = server.run(request) if server and module is None else _run_fresh(request)
        return Result(
            rc=answer["rc"],
            stdout=pathlib.Path(request["stdout"]).read_text(errors="replace"),
            stderr=pathlib.Path(request["stderr"]).read_text(errors="replace"),
            timed_out=answer["timed_out"],
            seconds=answer["seconds"],
        )

    yield run
    if server is not None:
        server.close()
