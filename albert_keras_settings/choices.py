"""The names several settings take: one list for the library and the command line (the named
variants of the model and the tasks are the catalogue's: `albert_keras_contracts.catalogue`)."""

from albert_keras_contracts.catalogue import SENTENCE_OBJECTIVES as _OBJECTIVES

# `albert_keras.training.precision.choose_precision` says what each means.
PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")
# `albert_keras.training.strategy.get_strategy` says what each means.
STRATEGIES = ("auto", "tpu", "gpu", "mirrored", "multi_worker", "one_device", "cpu")
JIT_COMPILE = ("auto", "true", "false")
SENTENCE_OBJECTIVES = tuple(_OBJECTIVES)  # "sop", "nsp", "none"
# `pipelines.documents` says what each means.
INPUT_FORMATS = ("text", "sentences")
# `pipelines.sentence_packing` says what each means (RoBERTa's inputs).
PACKINGS = ("full_sentences", "doc_sentences")
