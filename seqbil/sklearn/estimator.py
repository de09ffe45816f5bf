"""`seqbil.sklearn.CRF`: sklearn-crfsuite's CRF estimator (version 0.5.0) on seqbil's
learners. Code written for sklearn-crfsuite runs with this one for the import:

    from seqbil.sklearn import CRF          # was: from sklearn_crfsuite import CRF
    crf = CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100)
    crf.fit(X_train, y_train)               # X: lists of feature dicts, y: lists of labels
    crf.predict(X_test), crf.predict_marginals(X_test)

The feature dicts are named as python-crfsuite names them (cython_ext/items.pyx) and
read by the templates U:%attr and B (CRFsuite's feature set; features/templates.py).
"""
import os
import tempfile
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator

from .. import params
from ..errors import SeqbilError
from ..formats import Sentence, partial
from .metrics import flat_accuracy_score
from .tagger import Tagger, open_model

# CRFsuite's algorithms and seqbil's own learners
ALGORITHMS = {"lbfgs": "crf", "l2sgd": "l2sgd", "ap": "sp", "pa": "pa", "arow": "arow",
              "bol": "bol", "bcd": "bcd", "sp": "sp", "rpa": "rpa"}
# sklearn-crfsuite's parameters: the seqbil option each one sets (for the learners that
# have that option; elsewhere it is accepted and not used, as CRFsuite ignores an
# option its algorithm lacks)
OPTIONS = {"c1": "c1", "c2": "c2", "max_iterations": "epochs", "num_memories": "crf_memories",
           "epsilon": "crf_epsilon", "period": "period", "delta": "delta", "linesearch": "crf_linesearch",
           "max_linesearch": "crf_max_linesearch", "calibration_eta": "calibration_eta",
           "calibration_rate": "calibration_rate", "calibration_samples": "calibration_samples",
           "calibration_candidates": "calibration_candidates", "calibration_max_trials": "calibration_max_trials",
           "pa_type": "pa_type", "c": "C", "error_sensitive": "pa_error_sensitive", "averaging": "averaged",
           "variance": "arow_variance", "gamma": "arow_gamma", "all_possible_states": "all_possible_states",
           "all_possible_transitions": "all_possible_transitions"}
# CRFsuite's defaults where they are not seqbil's: its L2 coefficient (seqbil chooses c2
# on held-out data when none is given), its iteration caps (lbfgs: none)
CRFSUITE_DEFAULTS = {"crf": {"c1": 0.0, "c2": 1.0, "epochs": 2 ** 31 - 1}, "l2sgd": {"c2": 1.0, "epochs": 1000},
                     "sp": {"epochs": 100}, "pa": {"epochs": 100}, "arow": {"epochs": 100}}


