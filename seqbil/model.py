"""A trained model: label set, templates, attribute dictionaries and weights.

Two model forms share one decoder:
  linear    W0[a, y] (0-order), W1[a, y, v] (1st-order, eq. 2 of Wu & Sun)
  bilinear  W0[a, y] (0-order), alpha[a, y] * beta[a, v] (1st-order, eq. 1)
Both have trans[y, v], the label-transition weights of the bare `B` template
(linear in both forms: a rank-1 transition matrix could not express constraints
such as "I-NP follows B-NP or I-NP"), and end[y], the score of ending a sequence in
label y. The previous-label index S (= number of labels) is the start symbol.

Training fills these blocks densely (`weights`); a model keeps, decodes with and
saves only their non-zero cells (`store`, see storage.py), float32 by default.
"""
import codecs
import copy

import numpy as np

from ._version import __version__
from ._kernels.decode import confidence_corpus, decode_corpus, marginals_corpus, nbest_corpus, nbest_rows, path_scores
from .formats import FORMATS, Sentence, make_format
from .formats.sighan import split_raw
from .formats.sentence import Corpus
from .features.dataset import encode
from .features.dictionaries import Lexicon
from .features.structure import Structure, StructureFeatures
from .features.vectors import VectorFeatures, VectorTable
from .features.index import (LAYOUTS, NORMALIZERS, FeatureIndex, attribute_arrays, read_attributes, read_vocabularies,
                             vocabulary_arrays)
from .errors import ConfigError, ModelFileError, SeqbilError
from .modelfile import read_model, write_model
from .storage import PRECISIONS, Rows, dense_weights, first_order_block, sparse_weights
from .features.templates import TemplateSet, parse_template, task_digits

KINDS = {"linear": ("W0", "W1", "trans", "end"), "bilinear": ("W0", "alpha", "beta", "trans", "end")}


