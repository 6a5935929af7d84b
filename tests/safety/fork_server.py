"""A warm interpreter that runs each command of the data-safety suite in a forked child.

Starting `albert-keras` costs an import of TensorFlow (5-25 s on the test machines) before the
command does anything; the suite runs some sixty commands that mostly refuse in their first
second. So this process imports what the commands import, once, the way the command line does
(`configure_logging`, then `import_tensorflow`, quietly; nothing that prints as it loads, so a
child's stderr is what a fresh interpreter's would be), runs no TensorFlow op (so no thread
pool exists to be broken by `fork`), and then, per request, forks a child that is the command:
its own PID (a lock file names it), its own file descriptors 1 and 2, its own process group
(killed whole on a timeout, worker processes included), and its exit status.

Protocol: one JSON request per line on stdin (`command_child.run_command`'s, plus "timeout"),
one JSON answer per line on stdout: {"rc": int, "timed_out": bool, "seconds": float}.
"""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _preload() -> None:
    from albert_keras_cli.quiet_logging import configure_logging, import_tensorflow

    configure_logging(False)
    import_tensorflow(False)
    import sentencepiece  # noqa: F401

    import albert_keras  # noqa: F401
    import albert_keras_cli.main  # noqa: F401
    import albert_keras_contracts.output_folder  # noqa: F401

    try:
        import apache_beam  # noqa: F401
    except ImportError:
        pass


def _run(request: dict) -> dict:
    import command_child

    start = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setpgid(0, 0)
            code = command_child.run_command(request)
        finally:
            os._exit(code if isinstance(code, int) else 1)
    deadline = start + request["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            _kill_group(pid)
            os.waitpid(pid, 0)
            return {"rc": -9, "timed_out": True, "seconds": time.monotonic() - start}
        time.sleep(0.02)
    _kill_group(pid)  # workers the command left behind
    return {
        "rc": os.waitstatus_to_exitcode(status),
        "timed_out": False,
        "seconds": time.monotonic() - start,
    }


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def main() -> None:
    _preload()
    answers = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the pipe
    print(json.dumps({"ready": True}), file=answers, flush=True)
    for line in sys.stdin:
        print(json.dumps(_run(json.loads(line))), file=answers, flush=True)


if __name__ == "__main__":
    main()
