"""The demo: the whole chain on an embedded corpus, on a small scale (`run_demo.run_demo`).

`albert-keras demo` is its command (flags in `albert_keras_cli/demo.py`); `python -m
albert_keras.demo [OUTPUT_DIR]` runs it at its defaults. Importing this package imports no
TensorFlow; the stages do.
"""
