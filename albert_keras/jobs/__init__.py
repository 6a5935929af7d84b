"""The jobs: a whole run each, from settings to a run folder, above the training runtime.

`pretrain` (`albert-keras pretrain`), `distill` (`albert-keras distill`), `finetune_glue` and
`finetune_squad` each take their frozen settings dataclass (`albert_keras_settings`) and go
through one skeleton, `JobRun` (`job_run.py`): strategy -> precision -> inputs -> output folder
(owned, locked) -> build in scope -> restore -> fit -> evaluate -> save -> summary, over the
runtime of `albert_keras.training` (strategies, precision, checkpoints, callbacks, record
inputs); each job supplies only its data, model and metrics (the tasks, `glue` and `squad`).
"""

from albert_keras.jobs.distill_job import distill
from albert_keras.jobs.finetune_glue_job import finetune_glue
from albert_keras.jobs.finetune_squad_job import finetune_squad
from albert_keras.jobs.pretrain_job import pretrain

__all__ = ["distill", "finetune_glue", "finetune_squad", "pretrain"]
