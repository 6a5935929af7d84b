"""Score a fine-tuned `finetune-squad` model.keras on any SQuAD v1.1 file (e.g. its own training
file, to tell memorization from no learning), as docs/squad.md does.

python docs/runs/squad_score_model.py RUN_DIR SPM_MODEL FILE.json [MAX_SEQ DOC_STRIDE MAX_QUERY]
"""

import sys

import keras

import albert_keras  # noqa: F401  (registers the classes)
from albert_keras import squad

run, spm, path = sys.argv[1:4]
max_seq, stride, max_query = (int(v) for v in (sys.argv[4:7] or (128, 64, 32)))
model = keras.saving.load_model(f"{run}/model.keras")
examples = squad.read_squad_json(path, is_training=False)
features = squad.make_squad_features(
    examples, spm, max_seq_length=max_seq, doc_stride=stride, max_query_length=max_query
)
result = squad.squad_predictions(
    features, model.predict(squad.squad_dataset(features, 64), verbose=0)
)
print(path, squad.evaluate_squad(path, result.answers()))
