"""A saved question answerer on raw text: answers to questions, or a SQuAD file's scores.

What `albert-keras predict` runs on a `finetune-squad` model. Both read text through the
answerer's own `AlbertPreprocessor` (the `AlbertTokenizer` and sequence length it was
fine-tuned with, saved in its `.keras` file), make the official windows
(`make_squad_features`), predict, and map the best spans back to the original characters.
"""

from __future__ import annotations

import numpy as np

from albert_keras.squad.squad_dataset import squad_dataset
from albert_keras.squad.squad_examples import SquadExample, SquadExamples
from albert_keras.squad.squad_features import make_squad_features
from albert_keras.squad.squad_metrics import evaluate_squad
from albert_keras.squad.squad_predictions import SquadPredictions, squad_predictions


def check_question_answerer(model, source: str = "the model") -> None:
    """Refuses, in one line, a model that cannot answer questions on text.

    Args:
        model: the loaded model.
        source: str. Where it came from (a path), for the message.

    Raises:
        ValueError: not an `AlbertQuestionAnswerer`, or one saved without a preprocessor.

    Example:
    >>> check_question_answerer(keras.saving.load_model("albert.keras"), "albert.keras")
    Traceback (most recent call last):
    ...
    ValueError: albert.keras: AlbertPretrainer is not an AlbertQuestionAnswerer
    """
    if getattr(model, "head", None) not in ("simple", "v2") or not hasattr(model, "backbone"):
        raise ValueError(f"{source}: {type(model).__name__} is not an AlbertQuestionAnswerer")
    if getattr(model, "preprocessor", None) is None:
        raise ValueError(
            f"{source}: saved without a preprocessor (made before finetune-squad saved one?), "
            "so it cannot read text: give --spm_model (and --max_seq_length), or fine-tune again"
        )


def answer_questions(
    model,
    questions: list[str],
    contexts: list[str],
    *,
    doc_stride: int | None = None,
    max_query_length: int | None = None,
    batch_size: int = 32,
    n_best_size: int = 20,
    max_answer_length: int = 30,
    null_threshold: float | None = None,
) -> list[dict]:
    """One answer per question, cut from its context.

    Args:
        model: `AlbertQuestionAnswerer` with a preprocessor (as `finetune-squad` saves it).
        questions: list of str.
        contexts: list of str, one per question.
        doc_stride: int or None. Pieces between two windows of a long context; None: the
            model's own (`model.doc_stride`, the fine-tuning's; official 128).
        max_query_length: int or None. Question pieces kept; None: the model's own (64).
        batch_size: int.
        n_best_size: int. Candidates per window side (official 20).
        max_answer_length: int. Longest answer in pieces (official 30).
        null_threshold: float or None. Answer "" where the no-answer score is above it
            (SQuAD 2.0); None: always the best span.

    Returns:
        list of `{"answer": text, "null_odds": float}` (higher odds: more likely no answer).

    Example:
    >>> from albert_keras.models import AlbertQuestionAnswerer
    >>> from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    >>> answerer = AlbertQuestionAnswerer(  # untrained: the answer is some span of the context
    ...     keras.saving.load_model("albert.keras").backbone,
    ...     preprocessor=AlbertPreprocessor(AlbertTokenizer("spm.model"), sequence_length=32))
    >>> [answer] = answer_questions(answerer, ["who sat?"], ["the cat sat on the mat"],
    ...                             max_query_length=8)
    >>> answer["answer"] in "the cat sat on the mat", sorted(answer)
    (True, ['answer', 'null_odds'])
    """
    if len(questions) != len(contexts):
        raise ValueError(f"{len(questions)} questions but {len(contexts)} contexts")
    examples = [
        SquadExample(str(k), question, context)
        for k, (question, context) in enumerate(zip(questions, contexts))
    ]
    settings = {"doc_stride": doc_stride, "max_query_length": max_query_length}
    result = predict_examples(
        model, examples, batch_size, n_best_size, max_answer_length, **settings
    )
    answers = result.answers(null_threshold)
    return [
        {"answer": answers[e.qas_id], "null_odds": float(result.null_odds[e.qas_id])}
        for e in examples
    ]


