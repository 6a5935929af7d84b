"""Trains a SentencePiece unigram vocabulary laid out as ALBERT's release vocabulary.

    python -m pipelines.train_vocab --input 'corpus/*.txt' --vocab_size 30000 \\
        --output_prefix out/spm [--lower_case] [--input_sentence_size N] [--seed S]

Prints a progress line every 5 s while reading (`--quiet`: none) and a last line saying what it
wrote; SentencePiece's own trainer log (~95 lines) only with `--verbose`.

Writes `out/spm.model`, `out/spm.vocab` and `out/spm.summary.json`, each to a temporary name
first, then renamed, so a crash never leaves a half-written model under the final name. The
folder may hold a user's other files: the command refuses to replace an existing output unless
`--overwrite`, and a write that fails (a full disk) is one line naming the file, not the input.

The trainer flags are those of the ALBERT release (its README's `spm_train` line): `<pad>`=0,
`<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4 (control symbols), no BOS/EOS, the user-defined
symbols `( ) " - . – £ €`, nmt_nfkc normalization, character coverage 0.99995. So a model
trained here and `../shared/data/vocab/30k-clean.reconstructed.model` are interchangeable.

The text is prepared by `albert_keras_contracts.text_normalization` as the official `preprocess_text`
prepares what it encodes (whitespace collapsed, ``` `` ``` and `''` to `"`, accents stripped;
lower-cased with `--lower_case`, as ALBERT's uncased release) before SentencePiece sees it; the model's own normalizer stays nmt_nfkc, as the release's. `pipelines.tokenization` tells
an uncased vocabulary from its pieces, and the summary records `lower_case` too.
"""

from __future__ import annotations

import argparse
import io
import itertools
import sys
import time
from collections.abc import Iterable, Iterator

import numpy as np
import sentencepiece as spm

from albert_keras_contracts.output_folder import check_apart, check_new_file, os_error_line
from albert_keras_contracts.special_tokens import SPECIAL_PIECES
from albert_keras_contracts.text_normalization import preprocess_texts
from pipelines.documents import INPUT_FORMATS, iter_file_documents, list_input_files
from pipelines.read_stats import ReadStats
from pipelines.sentencepiece_proto import sentencepiece_model_pb2
from pipelines.vocab_files import write_json_atomically, write_vocab_files

USER_DEFINED_SYMBOLS = ["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"]

# The official `input_sentence_size`: larger inputs are sampled down to this many sentences.
DEFAULT_INPUT_SENTENCE_SIZE = 10_000_000
# SentencePiece's own default; longer sentences would be dropped by it silently, we count them.
MAX_SENTENCE_BYTES = 4192


