"""The Python API; the command line is a thin layer over it.

    import seqbil
    model = seqbil.train(train="train.txt", config="conll2000", epochs=3)
    model.tag([["He", "PRP"], ["reckons", "VBZ"]])       # -> ["B-NP", "B-VP"]
    model.save("chunker.sbm")
    model = seqbil.load("chunker.sbm")
    seqbil.evaluate(model, "test.txt")["f1"]
    seqbil.tag_file(model, "test.txt", "tagged.txt", jobs=2)   # what `seqbil tag` does (tagging/)
"""
import sys

from . import params
from .errors import InputError, SeqbilError, check_output, silence_stderr
from .evaluation import choose_metric, read_vocabulary, score
from .formats import FORMATS, Format, make_format, read_corpus
from .formats.partial import gold as partial_gold, is_partial, labels_of as partial_labels_of
from . import foreign
from .model import Model
from .samples import SAMPLES, sample_path
from .tagging import tag_file



def _quiet(*args, **kwargs):
    pass


def _stderr(message):
    try:
        print(message, file=sys.stderr, flush=True)
    except OSError:  # a closed standard error: the message is lost, not the work
        silence_stderr()


def train(train=None, dev=None, *, config=None, template=None, model=None, init_model=None, log=None, verbose=False,
          progress=False, checkpoint_every=0, checkpoint=None, echo=None, client=None, scheduler=None, workers=None,
          **options):
    """Train a model and return it.

    The corpora are files or sentences in memory. Any option of the parameter table
    (`seqbil params`) may be given as a keyword; it overrides the config.
    `seqbil train` calls this function with the same parameters.

    Parameters
    ----------
    train : str or os.PathLike or list, default=None
        A corpus path, or sentences in memory: for CoNLL-style configs, a list of
        sentences, each a list of rows of column strings with the label in the label
        column (`["He", "PRP", "B-NP"]`); for segmentation configs, each a segmented
        sentence (a string of space-separated words, or a list of words). Without
        `train`, the bundled sample of the config's format is used.
    dev : str or os.PathLike or list, default=None
        The held-out corpus, as `train`; without `train` and `dev`, the bundled
        held-out sample of the config's format.
    config : str or os.PathLike, default=None
        A bundled config name (`conll2000`, `sighan2005`, ...) or a TOML file;
        default `conll2000`.
    template : str or os.PathLike, default=None
        A CRF++ template file, replacing the config's templates.
    model : str or os.PathLike, default=None
        A file to save the model to as well.
    init_model : str or os.PathLike, default=None
        A saved model to continue training on this data: its templates, corpus
        settings, labels and weights are the start, and new attributes and labels
        are added; `seqbil inspect` shows the lineage.
    log : str or os.PathLike, default=None
        A file for per-pass diagnostics, as JSON lines.
    verbose : bool, default=False
        Print the run's messages on standard error.
    progress : bool or "auto", default=False
        Show progress bars; "auto": only on a terminal.
    checkpoint_every : int, default=0
        Write a checkpoint every that many passes (and when the run is interrupted),
        to continue with `resume`; 0: none.
    checkpoint : str or os.PathLike, default=None
        The checkpoint file; default: `model` + `".ckpt"`.
    echo : callable, default=None
        A function of one line, given the run's messages in place of `verbose`.
    client : distributed.Client, default=None
        With `shards`: a dask Client to train on.
    scheduler : str, default=None
        With `shards`: the address of a Dask scheduler to train on.
    workers : int, default=None
        With `shards`: a local cluster of that many worker processes (the default:
        one per CPU core and no more than K).
    **options
        Any name of the parameter table (`seqbil params`), e.g. `epochs=3`,
        `learner="bol"`; they override the config.

    Other Parameters
    ----------------
    tasks : list of str
        `["NAME=TRAIN[,DEV]", ...]`, in place of `train` and `dev`: one model for
        several tasks, e.g. segmentation standards, learned together (Cavallanti,
        Cesa-Bianchi & Gentile 2008; `coupling=b` sets how much they share). Tag
        with `model.for_task(NAME)`.
    shards : int
        `shards=K`: iterative parameter mixing on a Dask cluster (`pip install
        "seqbil[dask]"`; seqbil/dask/ipm.py): a local cluster of `workers`
        processes, the scheduler at `scheduler`, or a dask Client `client`. The
        training corpus must be a file the workers can read.

    Returns
    -------
    model : Model
        The trained model.

    Raises
    ------
    SeqbilError
        For bad options or input; an `InputError` names the file and line.

    References
    ----------
    Cavallanti, G., Cesa-Bianchi, N. & Gentile, C. (2008). Linear algorithms for
    online multitask classification. COLT 2008.

    Examples
    --------
    >>> import seqbil
    >>> from seqbil.samples import sample_path
    >>> model = seqbil.train(train=str(sample_path("conll2000_train.txt")), epochs=1)
    >>> model.tag([["He", "PRP"], ["reckons", "VBZ"]])
    ['B-NP', 'B-VP']
    """
    echo = echo or (_stderr if verbose else _quiet)
    config, settings, train, dev = _run_inputs(config, init_model, options, train, dev, echo)
    from .training import train as run
    result, _ = run(settings, train, model, dev=dev, template_file=template, config=config,
                    init_model=init_model, log_path=log, echo=echo, show_progress=progress, checkpoint_every=checkpoint_every,
                    checkpoint_path=checkpoint, cluster={"client": client, "scheduler": scheduler, "workers": workers})
    return result


