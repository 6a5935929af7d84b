"""Serving latency: our exported SavedModel against keras-hub's, both over raw strings.

    .venv/bin/python benchmarks/serving_latency.py              # L6 H256 E128 I1024, seq 128
    .venv/bin/python benchmarks/serving_latency.py --tiny       # a smoke run (seconds)

One random `AlbertClassifier` (float32, seeded, 2 classes) is exported three times:

- ours with `albert-keras export --model MODEL.keras --output_dir OUT --spm_model ...
  --max_seq_length ...` (run in this process through the CLI's `main`): the
  `serving_default(text)` signature of albert_keras/serving/export_saved_model.py (our
  `AlbertPreprocessor` in the graph, the softmax of the logits out; the model runs at the
  texts' lengths, albert_keras/serving/length_groups.py);
- ours-padded: the same classifier and preprocessor as `albert-keras export` wrote them before
  issue #34 (every text run at the full `--seq_length`), exported as keras-hub's below: the
  "before" of the speed-up;
- keras-hub's: the same weights converted (`backbone_to_keras_hub`, the classifier's Dense
  copied) into `keras_hub.models.AlbertTextClassifier` with its
  `AlbertTextClassifierPreprocessor` (its `AlbertTokenizer` on the same SentencePiece model),
  exported the way Keras documents an inference artifact over a function of the tracked
  layers (`keras.export.ExportArchive`'s docstring: `track(model)`, `add_endpoint(name, fn,
  input_signature)`, `write_out(path)`; `keras.Model.export` writes the same kind of
  artifact, but over the model's token tensors, with no preprocessor): an endpoint
  `serve(text)` returning the same softmax.

The folders are loaded with `tf.saved_model.load` in this process (`import tensorflow_text`
first: the graphs hold its SentencePiece ops) and called through their signatures with a 1-D
string tensor, as TF Serving calls them. Each is then warmed up the same way: the
`serving_default` requests of our export's warm-up file
(`assets.extra/tf_serving_warmup_requests`, albert_keras/serving/warmup_requests.py: one request
per (rows, width) shape our length groups can run, what TF Serving replays at load) go through
every SavedModel's signature, so the kernels each first meets at a shape are built before the
timing, as in a server that loaded the model with warm-up. The load and the warm-up are timed
apart: the table's "load s", "first request ms" (one text right after the load, before the
warm-up) and "warm-up s" columns are the cold start a server pays once (`--serving_warmup off`:
no warm-up, the first timed requests pay it). Then all must give equal probabilities (within
1e-5) on every text used (else the script stops); then, in rounds that alternate them in a
rotated order, `--requests` single-text calls each per round (latency: p50 and p99 over all of
them, 200 by default) and `--batches` calls of `--batch_size` texts (throughput: median of the
rounds, and the paired ratio). The texts are paragraphs of the held-out book (../shared/data),
else docstrings. The last line gives issue #34's goals: ours >= 1.3x keras-hub at batch 1 (p50)
and at batch 64, and a p99 no worse than keras-hub's.
"""

import argparse
import inspect
import os
import pathlib
import shlex
import statistics
import sys
import tempfile
import time

import numpy as np
from _timing import add_model_arguments, backbone_config, print_table, set_environment

BOOK = pathlib.Path(__file__).resolve().parents[2] / "shared/data/corpus/gutenberg/1661.txt"
RELEASE_VOCABULARY = BOOK.parents[2] / "vocab" / "30k-clean.reconstructed.model"
NUM_CLASSES = 2
TOLERANCE = 1e-5  # the largest difference of probabilities the peers may show


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_arguments(parser, batch_size=64)
    parser.set_defaults(rounds=10)
    parser.add_argument(
        "--requests",
        type=int,
        default=20,
        help="batch-1 calls per round (20 x 10 rounds: the p99 is over 200 requests per peer)",
    )
    parser.add_argument("--batches", type=int, default=3, help="batch calls per round")
    parser.add_argument("--spm_model", help="default: ALBERT's release vocabulary in ../shared")
    parser.add_argument(
        "--workdir",
        help="where classifier.keras, the two SavedModels and a fallback spm go (overwritten; "
        "default: a new temporary folder)",
    )
    parser.add_argument(
        "--serving_warmup",
        choices=("on", "off"),
        default="on",
        help="replay our export's warm-up requests on every SavedModel before timing",
    )
    parser.add_argument("--tiny", action="store_true", help="a smoke run: tiny model, 2 rounds")
    args = parser.parse_args(argv)
    if args.tiny:
        args.num_layers, args.hidden_dim, args.num_heads = 1, 32, 2
        args.embedding_dim, args.intermediate_dim, args.seq_length = 16, 64, 32
        args.batch_size, args.rounds, args.requests, args.batches = 8, 2, 5, 2
    return args


