"""tf.data pipelines: vocabulary, pretraining records (writing and reading), dynamic masking."""

from pipelines.read_pretraining_records import read_pretraining_records

__all__ = ["read_pretraining_records"]
