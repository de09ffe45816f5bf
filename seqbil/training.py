"""Training runs: read and encode the corpora once, check the settings against the
templates and labels, run the learner's passes with progress and dev scores, and
save the model atomically (also on Ctrl-C, and in checkpoints to resume from)."""
import ctypes
import hashlib
import json
import os
import signal
import sys
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import numpy as np
import numpy.random  # noqa: F401  (imported before the corpora are read, as tqdm is: modules
from tqdm import tqdm  # first loaded mid-run would pin the memory that reading frees)

from . import checkpoint, multitask, params
from ._version import __version__
from .errors import ConfigError, InputError, check_output
from .evaluation import choose_metric, headline, score
from .evaluation.chunks import detect_scheme
from .features.dataset import encode
from .features.dictionaries import parse_specs as dictionary_specs, training_lexicons
from .features.index import FeatureIndex, merge_vocabularies, normalizer
from .features.structure import Structure, StructureFeatures
from .features.vectors import VectorFeatures, VectorTable, embedding_table
from .features.vectors import parse_specs as vector_specs
from .features.templates import EMB, TemplateSet, parse_template, read_template_file, task_copies
from .formats import make_format, read_corpus
from .formats.sentence import Corpus
from .formats.textio import sha256_file
from .calibration import fit_temperature, token_nll
from .learners import LEARNERS
from .model import Model

CHUNK = 256  # sequences per call into compiled code; progress and Ctrl-C are handled between calls

# a training corpus of at most this many tokens chooses by 10-fold cross-validation:
# a tenth of it is too few sentences to tell settings apart (CRF++'s examples hold
# 2,000 to 9,000 tokens), and ten runs on it cost little
CV_TOKENS = 25_000
CV_FOLDS = 10


def load_templates(settings, template_file, config):
    if template_file is not None:
        return TemplateSet(read_template_file(template_file))
    if not settings["templates"]:
        raise ConfigError(config or "<settings>", 0, "no feature templates: give --config or --template")
    return TemplateSet(parse_template(t, str(config), 0) for t in settings["templates"])


def check_settings(settings, sources, templates, echo):
    """Settings that cannot do what they say: errors, or warnings naming the key."""
    learner = LEARNERS[settings["learner"]]
    table = params.by_name()
    for name, source in sources.items():
        p = table[name]
        # a config written for several learners is fine when the learner is chosen elsewhere
        chosen_elsewhere = source != "arguments" and sources.get("learner") == "arguments"
        if not p.used_by(learner.name) and not chosen_elsewhere:
            echo(f"warning: [{p.section}] {name} (from {source}) is not used by learner {learner.name} "
                 f"(it is read by {', '.join(p.learners) or 'no learner'})")
    refused = learner.refuse(settings)
    if refused:
        name, why = refused
        raise ConfigError(sources.get(name, "<settings>"), 0, f"[{table[name].section}] {name} = {settings[name]!r}: "
                          f"{why}")
    if learner.name == "bcd" and sources.get("epochs") == "arguments":
        echo(f"warning: bcd does not read epochs: its passes are 2 x bcd_rounds x bcd_epochs "
             f"= {2 * settings['bcd_rounds'] * settings['bcd_epochs']}")
    for name in ("coupling", "interaction", "task_order"):
        if name in sources and not settings["tasks"]:
            echo(f"warning: {name} (from {sources[name]}) is read by multi-task training only (--task)")
    if learner.bilinear and not templates.by_order[1]:
        if learner.name == "bol":
            # bol's 0-order part, transitions and end scores take the perceptron's steps
            # (blocks.pxd: bilinear_mistake and sp.pyx both call chain.pxd: linear_update),
            # so with nothing to factor bol learns sp's weights exactly: train them as sp
            echo("bol: no 1st-order templates with %x macros to factor; training the linear model (as sp)")
            settings["learner"] = "sp"
            sources.pop("learner", None)
            return
        what = ("no 1st-order attributes are given (a B:%attr template; seqbil.sklearn.CRF: first_order=KEYS or "
                "'all')" if templates.items else "no B template with %x macros is given")
        raise ConfigError(sources.get("learner", "<settings>"), 0,
                          f"[train] learner = {learner.name!r} factors the 1st-order features, but {what}; use "
                          f"learner = \"sp\" or add 1st-order templates")
    if learner.bilinear:
        # dictionary and type features as factored 1st-order features made bol unstable on
        # segmentation (F1 falling over the epochs); as 0-order features they are safe
        risky = [t.text for t in templates.by_order[1]
                 if any(f.source or any(name == "chartype" for name, _ in f.chain) for _, f in t.refs)]
        if risky:
            echo(f"warning: learner {learner.name} factors the 1st-order template {risky[0]}"
                 f"{f' (and {len(risky) - 1} more)' if len(risky) > 1 else ''}, which reads a dictionary or "
                 f"character types: such features are more stable as U (0-order) templates")


def settings_header(settings, sources):
    """One line per run: the learner and every parameter it reads, with where the
    values that are not defaults came from."""
    learner, table, shown = settings["learner"], params.by_name(), []

    def origin(name):
        source = sources.get(name)
        return "" if source is None else " (argument)" if source == "arguments" else \
            " (chosen on held-out data)" if source == "<chosen>" else " (config)"
    for name in ("epochs", "C", "averaged", "seed", "min_count", "c1", "c2", "all_possible_states", "period", "delta",
                 "jobs", *(p.name for p in LEARNERS[learner].options)):
        if not table[name].used_by(learner) or (name == "epochs" and learner == "bcd"):  # bcd: its own passes
            continue
        value = settings[name]
        value = str(value).lower() if isinstance(value, bool) else value
        shown.append(f"{name} {value}{origin(name)}")
    if not LEARNERS[learner].averages:
        shown.append("no averaging")
    return f"learner {learner}{origin('learner')}: " + ", ".join(shown)


def file_record(path, sentences):
    """Provenance of a corpus: its name, sha256, and what was read from it (sentences:
    a list of Sentence, or for a file also its Corpus)."""
    tokens = sentences.n_tokens if isinstance(sentences, Corpus) else int(sum(map(len, sentences)))
    record = {"path": str(path), "sentences": len(sentences), "tokens": tokens}
    if isinstance(path, str) and path.startswith("<"):
        h = hashlib.sha256()
        if isinstance(sentences, Corpus):  # (a part of a file held out from: its arrays)
            for values, ids in zip(sentences.values + [sentences.label_values], sentences.ids + [sentences.label_ids]):
                h.update(json.dumps(values, ensure_ascii=False).encode("utf-8"))
                h.update(b"-" if ids is None else np.ascontiguousarray(ids).tobytes())
            h.update(np.ascontiguousarray(sentences.lengths).tobytes())
        elif len(sentences) and sentences[0].items is not None:  # tokens as attributes: their flattened arrays
            corpus = Corpus.of(sentences)
            h.update("\0".join(corpus.items.names).encode("utf-8", "surrogateescape"))
            for a in (corpus.lengths, corpus.items.ptr, corpus.items.ids, corpus.items.vals, corpus.label_ids):
                h.update(b"-" if a is None else np.ascontiguousarray(a).tobytes())
            h.update(json.dumps(corpus.label_values, ensure_ascii=False).encode("utf-8"))
        else:
            for s in sentences:
                h.update(json.dumps([s.columns, s.labels], ensure_ascii=False).encode("utf-8"))
        record["sha256"] = h.hexdigest()
    else:
        record["sha256"] = sha256_file(path)
    return record


def _glibc():
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None)
            return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
        except OSError:
            pass
    return None


def _large_blocks_from_mmap():
    """Have glibc serve every block of 1 MiB or more with its own mmap. By default it
    raises that threshold (up to 32 MiB) each time a large block is freed, so that
    after encoding the learner's arrays would come from its heap: zero-filled there
    (every page resident, where a fresh mapping takes memory only where written) and
    kept after they are freed. The setting holds for the rest of the process (glibc
    cannot give the raising back): for a Python program that trains, large buffers
    then cost a mapping each, and freed ones return to the system at once."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD; a fixed value turns the raising off


def _return_freed_memory():
    """Give the memory that freed small blocks leave in glibc's heap back to the system."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


_STOPS = []  # the state of the graceful_stop in force, if any


