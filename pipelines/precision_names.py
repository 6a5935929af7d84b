"""The names `--mixed_precision` takes: one list for the library and the command line.

Here, below both, because the command line loads no TensorFlow for `--help` and so cannot import
`albert_keras.training.precision`, which picks the policy a name means (`choose_precision`).
"""

PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")
