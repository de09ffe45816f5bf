"""Evaluation for sequence labelling: conlleval chunk scores, SIGHAN word-segmentation scores,
token accuracy, and report formatting.

Chunking (``chunks``, ``chunk_scores``) reproduces ``conlleval`` (Erik Tjong Kim Sang, version
2004-01-26, the script of the CoNLL-2000 shared task, also used for CoNLL-2002/2003) exactly:

* A tag is split at its *first* hyphen into prefix and type (``B-NP`` -> ``B``, ``NP``); a tag
  without a hyphen has type ``''``.  As in Perl, a type equal to ``"0"`` counts as false and
  becomes ``''``.
* Chunk boundaries come from ``startOfChunk`` / ``endOfChunk`` (``_starts`` / ``_ends`` below),
  which know the prefixes ``B I O E [ ]`` and ``.``.  Any other prefix (e.g. ``S``) only matters
  through the "type changed" rules.  Consequences worth knowing:

  - IOB1 and IOB2 both work: ``I-`` after ``O`` or after another type starts a chunk.
  - ``E-`` is read as in the IOE1/IOE2 representations, *not* as IOBES: ``B-X E-X B-X E-X`` is
    ONE chunk for conlleval, and ``S-X S-X`` is one chunk too.  The original script has no
    ``S-`` rules (some redistributed copies add them; those are modified versions).  Convert
    IOBES output with ``iobes_to_iob2`` first.
  - ``[`` and ``]`` are one-token chunks.

* Each sentence boundary is fed through the same logic as an ``O`` tag of type ``''`` (conlleval
  turns blank lines into ``-X- O O``), and the corpus starts as if preceded by ``O``.  The input is
  scored like a file that ends with a blank line.
* A chunk is counted correct with conlleval's ``inCorrect`` state machine (ported literally in
  ``chunk_scores``).  For tags built from ``B I E O`` this equals intersecting the
  ``(type, start, end)`` sets of ``chunks``; for exotic inputs (e.g. ``[-NP`` right after ``E-NP``
  starts a chunk without ending the previous one) only the state machine gives conlleval's numbers.
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

from .common import f1 as _f1, paired as _paired, pct as _pct

__all__ = ["chunks", "chunk_scores", "iobes_to_iob2"]


# ----------------------------------------------------------------------------- conlleval core

def _split(tag: str) -> tuple[str, str]:
    """conlleval's ``/^([^-]*)-(.*)$/`` split, plus Perl truthiness (type "0" -> "")."""
    prefix, hyphen, typ = tag.partition("-")
    if not hyphen:
        return tag, ""
    return prefix, ("" if typ == "0" else typ)


def _ends(prev: str, tag: str, prev_type: str, typ: str) -> bool:
    """conlleval's endOfChunk: did a chunk end between the previous and the current token?"""
    if (prev, tag) in {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"),
                       ("E", "E"), ("E", "I"), ("E", "O")}:
        return True
    if prev != "O" and prev != "." and prev_type != typ:
        return True
    return prev in ("[", "]")        # these chunks are assumed to have length 1


def _starts(prev: str, tag: str, prev_type: str, typ: str) -> bool:
    """conlleval's startOfChunk: did a chunk start between the previous and the current token?"""
    if (prev, tag) in {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"),
                       ("E", "E"), ("E", "I"), ("O", "E")}:
        return True
    if tag != "O" and tag != "." and prev_type != typ:
        return True
    return tag in ("[", "]")








# ----------------------------------------------------------------------------- chunking

