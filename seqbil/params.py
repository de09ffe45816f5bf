"""The parameter table: every option of a training run, with its type, default, help
text and the learners that use it (CRFsuite's params.c is the model).

The core options are listed here; each learner adds its own in its module
(`Learner.options`). The table drives the TOML keys, the `seqbil train` flags, the
`seqbil params` listing (and so the README's option table) and the settings stored
in a model. A config file sets options per section; command-line flags override the
config; unset options take the defaults. Unknown keys and wrong types are errors.
"""
import math
import re
import tomllib
from dataclasses import field, make_dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from .calibration import T_MAX, T_MIN
from .errors import ConfigError
from .formats import FORMATS
from .formats.textio import encoding_problem
from .learners import LEARNERS
from .parameter import Param

SECTIONS = ("corpus", "features", "train", "tag", "structure")
# names an option had before: a config or argument that gives one is told the new name;
# the settings of checkpoints written with them are read under the new names
RENAMED = {"crf_period": "period", "crf_delta": "delta"}


def offsets(text):
    """The offsets of a window such as "-1,0,1" (each within +-1000, none twice)."""
    window = [int(w) for w in text.split(",")]
    if any(abs(w) > 1000 for w in window) or len(set(window)) != len(window):
        raise ValueError(text)
    return window


AUTO = "auto"  # the learner value that chooses among the candidates


def _temperature_problem(value):
    if value != 0 and not T_MIN <= value <= T_MAX:
        return f"give 0 (fitted) or a temperature from {T_MIN:g} to {T_MAX:g}"
    return None


def _candidates_problem(names):
    unknown = [n for n in names if n not in LEARNERS]
    if unknown or not names or len(set(names)) != len(names):
        return (f"{unknown[0]!r} is not a learner; " if unknown else "") + \
            f"give distinct learners among {', '.join(LEARNERS)}"
    return None


def _offsets_problem(text):
    try:
        offsets(text)
    except ValueError:
        return "give distinct offsets from -1000 to 1000, comma-separated, such as 0 or -1,0,1"
    return None


