"""`python -m albert_keras.cli` is `albert-keras` (the command lives in `albert_keras_cli`, which
imports no TensorFlow, so `--help` is fast; this name stays for old imports)."""

import sys

from albert_keras_cli.main import SUBCOMMANDS, main

__all__ = ["SUBCOMMANDS", "main"]

if __name__ == "__main__":
    sys.exit(main())
