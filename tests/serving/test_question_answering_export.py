"""`albert-keras export` of a question answerer (issue #30): the SavedModel's
`serving_default(question, context)` gives `answer_questions`' answers and no-answer scores, for
both heads, on contexts of one window and of several (the sliding windows in the graph); its text path equals SQuAD's Python one (the same
pieces and original characters) on every shared SQuAD dev text."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text
from release_tarball import train_tiny_sentencepiece

from albert_keras.models import AlbertBackbone, AlbertQuestionAnswerer
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras.serving.question_answering_export import OUTPUTS, export_question_answerer
from albert_keras.serving.squad_text_graph import encode_with_offsets, piece_tables
from albert_keras.serving.warmup_requests import WARMUP_FILE, read_warmup_requests, warm_up
from albert_keras.squad import answer_questions, make_squad_features
from albert_keras.squad.context_pieces import encode_contexts
from albert_keras.squad.squad_examples import SquadExample
from albert_keras_cli.export import LOAD_LINE
from albert_keras_cli.main import main

# Digits before commas (the official digit-comma split), accents, LaTeX quotes, runs of
# Unicode whitespace, a capital for the lower-casing: what the text path maps back to characters.
VOCABULARY_TEXT = " . ".join(
    [
        "in 1990, the cat sat on the mat",
        "by 2001, a dog ran to the park",
        "the café was open in 1990, 1991, and 2001",
        "he said ``hello'' to the cat",
    ]
    * 20
)
QUESTIONS = ["who sat?", "Where did the DOG run?", "when?", "what ``was'' open?", "why?", "x",
             "where?"]  # fmt: skip
CONTEXTS = [
    "In 1990, the cat sat on the mat.",
    "  By 2001,\u00a0a  dog ran\tto the PARK ",
    "The Café was open in 1990, 1991, and 2001.",
    "He said ``hello'' to the naïve cat.",
    "",
    "cat",
    "In 1990, the cat sat on the mat; by 2001, a dog ran to the park. " * 4,  # several windows
]


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory):
    return train_tiny_sentencepiece(
        tmp_path_factory.mktemp("qa_spm") / "qa", text=VOCABULARY_TEXT, vocab_size=80
    )


def _answerer(vocabulary, head):
    tokenizer = AlbertTokenizer(str(vocabulary))
    keras.utils.set_random_seed(7)
    backbone = AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=1, num_heads=2,
        embedding_dim=8, hidden_dim=16, intermediate_dim=32, max_sequence_length=40,
    )  # fmt: skip
    return AlbertQuestionAnswerer(
        backbone,
        head=head,
        preprocessor=AlbertPreprocessor(tokenizer, sequence_length=40),
        max_query_length=8,
        doc_stride=8,
    )


def _served(folder):
    # (tensorflow_text, imported above, registers the SentencePiece ops the graph holds)
    return tf.saved_model.load(str(folder)).signatures["serving_default"]


@pytest.fixture(scope="module")
def simple_export(vocabulary, tmp_path_factory):
    """The simple head's answerer and its export (made once: the answers and the warm-up)."""
    answerer = _answerer(vocabulary, "simple")
    answer_questions(answerer, QUESTIONS[:1], CONTEXTS[:1])  # called before export, as users do
    folder = tmp_path_factory.mktemp("qa_served") / "served"
    return answerer, folder, export_question_answerer(answerer, folder)


@pytest.fixture(scope="module")
def simple_served(simple_export):
    """The simple head's export loaded once (a load and the first call of its graph cost ~10
    CPU-s): the answers are read from it, then its warm-up requests replayed on it."""
    return tf.saved_model.load(str(simple_export[1]))


# Each export traces and writes the whole graph (~25 CPU-s): the v2 head and the command's own
# run are slow; the simple head covers the shared path in the default suite.
@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
@pytest.mark.parametrize("head", ["simple", "v2"])
def test_exported_answers_are_answer_questions_answers(vocabulary, tmp_path, head, request):
    if head == "simple":
        answerer, folder, signatures = request.getfixturevalue("simple_export")
        serving_default = request.getfixturevalue("simple_served").signatures["serving_default"]
    else:
        answerer, folder = _answerer(vocabulary, head), tmp_path / "served"
    examples = [SquadExample(str(k), q, c) for k, (q, c) in enumerate(zip(QUESTIONS, CONTEXTS))]
    features = make_squad_features(
        examples, answerer.preprocessor.tokenizer, max_seq_length=40, doc_stride=8,
        max_query_length=8,
    )  # fmt: skip
    assert np.bincount(features.example_index).tolist()[-1] > 2  # the long one: several windows
    expected = answer_questions(answerer, QUESTIONS, CONTEXTS)
    if head != "simple":
        signatures = export_question_answerer(answerer, folder)
        serving_default = _served(folder)
    assert signatures == {"serving_default": OUTPUTS}
    outputs = serving_default(question=tf.constant(QUESTIONS), context=tf.constant(CONTEXTS))
    answers = [text.decode("utf-8") for text in outputs["answer"].numpy()]
    assert answers == [row["answer"] for row in expected]
    assert answers[4] == ""  # no context, no window: nothing to answer from
    np.testing.assert_allclose(
        outputs["null_odds"].numpy(), [row["null_odds"] for row in expected], rtol=1e-5, atol=1e-5
    )
    starts, ends = outputs["start_char"].numpy(), outputs["end_char"].numpy()
    nonce = "empty" if head == "simple" else ""
    found = [
        context[a:b] if b > a else (nonce if context else "")
        for context, a, b in zip(CONTEXTS, starts, ends)
    ]
    assert found == answers and any(answers[:4])


