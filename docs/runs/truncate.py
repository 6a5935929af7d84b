"""The half-depth student with no training: the teacher's shared block run 2 times instead of 4.
usage: truncate.py TEACHER_MODEL_KERAS OUT_DIR SPM_MODEL"""

import os
import shutil
import sys

import keras

import albert_keras as ak
from albert_keras.distill import warm_start

teacher = keras.saving.load_model(sys.argv[1], compile=False)
config = {
    k: v
    for k, v in teacher.backbone.get_config().items()
    if k not in ("name", "trainable", "dtype")
}
student = ak.AlbertPretrainer(
    ak.AlbertBackbone(**{**config, "num_layers": 2}), sentence_objective=None
)
copied = warm_start(teacher, student)
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
student.save(f"{out}/model.keras")
student.backbone.save(f"{out}/backbone.keras")
shutil.copy(sys.argv[3], out)
print("copied", len(copied), "variables;", student.backbone.count_params(), "backbone parameters")
