"""Small helpers shared by the scorers."""
from __future__ import annotations

from typing import Iterable, Sequence


def pct(num: float, den: float) -> float:
    return 100.0 * num / den if den > 0 else 0.0


def f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def paired(gold: Iterable[Sequence], pred: Iterable[Sequence], what: str):
    """Materialise both corpora and check sentence counts and per-sentence lengths."""
    gold, pred = [list(s) for s in gold], [list(s) for s in pred]
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} sentences but prediction has {len(pred)}")
    for i, (g, p) in enumerate(zip(gold, pred), 1):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: gold has {len(g)} {what} but prediction has {len(p)}")
    return gold, pred
