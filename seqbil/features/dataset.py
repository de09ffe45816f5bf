"""Corpora encoded once into integer arrays (CSR by position), so that training
epochs never touch a string again."""
from dataclasses import dataclass

import numpy as np

from .index import FeatureIndex


@dataclass
class Dataset:
    seq_ptr: np.ndarray   # int64 [N+1]: positions of sequence j are seq_ptr[j]:seq_ptr[j+1]
    labels: np.ndarray    # int32 [P]: gold label ids, -1 where unknown
    u_ptr: np.ndarray     # int64 [P+1] and u_ids int32: 0-order attribute ids per position
    u_ids: np.ndarray
    b_ptr: np.ndarray     # int64 [P+1] and b_ids int32: 1st-order attribute ids per position
    b_ids: np.ndarray

    @property
    def n_sequences(self):
        return len(self.seq_ptr) - 1

    @property
    def n_positions(self):
        return int(self.seq_ptr[-1])


def encode_labels(sentences, labels):
    """Label ids of all tokens; -1 for tokens without a label or with a label the
    model does not know (a test set may hold labels never seen in training)."""
    index = {label: i for i, label in enumerate(labels)}
    out = []
    for s in sentences:
        if s.labels is None:
            out.extend([-1] * len(s))
        else:
            out.extend(index.get(y, -1) for y in s.labels)
    return np.asarray(out, dtype=np.int32)


def encode(sentences, templates, index=None, labels=(), min_count=1, normalize="none", base=None, **lexicons):
    """Encode sentences. With index=None the attribute dictionary is built from these
    sentences (training), extending the index `base` when given; lexicons: the
    lexicons, length_cap and jackknife arguments of FeatureIndex.build. Returns
    (Dataset, FeatureIndex)."""
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    seq_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    if index is None:
        index, parts = FeatureIndex.build(sentences, templates, min_count, normalize, base, **lexicons)
    else:
        parts = index.encode(sentences)
    return Dataset(seq_ptr, encode_labels(sentences, labels), *parts), index
