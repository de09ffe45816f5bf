"""The SVD step of `seqbil aso` (aso.py): the top left singular vectors of the
auxiliary problems' weights M = [u_1 ... u_m], taken from its column blocks as they
are (never side by side in one d x m array), in a canonical basis, so that one input
gives one structure whatever order a machine's or a cluster's sums took.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh

from ._kernels.aso import ColumnBlocks
from .errors import SeqbilError


class BlockColumns(LinearOperator):
    """[U_1 U_2 ...]: column blocks (d x B_k float32 each) side by side as a linear
    operator, for the SVD without the matrix itself. The products with vectors, which
    the Lanczos iterations repeat, run in cython_ext/aso.pyx (ColumnBlocks: summed in
    double, rows or blocks shared among the threads of `pool`); with matrices (once,
    at the end), block by block in numpy."""

    def __init__(self, blocks, pool=None, jobs=1):
        self.blocks = [np.ascontiguousarray(b, dtype=np.float32) for b in blocks]
        self.kernel = ColumnBlocks(self.blocks)
        self.cuts = np.concatenate([[0], np.cumsum([b.shape[1] for b in self.blocks])])
        self.pool, self.jobs = pool, jobs if pool is not None else 1
        super().__init__(np.dtype(np.float32), (self.kernel.d, self.kernel.m))

    def _shared(self, fn, n):
        """fn(lo, hi) over 0..n, cut into a range per thread of the pool."""
        cuts = np.linspace(0, n, min(self.jobs, max(n, 1)) + 1).astype(int)
        if len(cuts) <= 2:
            return fn(0, n)
        for f in [self.pool.submit(fn, lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:])]:
            f.result()

    def _matvec(self, x):
        x = np.ascontiguousarray(x.reshape(-1), dtype=np.float32)
        out = np.empty(self.shape[0], np.float64)
        self._shared(lambda lo, hi: self.kernel.matvec(x, out, lo, hi), self.shape[0])
        return out.astype(np.float32)

    def _rmatvec(self, y):
        y = np.ascontiguousarray(y.reshape(-1), dtype=np.float32)
        out = np.empty(self.shape[1], np.float64)
        self._shared(lambda lo, hi: self.kernel.rmatvec(y, out, lo, hi), len(self.blocks))
        return out.astype(np.float32)

    def _matmat(self, X, rows=8192):
        X = X.astype(np.float32)
        out = np.zeros((self.shape[0], X.shape[1]), dtype=np.float32)
        for r in range(0, self.shape[0], rows):  # a few rows at a time: no d x k temporaries
            part = out[r:r + rows]
            for b, lo, hi in zip(self.blocks, self.cuts[:-1], self.cuts[1:]):
                part += b[r:r + rows] @ X[lo:hi]
        return out

    def _rmatmat(self, Y):
        return np.vstack([b.T @ Y.astype(np.float32) for b in self.blocks])

    def _adjoint(self):
        return LinearOperator((self.shape[1], self.shape[0]), matvec=self._rmatvec, rmatvec=self._matvec,
                              matmat=self._rmatmat, rmatmat=self._matmat, dtype=self.dtype)


def top_singular(M, h, seed=0, jobs=1, rows=8192):
    """The top-h left singular vectors of M (d x m, or the list of its column blocks,
    d x m_k each, never put side by side) as the columns of a d x h matrix, largest
    singular value first, in the canonical form of `canonical_basis`; and the
    singular values.

    As scipy's svds (ARPACK) computes them: the top-h eigenvectors of M^T M (m x m;
    or of M M^T when d < m) by Lanczos in float32 (eigsh, M's products by
    BlockColumns with `jobs` threads), then the SVD of the d x h (or m x h) product
    with M. That last SVD comes here from its h x h Gram matrix in float64 and is
    applied in place a few rows at a time, so the one d x h array beside M is the
    result."""
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return _top_singular(BlockColumns(M if isinstance(M, (list, tuple)) else [M], pool, max(1, jobs)), h, seed,
                             rows)


def _top_singular(A, h, seed, rows):
    d, m = A.shape
    k = min(h, min(A.shape) - 1)
    if k < 1:
        raise SeqbilError(f"a split has {d} features and {m} problems: too few for a structure")
    # float32 throughout: a copy of M in float64 would double the peak memory
    v0 = np.random.default_rng(seed).standard_normal(min(A.shape)).astype(A.dtype)
    if d >= m:
        gram = LinearOperator((m, m), matvec=lambda x: A.rmatvec(A.matvec(x)), dtype=A.dtype)
    else:
        gram = LinearOperator((d, d), matvec=lambda x: A.matvec(A.rmatvec(x)), dtype=A.dtype)
    _, E = eigsh(gram, k=k, tol=0, v0=v0)
    E, _ = np.linalg.qr(E)  # ARPACK's vectors are orthonormal only up to its tolerance
    # d >= m: M E = U S R^T, U = (M E) R / S; else M^T E = V S R^T, U = E R
    B = A.matmat(E) if d >= m else A.rmatmat(E)
    G = np.zeros((k, k))
    for r in range(0, B.shape[0], rows):
        part = B[r:r + rows].astype(np.float64)
        G += part.T @ part
    lam, R = np.linalg.eigh(G)
    order = np.argsort(-lam)
    s = np.sqrt(np.maximum(lam[order], 0))
    R = R[:, order]
    if d >= m:
        U, R = B, R / np.where(s > 0, s, 1)
    else:
        U = np.ascontiguousarray(E, dtype=np.float32)
    for r in range(0, d, rows):
        U[r:r + rows] = U[r:r + rows].astype(np.float64) @ R
    U = np.ascontiguousarray(U, dtype=np.float32)
    canonical_basis(U, s)
    return U, s


TIE = 1e-4  # singular values closer than this times the largest are one (float32 Lanczos)


def canonical_basis(U, s, tie=TIE):
    """Put the orthonormal columns of U (d x k, float32, changed in place), the
    singular vectors for the values s (descending), in a form that depends on the
    subspaces they span and not on the order a solver's sums took.

    A singular vector is defined up to its sign, and the vectors of equal singular
    values only up to a rotation of their span: on another machine (another BLAS
    kernel) or another number of shards, a solver may return them flipped, swapped or
    mixed. So the columns are taken in clusters of tied values (consecutive values
    within `tie` times the largest), and each cluster's span P gets the basis
    Gram-Schmidt gives from the projections P e_i of the coordinate axes, taken in
    index order: at each step the first axis whose remaining projection is at least
    half the largest one (a rule that a rounding error cannot flip, unlike "the
    largest"). So each column has a positive entry where its axis was chosen, and a
    cluster of one is its vector with that sign. Directions of singular value ~0
    (below `tie` times the largest) say nothing about M and are any basis of its
    null space: they are set to 0."""
    k = U.shape[1]
    top = float(s[0]) if k else 0.0
    start = 0
    for j in range(1, k + 1):
        if j < k and s[start] - s[j] <= tie * top:
            continue
        if s[start] <= tie * top:
            U[:, start:] = 0
            return
        C = U[:, start:j].astype(np.float64)  # row i: the coordinates of P e_i in the cluster's basis
        Q = np.zeros((j - start, j - start))
        for c in range(j - start):
            norms = np.sqrt(np.einsum("ij,ij->i", C, C))
            i = int(np.argmax(norms >= 0.5 * norms.max()))
            q = C[i] / norms[i]
            Q[:, c] = q
            C -= np.outer(C @ q, q)
        # Q: orthonormal (each q is orthogonal to those before); U Q spans what U spans
        U[:, start:j] = (U[:, start:j].astype(np.float64) @ Q).astype(np.float32)
        start = j
