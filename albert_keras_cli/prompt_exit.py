"""`albert-keras`'s process ends as soon as its work is done: once the command has returned and
every exit handler has run, the interpreter's own teardown is skipped.

Written by hand because no library does this: the teardown is Python finalizing TensorFlow's
thousands of modules and objects (tf.data iterators, thread pools, C++ statics), which took
5-40 s after the last line (the demo exited 42 s after "Done"; an autotuned tf.data iterator
waits for its tuning thread to wake, see `albert_keras_contracts.autotune_off`, which our own
pipelines now use), with nothing left to write:
our files are written and closed (atomically) before a command returns, Keras' TensorBoard
callback closes its writers at the end of training, and the standard streams are flushed here.
"""

from __future__ import annotations

import atexit
import os
import sys

_exit_code = [1]  # what the process exits with: main's return value, or 1 (an uncaught error)


def exit_promptly() -> None:
    """Registers the prompt exit; call it first thing in the program, before anything else
    registers an exit handler: handlers run last-registered first, so this one runs after all
    the others (multiprocessing's, logging's, Keras'), then ends the process."""
    atexit.register(_exit_now)


def set_exit_code(code) -> None:
    """The code the process ends with: an int, or a `SystemExit`'s code (None: 0; a message: 1,
    as Python exits)."""
    if code is None:
        code = 0
    _exit_code[0] = code if isinstance(code, int) else 1


def _exit_now() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a broken pipe: nothing more can be said
            pass
    os._exit(_exit_code[0])