def train_vocab(
    file_patterns: str | Iterable[str],
    output_prefix: str,
    *,
    vocab_size: int = 30000,
    lower_case: bool = False,
    input_format: str = "text",
    input_sentence_size: int = DEFAULT_INPUT_SENTENCE_SIZE,
    seed: int = 12345,
    character_coverage: float = 0.99995,
    hard_vocab_limit: bool = True,
    num_threads: int = 16,
    verbose: bool = False,
    trainer_log: bool = False,
) -> dict:
    """Trains `output_prefix.model` / `.vocab` on the sentences of the matching files.

    Args:
        file_patterns: str or list of str. Glob patterns, comma-separated or a list.
        output_prefix: str. Writes `{output_prefix}.model`, `.vocab` and `.summary.json`;
            the directory is created when missing.
        vocab_size: int. Number of pieces, the five special ones included.
        lower_case: bool. Lower-case the text first (ALBERT's release is uncased).
        input_format: str. `"text"` (prose) or `"sentences"`; see `pipelines.documents`.
        input_sentence_size: int. With more sentences than this, train on a uniform random
            sample of this many (drawn with `seed`), as the official `spm_train`; 0: all.
        seed: int. Seeds the sampling: the same inputs and seed give a byte-identical model.
        character_coverage: float. Share of characters the model covers (rarer ones -> `<unk>`).
        hard_vocab_limit: bool. When False, a corpus too small for `vocab_size` pieces gives a
            smaller vocabulary instead of an error (the summary says how many).
        num_threads: int. Trainer threads. The pieces depend (slightly) on it, so the default is
            fixed (SentencePiece's own) rather than the CPU count: any machine, same model.
        verbose: bool. Show progress on stderr.
        trainer_log: bool. Show SentencePiece's own trainer log on stderr (~95 lines).

    Returns:
        The summary also written to `{output_prefix}.summary.json`.

    Example:
    >>> summary = train_vocab("corpus/*.txt", "out/spm", vocab_size=40, lower_case=True)
    >>> spm.SentencePieceProcessor(model_file="out/spm.model").piece_to_id("[MASK]")
    4
    """
    if vocab_size <= len(SPECIAL_PIECES) + len(USER_DEFINED_SYMBOLS):
        raise ValueError(f"vocab_size={vocab_size} leaves no room beside the 13 fixed pieces")
    if input_sentence_size < 0:
        raise ValueError(f"input_sentence_size={input_sentence_size} must be >= 0")
    start = time.monotonic()
    files = list_input_files(file_patterns)  # a pattern matching nothing fails here, clearly
    # Never over what it reads (PREFIX naming an input, or PREFIX.vocab being one).
    check_apart(
        "--output_prefix", [output_prefix, *output_files(output_prefix)], {"--input": files}
    )
    sample, counts, stats = _read_sample(files, file_patterns, input_format, lower_case,
                                         input_sentence_size, seed, verbose)  # fmt: skip
    # SentencePiece hands the model back instead of writing it: `write_vocab_files` writes both,
    # atomically, so a failed write is an OSError naming the file (a full disk, no permission).
    model = _train(sample, file_patterns, vocab_size, character_coverage, hard_vocab_limit,
                   num_threads, trainer_log)  # fmt: skip
    model.trainer_spec.model_prefix = output_prefix  # the final name: a rerun is byte-identical
    special_ids = _special_ids(model.SerializeToString(), f"{output_prefix}.model")
    write_vocab_files(output_prefix, model)
    summary = _summary(
        output_prefix, special_ids, len(sample), counts, stats, lower_case=lower_case,
        input_format=input_format, input_sentence_size=input_sentence_size, seed=seed, start=start,
    )  # fmt: skip
    write_json_atomically(f"{output_prefix}.summary.json", summary)
    return summary


def _summary(output_prefix: str, special_ids: dict, sentences_trained_on: int, counts: dict,
             stats: ReadStats, *, lower_case: bool, input_format: str, input_sentence_size: int,
             seed: int, start: float) -> dict:  # fmt: skip
    """What `train_vocab` wrote and read, and with which settings (its `.summary.json`);
    `start`: its `time.monotonic()` when it started."""
    return {
        "model": f"{output_prefix}.model",
        "vocab": f"{output_prefix}.vocab",
        "vocab_size": spm.SentencePieceProcessor(model_file=f"{output_prefix}.model").vocab_size(),
        "model_type": "unigram",
        "normalization": "nmt_nfkc",
        "preprocessing": "NFKD, combining marks removed" + (", lower-cased" if lower_case else ""),
        "lower_case": lower_case,
        "input_format": input_format,
        "special_ids": special_ids,
        "user_defined_symbols": USER_DEFINED_SYMBOLS,
        "sentences_read": counts["sentences_read"],
        "sentences_too_long": counts["too_long"],
        "sentences_trained_on": sentences_trained_on,
        "input_sentence_size": input_sentence_size,
        "seed": seed,
        "seconds": round(time.monotonic() - start, 2),
        "read": stats.to_dict(),
    }


def _read_sample(files, file_patterns, input_format, lower_case, input_sentence_size, seed,
                 verbose):  # fmt: skip
    """The sentences to train on (a seeded sample of at most `input_sentence_size`), the counts
    of sentences read and too long, and the `ReadStats` of the files; an error naming
    `file_patterns` when there is no sentence."""
    stats = ReadStats()
    counts = {"sentences_read": 0, "too_long": 0}
    sentences = _iter_sentences(
        _iter_all_documents(files, input_format, stats), lower_case, counts, verbose
    )
    sample, _ = sample_sentences(sentences, input_sentence_size, seed)
    if not sample:
        skipped = stats.to_dict()["skipped"]
        raise ValueError(f"no sentences to train on in {file_patterns!r} (skipped: {skipped})")
    return sample, counts, stats


