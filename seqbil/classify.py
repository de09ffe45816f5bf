"""Binary document classification with passive-aggressive learners on word embeddings.

The learners of Denis & Ralaivola (EACL 2017). A document is a bag of words x (p
counts); an embedding Phi (k x p) maps it to Phi x, and the classifier is
`sign(<w, Phi x>)` (no bias, as in the paper).

- `PA(C)`: PA-II (Crammer et al. 2006) on the fixed representation Phi x (the paper's
  baseline), or on x itself when no Phi is given (its "one-hot" rows).
- `RPA(C, lam)`: the re-embedding PA, Algorithm 1, which moves w and the columns of
  Phi of each document's words by the closed forms of eqs. (11) and (12).

The passes run in cython_ext/classify.pyx; this module checks inputs and owns the
arrays.

References
----------
Denis, P. & Ralaivola, L. (2017). Online learning of task-specific word
representations with a joint biconvex passive-aggressive algorithm. EACL 2017.

Examples
--------
>>> import numpy as np
>>> from seqbil.classify import RPA, Bags
>>> docs = Bags.from_lists([[0, 3, 3], [1, 2]], n_words=4)
>>> y = np.array([1, -1])
>>> Phi0 = np.random.default_rng(0).normal(size=(2, 4))
>>> model = RPA(C=1.0, lam=0.1).fit(docs, y, Phi0, epochs=5, seed=0)
>>> model.predict(docs), model.score(docs, y)
(array([ 1, -1]), 1.0)
"""
import numpy as np
import scipy.sparse as sp

from seqbil._kernels.classify import pa_pass, rpa_pass


class Bags:
    """Documents as bags of word ids, in CSR form.

    Document i holds the word ids `ids[ptr[i]:ptr[i + 1]]` (int32, each <
    `n_words`) with the counts `vals` (float64; every count 1 when none are given).
    A word repeated within a document is merged into one entry, its counts summed:
    x_t has one coordinate per word, which the closed forms rely on.

    Parameters
    ----------
    ptr : array-like of int
        Where each document's ids start, rising from 0 to `len(ids)`.
    ids : array-like of int
        The word ids, each >= 0.
    counts : array-like of float, default=None
        The count of each id, finite; default: 1 each.
    n_words : int, default=None
        The vocabulary size p; default: the largest id plus 1.

    Attributes
    ----------
    csr : scipy.sparse.csr_matrix
        The documents x words matrix of counts.
    ptr : ndarray of int64
        Where each document's entries start.
    ids : ndarray of int32
        The word ids, sorted within each document.
    vals : ndarray of float64
        Their counts.

    Raises
    ------
    ValueError
        For `ptr` that does not rise from 0 to `len(ids)`, counts that are not finite
        or not as long as `ids`, or ids below 0 or not below `n_words`.

    Examples
    --------
    >>> from seqbil.classify import Bags
    >>> docs = Bags.from_lists([[0, 3, 3], [1, 2]], n_words=4)
    >>> docs.ids, docs.vals
    (array([0, 3, 1, 2], dtype=int32), array([1., 2., 1., 1.]))
    """

    def __init__(self, ptr, ids, counts=None, n_words=None):
        ptr = np.asarray(ptr)
        ids = np.asarray(ids)
        if ptr.ndim != 1 or ids.ndim != 1 or len(ptr) == 0 or ptr[0] != 0 or ptr[-1] != len(ids) \
                or np.any(np.diff(ptr) < 0):
            raise ValueError("Bags: ptr must rise from 0 to len(ids)")
        if counts is None:
            counts = np.ones(len(ids))
        counts = np.asarray(counts, dtype=np.float64)
        if counts.shape != ids.shape or not np.all(np.isfinite(counts)):
            raise ValueError("Bags: counts must be finite and as long as ids")
        if len(ids) and ids.min() < 0:
            raise ValueError("Bags: word ids must be >= 0")
        if n_words is None:
            n_words = int(ids.max()) + 1 if len(ids) else 0
        if len(ids) and ids.max() >= n_words:
            raise ValueError(f"Bags: word id {int(ids.max())} >= n_words = {n_words}")
        m = sp.csr_matrix((counts, ids.astype(np.int64), ptr.astype(np.int64)), shape=(len(ptr) - 1, n_words))
        m.sum_duplicates()  # also sorts each document's ids
        self.csr = m
        self.ptr = m.indptr.astype(np.int64)
        self.ids = m.indices.astype(np.int32)
        self.vals = m.data.astype(np.float64)

    @classmethod
    def from_lists(cls, docs, n_words=None, counts=None):
        """Make bags from a list of word-id lists (and optionally a list of count lists).

        Parameters
        ----------
        docs : list of lists of int
            The word ids of each document.
        n_words : int, default=None
            The vocabulary size; default: the largest id plus 1.
        counts : list of lists of float, default=None
            The count of each id; default: 1 each.

        Returns
        -------
        bags : Bags
            The documents.
        """
        ptr = np.zeros(len(docs) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(d) for d in docs])
        ids = np.fromiter((i for d in docs for i in d), dtype=np.int64, count=int(ptr[-1]))
        vals = None if counts is None else np.fromiter((c for d in counts for c in d), dtype=np.float64)
        return cls(ptr, ids, vals, n_words)

    @property
    def n_docs(self):
        """The number of documents n."""
        return self.csr.shape[0]

    @property
    def n_words(self):
        """The vocabulary size p."""
        return self.csr.shape[1]

    def __len__(self):
        return self.n_docs

    def subset(self, rows):
        """The documents `rows` (indices or a boolean mask), in that order.

        Parameters
        ----------
        rows : array-like of int or bool
            The documents to take.

        Returns
        -------
        bags : Bags
            Those documents, over the same words.
        """
        m = self.csr[np.asarray(rows)]
        return Bags(m.indptr, m.indices, m.data, self.n_words)

    def normalized(self):
        """The same bags scaled to unit L2 norm (empty documents stay empty).

        Returns
        -------
        bags : Bags
            The scaled documents.
        """
        norms = np.sqrt(np.asarray(self.csr.multiply(self.csr).sum(axis=1)).ravel())
        scale = np.repeat(np.where(norms > 0, 1 / np.where(norms > 0, norms, 1), 0), np.diff(self.ptr))
        return Bags(self.ptr, self.ids, self.vals * scale, self.n_words)


