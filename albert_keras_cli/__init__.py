"""The `albert-keras` command line, kept free of TensorFlow.

`albert-keras --help`, `--version` and argument errors answer without importing TensorFlow or
Keras (seconds of start-up): this package imports only the standard library, and each
subcommand's flags live in a small module here whose `run` imports the job on first use. It also
holds what every command shares: the `--config KEY=VALUE` parser (`config_flags`) and the quiet
TensorFlow logging (`quiet_logging`). `__version__` is the library's (`albert_keras/version.py`).
"""

import importlib.util
import pathlib


def _library_version() -> str:
    # Read by path: importing `albert_keras.version` would run `albert_keras/__init__.py` first,
    # which imports Keras and TensorFlow. `find_spec` of a top-level package runs nothing.
    spec = importlib.util.find_spec("albert_keras")
    path = pathlib.Path(spec.origin).parent / "version.py"
    version_spec = importlib.util.spec_from_file_location("albert_keras_cli._version", path)
    module = importlib.util.module_from_spec(version_spec)
    version_spec.loader.exec_module(module)
    return module.__version__


__version__ = _library_version()
