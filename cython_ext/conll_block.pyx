# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A block of CoNLL input tagged without a Python object per line or token: the lines
and fields found in the bytes, each field's cell looked up in its vocabulary by a hash
of its bytes, the padded field matrix of features/index.py: field_matrix written
directly, and the output (each line, its separator, its label) written from the input
bytes. formats/conll.py is the reference: the same lines, fields, sentences and output,
which tests/test_tag_fast.py checks; input that reader would refuse (a line of the
wrong number of fields) is left to it (split_block returns None)."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy


cdef inline uint64_t _hash(const unsigned char* s, Py_ssize_t n) nogil:
    """FNV-1a, 64 bits."""
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ s[i]) * 1099511628211ULL
    return h


cdef class Vocab:
    """Byte strings -> their position in the list given (open addressing, linear
    probing, a table of twice the strings' number rounded up to a power of 2)."""
    cdef bytes data
    cdef const unsigned char* d
    cdef int64_t[::1] start
    cdef int32_t[::1] slots
    cdef uint64_t mask

    def __init__(self, strings):
        self.data = b"".join(strings)
        self.d = self.data
        start = np.zeros(len(strings) + 1, dtype=np.int64)
        np.cumsum([len(s) for s in strings], out=start[1:])
        self.start = start
        size = 1
        while size < 2 * len(strings) + 2:
            size *= 2
        self.mask = size - 1
        self.slots = np.full(size, -1, dtype=np.int32)
        cdef Py_ssize_t i
        cdef uint64_t h
        for i in range(len(strings)):
            if self.find(self.d + self.start[i], self.start[i + 1] - self.start[i]) >= 0:
                continue  # a string given twice keeps its first position
            h = _hash(self.d + self.start[i], self.start[i + 1] - self.start[i]) & self.mask
            while self.slots[h] >= 0:
                h = (h + 1) & self.mask
            self.slots[h] = <int32_t>i

    cdef inline int32_t find(self, const unsigned char* s, Py_ssize_t n):
        cdef uint64_t h = _hash(s, n) & self.mask
        cdef int32_t i
        while True:
            i = self.slots[h]
            if i < 0:
                return -1
            if self.start[i + 1] - self.start[i] == n and memcmp(self.d + self.start[i], s, n) == 0:
                return i
            h = (h + 1) & self.mask

    def lookup(self, bytes s):
        return self.find(s, len(s))


cdef inline bint _blank(unsigned char c) nogil:
    return c == 32 or c == 9


cdef inline Py_ssize_t _line(const unsigned char* raw, Py_ssize_t i, Py_ssize_t n, Py_ssize_t* e, Py_ssize_t* b,
                             int64_t* fs, int64_t* fe) noexcept nogil:
    """The line that starts at i: e its line feed (or n), b its end less line-end
    characters; fs, fe the starts and ends of its first 32 fields. Returns how many
    fields it has."""
    cdef Py_ssize_t a, nf = 0
    e[0] = i
    while e[0] < n and raw[e[0]] != 10:
        e[0] += 1
    b[0] = e[0]
    while b[0] > i and (raw[b[0] - 1] == 13 or raw[b[0] - 1] == 10):
        b[0] -= 1
    a = i
    while a < b[0]:
        while a < b[0] and _blank(raw[a]):
            a += 1
        if a < b[0]:
            if nf < 32:
                fs[nf] = a
            while a < b[0] and not _blank(raw[a]):
                a += 1
            if nf < 32:
                fe[nf] = a
            nf += 1
    return nf


