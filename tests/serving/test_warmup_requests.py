"""The export's warm-up file: TF Serving's PredictionLog records, one request for every (rows,
width) shape `serving_default` can run, replayed by `warm_up`; bad folders are one line."""

import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import prediction_log_pb2

from albert_keras.models import AlbertBackbone, AlbertClassifier
from albert_keras.preprocessing import AlbertPreprocessor, AlbertTokenizer
from albert_keras.serving import export_saved_model
from albert_keras.serving.length_groups import logits_by_length
from albert_keras.serving.warmup_requests import (
    MAX_RECORDS,
    WARMUP_FILE,
    question_answering_requests,
    read_warmup_requests,
    warm_up,
    warmup_shapes,
    warmup_texts,
    write_requests,
    write_warmup_requests,
)

LENGTH = 40  # widths 16, 32 and 40 (not a multiple of 16: cut to the packed length)


@pytest.fixture(scope="module")
def preprocessor(tiny_spm):
    return AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), sequence_length=LENGTH)


@pytest.fixture(scope="module")
def served(tiny_spm, tmp_path_factory):
    keras.utils.set_random_seed(5)
    # Its own preprocessor: one the tests call eagerly holds a tf.function no export can save.
    preprocessor = AlbertPreprocessor(AlbertTokenizer(str(tiny_spm)), sequence_length=LENGTH)
    backbone = AlbertBackbone(
        vocabulary_size=100,
        num_layers=1,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=LENGTH,
    )
    model = AlbertClassifier(backbone, num_classes=2, preprocessor=preprocessor)
    folder = tmp_path_factory.mktemp("warmup") / "served"
    export_saved_model(model, folder)
    return folder


def test_the_shapes_are_every_row_count_at_every_width():
    assert len(warmup_shapes(128)) == 5 * 8  # 1, 2, 4, 8, 16 rows; widths 16 to 128
    assert sorted({width for _, width in warmup_shapes(128)}) == list(range(16, 129, 16))
    assert len(warmup_shapes(512)) == 5 * 32
    assert warmup_shapes(17) == [(r, w) for w in (16, 17) for r in (1, 2, 4, 8, 16)]
    assert warmup_shapes(LENGTH, rows_per_group=6) == [
        (r, w) for w in (16, 32, 40) for r in (1, 2, 4, 6)
    ]


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_the_file_holds_one_request_per_shape_the_length_groups_run(served, preprocessor):
    assert (served / WARMUP_FILE).is_file()
    requests = read_warmup_requests(served)
    assert [name for name, _ in requests] == ["serving_default"] * 15 + ["pairs"]
    assert sorted(requests[-1][1]) == ["text_a", "text_b"]
    seen = []  # the (rows, width) of every call of the model, request by request

    def spy(group):
        seen.append(tuple(group["token_ids"].shape))
        return tf.zeros([tf.shape(group["token_ids"])[0], 2])

    for _, inputs in requests[:-1]:
        assert list(inputs) == ["text"] and inputs["text"].dtype == object
        logits_by_length(spy, preprocessor(tf.constant(inputs["text"])), num_classes=2)
    assert seen == warmup_shapes(LENGTH)  # one group per request, every shape exactly once


def test_the_records_parse_as_tf_servings_own_prediction_log(served):
    dataset = tf.data.TFRecordDataset(str(served / WARMUP_FILE))
    logs = [prediction_log_pb2.PredictionLog.FromString(r) for r in dataset.as_numpy_iterator()]
    assert [log.predict_log.request.model_spec.signature_name for log in logs][-2:] == [
        "serving_default",
        "pairs",
    ]
    texts = tf.make_ndarray(logs[0].predict_log.request.inputs["text"])
    assert texts.shape == (1,) and texts.dtype == object


def test_warm_up_replays_every_request_on_the_loaded_model(served):
    pytest.importorskip("tensorflow_text", reason="the exported graph needs tensorflow-text")
    import tensorflow_text  # noqa: F401  (registers the graph's SentencePiece ops)

    loaded = tf.saved_model.load(str(served))
    assert warm_up(loaded, served) == 16
    single = loaded.signatures["serving_default"](text=tf.constant(["a a a"]))
    assert single["probabilities"].shape == (1, 2)


class FakeLoaded:
    """A loaded SavedModel's `signatures`, recording what each call was given."""

    def __init__(self, names):
        self.calls = []
        self.signatures = {name: self._signature(name) for name in names}

    def _signature(self, name):
        def call(**inputs):
            self.calls.append((name, {k: v.shape.as_list() for k, v in inputs.items()}))

        return call


def test_warm_up_calls_each_signature_with_its_inputs_and_names_a_missing_one(served):
    loaded = FakeLoaded(["serving_default", "pairs"])
    assert warm_up(loaded, served) == 16
    rows = [call[1]["text"][0] for call in loaded.calls[:-1]]
    assert rows == [1, 2, 4, 8, 16] * 3  # at widths 16, 32 and 40
    assert loaded.calls[-1] == ("pairs", {"text_a": [1], "text_b": [1]})
    with pytest.raises(ValueError) as error:
        warm_up(FakeLoaded(["serve"]), served)
    assert str(error.value) == (
        f"{served / WARMUP_FILE}: record 1 calls signature 'serving_default', which the loaded "
        "model lacks (it has ['serve'])"
    )


