"""A run's corpus read and encoded once (a Run), and its learner made and started."""
import time
from dataclasses import dataclass, field

import numpy as np

from .. import checkpoint, multitask
from ..errors import ConfigError, InputError, line_in_file
from ..evaluation import choose_metric
from ..evaluation.chunks import detect_scheme
from ..features.dataset import encode
from ..features.dictionaries import training_lexicons
from ..features.index import normalizer
from ..features.templates import EMB, task_copies
from ..formats import make_format, partial
from ..formats.textio import sha256_file
from ..learners import LEARNERS
from ..model import Model
from .memory import return_freed_memory
from .rules import frozen_cells, run_rules
from .reading import corpus_of, partial_segments, file_record, read_sentences, read_tasks, structure_features, vector_features
from .settings import check_settings, load_templates, settings_header, task_list
from .shards import ColumnValues, index_of_shards, survey_shards


@dataclass
class Embeddings:
    """The %emb vectors of a run whose learner reads them by row (live: the encoded
    corpus gives the rows, data.emb_rows) and adapts them (learning): the vectors it
    starts from, and how often each row is read per position."""
    live: bool = False
    learning: bool = False
    start: object = None
    counts: object = None


@dataclass
class FeatureRecords:
    """What the model's training record says of the run's dictionaries, vectors and
    structure (where they came from, their checksums, what was kept)."""
    dictionaries: dict | None = None
    vectors: dict | None = None
    structure: dict | None = None


@dataclass
class Run:
    """A training corpus read and encoded, with what the passes and the model need:
    the output of prepare(), the input of make_learner(), run_passes() and finish()."""
    settings: object  # params.Settings
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
    emb: Embeddings = field(default_factory=Embeddings)
    records: FeatureRecords = field(default_factory=FeatureRecords)
    structure: object = None
    interrupted: bool = False  # run_passes stopped early on SIGINT / SIGTERM
    mixer: object = None  # on shards: the shards, read and encoded on the workers (dask/ipm.py: Mixer)
    fingerprint: int | None = None  # on shards: of their encodings (the corpus's: checkpoint.fingerprint)
    rules: tuple | None = None  # (allowed, end_allowed) of [tag] well_formed and forbid (rules.py)
    held_out_rows: tuple | None = None  # the attributes of dev_data, for learner = auto's decode after each pass

    def data_fingerprint(self):
        """What a checkpoint keeps of the training corpus, to refuse resuming on another."""
        return self.fingerprint if self.mixer is not None else checkpoint.fingerprint(self.data)

    @property
    def names(self):
        return [name for name, _, _ in self.tasks] if self.tasks else None


def prepare(settings, train_data, dev, template_file, config, base, echo, client=None, header=True):
    """Read the training corpus (or the tasks' corpora) and encode it once: the
    templates checked against its columns, the labels, the metric, dictionaries,
    vectors and structure; the model that will hold the weights, and the dev corpora
    encoded by it. Returns a Run. header=False leaves the learner's settings unsaid
    (a run whose learner is still to be chosen).

    With settings.shards, on the Dask cluster of `client`: the workers read and
    encode the shards, and this process merges what they count into the index
    (seqbil/dask/ipm.py); it never holds the corpus (run.data is None, run.mixer
    holds the shards; if preparing fails, the workers let go of them)."""
    fmt = make_format(settings.format, None, settings.label_column)
    mixer = None
    if settings.shards and not settings.tasks:
        if client is None:
            raise ValueError("training on shards needs the client of a Dask cluster")
        if fmt.layout_unknown():  # the first sentence fixes the number of fields
            next(iter(fmt.read(train_data, labeled=True, encoding=settings.encoding)), None)
            if fmt.n_fields is None:
                raise InputError(str(train_data), 0, "no sentences in file")
        from ..dask.ipm import Mixer
        mixer = Mixer(client, settings, train_data, fmt, echo)
    try:
        return _prepare(settings, train_data, dev, template_file, config, base, echo, fmt, mixer, header)
    except BaseException:
        if mixer is not None:  # (a cluster given by --scheduler outlives the run)
            mixer.close()
        raise