def split_block(const unsigned char[::1] raw, Py_ssize_t n_fields, Py_ssize_t label_at, Py_ssize_t K,
                list vocabs, const int32_t[::1] columns, Vocab labels=None):
    """(matrix, index, seq_ptr, line_start, line_end, sep) of a block of CoNLL lines:
    matrix[f, q] the id of field f (its column columns[f], its vocabulary vocabs[f]) at
    padded position q, in the boundaries-first layout (_B-k: k-1, _B+k: K+k-1, unknown:
    2K, value v: 2K+1+v); index[p] the padded position of token p; seq_ptr the tokens'
    sentences; line_start/line_end the bytes of token p's line as seqbil tag writes it
    (line end and trailing blanks cut); sep[p] 1 for a tab after it, else 0 (a space).
    None when a line has a number of fields other than n_fields - 1 or n_fields, or
    than the sentence's first line. With labels (a Vocab of the model's labels), a 7th
    array: known[p], the id of token p's label field among them, -1 where the line has
    no label field or one the model does not have (forced decoding)."""
    cdef Py_ssize_t n = raw.shape[0], i, j, a, b, e, nf, width = -1, P = 0, N = 0, F = len(vocabs), f, c, cell
    cdef Py_ssize_t q
    cdef int64_t tokens_in = 0
    if n_fields > 32 or n_fields < 1:
        return None
    cdef int64_t[32] fs, fe  # the fields of a line (n_fields is at most 32 here)
    # first pass: count tokens and sentences, check field counts
    i = 0
    while i < n:
        nf = _line(&raw[0], i, n, &e, &b, fs, fe)
        if nf == 0:
            if tokens_in:
                N += 1
                tokens_in = 0
                width = -1
        else:
            if width < 0:
                if nf != n_fields and nf != n_fields - 1:
                    return None
                width = nf
            elif nf != width:
                return None
            tokens_in += 1
            P += 1
        i = e + 1
    if tokens_in:
        N += 1
    matrix = np.empty((F, P + 2 * K * N), dtype=np.int32)
    index_arr = np.empty(P, dtype=np.int64)
    seq_arr = np.zeros(N + 1, dtype=np.int64)
    ls_arr, le_arr = np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64)
    sep_arr = np.zeros(P, dtype=np.uint8)
    known_arr = np.full(P if labels is not None else 0, -1, dtype=np.int32)
    cdef int32_t[::1] known = known_arr
    cdef int32_t[:, ::1] M = matrix
    cdef int64_t[::1] index = index_arr, seq = seq_arr, ls = ls_arr, le = le_arr
    cdef unsigned char[::1] sep = sep_arr
    cdef Vocab v
    cdef int32_t value
    cdef Py_ssize_t p = 0, s = 0, base = 0, k, col
    tokens_in = 0
    width = -1
    i = 0
    while True:
        nf = 0 if i >= n else _line(&raw[0], i, n, &e, &b, fs, fe)
        if nf == 0:
            if tokens_in:  # the sentence ends: its boundary positions
                for f in range(F):
                    for k in range(1, K + 1):
                        M[f, base + K - k] = <int32_t>(k - 1)
                        M[f, base + K + tokens_in + k - 1] = <int32_t>(K + k - 1)
                base += tokens_in + 2 * K
                s += 1
                seq[s] = p
                tokens_in = 0
                width = -1
            if i >= n:
                break
        else:
            if width < 0:
                width = nf
            q = base + K + tokens_in
            index[p] = q
            for f in range(F):
                col = columns[f]
                if width == n_fields - 1 and col > label_at:  # no label field: the columns after it move up
                    col -= 1
                v = <Vocab>vocabs[f]
                value = v.find(&raw[fs[col]], fe[col] - fs[col])
                M[f, q] = <int32_t>(2 * K + 1 + value) if value >= 0 else <int32_t>(2 * K)
            if labels is not None and width == n_fields:
                known[p] = labels.find(&raw[fs[label_at]], fe[label_at] - fs[label_at])
            # the line as written: trailing blanks cut; a tab in it makes the separator a tab
            while b > i and _blank(raw[b - 1]):
                b -= 1
            ls[p], le[p] = i, b
            for a in range(i, b):
                if raw[a] == 9:
                    sep[p] = 1
                    break
            tokens_in += 1
            p += 1
        i = e + 1
    if labels is not None:
        return matrix, index_arr, seq_arr, ls_arr, le_arr, sep_arr, known_arr
    return matrix, index_arr, seq_arr, ls_arr, le_arr, sep_arr


def write_block(const unsigned char[::1] raw, const int64_t[::1] seq_ptr, const int64_t[::1] line_start,
                const int64_t[::1] line_end, const unsigned char[::1] sep, const int32_t[::1] best, list labels):
    """The output of a block: each token's line, its separator and its label, a blank
    line after each sentence."""
    cdef Py_ssize_t L = len(labels), P = line_start.shape[0], N = seq_ptr.shape[0] - 1, p, j, y, size = N
    lab_data = b"".join(labels)
    lab_start_arr = np.zeros(L + 1, dtype=np.int64)
    np.cumsum([len(x) for x in labels], out=lab_start_arr[1:])
    cdef int64_t[::1] lab_start = lab_start_arr
    cdef const unsigned char* lab = lab_data
    for p in range(P):
        y = best[p]
        size += line_end[p] - line_start[p] + 2 + lab_start[y + 1] - lab_start[y]
    out = bytearray(size)
    cdef unsigned char[::1] o = out
    cdef Py_ssize_t at = 0, n
    for j in range(N):
        for p in range(seq_ptr[j], seq_ptr[j + 1]):
            n = line_end[p] - line_start[p]
            if n:
                memcpy(&o[at], &raw[line_start[p]], n)
            at += n
            o[at] = 9 if sep[p] else 32
            at += 1
            y = best[p]
            n = lab_start[y + 1] - lab_start[y]
            memcpy(&o[at], lab + lab_start[y], n)
            at += n
            o[at] = 10
            at += 1
        o[at] = 10
        at += 1
    return bytes(out)


