"""The Model: what a trained model is (labels, templates, attribute dictionaries,
weights and the settings of its corpus) and what it does (encode, decode, tag).

Training fills the weight blocks densely (`weights`); a model keeps, decodes with and
saves only their non-zero cells (`store`, see storage.py), float32 by default.
"""
import copy
from dataclasses import replace

import numpy as np

from .._kernels.decode import decode_corpus
from ..formats import Sentence, make_format
from ..formats.sighan import split_raw
from ..formats.sentence import Corpus
from ..features.dataset import encode
from ..features.dictionaries import Lexicon
from ..errors import SeqbilError
from ..storage import Rows, compact_weights, dense_weights, sparse_weights
from . import files, tasks
from . import constraints
from .kbest import KBest
from .probabilities import Probabilities, known_labels, known_parts


class Model(Probabilities, KBest):
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
    store : storage.Store, default=None
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
                 tasks=None, task_labels=None, temperature=1.0, sums32=False):
        self.kind, self.labels = kind, list(labels)
        self.temperature = float(temperature)
        self.tasks, self.task = list(tasks or []), None
        self.task_labels = {k: list(v) for k, v in (task_labels or {}).items()}
        self.index, self.templates = index, index.templates
        self.corpus = dict(corpus)  # format, n_fields, label_column, encoding, normalize, metric, scheme
        self.precision = precision
        # each position's 0-order scores summed in float32, as CRF++'s crf_test sums a
        # binary model's weights: a converted CRF++ model then scores exactly as there
        self._sums32 = bool(sums32)
        self._base = None  # the multi-task model of a task's view (for_task)
        # what a labelling may not have, kept by the model and applied in every decoder:
        # (allowed S x (S + 1), end_allowed S) or None (constraints.py; train --well-formed)
        self.rules, self._decoding = None, None
        if store is not None:
            self._weights = None
            self._set_store(store)
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
        self.not_a_view("weights")
        if self._weights is None:
            self._weights = dense_weights(self.kind, self._store, len(self.labels))
        return self._weights

    @weights.setter
    def weights(self, value):
        if self.rules is not None and "trans" in value:  # (a learner's forbidden cells: the rules decode them)
            value = {**value, "trans": np.where(np.tile(self.rules[0], (len(value["trans"]) // len(self.labels), 1)),
                                                value["trans"], 0.0),
                     "end": np.where(np.tile(self.rules[1], len(value["end"]) // len(self.labels)), value["end"], 0.0)}
        if isinstance(value.get("W1"), Rows):  # rows a learner made sparse (learners/base.py: slots_to_rows)
            self._weights = None
            self._set_store(sparse_weights(self.kind, value, len(self.labels), self.precision, layout=False))
        else:
            self._weights, self._store = value, None

    @property
    def store(self):
        """The weights as decoding reads them, a storage.Store: the sparse rows of the dense ones
        (at the model's precision), made on first use after each assignment of the
        weights and kept; for one task of a multi-task model, its base's with the
        task's trans and end (tasks.task_store)."""
        if self._store is None:
            self._set_store(tasks.task_store(self._base.store, self) if self._base is not None else
                            sparse_weights(self.kind, self._weights, len(self.labels), self.precision))
        return self._store

    @property
    def decoding(self):
        """The Store the decoders read: store, its forbidden transitions, first and last
        labels at -inf when the model keeps rules (constraints.masked)."""
        if self.rules is None:
            return self.store
        if self._decoding is None or self._decoding[0] is not self.store:
            self._decoding = (self.store, constraints.masked(self.store, *self.rules))
        return self._decoding[1]

    def _set_store(self, store):
        """Keep the decoding weights (a storage.Store), marked with how their scores are summed."""
        self._store = replace(store, sums32=self._sums32)

    @property
    def sums32(self):
        """Whether each position's 0-order scores are summed in float32 (a binary CRF++ model's)."""
        return self._sums32

    @sums32.setter
    def sums32(self, value):
        self._sums32 = bool(value)
        if self._store is not None:
            self._set_store(self._store)

    @property
    def holds_dense(self):
        """Whether the model holds its weights as dense blocks (as training leaves them)."""
        return self._weights is not None

    @property
    def parent(self):
        """The multi-task model of the view of one of its tasks (for_task); the model itself otherwise."""
        return self._base if self._base is not None else self

    def use_store(self, kind, store):
        """Decode from a storage.Store kept from before (a held-out model's, whose
        learner is gone)."""
        self.kind, self._weights = kind, None
        self._set_store(store)

    def keep_sparse(self):
        """Make the sparse rows that decoding reads from the dense weights, and let the
        dense weights go (a model that is only scored from now on)."""
        self._set_store(self.store)  # (made from the dense weights, if not yet, before they go)
        self._weights = None

    def _hand_over_dense(self):
        dense, self._weights = self._weights, None
        return dense

    def compact(self, prune=0.0, precision=None):
        """Keep only the weights with |w| > prune, at the given precision (float32 or
        float64; default: the model's), and take the attributes left without any
        weight out of the key tables. Returns, per order, the attributes and the
        non-zero weights before and after. Tagging then gives what the saved model
        gives."""
        self.not_a_view("compact")
        self.precision = precision or self.precision
        # (the dense blocks are handed over, not kept here: compact_weights lets them go
        # before the rows are taken, the peak of a run's end)
        store, tables, report = compact_weights(self.kind, len(self.labels), self._hand_over_dense(), self._store,
                                                self.index.tables, self.precision, prune)
        self.index.tables = tables
        self.index.prune_attributes()
        self._set_store(store)
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
        base = self.parent
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
        return tasks.single_task(self, name)

    def constrain(self, well_formed=False, forbid=None):
        """This model, decoding only the labellings that keep some rules.

        Viterbi, `nbest`, `confidence` and `marginals` all range over the allowed
        labellings only (a forbidden transition, first or last label scores -inf).

        Parameters
        ----------
        well_formed : bool, default=False
            The rules of the model's chunk tag scheme (IOB2: no `I-X` after `O` or
            `B-Y`, nor first; IOBES and BILOU: a chunk begun goes on to its end, and
            none is left open; IOB1, IOE1, IOE2 likewise; B, I, E, S segmentation labels
            as IOBES).
        forbid : str or os.PathLike, default=None
            A file of what a labelling may not have, a pair of labels per line: `A B`
            (B right after A), `<s> B` (B first), `A </s>` (A last); `#` comments.

        Returns
        -------
        model : Model
            A model sharing this one's weights.

        Raises
        ------
        SeqbilError
            For well_formed with labels that are not chunk tags, a file naming a label
            the model does not have, or rules that leave some sentence length without
            a labelling.

        Examples
        --------
        >>> import seqbil
        >>> model = seqbil.train(epochs=1).constrain(well_formed=True)
        >>> labels = model.tag([["in", "IN"], ["the", "DT"], ["market", "NN"]])
        >>> all(not y.startswith("I-") or before[2:] == y[2:] for before, y in zip(["O"] + labels, labels))
        True
        """
        allowed, end_allowed = self.rules or (np.ones((len(self.labels), len(self.labels) + 1), dtype=bool),
                                              np.ones(len(self.labels), dtype=bool))
        if well_formed:
            rules = constraints.well_formed(self.labels, self.corpus.get("scheme", "auto"))
            allowed, end_allowed = allowed & rules[0], end_allowed & rules[1]
        if forbid is not None:
            rules = constraints.read_forbidden(forbid, self.labels, self.corpus.get("encoding", "utf-8"))
            allowed, end_allowed = allowed & rules[0], end_allowed & rules[1]
        constraints.check_lengths(allowed, end_allowed)
        view = copy.copy(self)
        view.rules, view._decoding = (allowed, end_allowed), None
        return view

    def not_a_view(self, what):
        """Refuse the view of one task for what only the multi-task model does."""
        if self.task is not None:
            raise SeqbilError(f"{what}: the model of task {self.task!r} is a view of a multi-task model; "
                              f"use the multi-task model itself")

    def require_task(self):
        """Refuse a multi-task model not narrowed to one of its tasks (for_task)."""
        if self.tasks and self.task is None:
            raise SeqbilError(f"this is a multi-task model: say which task to tag, evaluate or continue "
                              f"(--task; its tasks: {', '.join(self.tasks)})")

    # --- decoding -------------------------------------------------------------
    def encode(self, sentences, source="<input>"):
        self.require_task()
        if self.tasks:
            sentences = Corpus.of(sentences).with_task(self.tasks, self.tasks.index(self.task))
        data = encode(sentences, self.templates, self.index, self.labels)[0]
        # (what raw input says beside a label column: a segmentation model's spaces; a Corpus has no raw input)
        found = self.format.known_of(sentences, self.labels) if isinstance(sentences, list) else None
        if found is not None:
            data.known, data.label_sets = found
        return data

    def decode(self, data, known=None):
        """Best label id of every position of an encoded Dataset; known: a label id per
        position to keep (forced decoding), or -1 (see known_labels)."""
        self.require_task()
        out = np.zeros(data.n_positions, dtype=np.int32)
        decode_corpus(data, self.decoding, out, *known_parts(known))
        return out

    def predict(self, sentences, source="<input>", force=False):
        """Label strings of each formats.Sentence; force: keep the labels the sentences
        give (forced decoding: a label the model does not have is predicted)."""
        return self.predict_data(self.encode(sentences, source), force)

    def predict_data(self, data, force=False):
        """Label strings of each sequence of an encoded Dataset."""
        ids, labels = self.decode(data, known_labels(data, force)), self.label_array()
        return [list(labels[ids[data.seq_ptr[j]:data.seq_ptr[j + 1]]]) for j in range(data.n_sequences)]

    def label_array(self):
        """The labels as an array, which label ids index."""
        return np.array(self.labels, dtype=object)

    def per_sentence(self, sentences, source, decoded, empty):
        """The result of each formats.Sentence, the non-empty ones encoded and decoded in
        one batch: decoded(data) gives a function of (j, a, b), sequence j at positions
        a:b of the encoded data, to its result; an empty sentence's is empty()."""
        nonempty = [s for s in sentences if len(s)]
        found = []
        if nonempty:
            data = self.encode(nonempty, source)
            one = decoded(data)
            found = [one(j, data.seq_ptr[j], data.seq_ptr[j + 1]) for j in range(data.n_sequences)]
        found = iter(found)
        return [next(found) if len(s) else empty() for s in sentences]

    # --- the Python API ---------------------------------------------------------
    def tag(self, sentence, known=None):
        """Label one sentence.

        Parameters
        ----------
        sentence : list or str
            A list of tokens, each a string or a list of the attribute column strings
            (without the label); for a segmentation model also a string of
            characters. For a model of attributes (corpus format crfsuite), a list of
            items, each a dict of attributes or a list of attribute names.
        known : list, default=None
            Forced decoding: for each token, its label if it is known (one of
            `labels`), kept as it is, or None to predict it under those known.

        Returns
        -------
        labels : list of str
            The label of each token.

        Raises
        ------
        SeqbilError
            For a sentence the model cannot read (a string for a CoNLL model, a
            token without the model's columns), a multi-task model not narrowed
            to a task (`for_task`), or known labels that are not one per token,
            each None or a label of the model's.

        Examples
        --------
        >>> import seqbil
        >>> model = seqbil.train(epochs=1)
        >>> tokens = [["He", "PRP"], ["reckons", "VBZ"], ["the", "DT"], ["deficit", "NN"]]
        >>> model.tag(tokens, known=[None, None, "B-NP", None])[2]
        'B-NP'
        """
        return self.tag_many([sentence], None if known is None else [known])[0]

    def tag_many(self, sentences, known=None):
        """Label many sentences, decoded in one batch.

        Parameters
        ----------
        sentences : iterable
            Sentences as for `tag`.
        known : list, default=None
            Forced decoding: for each sentence, its known labels as for `tag` (or
            None: none known).

        Returns
        -------
        labels : list of list of str
            The labels of each sentence (an empty list for an empty sentence).
        """
        sents = [self.format.sentence(s, i) for i, s in enumerate(sentences, 1)]
        force = known is not None
        if force:
            sents = self.with_known(sents, known)
        nonempty = [s for s in sents if len(s)]
        tags = iter(self.predict(nonempty, force=force) if nonempty else [])
        return [next(tags) if len(s) else [] for s in sents]

    def with_known(self, sentences, known):
        """The formats.Sentences with the known labels of forced decoding as their
        labels (None: predict), after checking them."""
        known = list(known)
        if len(known) != len(sentences):
            raise SeqbilError(f"known labels for {len(known)} sentences, but {len(sentences)} sentences")
        for n, (s, given) in enumerate(zip(sentences, known), 1):
            if given is None:
                given = [None] * len(s)
            given = list(given)
            if len(given) != len(s):
                raise SeqbilError(f"sentence {n}: {len(given)} known labels for {len(s)} tokens")
            bad = [y for y in given if y is not None and y not in self.labels]
            if bad:
                raise SeqbilError(f"sentence {n}: known label {bad[0]!r} is not one of the model's "
                                  f"({', '.join(self.labels)}); None marks a token to predict")
            s.labels = given
        return sentences

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

    def given(self, tokens, known):
        """([the formats.Sentence of tokens], whether labels are known) for the one-sentence
        methods (see with_known)."""
        sentences = [self.format.sentence(tokens, 1)]
        return (sentences, False) if known is None else (self.with_known(sentences, [known]), True)

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
        files.write(self, path)

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
        return files.read(cls, path, verify)

