"""A sentence as read from a corpus: attribute columns, labels when known, and what
the writer needs to echo the input back with predictions; and a whole corpus stored
column-wise as integer arrays (Corpus), the form training and encoding work on."""
from array import array
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from .._kernels.items import Flattener, flatten


@dataclass
class Sentence:
    columns: list          # columns[c][i]: field c of token i (None for the label column)
    labels: list | None    # gold labels, or None when the input has none
    line: int              # line number of the first token, for messages
    rows: list = field(default_factory=list)  # CoNLL: the fields of each input line
    lines: list | None = None  # CoNLL read from a file: the text of each line, for the writer
    # tokens given as attributes (CRFsuite's files, feature dicts): an item per token,
    # as _kernels.items.flatten takes it; columns is then empty
    items: list | None = None
    # raw text to segment: the positions of the characters that had white space before
    # them in the input, word boundaries that the segmented output keeps
    breaks: tuple = ()

    def __len__(self):
        if self.items is not None:
            return len(self.items)
        # (the label column is None: with the label first, the first column is not a token's)
        return next((len(c) for c in self.columns if c is not None), len(self.labels or ()))


@dataclass
class Items:
    """The attributes of every token of a corpus, CSR by token: the entries of token p
    are ids[ptr[p]:ptr[p+1]], ids into names (the corpus's distinct attribute names,
    in order of first appearance), with weights vals (float32; None: all 1)."""
    names: list
    ptr: np.ndarray   # int64 [P+1]
    ids: np.ndarray   # int32 [E]
    vals: np.ndarray | None = None

    @classmethod
    def of(cls, sequences):
        """(Items, lengths) of sequences of items (see _kernels.items.flatten)."""
        names, lengths, ptr, ids, vals = flatten(sequences)
        return cls(names, ptr, ids, vals), lengths


class Ids(dict):
    """Value -> id in order of first appearance: a value not seen yet takes the next id."""
    __slots__ = ()

    def __missing__(self, value):
        self[value] = n = len(self)
        return n


