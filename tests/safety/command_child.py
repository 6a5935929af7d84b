"""Runs one command line in this process as its own program would, for the data-safety suite.

`run_command(request)` is what a forked child of `fork_server.py` runs (and what
`python tests/safety/command_child.py REQUEST.json` runs in a fresh interpreter): it points file
descriptors 1 and 2 at the request's files, installs the fake full disk or read-only folder when
the request names one (tests/safety/fake_filesystem.py), then runs `albert-keras ARGV...` through
`albert_keras_cli.main.main` or `python -m MODULE ARGV...` through `runpy`, and returns the exit
status a shell would see (an uncaught exception prints its traceback and gives 1, as Python does).
"""

import json
import os
import runpy
import sys
import traceback


def run_command(request: dict) -> int:
    """Runs `request` ({"argv", "module" or None, "cwd", "env", "stdout", "stderr", "fake"})."""
    os.chdir(request["cwd"])
    os.environ.update(request.get("env", {}))
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # a fork server may have swapped them
    if "FULL_DISK_ROOT" in request.get("env", {}):
        _start_full_disk_fake()
    if request.get("fake"):
        import fake_filesystem

        fake_filesystem.install(request["fake"]["folder"], request["fake"]["errno"])
    try:
        if request["module"] is None:
            from albert_keras_cli.main import main

            code = main(request["argv"])
        else:
            sys.modules.pop(request["module"], None)  # run as __main__, as `python -m` does
            sys.argv = [request["module"], *request["argv"]]
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
    except SystemExit as exit:
        code = exit.code
    except BaseException:  # noqa: BLE001 (a traceback and status 1, as Python gives)
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, status 1
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _start_full_disk_fake() -> None:
    """tests/full_disk.py's fake is a `sitecustomize.py` first on PYTHONPATH, run as Python
    starts; a fork of a warm interpreter started before it existed, so it is run here."""
    if hasattr(sys.modules.get("sitecustomize"), "_FullFile"):
        return  # a fresh interpreter ran it as it started
    site = os.environ["PYTHONPATH"].split(os.pathsep)[0]
    runpy.run_path(os.path.join(site, "sitecustomize.py"))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with open(sys.argv[1], encoding="utf-8") as file:
        sys.exit(run_command(json.load(file)))
