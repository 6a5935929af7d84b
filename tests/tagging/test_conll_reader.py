"""CoNLL-style files: sentences, tags, -DOCSTART-, and a one-line error for each bad input."""

import pytest

from albert_keras.tagging import read_conll, tag_ids, tag_names, tagging_metrics

CONLL_2003 = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER


-DOCSTART- -X- -X- O
Oslo NNP B-NP B-LOC
"""


def test_sentences_words_and_last_column_tags(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(CONLL_2003)
    read = read_conll(path)
    assert read.words == [["EU", "rejects", "German", "call"], ["Peter", "Blackburn"], ["Oslo"]]
    assert read.tags == [["B-ORG", "O", "B-MISC", "O"], ["B-PER", "I-PER"], ["B-LOC"]]
    assert read.lines == [[3, 4, 5, 6], [8, 9], [13]]
    assert tag_names(read) == ["O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-PER"]
    assert tag_ids(read, tag_names(read))[1] == [4, 5]


def test_a_file_to_predict_may_hold_words_alone(tmp_path):
    path = tmp_path / "test.txt"
    path.write_text("Anna\nlives O\n\nOslo\n")
    read = read_conll(path, tags_required=False)
    assert read.words == [["Anna", "lives"], ["Oslo"]]
    assert read.tags == [[None, "O"], [None]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Anna B-PER\nlives\n", r"train.txt:2: 'lives' has no tag"),
        ("\n\n-DOCSTART- O\n\n", r"train.txt: no sentence"),
        (b"caf\xe9 O\n", r"train.txt: not UTF-8"),
    ],
)
def test_bad_files_are_one_line_naming_file_and_line(tmp_path, text, message):
    path = tmp_path / "train.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match=message) as error:
        read_conll(path)
    assert "\n" not in str(error.value)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt: no such file"):
        read_conll(tmp_path / "nope.txt")


def test_a_validation_tag_unseen_in_training_names_file_and_line(tmp_path):
    (tmp_path / "train.txt").write_text("Anna B-PER\nlives O\n")
    (tmp_path / "dev.txt").write_text("Bo B-PER\n\nin O\nOslo B-LOC\n")
    names = tag_names(read_conll(tmp_path / "train.txt"))
    with pytest.raises(ValueError, match=r"dev.txt:4: tag 'B-LOC' is not in the training"):
        tag_ids(read_conll(tmp_path / "dev.txt"), names)


def test_entity_level_scores_follow_conll():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    # PER right; LOC missed; ORG's span right but typed MISC; one spurious LOC.
    predicted = [["B-PER", "I-PER", "O", "O"], ["B-MISC", "B-LOC"]]
    scores = tagging_metrics(gold, predicted)
    assert scores["precision"] == pytest.approx(1 / 3)
    assert scores["recall"] == pytest.approx(1 / 3)
    assert scores["f1"] == pytest.approx(1 / 3)
    assert scores["accuracy"] == pytest.approx(3 / 6)
    # A word the model could not see (None) counts as O: the PER entity is then broken.
    cut = tagging_metrics([["B-PER", "I-PER"]], [["B-PER", None]])
    assert cut["accuracy"] == 0.5 and cut["recall"] == 0.0
