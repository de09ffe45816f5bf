"""Token accuracy, overall and per label."""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from .common import f1 as _f1, paired as _paired, pct as _pct


def token_accuracy(gold: Iterable[Sequence], pred: Iterable[Sequence]) -> float:
    """Percentage of positions whose predicted label equals the gold label (plain equality)."""
    gold, pred = _paired(gold, pred, "labels")
    total = sum(len(s) for s in gold)
    right = sum(g == p for gs, ps in zip(gold, pred) for g, p in zip(gs, ps))
    return _pct(right, total)


def label_scores(gold: Iterable[Sequence], pred: Iterable[Sequence]) -> dict:
    """Per label found in gold or prediction: ``{"count", "predicted", "correct", "precision",
    "recall", "f1"}``, where count is the gold occurrences, predicted the predicted ones, correct
    the positions where both are this label; precision = correct/predicted, recall =
    correct/count (percent, 0.0 when undefined).  Labels in sorted order."""
    gold, pred = _paired(gold, pred, "labels")
    count, predicted, correct = Counter(), Counter(), Counter()
    for gs, ps in zip(gold, pred):
        count.update(gs)
        predicted.update(ps)
        correct.update(g for g, p in zip(gs, ps) if g == p)
    out = {}
    for label in sorted(set(count) | set(predicted)):
        c = correct[label]
        precision, recall = _pct(c, predicted[label]), _pct(c, count[label])
        out[label] = {"count": count[label], "predicted": predicted[label], "correct": c,
                      "precision": precision, "recall": recall, "f1": _f1(precision, recall)}
    return out
