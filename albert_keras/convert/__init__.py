"""Import and export of checkpoints: the official TF1 release, Hugging Face, keras-hub.

Every format is read into (and written from) one layout, a dict of NumPy arrays under the
official TF1 variable names, so each format needs only its own renaming; one mapping connects
that layout to our Keras models. `albert-keras convert` is a thin shell over these functions.
"""

from albert_keras.convert.convert_checkpoint import (
    SOURCES,
    TARGETS,
    export_model,
    import_checkpoint,
    load_any_model,
    save_imported,
)
from albert_keras.convert.hf_checkpoint import read_hf_folder, write_hf_folder
from albert_keras.convert.imported_model import ImportedModel
from albert_keras.convert.keras_hub_preset import read_keras_hub, write_keras_hub
from albert_keras.convert.keras_weights import (
    load_official_weights,
    official_from_model,
    pretrainer_from_official,
    question_answerer_from_official,
)
from albert_keras.convert.official_format import CheckpointError
from albert_keras.convert.safe_tar import safe_extract_tar
from albert_keras.convert.tf1_checkpoint import read_tf1_checkpoint, write_tf1_checkpoint

__all__ = [
    "SOURCES",
    "TARGETS",
    "CheckpointError",
    "ImportedModel",
    "export_model",
    "import_checkpoint",
    "load_any_model",
    "load_official_weights",
    "official_from_model",
    "pretrainer_from_official",
    "question_answerer_from_official",
    "read_hf_folder",
    "read_keras_hub",
    "read_tf1_checkpoint",
    "safe_extract_tar",
    "save_imported",
    "write_hf_folder",
    "write_keras_hub",
    "write_tf1_checkpoint",
]