CORE = [
    Param("format", str, "conll", "corpus format: conll (token per line, columns), sighan (sentence per "
          "line, words separated by spaces; characters tagged B/I/E/S) or crfsuite (CRFsuite's attribute files: "
          "the label, then the attributes, tab-separated; templates U:%attr and B unless given)", "corpus",
          tuple(FORMATS)),
    Param("label_column", int, -1, "CoNLL field holding the label (negative: from the end)", "corpus",
          maximum=999),
    Param("encoding", str, "utf-8", "text encoding of the corpus files", "corpus", validate=encoding_problem),
    Param("normalize", str, "none", "fold field values before the templates read them: none, or nfkc "
          "(full-width digits and letters read as ASCII; the output keeps the input as it was)", "corpus",
          ("none", "nfkc")),
    Param("metric", str, "auto", "dev and eval scores: chunk (conlleval chunk F1), segment (SIGHAN word F1), "
          "accuracy (per token), or auto (segment for sighan files, chunk when the labels are chunk tags, "
          "else accuracy)", "corpus", ("auto", "chunk", "segment", "accuracy")),
    Param("scheme", str, "auto", "chunk tag scheme: iob1, iob2, ioe1, ioe2, iobes, bilou, or auto (from the "
          "labels)", "corpus", ("auto", "iob1", "iob2", "ioe1", "ioe2", "iobes", "bilou")),
    Param("well_formed", bool, False, "only labellings well formed in the chunk tag scheme (IOB2: no I-X after O "
          "or B-Y, nor first; IOBES, BILOU: every chunk begun is ended; B, I, E, S likewise): crf and the online "
          "learners train over them, and the model keeps the rule, so that it never outputs another", "tag"),
    Param("forbid", str, "", "a file of what a labelling may not have, a pair of labels per line: `A B` (B right "
          "after A), `<s> B` (B first), `A </s>` (A last): trained over and kept by the model, as well_formed",
          "tag", metavar="FILE"),
    Param("partial_words", str, "", "with partial and segmented (sighan) training text, whose spaces are then "
          "known boundaries and the rest unknown: a word list whose words matched in the text (the longest "
          "first, left to right, none across a space) are known words inside, their edges unknown", "corpus",
          metavar="FILE"),
    Param("partial", bool, False, "the training and dev labels may be partial: ? for a token whose label is "
          "unknown, A|B for one of A and B (crf and the online learners learn what is known; scores count only "
          "the known tokens)", "corpus"),
    Param("templates", list, [], "feature templates in CRF++ syntax: U... 0-order, B... 1st-order, a bare B "
          "the label transitions (on the command line: --template FILE)", "features", flag="-"),
    Param("min_count", int, 1, "drop attributes seen fewer times in the training data", "features",
          positive=True),
    Param("dictionaries", list, [], "dictionaries and gazetteers that %dict[NAME] and %gaz[NAME] templates read, "
          "each NAME=FILE (one word, or one phrase of space-separated tokens, per line; a frequency after the word "
          "is ignored) or NAME=train (the words of the training data, segmentation only)", "features",
          flag="--dictionary"),
    Param("dict_folds", int, 5, "jackknife folds of a NAME=train dictionary: training sentences of fold k see "
          "only the words of the other folds, as unseen text sees the dictionary (0 or 1: no jackknife)",
          "features", minimum=0, maximum=10 ** 4),
    Param("dict_min_length", int, 1, "dictionary entries shorter than this are left out (2: single characters "
          "do not count as words)", "features", positive=True, maximum=10 ** 4),
    Param("dict_length_cap", int, 6, "dictionary entry lengths above it read as it in %dict values",
          "features", positive=True, maximum=10 ** 4),
    Param("vectors", list, [], "word vectors that %vec[r,c,NAME] templates read, each NAME=FILE (word2vec text "
          "format, or a .npy matrix with a NAME.vocab word list beside it)", "features", flag="--vectors"),
    Param("vector_unknown", str, "learned", "a word without a vector (after trying its lower case): learned "
          "(an indicator feature with its own weights) or zero (no feature)", "features", ("learned", "zero")),
    Param("vector_rows", str, "seen", "vector rows the model keeps: seen (the words of the training data) or all "
          "(the whole file, so that unseen words keep their vectors at tagging time)", "features", ("seen", "all")),
    Param("vector_scale", float, 1.0, "factor applied to every vector component (their scale against the binary "
          "features matters to online learners)", "features", positive=True),
    Param("embeddings", str, "", "the word vectors the %emb templates read (and the rpa learner adapts): a "
          "vectors file (word2vec text format, e.g. from seqbil aso --vectors; scaled to a mean row norm of 1) or "
          "random:K (K-dimensional random vectors)", "features", metavar="FILE|random:K"),
    Param("embedding_vocab", int, 0, "words of the embeddings file beyond those of the training data whose "
          "vectors the model keeps (the file's first ones), so that tagging finds them", "features", minimum=0,
          flag="--vocab", metavar="N", maximum=10 ** 8),
    Param("structure", list, [], "structures learned from unlabeled text (seqbil aso): at every token the "
          "dense features Theta phi(x) of each of their splits become real-valued 0-order features, kept in the "
          "model", "features", metavar="FILE"),
    Param("structure_scale", float, 0.3, "factor applied to the structure's features (each split's are first "
          "divided by their root mean square on the unlabeled text). On held-out CoNLL-2000 training data "
          "(learner bol, experiments/aso.sh) 0.3 was the best for the semi-supervised structure, and for the word "
          "structure within 0.04 F1 of the best (0.1); 1 lost F1. The dense features slow the online learners' fit "
          "of the training data: there the semi-supervised structure gained from 40 epochs over 20, the word "
          "structure did not", "features", positive=True),
    Param("structure_window", str, "-1,0,1", "offsets of the tokens whose structure features each token reads, "
          "comma-separated (0: its own only; -1,0,1: its neighbours' too, which gained more than 0 at every scale "
          "tried on held-out CoNLL-2000 data)", "features", metavar="OFFSETS", validate=_offsets_problem),
    Param("learner", str, "sp", ""),  # help and choices come from the learner registry
    Param("epochs", int, 20, "passes over the training data (T); for crf, iterations of L-BFGS at most",
          positive=True),
    Param("C", float, 1.0, "learning rate / dual step size C (pa: the aggressiveness, CRFsuite's c)", positive=True, flag="-C",
          learners=("sp", "bol", "bcd", "rpa", "pa")),
    Param("averaged", bool, True, "average the parameters over all updates (learners that average)"),
    Param("c1", float, 0.0, "L1 coefficient: the objective adds c1 * |w|_1 (as CRFsuite's c1; OWL-QN)", minimum=0,
          learners=("crf",)),
    Param("c2", float, 1.0, "L2 coefficient: the objective adds c2 * |w|^2 (as CRFsuite's c2, not |w|^2 / 2)",
          minimum=0, learners=("crf", "l2sgd")),
    Param("all_possible_states", bool, False, "CRF: a weight for every (attribute, label) pair, not only for the "
          "pairs seen in training (CRFsuite's feature.possible_states)", learners=("crf", "l2sgd")),
    Param("all_possible_transitions", bool, True, "CRF: a trainable weight for every label transition, first and "
          "last label; false: only for those seen in training, the others kept at 0 (CRFsuite's "
          "feature.possible_transitions)", learners=("crf", "l2sgd")),
    Param("period", int, 10, "CRF: the delta test compares the objective with its value this many passes back "
          "(iterations of L-BFGS, epochs of SGD; CRFsuite's period; 0: no delta test)", minimum=0,
          learners=("crf", "l2sgd"), maximum=10 ** 6),
    Param("delta", float, 1e-5, "CRF: stop when the objective fell by less than this fraction of it over the last "
          "`period` passes (CRFsuite's delta)", minimum=0, learners=("crf", "l2sgd")),
    Param("jobs", int, 1, "threads (0: one per CPU core): crf computes its gradient over a block of the "
          "sentences on each; an online learner trains on each over a part of every epoch's order, the parts "
          "mixed after the epoch (iterative parameter mixing); the same number gives the same model", minimum=0,
          learners=("crf",), maximum=4096),
    Param("candidates", list, ["sp", "pa", "crf"], f"the learners that learner = {AUTO} tries, in this order "
          "(default: the config's learner, when it names one, then pa and crf), on the "
          "dev set or, without one, on the held-out tenth of the training data that also fixes the temperature: "
          "each with the settings it would have if named (a CRF's own iteration cap and its c2 along a path of a "
          "point a decade; an online learner's best number of epochs up to its own), the best held-out score "
          "winning, an earlier candidate on a tie",
          learners=(AUTO,), metavar="LEARNERS", validate=_candidates_problem),
    Param("budget", float, 3.0, f"with learner = {AUTO}: how long the choice may take, as a multiple of the first "
          "candidate's time on the held-out split; a candidate still training when it is spent is stopped and not "
          "chosen, and those after it are not tried", learners=(AUTO,), positive=True, maximum=1000),
    Param("seed", int, 1, "seed of the per-epoch shuffling", minimum=0, maximum=2 ** 63 - 1),
    Param("shards", int, 0, "iterative parameter mixing (McDonald, Hall & Mann 2010) on a Dask cluster: the "
          "training file cut into SHARDS shards; every epoch, one pass of the learner on each shard from the mixed "
          "parameters, then they are mixed (1: the run of one process, on a worker); 0: train in this process",
          minimum=0, maximum=10 ** 5),
    Param("mixing", str, "uniform", "iterative parameter mixing (--shards, or --jobs with an online learner): each "
          "shard's or thread's weight in the mix, uniform (1/K) or by its mistakes in the epoch", choices=("uniform", "mistakes")),
    Param("prune", float, 0.0, "after training, drop the weights with |w| <= PRUNE (0: only the zero ones) and "
          "the attributes left without weights; the model file shrinks, the scores may change", minimum=0),
    Param("precision", str, "float32", "floating-point type of the weights in the model file (training runs "
          "in float64, bol's dual blocks in float32)", choices=("float32", "float64")),
    Param("temperature", float, 0.0, "what the scores are divided by in the model's probabilities (marginals, "
          "tag --marginals); 0: fitted after training by the least negative log-likelihood of the gold labels' "
          "token marginals on the dev set or, without one, on a held-out tenth of the training data (the model "
          "trained on the other nine tenths fixes it; CRF learners' scores are log-probabilities: 1); a temperature "
          "given is from 1e-4 to 1e4, the range the fit searches", minimum=0,
          maximum=T_MAX, validate=_temperature_problem),
    Param("tasks", list, [], "multi-task training (Cavallanti, Cesa-Bianchi & Gentile 2008): one NAME=TRAIN_FILE"
          "[,DEV_FILE] per task, e.g. corpora of different segmentation standards (in a config also "
          "[tasks.NAME] tables with train and dev keys); every feature gets a shared weight and one per task, "
          "and the sentences of all tasks are shuffled together every epoch", flag="--task",
          learners=("sp", "bol", "bcd")),
    Param("coupling", float, 4.0, "multi-task coupling b (eq. 3 of Cavallanti et al.): an update on a task moves "
          "the shared weights by b/(K(1+b)) and the task's own by 1/(1+b) of the step; 0: independent tasks, "
          "large: one shared model, b = K: the paper's half-update (the default was the best of 1, 4, 16 and 64 "
          "on the dev sets of five segmentation standards, sp and bol: experiments/multitask.sh)", minimum=0,
          learners=("sp", "bol", "bcd")),
    Param("task_order", str, "shuffled", "multi-task training: the order of each epoch over the tasks' "
          "sentences: shuffled (all tasks' sentences shuffled together, anew each epoch), round-robin (a sentence "
          "of each task in turn, each task's shuffled) or tasks (task by task in the order given, each shuffled)",
          choices=("shuffled", "round-robin", "tasks")),
    Param("splits", list, [], "feature splits of seqbil aso, each 'NAME: MACRO ... -> OFFSET ... [@COLUMN]': the "
          "macros (%x[r,c] with functions) are the split's features, the offsets the tokens whose word (or, with "
          "@COLUMN, whose value in that column of tagged text) its problems predict, one problem per target; a "
          "split never reads what it predicts (none given: left and right context and the token's own spelling, "
          "for words or characters by the corpus format)", "structure", flag="--split"),
    Param("unlabeled_format", str, "text", "seqbil aso: what the unlabeled files are: text (a sentence per line: "
          "tokens separated by spaces, or characters for format sighan) or columns (a token per line, fields "
          "separated by spaces, a blank line between sentences: e.g. text tagged by seqbil models, whose "
          "columns splits may read and predict with @COLUMN)", "structure", ("text", "columns")),
    Param("targets", int, 1000, "seqbil aso: the most frequent words (or characters), lower-cased and digits as "
          "0, each a target of one auxiliary problem per offset of a split", "structure", positive=True,
          maximum=10 ** 7),
    Param("dim", int, 50, "seqbil aso: rows of Theta per split (h, the singular vectors kept)", "structure",
          positive=True, maximum=10 ** 5),
    Param("aux_loss", str, "huber", "seqbil aso: loss of the auxiliary problems, huber (Ando & Zhang's modified "
          "Huber) or hinge", "structure", ("huber", "hinge")),
    Param("aux_lambda", float, 1e-4, "seqbil aso: L2 regularisation lambda of the auxiliary problems",
          "structure", positive=True),
    Param("aux_epochs", int, 3, "seqbil aso: SGD passes over the unlabeled text per auxiliary problem",
          "structure", positive=True),
    Param("aux_rate", float, 0.1, "seqbil aso: first SGD step eta0 (then eta0 / (1 + 2 lambda eta0 t))",
          "structure", positive=True),
    Param("aux_min_count", int, 2, "seqbil aso: split features seen fewer times in the unlabeled text are "
          "dropped", "structure", positive=True),
    Param("rounds", int, 1, "seqbil aso: rounds of the alternating optimization (1, as Ando & Zhang; later "
          "rounds train the problems with the last Theta and take the SVD again)", "structure", positive=True,
          maximum=10 ** 4),
    Param("interaction", str, "", "multi-task training with a general interaction matrix instead of the "
          "coupling: a file of K rows of K numbers, the matrix A of Cavallanti et al. (symmetric, positive "
          "definite; rows and columns in the order of the tasks). Every feature then has a weight per task and "
          "an update on task k moves task j's by (A^-1)_jk of the step (Figure 1 written out)",
          learners=("sp", "bol"), metavar="FILE"),
]