def _run_inputs(config, init_model, options, train, dev, echo):
    """(config path, settings, training and dev corpora) of a run: the
    format's bundled config and sample when none is given; sentences given in Python
    read as the format (a continued model's) reads them."""
    if config is None and init_model is None:
        config = FORMATS.get(options.get("format"), Format).default_config
        echo(f"no config given: using the bundled {config} config")
    config = params.find_config(config) if config is not None else None
    settings = params.resolve(config, options)
    if train is None and not settings.tasks:  # (multi-task: the corpora of the tasks)
        # (the bundled test sample is never the dev set: settings are chosen on held-out training data)
        train = str(sample_path(SAMPLES[settings.format][0]))
        echo(f"no training corpus given: training on the bundled sample corpus {train}"
             + (f" (dev: {dev})" if dev is not None else ""))
    if init_model is not None and any(isinstance(d, (list, tuple)) for d in (train, dev)):
        corpus = Model.load(init_model).corpus  # sentences in memory are read as the continued model reads
        settings = settings.but({"format": corpus["format"], "label_column": corpus.get("label_column", -1)})
    fmt = make_format(settings.format, None, settings.label_column)
    train, dev = (_in_memory(fmt, d, name) if isinstance(d, (list, tuple)) else d
                  for d, name in ((train, "train"), (dev, "dev")))
    return config, settings, train, dev


def resume(checkpoint, model=None, *, epochs=None, log=None, verbose=False, progress=False, echo=None,
           checkpoint_to=None, checkpoint_every=0, client=None, scheduler=None, workers=None):
    """Continue a run from a checkpoint.

    The result is the same model as an uninterrupted run gives, with the settings
    and corpora recorded in the checkpoint. A run on shards goes on on the Dask
    cluster given as to `train` (`client`, `scheduler` or `workers`; default: a
    local one). `seqbil train --resume` calls this function.

    Parameters
    ----------
    checkpoint : str or os.PathLike
        The checkpoint, written by `train` with `checkpoint_every`.
    model : str or os.PathLike, default=None
        A file to save the model to as well.
    epochs : int, default=None
        The run's number of passes, which may extend it; default: as planned.
    log : str or os.PathLike, default=None
        The per-pass diagnostics file (JSON lines), appended to.
    verbose : bool, default=False
        Print the run's messages on standard error.
    progress : bool or "auto", default=False
        Show progress bars; "auto": only on a terminal.
    echo : callable, default=None
        A function of one line, given the run's messages in place of `verbose`.
    checkpoint_to : str or os.PathLike, default=None
        Where the run's later checkpoints go; default: over the one resumed.
    checkpoint_every : int, default=0
        Write the checkpoints every that many passes; default: as the run it
        continues.
    client : distributed.Client, default=None
        A dask Client, for a run on shards.
    scheduler : str, default=None
        The address of a Dask scheduler, for a run on shards.
    workers : int, default=None
        The worker processes of a local cluster, for a run on shards.

    Returns
    -------
    model : Model
        The trained model.

    Raises
    ------
    SeqbilError
        For a damaged checkpoint, or training data that differ from the data the
        checkpoint was made on (`InputError`).
    """
    from .training import train as run
    echo = echo or (_stderr if verbose else _quiet)
    result, _ = run(params.defaults(), None, model, log_path=log, echo=echo, show_progress=progress,
                    resume=checkpoint, resume_epochs=epochs, checkpoint_path=checkpoint_to,
                    checkpoint_every=checkpoint_every or 0,
                    cluster={"client": client, "scheduler": scheduler, "workers": workers})
    return result