def sample_sentences(sentences: Iterable[str], size: int, seed: int) -> tuple[list[str], int]:
    """A uniform random sample of `size` sentences (all of them if `size` is 0 or too large).

    Streams: memory holds the sample only, whatever the input size. SentencePiece samples its
    input too, but its sampler ignores `set_random_generator_seed` (0.2.x: the same sample for
    every seed), so we draw it with our own seeded generator.

    Returns:
        The sample (in no particular order) and how many sentences were seen.

    Example:
    >>> sample, seen = sample_sentences(iter(["a", "b", "c"]), 2, seed=0)
    >>> len(sample), seen
    (2, 3)
    """
    sentences = iter(sentences)
    if size == 0:
        sample = list(sentences)
        return sample, len(sample)
    rng = np.random.default_rng(seed)
    sample = list(itertools.islice(sentences, size))
    seen = len(sample)
    while batch := list(itertools.islice(sentences, 1 << 16)):
        # Reservoir sampling (Vitter's algorithm R), its draws vectorised over a batch: the
        # sentence at 0-based position t takes slot j ~ U{0..t} when j < size.
        slots = rng.integers(0, np.arange(seen + 1, seen + len(batch) + 1))
        for position in np.flatnonzero(slots < size):
            sample[slots[position]] = batch[position]
        seen += len(batch)
    return sample, seen


def read_special_ids(model_file: str) -> dict[str, int]:
    """The ids of ALBERT's special pieces in a SentencePiece model; raises if they differ.

    Works on a model trained here and on the release one alike.

    Example:
    >>> read_special_ids("spm.model")
    {'<pad>': 0, '<unk>': 1, '[CLS]': 2, '[SEP]': 3, '[MASK]': 4}
    """
    with open(model_file, "rb") as file:
        return _special_ids(file.read(), model_file)


def _special_ids(model_bytes: bytes, model_file: str) -> dict[str, int]:
    processor = spm.SentencePieceProcessor(model_proto=model_bytes)
    ids = {piece: processor.piece_to_id(piece) for piece in SPECIAL_PIECES.values()}
    # piece_to_id answers unk_id for an unknown piece, so compare with the expected layout.
    expected = {piece: i for i, piece in SPECIAL_PIECES.items()}
    if ids != expected or processor.pad_id() != 0 or processor.unk_id() != 1:
        raise ValueError(f"{model_file}: special pieces {ids} are not ALBERT's {expected}")
    return ids


def _train(
    sample, file_patterns, vocab_size, character_coverage, hard_vocab_limit, num_threads, log
):  # fmt: skip
    """SentencePiece's trainer with the release's flags; returns the `ModelProto`."""
    model_bytes = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sample),
            model_writer=model_bytes,
            model_type="unigram",
            vocab_size=vocab_size,
            character_coverage=character_coverage,
            normalization_rule_name="nmt_nfkc",
            pad_id=0,
            unk_id=1,
            bos_id=-1,
            eos_id=-1,
            control_symbols=[SPECIAL_PIECES[i] for i in (2, 3, 4)],
            user_defined_symbols=USER_DEFINED_SYMBOLS,
            input_sentence_size=0,  # sampled above
            max_sentence_length=MAX_SENTENCE_BYTES,
            hard_vocab_limit=hard_vocab_limit,
            num_threads=num_threads,
            minloglevel=0 if log else 2,  # 2: its errors only (raised below in one line)
        )
    except RuntimeError as error:
        # Keep SentencePiece's message on one line, from its useful part on ("Vocabulary size
        # too high (30000). Please set it to a value <= 26456.").
        message = " ".join(str(error).split())
        if "Vocabulary size too high" in message:
            message = message[message.index("Vocabulary size too high") :]
            message += " Or pass --allow_smaller_vocab (hard_vocab_limit=False)."
        raise ValueError(f"SentencePiece could not train on {file_patterns!r}: {message}") from None
    return sentencepiece_model_pb2.ModelProto.FromString(model_bytes.getvalue())