def _table():
    # made anew when a learner is registered (a learner of the user's, after import)
    return _table_of(tuple(LEARNERS.items()))


@lru_cache(maxsize=None)
def _table_of(learners):
    learners = dict(learners)
    averaging = tuple(name for name, cls in learners.items() if cls.averages)
    mixing = tuple(name for name, cls in learners.items() if cls.supports_mixing())
    out = []
    for p in CORE:
        if p.name == "learner":
            text = "training algorithm: " + "; ".join(f"{n}, {cls.summary}" for n, cls in learners.items()) + \
                f"; {AUTO}, the one of the candidates that scores best on held-out data"
            p = Param(p.name, p.type, p.default, text, p.section, (*learners, AUTO))
        elif p.name == "averaged":
            p = Param(p.name, p.type, p.default, p.help, p.section, learners=averaging)
        elif p.name == "shards":
            p = replace(p, learners=mixing)
        elif p.name == "mixing":
            p = replace(p, learners=tuple(name for name, cls in learners.items() if name in mixing or
                                          getattr(cls, "supports_threads", lambda: False)()))
        elif p.name == "jobs":
            p = replace(p, learners=tuple(name for name, cls in learners.items()
                                          if name == "crf" or getattr(cls, "supports_threads", lambda: False)()))
        out.append(p)
    names = {p.name for p in out}
    for name, cls in learners.items():
        for p in cls.options:
            if p.name in names:
                raise RuntimeError(f"learner {name}: option {p.name} is defined twice")
            names.add(p.name)
            out.append(replace(p, learners=(name,)))
    # the learners' own defaults (Learner.defaults, applied by resolve), shown beside the table's
    return tuple(replace(p, own_defaults=tuple((n, cls.defaults[p.name]) for n, cls in learners.items()
                                               if p.name in cls.defaults))
                 for p in out)


