"""Each job's settings: frozen dataclasses, free of TensorFlow, one default per setting.

A job's settings are written once, here, as fields made by `setting()` (default, help, choices).
The command line generates its flags from them (`albert_keras_cli.settings_flags`), the job
functions take them (`albert_keras.jobs.pretrain(settings)`), and what a run records
(`run_config`, `summary.json`, the output folder's manifest) is `as_dict(settings)`. Nothing here
imports TensorFlow or Keras, so `albert-keras --help` stays fast; the package sits at the bottom
of the stack beside `pipelines` (`tools/import_graph.py`).

Example:
>>> from albert_keras_settings import PretrainSettings
>>> s = PretrainSettings(records="r/*.tfrecord", output_dir="run/", max_steps=100)
>>> s.batch_size, s.warmup_steps_or_default()
(32, 2)
"""

from albert_keras_settings.choices import PRECISIONS, STRATEGIES
from albert_keras_settings.distill_settings import DistillSettings
from albert_keras_settings.finetune_glue_settings import FinetuneGlueSettings
from albert_keras_settings.finetune_squad_settings import FinetuneSquadSettings
from albert_keras_settings.pretrain_settings import PretrainSettings
from albert_keras_settings.setting import REQUIRED, as_dict, resolve_settings, setting
from albert_keras_settings.writer_settings import WriterSettings

__all__ = [
    "PRECISIONS",
    "REQUIRED",
    "STRATEGIES",
    "DistillSettings",
    "FinetuneGlueSettings",
    "FinetuneSquadSettings",
    "PretrainSettings",
    "WriterSettings",
    "as_dict",
    "resolve_settings",
    "setting",
]
