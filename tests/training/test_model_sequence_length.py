"""Fine-tuning's lengths default to the model's own (issue 46): read from the `.keras` file
before it is loaded, the SQuAD stride and question scaled to it, used by both jobs."""

import json

import keras
import pytest

import albert_keras as ak
from albert_keras.glue import get_glue_task
from albert_keras.jobs import finetune_glue_job, finetune_squad_job
from albert_keras.training.model_sequence_length import model_sequence_length, saved_lengths
from albert_keras_settings import FinetuneGlueSettings, FinetuneSquadSettings

TRAINED, POSITIONS = 24, 32  # pretrained at 24 pieces, 32 position embeddings


def _backbone(vocabulary_size):
    return ak.AlbertBackbone(vocabulary_size=vocabulary_size, num_layers=1, num_heads=2,
                             embedding_dim=8, hidden_dim=16, intermediate_dim=32,
                             max_sequence_length=POSITIONS)  # fmt: skip


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory, tiny_spm):
    """A folder as `albert-keras pretrain` leaves it: model.keras (a pretrainer whose
    preprocessor packs to 24) and its vocabulary beside it; plus a bare backbone's file."""
    folder = tmp_path_factory.mktemp("pretrained")
    (folder / "spm.model").write_bytes(tiny_spm.read_bytes())
    tokenizer = ak.AlbertTokenizer(str(tiny_spm))
    preprocessor = ak.AlbertPreprocessor(tokenizer, TRAINED)
    backbone = _backbone(tokenizer.vocabulary_size())
    ak.AlbertPretrainer(backbone, preprocessor=preprocessor).save(folder / "model.keras")
    backbone.save(folder / "backbone.keras")
    return folder


def test_the_lengths_are_read_from_the_file_without_loading_it(pretrained, monkeypatch):
    model = keras.saving.load_model(pretrained / "model.keras", compile=False)
    assert saved_lengths(model) == (TRAINED, POSITIONS)  # in memory: the same answer

    def refuse(*args, **kwargs):
        raise AssertionError("loaded the model to find its length")

    monkeypatch.setattr(keras.saving, "load_model", refuse)
    assert saved_lengths(pretrained / "model.keras") == (TRAINED, POSITIONS)
    assert saved_lengths(pretrained / "backbone.keras") == (None, POSITIONS)
    assert saved_lengths(pretrained / "spm.model") == (None, None)  # not a .keras archive
    assert saved_lengths(pretrained / "missing.keras") == (None, None)


def test_the_default_length_is_the_model_s_own_at_most_the_official(pretrained):
    assert model_sequence_length(pretrained / "model.keras", official=512) == TRAINED
    assert model_sequence_length(pretrained / "backbone.keras", official=512) == POSITIONS
    assert model_sequence_length(pretrained / "backbone.keras", official=16) == 16
    assert model_sequence_length(pretrained / "missing.keras", official=384) == 384


@pytest.mark.parametrize(
    "model_length,given,expected",
    [
        (128, {}, (128, 32, 16)),  # the example
        (384, {}, (384, 128, 64)),  # the release README's
        (512, {}, (384, 128, 64)),  # a 512-position release: the official 384
        (None, {}, (384, 128, 64)),  # unknown: the official
        (64, {}, (64, 16, 10)),
        (24, {}, (24, 8, 4)),
        (512, {"max_seq_length": 128}, (128, 32, 16)),  # scaled to the length given
        (128, {"doc_stride": 40, "max_query_length": 20}, (128, 40, 20)),  # given: kept
    ],
)
def test_squad_features_scale_with_the_length(model_length, given, expected):
    settings = FinetuneSquadSettings(version="2.0", train_file="t.json", predict_file="d.json",
                                     init_from="m.keras", output_dir="o/", **given)  # fmt: skip
    resolved = settings.feature_lengths(model_length)
    assert (resolved.max_seq_length, resolved.doc_stride, resolved.max_query_length) == expected


def test_a_bad_length_is_refused_once_filled_in():
    settings = FinetuneSquadSettings(version="2.0", train_file="t.json", predict_file="d.json",
                                     init_from="m.keras", output_dir="o/", max_query_length=40)  # fmt: skip
    with pytest.raises(ValueError, match="--max_seq_length=24 leaves no room for a context"):
        settings.feature_lengths(24)


def test_finetune_glue_takes_the_pretrained_length(pretrained):
    # The job's hyperparameters (what its manifest and metrics.json record), made before the
    # model is loaded; the whole job is run end to end in tests/jobs/test_finetune_glue.py.
    task = get_glue_task("SST-2")
    for init_from, expected in [("model.keras", TRAINED), ("backbone.keras", POSITIONS)]:
        settings = FinetuneGlueSettings(task="SST-2", glue_dir="glue", output_dir="o",
                                        init_from=str(pretrained / init_from))  # fmt: skip
        assert finetune_glue_job._hyperparameters(task, settings)["max_seq_length"] == expected
    given = FinetuneGlueSettings(task="SST-2", glue_dir="glue", output_dir="o", max_seq_length=8,
                                 init_from=str(pretrained / "model.keras"))  # fmt: skip
    assert finetune_glue_job._hyperparameters(task, given)["max_seq_length"] == 8


def _squad_file(path):
    context = "the cat sat on the mat . the dog ran to the park ."
    qas = [{"id": "q1", "question": "where did the cat sit", "is_impossible": False,
            "answers": [{"text": "on the mat", "answer_start": context.index("on the mat")}]}]  # fmt: skip
    data = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": context,
                                                                         "qas": qas}]}]}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_finetune_squad_decides_its_lengths_before_loading(pretrained, tmp_path, monkeypatch):
    run = finetune_squad_job._FinetuneSquad(
        None, {"version": "2.0", "predict_file": _squad_file(tmp_path / "dev.json"),
               "init_from": str(pretrained / "model.keras"), "output_dir": tmp_path / "out",
               "epochs": 0},
    )  # fmt: skip
    monkeypatch.setattr(keras.saving, "load_model", None)  # reading the inputs loads no model
    arguments = run.read_inputs()
    lengths = [arguments[k] for k in ("max_seq_length", "doc_stride", "max_query_length")]
    assert lengths == [TRAINED, 8, 4]
    assert run.data.predict_features.inputs["token_ids"].shape[1] == TRAINED


@pytest.mark.slow
def test_finetune_squad_takes_the_pretrained_length(pretrained, tmp_path):
    summary = finetune_squad_job.finetune_squad(
        version="2.0", predict_file=_squad_file(tmp_path / "dev.json"),
        init_from=pretrained / "model.keras", output_dir=tmp_path / "out", epochs=0,
        strategy="cpu", mixed_precision="float32",
    )  # fmt: skip
    hyperparameters = summary["hyperparameters"]
    assert [hyperparameters[k] for k in ("max_seq_length", "doc_stride", "max_query_length")] == [
        TRAINED, 8, 4,
    ]  # fmt: skip
    answerer = keras.saving.load_model(tmp_path / "out" / "model.keras", compile=False)
    assert (answerer.preprocessor.sequence_length, answerer.doc_stride) == (TRAINED, 8)