def table():
    """Every parameter: the core ones, then each registered learner's."""
    return list(_table())


def by_name():
    return {p.name: p for p in _table()}


def defaults():
    return {p.name: (list(p.default) if isinstance(p.default, list) else p.default) for p in _table()}


KEEP = object()  # Settings.but: the changed values keep the sources they had


class Settings:
    """The settings of a run: one attribute per parameter of the table, in a frozen
    dataclass made from it (`settings_type`), and where each value that is not a
    default came from (`sources`: a config path, "arguments", or "<chosen>" on
    held-out data)."""

    def origin(self, name):
        """Where NAME's value came from, or "<settings>" for a default: the first
        field of the ConfigError that refuses it."""
        return self.sources.get(name, "<settings>")

    def given(self, name):
        """Whether NAME was set by a config, an argument or a choice, not defaulted."""
        return name in self.sources

    def but(self, values, origin=KEEP):
        """These settings with VALUES ({name: value}) changed. ORIGIN is recorded as
        their source; None records them as defaults; KEEP leaves the sources as
        they are."""
        sources = dict(self.sources)
        if origin is not KEEP:
            for name in values:
                if origin is None:
                    sources.pop(name, None)
                else:
                    sources[name] = origin
        return replace(self, sources=MappingProxyType(sources), **values)

    def __reduce__(self):  # (by value: a Dask worker makes the type anew from its own table)
        return Settings.of, (self.as_dict(), dict(self.sources))

    def as_dict(self):
        """{name: value}, in the table's order (the order records are written in)."""
        return {p.name: getattr(self, p.name) for p in _table()}

    @classmethod
    def of(cls, values=None, sources=None):
        """Settings from a mapping of some parameters (the others take the table's
        defaults, not the learners' own), or the Settings themselves."""
        if isinstance(values, Settings) and sources is None:
            return values
        values = values.as_dict() if isinstance(values, Settings) else dict(values or {})
        unknown = sorted(set(values) - set(by_name()))
        if unknown:
            raise ConfigError("<settings>", 0, f"unknown parameter {unknown[0]!r} (see seqbil params)")
        return settings_type()(**{**defaults(), **values}, sources=MappingProxyType(dict(sources or {})))