def score_squad_examples(
    model,
    examples: SquadExamples,
    *,
    doc_stride: int | None = None,
    max_query_length: int | None = None,
    batch_size: int = 32,
    n_best_size: int = 20,
    max_answer_length: int = 30,
    null_threshold: float | None = None,
) -> dict:
    """Answers a SQuAD file's questions and, when it has answers, scores them officially.

    For SQuAD 2.0 with answers and no `null_threshold`, the threshold is the one that
    maximizes F1 on the file, as `finetune-squad` picks it (the official `best_f1_thresh`).

    Args:
        model: `AlbertQuestionAnswerer` with a preprocessor.
        examples: SquadExamples (`read_squad_json(path, is_training=False)`).
        doc_stride, max_query_length, batch_size, n_best_size, max_answer_length: as
            `answer_questions`.
        null_threshold: float or None. SQuAD 2.0: a fixed no-answer threshold.

    Returns:
        `{"version", "num_questions", "predictions": {id: text}, "null_odds"` (2.0)`,
        "null_threshold"` (2.0)`, "metrics"` (when the file has answers)`}`.

    Example:
    >>> from albert_keras.models import AlbertQuestionAnswerer
    >>> from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
    >>> from albert_keras.squad import read_squad_json
    >>> answerer = AlbertQuestionAnswerer(
    ...     keras.saving.load_model("albert.keras").backbone,
    ...     preprocessor=AlbertPreprocessor(AlbertTokenizer("spm.model"), sequence_length=32))
    >>> dev = read_squad_json("squad-dev.json", is_training=False)
    >>> dev.examples = dev.examples[:3]
    >>> scores = score_squad_examples(answerer, dev, max_query_length=8)
    >>> scores["num_questions"], sorted(scores["metrics"])[:3]
    (3, ['HasAns_exact', 'HasAns_f1', 'HasAns_total'])
    """
    settings = {"doc_stride": doc_stride, "max_query_length": max_query_length}
    result = predict_examples(
        model, list(examples), batch_size, n_best_size, max_answer_length, **settings
    )
    has_gold = any(example.answers for example in examples)
    dataset = examples_as_dataset(examples) if has_gold else None
    summary = {"version": examples.version, "num_questions": len(examples)}
    if examples.version == "2.0":
        if null_threshold is None and has_gold:
            null_threshold = dev_null_threshold(dataset, result)
        answers = result.answers(null_threshold)
        summary.update({"null_threshold": null_threshold, "null_odds": result.null_odds})
    else:
        answers = result.answers()
    summary["predictions"] = answers
    if has_gold:
        null_odds = result.null_odds if examples.version == "2.0" else None
        summary["metrics"] = evaluate_squad(dataset, answers, null_odds)
    return summary


def predict_examples(
    model, examples, batch_size, n_best_size, max_answer_length, **settings
) -> SquadPredictions:
    """The answerer's `SquadPredictions` on `examples`, read through its own preprocessor,
    windows cut by `window_settings(model, **settings)`."""
    check_question_answerer(model)
    preprocessor = model.preprocessor
    features = make_squad_features(
        examples,
        preprocessor.tokenizer,
        max_seq_length=preprocessor.sequence_length,
        **window_settings(model, **settings),
    )
    if not len(features):
        outputs = {"start_logits": np.zeros((0, preprocessor.sequence_length))}
    else:
        outputs = model.predict(squad_dataset(features, batch_size), verbose=0)
    return squad_predictions(
        features, outputs, n_best_size=n_best_size, max_answer_length=max_answer_length
    )


def window_settings(
    model, doc_stride: int | None = None, max_query_length: int | None = None
) -> dict:
    """`doc_stride` and `max_query_length` as given, else the answerer's own (saved from its
    fine-tuning; 128 and 64 for a model saved before it carried them).

    Args:
        model: `AlbertQuestionAnswerer`.
        doc_stride: int or None.
        max_query_length: int or None.

    Example:
    >>> from types import SimpleNamespace
    >>> window_settings(SimpleNamespace(doc_stride=64, max_query_length=32), max_query_length=8)
    {'doc_stride': 64, 'max_query_length': 8}
    """
    return {
        "doc_stride": getattr(model, "doc_stride", 128) if doc_stride is None else doc_stride,
        "max_query_length": (
            getattr(model, "max_query_length", 64) if max_query_length is None else max_query_length
        ),
    }


def dev_null_threshold(dataset, result: SquadPredictions) -> float:
    """The no-answer threshold whose answers score the official `best_f1` on `dataset`.

    The official search starts from "no answer anywhere" with threshold 0.0, which means that
    only for probabilities (>= 0). Our null odds are score differences and are often negative:
    where no threshold beats answering nothing, 0.0 would still answer every question whose
    null odds are <= 0 (seen on a real run: F1 29.06 at the threshold against best_f1 51.93).
    Then the threshold is put below every null odd, so every question is answered "".

    Args:
        dataset: dict. A SQuAD 2.0 file's content (`examples_as_dataset`).
        result: SquadPredictions on its questions.

    Returns:
        float.

    Example:
    >>> result = SquadPredictions({"q": "Paris"}, {}, {"q": -2.0})
    >>> data = {"version": "v2.0", "data": [{"paragraphs": [{"context": "", "qas": [
    ...     {"id": "q", "question": "?", "answers": [{"text": "Paris"}], "is_impossible": False}
    ... ]}]}]}
    >>> dev_null_threshold(data, result) >= -2.0  # answering is best
    True
    """
    best = evaluate_squad(dataset, result.answers(), result.null_odds)
    threshold = best["best_f1_thresh"]
    if evaluate_squad(dataset, result.answers(threshold))["f1"] < best["best_f1"]:
        below_all = min(result.null_odds.values(), default=0.0) - 1.0
        if evaluate_squad(dataset, result.answers(below_all))["f1"] >= best["best_f1"]:
            threshold = below_all
    return threshold


def examples_as_dataset(examples: SquadExamples) -> dict:
    """The examples as a SQuAD file's dict, for `evaluate_squad` (one paragraph each): only
    the questions read are scored (a question of an empty context is read, and answered "").

    Args:
        examples: SquadExamples.

    Returns:
        dict.
    """
    qas = [
        {
            "id": e.qas_id,
            "question": e.question_text,
            "answers": [{"text": text} for text in e.answers],
            **({"is_impossible": e.is_impossible} if examples.version == "2.0" else {}),
        }
        for e in examples
    ]
    return {"version": examples.version, "data": [{"paragraphs": [{"context": "", "qas": qas}]}]}
