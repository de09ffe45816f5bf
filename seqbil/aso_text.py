"""The unlabeled text of `seqbil aso` (aso.py) as read, and a split's features over it.

The text stays as read: per column, the id of every token's value among the column's
distinct values (4 bytes a token), and the sentence offsets (read_text,
read_columns). A split's features are never encoded for the whole text but CHUNK
positions at a time (SplitText). Texts read apart, as the shards of dask/aso.py read
theirs, are put over shared value tables (merge_values), so that their key counts add
up to those of the whole text (merge_key_counts).
"""
import os
from array import array
from types import SimpleNamespace

import numpy as np

from ._kernels.features import TextPositions
from .errors import InputError
from .features.functions import apply_chain
from .features.index import LAYOUT, FeatureIndex, Vocabulary, merge_counts
from .formats.conll import split_fields
from .formats.sentence import Corpus, Ids
from .formats.textio import read_lines, sha256_file

CHUNK = 1 << 16  # positions whose features are encoded at a time (a few MB)


def read_text(paths, unit, encoding="utf-8", progress=None, keep=None):
    """(Corpus of one column, records): raw text, a sentence per line; unit "token":
    tokens separated by white space; "char": the characters, white space dropped.
    Empty lines are skipped. records: per file its path, sha256, bytes, lines and
    units read. keep=(lo, hi): only sentences lo..hi-1 of the files one after another
    go into the corpus (a shard's; the records are of the whole text)."""
    # as array('i') / ('q'): 4 bytes a token while reading, not a list's 8
    lengths, ids, vocab, records = array("q"), array("i"), Ids(), []
    get = vocab.__getitem__
    lo, hi = keep if keep is not None else (0, float("inf"))
    j = 0
    for path in paths:
        n_lines = n_units = 0
        for _, line in read_lines(path, encoding):
            units = line.split() if unit == "token" else [c for c in line if not c.isspace()]
            if not units:
                continue
            if lo <= j < hi:
                lengths.append(len(units))
                ids.extend(map(get, units))
            j += 1
            n_lines += 1
            n_units += len(units)
            if progress is not None:
                progress(len(units))
        records.append(_file_record(path, n_lines, n_units))
    return _unlabeled_corpus(lengths, [list(vocab)], [ids]), records


def _unlabeled_corpus(lengths, values, columns):
    """A Corpus of arrays read (array('q') lengths, array('i') per column) without a
    copy; its labels all -1 without memory of their own."""
    ids = [np.frombuffer(c, dtype=np.int32) if len(c) else np.zeros(0, np.int32) for c in columns]
    lengths = np.frombuffer(lengths, dtype=np.int64) if len(lengths) else np.zeros(0, np.int64)
    P = int(lengths.sum())
    return Corpus(lengths, values, ids, [], np.broadcast_to(np.int32(-1), (P,)))


def read_columns(paths, encoding="utf-8", progress=None, keep=None):
    """(Corpus, records) of column files (a token per line, fields separated by spaces
    or tabs as in CoNLL files, formats/conll.py: split_fields; a blank line between
    sentences), every field a column: e.g. raw text tagged by seqbil models (`seqbil
    tag` writes the input's fields and the label). keep: as read_text's."""
    lengths, records, width = array("q"), [], None
    columns, vocab = [], []
    lo, hi = keep if keep is not None else (0, float("inf"))
    j = 0
    for path in paths:
        n_sent = n_units = n = 0
        for number, line in read_lines(path, encoding):
            fields = split_fields(line)
            if not fields:
                if n:
                    if lo <= j < hi:
                        lengths.append(n)
                    j += 1
                    n_sent += 1
                    n = 0
                continue
            if width is None:
                width = len(fields)
                columns, vocab = [array("i") for _ in fields], [Ids() for _ in fields]
            if len(fields) != width:
                raise InputError(path, number, f"expected {width} fields, found {len(fields)}")
            if lo <= j < hi:
                for col, ids, value in zip(columns, vocab, fields):
                    col.append(ids[value])
            n += 1
            n_units += 1
            if progress is not None:
                progress(1)
        if n:
            if lo <= j < hi:
                lengths.append(n)
            j += 1
            n_sent += 1
        records.append(_file_record(path, n_sent, n_units, columns=width))
    return _unlabeled_corpus(lengths, [list(v) for v in vocab], columns), records