def settings_type():
    """The frozen dataclass of the settings: a field per parameter of the table."""
    return _settings_type_of(tuple(LEARNERS.items()))


@lru_cache(maxsize=None)
def _settings_type_of(learners):
    fields = [(p.name, p.type, field(default_factory=lambda d=p.default: list(d)) if isinstance(p.default, list)
               else field(default=p.default)) for p in _table()]
    fields.append(("sources", MappingProxyType, field(default_factory=lambda: MappingProxyType({}), compare=False,
                                                      repr=False)))
    made = make_dataclass("Settings", fields, bases=(Settings,), frozen=True)
    made.__module__, made.__qualname__ = __name__, "settings_type.<Settings>"
    return made


def check_value(param, value, source, line=0):
    """The value, converted (int to float) and checked against the table entry."""
    where = f"[{param.section}] {param.name}"
    if param.type is list and isinstance(value, str):  # one item given alone
        value = [value]
    ok = isinstance(value, param.type) and not (param.type is int and isinstance(value, bool))
    if param.type is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if param.type is list and ok and not all(isinstance(v, str) for v in value):
        ok = False
    if not ok:
        raise ConfigError(source, line, f"{where} must be {param.type.__name__}, got {type(value).__name__} "
                          f"{value!r}")
    if param.choices and value not in param.choices:
        raise ConfigError(source, line, f"{where} = {value!r}: choose one of {', '.join(map(str, param.choices))}")
    if param.type is float and not math.isfinite(value):
        raise ConfigError(source, line, f"{where} must be a finite number, got {value}")
    if param.positive and value <= 0:
        raise ConfigError(source, line, f"{where} must be positive, got {value}")
    if param.minimum is not None and value < param.minimum:
        raise ConfigError(source, line, f"{where} must be at least {param.minimum}, got {value}")
    if param.type in (int, float) and not param.choices:
        lower = -param.upper if param.minimum is None and not param.positive else -math.inf
        if param.name == "label_column":
            lower = -1000
        if not lower <= value <= param.upper:
            raise ConfigError(source, line, f"{where} = {value}: allowed are {param.range_text()}")
    problem = param.validate(value) if param.validate is not None else None
    if problem:
        raise ConfigError(source, line, f"{where} = {value!r}: {problem}")
    return value