def _labels(y, docs):
    if not isinstance(docs, Bags):
        raise ValueError(f"documents must be a Bags, not {type(docs).__name__}")
    y = np.asarray(y)
    if y.shape != (docs.n_docs,):
        raise ValueError(f"{y.shape[0] if y.ndim else 'no'} labels for {docs.n_docs} documents")
    if not np.all((y == 1) | (y == -1)):
        raise ValueError(f"labels must be +1 or -1, got {sorted(set(np.unique(y).tolist()) - {1, -1})[:5]}")
    return y.astype(np.float64)


def _positive(name, value):
    value = float(value)
    if not value > 0 or not np.isfinite(value):
        raise ValueError(f"{name} must be a positive number, got {value}")
    return value


def _embedding(Phi0, docs):
    """E = Phi0^T as a fresh C-contiguous p x k float64 array (the kernel's layout)."""
    Phi0 = np.asarray(Phi0, dtype=np.float64)
    if Phi0.ndim != 2 or Phi0.shape[1] != docs.n_words:
        raise ValueError(f"Phi0 must be k x p with p = {docs.n_words} words, got shape {Phi0.shape}")
    if not np.all(np.isfinite(Phi0)):
        raise ValueError("Phi0 has non-finite entries")
    # a copy even when Phi0.T is already C-contiguous (k = 1, or Phi0 in Fortran order):
    # training must not write into the caller's matrix
    return np.array(Phi0.T, order="C", copy=True)


class _Online:
    """Shared by PA and RPA: passes over the documents in a seeded random order (data
    order when seed is None), continued by partial_fit; predictions sign(score), with
    score > 0 read as +1."""

    def _orders(self, n, epochs):
        if int(epochs) != epochs or epochs < 0:
            raise ValueError(f"epochs must be a whole number >= 0, got {epochs}")
        for _ in range(int(epochs)):
            yield (np.arange(n) if self._rng is None else self._rng.permutation(n)).astype(np.int64)

    def _check_fitted(self, docs):
        if self.w_ is None:
            raise ValueError("fit the model first")
        if not isinstance(docs, Bags):
            raise ValueError(f"documents must be a Bags, not {type(docs).__name__}")
        if docs.n_words != self.n_words_:
            raise ValueError(f"the model has {self.n_words_} words, the documents {docs.n_words}")

    def embed(self, docs):
        """Phi x of every document (n x k); x itself (sparse) for one-hot PA.

        Parameters
        ----------
        docs : Bags
            The documents, over the words the model was fitted on.

        Returns
        -------
        X : ndarray of shape (n, k) or scipy.sparse.csr_matrix
            The representations.
        """
        self._check_fitted(docs)
        return docs.csr if self.E_ is None else np.asarray(docs.csr @ self.E_)

    def decision_function(self, docs):
        """The score `<w, Phi x>` of every document.

        Parameters
        ----------
        docs : Bags
            The documents, over the words the model was fitted on.

        Returns
        -------
        scores : ndarray of shape (n,)
            The scores.
        """
        return np.asarray(self.embed(docs) @ self.w_).ravel()

    def predict(self, docs):
        """The predicted label of every document: `sign(<w, Phi x>)`, a score > 0 read as +1.

        Parameters
        ----------
        docs : Bags
            The documents, over the words the model was fitted on.

        Returns
        -------
        y : ndarray of shape (n,)
            +1 or -1 per document.
        """
        return np.where(self.decision_function(docs) > 0, 1, -1)

    def score(self, docs, y):
        """Accuracy on (docs, y).

        Parameters
        ----------
        docs : Bags
            The documents.
        y : array-like of shape (n,)
            Their labels, +1 or -1.

        Returns
        -------
        accuracy : float
            The fraction of the documents whose predicted label is y's.
        """
        y = _labels(y, docs)
        return float(np.mean(self.predict(docs) == y))

    @property
    def Phi_(self):
        """The embedding as the paper writes it, k x p (a view of E_, p x k)."""
        return None if self.E_ is None else self.E_.T