def load(path, *, verify=True):
    """Load a model saved by `train` or `seqbil train`.

    The file is mapped, not read: its weights are paged in as tagging uses them.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.
    verify : bool, default=True
        Check the checksum of the file's contents. False skips it, so that start-up
        does not grow with the model's size; the file's header is always checked,
        and a damaged file can give wrong labels but never a crash.

    Returns
    -------
    model : Model
        The model.

    Raises
    ------
    ModelFileError
        A `SeqbilError`, for a model file that is missing, truncated, corrupt,
        foreign or of an unknown version.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import seqbil
    >>> model = seqbil.train(epochs=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     model.save(os.path.join(tmp, "chunker.sbm"))
    ...     seqbil.load(os.path.join(tmp, "chunker.sbm")).tag([["He", "PRP"], ["reckons", "VBZ"]])
    ['B-NP', 'B-VP']
    """
    return Model.load(path, verify=verify)


def convert(path, output, *, precision=None, prune=0.0, task=None, source=None, encoding=None, fields=None):
    """Write a model file in the current format, at a given precision and pruned.

    Reads the files of older seqbil versions, and, with `source`, a CRF++, CRFsuite or
    Wapiti model (`seqbil.foreign`), whose labels and probabilities the result gives.
    `seqbil convert` calls this function.

    Parameters
    ----------
    path : str or os.PathLike
        The model file to read.
    output : str or os.PathLike
        The file to write, atomically; it may be `path`.
    precision : str, default=None
        The precision of the weights written, `float32` or `float64`; default
        float32, or for another tool's model the precision of its file.
    prune : float, default=0.0
        Weights with `|w| <= prune` are dropped (`Model.compact`).
    task : str, default=None
        Write the model of that task of a multi-task model as a model of its own
        (`Model.single_task`), which tags at the cost of a single-task model.
    source : str, default=None
        `"crfpp"`, `"crfsuite"` or `"wapiti"` to read a CRF++ model (binary, or the
        text model of `crf_learn -t`), a CRFsuite model or a Wapiti CRF model instead.
    encoding : str, default=None
        The encoding of a CRF++ or Wapiti model's strings, which its file does not
        record (default utf-8); kept in the result as its corpus encoding.
    fields : int, default=None
        For a Wapiti model: the fields of its data lines, the label included, which
        its file does not record (default: the highest column its patterns read + 2).

    Returns
    -------
    kept : dict
        `Model.compact`'s account of what was kept: per order (0 and 1), the
        attributes and the non-zero weights before and after.

    Raises
    ------
    SeqbilError
        For `task` with another tool's model, `encoding` with a seqbil model, or a
        task of a model whose template keys are hashed and cannot be split by task
        (tag with `task` instead).
    """
    check_output(output, "converted model")  # (it may be the model itself: written atomically, once read)
    if source is not None:
        if task is not None:
            raise SeqbilError("--task applies to seqbil's multi-task models, not to another tool's")
        try:
            model = foreign.load(path, source, encoding=encoding, precision=precision, fields=fields)
        except ValueError as exc:
            raise SeqbilError(str(exc)) from None
        precision = model.precision
    else:
        if encoding is not None or fields is not None:
            raise SeqbilError(f"--{'encoding' if encoding is not None else 'fields'} applies to another tool's model "
                              "(--from); a seqbil model knows its own")
        model = Model.load(path)
    if task is not None:
        single = model.single_task(task)
        if single is None:
            raise SeqbilError(f"{path}: the keys of a template are hashed and cannot be split by task; tag with "
                              f"--task instead")
        model = single
    kept = model.compact(prune, precision or "float32")
    model.training.setdefault("conversions", []).append({"from": str(path), "precision": model.precision,
                                                         "prune": prune, **({"source": source} if source else {})})
    model.save(output)
    return kept


