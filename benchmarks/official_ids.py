"""Lines whose ids differ from the official ALBERT code's, for each tokenizer (issue 42).

    .venv/bin/python benchmarks/official_ids.py [--data ../shared/data] [--lines 20000]

The corpus is public text the text path was never tuned on, from `--data` (../shared/data):
lines of the six Gutenberg books, GLUE's sentences (CoLA, SST-2, MRPC, RTE, STS-B) and SQuAD
2.0 dev contexts and questions, up to `--lines` distinct lines of each of the three (spread
evenly over each), with the reconstructed release vocabulary `vocab/30k-clean.reconstructed.model`.

The reference is google-research/albert's `tokenization.py` as `create_pretraining_data.py`
and `classifier_utils.py` run it under Python 3, restated below from reading it:
`preprocess_text(line, lower=True)`, SentencePiece's `EncodeAsPieces` (Python SentencePiece),
`encode_pieces`' digit-comma split (whose "▁" check never fires under Python 3), `PieceToId`.

Rows: the data writer (`pipelines.tokenization.SentencePieceEncoder`), the `AlbertTokenizer`
layer (GLUE, predict, exports), this project's text path before issue 42 (`''`/``` `` ``` -> `"`,
no split; as the writer and layer were), Hugging Face's `AlbertTokenizer` and keras-hub's
`AlbertTokenizer` where installed (transformers 5's is built from the model's pieces,
scores and normalizer map). For the layer, each differing line is classed: an exact tie
(the same pieces in another order, or another segmentation of equal score) or other. Prints a
Markdown table (docs/text_path.md holds its last run). A few minutes on one core.
"""

import argparse
import csv
import glob
import json
import os
import pathlib
import sys
import time
import unicodedata

import numpy as np
import sentencepiece

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
VOCABULARY = "vocab/30k-clean.reconstructed.model"


def official_pieces(processor, line: str) -> list[str]:
    """google-research/albert `FullTokenizer.tokenize(preprocess_text(line, lower=True))`,
    Python 3 (restated: the "▁" of a re-encoded piece is never removed there)."""
    text = " ".join(line.strip().split())
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    pieces = []
    for piece in processor.encode_as_pieces(text):
        if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
            pieces += processor.encode_as_pieces(piece[:-1].replace("\u2581", "")) + [","]
        else:
            pieces.append(piece)
    return pieces


def text_path_1(processor, lines: list[str]) -> list[list[int]]:
    """This project's ids before issue 42: XLNet's quote rule, no digit-comma split."""
    texts = []
    for line in lines:
        text = " ".join(line.split()).replace("``", '"').replace("''", '"')
        text = unicodedata.normalize("NFKD", text)
        texts.append("".join(c for c in text if not unicodedata.combining(c)).lower())
    return processor.encode(texts)


