"""Quiet TensorFlow by default: its C++ start-up lines ("failed call to cuInit: UNKNOWN ERROR",
oneDNN notices, ...) read like failures to a new user and say nothing about the run.

Must run before TensorFlow is imported (its C++ logging reads the environment once, at load).
Python warnings (`warnings.warn`) are not touched: those that matter to the user still show.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile


def configure_logging(verbose: bool = False) -> None:
    """Hides TensorFlow's C++ log lines and absl's INFO / WARNING lines unless `verbose`.

    A `TF_CPP_MIN_LOG_LEVEL` the user set is kept.

    Args:
        verbose: bool. Leave TensorFlow's logging as it is (`--verbose`).
    """
    if verbose:
        return
    # 3: no C++ INFO, WARNING or ERROR lines (XLA's cuInit message on a GPU-less machine is an
    # ERROR line); real errors still reach the user as Python exceptions.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        from absl import logging as absl_logging  # pure Python; TensorFlow logs through it
    except ImportError:  # pragma: no cover - absl comes with TensorFlow
        return
    absl_logging.set_verbosity(absl_logging.ERROR)


# Lines TensorFlow's C++ side writes while it loads, before its log level applies (absl's
# "before absl::InitializeLog()" banner, then I/W/E lines such as the oneDNN and CUDA notices).
_CPP_LOG_LINE = re.compile(
    r"^([IWEF]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w.]+:\d+\] |WARNING: All log messages before )"
)
_CPP_CONTINUATION = re.compile(r"^To enable the following instructions: ")


def import_tensorflow(verbose: bool = False):
    """Imports TensorFlow (and Keras, and TF-Text if installed) with their load-time C++ lines
    hidden unless `verbose`; returns `tensorflow`.

    Those lines are written to file descriptor 2 by C++ before any log level can apply (again
    by each library that loads TensorFlow's shared objects), so stderr is captured at the
    descriptor while they load; every captured line that is not such a log line (a Python
    warning, say) is written back to stderr.
    """
    if verbose or "tensorflow" in sys.modules:
        import tensorflow

        return tensorflow
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import keras  # noqa: F401
            import tensorflow

            with contextlib.suppress(ImportError):
                import tensorflow_text  # noqa: F401
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", "replace")
    sys.stderr.write(drop_cpp_log_lines(text))
    return tensorflow


def drop_cpp_log_lines(text: str) -> str:
    """`text` without TensorFlow's C++ log lines (what `import_tensorflow` hides).

    Example:
    >>> drop_cpp_log_lines("I0000 00:00:1795461883.041857    3748 port.cc:153] oneDNN on\\nkept\\n")
    'kept\\n'
    """
    return "".join(
        line
        for line in text.splitlines(keepends=True)
        if not (_CPP_LOG_LINE.match(line) or _CPP_CONTINUATION.match(line))
    )
