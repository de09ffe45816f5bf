"""The two kinds of learner and what they share.

The trainer makes a learner's passes (run_pass) and asks for its current parameters
to evaluate or save. An online learner learns from the training sequences in the
order the trainer draws for each pass, a few hundred at a time (train_chunk: each
chunk is one call into compiled code, so there is no per-sequence Python loop), and
may train on shards. A batch learner builds its parameters from the whole corpus
(prepare) and takes each pass over all of it at once (train_pass: an iteration of an
optimizer, an epoch of its own order), so its passes can end training.
"""
import json
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from ..storage import Rows
from .latent import LatentTargets

REGISTRY = {}

# sequences an online learner takes per call into compiled code: the trainer handles
# progress and Ctrl-C between calls, in one process and on the shards alike
CHUNK = 256
# the score of a transition or last label the rules forbid, in an online learner's arrays
FORBIDDEN = -1e30


def register(cls):
    """Class decorator: make a learner available under cls.name."""
    if not cls.name or cls.name in REGISTRY:
        raise RuntimeError(f"learner name {cls.name!r} is empty or taken")
    REGISTRY[cls.name] = cls
    return cls


@dataclass(frozen=True)
class Checkpointed:
    """The state of a learner that a checkpoint keeps (Learner.snapshot, restore), each
    name in the order the checkpoint lists it; a subclass adds its own (plus). Named
    rather than found among the attributes, so that one more attribute does not
    change what checkpoints hold."""
    # arrays updated in place: one that is a view of another of them follows it and is
    # left out, and one named mark* indexes per-update buffers, -1 between passes
    arrays: tuple = ()
    fixed: tuple = ()    # arrays the training corpus fixes: a checkpoint's must be the fresh learner's
    numbers: tuple = ()  # numbers and strings, and random generators (as their state, in JSON)
    # the numbers that change while training, with their least value; every other one
    # (but a generator) must be the fresh learner's
    progress: dict = field(default_factory=dict)
    # {prefix: attribute}: objects whose state() and restore() keep their own state
    # (an optimizer), under names with the prefix
    parts: dict = field(default_factory=dict)

    def plus(self, arrays=(), fixed=(), numbers=(), progress=None, parts=None):
        """This state and more, listed after it."""
        return Checkpointed(self.arrays + arrays, self.fixed + fixed, self.numbers + numbers,
                            {**self.progress, **(progress or {})}, {**self.parts, **(parts or {})})


def _kept_number(value):
    """A number as a checkpoint keeps it: a random generator as its state, in JSON."""
    return json.dumps(value.bit_generator.state) if isinstance(value, np.random.Generator) else value


