"""The official SQuAD evaluation, restated step by step for the tests (not used by the package).

Follows `evaluate-v1.1.py` and `evaluate-v2.0.py` as the official ALBERT `squad_utils.py`
carries them: per-question loops, a dict per score, the official totals. Kept literal and slow
so that `albert_keras.squad.squad_metrics` (organized differently) has an independent check.
"""

import collections
import re
import string


def normalize(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def v1_f1(prediction, ground_truth):
    p, g = normalize(prediction).split(), normalize(ground_truth).split()
    same = sum((collections.Counter(p) & collections.Counter(g)).values())
    if same == 0:
        return 0
    precision, recall = 1.0 * same / len(p), 1.0 * same / len(g)
    return (2 * precision * recall) / (precision + recall)


def v1_evaluate(dataset, predictions):
    f1 = exact = total = 0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                total += 1
                if qa["id"] not in predictions:
                    continue
                truths = [a["text"] for a in qa["answers"]]
                pred = predictions[qa["id"]]
                exact += max(normalize(pred) == normalize(t) for t in truths)
                f1 += max(v1_f1(pred, t) for t in truths)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


def _tokens(s):
    return normalize(s).split() if s else []


def v2_f1(gold, pred):
    g, p = _tokens(gold), _tokens(pred)
    same = sum((collections.Counter(g) & collections.Counter(p)).values())
    if len(g) == 0 or len(p) == 0:
        return int(g == p)
    if same == 0:
        return 0
    precision, recall = 1.0 * same / len(p), 1.0 * same / len(g)
    return (2 * precision * recall) / (precision + recall)


def v2_evaluate(dataset, preds, na_probs=None, na_prob_thresh=1.0):
    has_ans = {}
    for article in dataset:
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                has_ans[qa["id"]] = bool(qa["answers"])
    exact_raw, f1_raw = {}, {}
    for article in dataset:
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                golds = [a["text"] for a in qa["answers"] if normalize(a["text"])] or [""]
                if qa["id"] not in preds:
                    continue
                exact_raw[qa["id"]] = max(int(normalize(a) == normalize(preds[qa["id"]]))
                                          for a in golds)  # fmt: skip
                f1_raw[qa["id"]] = max(v2_f1(a, preds[qa["id"]]) for a in golds)
    probs = na_probs if na_probs is not None else {k: 0.0 for k in preds}

    def apply(scores):
        out = {}
        for qid, s in scores.items():
            out[qid] = float(not has_ans[qid]) if probs[qid] > na_prob_thresh else s
        return out

    exact, f1 = apply(exact_raw), apply(f1_raw)

    def make(qids):
        return collections.OrderedDict(
            [
                ("exact", 100.0 * sum(exact[k] for k in qids) / len(qids)),
                ("f1", 100.0 * sum(f1[k] for k in qids) / len(qids)),
                ("total", len(qids)),
            ]
        )

    out = make(list(exact))
    for prefix, flag in (("HasAns", True), ("NoAns", False)):
        qids = [k for k, v in has_ans.items() if v == flag]
        if qids:
            for k, v in make(qids).items():
                out[f"{prefix}_{k}"] = v
    if na_probs is not None:
        for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
            cur = best = sum(1 for k in has_ans if not has_ans[k])
            thresh = 0.0
            for qid in sorted(na_probs, key=lambda k: na_probs[k]):
                if qid not in raw:
                    continue
                if has_ans[qid]:
                    diff = raw[qid]
                else:
                    diff = -1 if preds[qid] else 0
                cur += diff
                if cur > best:
                    best, thresh = cur, na_probs[qid]
            out[f"best_{name}"] = 100.0 * best / len(raw)
            out[f"best_{name}_thresh"] = thresh
    return dict(out)
