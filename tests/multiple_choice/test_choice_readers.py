"""RACE-style JSON and SWAG-style CSV: the pairs each option makes, and one-line errors."""

import json

import pytest

from albert_keras.multiple_choice import read_choices, read_race, read_swag

ARTICLE = {
    "article": "Tom has a red bike. He rides it to school.",
    "questions": ["What colour is the bike?", "Tom rides to _ every day."],
    "options": [["red", "blue", "green", "black"], ["school", "work", "town", "bed"]],
    "answers": ["A", "a"],
    "id": "high1.txt",
}


def test_race_object_pairs_question_and_option(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps(ARTICLE))
    examples = read_race(tmp_path / "one.json")
    assert len(examples) == 2 and examples.num_options == 4
    assert examples.contexts == [ARTICLE["article"]] * 2
    assert examples.pairs[0][1] == "What colour is the bike? blue"
    assert examples.pairs[1][2] == "Tom rides to town every day."  # the blank filled
    assert examples.labels == [0, 0]
    assert examples.ids == ["high1.txt-0", "high1.txt-1"]


def test_race_folder_and_json_lines(tmp_path):
    folder = tmp_path / "RACE" / "dev" / "high"
    folder.mkdir(parents=True)
    (folder / "1.txt").write_text(json.dumps(ARTICLE))
    (folder / "2.txt").write_text(json.dumps({**ARTICLE, "id": "high2.txt"}))
    assert len(read_race(tmp_path / "RACE")) == 4
    lines = tmp_path / "race.jsonl"
    lines.write_text(json.dumps(ARTICLE) + "\n\n" + json.dumps(ARTICLE) + "\n")
    assert len(read_choices(lines)) == 4
    unanswered = {k: v for k, v in ARTICLE.items() if k != "answers"}
    (tmp_path / "test.json").write_text(json.dumps([unanswered]))
    assert read_race(tmp_path / "test.json").labels is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answers": ["A", "E"]}, r"one.json: question 1's answer 'E' is not one of A, B, C, D"),
        ({"answers": ["A"]}, r"one.json: 2 questions, 2 option lists and 1 answers"),
        ({"article": None}, r"one.json: no article"),
    ],
)
def test_race_errors(tmp_path, change, message):
    article = {**ARTICLE, **change}
    if change.get("article", "") is None:
        del article["article"]
    (tmp_path / "one.json").write_text(json.dumps(article))
    with pytest.raises(ValueError, match=message):
        read_race(tmp_path / "one.json")


def test_race_bad_json_line_names_the_line(tmp_path):
    (tmp_path / "race.jsonl").write_text(json.dumps(ARTICLE) + "\n" + "{oops\n")
    with pytest.raises(ValueError, match=r"race.jsonl:2: not JSON"):
        read_race(tmp_path / "race.jsonl")


SWAG = (
    "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label\n"
    "a,17,x,Students lower their eyes.,They,gold,look up.,fly.,sing.,sleep.,0\n"
    "b,18,x,A man sits.,He,gold,stands.,eats.,reads.,runs.,3\n"
)


def test_swag_pairs_sent2_with_each_ending(tmp_path):
    (tmp_path / "val.csv").write_text(SWAG)
    examples = read_choices(tmp_path / "val.csv")  # auto: swag for .csv
    assert examples.contexts == ["Students lower their eyes.", "A man sits."]
    assert examples.pairs[1] == ["He stands.", "He eats.", "He reads.", "He runs."]
    assert examples.options[0][0] == "look up."
    assert examples.labels == [0, 3] and examples.ids == ["17", "18"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sent1,ending0,label\nA,b,0\n", r"val.csv:1: no column sent2"),
        ("sent1,sent2,label\nA,b,0\n", r"val.csv:1: no column ending0"),
        ("sent1,sent2,ending0,ending1,label\nA,b,c,d,2\n", r"val.csv:2: label '2' is not"),
        ("sent1,sent2,ending0,ending1,label\nA,b,c,d,x\n", r"val.csv:2: label 'x' is not"),
        ("sent1,sent2,ending0,ending1,label\n", r"val.csv: no examples"),
    ],
)
def test_swag_errors(tmp_path, text, message):
    (tmp_path / "val.csv").write_text(text)
    with pytest.raises(ValueError, match=message):
        read_swag(tmp_path / "val.csv")


def test_differing_option_counts_are_refused(tmp_path):
    other = {**ARTICLE, "options": [["a", "b"], ["c", "d", "e", "f"]]}
    (tmp_path / "one.json").write_text(json.dumps(other))
    with pytest.raises(ValueError, match=r"one.json: 4 options, but the first example has 2"):
        read_race(tmp_path / "one.json")