class Learner(ABC):
    """What training, the settings, checkpoints and `seqbil params` ask of either kind
    (OnlineLearner, BatchLearner)."""
    name = ""
    summary = ""         # one line for --help and the docs
    options = ()         # params.Param entries only this learner reads
    averages = True      # honours the `averaged` option
    bilinear = False     # factors the 1st-order weights: without 1st-order templates it is sp
    multitask = False    # learns several tasks at once (the `tasks` argument)
    embeds = False       # learns the %emb vectors too (attach(first, phi); the corpus gives emb_rows)
    defaults = {}        # parameter defaults of its own, e.g. {"epochs": 1000}
    probabilistic = False  # its scores are log-probabilities (a CRF): no temperature is fitted
    mixes = False        # trains on shards (an online learner, whose mixing() names what is mixed)
    # what the log line shows of a pass's record besides what its kind shows, as (key,
    # format) pairs, format a str.format string of the value or a function of it; a
    # key missing or None is left out
    shown = ()
    checkpointed = Checkpointed()  # what a checkpoint keeps of it

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        """transitions: learn the label-transition matrix (the template set has a bare B).
        tasks: None, or (K, b, (lo0, hi0), (lo1, hi1)) for multi-task learning with
        coupling b, the attributes lo <= a < hi of each order being the tasks' own
        copies (the others are shared): see cython_ext/chain.pxd, Linear. trans and
        end then stack K + 1 copies, the shared one first."""
        self.S, self.A0, self.A1 = n_labels, n_attributes0, n_attributes1
        self.settings, self.transitions = settings, bool(transitions)
        if tasks is not None and not self.multitask:
            raise ValueError(f"learner {self.name} does not learn several tasks")
        self.tasks = tasks
        self.copies = 1 if tasks is None else tasks[0] + 1

    @classmethod
    def grid(cls, settings, coarse=False):
        """The settings to choose on held-out data before training (dicts of parameter
        values, tried in this order, each continuing from the one before when the
        learner is a BatchLearner), or [] when nothing is chosen. coarse: the fewer,
        farther points learner = auto tries, where each costs a training per fold."""
        return []

    @classmethod
    def refuse(cls, settings):
        """(parameter name, why) when the settings cannot work with this learner, else None."""
        return None

    @classmethod
    def supports_mixing(cls):
        """Whether the learner can train on shards (mixes)."""
        return cls.mixes

    def passes(self):
        """How many passes over the training data a run makes."""
        return int(self.settings.epochs)

    def pass_name(self, k):
        """Label of pass k (0-based) on the progress bar."""
        return f"epoch {k + 1}/{self.passes()}"

    def prepare(self, data):
        """Called once with the encoded training corpus, before warm_start, restore and
        the first pass (a learner whose parameters depend on the data builds them)."""

    def start_pass(self, k):
        """Called before pass k."""

    @abstractmethod
    def run_pass(self, data, k, epoch):
        """Pass k over the training corpus `data`; returns the pass's record for the log.
        epoch is the trainer's side of the pass (training/passes.py: Epoch):
        epoch.chunks() draws the order of the sequences and cuts it into chunks,
        epoch.learned(chunk, mistakes) counts a chunk learned (no chunk: the whole
        corpus) on the progress bar and by task."""

    def end_pass(self, k):
        """Called after pass k; returns a dict of diagnostics for the log."""
        return {}

    @abstractmethod
    def pass_line(self, record):
        """The log line of a pass's record."""

    def shown_fields(self, record):
        """The fields of a pass's record that the log line shows (shown), formatted."""
        return [fmt.format(record[key]) if isinstance(fmt, str) else fmt(record[key])
                for key, fmt in self.shown if record.get(key) is not None]

    def finish(self):
        """Training is over: drop what only training needs (parameters() must still
        work), so that saving the model does not add to the peak memory."""

    def snapshot(self):
        """(arrays, scalars) from which restore() rebuilds this learner exactly: its
        state as `checkpointed` declares it."""
        kept = self.checkpointed
        named = [(name, getattr(self, name)) for name in kept.arrays + kept.fixed]
        arrays = {name: value for name, value in named if isinstance(value, np.ndarray)
                  and not (value.base is not None and any(value.base is other for _, other in named))}
        scalars = {name: _kept_number(getattr(self, name)) for name in kept.numbers}
        for prefix, attribute in kept.parts.items():
            part_arrays, part_scalars = getattr(self, attribute).state()
            arrays.update((prefix + name, value) for name, value in part_arrays.items())
            scalars.update((prefix + name, value) for name, value in part_scalars.items())
        return arrays, scalars

    def state_problem(self, arrays, scalars):
        """What is wrong with a snapshot's values that fit this learner's names, shapes
        and types, or None: the invariants of its state that its kernels rely on (they
        run without bounds checks), declared here by each learner that has them."""
        return None

    def restore(self, arrays, scalars):
        """Take over a snapshot, after checking that it fits this learner exactly: the
        same names, arrays of the same shapes and types, the fixed arrays and numbers
        this learner's, the others within their range, marks at rest; each part
        checks its own."""
        kept = self.checkpointed
        fresh_arrays, fresh_scalars = self.snapshot()
        if set(arrays) != set(fresh_arrays) or set(scalars) != set(fresh_scalars):
            raise ValueError("the checkpoint's arrays or numbers do not fit this learner")
        for name in kept.numbers:
            value, fresh = scalars[name], fresh_scalars[name]
            if isinstance(getattr(self, name), np.random.Generator):
                fits = type(value) is str
            elif name in kept.progress:
                least = kept.progress[name]
                fits = type(value) is type(least) and least <= value < math.inf
            else:
                fits = type(value) is type(fresh) and value == fresh
            if not fits:
                raise ValueError(f"checkpoint value {name} = {value!r} does not fit this learner")
        own = [name for name in kept.arrays + kept.fixed if name in fresh_arrays]
        for name in own:
            value, target = arrays[name], fresh_arrays[name]
            if target.shape != value.shape or target.dtype != value.dtype or \
                    (name in kept.fixed and not np.array_equal(target, value)):
                raise ValueError(f"checkpoint array {name} does not fit this learner")
            if name.startswith("mark") and np.any(value != -1):  # indices into per-update buffers
                raise ValueError(f"checkpoint array {name} is not at rest")
        problem = self.state_problem(arrays, scalars)
        if problem:
            raise ValueError(problem)
        for name in own:
            if name not in kept.fixed:
                np.copyto(fresh_arrays[name], arrays[name])  # in place, so views (alpha, beta) and kernels follow
        for name in kept.numbers:
            if isinstance(getattr(self, name), np.random.Generator):
                getattr(self, name).bit_generator.state = json.loads(scalars[name])
            else:
                setattr(self, name, scalars[name])
        for prefix, attribute in kept.parts.items():
            arrays_of, scalars_of = ({name[len(prefix):]: value for name, value in found.items()
                                      if name.startswith(prefix)} for found in (arrays, scalars))
            getattr(self, attribute).restore(arrays_of, scalars_of)

    def forbid(self, trans, end):
        """Train over the labellings without the transitions trans[y, v] (v = S: the
        start) and last labels end[y] that the masks mark (training/rules.py): their
        scores are set far below any path's (FORBIDDEN, finite so that sums and
        averages of the arrays stay numbers), no decode takes them, and no step ever
        touches them; the model keeps the rules and decodes them at -inf."""
        self.trans[trans] = FORBIDDEN
        self.end[end] = FORBIDDEN

    def warm_start(self, weights):
        """Start from the weights of a saved model (continued training): the arrays
        named as in parameters() are copied in; averaging starts afresh from them."""
        for name, value in weights.items():
            target = getattr(self, name)
            if target.shape != value.shape:
                raise ValueError(f"{name}: shape {value.shape}, the learner has {target.shape}")
            target[...] = value

    @abstractmethod
    def parameters(self):
        """(kind, weights) for decoding and saving: averaged when averaging is on."""

    def current_rows(self, rows0, rows1):
        """(kind, weights) that score as the learner stands now, cut to the 0-order
        attributes rows0 and the 1st-order ones rows1 (their rows in that order; trans
        and end whole): the weights a partially labelled sentence's target is decoded
        with (latent.py). By default those of parameters(), the running average when
        the learner averages."""
        return cut_rows(*self.parameters(), rows0, rows1)

    def decode_parameters(self, rows0, rows1):
        """parameters() cut to the 0-order attributes rows0 and the 1st-order ones rows1
        (as current_rows cuts them): the weights of a decode that reads only those rows
        (the held-out decode after each pass of learner = auto, over the attributes its
        part has). By default parameters() cut; a learner may make only those rows."""
        return cut_rows(*self.parameters(), rows0, rows1)

    def final_parameters(self):
        """parameters() once training is over (the learner is not used again): a
        learner may make them in its own arrays instead of new ones, which keeps a
        copy of the weights off the peak memory. The same values as parameters(), or
        those rounded to the precision the model keeps."""
        return self.parameters()


