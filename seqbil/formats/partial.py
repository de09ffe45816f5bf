"""Partial labels: what a corpus read with `partial = true` may say of a token's label.

    B-PER          the label is B-PER
    ?              the label is unknown: any of the model's labels
    B-PER|I-PER    the label is one of B-PER and I-PER

Distant supervision and dictionary matches give such corpora: some tokens' labels are
known, others only narrowed down or not at all. Training keeps what is known (a CRF
maximises the likelihood of the labellings consistent with it; the online learners
learn toward the best such labelling, learners/latent.py), and scoring counts only
the tokens whose label is known (evaluation.score).

In code a token's label is then a str, None (unknown) or a frozenset of labels; an
encoded corpus says it per position as a label id, -1 (unknown) or -2 - r, row r of a
table of allowed labels (cython_ext/known.pxd).
"""
import numpy as np

UNKNOWN = "?"
SEPARATOR = "|"


def parse(value):
    """A label as written in a partial corpus: the label, None (unknown) or the
    frozenset of the labels it may be."""
    if value == UNKNOWN:
        return None
    if SEPARATOR in value:
        members = frozenset(part for part in value.split(SEPARATOR) if part)
        return members if len(members) > 1 else next(iter(members), None)
    return value


def is_partial(value):
    """Whether a label as written says less than one label."""
    return value == UNKNOWN or SEPARATOR in value


def labels_of(values):
    """The labels a partial corpus's label values name: its plain labels and the
    members of its sets (unknown marks name none)."""
    out = set()
    for value in values:
        parsed = parse(value)
        if isinstance(parsed, str):
            out.add(parsed)
        elif parsed is not None:
            out |= parsed
    return out


def gold(sequences):
    """Label sequences as scoring reads a partial corpus's: each label parsed."""
    return [[parse(value) for value in labels] for labels in sequences]


def encode(label_values, label_ids, labels):
    """(targets, known, sets) of a partial corpus's positions under a model's labels.

    label_values: the corpus's distinct label strings; label_ids: each position's index
    into them (-1: no label). known: int32 per position, the label id, -1 (unknown, or
    no label the model has) or -2 - r for row r of sets (uint8, one row per distinct
    set, 1 where a label is allowed); None when every position's label is known.
    targets: a label id per position that known allows (the first), where a learner
    reads its gold label."""
    index = {label: i for i, label in enumerate(labels)}
    S = len(labels)
    rows, lut = {}, []
    for value in label_values:
        parsed = parse(value)
        if isinstance(parsed, str):
            lut.append(index.get(parsed, -1))
            continue
        members = sorted(index[y] for y in (parsed or ()) if y in index)
        if len(members) <= 1:  # (unknown, or a set of one label the model has)
            lut.append(members[0] if members else -1)
        else:
            lut.append(-2 - rows.setdefault(tuple(members), len(rows)))
    lut = np.array(lut + [-1], dtype=np.int32)  # (label_ids -1, no label, reads the last)
    known = lut[np.asarray(label_ids)]
    sets = np.zeros((len(rows), S), dtype=np.uint8)
    first = np.zeros(len(rows), dtype=np.int32)
    for members, r in rows.items():
        sets[r, list(members)] = 1
        first[r] = members[0]
    targets = known.copy()
    targets[known == -1] = 0
    is_set = known <= -2
    targets[is_set] = first[-2 - known[is_set]]
    if (known >= 0).all():
        return targets, None, sets
    return targets, known, sets


def in_python(sequences):
    """Whether label sequences given in Python hold partial labels: None or a set
    somewhere (seqbil.sklearn's y)."""
    return any(label is None or isinstance(label, (set, frozenset)) for labels in sequences for label in labels)


def written(label):
    """A label given in Python as a partial corpus writes it: None as ?, a set of
    labels joined by |; ValueError for an empty set, and for a plain label that would
    read as partial."""
    if label is None:
        return UNKNOWN
    if isinstance(label, (set, frozenset)):
        if not label or not all(isinstance(y, str) and y and not is_partial(y) for y in label):
            raise ValueError(f"the label set {sorted(map(repr, label))} is not a non-empty set of labels")
        return SEPARATOR.join(sorted(label))
    if isinstance(label, str) and label and is_partial(label):
        raise ValueError(f"the label {label!r} reads as a partial label (? or |) where others are None or sets: "
                         "give it as None or a set")
    return label
