"""The `albert-keras` command line, kept free of TensorFlow.

`albert-keras --help`, `--version` and argument errors answer without importing TensorFlow or
Keras (seconds of start-up): this package imports only the standard library, and each
subcommand's flags live in a small module here whose `run` imports the job on first use. It also
holds what every command shares: the `--config KEY=VALUE` parser (`config_flags`) and the quiet
TensorFlow logging (`quiet_logging`). `albert_keras.__version__` is this package's.
"""

__version__ = "0.1.0"