class OnlineLearner(Learner):
    """A learner that learns from the training sequences in the order the trainer
    draws for each pass, a chunk at a time (train_chunk), reads the `C` and `averaged`
    settings, and may train on shards (mixes, mixing)."""
    own_mix = ()  # the parameters it mixes itself on threads (mix_own), not row by row
    dense_rows = False  # its parameters are mostly non-zero: a thread's copy takes them whole
    # (the sizes and settings too, so that a checkpoint of other ones is refused)
    checkpointed = Checkpointed(arrays=("trans",),
                                numbers=("S", "A0", "A1", "transitions", "copies", "C", "averaged"))

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        self.trans = np.zeros((self.copies * n_labels, n_labels + 1))
        self.C = float(settings.C)
        self.averaged = bool(settings.averaged)

    @abstractmethod
    def train_chunk(self, data, order):
        """Learn from the sequences data[order] (int64 indices); return the mistakes."""

    def run_pass(self, data, k, epoch):
        mistakes = 0
        latent = LatentTargets(data) if data.known is not None else None
        for chunk in epoch.chunks():
            if latent is not None:  # partial labels: each partial sentence's target, as the weights stand
                latent.refresh(self, chunk)
            mistakes += self.train_chunk(data, chunk)
            epoch.learned(chunk, mistakes)
        return self.pass_record(mistakes, data.n_sequences)

    @staticmethod
    def pass_record(mistakes, sequences):
        """The record of a pass that got `mistakes` of `sequences` sequences wrong."""
        return {"mistakes": int(mistakes), "error_rate": mistakes / max(sequences, 1)}

    def pass_line(self, record):
        return f"{record['name']}: {record['mistakes']} mistakes ({100 * record['error_rate']:.2f}%), " \
               f"{record['seconds']:.2f} s" + "".join(f", {field}" for field in self.shown_fields(record))

    def mixing(self):
        """What iterative parameter mixing averages (seqbil/dask/ipm.py) for a learner
        that mixes, or None when its settings do not allow it: ({name: order}, [scalar
        names]), order 0 or 1 when the parameter has a row per attribute of that order
        (only the rows a shard changed travel), None when it travels whole. get_rows
        and set_rows read and write them."""
        return None

    def get_rows(self, name, rows):
        """Parameter `name` at the attributes `rows` (None: all of it), a new array."""
        array = getattr(self, name)
        return array.copy() if rows is None else array[rows]

    def row_size(self, name):
        """Numbers in a row of a parameter with a row per attribute."""
        return int(np.prod(self.get_rows(name, np.zeros(0, np.int64)).shape[1:], dtype=np.int64))

    def set_rows(self, name, rows, values):
        """Set parameter `name` at the attributes `rows` (None: all of it)."""
        array = getattr(self, name)
        if rows is None:
            array[...] = values
        else:
            array[rows] = values

    def twin(self):
        """A learner of the same sizes and settings, whose parameters are still to be
        set (a copy that trains on a thread of its own)."""
        return type(self)(self.S, self.A0, self.A1, self.settings, self.transitions)

    @classmethod
    def supports_threads(cls):
        """Whether the learner trains on threads (--jobs, training/threads.py): it names
        what a mix averages (mixing). On shards too only where it mixes (mixes)."""
        return cls.mixing is not OnlineLearner.mixing

    def row_pool(self, name):
        """(array, slot table or None) where the rows of parameter `name` (a row per
        attribute) are kept, for the threads' mix to write in place (training/threads.py,
        mix.pyx); None: read and written through get_rows and set_rows."""
        return None

    def hold_rows(self, order, rows):
        """Give the attributes `rows` of the order a row (a slot) where the parameters
        keep rows by slot, before a mix writes them in place."""

    def only_mixing(self):
        """This learner holds the mix and makes no pass (the driver of iterative
        parameter mixing): what only its passes use may go."""

    def mixed(self, mix, shards):
        """Called on the mix of `shards` shards before it goes back to them (a dict
        as mixing names it: (keys, values) of the entries mixed for a parameter with a
        row per attribute, key = row * row_size + column); may adjust it in place."""

    def mix_own(self, copies, touched, mu, mixed, parallel):
        """On threads (training/threads.py): mix what the row by row mix leaves out,
        the parameters named in own_mix (bol's blocks, arow's means and variances) or
        rows the attributes touched miss (rpa's), across `copies` (this learner first)
        at the rows of the attributes `touched` (0-order ids, 1st-order ids) with the
        weights mu; the dense parameters and scalars are mixed already (`mixed`, whose
        entries for the dense parameters it names it replaces); parallel(fn, rows)
        runs fn on parts of the rows at once."""