class CRF(BaseEstimator):
    """sklearn-crfsuite's CRF estimator on seqbil's learners.

    The API of sklearn-crfsuite 0.5.0's `CRF`: code written for it runs with this one
    for the import (`from seqbil.sklearn import CRF`). A sequence is a list of
    feature dicts, named as python-crfsuite names them and read by the templates
    `U:%attr` and `B` (CRFsuite's feature set). The parameters are sklearn-crfsuite's
    (None: CRFsuite's default), then seqbil's own.

    Parameters
    ----------
    algorithm : str, default=None
        `'lbfgs'` (the default; seqbil's `crf`: L-BFGS, OWL-QN when c1 > 0),
        `'l2sgd'`, `'ap'` (the averaged perceptron: seqbil's `sp`), `'pa'`,
        `'arow'`, or one of seqbil's own learners: `'bol'` (the online bilinear
        learner, Wu & Sun 2015, Algorithm 2), `'bcd'`, `'sp'`, `'rpa'`.
    min_freq : float, default=None
        Attributes seen fewer than this many times in training are dropped (seqbil's
        `min_count`; CRFsuite counts (attribute, label) pairs).
    all_possible_states : bool, default=None
        A weight for every (attribute, label) pair, not only those seen in training
        (lbfgs, l2sgd).
    all_possible_transitions : bool, default=None
        A weight for every label transition (and for each label first and last in
        a sequence), not only for those seen in training, as CRFsuite's
        `feature.possible_transitions` (lbfgs, l2sgd). seqbil's default (None) keeps
        them all, as True; False leaves the unseen ones at 0.
    c1 : float, default=None
        The L1 coefficient, `c1 |w|_1` as CRFsuite defines it (default 0).
    c2 : float, default=None
        The L2 coefficient, `c2 |w|^2` as CRFsuite defines it (default 1.0).
    max_iterations : int, default=None
        The cap on iterations or epochs (lbfgs: none; l2sgd 1000; ap, pa, arow 100;
        seqbil's learners: their own, e.g. bol 20).
    num_memories, period, max_linesearch : int, default=None
        L-BFGS's, as CRFsuite's.
    epsilon : float, default=None
        L-BFGS's, as CRFsuite's; not used by ap, pa and arow: they run
        `max_iterations`.
    delta : float, default=None
        L-BFGS's, as CRFsuite's.
    linesearch : str, default=None
        L-BFGS's, as CRFsuite's.
    calibration_eta, calibration_rate : float, default=None
        l2sgd's learning-rate calibration.
    calibration_samples, calibration_candidates, calibration_max_trials : int, default=None
        l2sgd's learning-rate calibration.
    pa_type : int, default=None
        pa's.
    c : float, default=None
        pa's; also the step of bol, bcd, rpa.
    error_sensitive, averaging : bool, default=None
        pa's.
    variance, gamma : float, default=None
        arow's.
    verbose : bool, default=False
        Print the run's messages and progress bars.
    model_filename : str, default=None
        Where `fit` writes the model (a seqbil model file). A file that exists
        before `fit` is opened, so that `predict` works without `fit`: a seqbil
        model, or a CRFsuite model (sklearn-crfsuite's, python-crfsuite's, `crfsuite
        learn`'s), which then gives CRFsuite's labels and marginals.
    keep_tempfiles : bool, default=False
        Keep the temporary model file of a `fit` without `model_filename`.
    trainer_cls : object, default=None
        Accepted, not used (python-crfsuite's trainer class).
    first_order : list of str or str, default=None
        seqbil's own: the dict keys whose attributes are also 1st-order features
        (the template `B:%attr[KEY,...]`), which bol and bcd factor: a list of keys,
        `'all'`, or None (the default: none, only the label transitions are
        1st-order, as in CRFsuite; bol then learns what ap learns). None won on dev
        data: on CoNLL-2000 with the tutorial's dicts, bol had 93.52 F1 with none,
        86.99 with all, 90.67 with the POS keys (results/dict_features,
        experiments/dict_features.sh).
    params : dict, default=None
        seqbil's own: any other seqbil option by its name (`seqbil params`), e.g.
        `{"power_steps": 4, "temperature": 1.0, "jobs": 2}`.

    Attributes
    ----------
    classes_ : list of str
        The labels.
    size_ : int
        The size of the model file, in bytes.
    num_attributes_ : int
        The number of attributes that hold a weight.
    attributes_ : list of str
        Their names.
    state_features_ : dict
        `{(attribute, label): weight}`.
    transition_features_ : dict
        `{(label_from, label_to): weight}`: the label transitions; `B:%attr`
        attributes' weights are in `tagger_.info().first_order_features`.
    training_log_ : TrainingLog
        One record per pass.
    tagger_ : seqbil.sklearn.tagger.Tagger
        A python-crfsuite Tagger on the model.
    temperature_ : float
        What the scores are divided by in the probabilities.

    Notes
    -----
    The fitted attributes are None before `fit`.

    The probabilities (`predict_marginals`) are `exp(score / T) / Z`, with `T = 1`
    for lbfgs and l2sgd (a linear-chain CRF, Lafferty et al. 2001), and fitted on
    held-out data for the others (`temperature_`).

    References
    ----------
    - sklearn-crfsuite 0.5.0, `sklearn_crfsuite.CRF`.
    - Wu, X. & Sun, X. (2015). An online learning algorithm for bilinear models.
      ICML 2015.
    - Lafferty, J., McCallum, A. & Pereira, F. (2001). Conditional random fields:
      probabilistic models for segmenting and labeling sequence data. ICML 2001.

    Examples
    --------
    >>> from seqbil.sklearn import CRF
    >>> X = [[{"w": "the"}, {"w": "dog"}, {"w": "barks"}], [{"w": "a"}, {"w": "cat"}, {"w": "sleeps"}]]
    >>> y = [["DT", "NN", "VBZ"], ["DT", "NN", "VBZ"]]
    >>> crf = CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100).fit(X, y)
    >>> crf.classes_
    ['DT', 'NN', 'VBZ']
    >>> crf.predict_single([{"w": "a"}, {"w": "dog"}])
    ['DT', 'NN']
    >>> crf.score(X, y)
    1.0
    """

    def __init__(self, algorithm=None, min_freq=None, all_possible_states=None, all_possible_transitions=None,
                 c1=None, c2=None, max_iterations=None, num_memories=None, epsilon=None, period=None, delta=None,
                 linesearch=None, max_linesearch=None, calibration_eta=None, calibration_rate=None,
                 calibration_samples=None, calibration_candidates=None, calibration_max_trials=None, pa_type=None,
                 c=None, error_sensitive=None, averaging=None, variance=None, gamma=None, verbose=False,
                 model_filename=None, keep_tempfiles=False, trainer_cls=None, first_order=None, params=None):
        self.algorithm = algorithm
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls
        self.first_order = first_order
        self.params = params
        self.training_log_ = None
        self._model, self._path, self._temporary, self._tagger = None, None, False, None

    # --- settings -------------------------------------------------------------------
    def learner_name(self):
        """The seqbil learner the algorithm names."""
        algorithm = self.algorithm or "lbfgs"
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm {algorithm!r}: one of {', '.join(ALGORITHMS)}")
        return ALGORITHMS[algorithm]

    def templates(self):
        """The templates the dict features are read with."""
        out = ["U:%attr", "B"]
        keys = self.first_order
        if keys == "all":
            out.append("B:%attr")
        elif keys:
            keys = [keys] if isinstance(keys, str) else list(keys)
            bad = [k for k in keys if not isinstance(k, str) or not k or "," in k or k.count("[") != k.count("]")]
            if bad:
                raise ValueError(f"first_order: {bad[0]!r} is not a key (a non-empty string without ',', its "
                                 f"brackets paired)")
            out.append(f"B:%attr[{','.join(keys)}]")
        return out

    def settings(self):
        """The seqbil settings (params.Settings) of this estimator's parameters."""
        learner = self.learner_name()
        table = params.by_name()
        options = {"format": "crfsuite", "templates": self.templates(), "learner": learner,
                   **CRFSUITE_DEFAULTS.get(learner if self.algorithm in (None, "lbfgs", "l2sgd", "ap", "pa", "arow")
                                           else "", {})}
        for name, option in OPTIONS.items():
            value = getattr(self, name)
            if value is not None and table[option].used_by(learner):
                options[option] = bool(value) if table[option].type is bool else value
        if self.min_freq is not None:
            options["min_count"] = max(1, int(np.ceil(self.min_freq)))
        options.update(self.params or {})
        try:
            return params.resolve(None, options)
        except SeqbilError as exc:  # a bad parameter is a ValueError in scikit-learn
            raise ValueError(str(exc)) from None

    # --- fitting ----------------------------------------------------------------------
    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train a model on the sequences X with the labels y.

        Parameters
        ----------
        X : list of lists of dicts
            The sequences: lists of feature dicts, one per item.
        y : list of lists of str
            The labels of each sequence. A label may be None (unknown) or a set
            of the labels it may be: the model then learns from what is known
            (seqbil's `partial` setting; crf and the online learners).
        X_dev : list of lists of dicts, default=None
            A dev set, scored after each pass (`training_log_`), as CRFsuite's
            holdout evaluation, and on which an online learner's temperature is
            fitted (without one, on a held-out tenth of X).
        y_dev : list of lists of str, default=None
            The labels of the dev set; give both `X_dev` and `y_dev` or neither.

        Returns
        -------
        self : CRF
            The fitted estimator.

        Raises
        ------
        ValueError
            For bad parameters or data (seqbil's errors become ValueError, as in
            scikit-learn).

        Notes
        -----
        A CRF's c2 is CRFsuite's default, 1, unless given.
        """
        if (X_dev is None) != (y_dev is None):
            raise ValueError("Pass both X_dev and y_dev to use the holdout data")
        from ..training import train
        settings = self.settings()
        y, y_dev = list(y), list(y_dev) if y_dev is not None else None
        if partial.in_python(y) or (y_dev is not None and partial.in_python(y_dev)):
            settings = settings.but({"partial": True}, "arguments")
        train_data = _sentences(X, y, "X")
        dev = _sentences(X_dev, y_dev, "X_dev") if X_dev is not None else None
        self._release()
        if self.model_filename is not None:
            path, temporary = Path(self.model_filename), False
        else:
            fd, name = tempfile.mkstemp(prefix="model", suffix=".sbm")
            os.close(fd)
            path, temporary = Path(name), True
        echo = print if self.verbose else (lambda line: None)
        try:
            model, history = train(settings, train_data, str(path), dev=dev, echo=echo,
                                   show_progress=bool(self.verbose))
        except BaseException as exc:
            if temporary:
                path.unlink(missing_ok=True)
            if isinstance(exc, SeqbilError):
                raise ValueError(str(exc)) from None
            raise
        self._model, self._path, self._temporary = model, path, temporary
        self.training_log_ = TrainingLog(history)
        return self

    # --- prediction -----------------------------------------------------------------
    @property
    def tagger_(self):
        """A python-crfsuite Tagger on the model (`seqbil.sklearn.tagger.Tagger`), or None."""
        if self._tagger is None:
            model = self._loaded()
            if model is None:
                return None
            self._tagger = Tagger(model, os.path.getsize(self._path) if self._path else 0)
        return self._tagger

    def _loaded(self):
        if self._model is None and self.model_filename is not None and os.path.exists(self.model_filename):
            self._model, self._path, self._temporary = open_model(self.model_filename), Path(self.model_filename), False
        return self._model

    def _need_model(self):
        model = self._loaded()
        if model is None:
            raise ValueError("This CRF instance is not fitted yet: call fit first (or give model_filename of a "
                             "model file)")
        return model

    def predict(self, X, known=None):
        """Predict the labels of sequences.

        Parameters
        ----------
        X : list of lists of dicts
            The sequences, as for `fit`.
        known : list of lists, default=None
            Forced decoding: per sequence, per item, its label if known (kept as it
            is) or None (predicted under those known); None for a sequence with none
            known. Not in sklearn-crfsuite (Wapiti's `--force`).

        Returns
        -------
        y : ndarray of object
            The predicted labels of each sequence, as sklearn-crfsuite returns them.
        """
        return np.array(self._predict_lists(X, known), dtype=object)

    def _sentences(self, model, X, known):
        """(formats.Sentences of X, whether labels are known), known labels checked."""
        sentences = [Sentence([], None, j, items=list(x)) for j, x in enumerate(X, 1)]
        if known is None:
            return sentences, False
        return model.with_known(sentences, known), True

    def _predict_lists(self, X, known=None):
        model = self._need_model()
        sentences, force = self._sentences(model, X, known)
        nonempty = [s for s in sentences if len(s)]
        found = iter(model.predict(nonempty, force=force) if nonempty else [])
        return [list(next(found)) if len(s) else [] for s in sentences]

    def predict_single(self, xseq):
        """Predict the labels of one sequence.

        Parameters
        ----------
        xseq : list of dicts
            The sequence, a feature dict per item.

        Returns
        -------
        labels : list of str
            The predicted label of each item.
        """
        return self._predict_lists([xseq])[0]

    def predict_marginals(self, X, known=None):
        """The marginal probabilities of the labels of sequences.

        Parameters
        ----------
        X : list of lists of dicts
            The sequences, as for `fit`.
        known : list of lists, default=None
            Known labels, as for `predict`: the marginals are conditioned on them.

        Returns
        -------
        marginals : ndarray of object
            Per sequence, per item, `{label: probability}` over all labels.
        """
        return np.array(self._marginal_dicts(X, known), dtype=object)

    def _marginal_dicts(self, X, known=None):
        model = self._need_model()
        sentences, force = self._sentences(model, X, known)
        labels = model.labels
        return [[dict(zip(labels, row)) for row in marginals.tolist()]
                for _, _, marginals, _ in model.predict_marginals(sentences, force=force)]

    def predict_marginals_single(self, xseq):
        """The marginal probabilities of the labels of one sequence.

        Parameters
        ----------
        xseq : list of dicts
            The sequence, a feature dict per item.

        Returns
        -------
        marginals : list of dict
            Per item, `{label: probability}` over all labels.
        """
        return self._marginal_dicts([xseq])[0]

    def score(self, X, y):
        """Flat token accuracy (sklearn-crfsuite's score).

        Parameters
        ----------
        X : list of lists of dicts
            The sequences, as for `fit`.
        y : list of lists of str
            Their gold labels.

        Returns
        -------
        accuracy : float
            The fraction of the items whose predicted label is the gold one.
        """
        return flat_accuracy_score(y, self.predict(X))

    # --- what the model holds -------------------------------------------------------------
    @property
    def _info(self):
        tagger = self.tagger_
        if tagger is None:
            return None
        if getattr(self, "_info_cached", None) is None:
            self._info_cached = tagger.info()
        return self._info_cached

    @property
    def classes_(self):
        """The labels of the model, or None."""
        model = self._loaded()
        return None if model is None else list(model.labels)

    @property
    def size_(self):
        """The size of the model file in bytes, or None."""
        return None if self._info is None else int(self._info.header["size"])

    @property
    def num_attributes_(self):
        """The number of attributes that hold a weight, or None."""
        return None if self._info is None else int(self._info.header["num_attrs"])

    @property
    def attributes_(self):
        """The names of the attributes that hold a weight, by id, or None."""
        if self._info is None:
            return None
        out = [None] * self.num_attributes_
        for name, i in self._info.attributes.items():
            out[i] = name
        return out

    @property
    def state_features_(self):
        """The non-zero 0-order weights, `{(attribute, label): weight}`, or None."""
        return None if self._info is None else self._info.state_features

    @property
    def transition_features_(self):
        """The non-zero label-transition weights, `{(label_from, label_to): weight}`, or None.

        The weights of `B:%attr` attributes are in `tagger_.info().first_order_features`.
        """
        return None if self._info is None else self._info.transitions

    @property
    def temperature_(self):
        """What the scores are divided by in the probabilities, or None."""
        model = self._loaded()
        return None if model is None else model.temperature

    # --- files and pickling ---------------------------------------------------------------
    def _release(self):
        """Forget the model (and remove its temporary file unless keep_tempfiles)."""
        if self._temporary and self._path is not None and not self.keep_tempfiles:
            self._model = self._tagger = None
            try:
                os.unlink(self._path)
            except OSError:
                pass
        self._model, self._path, self._temporary, self._tagger, self._info_cached = None, None, False, None, None

    def __del__(self):
        try:
            self._release()
        except Exception:  # interpreter shutdown
            pass

    def __getstate__(self):
        """The parameters, the log's records and the model file's bytes (never the
        model's objects)."""
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("_")}
        if self.training_log_ is not None:
            state["training_log_"] = self.training_log_.history
        model = self._loaded()
        state["_model_bytes"] = Path(self._path).read_bytes() if model is not None else None
        return state

    def __setstate__(self, state):
        data = state.pop("_model_bytes", None)
        if state.get("training_log_") is not None:
            state["training_log_"] = TrainingLog(state["training_log_"])
        self.__dict__.update(state)
        self._model, self._path, self._temporary, self._tagger, self._info_cached = None, None, False, None, None
        if data is not None:
            fd, name = tempfile.mkstemp(prefix="model", suffix=".sbm")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            self._model, self._path, self._temporary = open_model(name), Path(name), True


class TrainingLog:
    """The record of a fit: iterations, one dict per pass as seqbil logs it (`--log`:
    pass, seconds, and the learner's own figures: a CRF's objective and norms, an
    online learner's mistakes, the dev scores), with python-crfsuite's keys where they
    mean the same (num, time, loss, feature_norm, error_norm); last_iteration, the
    last of them."""

    KEYS = {"pass": "num", "seconds": "time", "objective": "loss", "xnorm": "feature_norm", "gnorm": "error_norm"}

    def __init__(self, history):
        self.history = [dict(r) for r in history]  # as seqbil logs them (what pickling keeps)
        self.iterations = []
        for record in history:
            item = dict(record)
            item.update({theirs: record[mine] for mine, theirs in self.KEYS.items() if mine in record})
            self.iterations.append(item)
        self.last_iteration = self.iterations[-1] if self.iterations else None
        self.training_seconds = sum(r.get("seconds", 0.0) for r in history)


def _sentences(X, y, name):
    """Sentences of items with their labels, checked as sklearn-crfsuite's users need.
    A label may be partial (formats/partial.py): None where it is unknown, a set of
    the labels it may be; such labels are written as a partial corpus writes them
    (? and A|B: formats/partial.py), and the fit reads them so."""
    X = list(X)
    y = list(y)
    if len(X) != len(y):
        raise ValueError(f"{name}: {len(X)} sequences but {len(y)} label sequences")
    out, is_partial = [], partial.in_python(y)
    for j, (x, labels) in enumerate(zip(X, y), 1):
        x, labels = list(x), list(labels)
        if len(x) != len(labels):
            raise ValueError(f"{name}: sequence {j} has {len(x)} items and {len(labels)} labels")
        if is_partial:
            try:
                labels = [partial.written(label) for label in labels]
            except ValueError as exc:
                raise ValueError(f"{name}: sequence {j}: {exc}") from None
        for label in labels:
            if not isinstance(label, str) or not label:
                raise ValueError(f"{name}: sequence {j}: the label {label!r} is not a non-empty string")
        if x:
            out.append(Sentence([], labels, j, items=x))
    if not out:
        raise ValueError(f"{name}: no sequences")
    return out
