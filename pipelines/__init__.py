"""tf.data pipelines: vocabulary, pretraining records (writing and reading), dynamic masking.

`pipelines.read_pretraining_records` is loaded on first use (PEP 562): the writer, the vocabulary
trainer and their worker processes never import TensorFlow (~900 MB and seconds per process).
"""

__all__ = ["read_pretraining_records"]


def __getattr__(name):
    if name == "read_pretraining_records":
        from pipelines.record_reader import read_pretraining_records

        return read_pretraining_records
    raise AttributeError(f"module 'pipelines' has no attribute {name!r}")