class Model:
    """A trained model: labels, feature index, weights and the settings of its corpus.

    Made by `seqbil.train` or `seqbil.load`. It tags sentences, lists their k best
    labelings, and gives the margins and probabilities of its labels.

    Parameters
    ----------
    kind : str
        `"linear"` or `"bilinear"`: the form of the 1st-order weights (see Notes).
    labels : list of str
        The labels.
    index : seqbil.features.index.FeatureIndex
        The templates and attribute dictionaries.
    corpus : dict
        The settings of the training corpus: format, n_fields, label_column,
        encoding, normalize, metric, scheme.
    weights : dict, default=None
        The dense blocks (see Notes), as training makes them.
    training : dict, default=None
        The record of the training run.
    store : dict, default=None
        The same weights as `storage.sparse_weights` keeps them, as a model file
        holds them. Give one of `weights` and `store`.
    precision : str, default="float32"
        The precision of the weights kept: `float32` or `float64`.
    tasks : list of str, default=None
        The task names of a multi-task model, whose `trans` and `end` stack a shared
        copy and one per task (see cython_ext/chain.pxd, Linear), and whose
        templates read `%task`: it tags through `for_task(name)`.
    task_labels : dict, default=None
        `{task: the labels it may give}`, where the tasks' label sets differ.
    temperature : float, default=1.0
        What the scores are divided by for probabilities (see `marginals`).

    Attributes
    ----------
    labels : list of str
        The labels, in the order of `marginals`' columns.
    temperature : float
        Divides the scores in the model's probabilities.
    tasks : list of str
        The task names of a multi-task model; empty for another.
    corpus : dict
        The settings of the training corpus.
    training : dict
        The record of the training run.

    Notes
    -----
    Two model forms share one decoder, with `a` an attribute, `y` a label and `v`
    the previous label:

    - linear: `W0[a, y]` (0-order) and `W1[a, y, v]` (1st-order, eq. 2 of Wu & Sun);
    - bilinear: `W0[a, y]` (0-order) and `alpha[a, y] * beta[a, v]` (1st-order, eq. 1).

    Both have `trans[y, v]`, the label-transition weights of the bare `B` template,
    and `end[y]`, the score of ending a sequence in label `y`. The previous-label
    index S (the number of labels) is the start symbol.

    References
    ----------
    Wu, X. & Sun, X. (2015). An online learning algorithm for bilinear models.
    ICML 2015.

    Examples
    --------
    >>> import seqbil
    >>> model = seqbil.train(epochs=1)
    >>> model.tag([["He", "PRP"], ["reckons", "VBZ"]])
    ['B-NP', 'B-VP']
    >>> model.tag_many([[["the", "DT"], ["dog", "NN"]], []])
    [['B-NP', 'I-NP'], []]
    """

    def __init__(self, kind, labels, index, corpus, weights=None, training=None, store=None, precision="float32",
                 tasks=None, task_labels=None, temperature=1.0):
        self.kind, self.labels = kind, list(labels)
        self.temperature = float(temperature)
        self.tasks, self.task = list(tasks or []), None
        self.task_labels = {k: list(v) for k, v in (task_labels or {}).items()}
        self.index, self.templates = index, index.templates
        self.corpus = dict(corpus)  # format, n_fields, label_column, encoding, normalize, metric, scheme
        self.precision = precision
        # each position's 0-order scores summed in float32, as CRF++'s crf_test sums a
        # binary model's weights: a converted CRF++ model then scores exactly as there
        self.sums32 = False
        if store is not None:
            self._weights, self._store = None, store
        else:
            self.weights = weights if weights is not None else {}
        self.training = dict(training or {})
        self.format = make_format(self.corpus["format"], self.corpus.get("n_fields"),
                                  self.corpus.get("label_column", -1))

    # --- weights --------------------------------------------------------------
    @property
    def weights(self):
        """The dense blocks: W0, trans, end and W1 or alpha and beta (float64). A model
        read from a file holds its weights sparse (store), and makes these on demand."""
        self._not_a_view("weights")
        if self._weights is None:
            self._weights = dense_weights(self.kind, self._store, len(self.labels))
        return self._weights

    @weights.setter
    def weights(self, value):
        if isinstance(value.get("W1"), Rows):  # rows a learner made sparse (learners/base.py: slots_to_rows)
            self._weights, self._store = None, sparse_weights(self.kind, value, len(self.labels), self.precision,
                                                              layout=False)
        else:
            self._weights, self._store = value, None

    @property
    def store(self):
        """The weights as decoding reads them: storage.sparse_weights of the dense ones
        (at the model's precision), made once per assignment of the weights; for one
        task of a multi-task model, its base's with the task's trans and end."""
        if self._store is None and self.task is not None:
            store, S, k = self._base.store, len(self.labels), self.tasks.index(self.task)
            trans = store["trans"][:S] + store["trans"][(k + 1) * S:(k + 2) * S]
            end = store["end"][:S] + store["end"][(k + 1) * S:(k + 2) * S]
            if self.task in self.task_labels:  # labels of other tasks: no path goes through them
                other = np.array([y not in set(self.task_labels[self.task]) for y in self.labels])
                trans[other, :] = end[other] = -np.inf
            self._store = {**store, "trans": trans, "end": end}
        if self._store is None:
            self._store = sparse_weights(self.kind, self._weights, len(self.labels), self.precision)
        if self.sums32:
            self._store["sums32"] = True
        return self._store

    def keep_sparse(self):
        """Make the sparse rows that decoding reads from the dense weights, and let the
        dense weights go (a model that is only scored from now on)."""
        self.store
        self._weights = None

    def compact(self, prune=0.0, precision=None):
        """Keep only the weights with |w| > prune, at the given precision (float32 or
        float64; default: the model's), and take the attributes left without any
        weight out of the key tables. Returns, per order, the attributes and the
        non-zero weights before and after. Tagging then gives what the saved model
        gives."""
        self._not_a_view("compact")
        self.precision = precision or self.precision
        S = len(self.labels)
        if self._weights is None and self.kind == "linear":  # sparse already: no dense copy is made
            nonzero = {block: self._store[block].nnz for block in ("W0", "W1")}
            store = {name: v.pruned(self.precision, prune) if isinstance(v, Rows) else v
                     for name, v in self._store.items()}
        else:
            dense = self._weights if self._weights is not None else dense_weights(self.kind, self._store, S)
            nonzero = {"W0": np.count_nonzero(dense["W0"])}
            nonzero["W1" if self.kind == "linear" else "AB"] = \
                sum(np.count_nonzero(dense[k]) for k in (("W1",) if self.kind == "linear" else ("alpha", "beta")))
            store = sparse_weights(self.kind, dense, S, self.precision, prune, layout=False)
            self._weights = dense = None  # (the dense blocks go before the rows are taken: the peak of a run's end)
        first, _ = first_order_block(self.kind, S)
        report, tables = {}, []
        for order, block in ((0, "W0"), (1, first)):
            table, ptr = self.index.tables[order]
            keep = store[block].nonempty()
            keep[len(table):] = True  # the %vec components: their ids follow the keyed attributes
            kept = np.concatenate([[0], np.cumsum(keep[:len(table)], dtype=np.int64)])
            tables.append((np.ascontiguousarray(table[keep[:len(table)]]), kept[ptr]))
            store[block] = store[block].take(keep).compact_layout()
            report[order] = {"attributes": [len(table), len(tables[-1][0])], "weights": [int(nonzero[block]),
                                                                                        store[block].nnz]}
        self.index.tables = tables
        self.index.prune_attributes()
        self._weights, self._store = None, store
        return report

    # --- tasks ------------------------------------------------------------------
    def for_task(self, name):
        """The model of one task of a multi-task model.

        It scores with the shared weights plus the task's own (Cavallanti et al.
        2008), and tags, evaluates and lists k-best labelings like any model. It
        shares the weights with this model.

        Parameters
        ----------
        name : str
            One of the model's `tasks`.

        Returns
        -------
        model : Model
            The model of the task.

        Raises
        ------
        SeqbilError
            When the model has no tasks, or no task `name`.
        """
        if not self.tasks:
            raise SeqbilError(f"the model has no tasks; it tags without --task (asked for {name!r})")
        if name not in self.tasks:
            raise SeqbilError(f"the model has no task {name!r} (its tasks: {', '.join(self.tasks)})")
        base = self if self.task is None else self._base
        view = copy.copy(base)
        view._weights, view._store, view._base, view.task = None, None, base, name
        return view

    def single_task(self, name):
        """The model of one task as a model of its own, with no `%task` templates.

        Each attribute's weights are the sum of its shared weights and the task's own
        (the keys of a task copy `T/%task` are those of `T` times the task field's
        radix plus the task's id, so they fold into `T`'s keys). It tags as
        `for_task(name)` does (up to the rounding of sums taken in another order),
        reading half the attributes, and saves as an ordinary model. The sums are
        kept in float64; a bilinear model's become linear, `alpha_s beta_s^T +
        alpha_k beta_k^T` being of rank 2.

        Parameters
        ----------
        name : str
            One of the model's `tasks`.

        Returns
        -------
        model : Model or None
            The task's model; None when a template's keys are hashed, which cannot
            be taken apart.

        Raises
        ------
        SeqbilError
            When the model has no tasks, or no task `name`.
        """
        view = self.for_task(name)
        base = view._base
        store, index, S = view.store, base.index, len(self.labels)
        first, _ = first_order_block(self.kind, S)
        radix, (task_id,) = task_digits(index, base.templates, [name])
        shared = [t for t in base.templates.templates if not t.reads_task]
        position = {t.text: (o, i) for o in (0, 1) for i, t in enumerate(base.templates.by_order[o])}
        tables, rows = [], {}
        for order, block in ((0, "W0"), (1, first)):
            table, ptr = index.tables[order]
            _, _, _, mults = index.specs[order]
            t_ptr = index.specs[order][0]
            keys, parts, new_ptr = [], [], [0]
            dense = store[block]
            width = dense.width if block != "AB" else S * (S + 1)
            for t in (t for t in shared if t.order == order and (t.refs or order == 0)):
                i = position[t.text][1]
                _, j = position[f"{t.text}/%task"]
                if (len(t.refs) and mults[t_ptr[i]] == 0) or mults[t_ptr[j]] == 0:
                    return None
                s_lo, s_hi, o_lo, o_hi = int(ptr[i]), int(ptr[i + 1]), int(ptr[j]), int(ptr[j + 1])
                own = table[o_lo:o_hi]
                mine = np.flatnonzero(own % radix == task_id)
                folded = own[mine] // radix
                union = np.union1d(table[s_lo:s_hi], folded)
                block_rows = np.zeros((len(union), width))
                block_rows[np.searchsorted(union, table[s_lo:s_hi])] += _rows(dense, s_lo, s_hi, S)
                block_rows[np.searchsorted(union, folded)] += _rows(dense, o_lo, o_hi, S)[mine]
                keys.append(union)
                parts.append(block_rows)
                new_ptr.append(new_ptr[-1] + len(union))
            tables.append((np.concatenate(keys) if keys else np.zeros(0, np.int64), np.array(new_ptr, np.int64)))
            merged = np.concatenate(parts) if parts else np.zeros((0, width))
            rows["W0" if order == 0 else "W1"] = Rows.from_dense(merged, "float64")
        templates = TemplateSet(shared)
        fields = {f: index.fields[f] for f in templates.fields}
        single = FeatureIndex(templates, fields, tables, index.normalize, index.layout, index.lexicons,
                              index.length_cap)
        store = {"trans": np.asarray(store["trans"]), "end": np.asarray(store["end"]), **rows}
        model = Model("linear", self.labels, single, self.corpus, None, dict(self.training), store, "float64",
                      temperature=self.temperature)
        model.training["task"] = name
        model.compact()
        return model

    def _not_a_view(self, what):
        if self.task is not None:
            raise SeqbilError(f"{what}: the model of task {self.task!r} is a view of a multi-task model; "
                              f"use the multi-task model itself")

    def require_task(self):
        """Refuse a multi-task model whose task is not chosen (for_task): what it tags depends on the task."""
        if self.tasks and self.task is None:
            raise SeqbilError(f"this is a multi-task model: say which task to tag, evaluate or continue "
                              f"(--task; its tasks: {', '.join(self.tasks)})")

    # --- decoding -------------------------------------------------------------
    def encode(self, sentences, source="<input>"):
        self.require_task()
        if self.tasks:
            sentences = Corpus.of(sentences).with_task(self.tasks, self.tasks.index(self.task))
        return encode(sentences, self.templates, self.index, self.labels)[0]

    def decode(self, data):
        """Best label id of every position of an encoded Dataset."""
        self.require_task()
        out = np.zeros(data.n_positions, dtype=np.int32)
        decode_corpus(data, self.store, out)
        return out

    def predict(self, sentences, source="<input>"):
        """Label strings of each formats.Sentence."""
        return self.predict_data(self.encode(sentences, source))

    def predict_data(self, data):
        """Label strings of each sequence of an encoded Dataset."""
        ids = self.decode(data)
        labels = np.array(self.labels, dtype=object)
        return [list(labels[ids[data.seq_ptr[j]:data.seq_ptr[j + 1]]]) for j in range(data.n_sequences)]

    # --- the Python API ---------------------------------------------------------
    def tag(self, sentence):
        """Label one sentence.

        Parameters
        ----------
        sentence : list or str
            A list of tokens, each a string or a list of the attribute column strings
            (without the label); for a segmentation model also a string of
            characters. For a model of attributes (corpus format crfsuite), a list of
            items, each a dict of attributes or a list of attribute names.

        Returns
        -------
        labels : list of str
            The label of each token.

        Raises
        ------
        SeqbilError
            For a sentence the model cannot read (a string for a CoNLL model, a
            token without the model's columns), or a multi-task model not narrowed
            to a task (`for_task`).
        """
        return self.tag_many([sentence])[0]

    def tag_many(self, sentences):
        """Label many sentences, decoded in one batch.

        Parameters
        ----------
        sentences : iterable
            Sentences as for `tag`.

        Returns
        -------
        labels : list of list of str
            The labels of each sentence (an empty list for an empty sentence).
        """
        sents = [self.format.sentence(s, i) for i, s in enumerate(sentences, 1)]
        nonempty = [s for s in sents if len(s)]
        tags = iter(self.predict(nonempty) if nonempty else [])
        return [next(tags) if len(s) else [] for s in sents]

    def segment(self, text):
        """Split a text into words, with a segmentation model.

        Parameters
        ----------
        text : str
            The text; its whitespace is left out.

        Returns
        -------
        words : list of str
            The words, e.g. `["扬帆", "远东"]` for `"扬帆远东"`.

        Raises
        ------
        SeqbilError
            When the model is not a segmentation model (corpus format sighan).

        Examples
        --------
        >>> import seqbil
        >>> model = seqbil.train(config="sighan2005", epochs=1)
        >>> model.segment("中国人民银行行长")
        ['中国', '人民', '银行', '行长']
        """
        if not self.format.segments:
            raise SeqbilError("segment() needs a segmentation model (corpus format sighan)")
        chars, breaks = split_raw(text)
        return self.format.words(Sentence([chars], None, 0, breaks=breaks), self.tag(chars)) if chars else []

    # --- the k best labelings and how sure the best one is -----------------------
    def nbest(self, tokens, k):
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

        Returns
        -------
        labelings : list of (list of str, float)
            `(labels, score)` pairs; fewer than k when the sentence has fewer
            labelings (`len(model.labels) ** len(tokens)`; an empty sentence has one,
            with score 0). The score is the model's score of the labeling, the sum that Viterbi
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
        return self.predict_nbest([self.format.sentence(tokens, 1)], k)[0]

    def confidence(self, tokens):
        """How sure the model is of `tag`'s labels for one sentence.

        Computed from max-marginals (forward-backward with max in place of sum).
        Margins are in the units of `nbest`'s scores; a margin is `float("inf")`
        when there is nothing to compare with (a model with a single label, or, for
        the sentence margin, an empty sentence).

        Parameters
        ----------
        tokens : list or str
            A sentence, as for `tag`.

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
        return self.predict_confidence([self.format.sentence(tokens, 1)])[0]

    def decode_nbest(self, data, k):
        """The k best label-id paths of every sequence of an encoded Dataset, as
        decode.nbest_corpus writes them: paths (rows x positions), scores (sequences x
        rows) and counts (how many paths each sequence has, at most k)."""
        longest = max(1, int(np.diff(data.seq_ptr).max())) if data.n_sequences else 1
        rows = nbest_rows(len(self.labels), longest, min(k, 2 ** 31 - 1))
        paths = np.zeros((rows, data.n_positions), dtype=np.int32)
        scores = np.full((data.n_sequences, rows), np.nan)
        counts = np.zeros(data.n_sequences, dtype=np.int32)
        nbest_corpus(data, self.store, rows, paths, scores, counts)
        return paths, scores, counts

    def decode_confidence(self, data):
        """Best label id of every position of an encoded Dataset (as decode), the margin
        of each (see confidence) and the margin of each sequence."""
        out = np.zeros(data.n_positions, dtype=np.int32)
        margins, sentence = np.zeros(data.n_positions), np.zeros(data.n_sequences)
        confidence_corpus(data, self.store, out, margins, sentence)
        return out, margins, sentence

    def predict_nbest(self, sentences, k, source="<input>"):
        """nbest for each formats.Sentence: a list of (labels, score) per sentence."""
        _check_k(k)
        nonempty = [s for s in sentences if len(s)]
        found = []
        if nonempty:
            data = self.encode(nonempty, source)
            paths, scores, counts = self.decode_nbest(data, int(k))
            labels = np.array(self.labels, dtype=object)
            for j in range(data.n_sequences):
                a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
                found.append([(list(labels[paths[r, a:b]]), float(scores[j, r])) for r in range(counts[j])])
        found = iter(found)
        return [next(found) if len(s) else [([], 0.0)] for s in sentences]

    def predict_confidence(self, sentences, source="<input>"):
        """confidence for each formats.Sentence: (labels, token margins, sentence margin)."""
        nonempty = [s for s in sentences if len(s)]
        found = []
        if nonempty:
            data = self.encode(nonempty, source)
            ids, margins, sentence = self.decode_confidence(data)
            labels = np.array(self.labels, dtype=object)
            for j in range(data.n_sequences):
                a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
                found.append((list(labels[ids[a:b]]), margins[a:b].tolist(), float(sentence[j])))
        found = iter(found)
        return [next(found) if len(s) else ([], [], float("inf")) for s in sentences]

    # --- probabilities ------------------------------------------------------------
    # p(y | x) = exp(score(y) / T) / Z(x): a CRF's own distribution (T = 1); for the
    # online learners, whose scores are not log-probabilities, T is fitted after
    # training on held-out data (the token marginals' negative log-likelihood).
    def marginals(self, tokens):
        """The marginal probability of every label at every token of one sentence.

        Sum-product forward-backward over the same scores Viterbi maximizes, divided
        by `temperature`.

        Parameters
        ----------
        tokens : list or str
            A sentence, as for `tag`.

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
        return self.predict_marginals([self.format.sentence(tokens, 1)])[0][2]

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
        path_scores(data, self.store, np.array([index[y] for y in labels], dtype=np.int32), score)
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

    def decode_marginals(self, data):
        """For an encoded Dataset: the best label ids (as decode), their score per
        sequence, the marginals (positions x labels) and log Z per sequence."""
        self.require_task()
        out, best = np.zeros(data.n_positions, dtype=np.int32), np.zeros(data.n_sequences)
        marginals, logz = np.zeros((data.n_positions, len(self.labels))), np.zeros(data.n_sequences)
        marginals_corpus(data, self.store, self.temperature, out, best, marginals, logz)
        return out, best, marginals, logz

    def predict_marginals(self, sentences, source="<input>"):
        """For each formats.Sentence: (labels, the probability of that labelling,
        marginals array, log Z), labels being tag()'s."""
        nonempty = [s for s in sentences if len(s)]
        found = []
        if nonempty:
            data = self.encode(nonempty, source)
            ids, best, marginals, logz = self.decode_marginals(data)
            labels = np.array(self.labels, dtype=object)
            for j in range(data.n_sequences):
                a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
                found.append((list(labels[ids[a:b]]), float(np.exp(best[j] / self.temperature - logz[j])),
                              marginals[a:b], float(logz[j])))
        found = iter(found)
        return [next(found) if len(s) else ([], 1.0, np.zeros((0, len(self.labels))), 0.0) for s in sentences]

    def predict_nbest_marginals(self, sentences, k, source="<input>"):
        """For each formats.Sentence: (its k best labelings as predict_nbest gives them,
        each with its probability exp(score / T - log Z) in place of its score, the
        marginals array), from one encoding of the sentences."""
        _check_k(k)
        nonempty = [s for s in sentences if len(s)]
        found = []
        if nonempty:
            data = self.encode(nonempty, source)
            paths, scores, counts = self.decode_nbest(data, int(k))
            _, _, marginals, logz = self.decode_marginals(data)
            labels = np.array(self.labels, dtype=object)
            for j in range(data.n_sequences):
                a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
                found.append(([(list(labels[paths[r, a:b]]), float(np.exp(scores[j, r] / self.temperature - logz[j])))
                               for r in range(counts[j])], marginals[a:b]))
        found = iter(found)
        return [next(found) if len(s) else ([([], 1.0)], np.zeros((0, len(self.labels)))) for s in sentences]

    # --- files ----------------------------------------------------------------
    def save(self, path):
        """Write the model file (atomically).

        A model that holds dense weights is compacted first (`compact`: the same
        labels, a smaller file).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write.

        Raises
        ------
        SeqbilError
            For the model of one task of a multi-task model (`for_task`): save the
            multi-task model itself.
        """
        if self.task is not None:
            raise SeqbilError("save the multi-task model itself, not the model of one of its tasks")
        if self._weights is not None:
            self.compact()
        meta = {"format": "seqbil-model", "seqbil_version": __version__, "kind": self.kind,
                "labels": self.labels, "templates": [t.text for t in self.templates.templates],
                "corpus": self.corpus, "training": self.training, "temperature": self.temperature}
        if self.tasks:
            meta["tasks"] = self.tasks
            if self.task_labels:
                meta["task_labels"] = self.task_labels
        if self.index.layout != "values-first":
            meta["index_layout"] = self.index.layout
        if self.sums32:
            meta["scores"] = "float32 sums"
        first, _ = first_order_block(self.kind, len(self.labels))
        meta["weights"] = {"layout": "sparse rows", "precision": self.precision}
        arrays = {"trans": self.store["trans"], "end": self.store["end"], **self.store["W0"].arrays("W0"),
                  **self.store[first].arrays(first)}
        arrays.update(vocabulary_arrays(self.index))
        arrays.update(attribute_arrays(self.index))
        for order, (table, ptr) in enumerate(self.index.tables):
            arrays[f"table{order}"], arrays[f"table{order}_ptr"] = table, ptr
        if self.index.lexicons:  # the dictionaries travel with the model
            unit = self.lexicon_unit
            meta["lexicons"] = {"unit": unit, "length_cap": self.index.length_cap,
                                "names": {name: {"entries": len(lex), "sha256": lex.sha256()}
                                          for name, lex in sorted(self.index.lexicons.items())}}
            for name, lex in self.index.lexicons.items():
                arrays[f"lexicon:{name}"] = np.frombuffer(lex.text().encode("utf-8"), dtype=np.uint8)
        vectors = self.index.vectors
        if vectors is not None:  # the rows of the vector tables the model keeps
            meta["vectors"] = {"unknown": vectors.unknown, "scale": vectors.scale,
                               "names": {n: {"dim": t.dim, "rows": len(t)} for n, t in sorted(vectors.tables.items())}}
            for name, table in vectors.tables.items():
                arrays[f"vectors:{name}"] = table.matrix
                arrays[f"vectors:{name}:words"] = np.frombuffer("\n".join(table.words).encode("utf-8"), dtype=np.uint8)
        structure = self.index.structure
        if structure is not None:  # Theta and the split indexes travel with the model
            meta["structure"] = {"window": structure.window, "scale": structure.scale, **structure.structure.meta()}
            arrays.update(structure.structure.arrays())
        write_model(path, meta, arrays)

    def add_word_file(self, path, name=None):
        """Add the entries of a word list or gazetteer file to a dictionary (`add_words`).

        Parameters
        ----------
        path : str or os.PathLike
            The file, read in the model's corpus encoding.
        name : str, default=None
            The model's dictionary to extend; may be left out when it has only one.

        Raises
        ------
        SeqbilError
            When `name` is left out and the model does not have exactly one
            dictionary, or the model has no dictionary `name`.
        """
        if name is None:
            if len(self.index.lexicons) != 1:
                known = ", ".join(sorted(self.index.lexicons)) or "none"
                raise SeqbilError(f"{path}: say which dictionary of the model to extend, NAME={path} "
                                  f"(its dictionaries: {known})")
            name = next(iter(self.index.lexicons))
        self.add_words(name, Lexicon.read(path, self.lexicon_unit, self.corpus.get("encoding", "utf-8")).entries)

    @property
    def lexicon_unit(self):
        """What a dictionary entry is made of: characters (segmentation) or tokens."""
        return self.format.unit

    def add_words(self, name, entries):
        """Add entries to one of the model's dictionaries, for tagging.

        A user dictionary on top of the model's: the weights stay; only where the
        dictionary features fire changes.

        Parameters
        ----------
        name : str
            The dictionary to extend.
        entries : iterable
            Words as strings (segmentation) or phrases as lists of tokens (or as
            strings of space-separated tokens).

        Raises
        ------
        SeqbilError
            When the model has no dictionary `name`.
        """
        if name not in self.index.lexicons:
            known = ", ".join(sorted(self.index.lexicons)) or "none"
            raise SeqbilError(f"the model has no dictionary {name!r} (its dictionaries: {known})")
        fold = self.index.fold
        entries = [tuple(e) if not isinstance(e, str) or self.lexicon_unit == "char" else tuple(e.split())
                   for e in entries]
        self.index.lexicons[name] = self.index.lexicons[name].extended(
            [tuple(map(fold, e)) if fold else e for e in entries])

    @classmethod
    def load(cls, path, verify=True):
        """Read a model file (see seqbil.load)."""
        meta, arrays = read_model(path, verify)
        if meta.get("format") == "seqbil-structure":  # same container, another kind of file
            raise ModelFileError(f"{path}: a structure (seqbil aso), not a model: give it to "
                                 "seqbil train --structure")
        try:
            _check_meta(meta)
            templates = TemplateSet(parse_template(t) for t in meta["templates"])
            fields = read_vocabularies(templates, arrays)
            tables = [(arrays[f"table{o}"], arrays[f"table{o}_ptr"]) for o in (0, 1)]
            layout = meta.get("index_layout", "values-first")
            if layout not in LAYOUTS:
                raise ValueError("index layout")
            lexicons, cap = {}, 6
            if templates.dictionaries:
                info = meta["lexicons"]
                cap = info["length_cap"]
                for name in templates.dictionaries:
                    text = arrays[f"lexicon:{name}"].tobytes().decode("utf-8")
                    lexicons[name] = Lexicon.from_text(text)
                    if lexicons[name].sha256() != info["names"][name]["sha256"]:
                        raise ValueError(f"dictionary {name} does not match its checksum")
            index = FeatureIndex(templates, fields, tables, meta["corpus"]["normalize"], layout, lexicons, cap,
                                 read_attributes(arrays) if templates.items else None)
            if templates.vector_templates:
                info = meta["vectors"]
                vector_tables = {}
                for name in templates.vectors:
                    text = arrays[f"vectors:{name}:words"].tobytes().decode("utf-8")
                    vector_tables[name] = VectorTable(text.split("\n") if text else [], arrays[f"vectors:{name}"])
                index.vectors = VectorFeatures(templates.vector_templates, vector_tables, info["unknown"], info["scale"])
            if "structure" in meta:
                info = meta["structure"]
                index.structure = StructureFeatures(Structure.from_arrays(info, arrays),
                                                    [int(w) for w in info["window"]], float(info["scale"]))
            S = len(meta["labels"])
            corpus, training = meta["corpus"], meta.get("training")
            if "W0" in arrays:  # a file of seqbil 0.2 or older: dense float64 blocks
                weights = {name: arrays[name] for name in KINDS[meta["kind"]]}
                model = cls(meta["kind"], meta["labels"], index, corpus, weights, training, precision="float64")
                model._check_shapes()
                model.compact()
            else:
                info = meta["weights"]
                if info.get("layout") != "sparse rows" or info.get("precision") not in PRECISIONS:
                    raise ValueError("weights layout")
                first, width = first_order_block(meta["kind"], S)
                store = {"W0": Rows.from_arrays(arrays, "W0", S), first: Rows.from_arrays(arrays, first, width),
                         "trans": arrays["trans"], "end": arrays["end"]}
                tasks = meta.get("tasks")
                if tasks is not None and not (isinstance(tasks, list) and len(tasks) > 1 and
                                              all(isinstance(n, str) and n for n in tasks) and
                                              len(set(tasks)) == len(tasks) and templates.tasks):
                    raise ValueError("tasks")
                if tasks is None and templates.tasks:
                    raise ValueError("templates read %task in a model without tasks")
                task_labels = meta.get("task_labels", {})
                if not (isinstance(task_labels, dict) and set(task_labels) <= set(tasks or []) and
                        all(isinstance(v, list) and v and set(v) <= set(meta["labels"]) for v in task_labels.values())):
                    raise ValueError("task labels")
                temperature = meta.get("temperature", 1.0)
                if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or \
                        not 0 < temperature < float("inf"):
                    raise ValueError("temperature")
                model = cls(meta["kind"], meta["labels"], index, corpus, None, training, store, info["precision"],
                            tasks, task_labels, temperature)
                if meta.get("scores", "float64 sums") not in ("float64 sums", "float32 sums"):
                    raise ValueError("scores")
                model.sums32 = meta.get("scores") == "float32 sums"
                model._check_shapes()
        except (KeyError, ValueError, TypeError, UnicodeDecodeError, SeqbilError) as exc:
            raise ModelFileError(f"{path}: inconsistent model contents ({exc})") from None
        return model

    def _check_shapes(self):
        S = len(self.labels)
        try:
            self.templates.check_columns(*self.format.layout(), self.format.name, "the model")
        except ConfigError:
            raise ValueError("the templates read columns the corpus format does not have") from None
        A0, A1 = self.index.n_attributes(0), self.index.n_attributes(1)
        for o, (table, ptr) in enumerate(self.index.tables):
            if table.dtype != np.int64 or ptr.dtype != np.int64 or len(ptr) != len(self.index.specs[o][0]) \
                    or ptr[0] != 0 or ptr[-1] != len(table) or np.any(np.diff(ptr) < 0):
                raise ValueError(f"attribute table {o} is inconsistent")
        copies = 1 if self.task is not None else len(self.tasks) + 1 if self.tasks else 1
        if self._weights is not None:
            w = self._weights
            expected = {"W0": (A0, S), "end": (copies * S,), "W1": (A1, S, S + 1), "alpha": (A1, S),
                        "beta": (A1, S + 1), "trans": (copies * S, S + 1)}
            shapes = {name: (tuple(w[name].shape), expected[name]) for name in KINDS[self.kind]}
        else:
            w = self._store
            first, width = first_order_block(self.kind, S)
            shapes = {"trans": (w["trans"].shape, (copies * S, S + 1)), "end": (w["end"].shape, (copies * S,)),
                      "W0": ((w["W0"].n_rows, w["W0"].width), (A0, S)), first: ((w[first].n_rows, w[first].width),
                                                                              (A1, width))}
            if w["trans"].dtype != np.float64 or w["end"].dtype != np.float64:
                raise ValueError("trans and end must be float64")
        for name, (got, want) in shapes.items():
            if tuple(got) != want:
                raise ValueError(f"array {name} has shape {tuple(got)}, expected {want}")
        if S == 0:
            raise ValueError("empty label set")


