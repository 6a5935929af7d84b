"""GLUE: the tasks, their readers (GLUE's TSVs, tensorflow_datasets), encoding, metrics and
submission files. `albert-keras finetune-glue` (albert_keras.jobs.finetune_glue_job) uses them."""

from albert_keras.glue.glue_dataset import glue_dataset
from albert_keras.glue.glue_encoder import GlueEncoder
from albert_keras.glue.glue_evaluation import GlueEvaluation
from albert_keras.glue.glue_examples import GlueExamples
from albert_keras.glue.glue_metrics import glue_metrics
from albert_keras.glue.glue_task import GlueTask, TsvLayout
from albert_keras.glue.glue_tasks import GLUE_TASKS, get_glue_task
from albert_keras.glue.submission import write_submission
from albert_keras.glue.tfds_reader import glue_examples_from_tfds, read_glue_tfds
from albert_keras.glue.tsv_reader import glue_tsv_path, read_glue_tsv

__all__ = [
    "GLUE_TASKS",
    "GlueEncoder",
    "GlueEvaluation",
    "GlueExamples",
    "GlueTask",
    "TsvLayout",
    "get_glue_task",
    "glue_dataset",
    "glue_examples_from_tfds",
    "glue_metrics",
    "glue_tsv_path",
    "read_glue_tfds",
    "read_glue_tsv",
    "write_submission",
]
