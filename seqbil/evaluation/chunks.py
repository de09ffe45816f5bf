"""Chunk scores: conlleval for IOB1 and IOB2, seqeval's reading for IOBES and BILOU.

``conlleval_scores`` and ``chunks(tags)`` reproduce ``conlleval`` (Erik Tjong Kim Sang, version
2004-01-26, the script of the CoNLL-2000 shared task, also used for CoNLL-2002/2003) exactly,
for any tags:

* A tag is split at its *first* hyphen into prefix and type (``B-NP`` -> ``B``, ``NP``); a tag
  without a hyphen has type ``''``.  As in Perl, a type equal to ``"0"`` counts as false and
  becomes ``''``.
* Chunk boundaries come from ``startOfChunk`` / ``endOfChunk`` (``_starts`` / ``_ends`` below),
  which know the prefixes ``B I O E [ ]`` and ``.``.  Any other prefix (e.g. ``S``) only matters
  through the "type changed" rules.  Consequences worth knowing:

  - IOB1 and IOB2 both work: ``I-`` after ``O`` or after another type starts a chunk.
  - ``E-`` is read as in the IOE1/IOE2 representations, *not* as IOBES: ``B-X E-X B-X E-X`` is
    ONE chunk for conlleval, and ``S-X S-X`` is one chunk too (the original script has no
    ``S-`` rules; some redistributed copies add them).
  - ``[`` and ``]`` are one-token chunks.

* Each sentence boundary is fed through the same logic as an ``O`` tag of type ``''`` (conlleval
  turns blank lines into ``-X- O O``), and the corpus starts as if preceded by ``O``.  The input is
  scored like a file that ends with a blank line.
* A chunk is counted correct with conlleval's ``inCorrect`` state machine (ported literally in
  ``conlleval_scores``).  For tags built from ``B I E O`` this equals intersecting the
  ``(type, start, end)`` sets of ``chunks``; for exotic inputs (e.g. ``[-NP`` right after ``E-NP``
  starts a chunk without ending the previous one) only the state machine gives conlleval's numbers.

``chunk_scores`` is the scorer for labelled data in one of the schemes ``iob1``, ``iob2``,
``ioe1``, ``ioe2``, ``iobes``, ``bilou`` (or ``auto``).  It first checks every label (``O`` or
``PREFIX-TYPE`` with a prefix of the scheme), then gives conlleval's numbers for IOB1, IOB2, IOE1
and IOE2, and for IOBES and BILOU
reads chunks as seqeval does in its default (non-strict) mode (``get_entities`` in
``seqeval/metrics/sequence_labeling.py``): ``S``/``U`` is a one-token chunk and ``E``/``L`` ends a
chunk, so ``S-PER S-PER`` is two chunks (conlleval reads one).  A chunk is correct when its
``(type, start, end)`` is both in gold and in the prediction, as in both scripts.  Read in a
scheme, a type written ``0`` stays ``0``, except in conlleval's numbers for IOB1 and IOB2.
In strict mode (``mode="strict"``) only the chunks well-formed under the scheme count, as in
seqeval's strict mode (``strict.py``).
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

from ..errors import SeqbilError
from .common import f1 as _f1, paired as _paired, pct as _pct
from .strict import strict_chunks

__all__ = ["MODES", "SCHEMES", "LabelError", "chunks", "chunk_scores", "conlleval_scores", "detect_scheme",
           "iobes_to_iob2", "to_iob2", "to_iobes"]

SCHEMES = ("iob1", "iob2", "ioe1", "ioe2", "iobes", "bilou")
_SCHEME_PREFIXES = {"iob1": "BI", "iob2": "BI", "ioe1": "IE", "ioe2": "IE", "iobes": "BIES", "bilou": "BILU"}
MODES = ("default", "strict")
# the schemes whose default reading is conlleval's (its E- is IOE's end of a chunk)
_CONLLEVAL = ("iob1", "iob2", "ioe1", "ioe2")
_ANY_PREFIX = "BIESLU"


class LabelError(SeqbilError, ValueError):
    """A label the chunk scorer cannot read: not a chunk tag, or not one of the scheme's.

    A ``ValueError``; also a ``SeqbilError`` so that the command line reports it as a user error."""


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


# ----------------------------------------------------------------------------- IOBES / BILOU

def _ends_iobes(prev: str, tag: str, prev_type: str, typ: str) -> bool:
    """seqeval's end_of_chunk (default mode): conlleval's rules plus E and S closing a chunk."""
    if prev in ("E", "S"):
        return True
    if prev in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev != "O" and prev_type != typ


def _starts_iobes(prev: str, tag: str, prev_type: str, typ: str) -> bool:
    """seqeval's start_of_chunk (default mode): B and S always start a chunk, I and E after
    a finished chunk or O start one too (tolerating ill-formed sequences as seqeval does)."""
    if tag in ("B", "S"):
        return True
    if tag in ("E", "I") and prev in ("E", "S", "O"):
        return True
    return tag != "O" and prev_type != typ


# BILOU is IOBES with other letters for the one-token chunk and the last token.
_BILOU_AS_IOBES = {"U": "S", "L": "E"}


def _split_checked(tag: str) -> tuple[str, str]:
    """Prefix and type of a checked tag ("O", or PREFIX-TYPE with a non-empty type), the type
    kept as written: Perl's "0" -> "" would give ``B-0`` an empty type and ``to_iob2`` a bad
    tag, and on checked tags it changes no chunk boundary."""
    prefix, _, typ = tag.partition("-")
    return prefix, typ


def _read(tags: Sequence[str], scheme: Optional[str]) -> list[tuple[str, int, int]]:
    """Chunks of one sentence: conlleval's reading of any tags (scheme None), or of checked
    tags by conlleval's rules (iob1, iob2) or seqeval's (iobes, bilou)."""
    if scheme in ("iobes", "bilou"):
        ends, starts = _ends_iobes, _starts_iobes
    else:
        ends, starts = _ends, _starts
    split = _split if scheme is None else _split_checked
    out: list[tuple[str, int, int]] = []
    prev, prev_type = "O", ""                     # sentence start behaves like a preceding O
    open_at: Optional[int] = None
    open_type = ""
    for i, tag in enumerate(tags):
        cur, cur_type = split(tag)
        if scheme == "bilou":
            cur = _BILOU_AS_IOBES.get(cur, cur)
        start = starts(prev, cur, prev_type, cur_type)
        if open_at is not None and (start or ends(prev, cur, prev_type, cur_type)):
            out.append((open_type, open_at, i - 1))
            open_at = None
        if start:
            open_at, open_type = i, cur_type
        prev, prev_type = cur, cur_type
    if open_at is not None:                       # the sentence end closes an open chunk
        out.append((open_type, open_at, len(tags) - 1))
    return out


# ----------------------------------------------------------------------------- checks and scheme

def _is_chunk_tag(tag: str, prefixes: str) -> bool:
    prefix, hyphen, typ = tag.partition("-")
    return tag == "O" or (len(prefix) == 1 and prefix in prefixes and (bool(typ) or not hyphen))


def _check(corpora: Sequence[tuple[str, list]], scheme: str, why: str = "") -> None:
    """Raise LabelError for the first tag (naming it and where it is) that is not a chunk tag
    at all, or not one of ``scheme``'s (any chunk prefix for ``auto``)."""
    allowed = _SCHEME_PREFIXES.get(scheme, _ANY_PREFIX)
    for what, sentences in corpora:
        labels = {y for s in sentences for y in s}
        if all(_is_chunk_tag(y, allowed) for y in labels):
            continue
        n, tag = next((n, y) for n, s in enumerate(sentences, 1) for y in s if not _is_chunk_tag(y, allowed))
        where = f" (in {what} sentence {n})" if what else ""
        if not _is_chunk_tag(tag, _ANY_PREFIX):
            raise LabelError(f"label {tag!r}{where} is not a chunk tag: chunk labels are O or "
                             f"PREFIX-TYPE (or PREFIX alone) with a prefix among B, I, E, S, L, U")
        raise LabelError(f"label {tag!r}{where} does not belong to the {scheme} scheme{why}, whose tags "
                         f"are O and {', '.join(p + '-TYPE' for p in allowed)}")


