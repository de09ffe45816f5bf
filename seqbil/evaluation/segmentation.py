"""Segmentation (``segment_scores``) follows the SIGHAN bakeoff ``score`` script (Sproat & Emerson,
icwb2-data/scripts/score): recall = correct / gold words, precision = correct / predicted words,
F = 2PR/(P+R); OOV words are gold word *tokens* not in the training word list; OOV rate = OOV
gold tokens / all gold tokens; OOV (IV) recall = correct OOV (IV) gold tokens / OOV (IV) gold
tokens.  A word counts as correct when its character span is identical in gold and prediction.
The official script instead aligns one-word-per-line files with GNU ``diff -y``; this agrees
except in rare cases (a repeated word matched at a shifted offset, or ``diff``'s non-minimal
alignment of very long lines), a difference of at most a few words per 100,000.
"""
from __future__ import annotations

from typing import Collection, Iterable, Optional, Sequence

from .common import f1 as _f1, pct as _pct


def _spans(words: Sequence[str]) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for w in words:
        spans.append((pos, pos + len(w)))
        pos += len(w)
    return spans


def segment_scores(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]],
                   vocabulary: Optional[Collection[str]] = None) -> dict:
    """SIGHAN 2005 bakeoff scorer's numbers. gold/pred: sentences as lists of words. vocabulary: the training word list (for OOV).

    Returns ``{"words_gold", "words_pred", "correct", "precision", "recall", "f1"}`` (percent) and,
    when ``vocabulary`` is given, also ``"oov_rate", "oov_recall", "iv_recall"`` (percent, 0.0
    when undefined) with the underlying counts ``"oov_gold", "oov_correct", "iv_gold",
    "iv_correct"``.  Raises ``ValueError`` when sentence counts differ, when a gold and predicted
    sentence are not the same characters, or for an empty word.
    """
    gold, pred = [list(s) for s in gold], [list(s) for s in pred]
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} sentences but prediction has {len(pred)}")
    vocab = None if vocabulary is None else set(vocabulary)
    n_gold = n_pred = right = oov = oov_right = iv_right = 0
    for i, (g, p) in enumerate(zip(gold, pred), 1):
        if "".join(g) != "".join(p):
            raise ValueError(f"sentence {i}: gold and predicted words are not the same characters")
        if "" in g or "" in p:
            raise ValueError(f"sentence {i}: empty word")
        pred_spans = set(_spans(p))
        n_gold += len(g)
        n_pred += len(p)
        for w, span in zip(g, _spans(g)):
            hit = span in pred_spans
            right += hit
            if vocab is not None:
                if w in vocab:
                    iv_right += hit
                else:
                    oov += 1
                    oov_right += hit
    precision, recall = _pct(right, n_pred), _pct(right, n_gold)
    res = {"words_gold": n_gold, "words_pred": n_pred, "correct": right,
           "precision": precision, "recall": recall, "f1": _f1(precision, recall)}
    if vocab is not None:
        res.update(oov_rate=_pct(oov, n_gold), oov_recall=_pct(oov_right, oov),
                   iv_recall=_pct(iv_right, n_gold - oov), oov_gold=oov, oov_correct=oov_right,
                   iv_gold=n_gold - oov, iv_correct=iv_right)
    return res
