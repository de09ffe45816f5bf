"""python-crfsuite's Tagger over a seqbil model: the methods sklearn-crfsuite's users
call on `CRF.tagger_` (labels, tag, set, probability, marginal, info, open, close),
with python-crfsuite's item formats (the dicts and lists of _kernels/items.pyx)."""
import contextlib
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import SeqbilError
from ..formats import Sentence
from .. import foreign
from ..modelfile import is_crfsuite
from ..model import Model


@dataclass
class Info:
    """What python-crfsuite's Tagger.info() gives (its ParsedDump): header (strings,
    as CRFsuite's dump prints them: size, num_attrs, num_labels, num_features, type),
    labels {label: id}, attributes {name: id} of the attributes that hold a weight,
    transitions {(label_from, label_to): weight} and state_features {(attribute,
    label): weight}, the non-zero weights as the model keeps them (its probabilities
    divide the scores by the model's temperature, 1 for a CRF). seqbil adds
    first_order_features {(attribute, label_from, label_to): weight}, the weights of
    B:%attr attributes (bilinear models: of the product of their factors), and
    start_features and end_features {label: weight}, the scores of a label first and
    last in a sequence, which CRFsuite's models do not have."""
    header: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    attributes: dict = field(default_factory=dict)
    transitions: dict = field(default_factory=dict)
    state_features: dict = field(default_factory=dict)
    first_order_features: dict = field(default_factory=dict)
    start_features: dict = field(default_factory=dict)
    end_features: dict = field(default_factory=dict)


def attribute_names(model, order):
    """{attribute id: name} of the %attr templates of an order in a model's index."""
    index = model.index
    table, ptr = index.tables[order]
    first = int(ptr[model.templates.n_column_templates[order]])
    strings = index.attributes.strings if index.attributes is not None else []
    return {a: strings[table[a]] for a in range(first, len(table))}


def model_info(model, size):
    labels = model.labels
    S, store = len(labels), model.store
    info = Info(labels={y: i for i, y in enumerate(labels)})
    names0 = attribute_names(model, 0)
    rows = store.w0
    if names0:
        lo = min(names0)
        dense = rows.rows(lo, max(names0) + 1).to_dense()
        for r, c in zip(*np.nonzero(dense)):
            info.state_features[(names0[lo + r], labels[c])] = float(dense[r, c])
    names1 = attribute_names(model, 1)
    if names1:
        lo = min(names1)
        block = store.w1.rows(lo, max(names1) + 1).to_dense()
        if store.bilinear:  # alpha_a beta_a^T
            block = (block[:, :S, None] * block[:, None, S:]).reshape(len(block), S * (S + 1))
        for r, c in zip(*np.nonzero(block)):
            y, v = divmod(int(c), S + 1)
            if v < S:
                info.first_order_features[(names1[lo + r], labels[v], labels[y])] = float(block[r, c])
    trans = np.asarray(store.trans)[:S]
    for y in range(S):
        for v in range(S):
            if trans[y, v]:
                info.transitions[(labels[v], labels[y])] = float(trans[y, v])
        if trans[y, S]:
            info.start_features[labels[y]] = float(trans[y, S])
        if store.end[y]:
            info.end_features[labels[y]] = float(store.end[y])
    names = sorted({n for n, _ in info.state_features} | {n for n, *_ in info.first_order_features})
    info.attributes = {n: i for i, n in enumerate(names)}
    info.header = {"type": "seqbil", "size": str(size), "num_attrs": str(len(names)), "num_labels": str(S),
                   "num_features": str(len(info.state_features) + len(info.first_order_features) +
                                       len(info.transitions))}
    return info


class Tagger:
    """python-crfsuite's Tagger on a seqbil model (attribute models: --format
    crfsuite, seqbil.sklearn.CRF). set() keeps one sequence, whose Viterbi labels,
    probabilities and marginals tag(), probability() and marginal() then give."""

    def __init__(self, model=None, size=0):
        self.model, self.size = model, size
        self._items, self._found = None, None

    def open(self, name):
        """Open a seqbil model file, or a CRFsuite model file (as python-crfsuite's
        Tagger.open does; read by seqbil.foreign)."""
        self.model, self.size = open_model(name), os.path.getsize(name)
        self._items = self._found = None
        return contextlib.closing(self)

    def close(self):
        self._items = self._found = None

    def _need(self):
        if self.model is None:
            raise ValueError("the tagger has no model: open() one")
        return self.model

    def labels(self):
        return list(self._need().labels)

    def set(self, xseq):
        """Set the item sequence that tag(), probability() and marginal() read."""
        model = self._need()
        self._items = list(xseq)
        self._found = model.predict_marginals([Sentence([], None, 1, items=self._items)])[0]

    def _current(self):
        if self._found is None:
            raise ValueError("no item sequence: call set() or tag(xseq) first")
        return self._found

    def tag(self, xseq=None):
        """The best label sequence of xseq (or of the sequence set last)."""
        if xseq is not None:
            self.set(xseq)
        return list(self._current()[0])

    def probability(self, yseq):
        """P(yseq | x) of the sequence set last."""
        model = self._need()
        self._current()
        try:
            return model.probability(self._items, list(yseq))
        except SeqbilError as exc:
            raise ValueError(str(exc)) from None

    def marginal(self, y, pos):
        """The marginal probability of label y at position pos of the sequence set last."""
        model, (_, _, marginals, _) = self._need(), self._current()
        if y not in model.labels:
            raise ValueError(f"label {y!r} is not one of the model's")
        if not 0 <= pos < len(marginals):
            raise ValueError(f"position {pos} is out of range (the sequence has {len(marginals)} items)")
        return float(marginals[pos, model.labels.index(y)])

    def info(self):
        """The model's attributes, labels and weights (Info)."""
        return model_info(self._need(), self.size)


def open_model(path):
    """The Model of a seqbil model file or of a CRFsuite model file (converted in
    memory: the same labels and probabilities)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        head = b""
    if is_crfsuite(head):
        return foreign.load(path, "crfsuite")
    return Model.load(path)