@contextmanager
def graceful_stop():
    """The first SIGINT/SIGTERM asks the run to stop after the current pass (the
    model is then saved); a second one aborts at once. Outside the main thread
    signals cannot be caught, and the run simply goes on. Nested, the outer one's
    state is shared: a Ctrl-C while the corpus is read stops the run after its
    first pass, as one during the passes does."""
    if _STOPS:
        yield _STOPS[-1]
        return
    state = {"stop": False}
    _STOPS.append(state)

    def handler(signum, frame):
        if state["stop"]:
            raise KeyboardInterrupt
        state["stop"] = True

    try:
        old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread
        old = {}
    try:
        yield state
    finally:
        _STOPS.pop()
        for s, h in old.items():
            signal.signal(s, h)


def _check_shards(settings, sources, train_data, tasks, base):
    """What iterative parameter mixing (shards) needs, as ConfigErrors before reading."""
    where = sources.get("shards", "<settings>")
    learner = LEARNERS[settings["learner"]]
    if not learner.supports_mixing():
        able = ", ".join(p for p in params.by_name()["shards"].learners)
        raise ConfigError(where, 0, f"learner {learner.name} does not support iterative parameter mixing "
                          f"(shards); learners that do: {able}")
    why = "multi-task training" if tasks else "continuing a model (--init-model)" if base is not None else None
    if why:
        raise ConfigError(where, 0, f"iterative parameter mixing (shards) does not support {why}")
    if not isinstance(train_data, (str, os.PathLike)) or not os.path.isfile(train_data):
        raise ConfigError(where, 0, "iterative parameter mixing (shards) reads the training corpus from a file "
                          "on every worker: give it as a path")


def _survey_shards(mixer, settings, sources, templates):
    """Every shard read on its worker: what the index and the run need of each
    (dask/ipm.py: _survey), in shard order."""
    specs = dictionary_specs(settings["dictionaries"], sources.get("dictionaries", "<settings>"))
    train_words = any(specs.get(name) == "train" for name in templates.dictionaries)
    if train_words and settings["dict_folds"] >= 2:
        raise ConfigError(sources.get("shards", "<settings>"), 0, "iterative parameter mixing (shards) cannot "
                          "encode a shard with jackknifed dictionaries: set dict_folds = 0")
    columns = sorted({t.refs[0][1].column for t in templates.vector_templates})
    out = mixer.survey({"fields": templates.fields, "normalize": settings["normalize"],
                        "length_cap": settings["dict_length_cap"], "columns": columns,
                        "min_length": settings["dict_min_length"], "words": train_words})
    if not sum(r["sentences"] for r in out):
        raise InputError(mixer.spec["name"], 0, "no sentences in file")
    return out


class _ColumnValues:
    """The distinct values of some columns over the shards, as Corpus.column gives
    them (what the vectors keep their rows for)."""

    def __init__(self, surveyed):
        self.values = {}
        for r in surveyed:
            for c, values in r["columns"].items():
                self.values.setdefault(c, {}).update(dict.fromkeys(values))

    def column(self, c, fold=None):
        values = list(self.values.get(c, ()))
        return (list(dict.fromkeys(map(fold, values))) if fold else values), None


def _index_of_shards(mixer, settings, templates, labels, surveyed, lexicons, vectors, structure, witness):
    """(index, witnesses, fingerprint): the feature index the shards' counts make (the
    one FeatureIndex.build makes of the whole corpus); with witness, the label
    sequences in which an I- tag starts a chunk, one per shard that has one (what
    detect_scheme needs to tell IOB1); and the CRC of the shards' encodings, which
    they now keep."""
    fields = {f: merge_vocabularies([r["vocabularies"][i] for r in surveyed]) for i, f in enumerate(templates.fields)}
    attributes = merge_vocabularies([r["names"] for r in surveyed]) if templates.items else None
    counter = FeatureIndex(templates, fields, [None, None], settings["normalize"], None, lexicons,
                           settings["dict_length_cap"], attributes)
    counted = mixer.count(counter, witness)
    counts = [[[c["counts"][order][t] for c in counted] for t in range(len(counted[0]["counts"][order]))]
              for order in (0, 1)]
    names = sum(c["names"] for c in counted) if templates.items else None
    witnesses = [c["witness"] for c in counted if c["witness"] is not None]
    del counted
    index = FeatureIndex.from_counts(templates, fields, counts, settings["min_count"], settings["normalize"],
                                     lexicons, settings["dict_length_cap"], attributes, names)
    del counts
    index.vectors, index.structure = vectors, structure
    return index, witnesses, mixer.encode(index, templates, labels)


def _read(fmt, source, encoding):
    """(sentences, name) of a path or of sentences already in memory (a list of
    Sentence, or a Corpus)."""
    if isinstance(source, Corpus):
        return source, "<memory>"
    if isinstance(source, list):
        if not source:
            raise InputError("<memory>", 0, "no sentences")
        return source, "<memory>"
    return read_corpus(fmt, source, encoding), str(source)


def task_list(entries, origin="<settings>"):
    """[(name, train, dev or None)] of the `tasks` parameter: NAME=TRAIN[,DEV] entries."""
    out = []
    for entry in entries:
        name, eq, files = str(entry).partition("=")
        name, paths = name.strip(), [p.strip() for p in files.split(",")]
        if not eq or not name or not paths[0] or len(paths) > 2 or (len(paths) == 2 and not paths[1]):
            raise ConfigError(origin, 0, f"task {entry!r}: write NAME=TRAIN_FILE or NAME=TRAIN_FILE,DEV_FILE")
        if any(ch.isspace() for ch in name) or name in [n for n, _, _ in out]:
            raise ConfigError(origin, 0, f"task {entry!r}: task names are single words, each given once")
        out.append((name, paths[0], paths[1] if len(paths) == 2 else None))
    if len(out) == 1:
        raise ConfigError(origin, 0, "multi-task training needs two tasks or more")
    return out


def _read_tasks(fmt, tasks, encoding):
    """(the tasks' training corpora joined into one, each sentence in its task;
    a name for messages; each task's training-file record)."""
    corpora, records, labels = [], {}, {}
    for name, path, _ in tasks:
        corpus, _ = _read_corpus(fmt, path, encoding)
        corpora.append(corpus)
        records[name] = file_record(path, corpus)
        labels[name] = sorted(corpus.label_values)
    joined = Corpus.joined(corpora, [name for name, _, _ in tasks])
    # where the tasks' label sets differ (CoNLL), each task tags with its own labels only
    if fmt.name == "sighan" or all(v == labels[tasks[0][0]] for v in labels.values()):
        labels = {}
    return joined, "; ".join(f"{name}={path}" for name, path, _ in tasks), records, labels


def _read_corpus(fmt, source, encoding):
    """(Corpus, name) of a path or of sentences already in memory. A file's sentences
    go into the corpus as they are read: they are never all in memory as strings."""
    if isinstance(source, Corpus):
        return source, "<memory>"
    if isinstance(source, list):
        corpus, name = Corpus.of(_read(fmt, source, encoding)[0]), "<memory>"
    else:
        corpus, name = Corpus.of(fmt.read(source, labeled=True, encoding=encoding)), str(source)
        if not len(corpus):
            raise InputError(name, 0, "no sentences in file")
    fmt.check_training(corpus, name)
    return corpus, name


@dataclass
class Run:
    """A training corpus read and encoded, with what the passes and the model need:
    the output of prepare(), the input of make_learner(), run_passes() and finish()."""
    settings: dict
    sources: dict
    fmt: object
    tasks: list | None
    templates: object
    origin: str
    train_name: str
    train_record: dict
    labels: list
    index: object
    data: object
    model: Model
    t_encode: float
    dev_sentences: list | None = None
    dev_name: str | None = None
    dev_data: object = None
    devs: dict = field(default_factory=dict)  # multi-task: {task: (sentences, name, encoded)}
    task_spec: tuple | None = None
    coupling_line: str = ""
    vectors: object = None
    live: bool = False        # the learner reads the %emb rows (data.emb_rows)
    learning: bool = False    # ... and adapts the vectors
    phi0: object = None
    emb_counts: object = None
    lexicon_info: dict | None = None
    vector_info: dict | None = None
    structure_info: dict | None = None
    structure: object = None
    interrupted: bool = False  # run_passes stopped early on SIGINT / SIGTERM
    mixer: object = None  # on shards: the shards, read and encoded on the workers (dask/ipm.py: Mixer)
    fingerprint: int | None = None  # on shards: of their encodings (the corpus's: checkpoint.fingerprint)

    def data_fingerprint(self):
        """What a checkpoint keeps of the training corpus, to refuse resuming on another."""
        return self.fingerprint if self.mixer is not None else checkpoint.fingerprint(self.data)

    @property
    def names(self):
        return [name for name, _, _ in self.tasks] if self.tasks else None


