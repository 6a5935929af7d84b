"""Starting and ending the processes of a multi-process test: free ports picked at run time,
`TF_CONFIG` per worker, each process in its own session so that its whole group is ended,
pass or fail (`Workers` is a context manager)."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time


def free_ports(count: int) -> list[int]:
    """`count` TCP ports free on localhost now (held open together, so they differ)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("localhost", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def tf_configs(count: int) -> list[str]:
    """The `TF_CONFIG` of each of `count` workers on localhost (worker 0 is the chief)."""
    cluster = {"worker": [f"localhost:{port}" for port in free_ports(count)]}
    return [
        json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
        for i in range(count)
    ]


class Workers:
    """Starts one process per environment in `envs`, all running `argv`; `with` ends them all.

    Args:
        argv: list of str. The command (after the Python interpreter).
        envs: list of dict. Each process's extra environment.
        log_dir: path. Where each process's stdout+stderr go (`worker-I.log`).
    """

    def __init__(self, argv, envs, log_dir):
        self.argv, self.envs, self.log_dir = argv, envs, log_dir
        self.processes = []

    def __enter__(self):
        base = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONUNBUFFERED": "1"}
        for i, env in enumerate(self.envs):
            log = open(os.path.join(self.log_dir, f"worker-{i}.log"), "w")
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, *self.argv],
                    env={**base, **env},
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group, ended below
                )
            )
            log.close()
        return self

    def wait(self, timeout: float) -> list[int | None]:
        """Each process's exit code once all have ended, or None for those still running at
        `timeout` seconds."""
        deadline = time.monotonic() + timeout
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(deadline - time.monotonic(), 0.01))
        return [process.poll() for process in self.processes]

    def log(self, i: int) -> str:
        with open(os.path.join(self.log_dir, f"worker-{i}.log"), errors="replace") as file:
            return file.read()

    def kill(self, i: int) -> None:
        """`kill -9` of process `i`'s whole group."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.processes[i].pid, signal.SIGKILL)
        self.processes[i].wait()

    def __exit__(self, *exc_info):
        for i in range(len(self.processes)):
            self.kill(i)
