"""The k best labellings of a sentence and how sure the best one is (Model takes these
methods from here): list Viterbi (Seshadri & Sundberg 1994) and max-marginals, over the
scores Viterbi maximizes (cython_ext/decode.pyx)."""
import numpy as np

from .._kernels.decode import confidence_corpus, nbest_corpus, nbest_rows
from .probabilities import check_k, known_labels, known_parts


class KBest:
    """nbest and confidence, and the batch forms the tagger uses."""

    def nbest(self, tokens, k, known=None):
        """The k best labelings of one sentence, best first.

        The list is exact: list Viterbi (Seshadri & Sundberg 1994) keeps the k best
        partial paths per position and label. Labelings of equal score come in the order Viterbi prefers them
        (the lower label at the last token, then at the one before, ...), so the
        first is `tag`'s.

        Parameters
        ----------
        tokens : list or str
            A sentence, as for `tag`.
        k : int
            How many labelings: a whole number from 1 to 100,000.
        known : list, default=None
            Known labels (forced decoding), as for `tag`: only the labelings that keep
            them are listed.

        Returns
        -------
        labelings : list of (list of str, float)
            `(labels, score)` pairs; fewer than k when the sentence has fewer
            labelings (`len(model.labels) ** len(tokens)`, or those that keep the known
            labels; an empty sentence has one, with score 0). The score is the model's score of the labeling, the sum that Viterbi
            maximizes (0-order, 1st-order, transition and end weights), not a
            probability.

        Raises
        ------
        SeqbilError
            When k is not a whole number from 1 to 100,000.

        References
        ----------
        Seshadri, N. & Sundberg, C.-E. W. (1994). List Viterbi decoding algorithms
        with applications. IEEE Transactions on Communications 42.

        Examples
        --------
        >>> import seqbil
        >>> model = seqbil.train(epochs=1)
        >>> for labels, score in model.nbest([["He", "PRP"], ["ran", "VBD"]], 3):
        ...     print(labels)
        ['B-NP', 'B-VP']
        ['B-NP', 'O']
        ['O', 'B-VP']
        """
        sentences, force = self.given(tokens, known)
        return self.predict_nbest(sentences, k, force=force)[0]

    def confidence(self, tokens, known=None):
        """How sure the model is of `tag`'s labels for one sentence.

        Computed from max-marginals (forward-backward with max in place of sum).
        Margins are in the units of `nbest`'s scores; a margin is `float("inf")`
        when there is nothing to compare with (a model with a single label, or, for
        the sentence margin, an empty sentence).

        Parameters
        ----------
        tokens : list or str
            A sentence, as for `tag`.
        known : list, default=None
            Known labels (forced decoding), as for `tag`: margins over the labelings
            that keep them (a known label's margin is inf).

        Returns
        -------
        labels : list of str
            `tag`'s labels.
        token_margins : list of float
            `token_margins[i]`: the best score of a labeling with `labels[i]` at
            token i, minus the best score of one with any other label there: >= 0,
            0 where another label does as well.
        sentence_margin : float
            The score of the best labeling minus that of the second best
            (`nbest(tokens, 2)`); it is also the smallest token margin.

        Examples
        --------
        >>> import seqbil
        >>> model = seqbil.train(epochs=1)
        >>> labels, token_margins, sentence_margin = model.confidence([["He", "PRP"], ["reckons", "VBZ"]])
        >>> labels
        ['B-NP', 'B-VP']
        >>> sentence_margin == min(token_margins)
        True
        """
        sentences, force = self.given(tokens, known)
        return self.predict_confidence(sentences, force=force)[0]

    def decode_nbest(self, data, k, known=None):
        """The k best label-id paths of every sequence of an encoded Dataset, as
        decode.nbest_corpus writes them: paths (rows x positions), scores (sequences x
        rows) and counts (how many paths each sequence has, at most k)."""
        longest = max(1, int(np.diff(data.seq_ptr).max())) if data.n_sequences else 1
        rows = nbest_rows(len(self.labels), longest, min(k, 2 ** 31 - 1))
        paths = np.zeros((rows, data.n_positions), dtype=np.int32)
        scores = np.full((data.n_sequences, rows), np.nan)
        counts = np.zeros(data.n_sequences, dtype=np.int32)
        nbest_corpus(data, self.decoding, rows, paths, scores, counts, *known_parts(known))
        return paths, scores, counts

    def decode_confidence(self, data, known=None):
        """Best label id of every position of an encoded Dataset (as decode), the margin
        of each (see confidence) and the margin of each sequence."""
        out = np.zeros(data.n_positions, dtype=np.int32)
        margins, sentence = np.zeros(data.n_positions), np.zeros(data.n_sequences)
        confidence_corpus(data, self.decoding, out, margins, sentence, *known_parts(known))
        return out, margins, sentence

    def predict_nbest(self, sentences, k, source="<input>", force=False):
        """nbest for each formats.Sentence: a list of (labels, score) per sentence."""
        check_k(k)

        def decoded(data):
            (paths, scores, counts), labels = self.decode_nbest(data, int(k), known_labels(data, force)), \
                self.label_array()
            return lambda j, a, b: [(list(labels[paths[r, a:b]]), float(scores[j, r])) for r in range(counts[j])]
        return self.per_sentence(sentences, source, decoded, lambda: [([], 0.0)])

    def predict_confidence(self, sentences, source="<input>", force=False):
        """confidence for each formats.Sentence: (labels, token margins, sentence margin)."""
        def decoded(data):
            (ids, margins, sentence), labels = self.decode_confidence(data, known_labels(data, force)), \
                self.label_array()
            return lambda j, a, b: (list(labels[ids[a:b]]), margins[a:b].tolist(), float(sentence[j]))
        return self.per_sentence(sentences, source, decoded, lambda: ([], [], float("inf")))