def run_inputs(settings, *given):
    """The files a training run reads: those given, and every setting that names a
    file (dictionaries, vectors, a structure, the tasks' corpora, ...)."""
    found = [g for g in given if isinstance(g, (str, os.PathLike))]
    for value in settings.values():
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            if isinstance(v, str) and "=" in v and settings.get("tasks") and v in settings["tasks"]:
                found.extend(v.split("=", 1)[1].split(","))  # NAME=TRAIN[,DEV]
            elif isinstance(v, str) and v and os.path.isfile(v):
                found.append(v)
    return found


def train(*args, **kwargs):
    """Train a model (see _train), with Ctrl-C and SIGTERM stopping it after a pass
    from its start to the end of its passes (graceful_stop)."""
    with graceful_stop():
        return _train(*args, **kwargs)


def _train(settings, train_data, model_path=None, *, dev=None, template_file=None, config=None, sources=None,
           init_model=None, log_path=None, echo=print, show_progress=True, checkpoint_every=0, checkpoint_path=None,
           resume=None, resume_epochs=None, cluster=None):
    """Train a model; save it when model_path is given. Returns (model, history).

    train_data and dev: corpus paths, or lists of formats.Sentence. sources: where
    the settings that are not defaults came from (params.resolve). checkpoint_every=N
    writes a checkpoint (default: model_path + ".ckpt") after every N passes and when
    the run is interrupted; resume=PATH continues from one, with the settings and
    corpora recorded in it (resume_epochs may extend the run). init_model=PATH
    continues training a saved model on this data: its templates, corpus settings,
    labels and weights are the start; new attributes and labels are added.
    cluster: with settings["shards"], where the shards train (the client, scheduler
    and workers arguments of seqbil.dask.cluster.connect).

    The stages, each callable on its own: check_run (settings against each other,
    before any reading), prepare (read and encode), make_learner, run_passes,
    finish (the model and its record), compact."""
    sources = dict(sources or {})
    saved = None
    if resume is not None:
        if resume_epochs is not None:  # a checkpoint's settings were checked when it was made; this one not
            resume_epochs = params.check_value(params.by_name()["epochs"], resume_epochs, "arguments")
        saved, scalars, arrays, rng_state, history = checkpoint.load(resume)
        settings = {**params.defaults(), **saved["settings"]}
        if resume_epochs and resume_epochs != settings["epochs"]:
            # the temperature was fitted to a model of the planned passes: fit it again
            # (a chosen c2 stays: the checkpoint's optimizer state is of its objective)
            if saved.get("sources", {}).get("temperature") == "<chosen>":
                settings["temperature"] = 0.0
        settings["epochs"] = resume_epochs or settings["epochs"]
        train_data, dev, template_file, config = saved["train"], saved["dev"], saved["template"], saved["config"]
        init_model = saved.get("init_model")
        sources = saved.get("sources", {})
        if resume_epochs and resume_epochs != saved["settings"]["epochs"]:
            sources = {k: v for k, v in sources.items() if k != "temperature" or v != "<chosen>"}
        checkpoint_every = checkpoint_every or saved["checkpoint_every"]
        checkpoint_path = checkpoint_path or resume
        echo(f"resuming {resume}: {len(history)} passes done")
    else:
        history = []
    checkpoint_path = checkpoint_path or (f"{model_path}.ckpt" if model_path else None)
    if checkpoint_every and not checkpoint_path:
        raise ConfigError("arguments", 0, "checkpoints need a model path or a checkpoint path")
    inputs = run_inputs(settings, train_data, dev, template_file, config, init_model)
    for path, what in ((model_path, "model"), (log_path, "log"),
                       (checkpoint_path if checkpoint_every else None, "checkpoint")):
        # (the checkpoint resumed is written over by the run's later checkpoints)
        check_output(path, what, inputs + ([resume] if what != "checkpoint" and resume else []))
    base = None
    if init_model is not None:
        base = Model.load(init_model)
        if base.tasks:
            raise ConfigError("arguments", 0, f"{init_model} is a multi-task model: continuing one is not "
                              f"supported; train it anew with --task")
        settings = _settings_of_base(base, settings, sources, template_file, echo, init_model)
    check_run(settings, sources, train_data, dev, base, cluster)
    if not isinstance(train_data, (str, type(None))) and not hasattr(train_data, "__fspath__") and \
            checkpoint_every:
        raise ConfigError("arguments", 0, "checkpoints need the training data as a file")
    _large_blocks_from_mmap()
    chosen, selection = None, (saved or {}).get("selection", {})
    if saved is None or saved["settings"].get("temperature") and not settings["temperature"]:
        settings, sources, chosen, selection = select(settings, sources, train_data, dev, template_file, config,
                                                      init_model, echo, show_progress)
    cluster_stack = ExitStack()  # on shards: the Dask cluster, from reading the corpus to the last pass
    with cluster_stack:
        if chosen is not None:  # the grid ran on the whole training corpus (or was interrupted): its best run
            run, learner, history, rng = chosen
        else:
            if base is not None and not base.weights:  # the held-out runs took the weights of the model continued
                base = Model.load(init_model)
            client = None
            if settings["shards"]:
                from .dask.cluster import connect
                client = cluster_stack.enter_context(connect(**_cluster(settings, cluster),
                                                                    echo=echo if show_progress else None))
            run = prepare(settings, sources, train_data, dev, template_file, config, base, echo, client)
            if run.mixer is not None:
                cluster_stack.callback(run.mixer.close)
            learner = make_learner(run, base, init_model, echo)
            rng = np.random.default_rng(settings["seed"])
        record = {"settings": settings, "sources": sources, "train": None if run.tasks else run.train_name,
                  "dev": run.dev_name, "template": template_file and str(template_file),
                  "config": config and str(config),
                  "checkpoint_every": checkpoint_every, "data": run.data_fingerprint(),
                  "init_model": init_model and str(init_model), "selection": selection}
        if saved is not None:
            if saved["data"] != record["data"]:
                raise InputError(run.train_name, 0, f"the training data differs from the data of checkpoint {resume}")
            checkpoint.restore(learner, rng, resume, arrays, scalars, rng_state)
            if learner.passes() < len(history):
                raise ConfigError("arguments", 0, f"--epochs {settings['epochs']} makes {learner.passes()} passes, "
                                  f"but checkpoint {resume} has done {len(history)}: give more epochs, or none")
        if chosen is None:
            run_passes(run, learner, rng, history, echo=echo, show_progress=show_progress, log_path=log_path,
                       append_log=resume is not None, checkpoint_every=checkpoint_every,
                       checkpoint_path=checkpoint_path, checkpoint_record=record)
        else:
            if log_path:
                with open(log_path, "w", encoding="utf-8") as log:
                    log.writelines(json.dumps(r) + "\n" for r in history)
            if checkpoint_every and not run.interrupted:  # (a held-out run cannot be resumed as this one)
                checkpoint.save(checkpoint_path, record, learner, rng, history)
                echo(f"checkpoint saved to {checkpoint_path}")
    interrupted = run.interrupted and (selection.get("interrupted")
                                       or f"after {len(history)} of {learner.passes()} passes")
    model = finish(run, learner, history, base, init_model, template_file, config, echo)
    del learner
    _return_freed_memory()
    if selection:
        model.training["selection"] = selection
    set_temperature(run, model, echo)
    compact(run, model, echo)
    if interrupted:  # the caller tells an interrupted run from a finished one by this
        model.training["interrupted"] = interrupted
    if model_path is not None:
        model.save(model_path)
        echo(f"model saved to {model_path}")
    return model, history