class PA(_Online):
    """PA-II (Crammer et al. 2006) on a fixed representation of the documents.

    Per document, the closed form of problem (6) with Phi fixed, eq. (11) of Denis &
    Ralaivola: `w += tau y Phi x`, `tau = l / (|Phi x|^2 + 1/(2C))`.
    `fit(docs, y, Phi0)` learns on `Phi0 x` (the paper's PA baseline); `fit(docs, y)`
    with `Phi0=None` learns one weight per word (Phi = I, "one-hot").

    Parameters
    ----------
    C : float, default=1.0
        The aggressiveness C of PA-II, > 0.

    Attributes
    ----------
    w_ : ndarray of shape (k,) or (p,)
        The weights.
    E_ : ndarray of shape (p, k) or None
        The embedding, transposed (None for one-hot).
    Phi_ : ndarray of shape (k, p) or None
        The embedding as the paper writes it (a view of `E_`).
    n_words_ : int
        The vocabulary size p of the documents fitted on.

    References
    ----------
    - Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S. & Singer, Y. (2006).
      Online passive-aggressive algorithms. JMLR 7.
    - Denis, P. & Ralaivola, L. (2017). Online learning of task-specific word
      representations with a joint biconvex passive-aggressive algorithm. EACL 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from seqbil.classify import PA, Bags
    >>> docs = Bags.from_lists([[0, 3, 3], [1, 2]], n_words=4)
    >>> y = np.array([1, -1])
    >>> PA(C=1.0).fit(docs, y, epochs=3).predict(docs)
    array([ 1, -1])
    """

    def __init__(self, C=1.0):
        self.C = _positive("C", C)
        self.w_ = self.E_ = None

    def fit(self, docs, y, Phi0=None, epochs=1, seed=0):
        """Start from w = 0 and make `epochs` passes over the documents.

        Parameters
        ----------
        docs : Bags
            The documents.
        y : array-like of shape (n,)
            Their labels, +1 or -1.
        Phi0 : array-like of shape (k, p), default=None
            The fixed embedding (copied); None: one weight per word.
        epochs : int, default=1
            The number of passes.
        seed : int or None, default=0
            Each pass visits the documents in a random order drawn from `seed`; None:
            in data order.

        Returns
        -------
        self : PA
            The fitted model.
        """
        y = _labels(y, docs)
        self.E_ = None if Phi0 is None else _embedding(Phi0, docs)
        self.n_words_ = docs.n_words
        self.w_ = np.zeros(docs.n_words if Phi0 is None else self.E_.shape[1])
        self._rng = None if seed is None else np.random.default_rng(seed)
        return self.partial_fit(docs, y, epochs)

    def partial_fit(self, docs, y, epochs=1):
        """More passes, continuing the weights and the shuffling of `fit`.

        Parameters
        ----------
        docs : Bags
            The documents, over the words the model was fitted on.
        y : array-like of shape (n,)
            Their labels, +1 or -1.
        epochs : int, default=1
            The number of passes.

        Returns
        -------
        self : PA
            The model.
        """
        self._check_fitted(docs)
        y = _labels(y, docs)
        k = len(self.w_)
        for order in self._orders(docs.n_docs, epochs):
            if self.E_ is None:
                pa_pass(docs.ptr, docs.ids, docs.vals, y, order, self.w_, self.C)
            else:  # the RPA kernel without its Phi-step: one w-step per document
                rpa_pass(docs.ptr, docs.ids, docs.vals, y, order, self.w_, self.E_, self.C, 1.0, 1, 0.0, True,
                         False, np.empty((_longest(docs), k)), np.empty(3 * k))
        return self


