"""Time to accuracy: ours, keras-hub and Hugging Face pretrained to one held-out MLM accuracy.

    .venv/bin/python benchmarks/time_to_accuracy.py               # the books, L4 H128, 0.12
    .venv/bin/python benchmarks/time_to_accuracy.py --workdir /tmp/tta   # records kept, reused
    .venv/bin/python benchmarks/time_to_accuracy.py --tiny        # a smoke run (seconds)

One random initialisation of our `AlbertPretrainer` (float32, seeded) is converted into the
other two with the project's converters: Hugging Face's `AlbertForPreTraining` through
`official_from_model` + `write_hf_folder` (albert_keras/convert/hf_checkpoint.py), keras-hub's
`AlbertMaskedLM` through `backbone_to_keras_hub` (albert_keras/convert/keras_hub.py) plus the
MLM head's five weights copied by name. Every peer then trains on the same batches (our reader,
seeded, read once and shared) at the defaults a user of it gets:

- ours: `albert-keras pretrain`'s (albert_keras/jobs/pretrain_job.py): `Lamb` at the CLI's
  peak 0.00176 with `WarmupLinearDecay` (2.5% of `--max_steps` warmup, as the official run),
  `--mixed_precision auto` (mixed_bfloat16 on a CPU with AVX512_BF16 or AMX), jit_compile
  auto (off on a CPU), MLM + SOP; `--precision float32` adds ours forced to float32;
- Hugging Face: `AlbertForPreTraining` (MLM + SOP, its default attention) with the recipe
  of `transformers.Trainer`, which the official `examples/pytorch/language-modeling/run_mlm.py`
  trains with: `TrainingArguments` defaults of transformers 5 (training_args.py): AdamW
  (`adamw_torch_fused`) at 5e-5, betas (0.9, 0.999), epsilon 1e-8, weight decay 0, a linear
  decay to 0 at `--max_steps` without warmup, gradients clipped to norm 1, float32;
- keras-hub: `AlbertMaskedLM` (MLM only) compiled as its docstring shows and its `compile()`
  defaults to (keras_hub/src/models/masked_lm.py): `keras.optimizers.Adam(5e-5)`, sparse
  categorical cross-entropy from logits, float32.

Every `--eval_every` steps each peer is scored on the same held-out batches (weighted MLM
accuracy at the masked positions); a peer stops at the first score >= `--target`. Peers train
in rounds of `--eval_every` steps, in a rotated order, so load hits all of them alike. Only
training counts (wall and process CPU seconds), tracing of the Keras peers' train functions
included, as in a user's run; reading, converting and scoring do not. The table gives steps,
seconds and ratios to the target (a peer that misses it within `--max_steps` shows ">= its
seconds, not reached"); `ours float32` against the float32 peers is the matched comparison.
The last line compares the defaults.

`--sweep 5e-5,2e-4,1e-3,5e-3` first tunes every peer as a researcher would: one race per rate,
all peers at that rate (ours with its warmup of 2.5% of `--max_steps`, HF's Trainer without
warmup, keras-hub's constant Adam, as each recipe has it), each peer's best rate the one that
reaches the target soonest. A peer's run at a later rate stops once it has trained longer than
its best so far (it cannot win). Then it prints `time to accuracy, each at its best rate: ...`
(at once, and again at the end, above the defaults' line) and the defaults' race and line as
without it.
"""

import argparse
import itertools
import pathlib
import shlex
import sys
import tempfile
import time

import numpy as np
from _records import default_source, small_records
from _time_to_accuracy_peers import build_peers
from _timing import print_table