def read_corpus(data: pathlib.Path, lines_per_source: int) -> dict[str, list[str]]:
    """Distinct non-empty lines of the books, GLUE's sentences and SQuAD's texts, each source
    thinned evenly to `lines_per_source`."""
    books = []
    for path in sorted(glob.glob(str(data / "corpus" / "gutenberg" / "[0-9]*.txt"))):
        books += pathlib.Path(path).read_text(encoding="utf-8-sig").splitlines()
    glue = []
    for path in sorted(glob.glob(str(data / "glue" / "*" / "*.tsv"))):
        with open(path, encoding="utf-8", newline="") as file:
            for row in csv.reader(file, delimiter="\t", quoting=csv.QUOTE_NONE):
                glue += [field for field in row[1:] + row[:1] if " " in field.strip()]
    squad = []
    for path in sorted(glob.glob(str(data / "squad" / "*.json"))):
        for article in json.loads(pathlib.Path(path).read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                squad.append(paragraph["context"])
                squad += [qa["question"] for qa in paragraph["qas"]]
    corpus = {}
    for name, lines in (("books", books), ("GLUE", glue), ("SQuAD", squad)):
        lines = list(dict.fromkeys(line for line in lines if line.strip()))
        step = max(1, len(lines) // lines_per_source)
        corpus[name] = lines[::step][:lines_per_source]
    return corpus


def is_tie(processor, ours: list[int], theirs: list[int]) -> bool:
    """Two segmentations of the same text with equal SentencePiece scores (float32 sums)."""
    if processor.decode(ours) != processor.decode(theirs):
        return False
    score = [np.float32(sum(np.float32(processor.get_score(i)) for i in ids)) for ids in (ours, theirs)]  # fmt: skip
    return abs(float(score[0]) - float(score[1])) <= 1e-4 * max(1.0, abs(float(score[1])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA), help="../shared/data's layout")
    parser.add_argument("--lines", type=int, default=20_000, help="lines of each source")
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    model = str(data / VOCABULARY)
    corpus = read_corpus(data, args.lines)
    lines = [line for part in corpus.values() for line in part]
    sizes = ", ".join(f"{len(part):,} {name}" for name, part in corpus.items())
    print(f"{len(lines):,} lines ({sizes}); vocabulary {VOCABULARY}", file=sys.stderr)
    processor = sentencepiece.SentencePieceProcessor(model_file=model)
    expected = [[processor.piece_to_id(p) for p in official_pieces(processor, line)] for line in lines]  # fmt: skip
    rows = {}

    def measure(name, encode):
        started = time.perf_counter()
        try:
            got = encode()
        except (ValueError, TypeError, AttributeError, RuntimeError, OSError) as error:
            print(f"{name}: {type(error).__name__}: {error}", file=sys.stderr)
            return None
        differing = [i for i, (a, b) in enumerate(zip(got, expected)) if list(a) != b]
        rows[name] = (len(differing), time.perf_counter() - started)
        print(f"{name}: {len(differing)} lines differ", file=sys.stderr)
        return got, differing

    from pipelines.tokenization import SentencePieceEncoder

    def writer():
        ids, lengths = SentencePieceEncoder(model).encode(lines)
        return [part.tolist() for part in np.split(ids, np.cumsum(lengths)[:-1])]

    measure("albert-keras data writer (`pipelines/tokenization.py`)", writer)
    from albert_keras.preprocessing import AlbertTokenizer

    tokenizer = AlbertTokenizer(model)
    layer = measure(
        "albert-keras `AlbertTokenizer` layer (GLUE, predict, export)",
        lambda: [ids for start in range(0, len(lines), 2048)
                 for ids in tokenizer(lines[start : start + 2048]).to_list()],
    )  # fmt: skip
    measure("albert-keras before issue 42 (text path 1: writer and layer)",
            lambda: text_path_1(processor, lines))  # fmt: skip
    try:
        import transformers

        from pipelines.sentencepiece_proto import sentencepiece_model_pb2

        # transformers 5 builds its AlbertTokenizer from the pieces, scores and normalizer map
        # (`vocab_file=` gives <unk> for every piece of this model).
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(pathlib.Path(model).read_bytes())
        hf = transformers.AlbertTokenizer(
            vocab=[(piece.piece, piece.score) for piece in proto.pieces],
            _spm_precompiled_charsmap=proto.normalizer_spec.precompiled_charsmap,
        )
        measure(
            f"Hugging Face transformers {transformers.__version__} `AlbertTokenizer`",
            lambda: [hf.encode(line, add_special_tokens=False) for line in lines],
        )
    except ImportError:
        print("transformers is not installed: no row", file=sys.stderr)
    try:
        import keras_hub

        kh = keras_hub.tokenizers.AlbertTokenizer(proto=model)
        measure(
            f"keras-hub {keras_hub.__version__} `AlbertTokenizer` (no normalization)",
            lambda: [list(np.asarray(ids)) for start in range(0, len(lines), 2048)
                     for ids in kh(lines[start : start + 2048])],
        )  # fmt: skip
    except ImportError:
        print("keras-hub is not installed: no row", file=sys.stderr)

    print(f"\n{len(lines):,} lines ({sizes}), vocabulary `{VOCABULARY}`\n")
    print("| tokenizer | lines whose ids differ from the official code's |")
    print("|---|---|")
    for name, (count, _) in rows.items():
        print(f"| {name} | {count:,} ({100 * count / len(lines):.3f}%) |")
    if layer is not None:
        got, differing = layer
        ties = [i for i in differing if is_tie(processor, got[i], expected[i])]
        print(f"\nThe layer's {len(differing)} differing lines: {len(ties)} exact SentencePiece ties "
              f"(same text, equal score), {len(differing) - len(ties)} other.")  # fmt: skip
        for i in differing[:8]:
            pieces = [processor.id_to_piece(x) for x in got[i]]
            official = [processor.id_to_piece(x) for x in expected[i]]
            at = next(k for k, (a, b) in enumerate(zip(pieces, official)) if a != b)
            print(f"- layer {' '.join(pieces[max(at - 2, 0) : at + 3])!r}; "
                  f"official {' '.join(official[max(at - 2, 0) : at + 3])!r}")  # fmt: skip


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    main()