def _in_memory(fmt, sentences, name):
    """formats.Sentence objects of annotated sentences given as Python lists."""
    out = fmt.annotated(sentences, name)
    if not out:
        raise InputError(f"<{name}>", 0, "no sentences")
    return out


def evaluate(model, data, *, words=None, metric=None, task=None, encoding=None, mode="default", partial=False):
    """Tag an annotated corpus with a model and score the labels.

    Parameters
    ----------
    model : Model or str or os.PathLike
        A model, or the path of a model file.
    data : str or os.PathLike
        The annotated corpus, in the model's format.
    words : str or os.PathLike, default=None
        The training word list, for the out-of-vocabulary figures of segmentation.
    metric : str, default=None
        `chunk`, `segment` or `accuracy`; by default the one stored in the model.
    task : str, default=None
        The task to evaluate, for a multi-task model (`Model.for_task`).
    encoding : str, default=None
        The corpus's encoding; default: the model's (that of its training corpus).
    mode : str, default="default"
        For chunks: `default` (conlleval's reading, or seqeval's default mode for
        IOBES and BILOU) or `strict` (only the chunks well-formed under the scheme
        count, as seqeval's `mode='strict'`).
    partial : bool, default=False
        The gold labels may be partial (`?` unknown, `A|B` one of A and B): only
        the tokens whose label is known are scored, by accuracy (`known_scores`).

    Returns
    -------
    scores : dict
        `metric`, `sentences`, `tokens` and `accuracy` (percent); chunk and segment
        add `precision`, `recall` and `f1`, chunk also `scheme` and `per_type`,
        accuracy `per_label`. `metric_source` says whether the metric was set or is
        the model's; `labels_unknown_to_model` lists the corpus's labels the model
        can never predict (each of their tokens counts as an error), if any.

    Raises
    ------
    InputError
        For a corpus without labels, with none of the model's labels, or whose
        labels the metric cannot read.

    Examples
    --------
    >>> import seqbil
    >>> from seqbil.samples import sample_path
    >>> model = seqbil.train(epochs=1)
    >>> scores = seqbil.evaluate(model, sample_path("conll2000_test.txt"))
    >>> scores["metric"], scores["sentences"], scores["metric_source"]
    ('chunk', 200, "the model's task")
    """
    model = model if isinstance(model, Model) else Model.load(model)
    if task is not None:
        model = model.for_task(task)
    model.require_task()
    sentences = read_corpus(model.format, data, encoding or model.corpus.get("encoding", "utf-8"))
    missing = next((s for s in sentences if s.labels is None), None)
    if missing is not None:
        raise InputError(data, missing.line, "no label field: evaluation needs annotated data")
    gold = [s.labels for s in sentences]
    known = set(model.labels)
    named = partial_labels_of(y for g in gold for y in g) if partial else {y for g in gold for y in g}
    if not named & known:
        raise InputError(data, sentences[0].line, f"none of the labels is known to the model "
                         f"(model labels: {', '.join(model.labels)})")
    metric = metric or model.corpus["metric"]
    _check_metric(metric, named, model.format.segments, data)
    gold = partial_gold(gold) if partial else gold
    pred = model.predict(sentences, str(data))
    result = score(metric, gold, pred, scheme=model.corpus.get("scheme", "auto"), mode=mode,
                   chars=[s.columns[0] for s in sentences] if metric == "segment" else None,
                   vocabulary=read_vocabulary(words) if words else None)
    result["metric_source"] = "as set" if metric != model.corpus["metric"] else "the model's task"
    unknown = sorted(named - known)
    if unknown:  # the model can never predict them: every such token counts as an error
        result["labels_unknown_to_model"] = unknown
    return result