def iob1_start(sentence: Sequence[str]) -> bool:
    """Does some I- tag start a chunk (after O, at the sentence start or after another type)?"""
    prev, prev_type = "O", ""
    for tag in sentence:
        cur, cur_type = _split(tag)
        if cur == "I" and (prev == "O" or prev_type != cur_type):
            return True
        prev, prev_type = cur, cur_type
    return False


def detect_scheme(labels: Iterable[str], gold: Optional[Iterable[Sequence[str]]] = None) -> str:
    """The chunk tag scheme of a label set, typed (``B-NP``) or not (``B``): ``bilou`` when
    there are U or L tags, ``iobes`` when there are S tags, or B and E tags; ``ioe1`` or
    ``ioe2`` when there are E tags without B (``ioe1`` when in some ``gold`` sentence a chunk
    ends on an I tag), else ``iob1`` when in some ``gold`` sentence an I tag starts a chunk
    (after O or a different type; as in the CoNLL-2003 data), else ``iob2``.  Without
    ``gold`` sentences IOB1 cannot be told from IOB2, nor IOE1 from IOE2 (conlleval scores
    them alike)."""
    prefixes = {y.partition("-")[0] for y in labels if y != "O"}
    if prefixes & {"U", "L"}:
        return "bilou"
    if "S" in prefixes or {"B", "E"} <= prefixes:
        return "iobes"
    if "E" in prefixes:
        return "ioe1" if gold is not None and any(map(_ioe1_end, gold)) else "ioe2"
    if gold is not None and any(map(iob1_start, gold)):
        return "iob1"
    return "iob2"


