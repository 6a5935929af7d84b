"""The study's two figures: pretraining curves per cell, the downstream average per cell."""

from __future__ import annotations

from albert_keras_contracts import atomic_write


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display
    import matplotlib.pyplot as plt

    return plt


def plot_pretraining(curves: list, path: str) -> None:
    """MLM loss and training sentence accuracy against the step, one colour per cell, one line
    per seed (each point: the mean over a checkpoint period).

    Args:
        curves: list of (cell name, list of run summaries or None).
        path: str. The .png to write.
    """
    plt = _pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (name, summaries) in enumerate(curves):
        colour = colours[i % len(colours)]
        labelled = False
        for summary in summaries:
            history = (summary or {}).get("pretraining", {}).get("history") or []
            if not history:
                continue
            steps = [h["step"] for h in history]
            label = None if labelled else name
            left.plot(steps, [h["mlm_loss"] for h in history], color=colour, label=label, lw=1)
            if "sentence_accuracy" in history[0]:
                right.plot(steps, [100 * h["sentence_accuracy"] for h in history],
                           color=colour, label=label, lw=1)  # fmt: skip
            labelled = True
    left.set(xlabel="step", ylabel="MLM loss (training, period mean)", title="Masked LM")
    right.set(xlabel="step", ylabel="accuracy % (training, period mean)",
              title="Sentence objective (own task)")  # fmt: skip
    right.axhline(50, color="grey", lw=0.5, ls="--")
    for axis in (left, right):
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=8)
    figure.tight_layout()
    _save(figure, path)
    plt.close(figure)


def plot_downstream(rows: list[dict], path: str) -> None:
    """The downstream average per cell: mean ± std over seeds as a bar, each seed a dot."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(max(4, 1.3 * len(rows) + 1), 3.5))
    for i, row in enumerate(rows):
        stats = row["columns"].get("Avg")
        if not stats or stats["mean"] is None:
            continue
        axis.bar(i, stats["mean"], yerr=stats["std"] or 0, color="C0" if row["pretrained"]
                 else "C7", capsize=4, alpha=0.8)  # fmt: skip
        values = [v for v in stats["values"] if v is not None]
        axis.plot([i] * len(values), values, "k.", ms=4)
    axis.set_xticks(range(len(rows)), [row["cell"] for row in rows], rotation=20, fontsize=8)
    axis.set_ylabel("downstream average (dev, × 100)")
    axis.set_title("Fine-tuned: mean ± std over seeds (dots: seeds)")
    figure.tight_layout()
    _save(figure, path)
    plt.close(figure)


def _save(figure, path: str) -> None:
    with atomic_write.atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=110)
