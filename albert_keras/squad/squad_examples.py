"""SQuAD questions: the `SquadExample` record and the JSON reader (v1.1 and v2.0)."""

from __future__ import annotations

import dataclasses
import json
import os


@dataclasses.dataclass(frozen=True)
class SquadExample:
    """One question on one context, as the official `squad_utils.SquadExample`.

    Args:
        qas_id: str. The question's id (the key of `predictions.json`).
        question_text: str.
        context_text: str. The paragraph, unchanged (answers are cut from it).
        answer_text: str. The first gold answer ("" when none or impossible).
        answer_start: int. Its character offset in `context_text`; -1 when none.
        is_impossible: bool. SQuAD 2.0's unanswerable question.
        answers: tuple of str. Every gold answer text (for evaluation).
    """

    qas_id: str
    question_text: str
    context_text: str
    answer_text: str = ""
    answer_start: int = -1
    is_impossible: bool = False
    answers: tuple[str, ...] = ()


@dataclasses.dataclass
class SquadExamples:
    """The questions of one file, with what was skipped and why.

    Args:
        examples: list of SquadExample.
        version: str. `"1.1"` or `"2.0"`.
        source: str. The file (or tfds split) read.
        skipped: dict. Reason -> number of questions skipped for it.
        skipped_ids: dict. Reason -> the ids of the questions skipped for it, in file order.
    """

    examples: list[SquadExample]
    version: str
    source: str
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    skipped_ids: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.examples)

    def __iter__(self):
        return iter(self.examples)

    def __getitem__(self, index):
        return self.examples[index]

    def skipped_lines(self, shown: int = 3) -> list[str]:
        """One line per reason questions were skipped: the file, the count, the reason and the
        first ids (the official script warns once per question; one line says the same).

        Example:
        >>> SquadExamples([], "2.0", "train.json", {"answer text not at answer_start": 4},
        ...               {"answer text not at answer_start": ["a", "b", "c", "d"]}).skipped_lines()
        ['train.json: skipped 4 question(s): answer text not at answer_start (a, b, c, ...)']
        """
        lines = []
        for reason, count in self.skipped.items():
            ids = self.skipped_ids.get(reason, [])
            first = ", ".join(ids[:shown]) + (", ..." if len(ids) > shown else "")
            lines.append(f"{self.source}: skipped {count} question(s): {reason} ({first})")
        return lines

    def notes(self, shown: int = 3) -> list[str]:
        """What a command says of this file before it trains or predicts: `skipped_lines`,
        and the questions of an empty context (kept: no window, so answered "" and scored as
        the official evaluation scores them), each in one line.

        Example:
        >>> SquadExamples([SquadExample("q1", "Why?", "")], "2.0", "dev.json").notes()
        ['dev.json: 1 question(s) with an empty context, answered "" and scored (q1)']
        """
        lines = self.skipped_lines(shown)
        empty = [e.qas_id for e in self.examples if not e.context_text.strip()]
        if empty:
            first = ", ".join(empty[:shown]) + (", ..." if len(empty) > shown else "")
            lines.append(
                f'{self.source}: {len(empty)} question(s) with an empty context, answered "" '
                f"and scored ({first})"
            )
        return lines