class Corpus:
    """Sentences column by column: per column, its distinct values in order of first
    appearance and the id among them of every token's value (int32); the labels
    likewise (-1 for the tokens of sentences without labels); the sentence lengths.

    As lists of strings a corpus costs about a hundred bytes per token and cell (a
    str object per character of Chinese text); this way, four, and every distinct
    value is there once for the functions and vocabularies that run per value."""

    def __init__(self, lengths, values, ids, label_values, label_ids):
        self.lengths = lengths            # int64 [N]
        self.values = values              # per column: distinct values, None for the label column
        self.ids = ids                    # per column: int32 [P], None for the label column
        self.label_values = label_values  # distinct labels
        self.label_ids = label_ids        # int32 [P]
        self.tasks = None                 # multi-task corpora: int32 [N], the task of each sentence
        self.task_names = None            # and the names of the tasks
        self.items = None                 # Items: tokens given as attributes (no columns then)

    def with_task(self, names, task):
        """This corpus with every sentence in task `task` of the tasks `names`."""
        self.task_names, self.tasks = list(names), np.full(len(self), task, dtype=np.int32)
        return self

    def task_values(self):
        """(task names, the task of every token among them): what %task reads."""
        if self.tasks is None:
            raise ValueError("the %task macro reads the task of a sentence: this corpus has none")
        return self.task_names, np.repeat(self.tasks, self.lengths)

    @classmethod
    def joined(cls, corpora, names):
        """One corpus of several, sentence j of corpora[k] being in task names[k]."""
        n_fields = max(c.n_fields for c in corpora)
        values, ids = [], []
        for col in range(n_fields):
            present = [c for c in corpora if col < c.n_fields and c.values[col] is not None]
            if not present:
                values.append(None)
                ids.append(None)
                continue
            merged, parts = Ids(), []
            for c in corpora:
                if col >= c.n_fields or c.values[col] is None:
                    parts.append(np.full(c.n_tokens, -1, dtype=np.int32))
                    continue
                lut = np.fromiter(map(merged.__getitem__, c.values[col]), dtype=np.int32, count=len(c.values[col]))
                parts.append(np.where(c.ids[col] >= 0, lut[c.ids[col]], -1).astype(np.int32))
            values.append(list(merged))
            ids.append(np.concatenate(parts))
        labels, label_parts = Ids(), []
        for c in corpora:
            lut = np.append(np.fromiter(map(labels.__getitem__, c.label_values), dtype=np.int32,
                                        count=len(c.label_values)), np.int32(-1))
            label_parts.append(lut[c.label_ids])  # -1 (no label) reads the last entry, -1
        out = cls(np.concatenate([c.lengths for c in corpora]), values, ids, list(labels),
                  np.concatenate(label_parts))
        out.task_names = list(names)
        out.tasks = np.concatenate([np.full(len(c), k, dtype=np.int32) for k, c in enumerate(corpora)])
        return out

    def __len__(self):
        return len(self.lengths)

    @property
    def n_fields(self):
        return len(self.values)

    @property
    def n_tokens(self):
        return int(self.lengths.sum())

    @classmethod
    def of(cls, sentences):
        """The corpus of an iterable of Sentence (consumed one at a time, so a reader's
        sentences are never all in memory), or the corpus itself."""
        if isinstance(sentences, Corpus):
            return sentences
        lengths, columns, labels = array("q"), [], array("i")
        vocab, label_vocab, present, items, n_items = [], Ids(), set(), Flattener(), 0
        for s in sentences:
            n = len(s)
            lengths.append(n)
            if s.items is not None:
                items.add(s.items, s.line)
                n_items += 1
            for c in range(len(columns), len(s.columns)):  # a column first seen here: earlier tokens miss it
                columns.append(array("i", repeat(-1, len(labels))))
                vocab.append(Ids())
            for c, (out, ids) in enumerate(zip(columns, vocab)):
                col = s.columns[c] if c < len(s.columns) else None
                if col is None:
                    out.extend(repeat(-1, n))
                elif len(col) != n:
                    raise ValueError(f"sentence at line {s.line}: column {c} has {len(col)} cells for {n} tokens")
                else:
                    out.extend(map(ids.__getitem__, col))
                    present.add(c)
            labels.extend(repeat(-1, n) if s.labels is None else map(label_vocab.__getitem__, s.labels))
        values = [list(v) if c in present else None for c, v in enumerate(vocab)]
        ids = [np.frombuffer(col, dtype=np.int32) if v is not None else None for col, v in zip(columns, values)]
        out = cls(np.frombuffer(lengths, dtype=np.int64), values, ids, list(label_vocab),
                  np.frombuffer(labels, dtype=np.int32))
        if n_items:
            if n_items != len(out):
                raise ValueError("some sentences are given as attributes, others as columns")
            names, _, ptr, ids, vals = items.result()
            out.items = Items(names, ptr, ids, vals)
        return out

    @classmethod
    def of_items(cls, sequences, labels=None):
        """The corpus of sequences of items (see Items.of), with their label
        sequences when given (None: unlabeled)."""
        items, lengths = Items.of(sequences)
        label_vocab, label_ids = Ids(), array("i")
        if labels is not None:
            labels = list(labels)
            if len(labels) != len(lengths):
                raise ValueError(f"{len(lengths)} sequences but {len(labels)} label sequences")
            for j, (y, n) in enumerate(zip(labels, lengths), 1):
                if isinstance(y, str) or len(y) != n:
                    raise ValueError(f"sequence {j}: {n} items but "
                                     f"{'a string' if isinstance(y, str) else len(y)} labels")
                label_ids.extend(map(label_vocab.__getitem__, y))
        else:
            label_ids.extend(repeat(-1, int(lengths.sum())))
        out = cls(lengths, [], [], list(label_vocab), np.frombuffer(label_ids, dtype=np.int32))
        out.items = items
        return out

    def column(self, c, fold=None):
        """(distinct values, id of each token's value) of column c, the values passed
        through fold (a function of a string) and merged where they fold alike; the
        values stay in order of first appearance in the corpus."""
        if not self.lengths.sum():
            return [], np.zeros(0, dtype=np.int32)
        values, ids = (self.values[c], self.ids[c]) if c < len(self.values) else (None, None)
        if values is None or ids.min() < 0:
            raise ValueError(f"column {c} is missing in some sentences")
        if fold is None:
            return values, ids
        folded = Ids()
        to_folded = np.fromiter(map(folded.__getitem__, map(fold, values)), dtype=np.int32, count=len(values))
        return list(folded), to_folded[ids]

    def part(self, lo, hi):
        """The corpus of sentences lo..hi-1, as Corpus.of would make it of them: each
        column's values (and the labels) only those the sentences hold, in their order
        of first appearance. (Not for tokens given as attributes.)"""
        if self.items is not None or self.tasks is not None:
            raise ValueError("part() takes the sentences of a single-task corpus of columns")
        bounds = self.offsets()
        start, end = int(bounds[lo]), int(bounds[hi])

        def compact(values, ids):
            if values is None:
                return None, None
            ids = ids[start:end]
            present = ids >= 0
            if not present.any() and values is not self.label_values:  # a column only other sentences have
                return None, None
            first = np.unique(ids[present], return_index=True)
            order = first[0][np.argsort(first[1])]  # the values present, in order of first appearance
            lut = np.full(len(values) + 1, -1, dtype=np.int32)
            lut[order] = np.arange(len(order), dtype=np.int32)
            return [values[v] for v in order.tolist()], lut[ids]  # (-1 reads the last entry, -1)
        columns = [compact(v, i) for v, i in zip(self.values, self.ids)]
        label_values, label_ids = compact(self.label_values, self.label_ids)
        return Corpus(self.lengths[lo:hi].copy(), [v for v, _ in columns], [i for _, i in columns], label_values,
                      label_ids)

    def head(self, n):
        """The corpus of the first n sentences (part(0, n))."""
        return self.part(0, n)

    def column_sequences(self, c):
        """The values of column c in every sentence, one list at a time."""
        strings = np.array(list(self.values[c]) + [None], dtype=object)
        bounds = self.offsets()
        for j in range(len(self.lengths)):
            yield strings[self.ids[c][bounds[j]:bounds[j + 1]]].tolist()

    def offsets(self):
        """int64 [N+1]: the tokens of sentence j are offsets[j]:offsets[j+1]."""
        out = np.zeros(len(self.lengths) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=out[1:])
        return out

    def label_sequences(self):
        """The labels of every sentence, one list at a time (None: no labels)."""
        strings = np.array(self.label_values + [None], dtype=object)
        bounds = self.offsets()
        for j in range(len(self.lengths)):
            ids = self.label_ids[bounds[j]:bounds[j + 1]]
            yield None if len(ids) and ids[0] < 0 else strings[ids].tolist()
