"""Items given as attributes, the way python-crfsuite's ItemSequence takes them
(``to_item`` in its _pycrfsuite.pyx), flattened for a whole corpus at once.

An item is a dict or a list of attribute names. In a dict, a string (or bytes) value
is joined to its key by ``:`` and weighs 1 (``{'w': 'the'}`` is ``w:the``); a number or
a bool is the key's weight (``{'g': 0.5}``, ``{'t': True}`` is ``t`` with 1); a nested
dict, list or set is flattened with the key and ``:`` before each of its names
(``{'n': {'b': 'x'}}`` is ``n:b:x``, ``{'l': ['p', 'len:3']}`` gives ``l:p`` and
``l:len:3``). In a list, each name weighs 1, and seqbil also takes a (name, weight)
pair, as CRFsuite's attribute files give them. No weight is ever parsed out of a name.

The result is CSR by item: the id of every entry's name among the corpus's distinct
names, in order of first appearance, and its weight.
"""
cimport cython
from cpython cimport array
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t
import array as pyarray

import numpy as np


cdef inline void _push_i(array.array a, int v):
    cdef Py_ssize_t n = len(a)
    array.resize_smart(a, n + 1)
    a.data.as_ints[n] = v


cdef inline void _push_f(array.array a, float v):
    cdef Py_ssize_t n = len(a)
    array.resize_smart(a, n + 1)
    a.data.as_floats[n] = v


cdef inline void _push_q(array.array a, long long v):
    cdef Py_ssize_t n = len(a)
    array.resize_smart(a, n + 1)
    a.data.as_longlongs[n] = v


cdef str _text(object x):
    if type(x) is str:
        return <str>x
    if isinstance(x, str):
        return str(x)
    if isinstance(x, bytes):
        return (<bytes>x).decode("utf-8", "surrogateescape")
    raise TypeError(f"an attribute name is a string or bytes, not {type(x).__name__} ({x!r})")


cdef class Flattener:
    """Sequences of items flattened one after another (add), then the arrays
    (result): a reader's sentences need not all be in memory at once. Weights are
    kept (float32) only from the first that is not 1: most corpora have none."""
    cdef dict vocab
    cdef list names
    cdef array.array ids, vals, lengths, ptr
    cdef bint weighted

    def __cinit__(self):
        self.vocab, self.names = {}, []
        self.ids, self.vals = pyarray.array("i"), pyarray.array("f")
        self.lengths, self.ptr = pyarray.array("q"), pyarray.array("q", [0])
        self.weighted = False

    cdef int _add(self, str name, double value) except -1:
        cdef object found = self.vocab.get(name)
        cdef int i
        cdef Py_ssize_t k
        if not isfinite(value):
            raise ValueError(f"the weight of {name!r} is {value}: weights are finite numbers")
        if found is None:
            i = len(self.names)
            self.vocab[name] = i
            self.names.append(name)
        else:
            i = <int>found
        if value != 1.0 and not self.weighted:  # the earlier entries weigh 1
            self.weighted = True
            self.vals = pyarray.array("f", bytes(0))
            array.resize(self.vals, len(self.ids))
            for k in range(len(self.ids)):
                self.vals.data.as_floats[k] = 1.0
        _push_i(self.ids, i)
        if self.weighted:
            _push_f(self.vals, value)
        return 0

    cdef int item(self, object x, str prefix) except -1:
        cdef str key
        if isinstance(x, dict):
            for k, value in (<dict>x).items():
                key = prefix + _text(k)
                if isinstance(value, (dict, list, set)):
                    self.item(value, key + ":")
                elif isinstance(value, (str, bytes)):
                    self._add(key + ":" + _text(value), 1.0)
                else:
                    try:
                        weight = float(value)
                    except TypeError:
                        raise TypeError(f"the value of {key!r} is {type(value).__name__} ({value!r}): give a "
                                        f"string, a number, a bool, or a dict, list or set of them") from None
                    self._add(key, weight)
        elif isinstance(x, (str, bytes)) and prefix == "":
            raise TypeError(f"an item is a dict or a list of attribute names, not a string ({x!r})")
        else:
            for k in x:
                if isinstance(k, tuple) and len(<tuple>k) == 2:
                    self._add(prefix + _text((<tuple>k)[0]), float((<tuple>k)[1]))
                else:
                    self._add(prefix + _text(k), 1.0)
        return 0

    def add(self, seq, number=None):
        """Append one sequence of items; returns its length. number: how messages name
        the sequence (default: its place among those added, from 1)."""
        cdef long long n = 0
        where = len(self.lengths) + 1 if number is None else number
        if isinstance(seq, (str, bytes, dict)):
            raise TypeError(f"sequence {where}: a sequence is a list of items, not {type(seq).__name__}")
        for item in seq:
            n += 1
            try:
                self.item(item, "")
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"sequence {where}, item {n}: {exc}") from None
            _push_q(self.ptr, len(self.ids))
        _push_q(self.lengths, n)
        return n

    def result(self):
        """(names, lengths, ptr, ids, values) of the sequences added (see flatten)."""
        values = np.frombuffer(self.vals, dtype=np.float32) if self.weighted else None
        return (self.names, np.frombuffer(self.lengths, dtype=np.int64), np.frombuffer(self.ptr, dtype=np.int64),
                np.frombuffer(self.ids, dtype=np.int32), values)


