"""`pretrain --init_from` on records of another vocabulary names --init_from, the model the
vocabulary came from, not --preset (issue 30)."""

import pytest
from synthetic_records import SEQ_LENGTH

from albert_keras.jobs import pretrain
from albert_keras.models import AlbertBackbone


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_mismatched_records_name_the_init_from_model(tiny_records, tmp_path):
    small = AlbertBackbone(vocabulary_size=10, num_layers=1, num_heads=2, embedding_dim=8,
                           hidden_dim=8, intermediate_dim=16, max_sequence_length=SEQ_LENGTH)  # fmt: skip
    model = tmp_path / "small.keras"
    small.save(model)
    with pytest.raises(ValueError) as error:
        pretrain(
            records=tiny_records["eval"],
            output_dir=str(tmp_path / "run"),
            init_from=str(model),
            verbose=0,
        )
    message = str(error.value)
    assert f"--init_from {model}" in message and "--preset" not in message, message