def chunks(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """Chunks ``(type, start, end_inclusive)`` of one sentence, read exactly as conlleval reads them.

    A chunk opens wherever ``startOfChunk`` fires (its type is that of its first tag) and runs
    until the token before the next ``endOfChunk`` *or* ``startOfChunk`` event, or to the end of
    the sentence.  Tokens after an end with no new start (``O``, or e.g. ``I-NP`` right after
    ``[-NP``) belong to no chunk.
    """
    out: list[tuple[str, int, int]] = []
    prev, prev_type = "O", ""                     # sentence start behaves like a preceding O
    open_at: Optional[int] = None
    open_type = ""
    for i, tag in enumerate(tags):
        cur, cur_type = _split(tag)
        starts = _starts(prev, cur, prev_type, cur_type)
        if open_at is not None and (starts or _ends(prev, cur, prev_type, cur_type)):
            out.append((open_type, open_at, i - 1))
            open_at = None
        if starts:
            open_at, open_type = i, cur_type
        prev, prev_type = cur, cur_type
    if open_at is not None:
        out.append((open_type, open_at, len(tags) - 1))
    return out


def chunk_scores(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]]) -> dict:
    """conlleval's numbers over a corpus (list of sentences, each a list of chunk tags like B-NP, I-NP, O).

    Returns ``{"tokens", "phrases_gold", "phrases_pred", "correct", "accuracy", "precision",
    "recall", "f1", "per_type"}``; percentages are 0..100, ``per_type`` maps each type found in
    gold or prediction to ``{"precision", "recall", "f1", "gold", "pred", "correct"}``.
    Raises ``ValueError`` when sentence counts or a sentence's lengths differ.
    """
    gold, pred = _paired(gold, pred, "tags")
    n_gold: dict[str, int] = {}
    n_pred: dict[str, int] = {}
    n_correct: dict[str, int] = {}
    tokens = correct_tags = 0
    # State of the conlleval loop: previous gold / predicted (prefix, type) and inCorrect,
    # "the chunk currently open in both is correct so far".
    last_g, last_p = ("O", ""), ("O", "")
    in_correct = False

    def step(g: tuple[str, str], p: tuple[str, str]) -> None:
        nonlocal last_g, last_p, in_correct
        end_g = _ends(last_g[0], g[0], last_g[1], g[1])
        end_p = _ends(last_p[0], p[0], last_p[1], p[1])
        start_g = _starts(last_g[0], g[0], last_g[1], g[1])
        start_p = _starts(last_p[0], p[0], last_p[1], p[1])
        if in_correct:
            if end_g and end_p and last_p[1] == last_g[1]:
                # both chunks end here with the same type: the chunk is correct
                in_correct = False
                n_correct[last_g[1]] = n_correct.get(last_g[1], 0) + 1
            elif end_g != end_p or p[1] != g[1]:
                in_correct = False
        if start_g and start_p and p[1] == g[1]:
            in_correct = True
        if start_g:
            n_gold[g[1]] = n_gold.get(g[1], 0) + 1
        if start_p:
            n_pred[p[1]] = n_pred.get(p[1], 0) + 1
        last_g, last_p = g, p

    boundary = ("O", "")
    for g_sent, p_sent in zip(gold, pred):
        for g_tag, p_tag in zip(g_sent, p_sent):
            g, p = _split(g_tag), _split(p_tag)
            step(g, p)
            tokens += 1
            correct_tags += g == p          # conlleval compares prefix and type after splitting
        step(boundary, boundary)             # the blank line after each sentence
    if in_correct:                           # end of file while a correct chunk is still open
        n_correct[last_g[1]] = n_correct.get(last_g[1], 0) + 1

    found_g, found_p, right = sum(n_gold.values()), sum(n_pred.values()), sum(n_correct.values())
    precision, recall = _pct(right, found_p), _pct(right, found_g)
    per_type = {}
    for t in sorted(set(n_gold) | set(n_pred)):
        c, ng, npred = n_correct.get(t, 0), n_gold.get(t, 0), n_pred.get(t, 0)
        tp, tr = _pct(c, npred), _pct(c, ng)
        per_type[t] = {"precision": tp, "recall": tr, "f1": _f1(tp, tr),
                       "gold": ng, "pred": npred, "correct": c}
    return {"tokens": tokens, "phrases_gold": found_g, "phrases_pred": found_p, "correct": right,
            "accuracy": _pct(correct_tags, tokens), "precision": precision, "recall": recall,
            "f1": _f1(precision, recall), "per_type": per_type}


def iobes_to_iob2(tags: Sequence[str]) -> list[str]:
    """Rewrite IOBES tags as IOB2 (``S-`` -> ``B-``, ``E-`` -> ``I-``) so conlleval reads them as meant."""
    out = []
    for tag in tags:
        prefix, hyphen, typ = tag.partition("-")
        if hyphen and prefix in ("S", "E"):
            tag = ("B-" if prefix == "S" else "I-") + typ
        out.append(tag)
    return out


def detect_scheme(labels) -> str:
    """The chunk tag scheme of a label set: bilou (U- or L- prefixes), iobes (S- or
    E-), else iob2 (B-/I-; conlleval reads IOB1 and IOB2 alike)."""
    prefixes = {y.partition("-")[0] for y in labels if "-" in y}
    if prefixes & {"U", "L"}:
        return "bilou"
    if prefixes & {"S", "E"}:
        return "iobes"
    return "iob2"