def texts_and_vocabulary(args, workdir: pathlib.Path) -> tuple[list[str], str]:
    """Lower-case plain texts (so both tokenizers see the same string) and a SentencePiece
    model: the held-out book and the release vocabulary when ../shared has them."""
    if BOOK.exists():
        paragraphs = BOOK.read_text(encoding="utf-8").split("\n\n")
    else:
        import argparse as module  # any documented stdlib module gives plain English text

        paragraphs = [inspect.getdoc(member) or "" for _, member in inspect.getmembers(module)]
    texts = [" ".join(p.lower().split()) for p in paragraphs]
    texts = [t for t in texts if t.isascii() and 80 <= len(t) <= 600 and "`" not in t]
    spm_model = args.spm_model or (str(RELEASE_VOCABULARY) if RELEASE_VOCABULARY.exists() else None)
    if spm_model is None:
        import sentencepiece

        prefix = workdir / "spm"
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(texts),
            model_prefix=str(prefix),
            vocab_size=1000,
            hard_vocab_limit=False,
            pad_id=0,
            unk_id=1,
            bos_id=-1,
            eos_id=-1,
            control_symbols=["[CLS]", "[SEP]", "[MASK]"],
            minloglevel=2,
        )
        spm_model = str(prefix) + ".model"
    return texts, spm_model


def export_ours(args, classifier, spm_model: str, workdir: pathlib.Path) -> str:
    """`albert-keras export` of the saved classifier; returns the SavedModel folder."""
    from albert_keras_cli.main import main as albert_keras

    classifier.save(workdir / "classifier.keras")
    folder = str(workdir / "ours_saved_model")
    command = ["export", "--model", str(workdir / "classifier.keras"), "--output_dir", folder,
               "--spm_model", spm_model, "--max_seq_length", str(args.seq_length),
               "--overwrite"]  # fmt: skip
    if albert_keras(command) != 0:
        raise SystemExit("albert-keras " + " ".join(command) + " failed")
    return folder


def export_padded(classifier, preprocessor, folder: str) -> str:
    """`softmax(classifier(preprocessor(text)))` at the preprocessor's full length, written by
    `keras.export.ExportArchive` with one endpoint over strings, `serve(text)`: keras-hub's
    export as its docs show, and ours as `albert-keras export` wrote it before issue #34."""
    import keras
    import tensorflow as tf

    def serve(text):
        logits = classifier(preprocessor(text), training=False)
        return {"probabilities": tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)}

    # Built by a first call, traced: our preprocessor called eagerly keeps a tf.function per
    # number of segments, which a SavedModel cannot hold.
    tf.function(serve)(tf.constant(["built by a first call"]))
    archive = keras.export.ExportArchive()
    archive.track(classifier)
    archive.track(preprocessor)
    archive.add_endpoint("serve", serve, input_signature=[tf.TensorSpec([None], tf.string)])
    archive.write_out(folder, verbose=False)
    return folder


def export_keras_hub(args, classifier, spm_model: str, workdir: pathlib.Path) -> str:
    """keras-hub's AlbertTextClassifier with `classifier`'s weights and its preprocessor."""
    import keras
    import keras_hub

    from albert_keras.convert.keras_hub import backbone_to_keras_hub

    preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(
        keras_hub.models.AlbertTokenizer(proto=spm_model), sequence_length=args.seq_length
    )
    kh = keras_hub.models.AlbertTextClassifier(
        backbone_to_keras_hub(classifier.backbone), NUM_CLASSES, preprocessor=preprocessor
    )
    kh.output_dense.kernel.assign(keras.ops.convert_to_numpy(classifier.output_dense.kernel))
    kh.output_dense.bias.assign(keras.ops.convert_to_numpy(classifier.output_dense.bias))
    return export_padded(kh, preprocessor, str(workdir / "keras_hub_saved_model"))


