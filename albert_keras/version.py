"""The package's version, written once: `albert_keras.__version__`, `albert-keras --version` and
setup.cfg (`version = attr: albert_keras.version.__version__`) read it from here.

This module imports nothing, so the command line reads it by path without running
`albert_keras/__init__.py` (which imports Keras), and setuptools reads it with `ast`.
"""

__version__ = "0.1.0"