def flatten(sequences):
    """(names, lengths, ptr, ids, values) of an iterable of sequences of items: the
    distinct attribute names in order of first appearance; int64 [N] the items per
    sequence; int64 [P+1] and int32 [E]: the entries of item p are ids[ptr[p]:ptr[p+1]];
    float32 [E] their weights, None when all are 1. Raises TypeError or ValueError
    naming the sequence and item (from 1) of a malformed item."""
    cdef Flattener f = Flattener()
    for seq in sequences:
        f.add(seq)
    return f.result()


@cython.boundscheck(False)
@cython.wraparound(False)
def merge(const int64_t[::1] ptr, const int32_t[::1] ids, const float[::1] vals,
          const int64_t[::1] item_ptr, const int32_t[:, ::1] item_attr, const float[::1] item_vals):
    """The CSR (ptr, ids, vals) of the template attributes of every position with
    the attributes of its items appended: entry e of position p (item_ptr[p] <= e <
    item_ptr[p+1]) brings attribute item_attr[k, e] of each item template k where
    that is not -1, with weight item_vals[e]. vals or item_vals may be empty: every
    weight 1. Returns (ptr, ids, vals); vals is None when neither had weights."""
    cdef Py_ssize_t P = ptr.shape[0] - 1, K = item_attr.shape[0], p, e, k, n = 0
    cdef bint weighted = vals.shape[0] > 0 or item_vals.shape[0] > 0
    for k in range(K):
        for e in range(item_attr.shape[1]):
            n += item_attr[k, e] >= 0
    out_ptr = np.empty(P + 1, dtype=np.int64)
    out_ids = np.empty(ids.shape[0] + n, dtype=np.int32)
    out_vals = np.empty(ids.shape[0] + n if weighted else 0, dtype=np.float32)
    cdef int64_t[::1] optr = out_ptr
    cdef int32_t[::1] oids = out_ids
    cdef float[::1] ovals = out_vals
    cdef Py_ssize_t q = 0, a
    with nogil:
        optr[0] = 0
        for p in range(P):
            for a in range(ptr[p], ptr[p + 1]):
                oids[q] = ids[a]
                if weighted:
                    ovals[q] = vals[a] if vals.shape[0] > 0 else 1.0
                q += 1
            for k in range(K):
                for e in range(item_ptr[p], item_ptr[p + 1]):
                    if item_attr[k, e] >= 0:
                        oids[q] = item_attr[k, e]
                        if weighted:
                            ovals[q] = item_vals[e] if item_vals.shape[0] > 0 else 1.0
                        q += 1
            optr[p + 1] = q
    return out_ptr, out_ids, out_vals if weighted else None