class BatchLearner(Learner):
    """A learner that builds its parameters from the whole training corpus (prepare)
    and takes each pass over all of it at once (train_pass), whose record may end
    training. It names the fields of its records the log line shows (shown)."""

    @abstractmethod
    def prepare(self, data):
        """Called once with the encoded training corpus, before warm_start, restore and
        the first pass: the parameters, which depend on the data, are built here."""

    @abstractmethod
    def train_pass(self, data, k):
        """Pass k over the whole corpus; returns its record for the log, whose "stop"
        entry, when not None, ends training (converged)."""

    def run_pass(self, data, k, epoch):
        record = self.train_pass(data, k)
        epoch.learned()
        return record

    def pass_line(self, record):
        return f"{record['name']}: " + ", ".join([*self.shown_fields(record), f"{record['seconds']:.2f} s"])


_SUMS = {"W0": "U0", "W1": "U1", "trans": "Utrans", "end": "Uend"}  # each weight array's averaging sums


class AveragedLinear(OnlineLearner):
    """A learner on the linear first-order model whose kernel updates W0, W1, trans
    and end in place and, when it averages, their sums U0, U1, Utrans, Uend over
    `counter` steps (Daume 2006): sp, rpa, pa. Subclasses build self.kernel, with a
    train_chunk(data, order, counter) -> (mistakes, counter), from these arrays."""
    mixes = True
    checkpointed = OnlineLearner.checkpointed.plus(arrays=("W0", "W1", "end", "U0", "U1", "Utrans", "Uend"),
                                                   numbers=("counter",), progress={"counter": 1})

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        S = self.S
        self.W0 = np.zeros((self.A0, S))
        self.W1 = np.zeros((self.A1, S, S + 1))
        self.end = np.zeros(self.copies * S)
        shape = (lambda a: a.shape) if self.averaged else (lambda a: (0,) * a.ndim)
        self.U0, self.U1, self.Utrans, self.Uend = (np.zeros(shape(a)) for a in (self.W0, self.W1, self.trans,
                                                                                  self.end))
        self.counter = 1

    def train_chunk(self, data, order):
        mistakes, self.counter = self.kernel.train_chunk(data, order, self.counter)
        return mistakes

    def mixing(self):
        pairs = (("W0", 0, "U0"), ("W1", 1, "U1"), ("trans", None, "Utrans"), ("end", None, "Uend"))
        names = {w: order for w, order, _ in pairs}
        if self.averaged:  # the lazy sums and the step counter mix as the weights do
            names.update({u: order for _, order, u in pairs})
        return names, ["counter"] if self.averaged else []

    def row_pool(self, name):
        return getattr(self, name), None

    def parameters(self):
        return self.decode_parameters(None, None)

    def decode_parameters(self, rows0, rows1):
        """The weights at the rows only (None: every attribute), W - U / counter when
        averaging (Daume 2006): parameters() is this at every row. The held-out decode
        after each pass of learner = auto reads the rows its part has: on small corpora
        making all of them after each pass took as long as the pass itself."""
        def at(name, rows):  # (an array kept whole by attribute is read as it is)
            return getattr(self, name) if rows is None and self.row_pool(name)[1] is None else \
                self.get_rows(name, rows)
        named = (("W0", "U0", rows0), ("W1", "U1", rows1), ("trans", "Utrans", None), ("end", "Uend", None))
        if not self.averaged:
            return "linear", {w: at(w, rows) for w, _, rows in named}
        c = float(self.counter)
        return "linear", {w: at(w, rows) - at(u, rows) / c for w, u, rows in named}

    def current_rows(self, rows0, rows1):
        """The current weights themselves (not their average: the latent perceptron's
        target is the best labelling under the weights as they stand), cut to the rows."""
        return "linear", {"W0": self.W0[rows0], "W1": self.get_rows("W1", rows1), "trans": self.trans,
                          "end": self.end}

    def final_parameters(self):
        self._average_in_place(("W0", "W1", "trans", "end"))
        return "linear", {w: getattr(self, w) for w in ("W0", "W1", "trans", "end")}

    def _average_in_place(self, names):
        """When averaging: W - U / counter in W's own arrays for the weights `names`
        (the same rounding as parameters()), their sums let go; then W holds the
        averages."""
        if not self.averaged:
            return
        c = float(self.counter)
        for w in names:
            u = _SUMS[w]
            W, U = getattr(self, w), getattr(self, u)
            np.divide(U, c, out=U)
            np.subtract(W, U, out=W)
            setattr(self, u, np.zeros((0,) * U.ndim))
        self.averaged = False  # (what W holds now)