def _line_of(text, key):
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(key):
            return number
    return 0


def load_config(path):
    """Settings of a TOML config file, checked against the parameter table: {name: value}."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise ConfigError(path, 0, "is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(path, 0, f"cannot open: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(path, 0, f"invalid UTF-8 at byte offset {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"\(at line (\d+), column \d+\)$", str(exc))
        message = str(exc)[:at.start()].strip() if at else str(exc)
        raise ConfigError(path, int(at[1]) if at else 0, f"invalid TOML: {message}") from None
    params = {(p.section, p.name): p for p in _table()}
    settings = {}
    if "tasks" in data:  # [tasks.NAME] tables: the `tasks` parameter's NAME=TRAIN[,DEV] entries
        settings["tasks"] = _task_tables(data.pop("tasks"), path, _line_of(text, "[tasks"))
    for section, values in data.items():
        if not isinstance(values, dict) or section not in SECTIONS:
            raise ConfigError(path, _line_of(text, section), f"unknown top-level key {section!r} "
                              f"(expected sections {', '.join(f'[{s}]' for s in SECTIONS)})")
        for key, value in values.items():
            param = params.get((section, key))
            if param is None and key in RENAMED:
                raise ConfigError(path, _line_of(text, key), f"[{section}] {key} is now called {RENAMED[key]}")
            if param is None:
                known = ", ".join(p.name for p in _table() if p.section == section)
                raise ConfigError(path, _line_of(text, key), f"unknown key [{section}] {key} (known: {known})")
            settings[key] = check_value(param, value, path, _line_of(text, key))
    return settings


def _task_tables(tables, path, line):
    entries = []
    if not isinstance(tables, dict):
        raise ConfigError(path, line, "tasks are tables: [tasks.NAME] with train = FILE and dev = FILE (optional)")
    for name, table in tables.items():
        if not isinstance(table, dict) or not isinstance(table.get("train"), str) or \
                not isinstance(table.get("dev", ""), str) or set(table) - {"train", "dev"}:
            raise ConfigError(path, line, f"[tasks.{name}] takes train = FILE and dev = FILE (optional)")
        # kept as the NAME=TRAIN[,DEV] entries of the tasks parameter
        if "=" in name or "," in table["train"] or "," in table.get("dev", ""):
            raise ConfigError(path, line, f"[tasks.{name}]: a task name cannot hold '=', nor a file name ','")
        entries.append(f"{name}={table['train']}" + (f",{table['dev']}" if table.get("dev") else ""))
    return entries


def bundled_folder():
    """The folder of the configs shipped with the package: seqbil.configs when
    installed, the top-level configs/ directory in a source checkout."""
    try:
        return resources.files("seqbil.configs")
    except ModuleNotFoundError:
        return resources.files("seqbil").parent / "configs"


def bundled_config(name):
    """Path of a config shipped with the package."""
    return bundled_folder() / name


def bundled_names():
    """Names of the bundled configs."""
    folder = bundled_folder()
    try:
        return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))
    except OSError:
        return []


def find_config(name):
    """A config path, or the name of a bundled config (e.g. conll2000, sighan2005)."""
    path = Path(name)
    if path.exists() or path.suffix or "/" in str(name):
        if not path.exists():
            raise ConfigError(path, 0, "no such config file")
        return path
    bundled = bundled_config(f"{name}.toml")
    if bundled.is_file():
        return Path(str(bundled))
    raise ConfigError(name, 0, f"no such config file, and no bundled config of that name "
                      f"(bundled: {', '.join(bundled_names())})")


def resolve(config=None, overrides=None):
    """The Settings: the defaults, then the config file, then the overrides (None
    values are not given); their `sources` say where each value came from."""
    settings, sources = defaults(), {}
    if config is not None:
        for key, value in load_config(config).items():
            settings[key], sources[key] = value, str(config)
    config_learner = settings["learner"]
    params = by_name()
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in params:
            raise ConfigError("arguments", 0, f"parameter {key!r} is now called {RENAMED[key]!r}" if key in RENAMED
                              else f"unknown parameter {key!r} (see seqbil params)")
        settings[key] = check_value(params[key], value, "arguments")
        sources[key] = "arguments"
    # a config's values were set for its learner: with another learner asked for, the
    # keys that learner has defaults of its own for (a CRF's iteration cap) take those
    other = sources.get("learner") == "arguments" and settings["learner"] != config_learner
    for key, value in getattr(LEARNERS.get(settings["learner"]), "defaults", {}).items():
        if key not in sources or other and sources[key] != "arguments":  # the learner's own default
            settings[key] = value
            sources.pop(key, None)
    if settings["learner"] == AUTO and "candidates" not in sources and config_learner not in (AUTO, "crf"):
        # the config's own learner, chosen for its corpora, is the one the CRF is tried against
        settings["candidates"] = list(dict.fromkeys([config_learner, "pa", "crf"]))
    return settings_type()(**settings, sources=MappingProxyType(sources))


def describe(fmt="text", learner=None):
    """The parameter table for people: text (seqbil params) or a Markdown table (the
    docs); with LEARNER, only the parameters that learner reads and not every learner."""
    rows = []
    for p in _table():
        if learner is not None and learner not in (p.learners or ()):
            continue
        flag = "" if p.flag == "-" else p.cli_flag
        users = ", ".join(p.learners) if p.learners else "all"
        rows.append((f"[{p.section}] {p.name}", flag, p.type.__name__, p.default_text(), p.range_text() or "–",
                     users, p.help))
    if fmt == "markdown":
        head = ("| TOML key | flag | type | default | allowed | learners | meaning |\n"
                "| --- | --- | --- | --- | --- | --- | --- |\n")
        return head + "".join("| " + " | ".join(f"`{c}`" if i in (0, 1) and c else c.replace("|", "\\|")
                                                for i, c in enumerate(r)) + " |\n" for r in rows)
    out = []
    for key, flag, typ, default, allowed, users, text in rows:
        allowed = f"; {allowed}" if allowed != "–" else ""
        out.append(f"{key}  ({typ}, default {default}{allowed}{', ' + flag if flag else ''}; learners: {users})\n"
                   f"    {text}\n")
    return "".join(out)