def _ioe1_end(sentence: Sequence[str]) -> bool:
    """Does some chunk end on an I tag (before O, another type or the sentence end), as
    only IOE1 writes it?"""
    for tag, after in zip(sentence, list(sentence[1:]) + ["O"]):
        prefix, _, typ = tag.partition("-")
        a_prefix, _, a_typ = after.partition("-")
        if prefix == "I" and (after == "O" or a_typ != typ):
            return True
    return False


def _resolve(scheme: str, corpora: Sequence[tuple[str, list]]) -> str:
    """The scheme to read ``corpora`` (``[(name, sentences)]``, gold first) with, detected from
    all their labels for ``auto``, after checking every tag."""
    if scheme != "auto" and scheme not in SCHEMES:
        raise ValueError(f"scheme must be auto or one of {', '.join(SCHEMES)}, not {scheme!r}")
    _check(corpora, "auto")
    why = ""
    if scheme == "auto":
        labels = {y for _, sentences in corpora for s in sentences for y in s}
        scheme, why = detect_scheme(labels, corpora[0][1]), " (detected from the labels)"
    _check(corpora, scheme, why)
    return scheme


# ----------------------------------------------------------------------------- chunking

def chunks(tags: Sequence[str], scheme: Optional[str] = None) -> list[tuple[str, int, int]]:
    """Chunks ``(type, start, end_inclusive)`` of one sentence.

    ``scheme`` None reads any tags exactly as conlleval does: a chunk opens wherever
    ``startOfChunk`` fires (its type is that of its first tag) and runs until the token before
    the next ``endOfChunk`` *or* ``startOfChunk`` event, or to the end of the sentence; tokens
    after an end with no new start (``O``, or e.g. ``I-NP`` right after ``[-NP``) belong to no
    chunk.  With a scheme (``iob1``, ``iob2``, ``iobes``, ``bilou`` or ``auto``) the tags are
    checked first (``LabelError``) and IOBES/BILOU are read as seqeval does.
    """
    tags = list(tags)
    if scheme is not None:
        scheme = _resolve(scheme, [("", [tags])])
    return _read(tags, scheme)


def _summary(tokens: int, correct_tags: int, n_gold: dict, n_pred: dict, n_correct: dict) -> dict:
    """The result dict shared by both scorers; percentages as conlleval computes them, and
    the macro and weighted averages over the types found in gold or prediction as
    seqeval's and scikit-learn's reports give them (0 where a type has no chunk to
    divide by; weighted by each type's gold chunks)."""
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
            "f1": _f1(precision, recall), "per_type": per_type, **_averages(per_type)}


def _averages(per_type: dict) -> dict:
    """{"macro": {...}, "weighted": {...}} of precision, recall and F1 (the per-type F1s
    averaged, not the F1 of the averages)."""
    keys, support = ("precision", "recall", "f1"), sum(s["gold"] for s in per_type.values())
    macro = {k: sum(s[k] for s in per_type.values()) / len(per_type) if per_type else 0.0 for k in keys}
    weighted = {k: sum(s[k] * s["gold"] for s in per_type.values()) / support if support else 0.0 for k in keys}
    return {"macro": macro, "weighted": weighted}