HF_LEARNING_RATE = 5e-5  # transformers.TrainingArguments.learning_rate
KERAS_HUB_LEARNING_RATE = 5e-5  # keras-hub MaskedLM.compile(optimizer="auto")
OURS_LEARNING_RATE = 0.00176  # albert-keras pretrain --learning_rate
LABELS = {"ours": "ours", "keras-hub": "keras-hub", "hf": "Hugging Face"}


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--records", help="glob of training records (default: small records written here)")
    add("--heldout", help="glob of held-out records (with --records)")
    add("--vocabulary_size", type=int, help="the records' vocabulary size (with --records)")
    add("--source", choices=("books", "docstrings"), help="default: books when ../shared has them")
    add("--megabytes", type=float, help="text read per book / docstring source (default: all)")
    add("--workdir", help="where records and the HF folder go (reused; default: a temp dir)")
    add("--target", type=float, help="held-out MLM accuracy to reach (default 0.12)")
    add("--max_steps", type=int, default=4000, help="give up here; the schedules' horizon")
    add("--eval_every", type=int, default=100)
    add("--heldout_batches", type=int, default=32)
    add("--precision", default="defaults,float32", help="defaults (each as it comes), float32")
    add("--peers", default="ours,keras-hub,hf")
    add("--ours_learning_rate", type=float, default=OURS_LEARNING_RATE)
    add(
        "--ours_jit_compile",
        choices=("auto", "true", "false"),
        default="auto",
        help="ours' XLA, as `pretrain --jit_compile` (auto: off on a CPU, on elsewhere)",
    )
    add("--hf_learning_rate", type=float, default=HF_LEARNING_RATE)
    add("--keras_hub_learning_rate", type=float, default=KERAS_HUB_LEARNING_RATE)
    add("--batch_size", type=int, default=32)
    add("--seq_length", type=int, default=64)
    add("--max_predictions", type=int, default=10)
    add("--num_layers", type=int, default=4)
    add("--num_heads", type=int, default=2)
    add("--embedding_dim", type=int, default=128)
    add("--hidden_dim", type=int, default=128)
    add("--intermediate_dim", type=int, default=512)
    add("--seed", type=int, default=0)
    add("--tiny", action="store_true", help="a smoke run: tiny model and text, target 0.02")
    add(
        "--sweep",
        help="comma-separated learning rates tried for every peer first, e.g. "
        "5e-5,2e-4,1e-3,5e-3 (default: none, the defaults' race alone)",
    )
    args = parser.parse_args(argv)
    if args.tiny:
        args.source, args.megabytes = args.source or "docstrings", args.megabytes or 0.02
        args.num_layers, args.hidden_dim, args.embedding_dim = 1, 32, 16
        args.intermediate_dim, args.batch_size, args.seq_length = 64, 8, 32
        args.max_predictions, args.heldout_batches, args.eval_every = 5, 2, 5
        args.max_steps = min(args.max_steps, 20)
        args.target = 0.02 if args.target is None else args.target
        args.ours_learning_rate = args.hf_learning_rate = args.keras_hub_learning_rate = 1e-2
    args.target = 0.12 if args.target is None else args.target
    if (args.records is None) != (args.heldout is None) or (
        args.records is not None and args.vocabulary_size is None
    ):
        parser.error("--records, --heldout and --vocabulary_size go together")
    try:
        args.sweep = [float(rate) for rate in args.sweep.split(",")] if args.sweep else []
    except ValueError:
        parser.error(f"--sweep {args.sweep!r}: expected comma-separated learning rates")
    if any(not 0 < rate < 1 for rate in args.sweep):
        parser.error(f"--sweep: learning rates in (0, 1), got {args.sweep}")
    unknown = set(args.precision.split(",")) - {"defaults", "float32"}
    if unknown or not set(args.peers.split(",")) <= set(LABELS):
        parser.error(f"--precision: defaults,float32; --peers: a subset of {','.join(LABELS)}")
    return args


def accuracy(peer, heldout: list) -> float:
    """Weighted MLM accuracy at the masked positions over the held-out batches."""
    hits = total = 0.0
    for batch in heldout:
        predicted = peer.logits(batch).argmax(-1)
        weights = batch["masked_lm_weights"]
        hits += float(((predicted == batch["masked_lm_ids"]) * weights).sum())
        total += float(weights.sum())
    return hits / total


