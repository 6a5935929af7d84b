"""The demo's outputs for a reader: `loss_curves.png`, the closing printout, `summary.json`."""

import json
import pathlib

from albert_keras_contracts import atomic_write

SCORES = (("mlm_accuracy", "masked-LM accuracy"), ("sentence_accuracy", "sentence-order accuracy"))


def plot_curves(summary: dict, path: str) -> None:
    """Three panels: pretraining losses, held-out accuracies before / after pretraining with the
    training accuracies along the way, and fine-tuning's dev metric with and without pretraining.

    Args:
        summary: dict. The demo's summary (`pretrain` with `history`, `before`, `after`;
            `finetune` with `metric` and, per start, `history`).
        path: str. The PNG to write (through a temporary name).
    """
    import matplotlib

    matplotlib.use("Agg")  # no display
    import matplotlib.pyplot as plt

    pretrain, finetune = summary["pretrain"], summary["finetune"]
    steps = [entry["step"] for entry in pretrain["history"]]
    figure, axes = plt.subplots(1, 3, figsize=(16, 4))
    for name, label in (("mlm_loss", "masked-LM loss"), ("sentence_loss", "sentence-order loss")):
        axes[0].plot(steps, [e[name] for e in pretrain["history"]], marker=".", label=label)
    axes[0].set(title="Pretraining (train, per period)", xlabel="step", ylabel="loss")
    for name, label in SCORES:
        line = axes[1].plot(
            steps, [e[name] for e in pretrain["history"]], marker=".", label=f"train {label}"
        )
        axes[1].plot(
            [0, pretrain["steps"]],
            [pretrain["before"][name], pretrain["after"][name]],
            "x--",
            color=line[0].get_color(),
            label=f"held-out {label}",
        )
    axes[1].axhline(0.5, color="grey", linestyle=":", linewidth=1)
    axes[1].set(title="Pretraining accuracy", xlabel="step", ylabel="accuracy")
    metric = finetune["metric"]
    for start, style in (("pretrained", "o-"), ("untrained", "s--")):
        history = finetune[start]["history"]
        axes[2].plot(
            [h["step"] for h in history],
            [h[metric] for h in history],
            style,
            label=f"{start}: last {finetune[start]['last'][metric]:.3f}",
        )
    axes[2].set(title=f"Fine-tuning on {finetune['task']}", xlabel="step", ylabel=f"dev {metric}")
    for axis in axes:
        axis.legend(fontsize=8)
    figure.tight_layout()
    with atomic_write.atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=100)
    plt.close(figure)


def print_summary(summary: dict) -> None:
    """The before / after numbers a reader looks for, then where the files are."""
    pretrain, finetune = summary["pretrain"], summary["finetune"]
    print(f"\nPretraining ({pretrain['steps']} steps), held-out:")
    for name, label in SCORES:
        before, after = pretrain["before"][name], pretrain["after"][name]
        print(f"  {label:<24} {before:.3f} untrained -> {after:.3f} pretrained")
    metric = finetune["metric"]
    last_step = finetune["pretrained"]["last"]["step"]
    print(f"Fine-tuning on {finetune['task']}, dev {metric} at the last step ({last_step}; "
          "no checkpoint chosen on dev):")  # fmt: skip
    for start in ("pretrained", "untrained"):
        print(f"  from the {start} model: {finetune[start]['last'][metric]:.3f}")
    print(f"  pretraining adds {finetune['gain']:+.3f}")
    out = pathlib.Path(summary["output_dir"])
    print(f"\nDone in {summary['seconds']['total']:.0f} s. Everything is in {out}:")
    for name in ("summary.json", "loss_curves.png", "pretrain/model.keras", "finetune/pretrained"):
        print(f"  {out / name}")


def write_summary(path: pathlib.Path, summary: dict) -> None:
    """`summary.json`, written through a temporary name."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(summary, indent=2, default=str))
    temporary.replace(path)
