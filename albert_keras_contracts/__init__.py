"""The contracts every layer of albert-keras shares, owned here once.

The record schema and the writer's `stats.json` (`record_format`, `writer_stats`), the special
ids (`special_tokens`), text normalization (`text_normalization`), vocabulary identity
(`vocabulary_identity`), atomic file and folder writes (`atomic_write`) and output-folder
ownership (`output_folder`, `output_checks`). Pure Python: no TensorFlow, no model, and no
import of any other package of the project (`tools/import_graph.py` checks it).
"""