def select(settings, sources, train_data, dev, template_file, config, init_model, echo, show_progress=False):
    """What is chosen on held-out data before the run: the learner's grid (a CRF's
    coefficients when none is given: Learner.grid) and, when the temperature is to
    be fitted and there is no dev set, the temperature of an online learner's
    probabilities.

    On the dev set when there is one: the grid then runs on the whole training
    corpus and its best run is the model, returned as (run, learner, history, rng).
    Without one, on the last tenth of the training sentences (a small corpus, up to
    CV_TOKENS tokens: each tenth in turn, 10-fold cross-validation, scored over all
    the held-out predictions together): the models trained on the rest fix the
    settings, which the run on all the data then keeps. A setting wins by its score
    (the dev metric), then by the held-out log-likelihood for a CRF, then by coming
    first (the stronger regularisation). Returns (settings, sources, that best run
    or None, the record of the choice)."""
    learner_class = LEARNERS[settings["learner"]]
    grid = learner_class.grid(settings, sources)
    fit = settings["temperature"] == 0 and not learner_class.probabilistic
    if settings["tasks"] or not grid and (not fit or dev is not None or settings["shards"]):
        return settings, sources, None, {}  # (a multi-task run's learner cannot be a CRF)
    fmt = make_format(settings["format"], None, settings["label_column"])
    varies = [key for key in (grid[0] if grid else ()) if any(point[key] != grid[0][key] for point in grid)]
    what = " and ".join([*varies, *(["the temperature"] if fit else [])])
    if dev is not None:
        where, folds = "dev", [(train_data, dev)]
        echo(f"choosing {what} on the dev set from {len(grid)} settings")
    else:
        # a file is read into a Corpus (its strings once per distinct value), the sentences
        # held out from it read again; sentences given in memory are sliced as they are
        enc = settings["encoding"]
        if isinstance(train_data, list):
            sentences, whole = _read(fmt, train_data, enc)[0], None
            n, tokens = len(sentences), sum(map(len, sentences))
        else:
            sentences, whole = None, _read_corpus(fmt, train_data, enc)[0]
            n, tokens = len(whole), whole.n_tokens
        if n < 10:
            echo(f"{n} training sentences: too few to hold out a tenth; " +
                 ("temperature 1" if fit else f"{' and '.join(varies)} at the defaults"))
            return settings, sources, None, {}
        if sentences is None and (tokens <= CV_TOKENS or whole.items is not None):
            sentences, whole = _read(fmt, train_data, enc)[0], None
        if tokens <= CV_TOKENS:
            cuts = np.linspace(0, n, CV_FOLDS + 1).astype(int)
            where = f"{CV_FOLDS}-fold cross-validation"
            folds = [(sentences[:a] + sentences[b:], sentences[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
            echo(f"choosing {what} by {where} on the {n} training sentences ({tokens} tokens)" +
                 (f" from {len(grid)} settings" if grid else ""))
        else:
            k = n // 10
            where = "held-out"
            # (a file's held-out tenth stays a Corpus too: as Sentence objects it would be some
            # hundred bytes a token through the whole choice)
            folds = [(sentences[:-k], sentences[-k:])] if sentences is not None else \
                [(whole.head(n - k), whole.part(n - k, n))]
            echo(f"choosing {what} on the last tenth of the training sentences ({k} of {n}), training on the "
                 f"other {n - k}" + (f", from {len(grid)} settings" if grid else ""))
        del sentences, whole
    runs, bases = [], []
    for part, held in folds:
        bases.append(Model.load(init_model) if init_model is not None else None)
        try:
            runs.append(prepare(dict(settings), sources, part, held, template_file, config, bases[-1],
                                echo if where == "dev" else lambda line: None))
        except InputError as exc:  # a part held out of a file is that file for the user
            if exc.path != "<memory>" or not isinstance(train_data, (str, os.PathLike)):
                raise
            raise type(exc)(str(train_data), exc.line, exc.message) from None
    del folds, part, held  # (encoded now: a Corpus given is not needed again)
    planned = runs[0].settings  # (prepare may settle the learner: bol with nothing to factor is sp)
    tried, best, worse, learners = [], None, 0, [None] * len(runs)
    for point in grid or [{}]:
        start, passes, gold, pred, nll = time.perf_counter(), [], [], [], 0.0
        for f, run in enumerate(runs):
            run.settings = {**planned, **point}
            previous = learners[f]
            learner = learners[f] = make_learner(run, bases[f] if previous is None else None, init_model,
                                                 lambda line: None)
            if previous is not None and learner.batch:  # a path: each setting starts where the last ended
                learner.warm_start(previous.parameters()[1])
            if previous is not None and not (best and previous in best[2]):
                previous.finish()
            rng = np.random.default_rng(settings["seed"])
            history = run_passes(run, learner, rng, [], echo=lambda line: None, show_progress=show_progress,
                                 score_dev=False)
            if run.interrupted:  # what there is: this held-out run's model, at temperature 1
                echo(f"interrupted while choosing {what}: the model is that of the run on part of the training "
                     f"corpus ({len(history)} of {learner.passes()} passes)")
                for other in learners:
                    if other is not None and other is not learner:
                        other.finish()
                run.settings = {**run.settings, "temperature": run.settings["temperature"] or 1.0}
                return settings, sources, (run, learner, history, rng), {"interrupted": f"while choosing {what}"}
            passes.append((history, rng))
            if grid:
                run.model.kind, run.model.weights = learner.parameters()
            else:  # the one setting: the learner is done, and only its model's sparse rows are needed
                run.data = None  # (as finish() lets the training corpus go before the weights are made)
                learner.finish()
                _return_freed_memory()
                run.model.kind, run.model.weights = learner.final_parameters()
                run.model.store
                run.model._weights = None
            if grid:  # (the temperature alone needs no score: the fit reads the marginals)
                gold += _gold(run.dev_sentences)
                pred += _predict(run.model, run.dev_data)
            if learner.probabilistic:
                nll += token_nll(run.model, run.dev_data, 1.0)[0]
        if not grid:  # one setting: nothing to compare
            best = (None, point, list(learners), passes)
            break
        result = score(runs[0].model.corpus["metric"], gold, pred, scheme=runs[0].model.corpus.get("scheme", "auto"),
                       chars=[c for run in runs for c in _chars(run)] if runs[0].model.corpus["metric"] == "segment"
                       else None)
        name, value = headline(result)
        seconds = time.perf_counter() - start  # (not in the record: the same run gives the same model bytes)
        tried.append({**point, "metric": name, "value": value, "passes": [len(h) for h, _ in passes]})
        if learners[0].probabilistic:
            tried[-1]["nll"] = nll
        if point:
            echo("  " + ", ".join(f"{k} {point[k]:g}" for k in varies) + f": {where} {name} {value:.2f}" +
                 (f", log-likelihood {-nll:.1f}" if learners[0].probabilistic else "") +
                 f" ({', '.join(str(len(h)) for h, _ in passes)} {'iterations' if learners[0].batch else 'passes'}, "
                 f"{seconds:.1f} s)")
        key = (value, -nll)
        if best is None or key > best[0]:
            for old in best[2] if best is not None else ():
                if old not in learners:
                    old.finish()
            best, worse = (key, point, list(learners), passes), 0
        else:
            worse += 1
            if len(varies) == 1 and worse == 2:  # two steps past the best along the path
                break
    for learner in learners:
        if learner not in best[2]:
            learner.finish()
    _, point, learners, passes = best
    settings, sources = {**settings, **point}, {**sources, **{k: "<chosen>" for k in point}}
    record = {"on": where, "tried": tried, "chosen": point} if grid else {}
    if grid:
        echo(f"chose {', '.join(f'{k} = {point[k]:g}' for k in varies)}")
    if where == "dev":
        runs[0].settings = {**planned, **point}
        return settings, sources, (runs[0], learners[0], *passes[0]), record
    if fit:
        learner = previous = best = None  # (the learners' arrays go as soon as their models have weights)
        for f, run in enumerate(runs):
            if grid:  # (without a grid, the runs' models have their weights already)
                learners[f].finish()
                run.model.kind, run.model.weights = learners[f].final_parameters()
                run.model.store  # the sparse rows that decoding reads, made from the dense weights...
                run.model._weights = None  # ...which then go
            learners[f] = None
        temperature, info = fit_temperature([(run.model, run.dev_data) for run in runs])
        settings, sources = {**settings, "temperature": temperature}, {**sources, "temperature": "<chosen>"}
        record["temperature"] = {"on": where, "value": temperature, **info}
        echo(_temperature_line(temperature, info, "the held-out tenth" if where == "held-out" else where))
    for learner in learners:
        if learner is not None:
            learner.finish()
    return settings, sources, None, record


def _predict(model, data):
    """The label strings of every sequence of an encoded corpus."""
    ids = model.decode(data)
    labels = np.array(model.labels, dtype=object)
    return [list(labels[ids[data.seq_ptr[j]:data.seq_ptr[j + 1]]]) for j in range(data.n_sequences)]


def _chars(run):
    """The characters of a segmentation run's dev sentences (what the SIGHAN scorer reads)."""
    return _column0(run.dev_sentences) if run.model.corpus["metric"] == "segment" else []


def _gold(sentences):
    """The gold labels of each sentence of a list of Sentence or of a Corpus."""
    return list(sentences.label_sequences()) if isinstance(sentences, Corpus) else [s.labels for s in sentences]


def _column0(sentences):
    return list(sentences.column_sequences(0)) if isinstance(sentences, Corpus) else \
        [s.columns[0] for s in sentences]


def set_temperature(run, model, echo=print):
    """The temperature of the model's probabilities: given, chosen on held-out data
    (select), 1 for a CRF, or fitted now on the dev set."""
    settings = run.settings
    if settings["temperature"] > 0:
        model.temperature = settings["temperature"]
        return
    if LEARNERS[settings["learner"]].probabilistic:
        model.temperature = 1.0
        return
    if run.dev_data is None and run.tasks and run.devs:
        # one temperature for the model: the least NLL summed over the tasks' dev sets, each
        # scored by its task's head (the tasks without a dev set do not take part)
        temperature, info = fit_temperature([(model.for_task(name), d) for name, (_, _, d) in run.devs.items()])
        model.temperature = temperature
        model.training["temperature"] = {"on": "dev", "value": temperature, "tasks": list(run.devs), **info}
        echo(_temperature_line(temperature, info, "the dev sets of " + ", ".join(run.devs)))
        return
    if run.dev_data is None:
        model.temperature = 1.0
        why = "multi-task training without dev sets" if run.tasks else \
            "iterative parameter mixing" if settings["shards"] else None
        echo("temperature 1: not fitted" + (f" ({why} has no held-out tenth: give a dev set or a temperature)"
                                            if why else ""))
        return
    temperature, info = fit_temperature(model, run.dev_data)
    model.temperature = temperature
    model.training["temperature"] = {"on": "dev", "value": temperature, **info}
    echo(_temperature_line(temperature, info, "the dev set"))


def _temperature_line(temperature, info, where):
    return (f"temperature {temperature:.4g} fitted on {where}: token negative log-likelihood {info['nll_at_1']:.4f} "
            f"at 1, {info['nll']:.4f} fitted ({info['tokens']} tokens)" +
            ("; at the edge of the search: the scores are far from probabilities" if info["at_bound"] else ""))


def check_run(settings, sources, train_data, dev, base, cluster):
    """The settings that cannot go together, as ConfigErrors before anything is read."""
    tasks = task_list(settings["tasks"], sources.get("tasks", "<settings>")) if settings["tasks"] else None
    if tasks and (train_data is not None or dev is not None or base is not None):
        raise ConfigError(sources.get("tasks", "<settings>"), 0, "multi-task training reads each task's corpora "
                          "from its NAME=TRAIN[,DEV] entry: give no other training or dev corpus, nor a model "
                          "to continue")
    if not settings["shards"] and any(v is not None for v in (cluster or {}).values()):
        raise ConfigError("arguments", 0, "a Dask client, scheduler or workers are for iterative parameter "
                          "mixing: give shards too")
    if settings["shards"]:
        _check_shards(settings, sources, train_data, tasks, base)


def prepare(settings, sources, train_data, dev, template_file, config, base, echo, client=None):
    """Read the training corpus (or the tasks' corpora) and encode it once: the
    templates checked against its columns, the labels, the metric, dictionaries,
    vectors and structure; the model that will hold the weights, and the dev corpora
    encoded by it. Returns a Run.

    With settings["shards"], on the Dask cluster of `client`: the workers read and
    encode the shards, and this process merges what they count into the index
    (seqbil/dask/ipm.py); it never holds the corpus (run.data is None, run.mixer
    holds the shards; if preparing fails, the workers let go of them)."""
    fmt = make_format(settings["format"], None, settings["label_column"])
    mixer = None
    if settings["shards"] and not settings["tasks"]:
        if client is None:
            raise ValueError("training on shards needs the client of a Dask cluster")
        if fmt.name == "conll" and fmt.n_fields is None:  # the first sentence fixes the number of fields
            next(iter(fmt.read(train_data, labeled=True, encoding=settings["encoding"])), None)
            if fmt.n_fields is None:
                raise InputError(str(train_data), 0, "no sentences in file")
        from .dask.ipm import Mixer
        mixer = Mixer(client, settings, train_data, fmt, echo)
    try:
        return _prepare(settings, sources, train_data, dev, template_file, config, base, echo, fmt, mixer)
    except BaseException:
        if mixer is not None:  # (a cluster given by --scheduler outlives the run)
            mixer.close()
        raise


def _prepare(settings, sources, train_data, dev, template_file, config, base, echo, fmt, mixer):
    enc = settings["encoding"]
    tasks = task_list(settings["tasks"], sources.get("tasks", "<settings>")) if settings["tasks"] else None
    t0 = time.perf_counter()
    if tasks:
        tokens, train_name, task_records, task_labels = _read_tasks(fmt, tasks, enc)
    elif mixer is not None:
        tokens, train_name = None, str(train_data)
    else:
        tokens, train_name = _read_corpus(fmt, train_data, enc)
    templates = base.templates if base is not None else load_templates(settings, template_file, config)
    origin = str(template_file or config or "<settings>")
    if tasks:
        templates = task_copies(templates.templates, origin)
    elif templates.tasks and base is None:
        bad = next(t.text for t in templates.templates if t.reads_task)
        raise ConfigError(origin, params.line_in_file(origin, bad), f"template {bad!r} reads %task, the task of a "
                          "sentence, which only multi-task training (--task NAME=TRAIN ...) gives; and it adds the "
                          "%task copies itself")
    if fmt.name != "crfsuite" and templates.items:
        bad = next(t.text for t in templates.item_templates)
        raise ConfigError(origin, params.line_in_file(origin, bad), f"template {bad!r}: %attr reads the attributes of tokens given as attributes (--format crfsuite, "
                          "seqbil.sklearn); this corpus gives columns")
    if fmt.name == "conll":
        if fmt.n_fields is None:  # sentences given in memory
            fmt.n_fields = tokens.n_fields
        templates.check_columns(fmt.n_fields, fmt._label_index(fmt.n_fields), train_name, origin)
    elif fmt.name == "crfsuite":
        if any(t not in templates.item_templates and t.refs for t in templates.templates):
            bad = next(t.text for t in templates.templates if t not in templates.item_templates and t.refs)
            raise ConfigError(origin, 0, f"template {bad!r} reads columns, but CRFsuite's files give each token's "
                              f"attributes: use U:%attr (and B, B:%attr)")
        if not templates.items:
            raise ConfigError(origin, 0, "CRFsuite's files give each token's attributes: the templates need U:%attr")
    else:
        templates.check_columns(1, None, train_name, origin)
    check_settings(settings, sources, templates, echo)
    if mixer is not None:
        surveyed = _survey_shards(mixer, settings, sources, templates)
        label_values = set().union(*(r["labels"] for r in surveyed))
    else:
        label_values = tokens.label_values
    labels = list(fmt.labels) if fmt.name == "sighan" else sorted(label_values)
    if base is not None:  # the model's labels keep their place; new ones follow
        labels = base.labels + [y for y in labels if y not in set(base.labels)]
    try:
        metric, why = choose_metric(labels, fmt.name, settings["metric"])
    except ValueError as exc:
        raise ConfigError(sources.get("metric", "<settings>"), 0, f"[corpus] metric = "
                          f"{settings['metric']!r}: {exc}") from None
    scheme = settings["scheme"]
    if metric == "chunk" and scheme == "auto" and mixer is None:  # (on shards: from what they count)
        scheme = detect_scheme(labels, tokens.label_sequences())
    words = None
    if mixer is not None:
        words = [w for r in surveyed for w in r["words"]] if surveyed[0]["words"] is not None else None
    lexicons, jackknife, lexicon_info = training_lexicons(
        settings["dictionaries"], templates, tokens, "char" if fmt.name == "sighan" else "token",
        normalizer(settings["normalize"]), settings["dict_folds"], enc, base.index.lexicons if base is not None else None,
        sources.get("dictionaries", "<settings>"), settings["dict_min_length"], words=words)
    vector_info, vectors = _vector_features(settings, sources, templates,
                                            _ColumnValues(surveyed) if mixer is not None else tokens, base, enc)
    # a learner that adapts the %emb vectors reads them by row: they stay out of the
    # encoded corpus, which gives the rows instead (also when they are frozen: the
    # corpus then takes k times less memory than with the values written out)
    frozen = settings.get("freeze_embeddings", False)
    live = vectors is not None and EMB in vectors.tables and LEARNERS[settings["learner"]].embeds and \
        not (frozen and base is not None)
    learning = live and not frozen
    if learning and base is not None:
        raise ConfigError(sources.get("learner", "<settings>"), 0, "a model with %emb templates cannot be "
                          "continued by rpa (its vectors are learned afresh); train it anew")
    if vectors is not None:
        vectors.live = live
    if settings["shards"] and (jackknife or live):
        raise ConfigError(sources.get("shards", "<settings>"), 0, "iterative parameter mixing (shards) cannot "
                          "encode a shard with " + ("jackknifed dictionaries: set dict_folds = 0" if jackknife else
                                                    "%emb vectors a learner adapts"))
    structure_info, structure = _structure_features(settings, sources, fmt.name, base, bool(tasks))
    if structure is not None and base is None:  # the splits read columns of this corpus too
        n_fields = fmt.n_fields if fmt.name == "conll" else 1
        label = fmt._label_index(n_fields) if fmt.name == "conll" else None
        for split in structure.structure.splits:
            split.index.templates.check_columns(n_fields, label, train_name,
                                                f"{sources.get('structure', '<settings>')} (split {split.name})")
    fingerprint = None
    if mixer is not None:
        data = None
        index, witnesses, fingerprint = _index_of_shards(mixer, settings, templates, labels, surveyed, lexicons,
                                                         vectors, structure, metric == "chunk" and scheme == "auto")
        if metric == "chunk" and scheme == "auto":
            scheme = detect_scheme(labels, witnesses)
        n_sequences, n_positions = sum(r["sentences"] for r in surveyed), sum(r["tokens"] for r in surveyed)
        del surveyed
    else:
        data, index = encode(tokens, templates, None, labels, settings["min_count"], settings["normalize"],
                             base.index if base is not None else None, vectors=vectors, structure=structure,
                             lexicons=lexicons,
                             length_cap=settings["dict_length_cap"], jackknife=jackknife)
        n_sequences, n_positions = data.n_sequences, data.n_positions
    phi0 = emb_counts = None
    if live:
        data.emb_rows = vectors.emb_rows(tokens, normalizer(settings["normalize"]))
        vectors.live = False  # every other corpus reads the vectors' values
        phi0 = vectors.tables[EMB].matrix.astype(np.float64)
        emb_counts = np.bincount(data.emb_rows[data.emb_rows >= 0], minlength=len(phi0)) / data.emb_rows.shape[1]
    task_spec, coupling_line = None, ""
    if tasks:  # how the tasks are coupled (a general interaction matrix adds task copies of attributes)
        if settings["interaction"] and "coupling" in sources:
            raise ConfigError(sources["coupling"], 0, "give either the coupling b or an interaction matrix "
                              "(interaction), not both")
        task_spec, coupling_line = multitask.task_spec(index, templates, [name for name, _, _ in tasks], settings,
                                                       data, origin)
    t_encode = time.perf_counter() - t0
    if data is not None:
        data.without_b_ptr()
    # what the training record needs of the corpus; the passes need only `data`
    if tasks:
        train_record = {"tasks": task_records}
    elif mixer is not None:
        train_record = {"path": train_name, "sentences": n_sequences, "tokens": n_positions,
                        "sha256": sha256_file(train_data)}
    else:
        train_record = file_record(train_name, train_data if train_name == "<memory>" else tokens)
    del tokens, jackknife
    _return_freed_memory()
    corpus = {"format": fmt.name, "n_fields": fmt.n_fields, "label_column": settings["label_column"],
              "encoding": enc, "normalize": settings["normalize"], "metric": metric, "scheme": scheme}
    names = [name for name, _, _ in tasks] if tasks else None
    model = Model("linear", labels, index, corpus, {}, precision=settings["precision"], tasks=names,
                  task_labels=task_labels if tasks else None)
    run = Run(settings, sources, fmt, tasks, templates, origin, train_name, train_record, labels, index, data, model,
              t_encode, task_spec=task_spec, coupling_line=coupling_line, vectors=vectors, live=live,
              learning=learning, phi0=phi0, emb_counts=emb_counts, lexicon_info=lexicon_info,
              vector_info=vector_info, structure_info=structure_info, structure=structure, mixer=mixer,
              fingerprint=fingerprint)
    if tasks:  # per task: (sentences, file name, encoded) of its dev corpus
        devs = {name: _read(fmt, d, enc) for name, _, d in tasks if d is not None}
        run.devs = {name: (s, n, model.for_task(name).encode(s, n)) for name, (s, n) in devs.items()}
    elif dev is not None:
        run.dev_sentences, run.dev_name = _read(fmt, dev, enc)
        run.dev_data = model.encode(run.dev_sentences, run.dev_name) if run.dev_sentences else None
    A0, A1 = index.n_attributes(0), index.n_attributes(1)
    echo(f"read {n_sequences} sequences, {n_positions} tokens, {len(labels)} labels; "
         f"{A0} 0-order and {A1} 1st-order attributes "
         f"({len(templates.by_order[0])} + {len(templates.by_order[1])} templates"
         f"{', label transitions' if templates.transition else ''}) in {t_encode:.1f} s")
    echo(settings_header(settings, sources))
    echo(f"metric: {metric}" + (f" ({scheme})" if metric == "chunk" else "") +
         (f", chosen because {why}" if settings["metric"] == "auto" else ""))
    return run


def make_learner(run, base=None, init_model=None, echo=print):
    """The run's learner, prepared on its corpus (and started from the continued
    model's weights)."""
    settings, sources, index = run.settings, run.sources, run.index
    A0, A1 = index.n_attributes(0), index.n_attributes(1)
    learner_class = LEARNERS[settings["learner"]]
    if run.tasks:
        if not learner_class.multitask:
            multi = ", ".join(name for name, cls in LEARNERS.items() if cls.multitask)
            raise ConfigError(sources.get("learner", "<settings>"), 0, f"[train] learner = {learner_class.name!r} "
                              f"does not learn several tasks (multi-task learners: {multi})")
        echo(run.coupling_line)
    try:
        learner = learner_class(len(run.labels), A0, A1, settings, run.templates.transition, run.task_spec)
    except ValueError as exc:  # options of the learner that cannot learn several tasks (bol's rank1 = global)
        if run.task_spec is None:
            raise
        raise ConfigError(sources.get("learner", "<settings>"), 0, f"multi-task training: {exc}") from None
    learner.prepare(run.data)
    if run.live:
        vectors = run.vectors
        learner.attach([f for f, t in zip(vectors.firsts(index.n_keyed(0)), vectors.templates)
                        if t.refs[0][1].source == EMB], run.phi0)
    if base is not None:
        if (base.kind == "bilinear") != learner.bilinear:
            raise ConfigError(sources.get("learner", "<settings>"), 0, f"[train] learner = {learner.name!r} cannot "
                              f"continue the {base.kind} model {init_model}")
        learner.warm_start(carried_weights(base, run.labels, index.renumber, A0, A1))
        base.weights = {}  # the learner holds them now; the base is kept for its labels and record
        echo(f"starting from {init_model}: {len(base.labels)} of {len(run.labels)} labels, "
             f"{base.index.n_attributes(0)} of {A0} 0-order and {base.index.n_attributes(1)} of {A1} 1st-order "
             f"attributes")
    return learner


def _cluster(settings, cluster):
    """The arguments of dask.cluster.connect for a training on shards: those given,
    or a local cluster of a worker per shard, at most one per core."""
    where = {k: v for k, v in (cluster or {}).items() if v is not None}
    if not where:
        from .tagging import cpus
        where = {"workers": min(settings["shards"], cpus())}
    return where


def run_passes(run, learner, rng, history, *, echo=print, show_progress=True, log_path=None, append_log=False,
               checkpoint_every=0, checkpoint_path=None, checkpoint_record=None, score_dev=True):
    """The learner's passes over run.data, from len(history) on, each appended to
    history as its record: progress bar, the log (JSON lines), dev scores after every
    pass (score_dev), checkpoints, Ctrl-C (the run stops after the pass), and the
    passes on the shards of a Dask cluster (run.mixer, which prepare() made)."""
    settings, data, model, names = run.settings, run.data, run.model, run.names
    tasks = run.tasks
    N = data.n_sequences if data is not None else 0
    log = open(log_path, "a" if append_log else "w", encoding="utf-8") if log_path else None
    try:
        mixer = run.mixer
        if mixer is not None:  # the passes run on the shards, which hold their parts of the corpus
            if learner.mixing() is None:
                raise ConfigError(run.sources.get("shards", "<settings>"), 0, f"learner {learner.name} with these "
                                  "settings does not support iterative parameter mixing (shards)" +
                                  ("; use rank1 = block" if settings.get("rank1") == "global" else ""))
            mixer.start(learner, epochs_run=len(history))
            N = sum(mixer.sizes)
        with graceful_stop() as stop:
            done = bool(history and history[-1].get("stop"))  # a batch learner's optimizer ended the run
            for k in range(len(history), 0 if done else learner.passes()):
                learner.start_pass(k)
                start, mistakes, mixed = time.perf_counter(), 0, None
                if tasks:  # the learners flag the sequences they get wrong, counted per task and chunk
                    data.seq_wrong = np.zeros(N, np.uint8)
                    curve = np.zeros((2, -(-N // CHUNK), len(names)), np.int64)
                with tqdm(total=N, desc=learner.pass_name(k), unit="seq", leave=False,
                          disable=not show_progress, dynamic_ncols=True) as bar:
                    if learner.batch:
                        order, stats = (), learner.train_pass(data, k)
                        bar.update(N)
                    elif mixer is not None:  # the passes run on the shards; this learner takes the mix
                        mistakes, mixed = mixer.epoch(k, bar)
                        order = ()
                    else:
                        order = multitask.epoch_order(rng, data.seq_task, settings["task_order"]) if tasks else \
                            rng.permutation(N).astype(np.int64)
                    for c in range(0, len(order), CHUNK):
                        mistakes += learner.train_chunk(data, order[c:c + CHUNK])
                        if tasks:
                            seen = data.seq_task[order[c:c + CHUNK]]
                            curve[0, c // CHUNK] = np.bincount(seen, minlength=len(names))
                            curve[1, c // CHUNK] = np.bincount(seen, data.seq_wrong[order[c:c + CHUNK]],
                                                               len(names))
                        bar.update(min(CHUNK, N - c))
                        bar.set_postfix(mistakes=mistakes, refresh=False)
                if learner.batch:
                    record = {"pass": k + 1, "name": learner.pass_name(k), **stats,
                              "seconds": time.perf_counter() - start}
                else:
                    record = {"pass": k + 1, "name": learner.pass_name(k), "mistakes": int(mistakes),
                              "error_rate": mistakes / max(N, 1), "seconds": time.perf_counter() - start}
                if tasks:
                    record["task_mistakes"] = dict(zip(names, curve[1].sum(axis=0).tolist()))
                if mixed is not None:
                    record["mixing"] = mixed
                record.update(learner.end_pass(k))
                if learner.batch:  # the fields the learner names (Learner.shown)
                    shown = [fmt.format(record[key]) if isinstance(fmt, str) else fmt(record[key])
                             for key, fmt in learner.shown if record.get(key) is not None]
                    line = f"{record['name']}: " + ", ".join([*shown, f"{record['seconds']:.2f} s"])
                else:
                    line = f"{record['name']}: {mistakes} mistakes ({100 * record['error_rate']:.2f}%), " \
                           f"{record['seconds']:.2f} s" + _diagnostics(record)
                if tasks:
                    line += " (" + ", ".join(f"{t} {n}" for t, n in record["task_mistakes"].items()) + ")"
                if score_dev and run.dev_data is not None:
                    result = score_run(run, learner)
                    record["dev"] = result
                    name, value = headline(result)
                    line += f", dev {name} {value:.2f}"
                elif score_dev and run.devs:
                    model.kind, model.weights = learner.parameters()
                    scores = {task: _score(model.for_task(task), d, s) for task, (s, _, d) in run.devs.items()}
                    record["dev_tasks"] = scores
                    line += ", dev " + ", ".join(f"{task} {headline(r)[0]} {headline(r)[1]:.2f}"
                                                 for task, r in scores.items())
                echo(line)
                history.append(record)
                if log:
                    # multi-task runs: each chunk's sequences and mistakes per task, in the
                    # order learned (the mistake curves of Cavallanti et al.), in the log only
                    extra = {"chunk": CHUNK, "task_sequences_per_chunk": curve[0].tolist(),
                             "task_mistakes_per_chunk": curve[1].tolist()} if tasks else {}
                    log.write(json.dumps({**record, **extra}) + "\n")
                    log.flush()
                last = k + 1 == learner.passes() or bool(record.get("stop"))
                if checkpoint_every and ((k + 1) % checkpoint_every == 0 or stop["stop"] or last):
                    checkpoint.save(checkpoint_path, checkpoint_record, learner, rng, history)
                    echo(f"checkpoint saved to {checkpoint_path}")
                if stop["stop"]:
                    echo(f"interrupted: stopping after {record['name']}")
                    run.interrupted = True
                    break
                if record.get("stop"):
                    echo(f"{learner.name}: {record['stop']} after {record['name']}")
                    break
    finally:
        if log:
            log.close()
    return history


def score_run(run, learner):
    """The dev score of the learner's current parameters (the %emb vectors as they
    are now, when the learner adapts them)."""
    model = run.model
    model.kind, model.weights = learner.parameters()
    if run.learning:
        run.vectors.tables[EMB].matrix = learner.embedding().astype(np.float32)
        run.dev_data = model.encode(run.dev_sentences, run.dev_name)
    return _score(model, run.dev_data, run.dev_sentences)


def finish(run, learner, history, base=None, init_model=None, template_file=None, config=None, echo=print):
    """The trained model of a run: the learner's parameters, the training record,
    compacted (and pruned) as the settings say. The encoded corpus and the learner's
    working state are released first, so that making the model does not raise the
    peak memory of the run."""
    settings, model, vectors = run.settings, run.model, run.vectors
    run.data = None
    learner.finish()
    _return_freed_memory()
    model.kind, model.weights = learner.final_parameters()
    if run.learning:
        final = learner.embedding()
        vectors.tables[EMB].matrix = final.astype(np.float32)
        moved = np.linalg.norm(final - run.phi0, axis=1)
        counts = run.emb_counts
        emb_moved = {"mean_moved": float(moved[counts > 0].mean()) if (counts > 0).any() else 0.0}
        for name, rows in (("frequent", counts >= 10), ("rare", (counts > 0) & (counts < 2))):
            emb_moved[f"{name}_words"] = int(rows.sum())
            emb_moved[f"{name}_mean_moved"] = float(moved[rows].mean()) if rows.any() else 0.0
    model.training = _training_record(settings, learner, history, run.train_record, run.dev_sentences,
                                      run.dev_name, template_file, config)
    if run.tasks:
        model.training["train"] = None
        model.training["tasks"] = {name: _task_record(name, run.train_record["tasks"][name], run.devs.get(name),
                                                      history) for name in run.names}
    if run.learning:  # how far the learner moved the %emb vectors of the training words
        model.training["moved"] = emb_moved
    if base is not None:
        model.training["init_model"] = {"path": str(init_model), "sha256": file_record(init_model, [])["sha256"],
                                        "labels": len(base.labels), "training": base.training}
    return model


def compact(run, model, echo=print):
    """Compaction and pruning as the settings say (Model.compact), and the records of
    the run's dictionaries, vectors and structure. Called once the learner is gone."""
    settings, vectors = run.settings, run.vectors
    kept = model.compact(settings["prune"])
    echo(_compaction_line(kept, settings))
    model.training["compaction"] = {"prune": settings["prune"], "precision": settings["precision"],
                                    **{f"order{o}": kept[o] for o in (0, 1)}}
    if run.lexicon_info:
        model.training["dictionaries"] = run.lexicon_info
    if run.structure is not None:
        model.training["structure"] = run.structure_info
    if vectors is not None:
        model.training["vectors"] = {name: {**run.vector_info[name], "rows_kept": len(t)}
                                     for name, t in sorted(vectors.tables.items())}
        if "moved" in model.training:
            model.training["vectors"][EMB]["moved"] = model.training.pop("moved")
    return model


def _compaction_line(kept, settings):
    """What the model keeps of the trained weights (Model.compact)."""
    attrs = [sum(kept[o]["attributes"][i] for o in (0, 1)) for i in (0, 1)]
    weights = [sum(kept[o]["weights"][i] for o in (0, 1)) for i in (0, 1)]
    return (f"model: {attrs[1]:,} of {attrs[0]:,} attributes hold weights; {weights[1]:,} non-zero weights"
            + (f" of {weights[0]:,} after pruning |w| <= {settings['prune']:g}" if settings["prune"] else "")
            + f", stored as {settings['precision']}")


def _vector_features(settings, sources, templates, tokens, base, encoding):
    """(what each table is, the %vec templates' features): the tables named in
    [features] vectors, cut to the rows the model keeps; a continued model keeps its own."""
    if not templates.vector_templates:
        return {}, None
    if base is not None:
        return {name: {"source": "the model continued"} for name in templates.vectors}, base.index.vectors
    origin = sources.get("vectors", "<settings>")
    files = vector_specs(settings["vectors"], origin)
    info, full, fold = {}, {}, normalizer(settings["normalize"])
    if EMB in templates.vectors:  # %emb: every training word gets a row
        where = sources.get("embeddings", "<settings>")
        if not settings["embeddings"]:
            raise ConfigError(where, 0, "the templates read %emb, but [features] embeddings names no vectors "
                              "(a file, or random:K)")
        columns = {t.refs[0][1].column for t in templates.vector_templates if t.refs[0][1].source == EMB}
        words = {fold(v) if fold else v for c in columns for v in tokens.column(c)[0]}
        full[EMB], found = embedding_table(settings["embeddings"], words, settings["embedding_vocab"],
                                           settings["seed"], encoding, where)
        spec = settings["embeddings"]
        info[EMB] = {"source": spec, "dim": full[EMB].dim, "training_words": len(words)}
        if not spec.startswith("random:"):
            info[EMB].update(sha256=sha256_file(spec), training_words_in_file=found)
    missing = [n for n in templates.vectors if n not in files and n != EMB]
    if missing:
        raise ConfigError(origin, 0, f"the templates read vectors {missing[0]!r}, but [features] vectors does not "
                          f"name them: add \"{missing[0]}=FILE\"")
    for name in templates.vectors:
        if name != EMB:
            full[name] = VectorTable.read(files[name], encoding)
            info[name] = {"source": files[name], "sha256": sha256_file(files[name]), "dim": full[name].dim,
                          "rows_in_file": len(full[name])}
    return info, VectorFeatures.for_training(templates.vector_templates, full, tokens, fold,
                                       settings["vector_unknown"], settings["vector_scale"], settings["vector_rows"])


def _structure_features(settings, sources, fmt, base, tasks):
    """(its record, StructureFeatures) of [features] structure; a continued model keeps
    its own."""
    if base is not None and base.index.structure is not None:
        if settings["structure"]:
            raise ConfigError(sources.get("structure", "<settings>"), 0, "the continued model has a structure "
                              "of its own; it keeps it (leave out structure)")
        return {"source": "the model continued"}, base.index.structure
    if not settings["structure"]:
        return None, None
    origin = sources.get("structure", "<settings>")
    if tasks:
        raise ConfigError(origin, 0, "a structure (structure = FILE) is not supported in multi-task training")
    if base is not None:
        raise ConfigError(origin, 0, "the continued model was trained without a structure; one cannot be added")
    window = params.offsets(settings["structure_window"])  # (checked with the other settings)
    unit = "char" if fmt == "sighan" else "token"
    parts, records = [], []
    for path in settings["structure"]:
        if not os.path.isfile(path):
            raise ConfigError(origin, 0, f"[features] structure: no such file {path!r}")
        part = Structure.load(path)
        if part.unit != unit:
            raise ConfigError(origin, 0, f"{path}: a structure of {part.unit}s, for a corpus of {unit}s "
                              f"(format {fmt}); learn one with seqbil aso --config for this format")
        parts.append(part)
        records.append({"path": os.path.abspath(path), "sha256": sha256_file(path), "bytes": os.path.getsize(path)})
    structure = Structure.merged(parts, records)
    info = {**(records[0] if len(records) == 1 else {"files": records}), "window": window,
            "scale": settings["structure_scale"], "dim": structure.dim, "splits": [s.spec() for s in structure.splits],
            "provenance": structure.provenance}
    return info, StructureFeatures(structure, window, settings["structure_scale"])


def _settings_of_base(base, settings, sources, template_file, echo, path):
    """A continued model keeps the corpus settings and templates it was trained with."""
    if template_file is not None or "templates" in sources:
        echo(f"warning: the templates of {path} are used, not those given")
    settings = dict(settings)
    for key in ("format", "label_column", "encoding", "normalize"):
        if key in sources and settings[key] != base.corpus.get(key, settings[key]):
            echo(f"warning: [corpus] {key} = {base.corpus[key]!r} of {path} is used, not {settings[key]!r}")
        settings[key] = base.corpus.get(key, settings[key])
    if "metric" not in sources:
        settings["metric"] = base.corpus["metric"]
    if "scheme" not in sources:
        settings["scheme"] = base.corpus.get("scheme", "auto")
    table = params.by_name()
    # the model's learner and options, and how its dictionaries and vectors were made, by default
    carried = {"dictionaries", "dict_folds", "dict_min_length", "dict_length_cap", "vectors", "vector_unknown",
               "vector_rows", "vector_scale"}
    for key, value in base.training.get("params", {}).items():
        if key not in sources and key in table and (table[key].section == "train" or key in carried) and \
                key != "temperature":  # fitted anew for the continued model
            settings[key] = value
    return settings


def carried_weights(base, labels, renumber, A0, A1):
    """The weights of a model placed in a larger model: attribute a of the base is
    attribute renumber[order][a], label y keeps its name; the rest is zero."""
    S, w = len(labels), base.weights
    y = np.array([labels.index(name) for name in base.labels])
    v = np.append(y, S)  # the start symbol is the last previous-label column
    out = {"W0": np.zeros((A0, S)), "trans": np.zeros((S, S + 1)), "end": np.zeros(S)}
    out["W0"][np.ix_(renumber[0], y)] = w["W0"]
    out["trans"][np.ix_(y, v)] = w["trans"]
    out["end"][y] = w["end"]
    if base.kind == "linear":
        out["W1"] = np.zeros((A1, S, S + 1))
        out["W1"][np.ix_(renumber[1], y, v)] = w["W1"]
    else:
        out["alpha"], out["beta"] = np.zeros((A1, S)), np.zeros((A1, S + 1))
        out["alpha"][np.ix_(renumber[1], y)] = w["alpha"]
        out["beta"][np.ix_(renumber[1], v)] = w["beta"]
    return out


def _training_record(settings, learner, history, train_record, dev_sentences, dev_name, template_file, config):
    """What inspect shows: every parameter, the data with checksums, the passes run
    and the best dev score. No dates or timings: the same run gives the same bytes."""
    dev_scores = [(r["pass"], *headline(r["dev"])) for r in history if "dev" in r]
    table = params.by_name()  # what seqbil aso reads (the [structure] section) is not the run's
    best = max(dev_scores, key=lambda t: t[2]) if dev_scores else None
    return {
        "learner": settings["learner"],
        "params": {k: v for k, v in settings.items() if k != "templates" and table[k].section != "structure"},
        "config": config and str(config), "template_file": template_file and str(template_file),
        "train": train_record,
        "dev": file_record(dev_name, dev_sentences) if dev_sentences else None,
        "passes_run": len(history), "passes_planned": learner.passes(),
        "best_dev": {"pass": best[0], "metric": best[1], "value": best[2]} if best else None,
        "last_dev": {"pass": dev_scores[-1][0], "metric": dev_scores[-1][1], "value": dev_scores[-1][2]}
        if dev_scores else None,
        "seqbil_version": __version__,
    }


def _task_record(name, train, dev, history):
    """What inspect shows of one task of a multi-task run."""
    out = {"train": train, "dev": file_record(dev[1], dev[0]) if dev else None}
    scores = [(r["pass"], *headline(r["dev_tasks"][name])) for r in history if name in r.get("dev_tasks", {})]
    if scores:
        best = max(scores, key=lambda t: t[2])
        out["best_dev"] = {"pass": best[0], "metric": best[1], "value": best[2]}
        out["last_dev"] = {"pass": scores[-1][0], "metric": scores[-1][1], "value": scores[-1][2]}
    return out


def _diagnostics(record):
    shown = [("sigma_mean", "mean sigma_a"), ("sigma_max", "max sigma_a"), ("sigma_1", "sigma_1"),
             ("sigma2_over_sigma1_mean", "mean sigma2/sigma1"), ("angle_mean", "mean angle to exact pair (deg)"),
             ("value_ratio_mean", "u'Theta v / sigma_1"),
             ("dual_objective", "D_t")]
    return "".join(f", {label} {record[key]:.4g}" for key, label in shown if key in record)


def _score(model, data, sentences):
    pred_l = _predict(model, data)
    chars = _column0(sentences) if model.corpus["metric"] == "segment" else None
    return score(model.corpus["metric"], _gold(sentences), pred_l,
                 scheme=model.corpus.get("scheme", "auto"), chars=chars)