def load_signatures(folders: dict) -> tuple[dict, dict]:
    """{name: a callable from a list of strings to probabilities (NumPy)}, and {name: seconds
    `tf.saved_model.load` took}."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the graphs' SentencePiece ops)

    calls, load_seconds = {}, {}
    for name, (folder, signature) in folders.items():
        start = time.perf_counter()
        served = tf.saved_model.load(folder).signatures[signature]
        load_seconds[name] = time.perf_counter() - start
        calls[name] = lambda texts, served=served: served(text=tf.constant(texts))[
            "probabilities"
        ].numpy()
    return calls, load_seconds


def warm_up_all(calls: dict, saved_model_dir: str) -> tuple[dict, int]:
    """Replays the `serving_default` requests of our export's warm-up file on every peer (the
    same texts, each through its own signature); returns {name: seconds} and the count."""
    from albert_keras.serving.warmup_requests import read_warmup_requests

    requests = [
        [text.decode() for text in inputs["text"]]
        for signature, inputs in read_warmup_requests(saved_model_dir)
        if signature == "serving_default"
    ]
    seconds = {}
    for name, call in calls.items():
        start = time.perf_counter()
        for texts in requests:
            call(texts)
        seconds[name] = time.perf_counter() - start
    return seconds, len(requests)


def check_equal_outputs(calls: dict, texts: list, batch_size: int) -> tuple[float, float]:
    """The largest difference of the peers' probabilities over every text used, and how far
    the first peer's probabilities spread over the texts (what the difference is small
    against); stops when the difference exceeds `TOLERANCE` (the timing would not compare the
    same computation)."""
    outputs = {
        name: np.concatenate(
            [call(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
        )
        for name, call in calls.items()
    }
    first, *others = outputs.values()
    worst = max(float(np.abs(first - other).max()) for other in others)
    if worst > TOLERANCE:
        raise SystemExit(f"the exports disagree: probabilities differ by up to {worst:.2e}")
    return worst, float(np.ptp(first[:, 0]))


def alternate_requests(calls: dict, texts: list, args) -> tuple[dict, dict]:
    """Per peer: every batch-1 request's seconds, and each round's seconds per batch."""
    names, single, batched = list(calls), {n: [] for n in calls}, {n: [] for n in calls}
    batches = [texts[i : i + args.batch_size] for i in range(0, len(texts), args.batch_size)]
    batches = [b for b in batches if len(b) == args.batch_size]
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            for i in range(args.requests):
                text = texts[(r * args.requests + i) % len(texts)]
                start = time.perf_counter()
                calls[name]([text])
                single[name].append(time.perf_counter() - start)
            start = time.perf_counter()
            for i in range(args.batches):
                calls[name](batches[(r * args.batches + i) % len(batches)])
            batched[name].append((time.perf_counter() - start) / args.batches)
        print(
            f"  round {r + 1}/{args.rounds}: "
            + ", ".join(
                f"{n} p50 {np.median(single[n][-args.requests :]) * 1e3:.1f} ms, "
                f"batch {batched[n][-1] * 1e3:.0f} ms"
                for n in names
            ),
            flush=True,
        )
    return single, batched


def round_medians(times: list, per_round: int) -> list:
    return [float(np.median(times[i : i + per_round])) for i in range(0, len(times), per_round)]


def report(single: dict, batched: dict, args, cold: dict) -> None:
    rows, ratios = [], {}
    ours_rounds = round_medians(single["ours"], args.requests)
    ours_p99 = float(np.percentile(single["ours"], 99))
    for name, times in single.items():
        p50, p99 = (float(np.percentile(times, q)) for q in (50, 99))
        # Paired by round: within a round, the peer's time over ours', then the median.
        rounds = round_medians(times, args.requests)
        paired = statistics.median(p / o for p, o in zip(rounds, ours_rounds, strict=True))
        paired_batch = statistics.median(
            p / o for p, o in zip(batched[name], batched["ours"], strict=True)
        )
        ratios[name] = (paired, paired_batch, p99 / ours_p99)
        rows.append(
            [
                name,
                f"{p50 * 1e3:.2f}",
                f"{paired:.2f}",
                f"{p99 * 1e3:.2f}",
                f"{p99 / ours_p99:.2f}",
                f"{args.batch_size / statistics.median(batched[name]):.1f}",
                f"{paired_batch:.2f}",
                f"{cold['load'][name]:.2f}",
                f"{cold['first'][name] * 1e3:.1f}",
                f"{cold['warm-up'][name]:.2f}" if cold["warm-up"] else "off",
            ]
        )
    print()
    print_table(
        [
            "SavedModel",
            "batch-1 p50 ms",
            "p50 x ours",
            "batch-1 p99 ms",
            "p99 x ours",
            f"batch-{args.batch_size} texts/s",
            "throughput x ours",
            "load s",
            "first request ms",
            "warm-up s",
        ],
        rows,
    )
    print(
        f"{len(single['ours'])} batch-1 requests and {args.rounds * args.batches} batches of "
        f"{args.batch_size} per SavedModel; 'x ours' = its time / ours' (p50 and throughput: "
        "median over rounds, paired; p99: of the pooled p99s): above 1, ours is faster; "
        "ours-padded is our export before issue #34 (every text at the full length); load s, "
        "first request ms (one text, right after the load) and warm-up s: the cold start, once "
        "per server ("
        + (
            f"the same {cold['requests']} warm-up requests, one per shape ours can run"
            if cold["warm-up"]
            else "--serving_warmup off: the first timed requests pay it"
        )
        + ")"
    )
    if "keras-hub" in ratios:
        p50_ratio, batch_ratio, p99_ratio = ratios["keras-hub"]
        print(
            f"goal (issue #34): ours >= 1.3x keras-hub at batch 1 (p50) and at batch "
            f"{args.batch_size}: {p50_ratio:.2f}x and {batch_ratio:.2f}x; p99 no worse than "
            f"keras-hub's (>= 1.0x): {p99_ratio:.2f}x"
        )


def main(argv=None) -> int:
    args = parse_arguments(argv)
    print("$ python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])]))
    set_environment(args)
    import keras

    import albert_keras as ak

    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="serving_latency_"))
    workdir.mkdir(parents=True, exist_ok=True)
    texts, spm_model = texts_and_vocabulary(args, workdir)
    from pipelines.tokenization import spm_vocabulary_size

    args.vocabulary_size = spm_vocabulary_size(spm_model)
    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(args.seed)
    classifier = ak.AlbertClassifier(ak.AlbertBackbone(**backbone_config(args)), NUM_CLASSES)
    preprocessor = ak.preprocessing.AlbertPreprocessor(
        ak.preprocessing.AlbertTokenizer(spm_model), args.seq_length
    )
    folders = {
        "ours": (export_ours(args, classifier, spm_model, workdir), "serving_default"),
        "ours-padded": (
            export_padded(classifier, preprocessor, str(workdir / "ours_padded_saved_model")),
            "serve",
        ),
        "keras-hub": (export_keras_hub(args, classifier, spm_model, workdir), "serve"),
    }
    print(
        f"serving: L{args.num_layers} H{args.hidden_dim} A{args.num_heads} E{args.embedding_dim} "
        f"I{args.intermediate_dim} V{args.vocabulary_size}, seq {args.seq_length}, float32, "
        f"{len(texts)} texts ({'held-out book' if BOOK.exists() else 'docstrings'}), "
        f"oneDNN {os.environ.get('TF_ENABLE_ONEDNN_OPTS', 'default')}; SavedModels under {workdir}"
    )
    calls, load_seconds = load_signatures(folders)
    cold = {"load": load_seconds, "first": {}, "warm-up": {}, "requests": 0}
    for name, call in calls.items():  # what the first user meets without warm-up
        start = time.perf_counter()
        call(texts[:1])
        cold["first"][name] = time.perf_counter() - start
    if args.serving_warmup == "on":
        cold["warm-up"], cold["requests"] = warm_up_all(calls, folders["ours"][0])
    worst, spread = check_equal_outputs(calls, texts, args.batch_size)
    print(
        f"equal outputs: probabilities within {worst:.1e} on all {len(texts)} texts (they "
        f"spread over {spread:.1e} from text to text)"
    )
    single, batched = alternate_requests(calls, texts, args)
    report(single, batched, args, cold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
