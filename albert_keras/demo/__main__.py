"""`python -m albert_keras.demo ...` is `albert-keras demo ...`."""

import sys

from albert_keras_cli.main import main

sys.exit(main(["demo", *sys.argv[1:]]))