def _prepare(settings, train_data, dev, template_file, config, base, echo, fmt, mixer, header):
    enc = settings.encoding
    _check_partial(settings, fmt)
    tasks = task_list(settings.tasks, settings.origin("tasks")) if settings.tasks else None
    t0 = time.perf_counter()
    if tasks:
        tokens, train_name, task_records, task_labels = read_tasks(fmt, tasks, enc)
    elif mixer is not None:
        tokens, train_name = None, str(train_data)
    else:  # (text segmented in part: partial labels, formats/sighan.py)
        tokens, train_name = partial_segments(fmt, train_data, settings) if settings.partial and fmt.segments \
            else corpus_of(fmt, train_data, enc)
    templates, origin = _templates(settings, template_file, config, base, tasks)
    templates = fmt.check_templates(templates, train_name, origin, tokens)
    settings = check_settings(settings, templates, echo)
    if mixer is not None:
        surveyed = survey_shards(mixer, settings, templates)
        label_values = set().union(*(r["labels"] for r in surveyed))
    else:
        label_values = partial.labels_of(tokens.label_values) if settings.partial else tokens.label_values
    labels, metric, why = _labels_and_metric(fmt, label_values, base, settings)
    scheme = settings.scheme
    if metric == "chunk" and scheme == "auto" and mixer is None:  # (on shards: from what they count)
        # (a partial corpus's scheme from its sentences whose every label is known)
        scheme = detect_scheme(labels, (s for s in tokens.label_sequences() if s is not None and not
                                        (settings.partial and any(map(partial.is_partial, s)))))
    words = None
    if mixer is not None:
        words = [w for r in surveyed for w in r["words"]] if surveyed[0]["words"] is not None else None
    lexicons, jackknife, lexicon_info = training_lexicons(
        settings.dictionaries, templates, tokens, fmt.unit,
        normalizer(settings.normalize), settings.dict_folds, enc, base.index.lexicons if base is not None else None,
        settings.origin("dictionaries"), settings.dict_min_length, words=words)
    vector_info, vectors = vector_features(settings, templates,
                                            ColumnValues(surveyed) if mixer is not None else tokens, base, enc)
    live, learning = _live_embeddings(vectors, base, jackknife, settings)
    structure_info, structure = structure_features(settings, fmt, base, bool(tasks))
    if structure is not None and base is None:  # the splits read columns of this corpus too
        n_fields, label = fmt.layout()
        for split in structure.structure.splits:
            split.index.templates.check_columns(n_fields, label, train_name,
                                                f"{settings.origin('structure')} (split {split.name})")
    fingerprint = None
    if mixer is not None:
        data = None
        index, witnesses, fingerprint = index_of_shards(mixer, settings, templates, labels, surveyed, lexicons,
                                                         vectors, structure, metric == "chunk" and scheme == "auto")
        if metric == "chunk" and scheme == "auto":
            scheme = detect_scheme(labels, witnesses)
        n_sequences, n_positions = sum(r["sentences"] for r in surveyed), sum(r["tokens"] for r in surveyed)
        del surveyed
    else:
        data, index = encode(tokens, templates, None, labels, settings.min_count, settings.normalize,
                             base.index if base is not None else None, vectors=vectors, structure=structure,
                             lexicons=lexicons, partial=settings.partial,
                             length_cap=settings.dict_length_cap, jackknife=jackknife)
        n_sequences, n_positions = data.n_sequences, data.n_positions
    rules = run_rules(settings, labels, scheme, data, bool(tasks), mixer is not None, train_name)
    emb = Embeddings(live, learning, *(_embedding_rows(data, vectors, tokens, settings) if live else (None, None)))
    task_spec, coupling_line = None, ""
    if tasks:  # how the tasks are coupled (a general interaction matrix adds task copies of attributes)
        if settings.interaction and settings.given("coupling"):
            raise ConfigError(settings.origin("coupling"), 0, "give either the coupling b or an interaction matrix "
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
    return_freed_memory()
    corpus = {"format": fmt.name, "n_fields": fmt.n_fields, "label_column": settings.label_column,
              "encoding": enc, "normalize": settings.normalize, "metric": metric, "scheme": scheme}
    names = [name for name, _, _ in tasks] if tasks else None
    model = Model("linear", labels, index, corpus, {}, precision=settings.precision, tasks=names,
                  task_labels=task_labels if tasks else None)
    model.rules = rules
    run = Run(settings, fmt, tasks, templates, origin, train_name, train_record, labels, index, data, model,
              t_encode, task_spec=task_spec, coupling_line=coupling_line, vectors=vectors, emb=emb,
              records=FeatureRecords(lexicon_info, vector_info, structure_info), structure=structure, mixer=mixer,
              fingerprint=fingerprint, rules=rules)
    _read_devs(run, dev)
    A0, A1 = index.n_attributes(0), index.n_attributes(1)
    echo(f"read {n_sequences} sequences, {n_positions} tokens, {len(labels)} labels; "
         f"{A0} 0-order and {A1} 1st-order attributes "
         f"({len(templates.by_order[0])} + {len(templates.by_order[1])} templates"
         f"{', label transitions' if templates.transition else ''}) in {t_encode:.1f} s")
    if header:
        echo(settings_header(settings))
    echo(f"metric: {metric}" + (f" ({scheme})" if metric == "chunk" else "") +
         (f", chosen because {why}" if settings.metric == "auto" else ""))
    return run


def _read_devs(run, dev):
    """The dev corpus read and encoded by the run's model; with several tasks, per task
    (sentences, file name, encoded) of its dev corpus."""
    fmt, enc, model = run.fmt, run.settings.encoding, run.model
    if run.tasks:
        devs = {name: read_sentences(fmt, d, enc) for name, _, d in run.tasks if d is not None}
        run.devs = {name: (s, n, model.for_task(name).encode(s, n)) for name, (s, n) in devs.items()}
    elif dev is not None:
        run.dev_sentences, run.dev_name = read_sentences(fmt, dev, enc)
        run.dev_data = model.encode(run.dev_sentences, run.dev_name) if run.dev_sentences else None


def _embedding_rows(data, vectors, tokens, settings):
    """(the %emb vectors at the start, how often each row is read per position): the
    encoded corpus gives the rows of its words (emb_rows) instead of their values."""
    data.emb_rows = vectors.emb_rows(tokens, normalizer(settings.normalize))
    vectors.live = False  # every other corpus reads the vectors' values
    phi0 = vectors.tables[EMB].matrix.astype(np.float64)
    return phi0, np.bincount(data.emb_rows[data.emb_rows >= 0], minlength=len(phi0)) / data.emb_rows.shape[1]


def _templates(settings, template_file, config, base, tasks):
    """(templates, where they come from): a continued model's, the file's or the
    config's; with several tasks, each template and its %task copy."""
    templates = base.templates if base is not None else load_templates(settings, template_file, config)
    origin = str(template_file or config or "<settings>")
    if tasks:
        templates = task_copies(templates.templates, origin)
    elif templates.tasks and base is None:
        bad = next(t.text for t in templates.templates if t.reads_task)
        raise ConfigError(origin, line_in_file(origin, bad), f"template {bad!r} reads %task, the task of a "
                          "sentence, which only multi-task training (--task NAME=TRAIN ...) gives; and it adds the "
                          "%task copies itself")
    return templates, origin


def _check_partial(settings, fmt):
    if settings.partial_words and not (settings.partial and fmt.segments):
        raise ConfigError(settings.origin("partial_words"), 0, "[corpus] partial_words goes with partial = true "
                          "and segmented (sighan) text")
    trained = [d for d in settings.dictionaries if d.split("=", 1)[-1] == "train"]
    if settings.partial and fmt.segments and trained:
        raise ConfigError(settings.origin("dictionaries"), 0, f"[features] dictionaries {trained[0]!r}: the words "
                          "of a text segmented in part are not known; give the dictionary's file (NAME=FILE)")


def _labels_and_metric(fmt, label_values, base, settings):
    """(labels, metric, why it was chosen): the format's label order, a continued
    model's labels keeping their place and new ones following."""
    labels = fmt.label_order(label_values)
    if base is not None:
        labels = base.labels + [y for y in labels if y not in set(base.labels)]
    try:
        metric, why = choose_metric(labels, fmt.segments, settings.metric)
    except ValueError as exc:
        raise ConfigError(settings.origin("metric"), 0, f"[corpus] metric = "
                          f"{settings.metric!r}: {exc}") from None
    return labels, metric, why


def _live_embeddings(vectors, base, jackknife, settings):
    """(live, learning): whether the learner reads the %emb vectors by row, and adapts
    them. Such a learner's vectors stay out of the encoded corpus, which gives the
    rows instead (also when they are frozen: the corpus then takes k times less
    memory than with the values written out)."""
    frozen = settings.freeze_embeddings
    live = vectors is not None and EMB in vectors.tables and LEARNERS[settings.learner].embeds and \
        not (frozen and base is not None)
    learning = live and not frozen
    if learning and base is not None:
        raise ConfigError(settings.origin("learner"), 0, "a model with %emb templates cannot be "
                          "continued by rpa (its vectors are learned afresh); train it anew")
    if vectors is not None:
        vectors.live = live
    if settings.shards and (jackknife or live):
        raise ConfigError(settings.origin("shards"), 0, "iterative parameter mixing (shards) cannot "
                          "encode a shard with " + ("jackknifed dictionaries: set dict_folds = 0" if jackknife else
                                                    "%emb vectors a learner adapts"))
    return live, learning


def make_learner(run, base=None, init_model=None, echo=print):
    """The run's learner, prepared on its corpus (and started from the continued
    model's weights)."""
    settings, index = run.settings, run.index
    A0, A1 = index.n_attributes(0), index.n_attributes(1)
    learner_class = LEARNERS[settings.learner]
    if run.tasks:
        if not learner_class.multitask:
            multi = ", ".join(name for name, cls in LEARNERS.items() if cls.multitask)
            raise ConfigError(settings.origin("learner"), 0, f"[train] learner = {learner_class.name!r} "
                              f"does not learn several tasks (multi-task learners: {multi})")
        echo(run.coupling_line)
    try:
        learner = learner_class(len(run.labels), A0, A1, settings, run.templates.transition, run.task_spec)
    except ValueError as exc:  # options of the learner that cannot learn several tasks (bol's rank1 = global)
        if run.task_spec is None:
            raise
        raise ConfigError(settings.origin("learner"), 0, f"multi-task training: {exc}") from None
    learner.prepare(run.data)
    if run.emb.live:
        vectors = run.vectors
        learner.attach([f for f, t in zip(vectors.firsts(index.n_keyed(0)), vectors.templates)
                        if t.refs[0][1].source == EMB], run.emb.start)
    if base is not None:
        if (base.kind == "bilinear") != learner.bilinear:
            raise ConfigError(settings.origin("learner"), 0, f"[train] learner = {learner.name!r} cannot "
                              f"continue the {base.kind} model {init_model}")
        learner.warm_start(carried_weights(base, run.labels, index.renumber, A0, A1))
        base.weights = {}  # the learner holds them now; the base is kept for its labels and record
        echo(f"starting from {init_model}: {len(base.labels)} of {len(run.labels)} labels, "
             f"{base.index.n_attributes(0)} of {A0} 0-order and {base.index.n_attributes(1)} of {A1} 1st-order "
             f"attributes")
    if run.rules is not None:  # (after a warm start, which sets every transition)
        learner.forbid(*frozen_cells(run.rules))
    return learner


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
