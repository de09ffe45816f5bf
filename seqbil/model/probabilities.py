"""A model's probabilities: p(y | x) = exp(score(y) / T) / Z(x), a CRF's own
distribution with T = 1 (Lafferty, McCallum & Pereira 2001); for the online learners,
whose scores are not log-probabilities, T is fitted after training on held-out data
(the token marginals' negative log-likelihood: calibration.py)."""
import numpy as np

from .._kernels.decode import marginals_corpus, path_scores, viterbi_best
from ..errors import SeqbilError

NBEST_MAX = 10 ** 5  # the k-best lattice holds k entries per position and label


def check_k(k):
    """How many labellings nbest may be asked for: a whole number from 1 to NBEST_MAX."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= NBEST_MAX:
        raise SeqbilError(f"k must be a whole number from 1 to {NBEST_MAX:,}, got {k!r}")


def known_labels(data, force):
    """What forced decoding keeps, or None without force: what the encoded data says it
    knows (data.known and data.label_sets, as a segmentation model's input gives them,
    formats/sighan.py: known_of), or else its label ids (-1 where a token has no label
    or one the model does not have)."""
    if not force:
        return None
    if data.known is not None:
        return data.known, data.label_sets
    return np.ascontiguousarray(data.labels, dtype=np.int32)


def known_parts(known):
    """(ids, sets) for the kernels (cython_ext/known.pxd) of what known_labels gives."""
    if known is None or not isinstance(known, tuple):
        return known, None
    return known


class Probabilities:
    """The probabilities of a Model's labelings (Model takes these methods from here):
    token marginals, the probability of a labeling, log Z, by sum-product
    forward-backward over the scores Viterbi maximizes (cython_ext/fb.pxd)."""

    def marginals(self, tokens, known=None):
        """The marginal probability of every label at every token of one sentence.

        Sum-product forward-backward over the same scores Viterbi maximizes, divided
        by `temperature`.

        Parameters
        ----------
        tokens : list or str
            A sentence, as for `tag`.
        known : list, default=None
            Known labels (forced decoding), as for `tag`: the marginals are then
            conditioned on them (a known label's row is 1 at that label).

        Returns
        -------
        marginals : ndarray of shape (len(tokens), len(labels))
            Rows summing to 1, columns in the order of `labels`.

        Notes
        -----
        The model's distribution is `p(y | x) = exp(score(y) / T) / Z(x)`, `T` being
        `temperature`: a CRF's own (Lafferty et al. 2001) with `T = 1`; for the
        online learners, whose scores are not log-probabilities, `T` is fitted after
        training on held-out data (the token marginals' negative log-likelihood).

        References
        ----------
        Lafferty, J., McCallum, A. & Pereira, F. (2001). Conditional random fields:
        probabilistic models for segmenting and labeling sequence data. ICML 2001.

        Examples
        --------
        >>> import numpy as np
        >>> import seqbil
        >>> model = seqbil.train(epochs=1)
        >>> marginals = model.marginals([["He", "PRP"], ["reckons", "VBZ"]])
        >>> marginals.shape == (2, len(model.labels))
        True
        >>> bool(np.allclose(marginals.sum(axis=1), 1))
        True
        >>> [model.labels[i] for i in marginals.argmax(axis=1)]
        ['B-NP', 'B-VP']
        """
        sentences, force = self.given(tokens, known)
        return self.predict_marginals(sentences, force=force)[0][2]

    def probability(self, tokens, labels):
        """The probability of one labeling of one sentence, p(labels | tokens).

        Parameters
        ----------
        tokens : list or str
            A sentence, as for `tag`.
        labels : list of str
            A label of the model's for each token.

        Returns
        -------
        p : float
            `exp(score / temperature - log_partition(tokens))`, `score` being the
            labeling's score (as `nbest` gives it); 1.0 for an empty sentence.

        Raises
        ------
        SeqbilError
            When there is not one label per token, or a label is not the model's.

        Examples
        --------
        >>> import math
        >>> import seqbil
        >>> model = seqbil.train(epochs=1)
        >>> tokens = [["He", "PRP"], ["reckons", "VBZ"]]
        >>> [(labels, score)] = model.nbest(tokens, 1)
        >>> p = model.probability(tokens, labels)
        >>> math.isclose(p, math.exp(score / model.temperature - model.log_partition(tokens)))
        True
        """
        sentence = self.format.sentence(tokens, 1)
        if len(labels) != len(sentence):
            raise SeqbilError(f"{len(labels)} labels for {len(sentence)} tokens")
        unknown = [y for y in labels if y not in self.labels]
        if unknown:
            raise SeqbilError(f"label {unknown[0]!r} is not one of the model's ({', '.join(self.labels)})")
        if not len(sentence):
            return 1.0
        data = self.encode([sentence])
        index = {y: i for i, y in enumerate(self.labels)}
        score = np.zeros(1)
        path_scores(data, self.decoding, np.array([index[y] for y in labels], dtype=np.int32), score)
        return float(np.exp(score[0] / self.temperature - self.decode_marginals(data)[3][0]))

    def log_partition(self, tokens):
        """log Z(x) of one sentence.

        The log of the sum of `exp(score(y) / temperature)` over all its labelings y.

        Parameters
        ----------
        tokens : list or str
            A sentence, as for `tag`.

        Returns
        -------
        log_z : float
            log Z(x); 0.0 for an empty sentence.
        """
        return self.predict_marginals([self.format.sentence(tokens, 1)])[0][3]

    def decode_marginals(self, data, known=None):
        """For an encoded Dataset: the best label ids (as decode), their score per
        sequence, the marginals (positions x labels) and log Z per sequence; with known
        labels (forced decoding) over the labellings that keep them, so the marginals
        and the best path's probability are conditioned on them."""
        self.require_task()
        out, best = np.zeros(data.n_positions, dtype=np.int32), np.zeros(data.n_sequences)
        marginals, logz = np.zeros((data.n_positions, len(self.labels))), np.zeros(data.n_sequences)
        marginals_corpus(data, self.decoding, self.temperature, out, best, marginals, logz, *known_parts(known))
        return out, best, marginals, logz

    def predict_marginals(self, sentences, source="<input>", force=False):
        """For each formats.Sentence: (labels, the probability of that labelling,
        marginals array, log Z), labels being tag()'s."""
        def decoded(data):
            (ids, best, marginals, logz), labels = self.decode_marginals(data, known_labels(data, force)), \
                self.label_array()
            return lambda j, a, b: (list(labels[ids[a:b]]), float(np.exp(best[j] / self.temperature - logz[j])),
                                    marginals[a:b], float(logz[j]))
        return self.per_sentence(sentences, source, decoded,
                                 lambda: ([], 1.0, np.zeros((0, len(self.labels))), 0.0))

    def decode_posterior(self, data, known=None):
        """For an encoded Dataset: posterior decoding (Wapiti's -p), the labelling of
        highest expected accuracy: the sum of its labels' marginals the largest among the
        labellings the model allows (each token's most probable label where it allows
        every one; under constraints, a Viterbi over the marginals with the forbidden
        transitions, first and last labels kept out). Returns (label ids, their
        marginals (positions x labels), the probability of that labelling per sequence)."""
        _, _, marginals, logz = self.decode_marginals(data, known)
        store, S = self.decoding, len(self.labels)
        trans = np.where(np.isfinite(store.trans), 0.0, -np.inf)
        end = np.where(np.isfinite(store.end), 0.0, -np.inf)
        out = np.zeros(data.n_positions, dtype=np.int32)
        if np.isfinite(trans).all() and np.isfinite(end).all():
            out[:] = marginals.argmax(axis=1)
        else:
            for j in range(data.n_sequences):
                a, b = int(data.seq_ptr[j]), int(data.seq_ptr[j + 1])
                out[a:b] = viterbi_best(np.ascontiguousarray(marginals[a:b]), np.zeros((b - a, S, S + 1)), trans,
                                        end)[0]
        scores = np.zeros(data.n_sequences)
        path_scores(data, store, out, scores)
        with np.errstate(over="ignore"):
            return out, marginals, np.exp(scores / self.temperature - logz)

    def predict_posterior(self, sentences, source="<input>", force=False):
        """For each formats.Sentence: (posterior decoding's labels, the probability of
        that labelling, the marginals array)."""
        def decoded(data):
            (ids, marginals, p), labels = self.decode_posterior(data, known_labels(data, force)), self.label_array()
            return lambda j, a, b: (list(labels[ids[a:b]]), float(p[j]), marginals[a:b])
        return self.per_sentence(sentences, source, decoded, lambda: ([], 1.0, np.zeros((0, len(self.labels)))))

    def predict_nbest_marginals(self, sentences, k, source="<input>", force=False):
        """For each formats.Sentence: (its k best labelings as predict_nbest gives them,
        each with its probability exp(score / T - log Z) in place of its score, the
        marginals array), from one encoding of the sentences."""
        check_k(k)

        def decoded(data):
            known = known_labels(data, force)
            paths, scores, counts = self.decode_nbest(data, int(k), known)
            (_, _, marginals, logz), labels = self.decode_marginals(data, known), self.label_array()
            return lambda j, a, b: ([(list(labels[paths[r, a:b]]), float(np.exp(scores[j, r] / self.temperature -
                                                                                  logz[j]))) for r in range(counts[j])],
                                    marginals[a:b])
        return self.per_sentence(sentences, source, decoded, lambda: ([([], 1.0)], np.zeros((0, len(self.labels)))))
