"""Corpora encoded once into integer arrays (CSR by position), so that training
epochs never touch a string again."""
from dataclasses import dataclass

import numpy as np

from ..formats.partial import encode as encode_partial
from ..formats.sentence import Corpus
from .index import FeatureIndex


@dataclass
class Dataset:
    seq_ptr: np.ndarray   # int64 [N+1]: positions of sequence j are seq_ptr[j]:seq_ptr[j+1]
    labels: np.ndarray    # int32 [P]: gold label ids, -1 where unknown
    u_ptr: np.ndarray     # int64 [P+1] and u_ids int32: 0-order attribute ids per position
    u_ids: np.ndarray
    b_ptr: np.ndarray     # int64 [P+1] and b_ids int32: 1st-order attribute ids per position
    b_ids: np.ndarray
    # float32, parallel to u_ids: the value of each 0-order entry (its feature is
    # value * [label = y]); None when every value is 1, as encode() produces
    u_vals: np.ndarray | None = None
    # b_ptr None: every position has b_width 1st-order ids (see without_b_ptr)
    b_width: int = 0
    seq_task: np.ndarray | None = None  # int32 [N]: the task of each sequence (multi-task training)
    seq_wrong: np.ndarray | None = None  # uint8 [N]: the learners flag each sequence they got wrong here
    pos_diff: np.ndarray | None = None  # uint8 [P]: sp and bol flag each position an update reached here
    # partial labels (formats/partial.py): int32 [P], each position's label id, -1 (unknown) or
    # -2 - r (one of the labels of row r of label_sets, uint8 [K, S]); None when every label is
    # known. labels then holds a label each position allows: the learners' current target
    known: np.ndarray | None = None
    label_sets: np.ndarray | None = None

    @property
    def n_sequences(self):
        return len(self.seq_ptr) - 1

    @property
    def n_positions(self):
        return int(self.seq_ptr[-1])

    def without_b_ptr(self):
        """Drop b_ptr when every position has the same number of 1st-order ids, as
        every training position has when no attribute falls under min_count: the
        training kernels then find position p's ids at p * b_width, and the pointers
        (8 bytes a token) take no memory. Returns self."""
        if self.b_ptr is not None and self.n_positions > 0:
            width = int(self.b_ptr[1] - self.b_ptr[0])
            if width > 0 and len(self.b_ids) == width * self.n_positions and \
                    all(np.all(np.diff(self.b_ptr[lo:lo + (1 << 20) + 1]) == width)
                        for lo in range(0, self.n_positions, 1 << 20)):
                self.b_ptr, self.b_width = None, width
        return self

    def b_pointers(self, lo=0, hi=None):
        """b_ptr[lo:hi], also when it was dropped."""
        hi = self.n_positions + 1 if hi is None else hi
        if self.b_ptr is not None:
            return self.b_ptr[lo:hi]
        return np.arange(lo, hi, dtype=np.int64) * self.b_width


def encode_labels(sentences, labels):
    """Label ids of all tokens; -1 for tokens without a label or with a label the
    model does not know (a test set may hold labels never seen in training)."""
    corpus = Corpus.of(sentences)
    index = {label: i for i, label in enumerate(labels)}
    # the id of every distinct label, and -1 last, for the tokens without one (-1)
    lut = np.array([index.get(y, -1) for y in corpus.label_values] + [-1], dtype=np.int32)
    return lut[corpus.label_ids]


def encode(sentences, templates, index=None, labels=(), min_count=1, normalize="none", base=None, vectors=None,
           structure=None, partial=False, **lexicons):
    """Encode sentences (a list of Sentence or a Corpus). With index=None the attribute
    dictionary is built from these sentences (training), extending the index `base`
    when given; lexicons: the lexicons, length_cap and jackknife arguments of
    FeatureIndex.build. partial: the labels may be partial (formats/partial.py).
    Returns (Dataset, FeatureIndex)."""
    corpus = Corpus.of(sentences)
    seq_ptr = corpus.offsets()
    if index is None:
        index, parts = FeatureIndex.build(corpus, templates, min_count, normalize, base, **lexicons)
        index.vectors, index.structure = vectors, structure
        if base is not None:  # the real-valued attributes follow the keyed ones
            extra = index.n_attributes(0) - index.n_keyed(0)
            index.renumber[0] = np.concatenate([index.renumber[0], index.n_keyed(0) + np.arange(extra)])
    else:
        parts = index.encode(corpus)
    if index.vectors is not None:  # real-valued entries of the %vec templates after the keyed ones
        u_ptr, u_ids, u_vals = index.vectors.add(corpus, corpus.lengths, parts[0], parts[1], index.n_keyed(0),
                                                 index.fold)
        parts = [u_ptr, u_ids, parts[2], parts[3], u_vals]
    if index.structure is not None:  # and those of the structure after them
        first = index.n_attributes(0) - index.structure.n_attributes
        u_ptr, u_ids, u_vals = index.structure.append(corpus, parts[0], parts[1], parts[4] if len(parts) > 4 else None,
                                                      first)
        parts = [u_ptr, u_ids, parts[2], parts[3], u_vals]
    if partial:
        targets, known, sets = encode_partial(corpus.label_values, corpus.label_ids, labels)
        data = Dataset(seq_ptr, targets, *parts, known=known, label_sets=sets)
    else:
        data = Dataset(seq_ptr, encode_labels(corpus, labels), *parts)
    if corpus.tasks is not None:
        data.seq_task = np.ascontiguousarray(corpus.tasks, dtype=np.int32)
    return data, index
