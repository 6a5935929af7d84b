"""`albert-keras finetune-tokens` and `finetune-choice`: a tiny run each, and bad files refused."""

import json

import keras
import pytest

import albert_keras as ak
from albert_keras.jobs.finetune_choice_job import finetune_choice
from albert_keras.jobs.finetune_tokens_job import finetune_tokens
from albert_keras_cli import main as cli

SENTENCES = [
    [("the", "O"), ("cat", "B-ANIMAL"), ("sat", "O")],
    [("a", "O"), ("dog", "B-ANIMAL"), ("ran", "O"), ("home", "B-PLACE")],
    [("the", "O"), ("old", "B-ANIMAL"), ("bird", "I-ANIMAL")],
]
SWAG = (
    "sent1,sent2,ending0,ending1,ending2,label\n"
    "The cat sat,It,on the mat.,in the sky.,at sea.,0\n"
    "A dog ran,It,to the park.,to the moon.,in a cup.,0\n"
    "We walked,We,to a house.,into a tree.,up the sky.,0\n"
)


@pytest.fixture(scope="module")
def saved_backbone(tmp_path_factory, tiny_spm):
    folder = tmp_path_factory.mktemp("model")
    keras.utils.set_random_seed(3)
    ak.AlbertBackbone(
        vocabulary_size=32, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=32,
    ).save(folder / "backbone.keras")  # fmt: skip
    (folder / "spm.model").symlink_to(tiny_spm)
    return folder / "backbone.keras"


def _conll(path, sentences, docstart=True):
    lines = ["-DOCSTART- -X- O", ""] if docstart else []
    for sentence in sentences:
        lines += [f"{word} X {tag}" for word, tag in sentence] + [""]
    path.write_text("\n".join(lines))
    return path


def test_finetune_tokens_writes_model_metrics_and_conll_predictions(tmp_path, saved_backbone):
    train = _conll(tmp_path / "train.txt", SENTENCES * 2)
    dev = _conll(tmp_path / "dev.txt", SENTENCES[:2], docstart=False)
    test = tmp_path / "test.txt"
    test.write_text("the\ncat\n\nbird\n")
    summary = finetune_tokens(
        train_file=train, validation_file=dev, test_file=test, init_from=saved_backbone,
        output_dir=tmp_path / "out", max_seq_length=16, batch_size=2, epochs=2,
    )  # fmt: skip
    assert summary["labels"] == ["O", "B-ANIMAL", "B-PLACE", "I-ANIMAL"]
    assert summary["steps_trained"] == 6  # 6 sentences / 2 a batch x 2 epochs
    assert (summary["num_examples"], summary["num_words"], summary["words_cut_off"]) == (2, 7, 0)
    assert sorted(summary["metrics"]) == ["accuracy", "f1", "precision", "recall"]
    out = tmp_path / "out"
    assert json.loads((out / "metrics.json").read_text())["metrics"] == summary["metrics"]
    rows = (out / "validation_predictions.txt").read_text().split("\n\n")
    assert [line.split()[:2] for line in rows[0].splitlines()] == [[w, t] for w, t in SENTENCES[0]]
    assert [len(line.split()) for line in (out / "test_predictions.txt").read_text().split()] == [
        1
    ] * 6  # word, tag, word, tag, ... (two columns a line)
    tagger = keras.saving.load_model(out / "model.keras")
    tags = tagger.predict(["the cat  sat"])[0]
    assert [(t["word"], t["start"]) for t in tags] == [("the", 0), ("cat", 4), ("sat", 9)]
    assert all(t["tag"] in summary["labels"] for t in tags)
    # The same tags as the validation file's predictions.
    predicted = [line.split()[-1] for line in rows[0].splitlines()]
    assert [t["tag"] for t in tagger.predict([" ".join(w for w, _ in SENTENCES[0])])[0]] == (
        predicted
    )
    # `albert-keras predict` on lines of text: each line echoed with its words' tags.
    (tmp_path / "lines.txt").write_text("the cat  sat\na dog\n")
    argv = ["predict", "--model", str(out / "model.keras"), "--input", str(tmp_path / "lines.txt")]
    assert cli.main([*argv, "--output", str(tmp_path / "tags.jsonl")]) == 0
    answers = [json.loads(line) for line in (tmp_path / "tags.jsonl").read_text().splitlines()]
    assert answers == [
        {"text": text, "words": words}
        for text, words in zip(["the cat  sat", "a dog"], tagger.predict(["the cat  sat", "a dog"]))
    ]


