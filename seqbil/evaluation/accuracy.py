"""Token accuracy."""
from __future__ import annotations

from typing import Iterable, Sequence

from .common import paired as _paired, pct as _pct


def token_accuracy(gold: Iterable[Sequence], pred: Iterable[Sequence]) -> float:
    """Percentage of positions whose predicted label equals the gold label (plain equality)."""
    gold, pred = _paired(gold, pred, "labels")
    total = sum(len(s) for s in gold)
    right = sum(g == p for gs, ps in zip(gold, pred) for g, p in zip(gs, ps))
    return _pct(right, total)
