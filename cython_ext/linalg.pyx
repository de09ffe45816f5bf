"""Vector operations of the optimizer (seqbil/optimize.py) in plain loops.

numpy's dot calls a BLAS, whose threads (OpenBLAS starts one per core) keep spinning
after each call and take the cores the CRF's gradient threads run on: per L-BFGS
iteration on CoNLL-2000 that cost a third more time. A plain loop also sums in
liblbfgs's order (vecdot in arithmetic_ansi.h), so the iterates are liblbfgs's exactly.
"""


def dot(const double[::1] a, const double[::1] b):
    """sum of a[k] * b[k], in order."""
    if a.shape[0] != b.shape[0]:
        raise ValueError("the vectors differ in length")
    cdef Py_ssize_t k
    cdef double s = 0.0
    with nogil:
        for k in range(a.shape[0]):
            s += a[k] * b[k]
    return s