def _rows(rows, lo, hi, S):
    """Rows lo:hi of storage.Rows as a dense float64 array; the rows of bilinear
    factors [alpha | beta] as their products alpha beta^T, S (S + 1) wide."""
    out = rows.rows(lo, hi).to_dense()
    if rows.width == 2 * S + 1 and S * (S + 1) != 2 * S + 1:  # factors (S = 1 never factors)
        out = (out[:, :S, None] * out[:, None, S:]).reshape(len(out), S * (S + 1))
    return out


def _check_meta(meta):
    """The header fields a model needs, with their types, before anything uses them."""
    def need(ok, what):
        if not ok:
            raise ValueError(what)
    need(meta.get("format") == "seqbil-model" and meta.get("kind") in KINDS, "not a seqbil model")
    labels, corpus = meta.get("labels"), meta.get("corpus")
    need(isinstance(corpus, dict) and corpus.get("format") in FORMATS, "corpus format")
    spaced = FORMATS[corpus["format"]].spaced_labels
    need(isinstance(labels, list) and labels and all(isinstance(y, str) and y and (spaced or not any(
        ch.isspace() for ch in y)) for y in labels) and len(set(labels)) == len(labels), "labels")
    need(isinstance(meta.get("templates"), list) and all(isinstance(t, str) for t in meta["templates"]), "templates")
    FORMATS[corpus["format"]].check_corpus_record(corpus)
    need(corpus.get("normalize", "none") in NORMALIZERS, "corpus normalize")
    corpus.setdefault("normalize", "none")
    need(isinstance(corpus.get("encoding", "utf-8"), str), "corpus encoding")
    try:
        codecs.lookup(corpus.get("encoding", "utf-8"))
    except LookupError:
        need(False, "corpus encoding")
    if "metric" not in corpus and "evaluation" in corpus:  # files of seqbil 0.1.0
        corpus["metric"], corpus["scheme"] = corpus.pop("evaluation"), "auto"
    need(corpus.get("metric") in ("chunk", "segment", "accuracy"), "corpus metric")
    need(corpus.get("scheme", "auto") in ("auto", "iob1", "iob2", "iobes", "bilou"), "corpus scheme")
    need(isinstance(meta.get("training", {}), dict), "training")


NBEST_MAX = 10 ** 5  # the k-best lattice holds k entries per position and label


def _check_k(k):
    """How many labellings nbest may be asked for: a whole number from 1 to NBEST_MAX."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= NBEST_MAX:
        raise SeqbilError(f"k must be a whole number from 1 to {NBEST_MAX:,}, got {k!r}")
