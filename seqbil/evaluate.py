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

Segmentation (``segment_scores``) follows the SIGHAN bakeoff ``score`` script (Sproat & Emerson,
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

__all__ = ["chunks", "chunk_scores", "segment_scores", "token_accuracy", "format_report",
           "iobes_to_iob2"]


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


def _pct(num: float, den: float) -> float:
    return 100.0 * num / den if den > 0 else 0.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _paired(gold: Iterable[Sequence], pred: Iterable[Sequence], what: str):
    """Materialise both corpora and check sentence counts and per-sentence lengths."""
    gold, pred = [list(s) for s in gold], [list(s) for s in pred]
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} sentences but prediction has {len(pred)}")
    for i, (g, p) in enumerate(zip(gold, pred), 1):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: gold has {len(g)} {what} but prediction has {len(p)}")
    return gold, pred


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


def token_accuracy(gold: Iterable[Sequence], pred: Iterable[Sequence]) -> float:
    """Percentage of positions whose predicted label equals the gold label (plain equality)."""
    gold, pred = _paired(gold, pred, "labels")
    total = sum(len(s) for s in gold)
    right = sum(g == p for gs, ps in zip(gold, pred) for g, p in zip(gs, ps))
    return _pct(right, total)


# ----------------------------------------------------------------------------- segmentation

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


# ----------------------------------------------------------------------------- reports

def format_report(scores: dict, kind: str) -> str:
    """Human-readable table of ``chunk_scores`` (kind ``"chunk"``) or ``segment_scores`` (``"segment"``) output.

    ``"chunk"`` prints conlleval's own layout (same ``printf`` formats, so the text matches the
    script's output line for line, except that conlleval prints the line of the empty type ``''``
    twice when it occurs in both gold and prediction); ``"segment"`` prints the SIGHAN ``score`` summary lines, with
    rates as fractions to three decimals like the script (``--`` when a rate is undefined).
    """
    if kind == "chunk":
        s = scores
        lines = [f"processed {s['tokens']} tokens with {s['phrases_gold']} phrases; "
                 f"found: {s['phrases_pred']} phrases; correct: {s['correct']}."]
        if s["tokens"] > 0:
            lines.append("accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f"
                         % (s["accuracy"], s["precision"], s["recall"], s["f1"]))
        for t, v in sorted(s["per_type"].items()):
            lines.append("%17s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d"
                         % (t, v["precision"], v["recall"], v["f1"], v["pred"]))
        return "\n".join(lines) + "\n"
    if kind == "segment":
        s = scores
        lines = [f"=== TOTAL TRUE WORD COUNT:\t{s['words_gold']}",
                 f"=== TOTAL TEST WORD COUNT:\t{s['words_pred']}",
                 "=== TOTAL TRUE WORDS RECALL:\t%.3f" % (s["recall"] / 100),
                 "=== TOTAL TEST WORDS PRECISION:\t%.3f" % (s["precision"] / 100),
                 "=== F MEASURE:\t%.3f" % (s["f1"] / 100)]
        if "oov_rate" in s:
            def rate(key: str, count: str) -> str:
                return "%.3f" % (s[key] / 100) if s.get(count, 1) > 0 else "--"
            lines += ["=== OOV Rate:\t%.3f" % (s["oov_rate"] / 100),
                      "=== OOV Recall Rate:\t" + rate("oov_recall", "oov_gold"),
                      "=== IV Recall Rate:\t" + rate("iv_recall", "iv_gold")]
        return "\n".join(lines) + "\n"
    raise ValueError(f"kind must be 'chunk' or 'segment', not {kind!r}")