def cut_rows(kind, weights, rows0, rows1):
    """(kind, weights) cut to the 0-order attributes rows0 and the 1st-order ones rows1
    (their rows in that order; trans and end whole)."""
    cut = {"W0": rows0, "W1": rows1, "alpha": rows1, "beta": rows1}
    return kind, {name: w[cut[name]] if name in cut else w for name, w in weights.items()}


def slots_to_attributes(W, U, counter, attrs, n_attributes, dtype):
    """Rows kept by slot (row s belongs to attribute attrs[s]; rows past len(attrs)
    unused) as an (n_attributes, ...) array in attribute order at dtype, zero where
    an attribute has no slot; averaged on the way (W - U / counter) when U is given.

    For the largest arrays of a run: the rows in use are first rounded to the
    precision the model keeps (it rounds to it anyway), then scattered; each step goes
    a chunk at a time from the end of its source and gives that memory back, so W and
    U are consumed (cut to no rows where they can be resized) and no second float64
    copy is ever made."""
    rows, shape = rounded_slots(W, U, counter, len(attrs), dtype), (n_attributes,) + W.shape[1:]
    del W, U
    out = np.zeros(shape, dtype=dtype)
    for lo, hi in _chunks_from_end(len(attrs)):
        out[attrs[lo:hi]] = rows[lo:hi]
        rows = _shrink(rows, lo)
    return out