def _file_record(path, sentences, units, **extra):
    """What the structure's provenance keeps of a file read; a file without text is an
    error."""
    if not sentences:
        raise InputError(path, 0, "no text in the file")
    return {"path": os.path.abspath(path), "sha256": sha256_file(path), "bytes": os.path.getsize(path),
            "sentences": sentences, "units": units, **extra}


class SplitText:
    """A split's templates over the text as read (a Corpus of value ids): its feature
    index, counted over the text CHUNK positions at a time, and its features (CSR)
    or other columns' values at any positions, without the text's field matrix or
    its encoding (features.pyx: TextPositions).

    The index is the one FeatureIndex.build(corpus, templates, min_count) gives:
    the same vocabularies (each field's values in order of first appearance), keys
    and sorted key tables, so the same attribute ids."""

    def __init__(self, corpus, templates, chunk=CHUNK, fields=None):
        """fields: {Field: (Vocabulary, id of each of the column's values)} shared by the
        splits of a text (those that read the same field share its vocabulary)."""
        self.corpus, self.templates, self.chunk = corpus, templates, max(1, int(chunk))
        self.bounds = corpus.offsets()
        self.P = int(self.bounds[-1])
        K = templates.reach
        fields = {} if fields is None else fields
        vocabularies, luts = {}, []
        for f in templates.fields:
            if f not in fields:
                values = corpus.values[f.column]
                if f.chain:
                    values = [apply_chain(f.chain, v) for v in values]
                fields[f] = Vocabulary.build(values)
            vocabularies[f], local = fields[f]
            luts.append(local + np.int32(2 * K + 1))  # layout boundaries-first: see field_matrix
        self.index = FeatureIndex(templates, vocabularies, [None, (np.zeros(0, np.int64), np.zeros(1, np.int64))],
                                  "none", LAYOUT)
        t_ptr, r_row, r_col, r_mult = self.index.specs[0]
        fields = self.index.field_list
        f_ptr = np.zeros(len(fields) + 1, np.int64)
        np.cumsum([len(x) for x in luts], out=f_ptr[1:])
        self.positions = TextPositions(self.bounds, corpus.ids,
                                       np.concatenate(luts) if luts else np.zeros(0, np.int32), f_ptr,
                                       np.array([f.column for f in fields], np.int32), K, t_ptr, r_row, r_col, r_mult)
        self.T = len(t_ptr) - 1
        # a template of one macro (not hashed) has the field id it reads as its key
        self.radix = [0] * self.T
        for t in range(self.T):
            if t_ptr[t + 1] - t_ptr[t] == 1 and r_mult[t_ptr[t]] != 0:
                self.radix[t] = len(vocabularies[fields[r_col[t_ptr[t]]]]) + 2 * K + 1

    def buffers(self, n_values=0):
        """What one chunk needs, reused from chunk to chunk (allocations per chunk would
        fragment the heap): its positions (int64), its CSR and n_values value arrays."""
        C = max(1, min(self.chunk, self.P))
        return SimpleNamespace(at=np.empty(C, np.int64), ptr=np.empty(C + 1, np.int64),
                               ids=np.empty(C * self.T, np.int32),
                               values=[np.empty(C, np.int32) for _ in range(n_values)])

    def chunks(self, order=None, bufs=1):
        """(positions, buffers), CHUNK positions at a time: of the text in order, or of
        `order`. The positions are written to the buffers (buffers()), which take turns
        when there are several (bufs: a list, or how many)."""
        bufs = [self.buffers() for _ in range(bufs)] if isinstance(bufs, int) else bufs
        n = self.P if order is None else len(order)
        for k, a in enumerate(range(0, n, self.chunk)):
            buf = bufs[k % len(bufs)]
            at = buf.at[:min(self.chunk, n - a)]
            if order is None:
                np.add(np.arange(len(at), dtype=np.int64), a, out=at)
            else:
                np.copyto(at, order[a:a + len(at)])
            yield at, buf

    def count(self, min_count):
        """Count every template's keys over the text and keep those seen min_count
        times as the index's tables (FeatureIndex.build's, sorted per template)."""
        return self.set_counts(self.key_counts(), min_count)

    def key_counts(self):
        """Per template, (its distinct keys, sorted, and how often each is seen) over the
        text. The keys are of the field vocabularies: texts whose vocabularies are the
        same (merge_values) give counts that add up (merge_key_counts)."""
        single = [np.zeros(r, np.int64) if r else None for r in self.radix]
        seen = [(np.zeros(0, np.int64), np.zeros(0, np.int64)) for _ in range(self.T)]
        buf = np.empty((min(self.chunk, self.P), self.T), np.int64)
        for pos, _ in self.chunks():
            keys = buf[:len(pos)]
            self.positions.keys(pos, keys)
            for t in range(self.T):
                if single[t] is not None:
                    single[t] += np.bincount(keys[:, t], minlength=self.radix[t])
                    continue
                u, c = np.unique(keys[:, t], return_counts=True)
                seen[t] = merge_counts([seen[t], (u, c)])
        out = []
        for t in range(self.T):
            if single[t] is not None:
                keys = np.flatnonzero(single[t]).astype(np.int64)
                out.append((keys, single[t][keys]))
            else:
                out.append(seen[t])
        return out

    def set_counts(self, counts, min_count):
        """The index's tables from key_counts (of this text, or merged over texts with
        the same vocabularies): the keys seen min_count times."""
        min_count = max(1, min_count)
        tables, ptr = [], [0]
        self.direct, direct_ptr = [], [0]
        for t, (keys, n) in enumerate(counts):
            keys = keys[n >= min_count]
            if self.radix[t]:
                lut = np.full(self.radix[t], -1, np.int32)
                lut[keys] = ptr[-1] + np.arange(len(keys), dtype=np.int32)
                self.direct.append(lut)
            tables.append(keys)
            ptr.append(ptr[-1] + len(keys))
            direct_ptr.append(direct_ptr[-1] + self.radix[t])
        self.index.tables[0] = (np.concatenate(tables) if tables else np.zeros(0, np.int64), np.array(ptr, np.int64))
        self.direct = np.concatenate(self.direct) if self.direct else np.zeros(0, np.int32)
        self.direct_ptr = np.array(direct_ptr, np.int64)
        return self.index

    def csr(self, positions, buf=None):
        """(ptr, ids): the split's attributes at the positions, as index.encode gives
        them for those tokens (in buf's arrays when given)."""
        table, ptr = self.index.tables[0]
        if buf is None:
            return self.positions.csr(positions, self.direct, self.direct_ptr, table, ptr)
        return self.positions.csr(positions, self.direct, self.direct_ptr, table, ptr, buf.ptr, buf.ids)

    def values(self, positions, column, table, offset, out=None):
        """table[the value of `column` `offset` tokens after each position], -1
        outside its sentence (in out[:len(positions)] when given)."""
        out = np.empty(len(positions), np.int32) if out is None else out[:len(positions)]
        self.positions.values(positions, column, table, offset, out)
        return out


def merge_key_counts(parts):
    """SplitText.key_counts of several texts (with the same vocabularies) added up, as
    key_counts of the texts one after another gives them."""
    out = None
    for part in parts:
        out = list(part) if out is None else [merge_counts([a, b]) for a, b in zip(out, part)]
    return out


def merge_values(corpora):
    """The corpora (of the same columns) over shared value tables: each column's values
    in order of first appearance over the corpora one after another, as reading their
    texts one after another gives them; every corpus's ids renumbered in place."""
    if not corpora:
        return corpora
    for c in range(len(corpora[0].values)):
        values, luts = merged_values([corpus.values[c] for corpus in corpora])
        for corpus, lut in zip(corpora, luts):
            corpus.values[c] = values
            corpus.ids[c] = lut[corpus.ids[c]] if len(lut) else corpus.ids[c]
    return corpora


def merged_values(lists):
    """(the values of several lists in order of first appearance over the lists one
    after another, and per list the id of each of its values among them)."""
    merged = Ids()
    luts = [np.fromiter(map(merged.__getitem__, values), dtype=np.int32, count=len(values)) for values in lists]
    return list(merged), luts
