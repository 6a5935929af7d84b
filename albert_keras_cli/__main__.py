"""`python -m albert_keras_cli ...` is `albert-keras ...`."""

import sys

from albert_keras_cli.main import main

sys.exit(main())
