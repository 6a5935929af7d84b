"""Reading SQuAD: the JSON files, tfds rows, and bad input."""

import json

import pytest
from squad_helpers import make_squad_file

from albert_keras.squad import read_squad_json, squad_examples_from_tfds

CONTEXT = "The Normans gave their name to Normandy, a region in France."


def _qa(qid, text=None, start=None, impossible=False):
    answers = [] if text is None else [{"text": text, "answer_start": start}]
    return {"id": qid, "question": "Who?", "answers": answers, "is_impossible": impossible}


def test_the_shared_file(squad_file):
    dev = read_squad_json(squad_file, is_training=False)
    # tests/data/squad/PROVENANCE.md: 626 questions, 333 of them unanswerable.
    assert dev.version == "2.0" and len(dev) == 626 and dev.skipped == {}
    assert sum(e.is_impossible for e in dev) == 333
    first = dev[0]
    assert first.answers and first.answer_start == -1  # prediction: answers kept, no target
    train = read_squad_json(squad_file, is_training=True, first_answer_only=True)
    answerable = [e for e in train if not e.is_impossible]
    assert len(train) == 626 and len(answerable) == 293
    assert all(e.context_text[e.answer_start:][: len(e.answer_text)] == e.answer_text
               for e in answerable)  # fmt: skip


def test_bad_answers_and_empty_contexts_are_counted_and_skipped(tmp_path):
    path = make_squad_file(
        tmp_path / "train.json",
        [
            (CONTEXT, [_qa("ok", "Normandy", 31), _qa("shifted", "Normandy", 30),
                       _qa("beyond", "France", 400), _qa("no", impossible=True)]),
            ("   ", [_qa("empty", "x", 0)]),
        ],
    )  # fmt: skip
    train = read_squad_json(path, is_training=True)
    assert [e.qas_id for e in train] == ["ok", "no"]
    assert train.skipped == {"answer text not at answer_start": 2, "empty context": 1}
    assert train.skipped_ids == {"answer text not at answer_start": ["shifted", "beyond"],
                                 "empty context": ["empty"]}  # fmt: skip
    # Prediction skips nothing: the empty context's question is scored, answered "" (issue 43).
    predict = read_squad_json(path, is_training=False)
    assert len(predict) == 5 and predict.skipped == {}


def test_bad_files_get_one_line_errors(tmp_path):
    (tmp_path / "broken.json").write_text('{"data": [')
    with pytest.raises(ValueError, match=r"broken.json: not valid JSON \(Expecting"):
        read_squad_json(tmp_path / "broken.json", is_training=False)
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="list.json: not a SQuAD file"):
        read_squad_json(tmp_path / "list.json", is_training=False)
    with pytest.raises(FileNotFoundError, match="nowhere.json: SQuAD file not found"):
        read_squad_json(tmp_path / "nowhere.json", is_training=False)
    no_question = make_squad_file(tmp_path / "q.json", [(CONTEXT, [{"id": "x", "answers": []}])])
    with pytest.raises(ValueError, match="q.json: question x has no 'question' field"):
        read_squad_json(no_question, is_training=False)
    two = _qa("two", "Normandy", 31)
    two["answers"].append({"text": "France", "answer_start": 53})
    several = make_squad_file(tmp_path / "two.json", [(CONTEXT, [two])])
    with pytest.raises(ValueError, match="two.json: question two has 2 answers; training needs"):
        read_squad_json(several, is_training=True)
    assert read_squad_json(several, is_training=True, first_answer_only=True)[0].answer_text == (
        "Normandy"
    )


def test_version_from_the_file_or_the_questions(tmp_path):
    v1 = make_squad_file(tmp_path / "v1.json", [(CONTEXT, [_qa("a", "Normandy", 31)])], "1.1")
    assert read_squad_json(v1, is_training=True).version == "1.1"
    data = json.loads(v1.read_text())
    del data["version"]
    (tmp_path / "none.json").write_text(json.dumps(data))
    assert read_squad_json(tmp_path / "none.json", is_training=True).version == "2.0"


