"""What `python -m pipelines.train_vocab` prints: one last line by default, SentencePiece's own
trainer log (~95 lines on stderr, from C++) only with `--verbose` (issue 30)."""

from pipelines import train_vocab as tv


def _argv(tmp_path, *flags):
    corpus = tmp_path / "t.txt"
    corpus.write_text("".join(f"Sentence number {i} of a small corpus.\n" for i in range(300)))
    prefix = str(tmp_path / f"spm{len(flags)}")
    return ["--input", str(corpus), "--output_prefix", prefix, "--vocab_size", "60", *flags]


def test_the_trainer_log_is_hidden_by_default(tmp_path, capfd):
    assert tv.main(_argv(tmp_path)) == 0
    out, err = capfd.readouterr()
    assert out.startswith("wrote ") and len(out.splitlines()) == 1, out
    assert err == "", err  # no trainer_interface.cc / unigram_model_trainer.cc lines


def test_verbose_shows_the_trainer_log(tmp_path, capfd):
    assert tv.main(_argv(tmp_path, "--verbose")) == 0
    out, err = capfd.readouterr()
    assert len(out.splitlines()) == 1
    assert "trainer_interface.cc" in err and len(err.splitlines()) > 50, err
