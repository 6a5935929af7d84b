"""RACE-style JSON: an article, its questions, four options each, the answers as letters."""

from __future__ import annotations

import json
import pathlib

from albert_keras.multiple_choice.choice_examples import ChoiceExamples

_KEYS = ("article", "questions", "options")


def read_race(path: str | pathlib.Path) -> ChoiceExamples:
    """Reads RACE-style examples: a JSON file (one object, or a list of them), a JSON lines
    file, or a folder of such files (RACE's own layout, `RACE/dev/high/*.txt`, one object each).

    An object is `{"article", "questions": [...], "options": [[...], ...], "answers": ["A",
    ...], "id"}` (`answers` may be absent in a file to predict). As ALBERT's official
    `race_utils`, each option is paired with its question: a question with a blank (`_`) has
    the option written into it, another has the option after it.

    Raises:
        FileNotFoundError; ValueError (one line naming file and line): not JSON, a missing key,
        questions and options or answers of different counts, an answer that is not one of the
        options' letters.

    Example:
    >>> race = {"article": "Tom has a red bike.", "questions": ["Tom's bike is _."],
    ...         "options": [["red", "blue"]], "answers": ["A"], "id": "high1.txt"}
    >>> _ = open("race.json", "w").write(json.dumps(race))
    >>> examples = read_race("race.json")
    >>> examples.pairs, examples.labels, examples.ids
    ([["Tom's bike is red.", "Tom's bike is blue."]], [0], ['high1.txt-0'])
    """
    path = pathlib.Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    examples = ChoiceExamples(str(path))
    for file in files:
        for where, article in _objects(file):
            _add_article(examples, where, article)
    return examples.check()


def _objects(file: pathlib.Path):
    """`(where, object)` of a JSON file (an object or a list) or a JSON lines file."""
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{file}: not UTF-8 text ({error.reason})") from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        yield str(file), whole
        return
    if isinstance(whole, list):
        for index, item in enumerate(whole):
            yield f"{file} item {index}", item
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"{file}:{number}", json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{file}:{number}: not JSON ({error.msg})") from None


def _add_article(examples: ChoiceExamples, where: str, article) -> None:
    if not isinstance(article, dict):
        # ValueError, not TypeError: the CLI reports ValueErrors as one-line errors.
        raise ValueError(f"{where}: expected a JSON object with {', '.join(_KEYS)}")  # noqa: TRY004
    missing = [key for key in _KEYS if key not in article]
    if missing:
        raise ValueError(f"{where}: no {', '.join(missing)} (a RACE object has {', '.join(_KEYS)})")
    questions, options = article["questions"], article["options"]
    answers = article.get("answers")
    if len(options) != len(questions) or (answers is not None and len(answers) != len(questions)):
        raise ValueError(
            f"{where}: {len(questions)} questions, {len(options)} option lists and "
            f"{'no' if answers is None else len(answers)} answers: one of each per question"
        )
    name = str(article.get("id", where))
    for index, (question, choices) in enumerate(zip(questions, options)):
        choices = [str(choice) for choice in choices]
        label = None
        if answers is not None:
            letters = [chr(ord("A") + i) for i in range(len(choices))]
            answer = str(answers[index]).strip().upper()
            if answer not in letters:
                raise ValueError(
                    f"{where}: question {index}'s answer {answers[index]!r} is not one of "
                    f"{', '.join(letters)}"
                )
            label = letters.index(answer)
        examples.ids.append(f"{name}-{index}")
        examples.contexts.append(str(article["article"]))
        examples.pairs.append([_with_option(str(question), choice) for choice in choices])
        examples.options.append(choices)
        examples.labels.append(label)
        examples.where.append(where)


def _with_option(question: str, option: str) -> str:
    # As the official race_utils: the option fills a cloze question's blank, else follows it.
    if "_" in question:
        return question.replace("_", option)
    return f"{question} {option}"