def _tfds_rows(squad_json):
    """The rows tfds's squad/v2.0 builder yields for this file (its field layout, as bytes)."""
    for article in squad_json["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield {
                    "id": qa["id"].encode(),
                    "title": article["title"].encode(),
                    "context": paragraph["context"].encode(),
                    "question": qa["question"].encode(),
                    "answers": {
                        "text": [a["text"].encode() for a in qa["answers"]],
                        "answer_start": [a["answer_start"] for a in qa["answers"]],
                    },
                    "is_impossible": qa["is_impossible"],
                }


def test_tfds_rows_give_the_same_examples(squad_file, squad_json):
    from_tfds = squad_examples_from_tfds(_tfds_rows(squad_json), version="2.0",
                                         is_training=False)  # fmt: skip
    assert from_tfds.examples == read_squad_json(squad_file, is_training=False).examples


def test_read_squad_tfds_from_a_local_folder(tmp_path, monkeypatch, squad_json):
    """tfds's own squad/v2.0 builder prepares a folder from local files (its download step is
    pointed at them), then `read_squad_tfds` reads that folder: no network."""
    import importlib.resources.abc
    import sys

    import tensorflow_datasets as tfds

    from albert_keras.squad import read_squad_tfds

    # tfds 4.9's builder looks up `importlib_resources` (a backport this venv lacks); the
    # standard library's module has the one class it checks for.
    if "importlib_resources" not in sys.modules:
        monkeypatch.setitem(sys.modules, "importlib_resources", importlib.resources)

    small = {"version": "v2.0", "data": squad_json["data"][:1]}  # Normans: 208 questions
    (tmp_path / "dev.json").write_text(json.dumps(small))
    files = {"train": str(tmp_path / "dev.json"), "dev": str(tmp_path / "dev.json")}
    monkeypatch.setattr(
        tfds.download.DownloadManager, "download_and_extract", lambda self, urls: files
    )
    data_dir = tmp_path / "tfds"
    tfds.builder("squad/v2.0", data_dir=str(data_dir)).download_and_prepare()
    monkeypatch.setattr(tfds.download.DownloadManager, "download_and_extract", _no_download)
    examples = read_squad_tfds("2.0", "validation", is_training=False, data_dir=str(data_dir))
    expected = read_squad_json(tmp_path / "dev.json", is_training=False)
    # tfds stores rows in its own order; the questions are the same.
    assert sorted(examples.examples, key=lambda e: e.qas_id) == sorted(
        expected.examples, key=lambda e: e.qas_id
    )
    assert examples.source == "tfds:squad/v2.0[validation]" and len(examples) == 208


def _no_download(self, urls):
    raise AssertionError(f"tried to download {urls}")


def test_a_v1_file_with_unanswerable_questions_is_refused(tmp_path):
    questions = [_qa("a", "Normandy", 31), _qa("q-17", impossible=True)]
    v1 = make_squad_file(tmp_path / "v1.json", [(CONTEXT, questions)], "1.1")
    for is_training in (True, False):  # trained as "no answer", or scored against none
        with pytest.raises(ValueError, match=(
            r"^.*v1\.json: question q-17 has is_impossible: true, but this is a SQuAD 1\.1 file"
        )):  # fmt: skip
            read_squad_json(v1, is_training=is_training)
    v2 = make_squad_file(tmp_path / "v2.json", [(CONTEXT, questions)], "v2.0")
    assert [e.is_impossible for e in read_squad_json(v2, is_training=True)] == [False, True]


def test_a_negative_answer_start_is_refused(tmp_path):
    # context[-7:] is "France." and [-7:-1] "France": negative slicing would match the text.
    path = make_squad_file(tmp_path / "neg.json", [(CONTEXT, [_qa("neg", "France", -7)])])
    assert CONTEXT[-7:-1] == "France"
    with pytest.raises(ValueError, match=(
        r"^.*neg\.json: question neg has answer_start -7: a character offset into its context "
        r"is never negative$"
    )):  # fmt: skip
        read_squad_json(path, is_training=True)