@pytest.mark.slow  # a second fine-tuning, its save and load: ~15 s on a quiet machine
def test_finetune_choice_writes_model_metrics_and_choices(tmp_path, saved_backbone):
    (tmp_path / "train.csv").write_text(SWAG)
    summary = finetune_choice(
        train_file=tmp_path / "train.csv", validation_file=tmp_path / "train.csv",
        test_file=tmp_path / "train.csv", init_from=saved_backbone, output_dir=tmp_path / "out",
        max_seq_length=16, batch_size=2, max_steps=3,
    )  # fmt: skip
    assert summary["steps_trained"] == 3
    assert (summary["num_examples"], summary["num_options"]) == (3, 3)
    predictions = [
        json.loads(line)
        for line in (tmp_path / "out" / "validation_predictions.jsonl").read_text().splitlines()
    ]
    assert [p["label"] for p in predictions] == [0, 0, 0]
    right = sum(p["choice"] == p["label"] for p in predictions)
    assert summary["metrics"]["accuracy"] == pytest.approx(right / 3)
    chooser = keras.saving.load_model(tmp_path / "out" / "model.keras")
    again = chooser.predict((["The cat sat"], [["It on the mat.", "It in the sky.", "It at sea."]]))
    assert again[0]["choice"] == predictions[0]["choice"]
    # `albert-keras predict` on JSON lines of options: the id echoed, the same choice.
    question = {"id": "q1", "context": "The cat sat", "options": ["It on the mat.", "It in the sky.", "It at sea."]}  # fmt: skip
    (tmp_path / "q.jsonl").write_text(json.dumps(question) + "\n")
    model = str(tmp_path / "out" / "model.keras")
    argv = ["predict", "--model", model, "--input", str(tmp_path / "q.jsonl")]
    assert cli.main([*argv, "--output", str(tmp_path / "a.jsonl")]) == 0
    answer = json.loads((tmp_path / "a.jsonl").read_text())
    assert answer["id"] == "q1" and answer["choice"] == again[0]["choice"]
    assert answer["probabilities"] == pytest.approx(again[0]["probabilities"], abs=1e-6)
    (tmp_path / "bad.jsonl").write_text('{"context": "x", "options": "not a list"}\n')
    argv = ["predict", "--model", model, "--input", str(tmp_path / "bad.jsonl")]
    assert cli.main(argv) == 2


@pytest.mark.parametrize(
    ("command", "files", "message"),
    [
        (
            "finetune-tokens",
            {"train.txt": "Anna B-PER\n", "dev.txt": "Oslo B-LOC\n"},
            "dev.txt:1: tag 'B-LOC' is not in the training file's tags (B-PER)",
        ),
        (
            "finetune-tokens",
            {"train.txt": "Anna B-PER\nlives\n", "dev.txt": "Anna B-PER\n"},
            "train.txt:2: 'lives' has no tag",
        ),
        (
            "finetune-choice",
            {"train.txt": "sent1,sent2,ending0,label\nA,b,c,0\n", "dev.txt": SWAG},
            "train.txt:1: not JSON",
        ),
        (
            "finetune-choice",
            {"train.txt": SWAG, "dev.txt": "sent1,sent2,ending0\nA,b,c\n"},
            "dev.txt:2: no answer (label)",
        ),
    ],
)
def test_bad_files_fail_in_one_line_before_the_folder_is_made(
    tmp_path, saved_backbone, capsys, command, files, message
):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    argv = [
        command, "--train_file", str(tmp_path / "train.txt"),
        "--validation_file", str(tmp_path / "dev.txt"), "--init_from", str(saved_backbone),
        "--output_dir", str(tmp_path / "out"),
    ]  # fmt: skip
    if command == "finetune-choice":
        argv += ["--format", "race" if "not JSON" in message else "swag"]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert not (tmp_path / "out").exists()