def _longest(docs):
    return int(np.diff(docs.ptr).max()) if docs.n_docs else 0


class RPA(_Online):
    """Re-embedding passive-aggressive learner, Algorithm 1 of Denis & Ralaivola (2017).

    Per document t with a positive hinge loss (eq. 2), alternate up to `inner` times
    the w-step, problem (6) solved by eq. (11), with Phi fixed, and the Phi-step,
    problem (7) solved by eq. (12), with w fixed, stopping when the objective Q_t of
    eq. (3) changes by at most `tol` or the margin holds. Only the columns of Phi of
    the document's words change.

    Parameters
    ----------
    C : float, default=1.0
        The aggressiveness C of the PA-II steps, > 0.
    lam : float, default=1.0
        The lambda of eq. (1a), > 0: the larger, the less Phi moves.
    inner : int, default=50
        The most alternations per document, >= 1.
    anchored : bool, default=True
        True: every inner step is anchored at (w_t, Phi_t), as problems (6) and (7)
        are written, so the loop is exact block-coordinate descent on problem (5).
        Section 2.3 says the loop "is guaranteed to converge to a local optimum of
        (5)"; that holds for this reading only. False: Algorithm 1's listing as
        written, each step a PA-II step from the current inner iterate, which keeps
        raising the margin instead of minimising (5).
    tol : float, default=1e-6
        The alternation stops when Q_t changes by at most `tol`.

    Attributes
    ----------
    w_ : ndarray of shape (k,)
        The weights.
    E_ : ndarray of shape (p, k)
        The embedding, transposed.
    Phi_ : ndarray of shape (k, p)
        The embedding as the paper writes it (a view of `E_`).
    n_words_ : int
        The vocabulary size p of the documents fitted on.
    steps_ : int
        The inner iterations run since `fit`.

    References
    ----------
    Denis, P. & Ralaivola, L. (2017). Online learning of task-specific word
    representations with a joint biconvex passive-aggressive algorithm. EACL 2017.
    """

    def __init__(self, C=1.0, lam=1.0, inner=50, anchored=True, tol=1e-6):
        self.C = _positive("C", C)
        self.lam = _positive("lam", lam)
        if int(inner) != inner or inner < 1:
            raise ValueError(f"inner must be a whole number >= 1, got {inner}")
        self.inner = int(inner)
        self.anchored = bool(anchored)
        self.tol = float(tol)
        self.w_ = self.E_ = None
        self.steps_ = 0

    def fit(self, docs, y, Phi0, epochs=1, seed=0):
        """Start from w = 0 and a copy of Phi0, and make `epochs` passes.

        Parameters
        ----------
        docs : Bags
            The documents.
        y : array-like of shape (n,)
            Their labels, +1 or -1.
        Phi0 : array-like of shape (k, p)
            The initial embedding (copied: it is not written to).
        epochs : int, default=1
            The number of passes.
        seed : int or None, default=0
            Each pass visits the documents in a random order drawn from `seed`; None:
            in data order.

        Returns
        -------
        self : RPA
            The fitted model.
        """
        y = _labels(y, docs)
        self.E_ = _embedding(Phi0, docs)
        self.n_words_ = docs.n_words
        self.w_ = np.zeros(self.E_.shape[1])
        self._rng = None if seed is None else np.random.default_rng(seed)
        self.steps_ = 0
        return self.partial_fit(docs, y, epochs)

    def partial_fit(self, docs, y, epochs=1):
        """More passes, continuing w, Phi and the shuffling of `fit`.

        Parameters
        ----------
        docs : Bags
            The documents, over the words the model was fitted on.
        y : array-like of shape (n,)
            Their labels, +1 or -1.
        epochs : int, default=1
            The number of passes.

        Returns
        -------
        self : RPA
            The model.
        """
        self._check_fitted(docs)
        y = _labels(y, docs)
        k = len(self.w_)
        saved, work = np.empty((_longest(docs), k)), np.empty(3 * k)
        for order in self._orders(docs.n_docs, epochs):
            _, steps = rpa_pass(docs.ptr, docs.ids, docs.vals, y, order, self.w_, self.E_, self.C, self.lam,
                                self.inner, self.tol, self.anchored, True, saved, work)
            self.steps_ += steps
        return self