def race(args, peers: dict, stream, heldout: list, budgets: dict | None = None) -> dict:
    """Rounds of `--eval_every` steps per unfinished peer (rotated order) until each reaches
    the target or `--max_steps` (or trains past its `budgets` seconds); returns per peer steps,
    wall, cpu, accuracy, reached."""
    budgets = budgets or {}
    state = {name: {"steps": 0, "wall": 0.0, "cpu": 0.0, "reached": False} for name in peers}
    same_init(peers, heldout[0])
    for name, peer in peers.items():
        state[name]["accuracy"] = accuracy(peer, heldout)
    print("step 0 held-out MLM: " + ", ".join(f"{n} {s['accuracy']:.4f}" for n, s in state.items()))
    cached, round_index = [], 0
    while True:
        active = [
            n
            for n in peers
            if not state[n]["reached"]
            and state[n]["steps"] < args.max_steps
            and state[n]["wall"] < budgets.get(n, float("inf"))
        ]
        if not active:
            return state
        start = state[active[0]]["steps"]
        count = min(args.eval_every, args.max_steps - start)
        cached.extend(itertools.islice(stream, start + count - len(cached)))  # read untimed
        batches = cached[start : start + count]
        shift = round_index % len(active)
        for name in active[shift:] + active[:shift]:
            wall, cpu = time.perf_counter(), time.process_time()
            peers[name].train(batches)
            s = state[name]
            s["wall"] += time.perf_counter() - wall
            s["cpu"] += time.process_time() - cpu
            s["steps"] += count
            s.setdefault("first", s["wall"])
            s["accuracy"] = accuracy(peers[name], heldout)
            s["reached"] = s["accuracy"] >= args.target
        round_index += 1
        print(
            f"  step {start + count}: "
            + ", ".join(
                f"{n} {state[n]['accuracy']:.4f} ({state[n]['wall']:.0f} s)" for n in active
            ),
            flush=True,
        )


def same_init(peers: dict, batch: dict) -> None:
    """Prints how far each peer's initial MLM logits are from the first float32 peer's."""
    names = [n for n in peers if n.endswith("float32")] or list(peers)
    reference = peers[names[0]].logits(batch)
    scale = float(np.abs(reference).max())
    print(
        f"same init: largest |logit - {names[0]}'s| on a held-out batch (largest logit "
        f"{scale:.3f}): "
        + ", ".join(
            f"{n} {float(np.abs(p.logits(batch) - reference).max()):.1e}"
            for n, p in peers.items()
            if n != names[0]
        )
    )


def seconds(s: dict, field: str) -> str:
    return f"{s[field]:.0f}" if s["reached"] else f">= {s[field]:.0f}"


def ratio(s: dict, reference: dict | None, field: str, digits: int = 2) -> str | None:
    """`s`'s time over `reference`'s; a bound when one missed the target, None when both did
    (or there is no reference)."""
    if reference is None:
        return None
    bound = {(True, True): "", (False, True): ">= ", (True, False): "<= "}
    prefix = bound.get((s["reached"], reference["reached"]))
    return None if prefix is None else f"{prefix}{s[field] / reference[field]:.{digits}f}"


def report(args, state: dict, default_policy: str) -> None:
    ours_name = f"ours {default_policy}"
    reference = state.get(ours_name)
    rows = [
        [
            name,
            str(s["steps"]) if s["reached"] else f"not reached in {s['steps']}",
            seconds(s, "wall"),
            seconds(s, "cpu"),
            ratio(s, reference, "wall") or "?",
            ratio(s, reference, "cpu") or "?",
            f"{s['first']:.0f}",
            f"{s['wall'] / max(s['steps'], 1) * 1e3:.0f}",
            f"{s['accuracy']:.4f}",
        ]
        for name, s in state.items()
    ]
    print(f"\ntime to held-out MLM accuracy {args.target} (training only; x = its time / ours')")
    header = ["peer", "steps", "wall s", "cpu s", "x ours", "cpu x ours", "first round s"]
    print_table([*header, "ms/step", "accuracy"], rows)
    print(
        "first round s: the wall seconds of the first round, which include tracing the Keras "
        "peers' train functions"
    )
    if "ours float32" in state and ours_name != "ours float32":
        print("matched float32: compare 'ours float32' with keras-hub and Hugging Face (float32)")
    parts = []
    for key, name in (
        ("ours", ours_name),
        ("keras-hub", "keras-hub float32"),
        ("hf", "hf float32"),
    ):
        if name not in state:
            continue
        s = state[name]
        notes = [] if key == "ours" else [ratio(s, reference, "wall", digits=1)]
        notes = [f"{n}x" for n in notes if n] + ([] if s["reached"] else ["not reached"])
        parts.append(
            f"{LABELS[key]} {seconds(s, 'wall')} s" + (f" ({', '.join(notes)})" if notes else "")
        )
    print("time to accuracy: " + ", ".join(parts))


def with_rate(args, rate: float) -> argparse.Namespace:
    """`args` with every peer's learning rate set to `rate`."""
    rates = ("ours_learning_rate", "hf_learning_rate", "keras_hub_learning_rate")
    return argparse.Namespace(**{**vars(args), **dict.fromkeys(rates, rate)})


