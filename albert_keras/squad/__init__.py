"""SQuAD v1.1 and v2.0: reading, features, post-processing, the official metrics.

The flow: `read_squad_json` (or `read_squad_tfds`) -> `make_squad_features` -> `squad_dataset`
-> `AlbertQuestionAnswerer.fit` / `predict` -> `squad_predictions` -> `evaluate_squad` and
`write_squad_predictions`. `albert-keras finetune-squad` runs it all. A saved answerer answers
text (`answer_questions`, `score_squad_examples`; `albert-keras predict`).
"""

from albert_keras.squad.context_pieces import ContextPieces, encode_context, encode_contexts
from albert_keras.squad.squad_answers import (
    answer_questions,
    check_question_answerer,
    score_squad_examples,
)
from albert_keras.squad.squad_dataset import squad_dataset
from albert_keras.squad.squad_examples import (
    SquadExample,
    SquadExamples,
    read_squad_json,
    squad_examples_from_articles,
)
from albert_keras.squad.squad_features import SquadFeatures, make_squad_features, squad_tokenizer
from albert_keras.squad.squad_metrics import (
    evaluate_squad,
    exact_match,
    f1_score,
    normalize_answer,
)
from albert_keras.squad.squad_predictions import (
    SquadPredictions,
    squad_predictions,
    write_squad_predictions,
)
from albert_keras.squad.tfds_reader import read_squad_tfds, squad_examples_from_tfds

__all__ = [
    "ContextPieces",
    "SquadExample",
    "SquadExamples",
    "SquadFeatures",
    "SquadPredictions",
    "answer_questions",
    "check_question_answerer",
    "encode_context",
    "encode_contexts",
    "evaluate_squad",
    "exact_match",
    "f1_score",
    "make_squad_features",
    "normalize_answer",
    "read_squad_json",
    "read_squad_tfds",
    "score_squad_examples",
    "squad_dataset",
    "squad_examples_from_articles",
    "squad_examples_from_tfds",
    "squad_predictions",
    "squad_tokenizer",
    "write_squad_predictions",
]