def _one_line_error(folder) -> str:
    with pytest.raises(ValueError) as error:
        read_warmup_requests(folder)
    message = str(error.value)
    assert "\n" not in message
    return message


def test_bad_folders_and_files_are_one_line(served, preprocessor, tmp_path):
    missing = tmp_path / "missing"
    assert _one_line_error(missing) == f"{missing}: not a SavedModel folder (no saved_model.pb)"
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copyfile(served / "saved_model.pb", bare / "saved_model.pb")
    assert _one_line_error(bare) == (
        f"{bare / WARMUP_FILE}: no such file; export the model again with albert-keras export"
    )
    assert write_warmup_requests(bare, preprocessor, LENGTH) == 16
    data = (bare / WARMUP_FILE).read_bytes()
    (bare / WARMUP_FILE).write_bytes(data[: len(data) - 5])  # the last record cut short
    message = _one_line_error(bare)
    assert message.startswith(f"{bare / WARMUP_FILE}: record 16 is damaged (")
    with tf.io.TFRecordWriter(str(bare / WARMUP_FILE)) as writer:
        writer.write(b"\xff not a proto")
    message = _one_line_error(bare)
    assert message.startswith(f"{bare / WARMUP_FILE}: record 1 is not a PredictionLog (")
    with tf.io.TFRecordWriter(str(bare / WARMUP_FILE)) as writer:
        pass
    assert _one_line_error(bare) == f"{bare / WARMUP_FILE}: holds no requests"


def test_an_empty_record_is_not_a_predict_request(tmp_path, served):
    shutil.copytree(served, tmp_path / "served")
    with tf.io.TFRecordWriter(str(tmp_path / "served" / WARMUP_FILE)) as writer:
        writer.write(b"")  # a PredictionLog with no log set
    assert _one_line_error(tmp_path / "served") == (
        f"{tmp_path / 'served' / WARMUP_FILE}: record 1 holds no Predict request"
    )


def test_texts_fit_any_vocabulary_the_filler_splits(preprocessor):
    # Every text lands in its width whatever the filler's pieces: measured, not assumed.
    for rows, width, texts in zip(
        *zip(*warmup_shapes(LENGTH)), warmup_texts(preprocessor, warmup_shapes(LENGTH))
    ):
        lengths = np.asarray(preprocessor(tf.constant(texts))["padding_mask"]).sum(axis=1)
        assert len(texts) == rows and width - 16 < lengths.max() <= width


def _pieces(per_word):
    return lambda texts: [per_word * len(text.split()) for text in texts]


def test_question_answering_requests_fill_one_window_then_two():
    # 40 positions, a 1-piece question: 36 context pieces a window, the next 8 pieces later.
    requests = question_answering_requests(_pieces(1), 40, 8, 8)
    assert [name for name, _ in requests] == ["serving_default"] * 6
    assert [len(inputs["question"]) for _, inputs in requests] == [1, 2, 4, 8, 16, 1]
    assert [len(inputs["context"]) for _, inputs in requests] == [1, 2, 4, 8, 16, 1]
    assert {len(inputs["context"][0].split()) for _, inputs in requests[:5]} == {36}
    assert len(requests[-1][1]["context"][0].split()) == 37  # the shortest of two windows
    # 2 pieces a word (the question's too): 35 a window, 17 words (34 pieces) fill it and
    # 18 words (36 pieces) take a second.
    two_pieces = question_answering_requests(_pieces(2), 40, 8, 8, windows=[3])
    assert [len(inputs["context"][0].split()) for _, inputs in two_pieces] == [17, 18]
    assert two_pieces[0][1]["question"] == ["a"] * 3


def test_question_answering_requests_name_a_filler_that_skips_the_second_window():
    # A 4-piece question leaves 9 of 16; 4 pieces a word: 8, then 12 (past 9 + stride 1).
    with pytest.raises(ValueError) as error:
        question_answering_requests(_pieces(4), 16, 4, 1)
    assert str(error.value) == (
        "no context of repeated 'a' fills one window of 9 pieces, or two at stride 1 "
        "(piece counts past 9: [12, 16, 20])"
    )


def test_write_requests_writes_two_input_requests_and_refuses_too_many(tmp_path):
    (tmp_path / "saved_model.pb").write_bytes(b"")
    requests = [("serving_default", {"question": ["who?", "what?"], "context": ["x y", "z"]})]
    assert write_requests(tmp_path, requests) == 1
    [(name, inputs)] = read_warmup_requests(tmp_path)
    assert name == "serving_default" and sorted(inputs) == ["context", "question"]
    assert inputs["question"].tolist() == [b"who?", b"what?"]
    assert inputs["context"].tolist() == [b"x y", b"z"]
    with pytest.raises(ValueError) as error:
        write_requests(tmp_path / "other", requests * (MAX_RECORDS + 1))
    assert str(error.value) == (
        f"{MAX_RECORDS + 1} warm-up requests: TF Serving replays at most {MAX_RECORDS}"
    )
    assert not (tmp_path / "other").exists()
