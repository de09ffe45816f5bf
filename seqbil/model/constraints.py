"""Constrained decoding: transitions, first labels and last labels a labelling may not
have, as masks over the model's transition and end scores (a forbidden one scores
-inf, so that Viterbi, k-best, max-marginals and forward-backward range over the
allowed labellings only: exp(-inf) = 0).

`well_formed` gives the rules of a chunk tag scheme (no `I-X` after `O` or `B-Y` in
IOB2, Ramshaw & Marcus 1995; the IOBES and BILOU rules; B, I, E, S segmentation
labels); `read_forbidden` reads a user's file of label pairs."""
from dataclasses import replace

import numpy as np

from ..errors import InputError, SeqbilError
from ..evaluation.chunks import detect_scheme
from ..formats.textio import read_lines

START, STOP = "<s>", "</s>"  # in a file of forbidden pairs: the sentence's start and end


def _parts(label):
    """(prefix, type) of a chunk tag: B-NP -> (B, NP); B -> (B, ''); O -> (O, '')."""
    if label == "O":
        return "O", ""
    prefix, _, typ = label.partition("-")
    return prefix, typ


def _follows(scheme, prev, cur):
    """Whether label cur may follow prev (None: the sentence's start) under scheme."""
    p, pt = _parts(prev) if prev is not None else ("O", "")
    c, ct = _parts(cur)
    if scheme in ("iobes", "bilou"):
        begin, inside, end, single = ("B", "I", "E", "S") if scheme == "iobes" else ("B", "I", "L", "U")
        if p in (begin, inside):  # an open chunk goes on, of its type, or ends
            return c in (inside, end) and ct == pt
        return c in (begin, single, "O")
    if scheme == "iob2":
        return c != "I" or (p in ("B", "I") and pt == ct)
    if scheme == "iob1":  # B only between two chunks of one type
        return c != "B" or (p in ("B", "I") and pt == ct)
    if scheme == "ioe2":  # an I chunk goes on to its E
        return p != "I" or (c in ("I", "E") and ct == pt)
    if scheme == "ioe1":  # E only between two chunks of one type
        return p != "E" or (c in ("I", "E") and ct == pt)
    raise SeqbilError(f"no well-formedness rules for the scheme {scheme!r}")


def _ends(scheme, last):
    """Whether a labelling may end with label last under scheme."""
    p, _ = _parts(last)
    if scheme in ("iobes", "bilou"):  # no chunk left open
        return p not in ("B", "I")
    if scheme == "ioe2":
        return p != "I"
    if scheme == "ioe1":
        return p != "E"
    return True


def well_formed(labels, scheme="auto"):
    """(allowed, end_allowed): allowed[y, v] whether label y may follow label v (v = S:
    the start), end_allowed[y] whether a labelling may end in y, by the rules of the
    chunk tag scheme (auto: as the labels tell, detect_scheme). Raises SeqbilError for
    labels that are not chunk tags (POS tags have no rules)."""
    prefixes = {_parts(y)[0] for y in labels}
    if not prefixes <= {"B", "I", "E", "S", "L", "U", "O"} or prefixes <= {"O"}:
        odd = sorted(y for y in labels if _parts(y)[0] not in ("B", "I", "E", "S", "L", "U", "O"))[:3]
        raise SeqbilError(f"well-formed labellings need chunk tags (B-NP, I-NP, O ...) or B, I, E, S; the model's "
                          f"labels include {', '.join(odd) or 'only O'}")
    if scheme in (None, "auto"):
        scheme = detect_scheme(labels)
    S = len(labels)
    allowed = np.ones((S, S + 1), dtype=bool)
    for y, cur in enumerate(labels):
        for v, prev in enumerate([*labels, None]):
            allowed[y, v] = _follows(scheme, prev, cur)
    return allowed, np.array([_ends(scheme, y) for y in labels], dtype=bool)


def read_forbidden(path, labels, encoding="utf-8"):
    """(allowed, end_allowed) as well_formed gives them, from a file of what a labelling
    may not have, a pair of labels per line: `A B` (B right after A), `<s> B` (B first),
    `A </s>` (A last); `#` starts a comment. A label the model does not have is an error
    naming the line."""
    S = len(labels)
    index = {y: i for i, y in enumerate(labels)}
    allowed, end_allowed = np.ones((S, S + 1), dtype=bool), np.ones(S, dtype=bool)
    for number, line in read_lines(path, encoding):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(path, number, f"a line is two labels, the first followed by the second (or {START} "
                                           f"and a first label, or a last label and {STOP}); found {len(fields)} fields")
        first, second = fields
        for y, where in ((first, START), (second, STOP)):
            if y not in index and y != where:
                raise InputError(path, number, f"{y!r} is not one of the model's labels ({', '.join(labels)})")
        if first == START and second == STOP:
            raise InputError(path, number, "an empty labelling cannot be forbidden")
        if second == STOP:
            end_allowed[index[first]] = False
        else:
            allowed[index[second], S if first == START else index[first]] = False
    return allowed, end_allowed


def check_lengths(allowed, end_allowed, longest=None):
    """Raise SeqbilError when some sentence length up to `longest` (default 2S + 2,
    past which the labels reachable at a position repeat for any rules seen in practice)
    has no allowed labelling."""
    S = len(end_allowed)
    reach = allowed[:, S].copy()  # the labels an allowed labelling can have at the first position
    step = allowed[:, :S]
    for n in range(1, (longest or 2 * S + 2) + 1):
        if not (reach & end_allowed).any():
            raise SeqbilError(f"the constraints leave no labelling of {n} token{'s' if n > 1 else ''}")
        reach = step[:, reach].any(axis=1)


def masked(store, allowed, end_allowed):
    """The storage.Store with the forbidden transitions, first labels and last labels at
    -inf (trans[y, v]: y after v, v = S the start; end[y])."""
    trans = np.where(allowed, store.trans, -np.inf)
    end = np.where(end_allowed, store.end, -np.inf)
    return replace(store, trans=np.ascontiguousarray(trans), end=np.ascontiguousarray(end))
