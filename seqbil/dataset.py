"""Corpora encoded once into integer arrays (CSR by position), so that training
epochs never touch a string again."""
from dataclasses import dataclass
import numpy as np

from .features import FeatureIndex



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

    def subset(self, indices):
        """The sequences at the given indices, as a new Dataset."""
        indices = np.asarray(indices, dtype=np.int64)
        lengths = np.diff(self.seq_ptr)[indices]
        seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        pos = np.concatenate([np.arange(self.seq_ptr[j], self.seq_ptr[j + 1]) for j in indices]) \
            if len(indices) else np.zeros(0, np.int64)
        u_ptr, u_ids = _csr_take(self.u_ptr, self.u_ids, pos)
        b_ptr, b_ids = _csr_take(self.b_ptr, self.b_ids, pos)
        return Dataset(seq_ptr, self.labels[pos], u_ptr, u_ids, b_ptr, b_ids)


def _csr_take(ptr, ids, rows):
    counts = ptr[rows + 1] - ptr[rows]
    new_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    take = np.concatenate([np.arange(ptr[r], ptr[r + 1]) for r in rows]) if len(rows) else np.zeros(0, np.int64)
    return new_ptr, ids[take].astype(np.int32)


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


def encode(sentences, templates, index=None, labels=(), min_count=1, normalize="none"):
    """Encode sentences. With index=None the attribute dictionary is built from these
    sentences (training). Returns (Dataset, FeatureIndex)."""
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    seq_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    if index is None:
        index, parts = FeatureIndex.build(sentences, templates, min_count, normalize)
    else:
        parts = index.encode(sentences)
    return Dataset(seq_ptr, encode_labels(sentences, labels), *parts), index