def read_squad_json(
    path: str | os.PathLike, *, is_training: bool, first_answer_only: bool = False
) -> SquadExamples:
    """Reads a SQuAD v1.1 or v2.0 JSON file (`data` -> `paragraphs` -> `qas`).

    As the official `read_squad_examples`, a training question keeps its first answer only and
    must have exactly one unless `is_impossible`. Where the official code would crash or train
    on a wrong span, a training question is skipped and counted in `skipped` (its id in
    `skipped_ids`; `skipped_lines` says it in one line, as BERT's `run_squad.py` warns "Could
    not find answer" and skips): an empty context (`"empty context"`) and an `answer_start`
    whose text is not at that offset, or lies past the context
    (`"answer text not at answer_start"`). For prediction nothing is skipped: a question of an
    empty context is kept, to be answered "" and scored as the official evaluation scores a
    question without a prediction's span (it is still in the file). Question ids must be
    unique (`predictions.json` is keyed by them).

    Args:
        path: str or Path. The JSON file.
        is_training: bool. Whether the answers are needed (training features).
        first_answer_only: bool. Train on the first of several gold answers (a dev-style file
            split for training); otherwise several answers are an error, as official.

    Returns:
        SquadExamples.

    Raises:
        ValueError: one line naming the file: malformed JSON, a missing field (with the
            question id), a question id given twice, a training question with no or several
            answers or a negative `answer_start`, or an `is_impossible` question in a v1.1
            file.

    Example:
    >>> dev = read_squad_json("squad-dev.json", is_training=False)  # 2 articles of dev-v2.0.json
    >>> dev.version, len(dev)
    ('2.0', 626)
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: SQuAD file not found") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a folder: give the SQuAD .json file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{path}: not a SQuAD file (no top-level 'data' list)")  # noqa: TRY004 (the CLI reports ValueErrors)
    return squad_examples_from_articles(
        data["data"],
        is_training=is_training,
        source=path,
        version=data.get("version"),
        first_answer_only=first_answer_only,
    )


def squad_examples_from_articles(
    articles: list,
    *,
    is_training: bool,
    source: str = "data",
    version: str | None = None,
    first_answer_only: bool = False,
) -> SquadExamples:
    """Turns SQuAD's `data` list (articles -> paragraphs -> qas) into `SquadExamples`.

    Args:
        articles: list. The JSON file's `data`.
        is_training: bool. See `read_squad_json`.
        source: str. Named in errors.
        version: str. The file's `version` ("1.1", "v2.0"); None decides from the questions
            (v2.0 when any has `is_impossible`).
        first_answer_only: bool. See `read_squad_json`.
    """
    examples, skipped, skipped_ids, any_impossible_key, first_impossible = [], {}, {}, False, None
    seen = set()
    declared_v1 = version is not None and str(version).lstrip("v").startswith("1.")

    def skip(reason, qas_id):
        skipped[reason] = skipped.get(reason, 0) + 1
        skipped_ids.setdefault(reason, []).append(qas_id)

    for article in articles:
        for paragraph in _field(article, "paragraphs", source, "article"):
            context = _field(paragraph, "context", source, "paragraph")
            for qa in _field(paragraph, "qas", source, "paragraph"):
                qas_id = str(_field(qa, "id", source, "question"))
                where = f"question {qas_id}"
                if qas_id in seen:
                    # Two questions, one key of predictions.json: one would go unscored.
                    raise ValueError(f"{source}: question id {qas_id!r} appears twice")
                seen.add(qas_id)
                question = _field(qa, "question", source, where)
                answers = qa.get("answers", [])
                any_impossible_key |= "is_impossible" in qa
                is_impossible = bool(qa.get("is_impossible", False))
                first_impossible = first_impossible or (qas_id if is_impossible else None)
                if is_impossible and declared_v1:
                    _refuse_v1_impossible(source, qas_id)  # before any message about answers
                if not context.strip() and is_training:
                    skip("empty context", qas_id)
                    continue
                texts = tuple(_field(a, "text", source, where) for a in answers)
                answer_text, answer_start = "", -1
                if is_training and not is_impossible:
                    answer = _training_answer(answers, texts, context, source, where,
                                              first_answer_only)  # fmt: skip
                    if answer is None:
                        skip("answer text not at answer_start", qas_id)
                        continue
                    answer_text, answer_start = answer
                examples.append(
                    SquadExample(
                        qas_id=qas_id,
                        question_text=question,
                        context_text=context,
                        answer_text=answer_text,
                        answer_start=answer_start,
                        is_impossible=is_impossible,
                        answers=texts,
                    )
                )
    version = _file_version(version, any_impossible_key, first_impossible, source)
    return SquadExamples(examples, version, source, skipped, skipped_ids)


def _training_answer(answers: list, texts: tuple, context: str, source: str, where: str,
                     first_answer_only: bool) -> tuple[str, int] | None:  # fmt: skip
    """`(answer_text, answer_start)` of a training question: its one gold answer (the first of
    several with `first_answer_only`), or None when that text is not at `answer_start` in
    `context` (the question is skipped); an error naming the question when it has no answer,
    several, or a negative `answer_start`."""
    if len(answers) != 1 and not (first_answer_only and answers):
        raise ValueError(
            f"{source}: {where} has {len(answers)} answers; training needs "
            "exactly 1 (or is_impossible: true)"
        )
    answer_text = texts[0]
    answer_start = int(_field(answers[0], "answer_start", source, where))
    if answer_start < 0:
        # Python's negative slicing would find the text from the end.
        raise ValueError(
            f"{source}: {where} has answer_start {answer_start}: a character "
            "offset into its context is never negative"
        )
    end = answer_start + len(answer_text)
    if not answer_text or context[answer_start:end] != answer_text:
        return None
    return answer_text, answer_start


def _file_version(version, any_impossible_key: bool, first_impossible: str | None,
                  source: str) -> str:  # fmt: skip
    """`"1.1"` or `"2.0"`: the file's `version`, or (None) v2.0 when any question has
    `is_impossible`; a v1.1 file with an `is_impossible: true` question is refused."""
    if version is None:
        version = "2.0" if any_impossible_key else "1.1"
    version = "1.1" if str(version).lstrip("v").startswith("1.") else "2.0"
    if version == "1.1" and first_impossible is not None:
        _refuse_v1_impossible(source, first_impossible)
    return version


def check_strict(examples: SquadExamples | None) -> None:
    """`--strict`: refuses training questions the reader skipped, naming the file, the count,
    the reason and the first ids (without it they are skipped, said in one line).

    Example:
    >>> check_strict(SquadExamples([], "2.0", "t.json", {"empty context": 1},
    ...                            {"empty context": ["q7"]}))
    Traceback (most recent call last):
    ValueError: t.json: skipped 1 question(s): empty context (q7); --strict refuses them
    """
    lines = examples.skipped_lines() if examples is not None else []
    if lines:
        raise ValueError(f"{lines[0]}; --strict refuses them")


def _refuse_v1_impossible(source: str, qas_id: str):
    # SQuAD 1.1 has no unanswerable question: it would train as one with no answer.
    raise ValueError(
        f"{source}: question {qas_id} has is_impossible: true, but this is a SQuAD 1.1 file: "
        "give a 2.0 file (and --version 2.0)"
    )


def _field(record, key: str, source: str, where: str):
    if not isinstance(record, dict) or key not in record:
        raise ValueError(f"{source}: {where} has no {key!r} field")
    return record[key]