def char_block(const uint32_t[::1] cps, const unsigned char[::1] space, const int32_t[:, ::1] values, Py_ssize_t K):
    """The field matrix of a block of raw text for a segmentation model: each line a
    sentence of its characters, whitespace (space[c], c < 65536: str.isspace) left out.
    values[f, i]: the id of field f for the character cps[i] (-1: unknown). Returns
    (matrix, index, seq_ptr, char_at, seq_line, n_lines): char_at[p] the position in
    cps of token p, seq_line[j] the line of sentence j (lines without characters have
    no sentence)."""
    cdef Py_ssize_t n = cps.shape[0], F = values.shape[0], i, P = 0, N = 0, lines = 0, f, k
    cdef bint in_line = False, has = False
    cdef uint32_t c
    for i in range(n):
        c = cps[i]
        if c == 10:
            if has:
                N += 1
            lines += 1
            has = False
            in_line = False
        else:
            in_line = True
            if not (c < 65536 and space[c]):
                P += 1
                has = True
    if in_line or has:
        if has:
            N += 1
        lines += 1
    matrix = np.empty((F, P + 2 * K * N), dtype=np.int32)
    index_arr = np.empty(P, dtype=np.int64)
    seq_arr = np.zeros(N + 1, dtype=np.int64)
    at_arr = np.empty(P, dtype=np.int64)
    line_arr = np.empty(N, dtype=np.int64)
    cdef int32_t[:, ::1] M = matrix
    cdef int64_t[::1] index = index_arr, seq = seq_arr, at = at_arr, seq_line = line_arr
    cdef Py_ssize_t p = 0, s = 0, base = 0, line = 0, tokens_in = 0, q
    cdef int32_t v
    for i in range(n + 1):
        c = cps[i] if i < n else 10
        if c == 10:
            if i == n and not in_line and not tokens_in:
                break
            if tokens_in:
                for f in range(F):
                    for k in range(1, K + 1):
                        M[f, base + K - k] = <int32_t>(k - 1)
                        M[f, base + K + tokens_in + k - 1] = <int32_t>(K + k - 1)
                base += tokens_in + 2 * K
                seq_line[s] = line
                s += 1
                seq[s] = p
                tokens_in = 0
            line += 1
            in_line = False
        else:
            in_line = True
            if c < 65536 and space[c]:
                continue
            q = base + K + tokens_in
            index[p] = q
            at[p] = i
            for f in range(F):
                v = values[f, i]
                M[f, q] = <int32_t>(2 * K + 1 + v) if v >= 0 else <int32_t>(2 * K)
            tokens_in += 1
            p += 1
    return matrix, index_arr, seq_arr, at_arr, line_arr, lines


def write_chars(const uint32_t[::1] cps, const int64_t[::1] char_at, const int64_t[::1] seq_ptr,
                const int64_t[::1] seq_line, Py_ssize_t n_lines, const int32_t[::1] best,
                const unsigned char[::1] ends, const unsigned char[::1] starts):
    """The segmented lines (code points): a sentence's characters with two spaces where
    a word ends (after E or S, or before B or S, as formats/sighan.py: words_from_tags
    reads any tag sequence, and where the input had white space: two characters not
    next to each other in cps), each line ended by a line feed; lines without
    characters empty."""
    cdef Py_ssize_t P = char_at.shape[0], N = seq_ptr.shape[0] - 1, j, p, line = 0, o = 0
    out_arr = np.empty(3 * P + n_lines, dtype=np.uint32)
    cdef uint32_t[::1] out = out_arr
    for j in range(N):
        while line < seq_line[j]:
            out[o] = 10
            o += 1
            line += 1
        for p in range(seq_ptr[j], seq_ptr[j + 1]):
            out[o] = cps[char_at[p]]
            o += 1
            if p + 1 < seq_ptr[j + 1] and (ends[best[p]] or starts[best[p + 1]] or char_at[p + 1] != char_at[p] + 1):
                out[o] = 32
                out[o + 1] = 32
                o += 2
        out[o] = 10
        o += 1
        line += 1
    while line < n_lines:
        out[o] = 10
        o += 1
        line += 1
    return out_arr[:o]