def _check_metric(metric, labels, segments, where):
    try:
        choose_metric(labels, segments, metric)
    except ValueError as exc:
        hint = " (partial labels? give --partial, or partial=True)" if any(map(is_partial, labels)) else ""
        raise InputError(where, 0, f"metric {metric}: {exc}{hint}") from None


def evaluate_files(gold, pred, *, format=None, metric=None, scheme=None, words=None, model=None, encoding=None,
                   mode="default", partial=False):
    """Score a prediction file against a gold file.

    The predictions are `seqbil tag` output, or any tagger's in the same layout: the
    predicted label last. `seqbil eval` calls this function.

    Parameters
    ----------
    gold : str or os.PathLike
        The annotated corpus.
    pred : str or os.PathLike
        The predictions: the sentences and tokens of `gold`, each with its predicted
        label.
    format : str, default=None
        `conll`, `sighan` or `crfsuite` (predictions as `crfsuite tag` writes them:
        a label per line); default: the model's, else `conll`.
    metric : str, default=None
        `chunk`, `segment` or `accuracy`: the one given, else the model's (when a
        model is given), else chosen from the gold labels.
    scheme : str, default=None
        The chunk scheme: `iob1`, `iob2`, `ioe1`, `ioe2`, `iobes`, `bilou` or `auto`;
        default: the model's, else `auto` (detected from the labels, typed or not).
    words : str or os.PathLike, default=None
        The training word list, for the out-of-vocabulary figures of segmentation.
    model : Model or str or os.PathLike, default=None
        A model (or its path) whose format, label column, metric and scheme are
        the defaults.
    encoding : str, default=None
        The files' encoding; default: the model's, else UTF-8 (UTF-16 and UTF-32
        files with a byte-order mark are read as such).
    mode : str, default="default"
        For chunks: `default` or `strict`, as in `evaluate`.
    partial : bool, default=False
        The gold labels may be partial, as in `evaluate`.

    Returns
    -------
    scores : dict
        The scores, as `evaluate` gives them; `scores["metric_source"]` says where
        the metric came from.

    Raises
    ------
    InputError
        When the files hold no sentences, different numbers of sentences, or
        different sentences or tokens, or the metric cannot read the labels.
    """
    model = model if isinstance(model, (Model, type(None))) else Model.load(model)
    guessed = format is None and model is None
    label_column = model.corpus.get("label_column", -1) if model else -1
    fmt = make_format(format or (model.format.name if model else "conll"), None, label_column)
    enc = encoding or (model.corpus.get("encoding", "utf-8") if model else "utf-8")
    try:
        gold_s = list(fmt.read(gold, encoding=enc))
    except InputError as e:
        if guessed and "fields" in e.message:  # read as columns for want of a format or a model
            raise InputError(e.path, e.line, e.message + " (read as CoNLL columns: give --format sighan for "
                             "segmented text, --format crfsuite for attribute files)") from None
        raise
    if not gold_s:
        raise InputError(gold, 0, "no sentences in file")
    pred_s = fmt.read_predictions(pred, enc)
    fmt.check_predictions(gold_s, pred_s, gold, pred)
    labels = {y for s in gold_s for y in s.labels}
    labels = partial_labels_of(labels) if partial else labels
    if metric:
        source = "as set"
    elif model is not None:
        metric, source = model.corpus["metric"], "the model's task"
    else:
        metric, why = choose_metric(labels, fmt.segments)
        source = f"chosen because {why}"
    _check_metric(metric, labels, fmt.segments, gold)
    if scheme is None:
        scheme = model.corpus.get("scheme", "auto") if model is not None else "auto"
    gold_labels = [s.labels for s in gold_s]
    result = score(metric, partial_gold(gold_labels) if partial else gold_labels, [s.labels for s in pred_s],
                   scheme=scheme, mode=mode,
                   chars=[s.columns[0] for s in gold_s] if metric == "segment" else None,
                   vocabulary=read_vocabulary(words) if words else None)
    result["metric_source"] = source
    return result


