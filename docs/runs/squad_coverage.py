"""How many answerable questions keep their gold answer at a feature setting: all weight on
each window's gold start / end pieces, through the post-processing, compared after the official
answer normalization (as tests/squad/test_squad_features.py does at 384 / 128 / 64).

    python docs/runs/squad_coverage.py SPM_MODEL MAX_SEQ DOC_STRIDE MAX_QUERY FILE.json ...
"""

import sys

import numpy as np

from albert_keras.squad import make_squad_features, read_squad_json, squad_predictions
from albert_keras.squad.squad_metrics import normalize_answer

spm, max_seq, stride, max_query = sys.argv[1], *map(int, sys.argv[2:5])
for path in sys.argv[5:]:
    examples = read_squad_json(path, is_training=True, first_answer_only=True)
    features = make_squad_features(
        examples, spm, is_training=True, max_seq_length=max_seq, doc_stride=stride,
        max_query_length=max_query,
    )  # fmt: skip
    n, length = len(features), features.inputs["token_ids"].shape[1]
    start = np.full((n, length), -10.0, np.float32)
    end = start.copy()
    start[np.arange(n), features.labels["start_positions"]] = 10.0
    end[np.arange(n), features.labels["end_positions"]] = 10.0
    answers = squad_predictions(features, {"start_logits": start, "end_logits": end}).answers()
    answerable = [e for e in examples if not e.is_impossible]
    kept = sum(
        normalize_answer(answers[e.qas_id]) == normalize_answer(e.answer_text) for e in answerable
    )
    spans = int((features.labels["start_positions"] > 0).sum())
    print(
        f"{path}: {len(examples)} questions, {n} windows ({spans} with a span target); gold "
        f"answer decoded back for {kept}/{len(answerable)} answerable = {kept / len(answerable):.2%}"
    )