def sweep(args, build, read, heldout: list) -> tuple[dict, dict]:
    """One race per `--sweep` rate; returns each peer's best (its state and rate) and the
    names of the peers raced (`tuned_names`)."""
    best, names = {}, {}
    for rate in args.sweep:
        print(f"\nsweep: every peer at learning rate {rate:g}", flush=True)
        peers, default_policy = build(with_rate(args, rate))
        names = tuned_names(default_policy, peers)
        budgets = {name: b["state"]["wall"] for name, b in best.items()}
        state = race(args, peers, read(True), heldout, budgets)
        for name, s in state.items():
            if s["reached"] and (name not in best or s["wall"] < best[name]["state"]["wall"]):
                best[name] = {"state": s, "rate": rate}
        print(
            "  best so far: "
            + ", ".join(f"{n} {b['rate']:g} ({b['state']['wall']:.0f} s)" for n, b in best.items())
        )
    return best, names


def tuned_names(default_policy: str, peers) -> dict:
    """Each peer's key (`ours`, `keras-hub`, `hf`) to its name in a race of `peers`: ours at
    its default precision, the peers in float32 (their defaults)."""
    names = {"ours": f"ours {default_policy}", "keras-hub": "keras-hub float32", "hf": "hf float32"}
    return {key: name for key, name in names.items() if name in peers}


def report_sweep(args, best: dict, names: dict) -> None:
    """The tuned line: each peer at the rate that reached the target soonest."""
    rows, parts = [], []
    reference = best.get(names["ours"], {}).get("state")
    for key, name in names.items():
        if name not in best:
            rows.append([name, "-", f"not reached at any of {args.sweep}", "", ""])
            parts.append(f"{LABELS[key]} not reached at any swept rate")
            continue
        s, rate = best[name]["state"], best[name]["rate"]
        rows.append([name, f"{rate:g}", str(s["steps"]), f"{s['wall']:.0f}", f"{s['cpu']:.0f}"])
        note = (
            "" if key == "ours" or reference is None else f" ({s['wall'] / reference['wall']:.1f}x)"
        )
        parts.append(f"{LABELS[key]} {s['wall']:.0f} s{note}")
    print(
        f"\nsweep over learning rates {', '.join(f'{r:g}' for r in args.sweep)}: each peer's best"
    )
    print_table(["peer", "best rate", "steps", "wall s", "cpu s"], rows)
    print("time to accuracy, each at its best rate: " + ", ".join(parts))


def main(argv=None) -> int:
    args = parse_arguments(argv)
    print("$ python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])]))
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="time_to_accuracy_"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.records:
        train, heldout_pattern, vocabulary_size = args.records, args.heldout, args.vocabulary_size
    else:
        source = args.source or default_source()
        train, heldout_pattern, vocabulary_size = small_records(
            workdir / f"records_{source}",
            source,
            seq_length=args.seq_length,
            max_predictions=args.max_predictions,
            seed=args.seed,
            megabytes=args.megabytes,
        )
        print(f"records: {source}, under {workdir} (vocabulary {vocabulary_size} pieces)")
    import pipelines

    def read(pattern, training):
        return pipelines.read_pretraining_records(
            pattern,
            args.batch_size,
            max_seq_length=args.seq_length,
            max_predictions_per_seq=args.max_predictions,
            shuffle=training,
            repeat=training,
            seed=args.seed,
        ).as_numpy_iterator()

    heldout = list(itertools.islice(read(heldout_pattern, False), args.heldout_batches))
    if args.sweep:
        best, names = sweep(
            args,
            lambda swept: build_peers(swept, vocabulary_size, workdir),
            lambda training: read(train, training),
            heldout,
        )
        report_sweep(args, best, names)  # now, and again above the defaults' line at the end
    peers, default_policy = build_peers(args, vocabulary_size, workdir)
    print(
        f"model L{args.num_layers} H{args.hidden_dim} A{args.num_heads} E{args.embedding_dim} "
        f"I{args.intermediate_dim} V{vocabulary_size}, batch {args.batch_size} x "
        f"{args.seq_length}; held-out {len(heldout)} batches; learning rates: ours "
        f"{args.ours_learning_rate:g} (LAMB), keras-hub {args.keras_hub_learning_rate:g} "
        f"(Adam), HF {args.hf_learning_rate:g} (AdamW)"
    )
    state = race(args, peers, read(train, True), heldout)
    if args.sweep:
        report_sweep(args, best, names)
    report(args, state, default_policy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