def _pieces(tokenizer):
    """What the answerer's tokenizer gives eagerly: questions' ids, contexts' pieces and spans."""
    offsets = tokenizer.encode_normalized_with_offsets(CONTEXTS)
    return tokenizer(QUESTIONS).to_list(), [[part.tolist() for part in row] for row in offsets]


def test_a_second_answerer_leaves_the_first_answerers_tokenizer_working(vocabulary):
    # Before the fix the second answerer's seeding (TF's kernel cache cleared) took the first
    # one's SentencePiece resource: "Resource ... SentencepieceOp ... does not exist". Seeding
    # was the trigger, not the export (a second export, ~25 s, failed the same way), so the
    # first answerer here has answered but is not exported.
    expected = _pieces(AlbertTokenizer(str(vocabulary)))
    first = _answerer(vocabulary, "simple")
    answer_questions(first, QUESTIONS[:1], CONTEXTS[:1])  # its tokenizer's resource is made
    _answerer(vocabulary, "simple")
    assert _pieces(first.preprocessor.tokenizer) == expected


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_the_export_writes_warm_up_requests_that_replay_on_the_loaded_model(
    simple_export, simple_served
):
    answerer, folder, _ = simple_export
    tokenizer = answerer.preprocessor.tokenizer  # tokenizes after the second export above
    assert (folder / WARMUP_FILE).is_file()
    requests = read_warmup_requests(folder)
    assert [name for name, _ in requests] == ["serving_default"] * 6
    windows, filled = [], []  # per request, by SQuAD's own Python windows
    for _, inputs in requests:
        assert sorted(inputs) == ["context", "question"]
        assert len(inputs["question"]) == len(inputs["context"])
        pairs = zip(inputs["question"], inputs["context"])
        examples = [SquadExample(str(k), q.decode(), c.decode()) for k, (q, c) in enumerate(pairs)]
        features = make_squad_features(
            examples, tokenizer, max_seq_length=40, doc_stride=8, max_query_length=8,
        )  # fmt: skip
        windows.append(len(features))
        filled.append(features.inputs["padding_mask"].sum(axis=1).min())
    assert windows == [1, 2, 4, 8, 16, 2]  # the model's rows: every request a new shape
    assert filled[:5] == [40] * 5  # the one-window contexts fill their window
    assert warm_up(simple_served, folder) == 6


@pytest.mark.slow
def test_the_command_exports_a_question_answerer_and_says_how_to_load_it(
    vocabulary, tmp_path, capsys
):
    answerer = _answerer(vocabulary, "simple")
    answerer.save(tmp_path / "qa.keras")
    argv = ["export", "--model", str(tmp_path / "qa.keras"), "--output_dir", str(tmp_path / "s")]
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        f"wrote {tmp_path / 's'}",
        f"  signature serving_default: {', '.join(OUTPUTS)}",
        f"  {LOAD_LINE}",
    ]
    loaded = keras.saving.load_model(tmp_path / "qa.keras")
    outputs = _served(tmp_path / "s")(question=tf.constant(QUESTIONS[:1]), context=tf.constant(CONTEXTS[:1]))  # fmt: skip
    expected = answer_questions(loaded, QUESTIONS[:1], CONTEXTS[:1])
    assert outputs["answer"].numpy()[0].decode("utf-8") == expected[0]["answer"]


def test_the_graph_text_path_equals_squads(shared_data):
    tokenizer = AlbertTokenizer(str(shared_data / "vocab/30k-clean.reconstructed.model"))
    data = json.loads((shared_data / "squad/squad-v2.0-dev-part.json").read_text())
    paragraphs = [p for article in data["data"] for p in article["paragraphs"]]
    texts = [p["context"] for p in paragraphs] + [q["question"] for p in paragraphs for q in p["qas"]]  # fmt: skip
    texts += ["  Born in 1990, Zoë  ``said''  hi ", "ΣΑΣ ΣΟΦΟΣ. İstanbul ``` '''x", "", " \u3000 ",
              "In 12,000 years, ab1990,cd", "ﬁne ¨x a\0B"]  # fmt: skip
    sentencepiece = tf_text.SentencepieceTokenizer(model=tokenizer.proto)
    tables = piece_tables(tokenizer)
    encode = tf.function(lambda t: encode_with_offsets(t, sentencepiece, tables, True))
    ids, starts, ends, _ = encode(tf.constant(texts))
    expected = encode_contexts(tokenizer, texts)
    got = list(zip(ids.to_list(), starts.to_list(), ends.to_list()))
    mismatched = [
        text[:40]
        for text, (i, s, e), ref in zip(texts, got, expected)
        if (i, s, e) != (ref.ids.tolist(), ref.char_starts.tolist(), ref.char_ends.tolist())
    ]
    assert (len(texts), mismatched) == (len(texts), [])
    assert len(texts) > 700  # tests/data: two SQuAD 2.0 dev articles (719 texts)