def conlleval_scores(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]]) -> dict:
    """conlleval's numbers for any tags, unchecked (the Perl script's behaviour, also on odd input).

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
    return _summary(tokens, correct_tags, n_gold, n_pred, n_correct)


def _span_scores(gold: list, pred: list, scheme: str, read=None) -> dict:
    """Scores by intersecting the (type, start, end) chunk sets of each sentence (seqeval's way;
    its chunks never cross a sentence end either), read by ``read`` (default: ``_read``)."""
    read = read or _read
    n_gold: dict[str, int] = {}
    n_pred: dict[str, int] = {}
    n_correct: dict[str, int] = {}
    tokens = correct_tags = 0
    for g_sent, p_sent in zip(gold, pred):
        g_chunks, p_chunks = set(read(g_sent, scheme)), set(read(p_sent, scheme))
        for counts, found in ((n_gold, g_chunks), (n_pred, p_chunks), (n_correct, g_chunks & p_chunks)):
            for typ, _, _ in found:
                counts[typ] = counts.get(typ, 0) + 1
        tokens += len(g_sent)
        correct_tags += sum(g == p for g, p in zip(g_sent, p_sent))
    return _summary(tokens, correct_tags, n_gold, n_pred, n_correct)


def chunk_scores(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]], scheme: str = "auto",
                 mode: str = "default") -> dict:
    """Chunk precision, recall and F1 over a corpus (lists of sentences, each a list of tags).

    scheme: ``iob1``, ``iob2``, ``ioe1``, ``ioe2`` (conlleval's numbers), ``iobes``, ``bilou``
    (S/U one-token chunks, E/L chunk ends, as seqeval), or ``auto`` (``detect_scheme`` on the
    labels of gold and prediction, and the gold sentences).  mode ``strict``: only the chunks
    well-formed under the scheme count, as seqeval's ``mode='strict'`` (``strict.py``).
    Returns ``conlleval_scores``'s keys (with the ``macro`` and ``weighted`` averages),
    ``"scheme"`` and ``"mode"``.  Raises ``LabelError`` (a ``ValueError``) naming the first
    label that is not ``O`` or ``PREFIX-TYPE`` with a prefix of the scheme, and
    ``ValueError`` when sentence counts or a sentence's lengths differ or the mode is unknown.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    gold, pred = _paired(gold, pred, "tags")
    scheme = _resolve(scheme, [("gold", gold), ("predicted", pred)])
    if mode == "strict":
        result = _span_scores(gold, pred, scheme, strict_chunks)
    elif scheme in _CONLLEVAL:
        result = conlleval_scores(gold, pred)
    else:
        result = _span_scores(gold, pred, scheme)
    result["scheme"], result["mode"] = scheme, mode
    return result


# ----------------------------------------------------------------------------- conversions

def to_iob2(tags: Sequence[str], scheme: str = "auto") -> list[str]:
    """The chunks of ``tags`` (read in ``scheme``) written as IOB2: B- on each chunk's first token,
    I- on the rest, O outside chunks."""
    out = ["O"] * len(tags)
    for typ, start, end in chunks(tags, scheme):
        for i in range(start, end + 1):
            out[i] = ("B-" if i == start else "I-") + typ
    return out


def to_iobes(tags: Sequence[str], scheme: str = "auto") -> list[str]:
    """The chunks of ``tags`` (read in ``scheme``) written as IOBES: S- for a one-token chunk,
    else B- ... I- ... E-; O outside chunks."""
    out = ["O"] * len(tags)
    for typ, start, end in chunks(tags, scheme):
        if start == end:
            out[start] = "S-" + typ
            continue
        for i in range(start, end + 1):
            out[i] = ("B-" if i == start else "E-" if i == end else "I-") + typ
    return out


def iobes_to_iob2(tags: Sequence[str]) -> list[str]:
    """``to_iob2(tags, "iobes")``: IOBES tags rewritten as IOB2, e.g. to feed them to conlleval."""
    return to_iob2(tags, "iobes")