def slots_to_rows(W, U, counter, attrs, n_attributes, precision):
    """As slots_to_attributes, but as the sparse rows a model keeps (storage.Rows:
    the non-zero cells of each attribute's row, flattened), so that no dense array
    over all the attributes is made: the weights of the attributes never reached take
    no memory at all."""
    rows = rounded_slots(W, U, counter, len(attrs), np.float32 if precision == "float32" else np.float64)
    del W, U
    return Rows.from_slots(rows, attrs, n_attributes, precision)


def rounded_slots(W, U, counter, used, dtype):
    """The first `used` rows of W (W - U / counter when U is given) at dtype; W and U
    consumed a chunk at a time from the end (see slots_to_attributes)."""
    if dtype == W.dtype and U is None:
        return _shrink(W, used)
    W, U = _shrink(W, used), _shrink(U, used)
    rows, c = np.empty((used,) + W.shape[1:], dtype=dtype), float(counter)
    for lo, hi in _chunks_from_end(used):
        rows[lo:hi] = W[lo:hi] if U is None else W[lo:hi] - U[lo:hi] / c
        W, U = _shrink(W, lo), _shrink(U, lo)
    return rows


def _chunks_from_end(n, size=1 << 15):
    """(lo, hi) of the chunks of range(n), from the last."""
    for hi in range(n, 0, -size):
        yield max(0, hi - size), hi


def _shrink(a, n):
    """a cut to its first n rows in place, the rest of its memory given back (realloc);
    a itself where it cannot be resized (None stays None)."""
    if a is None:
        return None
    try:
        a.resize((n,) + a.shape[1:], refcheck=False)
        return a
    except ValueError:
        return a[:n]
