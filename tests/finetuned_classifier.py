"""A tiny classifier fine-tuned through `finetune_glue` on a tiny SST-2, for the serving and
`predict` tests: `finetune_tiny_sst2(folder, spm) -> (model.keras, glue_dir, metrics)`."""

import json
import pathlib
import shutil

SEQUENCE_LENGTH = 16  # what the model is fine-tuned at: not 512, not the backbone's 32
GOOD = ["the cat sat on the mat", "a fine day", "the dog ran in the park", "it was fine"]
BAD = ["a dog sat", "the mat was", "it ran in", "the cat"]


def write_tiny_sst2(glue_dir: pathlib.Path) -> pathlib.Path:
    """GLUE's SST-2 layout: 16 train rows, 8 dev rows (header `sentence<TAB>label`)."""
    folder = glue_dir / "SST-2"
    folder.mkdir(parents=True)
    rows = [f"{text}\t1" for text in GOOD] + [f"{text}\t0" for text in BAD]
    (folder / "train.tsv").write_text("sentence\tlabel\n" + "\n".join(rows * 2) + "\n")
    (folder / "dev.tsv").write_text("sentence\tlabel\n" + "\n".join(rows[::-1]) + "\n")
    return glue_dir


def finetune_tiny_sst2(folder: pathlib.Path, spm: pathlib.Path):
    """Fine-tunes a random tiny backbone (saved with `spm.model` beside it) for 4 steps."""
    from albert_keras.jobs.finetune_glue_job import finetune_glue
    from albert_keras.models import AlbertBackbone

    backbone = AlbertBackbone(
        vocabulary_size=100, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=32,
    )  # fmt: skip
    backbone.save(folder / "backbone.keras")
    shutil.copy(spm, folder / "spm.model")
    glue_dir = write_tiny_sst2(folder / "glue")
    finetune_glue(
        task="SST-2", glue_dir=glue_dir, init_from=folder / "backbone.keras",
        output_dir=folder / "sst2",
        max_steps=4, batch_size=4, max_seq_length=SEQUENCE_LENGTH, learning_rate=1e-3,
        eval_every=2, patience=0, seed=0, jit_compile=False, mixed_precision="float32",
    )  # fmt: skip
    metrics = json.loads((folder / "sst2" / "metrics.json").read_text())
    return folder / "sst2" / "model.keras", glue_dir, metrics
