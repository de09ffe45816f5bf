"""Chunks in strict mode, as seqeval reads them with ``mode='strict'`` and a scheme: a
chunk counts only when its tags are well-formed under the scheme (an IOB2 chunk opens
with B-; an IOBES chunk is S-, or B- I-* E-; ...). Ill-formed runs are no chunk at all,
where the default mode (conlleval's reading) repairs them.

Each scheme is three relations on a pair of adjacent tags (the one before, the one at
a position): *start* (a chunk may open here), *inside* (the tag continues the chunk
the one before is in) and *end* (the chunk that the tag before is in has ended well).
They are seqeval's (scheme.py, version 1.2): the facts that define its strict mode,
written here as rules ``PREV CUR TYPE`` with PREV and CUR sets of prefixes (``*``:
any) and TYPE ``=`` (the same type), ``!`` (another) or ``*`` (either). A chunk opens
at a tag where *start* holds, takes the tags that are *inside* one after another, and
counts when *end* holds at the tag after its last (the sentence end reads as ``O``).
"""
from __future__ import annotations

from typing import Sequence

_RULES = {
    #          start                                  inside               end
    "iob1": ("O>I* I>I! B>I* I>B= B>B=", "B>I= I>I=", "I>I! I>O* I>B* B>O* B>I! B>B="),
    "ioe1": ("O>I* I>I! E>I* E>E=", "I>I= I>E=", "I>I! I>O* I>E! E>I= E>E="),
    "iob2": ("*>B*", "B>I= I>I=", "I>O* I>I! I>B* B>O* B>I! B>B*"),
    "ioe2": ("O>I* O>E* E>I* E>E* I>I! I>E!", "I>E= I>I=", "E>**"),
    "iobes": ("*>B* *>S*", "B>I= B>E= I>I= I>E=", "S>** E>**"),
    "bilou": ("*>B* *>U*", "B>I= B>L= I>I= I>L=", "U>** L>**"),
}


def _compile(text: str):
    """A relation of rules 'PREV>CUR TYPE': the set of (prev prefix, cur prefix, same
    type?) it holds for."""
    held = set()
    for rule in text.split():
        prev, cur, kind = rule[0], rule[2], rule[3]
        for p in ("BIOESLU" if prev == "*" else prev):
            for c in ("BIOESLU" if cur == "*" else cur):
                for same in (True, False):
                    if kind == "*" or (kind == "=") == same:
                        held.add((p, c, same))
    return held


_RELATIONS = {scheme: tuple(map(_compile, rules)) for scheme, rules in _RULES.items()}
STRICT_SCHEMES = tuple(_RULES)


def strict_chunks(tags: Sequence[str], scheme: str) -> list[tuple[str, int, int]]:
    """The well-formed chunks ``(type, first, last)`` of one sentence of checked tags
    (``O``, or ``PREFIX-TYPE`` / ``PREFIX`` with a prefix of the scheme)."""
    start, inside, end = _RELATIONS[scheme]
    split = [(t[0], t[2:]) if t != "O" else ("O", "") for t in tags] + [("O", "")]

    def holds(relation, a, b):
        return (a[0], b[0], a[1] == b[1]) in relation

    out, i, prev = [], 0, ("O", "")
    while i < len(split):
        if holds(start, prev, split[i]):
            j = i + 1
            while holds(inside, split[j - 1], split[j]):  # (the final O is inside no chunk)
                j += 1
            if holds(end, split[j - 1], split[j]):
                out.append((split[i][1], i, j - 1))
            i = j
        else:
            i += 1
        prev = split[i - 1]
    return out
