"""Corpora encoded once into integer arrays (CSR by position), so that training
epochs never touch a string again."""
from dataclasses import dataclass
from itertools import count, repeat

import numpy as np

from .errors import InputError


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


def _csr(id_matrix):
    """CSR arrays from a (positions x templates) matrix of ids, -1 meaning absent."""
    present = id_matrix >= 0
    ptr = np.zeros(id_matrix.shape[0] + 1, dtype=np.int64)
    np.cumsum(present.sum(axis=1), out=ptr[1:])
    return ptr, id_matrix[present].astype(np.int32)


class Vocabulary:
    """Attribute strings and their integer ids (the attribute dictionary)."""

    def __init__(self, strings=()):
        self.strings = list(strings)
        self.index = dict(zip(self.strings, range(len(self.strings))))

    def __len__(self):
        return len(self.strings)

    def lookup(self, strings):
        """Ids of the strings, -1 for unknown ones."""
        return np.fromiter(map(self.index.get, strings, repeat(-1)), dtype=np.int64, count=len(strings))

    @classmethod
    def build(cls, string_lists, min_count=1):
        """(vocabulary, id lists) for training data: ids in order of first appearance,
        attributes seen fewer than min_count times dropped (id -1)."""
        seen, ticket = {}, count()
        # setdefault with a fresh ticket per call: new strings get increasing numbers
        raw = [np.fromiter(map(seen.setdefault, strings, ticket), dtype=np.int64, count=len(strings))
               for strings in string_lists]
        tickets = np.fromiter(seen.values(), dtype=np.int64, count=len(seen))
        dense = [np.searchsorted(tickets, r) for r in raw]
        strings = list(seen)
        if min_count > 1 and strings:
            counts = np.bincount(np.concatenate(dense), minlength=len(strings))
            keep = counts >= min_count
            remap = np.where(keep, np.cumsum(keep) - 1, -1)
            dense = [remap[d] for d in dense]
            strings = [s for s, k in zip(strings, keep) if k]
        return cls(strings), dense


def encode_labels(sentences, labels, source):
    """Label ids of all tokens; unknown labels raise InputError."""
    index = {label: i for i, label in enumerate(labels)}
    out = []
    for s in sentences:
        if s.labels is None:
            out.extend([-1] * len(s))
            continue
        try:
            out.extend(index[y] for y in s.labels)
        except KeyError as exc:
            raise InputError(source, s.line, f"label {exc.args[0]!r} is not in the model's label set "
                             f"({', '.join(labels)})") from None
    return np.asarray(out, dtype=np.int32)


def encode(sentences, templates, vocabularies, labels, source="<data>", min_count=1):
    """Encode sentences. With vocabularies=None the attribute dictionaries are built
    from these sentences (training); returns (Dataset, (vocab0, vocab1))."""
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    seq_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    n_pos = int(seq_ptr[-1])
    parts, vocabs = [], []
    for order in (0, 1):
        strings = templates.expand(sentences, order)
        if vocabularies is None:
            vocab, ids = Vocabulary.build(strings, min_count)
        else:
            vocab = vocabularies[order]
            ids = [vocab.lookup(s) for s in strings]
        matrix = np.stack(ids, axis=1) if ids else np.zeros((n_pos, 0), dtype=np.int64)
        parts.extend(_csr(matrix))
        vocabs.append(vocab)
    data = Dataset(seq_ptr, encode_labels(sentences, labels, source), *parts)
    return data, tuple(vocabs)