def _sharded_structure(*args):
    """dask/aso.py: sharded_structure, imported when a run asks for shards (Dask is an extra)."""
    from .dask.aso import sharded_structure
    return sharded_structure(*args)


__all__ = ["train", "resume", "load", "evaluate", "evaluate_files", "tag_file", "Model", "SeqbilError"]


def learn_structure(unlabeled, out=None, *, config=None, jobs=1, vectors=None, verbose=False, progress=False,
                    echo=None, shards=0, client=None, scheduler=None, workers=None, **options):
    """Learn a structure from unlabeled text and return it.

    Ando & Zhang's alternating structure optimization (seqbil/aso.py): auxiliary
    problems that raw text answers by itself, one per frequent word and feature
    split, are trained, and per split the directions their weight vectors share (an
    SVD) are kept as Theta; `seqbil train --structure OUT` then gives every token the
    features Theta phi(x). `seqbil aso` calls this function.

    Parameters
    ----------
    unlabeled : str, os.PathLike or list of them
        Raw text files (plain or gzip), a sentence per line: tokens separated by
        spaces, or for a segmentation config (format sighan) characters; or with
        `unlabeled_format="columns"`, a token per line with its fields (text tagged
        by seqbil models), which splits may read and predict (`@COLUMN`).
    out : str or os.PathLike, default=None
        A file to save the structure to.
    config : str or os.PathLike, default=None
        A bundled config name or a TOML file, for `[corpus]` format and encoding and
        the `[structure]` section (splits, targets, dim, aux_*); `options` override
        it.
    jobs : int, default=1
        Threads training the auxiliary problems (on each worker with `shards`).
    vectors : str or os.PathLike, default=None
        Also write word vectors (word2vec text) of the split that reads only the
        token itself, for every word of the text seen `aux_min_count` times.
    verbose : bool, default=False
        Print the run's messages on standard error.
    progress : bool or "auto", default=False
        Show progress bars; "auto": only on a terminal.
    echo : callable, default=None
        A function of one line, given the run's messages in place of `verbose`.
    shards : int, default=0
        `shards=K`: train the auxiliary problems on K shards of the text on a Dask
        cluster (`pip install "seqbil[dask]"`; seqbil/dask/aso.py); the files must
        be at the same paths on the workers. Each worker holds its part of the
        text, the driver the splits' weights; the closed-form first round gives the
        one process's structure, and the SGD epochs are mixed over the shards after
        each one.
    client : distributed.Client, default=None
        With `shards`: a dask Client to run on.
    scheduler : str, default=None
        With `shards`: the address of a Dask scheduler to run on.
    workers : int, default=None
        With `shards`: a local cluster of that many worker processes (the default:
        one per CPU core and no more than K).
    **options
        Settings of the parameter table (`seqbil params`) by name; they override the
        config.

    Returns
    -------
    structure : seqbil.features.structure.Structure
        The structure, also saved to `out` when given.

    Raises
    ------
    SeqbilError
        For no text, bad options, or a cluster given without `shards`.

    References
    ----------
    Ando, R. K. & Zhang, T. (2005). A framework for learning predictive structures
    from multiple tasks and unlabeled data. JMLR 6.
    """
    from .aso import learn_from_files

    echo = echo or (_stderr if verbose else _quiet)
    if isinstance(unlabeled, (str, bytes)) or hasattr(unlabeled, "__fspath__"):
        unlabeled = [unlabeled]
    unlabeled = [str(p) for p in unlabeled]
    check_output(out, "structure", unlabeled + [config])
    check_output(vectors, "word vectors", unlabeled + [config, out])
    if not unlabeled:
        raise SeqbilError("give the unlabeled text to learn from (--unlabeled FILE)")
    config = params.find_config(config) if config is not None else None
    settings = params.resolve(config, options)
    return learn_from_files(unlabeled, settings, config, echo, out=out, vectors=vectors, jobs=jobs,
                            progress=progress, shards=shards, client=client, scheduler=scheduler, workers=workers,
                            sharded=_sharded_structure)
