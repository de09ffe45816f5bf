"""Command-line front end: argument parsing and printing over the API (api.py).

The options of `seqbil train` that set training parameters are generated from the
parameter table (params.py), so the flags, the TOML keys and the docs agree.
"""
import contextlib
import functools
import json
import sys

import click

from . import params
from ._version import __version__
from .errors import SeqbilError, silence_stderr
from .formats import FORMATS
from .progress import AUTO as AUTO_PROGRESS
from .model import NBEST_MAX


class Finite(click.FloatRange):
    """A float in a range, NaN refused (click.FloatRange lets NaN through)."""

    def convert(self, value, param, ctx):
        out = super().convert(value, param, ctx)
        if out != out:
            self.fail(f"{value!r} is not a number", param, ctx)
        return out


def fail_cleanly(command):
    """Errors the user can fix become one line on stderr and exit status 2."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        sys.unraisablehook = _quiet_memory_errors
        try:
            return command(*args, **kwargs)
        except SeqbilError as exc:
            click.echo(f"seqbil: error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("seqbil: interrupted", err=True)
            sys.exit(130)
        except MemoryError:  # (what the input asked for is gone with the frames that held it)
            click.echo("seqbil: error: out of memory: the input needs more than this machine gives the process "
                       "(a corpus without blank lines between its sentences is one sentence)", err=True)
            sys.exit(2)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (e.g. `| head`): not an error
            sys.exit(0)
    return wrapper


def _quiet_memory_errors(unraisable):
    """Out of memory, the frames torn down on the way to the one error said (fail_cleanly)
    fail again in their finalizers: those go unsaid, whatever else is said as Python would."""
    if isinstance(unraisable.exc_value, MemoryError):
        return
    sys.__unraisablehook__(unraisable)


def echo_err(message):
    try:
        click.echo(message, err=True)
    except OSError:  # a closed standard error: the message is lost, not the work
        silence_stderr()


def param_options(sections, names=()):
    """One click option per parameter of the table in these sections (and the named
    ones); defaults come from the config or the table, so every flag defaults to
    None = not given."""
    return functools.partial(_param_options, sections, names)


def _param_options(sections, names, command):
    for p in reversed(params.table()):
        if p.flag == "-" or (p.section not in sections and p.name not in names):
            continue
        users = f"; {', '.join(p.learners)}" if p.learners else ""
        more = "" if p.summary == p.help else " ..."  # the rest: seqbil params, the docs
        text = f"{p.summary}{more}  [default: {p.default_text()}; [{p.section}] {p.name}{users}]"
        if p.type is bool:
            decls = [f"{p.cli_flag}/--no-{p.cli_flag[2:]}", p.name]
            option = click.option(*decls, default=None, help=text)
        elif p.type is list:  # repeated flag; none given = not given
            option = click.option(p.cli_flag, p.name, multiple=True, default=None, metavar="TEXT", help=text + " "
                                  "(repeat the flag for more)", callback=lambda _c, _p, v: list(v) if v else None)
        else:
            # choices are matched as text (click before 8.2 matches only strings), then typed
            kind = click.Choice([str(c) for c in p.choices]) if p.choices else p.type
            typed = (lambda _c, _p, v, t=p.type: None if v is None else t(v)) if p.choices else None
            option = click.option(p.cli_flag, p.name, type=kind, default=None, help=text, callback=typed,
                                  metavar=None if p.choices else p.metavar or p.type.__name__.upper())
        command = option(command)
    return command


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="seqbil")
def main():
    """seqbil: sequence labelling with rank-1 bilinear models learned online.

    Train a chunker, segmenter or tagger from an annotated corpus, tag text in a
    pipe, and score predictions as conlleval and the SIGHAN scorer do.
    """


def _help_templates(ctx, _param, value):
    if value and not ctx.resilient_parsing:
        from .features.templates import help_text
        click.echo(help_text(), nl=False)
        ctx.exit()


@main.command(short_help="Train a model on an annotated corpus.")
@click.option("--config", "config", metavar="FILE|NAME", help="TOML config, or a bundled one by name: "
              f"{', '.join(params.bundled_names())}. [default: conll2000]")
@click.option("--template", "template_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="CRF++ template file; replaces the config's templates.")
@click.option("--train", "train_path", metavar="FILE", help="Training corpus. [default: the bundled sample]")
@click.option("--dev", "dev_path", metavar="FILE", help="Held-out corpus, scored after every epoch; it also "
              "chooses settings (the temperature of the probabilities; a CRF's c2 when none is given), so never "
              "give the test set. Without it they are chosen on the last tenth of the training corpus.")
@click.option("--model", "model_path", default="model.sbm", show_default=True, metavar="FILE",
              help="Where to write the model.")
@click.option("--init-model", "init_model", metavar="FILE", help="Continue training this model on --train: its "
              "templates, corpus settings, labels, weights and (unless given) learner options are the start; "
              "new attributes and labels are added.")
@click.option("--log", "log_path", metavar="FILE", help="Write per-epoch diagnostics as JSON lines.")
@click.option("--checkpoint-every", "checkpoint_every", type=click.IntRange(min=0), default=0, metavar="N",
              show_default=True, help="Write a checkpoint every N epochs (and on Ctrl-C), to continue with --resume.")
@click.option("--checkpoint", "checkpoint_path", metavar="FILE", help="Checkpoint file. [default: MODEL.ckpt]")
@click.option("--resume", "resume_path", metavar="CKPT", help="Continue the run saved in a checkpoint; its "
              "settings and corpora are used (--epochs may extend it), with the same final model as an "
              "uninterrupted run, written to --model (default: MODEL of MODEL.ckpt).")
@click.option("--scheduler", metavar="ADDRESS", help="With --shards (or --resume of a run on shards): train on this "
              "Dask scheduler (tcp://host:8786, or a scheduler file); the training file must be at the same path on "
              "its workers.  [default: a local cluster]")
@click.option("--workers", type=click.IntRange(min=1), metavar="N", help="With --shards: a local Dask cluster of N "
              "worker processes.  [default: one per shard, at most one per CPU core]")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars or Dask dashboard link (bars show only on a terminal).")
@click.option("--help-templates", is_flag=True, expose_value=False, is_eager=True, callback=_help_templates,
              help="Show the template grammar and its functions, and exit.")
@param_options(("corpus", "features", "train", "tag"))
@fail_cleanly
def train(config, template_file, train_path, dev_path, model_path, init_model, log_path, checkpoint_every,
          checkpoint_path, resume_path, scheduler, workers, quiet, **overrides):
    """Train a model on an annotated corpus.

    Parameters come from the parameter table: the config sets them, the flags below
    override the config. `seqbil params` describes each in full (as does the
    documentation's Training parameters page); here, `...` marks a shortened
    description, and `[default: D; [SECTION] KEY; LEARNERS]` gives the default, the
    config's key and the learners that read it.

    Examples:

    \b
        seqbil train --config configs/conll2000.toml --train train.txt --dev dev.txt --model chunker.sbm
        seqbil train --config sighan2005 --train pku_training.utf8 --model pku.sbm
        seqbil train          # the bundled CoNLL-2000 sample, to see it work
        seqbil train --config sighan2005 --learner sp --train pku_training.utf8 --shards 4 --scheduler tcp://host:8786

    Ctrl-C finishes the epoch, saves the model and exits with status 130.
    """
    from . import api

    if resume_path is not None:
        given = [k for k, v in overrides.items() if v is not None and k != "epochs"]
        if given or config or template_file or train_path or dev_path or init_model:
            raise click.UsageError("--resume takes the settings and corpora of the checkpoint; "
                                   "only --epochs, --model, --log, --checkpoint*, and for a run on shards "
                                   "--scheduler or --workers, may be given")
        if (click.get_current_context().get_parameter_source("model_path") is click.core.ParameterSource.DEFAULT
                and resume_path.endswith(".ckpt")):
            model_path = resume_path[:-len(".ckpt")]  # the run's own model, whose checkpoint it is
        model = api.resume(resume_path, model_path, epochs=overrides["epochs"], log=log_path, echo=echo_err,
                           progress=_bars(quiet), checkpoint_to=checkpoint_path, checkpoint_every=checkpoint_every,
                           scheduler=scheduler, workers=workers)
        _exit_if_interrupted(model, model_path)
        return
    if init_model and not train_path:
        raise click.UsageError("--init-model needs --train: the data to continue on")
    if (scheduler is not None or workers is not None) and not overrides.get("shards"):
        raise click.UsageError("--scheduler and --workers go with --shards")
    model = api.train(train_path, dev_path, config=config, template=template_file, model=model_path,
                      init_model=init_model, log=log_path, echo=echo_err, progress=_bars(quiet),
                      checkpoint_every=checkpoint_every, checkpoint=checkpoint_path, scheduler=scheduler,
                      workers=workers, **overrides)
    _exit_if_interrupted(model, model_path)


def _bars(quiet):
    """The progress setting of a command: bars only where a person watches (progress.AUTO)."""
    return False if quiet else AUTO_PROGRESS


def _exit_if_interrupted(model, model_path):
    """Exit status 130 for a run cut short by Ctrl-C or SIGTERM, whose model (of the
    passes done) was saved: a script tells it from a finished run."""
    why = model.training.get("interrupted")
    if why:
        echo_err(f"seqbil: interrupted {why}: the model saved to {model_path} is of the passes done")
        sys.exit(130)


@main.command(short_help="Learn structure from unlabeled text (Ando & Zhang 2005).")
@click.option("--config", "config", metavar="FILE|NAME", help="TOML config (its [corpus] format and encoding and "
              "its [structure] section), or a bundled one by name. [default: none: English words]")
@click.option("--unlabeled", "-u", "unlabeled", multiple=True, metavar="FILE",
              help="Raw text, a sentence per line (tokens separated by spaces; for format sighan, characters); "
              "plain or gzip. More files may follow (--unlabeled a.txt b.txt.gz) or repeat the flag.")
@click.argument("more", nargs=-1, metavar="[FILE]...")
@click.option("--out", "-o", "out", required=True, metavar="FILE", help="Where to write the structure (.sbs).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Threads training the auxiliary problems.")
@click.option("--vectors", "vectors_path", metavar="FILE", help="Also write word vectors (word2vec text format) "
              "from the split that reads only the token itself.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars or Dask dashboard link (bars show only on a terminal).")
@click.option("--shards", type=click.IntRange(min=1), metavar="K", help="Train the auxiliary problems on K shards of "
              "the text on a Dask cluster (pip install \"seqbil[dask]\"): each worker holds its part of the text; "
              "see seqbil/dask/aso.py.  [default: one process]")
@click.option("--scheduler", metavar="ADDRESS", help="With --shards: run on this Dask scheduler (tcp://host:8786, or a "
              "scheduler file); the text must be at the same paths on its workers.  [default: a local cluster]")
@click.option("--workers", type=click.IntRange(min=1), metavar="N", help="With --shards: a local Dask cluster of N "
              "worker processes.  [default: one per CPU core, at most K]")
@param_options(("structure",), ("format", "encoding", "seed"))
@fail_cleanly
def aso(config, unlabeled, more, out, jobs, vectors_path, quiet, shards, scheduler, workers, **overrides):
    """Learn structure from unlabeled text (Ando & Zhang 2005).

    Sets auxiliary problems that raw text answers by itself (is the word at this
    position w, from its left context; from its right context; are the words
    around it w, from its spelling), one per frequent word and split, trains them,
    and keeps per split the h directions their weight vectors share (an SVD):
    Theta. `seqbil train --structure FILE` then gives every token the features
    Theta phi(x).

    Examples:

    \b
        seqbil aso --unlabeled news.txt.gz --unlabeled web.txt.gz --out en.sbs --jobs 2
        seqbil aso --config sighan2005 --unlabeled zh.txt --out zh.sbs --vectors zh.vec
        seqbil train --config conll2000 --train train.txt --structure en.sbs --model chunker.sbm
    """
    from .api import learn_structure

    if not unlabeled and not more:
        raise click.UsageError("give the unlabeled text: --unlabeled FILE...")
    if (scheduler is not None or workers is not None) and not shards:
        raise click.UsageError("--scheduler and --workers go with --shards")
    if scheduler is not None and workers is not None:
        raise click.UsageError("give --workers (a local cluster) or --scheduler, not both")
    learn_structure(list(unlabeled) + list(more), out, config=config, jobs=jobs, vectors=vectors_path, echo=echo_err,
                    progress=_bars(quiet), shards=shards or 0, scheduler=scheduler, workers=workers, **overrides)


@main.command(context_settings={"show_default": True}, short_help="Tag text in a pipe or files, or many files on "
              "a cluster.")
@click.option("--model", "-m", "model_path", required=True, metavar="FILE", help="Model file written by `seqbil train`.")
@click.argument("input_paths", nargs=-1, metavar="[INPUT]...")
@click.option("--input", "-i", "input_options", multiple=True, metavar="FILE", help="File to tag, the same as INPUT "
              "(- or neither: standard input); gzip files are read as they are. With --output-dir: files or quoted "
              "glob patterns ('corpus/*.txt.gz'), repeatable.  [default: standard input]")
@click.option("--output", "-o", "output_path", metavar="FILE", help="Write to FILE instead of standard output. "
              "FILE is replaced only when everything is tagged: a failed or interrupted run leaves it as it was.  "
              "[default: standard output]")
@click.option("--output-dir", "output_dir", metavar="DIR", help="Tag many files on a Dask cluster (pip install "
              "'seqbil[dask]'), each into DIR/NAME (gzip when the input is); files whose output exists are skipped, "
              "so a rerun goes on where a failed one stopped.  [default: none]")
@click.option("--workers", type=click.IntRange(min=1), metavar="N", help="With --output-dir: a local Dask cluster of N "
              "worker processes.  [default: one per CPU core]")
@click.option("--scheduler", metavar="ADDRESS", help="With --output-dir: run on this Dask scheduler (tcp://host:8786, "
              "or a scheduler file) instead of a local cluster; the model, inputs and DIR must be at the same paths "
              "on its workers.  [default: a local cluster]")
@click.option("--partition-mb", "partition_mb", type=Finite(min=0.001, max=1e6), default=8.0,
              metavar="MB",
              help="With --output-dir: megabytes of a plain input file per task (gzip files are one task each).")
@click.option("--overwrite", is_flag=True, help="With --output-dir: tag files whose output exists too.  "
              "[default: skip them]")
@click.option("-q", "--quiet", is_flag=True, help="With --output-dir: no progress bar or dashboard link.")
@click.option("--encoding", default=None, help="Encoding of the input and of the output.  [default: the model's, "
              "that of its training corpus: utf-8 unless trained otherwise]")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=1, metavar="N", help="Tag blocks of sentences in N "
              "worker processes, each with the model, and write them in input order: the same output as one. "
              "0: one per CPU core.")
@click.option("--dict", "user_dicts", multiple=True, metavar="[NAME=]FILE", help="Add the words (or phrases) of "
              "FILE to the model's dictionary NAME (default: its only one) for this run; no retraining. Repeatable.  "
              "[default: none]")
@click.option("--nbest", type=click.IntRange(min=1, max=NBEST_MAX), metavar="K", help="Print the K best labelings of each "
              "sentence, each under a line `# RANK SCORE`, laid out as CRF++'s crf_test -n (whose header holds the "
              "probability: add --marginals for it; see above).  "
              "[default: the best only, no header]")
@click.option("--confidence", is_flag=True, help="Print how sure the model is: a line `# confidence MARGIN` "
              "before each sentence and, for CoNLL models, each label's margin after it (see above).  [default: off]")
@click.option("--marginals", is_flag=True, help="Print probabilities as CRF++'s crf_test -v1: `# PROB` before each "
              "sentence and LABEL/PROB for each token's label; segmentation models: `# PROB`, `# boundary P1 ... Pn` "
              "and the segmented line (see above).  [default: off]")
@click.option("--all-marginals", "all_marginals", is_flag=True, help="--marginals, and every label's LABEL/PROB "
              "after each token's (crf_test -v2), in the model's label order; segmentation models: a line `# LABEL "
              "P1 ... Pn` per label before the segmented line.  [default: off]")
@click.option("--task", metavar="NAME", help="The task to tag, for a model trained on several (train --task): "
              "e.g. the segmentation standard.  [default: none; a multi-task model needs one]")
@click.option("--force", is_flag=True, help="Forced decoding: keep the labels the input gives (its label column) "
              "and predict the rest under them; a label the model does not have, such as ?, marks a token to "
              "predict (see above). A segmentation model keeps the word boundaries of the input's spaces and "
              "segments the rest.  [default: off]")
@click.option("--well-formed", "well_formed", is_flag=True, help="Only labellings well formed in the model's chunk "
              "tag scheme (IOB2: no I-X after O or B-Y, nor first; IOBES, BILOU: every chunk begun is ended; B, I, "
              "E, S segmentation labels likewise), in every layout.  [default: off]")
@click.option("--forbid", "forbid_path", metavar="FILE", help="A file of what a labelling may not have, a pair of "
              "labels per line: `A B` (B right after A), `<s> B` (B first), `A </s>` (A last); # comments.  "
              "[default: none]")
@click.option("--posterior", is_flag=True, help="Posterior decoding (Wapiti's -p): the labeling of highest "
              "expected accuracy, each token's most probable label (under --well-formed or --forbid, the allowed "
              "labeling with the largest sum of marginals); with --marginals, their probabilities.  [default: off]")
@fail_cleanly
def tag(model_path, input_paths, input_options, output_path, output_dir, workers, scheduler, partition_mb, overwrite,
        quiet, encoding, jobs, user_dicts, nbest, confidence, marginals, all_marginals, task, force, well_formed,
        forbid_path, posterior):
    """Tag INPUT (default: standard input) and write to standard output (or --output),
    or tag many files on a Dask cluster (--output-dir).

    CoNLL models read one token per line (the attribute fields, with or without the
    label, separated by spaces or tabs as in CRF++: any other character, U+3000
    included, is part of a field) and print each line with the predicted label
    appended, after a tab where the line's fields are separated by tabs, else after a
    space. Segmentation models
    read one sentence per line and print it split into words. Sentences are tagged in
    blocks; from a pipe, output follows as soon as the input pauses, so seqbil works
    inside a pipe and interactively. With --jobs N, N processes tag the blocks and
    the output comes in input order, byte for byte the same as with one.

    --nbest K prints the K best labelings of each sentence, best first (fewer when a
    short sentence has fewer), laid out as CRF++'s `crf_test -n`: a line `# RANK SCORE`
    (RANK from 0) and under it the sentence's token lines with that labeling and a
    blank line; for segmentation models the segmented line (two tag sequences can
    give the same words: ill-formed ones are read as words too). SCORE is the model's
    score of the labeling, the sum Viterbi maximizes, not a probability; rank 0 is the
    plain output. The list is exact (list Viterbi).

    --confidence prints, before each sentence, `# confidence MARGIN`: the score of the
    best labeling minus that of the second best (0: a tie; inf: there is no other,
    with a single label or an empty line). CoNLL models also append to each token line
    the margin of its label: the best score of a labeling with that label there minus
    the best with any other label there (max-marginals; 0: the label is a toss-up).
    Segmentation output keeps one line per sentence; per-character margins come from
    the Python API: seqbil.load(MODEL).confidence(text) -> (tags, margins, margin).
    Numbers are printed with 10 significant digits.

    --marginals prints probabilities, p(y|x) = exp(score(y) / T) / Z(x) with the
    model's temperature T (seqbil inspect), as CRF++'s `crf_test -v1` does: a line
    `# PROB` before each sentence, the probability of its labeling, and each token
    line with LABEL/PROB, the label and its marginal probability, as its last field.
    --all-marginals also appends LABEL/PROB for every label of the model, in its
    order (`crf_test -v2`). Fields are separated as the input line's (a tab after
    tab-separated fields, else a space). Segmentation models print, per sentence,
    `# PROB`, then `# boundary P1 ... Pn` (for each of the n characters, the
    probability that a word ends after it: P(E) + P(S)), with --all-marginals a
    line `# LABEL P1 ... Pn` for each label (B, I, E, S), then the segmented line:
    a fixed number of lines per sentence, so a reader counts lines instead of
    looking for `#` (an empty line gives `# 1`, `# boundary` and an empty line).
    With --nbest K each labeling is headed `# RANK PROB`, its probability, as
    crf_test -n K -v1 prints it, and its tokens show their own labels' marginals.
    Probabilities are printed as CRF++ prints them, with 6 significant digits.

    --force (forced decoding, as Wapiti's) keeps the label column's labels that are
    the model's and predicts the other tokens (such as ?) under them; --well-formed
    and --forbid FILE keep to the allowed labelings. Every layout ranges over the
    labelings kept: --nbest lists only those, --marginals is conditioned on them.

    --output-dir DIR tags every INPUT (files or quoted glob patterns) into DIR/NAME,
    gzip-compressed when the input is, byte for byte what `seqbil tag INPUT` writes.
    Plain files are cut into partitions of --partition-mb at sentence boundaries and
    tagged by the workers of a Dask cluster (a local one of --workers processes, or
    --scheduler), each of which memory-maps the model once. An output appears only
    when the whole file is tagged; one that exists is skipped, so rerunning a failed or
    stopped run finishes it. A file with bad input is reported and not written; the
    others are.

      seqbil tag -m seg.sbm -i 'crawl/*.txt.gz' --output-dir tagged/ --workers 8

    In Python: seqbil.tag_file(model, input, output, jobs=N, ...), and
    seqbil.dask.tag_files(model, inputs, output_dir, ...) for --output-dir.
    """
    from .model import Model
    from .tagging import tag_file

    if nbest and confidence:
        raise click.UsageError("--nbest and --confidence print different layouts; give one of them")
    marginals = "all" if all_marginals else marginals
    if marginals and confidence:
        raise click.UsageError("--marginals and --confidence print different layouts; give one of them")
    if input_paths and input_options:
        raise click.UsageError("give the input as INPUT or as --input, not both")
    inputs = list(input_paths or input_options)
    if output_dir is not None:
        if force or well_formed or forbid_path or posterior:
            raise click.UsageError("--force, --well-formed, --forbid and --posterior tag one input (or standard "
                                   "input), not --output-dir")
        _tag_files(model_path, inputs, output_path, output_dir, workers, scheduler, partition_mb, overwrite, quiet,
                   encoding, jobs, user_dicts, nbest, confidence, marginals, task)
        return
    for given, flag in ((workers, "--workers"), (scheduler, "--scheduler"), (overwrite or None, "--overwrite"),
                        (quiet or None, "--quiet")):
        if given is not None:
            raise click.UsageError(f"{flag} goes with --output-dir")
    if len(inputs) > 1:
        raise click.UsageError("give one input, or --output-dir DIR to tag many")
    model = Model.load(model_path)
    for spec in user_dicts:
        name, eq, path = spec.rpartition("=")
        model.add_word_file(path, name if eq else None)
    with _sigterm_as_exit():
        tag_file(model, inputs[0] if inputs else None, output_path, encoding=encoding, jobs=jobs, nbest=nbest,
                 confidence=confidence, marginals=marginals, task=task, force=force, well_formed=well_formed,
                 forbid=forbid_path, posterior=posterior)


def _tag_files(model_path, inputs, output_path, output_dir, workers, scheduler, partition_mb, overwrite, quiet,
               encoding, jobs, user_dicts, nbest, confidence, marginals, task):
    from .dask import tag_files

    if not inputs or "-" in inputs:
        raise click.UsageError("--output-dir tags files: give them (INPUT or --input), not standard input")
    if output_path is not None:
        raise click.UsageError("give --output (one input) or --output-dir (many), not both")
    if jobs != 1:
        raise click.UsageError("--jobs is for one input; with --output-dir, give --workers or --scheduler")
    if workers is not None and scheduler is not None:
        raise click.UsageError("give --workers (a local cluster) or --scheduler, not both")
    with _sigterm_as_exit():
        done = tag_files(model_path, inputs, output_dir, scheduler=scheduler, workers=workers, encoding=encoding,
                         task=task, dicts=user_dicts, nbest=nbest, confidence=confidence, marginals=marginals,
                         partition_bytes=max(1, int(partition_mb * (1 << 20))), overwrite=overwrite,
                         progress=_bars(quiet), echo=None if quiet else echo_err)
    if not quiet:
        echo_err(f"tagged {done['files']} files ({done['sentences']:,} sentences) into {output_dir}"
                 + (f"; {done['skipped']} were done before" if done["skipped"] else ""))


@contextlib.contextmanager
def _sigterm_as_exit():
    """SIGTERM ends the command as an error does (exit status 143), so that a temporary
    output file is removed and worker processes are stopped."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(_signum, _frame):
        sys.exit(143)
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@main.command(name="eval", short_help="Score a model on annotated data, or predictions against gold.")
@click.option("--model", "-m", "model_path", metavar="FILE", help="Model to tag --data with.")
@click.option("--data", "data_path", metavar="FILE", help="Annotated corpus to tag and score.")
@click.option("--gold", "gold_path", metavar="FILE", help="Annotated corpus (with --pred).")
@click.option("--pred", "pred_path", metavar="FILE", help="Predictions for --gold: `seqbil tag` output, or any "
              "file of the same layout with the predicted label last.")
@click.option("--metric", type=click.Choice(["chunk", "segment", "accuracy"]),
              help="What to score. [default: the model's task, else chosen from the gold labels]")
@click.option("--scheme", type=click.Choice(["iob1", "iob2", "ioe1", "ioe2", "iobes", "bilou"]),
              help="Chunk tag scheme. [default: the model's, else detected from the labels]")
@click.option("--mode", type=click.Choice(["default", "strict"]), default="default", show_default=True,
              help="Chunks: default reads any tags as conlleval (IOBES and BILOU as seqeval); strict counts "
                   "only the chunks well-formed under the scheme, as seqeval's mode='strict'.")
@click.option("--format", "format_name", type=click.Choice(list(FORMATS)),
              help="Format of --gold/--pred. [default: the model's, else conll]")
@click.option("--words", "words_path", metavar="FILE",
              help="Training words (a word list or the segmented training file) for OOV/IV recall.")
@click.option("--task", metavar="NAME", help="With --model: the task to score, for a model trained on several.")
@click.option("--encoding", metavar="NAME", help="Encoding of the files read (UTF-16 and UTF-32 with a byte-order "
              "mark are read as such).  [default: the model's, else utf-8]")
@click.option("--partial", is_flag=True, help="The gold labels may be partial (? unknown, A|B one of A and B): "
              "only the tokens whose label is known are scored, by accuracy.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@fail_cleanly
def evaluate(model_path, data_path, gold_path, pred_path, metric, scheme, mode, format_name, words_path, task,
             encoding, partial, as_json):
    """Score a model on annotated data, or predictions against gold.

    The metrics (--metric):

    \b
        chunk:    precision, recall and F1 overall and per chunk type, as conlleval
                  (IOB1, IOB2, IOE1, IOE2; IOBES and BILOU with S/U one-token chunks and
                  E/L ends, as seqeval); --mode strict as seqeval's strict mode; --json
                  adds the macro and weighted averages over the types
        segment:  word precision, recall, F1, OOV rate and OOV/IV recall, as the
                  SIGHAN bakeoff scorer
        accuracy: token accuracy with a per-label table

    The metric used, and why, is printed on stderr.
    """
    from . import api
    from .evaluation import format_report

    if model_path and data_path and not (gold_path or pred_path):
        result = api.evaluate(model_path, data_path, words=words_path, metric=metric, task=task, encoding=encoding,
                              mode=mode, partial=partial)
        if scheme:
            raise click.UsageError("--scheme goes with --gold/--pred; a model scores with its own scheme")
    elif gold_path and pred_path and not data_path:
        if task:
            raise click.UsageError("--task goes with --model and --data")
        result = api.evaluate_files(gold_path, pred_path, format=format_name, metric=metric, scheme=scheme,
                                    words=words_path, model=model_path, encoding=encoding, mode=mode,
                                    partial=partial)
    else:
        raise click.UsageError("give --model and --data, or --gold and --pred")
    if result.get("partial"):
        echo_err(f"seqbil: partial gold labels: scored the {result['known_tokens']} tokens whose label is known "
                 f"(of {result['tokens']}), by accuracy, in place of {result['partial']}")
    echo_err(f"seqbil: metric: {result['metric']}"
             + (f" ({result['scheme']}{', strict' if result.get('mode') == 'strict' else ''})"
                if result.get("scheme") else "") + f", {result['metric_source']}")
    if result.get("labels_unknown_to_model"):
        echo_err(f"seqbil: warning: {data_path}: gold labels the model does not know (scored as errors): "
                 f"{', '.join(result['labels_unknown_to_model'])}")
    click.echo(json.dumps(result, indent=2) if as_json else format_report(result), nl=False)


@main.command(short_help="Show what a model is and how it was made.")
@click.argument("model_path", metavar="MODEL")
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
@fail_cleanly
def inspect(model_path, as_json):
    """Show what a model is and how it was made: learner, every parameter, the
    templates, labels and task, the training data (with sha256), epochs run,
    best dev score, feature counts and the file's size and format version."""
    from .info import describe, model_info
    from .model import Model

    model = Model.load(model_path)
    try:
        info = model_info(model, model_path)
        text = json.dumps(info, indent=2, ensure_ascii=False) if as_json else describe(info)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:  # (the record is free JSON)
        raise SeqbilError(f"{model_path}: a training record seqbil cannot read ({type(exc).__name__}: {exc})") \
            from None
    click.echo(text, nl=not as_json)


@main.command(short_help="Convert a CRF++, CRFsuite or Wapiti model, or an older seqbil one; prune, change "
              "precision.")
@click.argument("model_path", metavar="MODEL")
@click.argument("output_path", metavar="OUTPUT")
@click.option("--from", "source", type=click.Choice(["crfpp", "crfsuite", "wapiti"]), default=None,
              help="MODEL is another tool's: a CRF++ model (crf_learn's binary model or the text model of "
              "crf_learn -t), a CRFsuite model (crfsuite learn, python-crfsuite, sklearn-crfsuite) or a Wapiti "
              "CRF model (wapiti train). The result gives the same labels and probabilities.")
@click.option("--encoding", default=None, metavar="ENC",
              help="With --from crfpp or wapiti: the encoding of the model's strings, which the model does not "
              "record (the encoding of its training data)  [default: utf-8]")
@click.option("--fields", type=click.IntRange(1), default=None, metavar="N",
              help="With --from wapiti: the fields of the data lines, the label included, which a Wapiti model "
              "does not record  [default: the highest column its patterns read + 2]")
@click.option("--precision", type=click.Choice(["float32", "float64"]), default=None,
              help="Floating-point type of the weights written  [default: float32; with --from, the source "
                   "file's: float32 for a binary CRF++ model, float64 for a CRF++ text model and CRFsuite]")
@click.option("--prune", type=Finite(min=0, max=1e9), default=0.0, show_default=True, metavar="EPS",
              help="Drop the weights with |w| <= EPS and the attributes left without weights.")
@click.option("--task", metavar="NAME", help="Of a multi-task model, write the model of task NAME alone: its "
              "shared and own weights summed, tagging at the cost of a single-task model.")
@fail_cleanly
def convert(model_path, output_path, source, encoding, fields, precision, prune, task):
    """Write MODEL in the current file format to OUTPUT: model files of older seqbil
    versions (dense float64 weights) become sparse and load without copying. Also
    changes the precision of a model's weights or prunes small weights; prints what
    the model keeps. OUTPUT is written atomically and may be MODEL itself.

    With --from, MODEL is a CRF++, CRFsuite or Wapiti model, and OUTPUT a seqbil model
    that tags as crf_test, crfsuite tag or wapiti label does: CoNLL columns for a CRF++
    or Wapiti model, CRFsuite's attribute files (--format crfsuite) or seqbil.sklearn's
    feature dicts for a CRFsuite model."""
    from .api import convert as convert_model

    kept = convert_model(model_path, output_path, precision=precision, prune=prune, task=task, source=source,
                         encoding=encoding, fields=fields)
    attrs = [sum(kept[o]["attributes"][i] for o in (0, 1)) for i in (0, 1)]
    weights = [sum(kept[o]["weights"][i] for o in (0, 1)) for i in (0, 1)]
    echo_err(f"{output_path}: {attrs[1]:,} of {attrs[0]:,} attributes and {weights[1]:,} of {weights[0]:,} "
             f"non-zero weights kept, as {precision or ('float32' if source is None else 'the source file has them')}")


@main.command(name="params", short_help="List every training parameter, its default and meaning.")
@click.option("--markdown", is_flag=True, help="As a Markdown table (the README's).")
def list_params(markdown):
    """List every training parameter: TOML key, flag, type, default, learners, meaning."""
    click.echo(params.describe("markdown" if markdown else "text"), nl=False)
