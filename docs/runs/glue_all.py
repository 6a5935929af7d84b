"""Fine-tune every model on the study's GLUE tasks with the study's budget (task-major, resumable).
usage: [GLUE_SEED=1] glue_all.py STEPS OUT_ROOT name=backbone.keras ..."""

import gc
import json
import os
import shutil
import sys
import time

import keras

from albert_keras.glue.glue_tasks import get_glue_task
from albert_keras.study.study_data import capped_glue_dir
from albert_keras.training.finetune_glue import finetune_glue

steps, root = int(sys.argv[1]), sys.argv[2]
models = dict(arg.split("=", 1) for arg in sys.argv[3:])
tasks = ["SST-2", "MRPC", "RTE", "CoLA", "STS-B"]
settings = {
    "glue_dir": "/work/shared/data/glue",
    "finetune_max_dev_examples": 500,
    "tasks": tasks,
    "data_seed": 12345,
}
glue_dir = capped_glue_dir(settings, root)  # dev: a seeded 500-row sample, as the study does
for task in tasks:
    for name, backbone in models.items():
        out = os.path.join(root, name, task)
        if os.path.exists(os.path.join(out, "metrics.json")):
            continue
        started = time.time()
        finetune_glue(
            task,
            glue_dir,
            backbone,
            out,
            spm_model="/work/runs/study/vocab/books8k.model",
            max_steps=steps,
            batch_size=32,
            max_seq_length=64,
            learning_rate=2e-4,
            eval_every=steps,
            patience=0,
            seed=int(os.environ.get("GLUE_SEED", "1")),  # fine-tuning seed
            mixed_precision="float32",
            verbose=0,
        )
        for leftover in ("model.keras",):
            if os.path.exists(os.path.join(out, leftover)):
                os.remove(os.path.join(out, leftover))
        shutil.rmtree(os.path.join(out, "checkpoints"), ignore_errors=True)
        with open(os.path.join(out, "metrics.json")) as f:
            metrics = json.load(f)["metrics"]
        main = get_glue_task(task).main_metric
        print(
            f"{time.strftime('%H:%M:%S')} {task} {name}: {main} {metrics[main]} "
            f"({time.time() - started:.0f} s)",
            flush=True,
        )
        keras.backend.clear_session()
        gc.collect()