def _iter_sentences(
    documents: Iterator[list[str]], lower_case: bool, counts: dict, verbose: bool
) -> Iterator[str]:
    next_report = time.monotonic() + 5
    for document in documents:
        for sentence in preprocess_texts(document, lower_case):
            counts["sentences_read"] += 1
            # SentencePiece would drop it quietly; counting it here makes the loss visible.
            if len(sentence) * 4 > MAX_SENTENCE_BYTES and (
                len(sentence.encode()) > MAX_SENTENCE_BYTES
            ):
                counts["too_long"] += 1
                continue
            yield sentence
        if verbose and time.monotonic() > next_report:
            next_report += 5
            print(f"train_vocab: read {counts['sentences_read']:,} sentences", file=sys.stderr)


def _iter_all_documents(
    files: list[str], input_format: str, stats: ReadStats
) -> Iterator[list[str]]:
    for path in files:
        yield from iter_file_documents(path, input_format, stats=stats)


def output_files(output_prefix: str) -> list[str]:
    """The files `train_vocab` writes for `output_prefix`."""
    return [f"{output_prefix}{suffix}" for suffix in (".model", ".vocab", ".summary.json")]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's flags (the official `spm_train` line's choices as defaults)."""
    parser.add_argument("--input", required=True, help="glob pattern(s), comma-separated")
    parser.add_argument("--output_prefix", required=True, help="writes PREFIX.model/.vocab")
    parser.add_argument("--vocab_size", type=int, default=30000)
    parser.add_argument("--lower_case", action="store_true", help="lower-case the text first")
    parser.add_argument("--input_format", choices=INPUT_FORMATS, default="text")
    parser.add_argument(
        "--input_sentence_size",
        "--max_sentences",
        type=int,
        default=DEFAULT_INPUT_SENTENCE_SIZE,
        help="train on a seeded uniform sample of this many sentences (0: all), drawn by "
        "reservoir sampling in one pass: memory holds the sample, whatever the corpus size",
    )
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--character_coverage", type=float, default=0.99995)
    parser.add_argument(
        "--allow_smaller_vocab",
        action="store_true",
        help="a corpus too small for --vocab_size gives fewer pieces instead of an error",
    )
    parser.add_argument("--num_threads", type=int, default=16)
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.add_argument(
        "--verbose", action="store_true", help="show SentencePiece's own trainer log (~95 lines)"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace PREFIX.model/.vocab/.summary.json if they exist (refused by default)",
    )


def run(args: argparse.Namespace) -> int:
    """Runs the command; returns the exit status (2 with a one-line reason on bad input, an
    existing output without `--overwrite`, or a failed write such as a full disk)."""
    try:
        for path in output_files(args.output_prefix):
            check_new_file(path, overwrite=args.overwrite)
        summary = train_vocab(
            args.input,
            args.output_prefix,
            vocab_size=args.vocab_size,
            lower_case=args.lower_case,
            input_format=args.input_format,
            input_sentence_size=args.input_sentence_size,
            seed=args.seed,
            character_coverage=args.character_coverage,
            hard_vocab_limit=not args.allow_smaller_vocab,
            num_threads=args.num_threads,
            verbose=not args.quiet,
            trainer_log=args.verbose,
        )
    except (FileNotFoundError, ValueError) as error:
        print(f"train_vocab: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # writing the outputs: full disk, read-only folder
        print(f"train_vocab: error: {os_error_line(error, args.output_prefix)}", file=sys.stderr)
        return 2
    read = summary["read"]
    print(
        f"wrote {summary['model']} and {summary['vocab']}: {summary['vocab_size']} pieces from "
        f"{summary['sentences_trained_on']:,} of {summary['sentences_read']:,} sentences "
        f"({read['files_read']} files, {read['bytes_read'] / 1e6:.1f} MB) "
        f"in {summary['seconds']:.1f} s; skipped: {read['skipped'] or 'none'}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.train_vocab",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
