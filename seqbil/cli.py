"""Command-line front end: `seqbil train`, `seqbil tag`, `seqbil eval`."""
import functools
import json
import sys

import click

from . import __version__
from .errors import SeqbilError
from .params import PARAMS

HELP = {p.name: p.help for p in PARAMS}


def fail_cleanly(command):
    """Errors the user can fix become one line on stderr and exit status 2."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except SeqbilError as exc:
            click.echo(f"seqbil: error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("seqbil: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (e.g. `| head`): not an error
            sys.exit(0)
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="seqbil")
def main():
    """seqbil: sequence labelling with rank-1 bilinear models learned online.

    Train a chunker, segmenter or tagger from an annotated corpus, tag text in a
    pipe, and score predictions as conlleval and the SIGHAN scorer do.
    """


@main.command()
@click.option("--config", "config", metavar="FILE", help="TOML config; a bundled one by name: conll2000, sighan2005, "
              "sighan2005_0order (default: conll2000).")
@click.option("--template", "template_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="CRF++ template file; overrides the config's templates.")
@click.option("--train", "train_path", metavar="FILE", help="Training corpus (default: the bundled sample).")
@click.option("--dev", "dev_path", metavar="FILE", help="Held-out corpus scored after every epoch.")
@click.option("--model", "model_path", default="model.sbm", show_default=True, metavar="FILE",
              help="Where to write the model.")
@click.option("--learner", type=click.Choice(["sp", "bol", "bcd"]), help=HELP["learner"])
@click.option("--epochs", type=int, help=HELP["epochs"])
@click.option("-C", "C", type=float, help=HELP["C"])
@click.option("--seed", type=int, help=HELP["seed"])
@click.option("--averaged/--no-averaged", default=None, help=HELP["averaged"])
@click.option("--rank1", type=click.Choice(["block", "global"]), help=HELP["rank1"])
@click.option("--power-steps", "power_steps", type=int, help=HELP["power_steps"])
@click.option("--diagnose", is_flag=True, default=None, help=HELP["diagnose"])
@click.option("--bcd-rounds", "bcd_rounds", type=int, help=HELP["bcd_rounds"])
@click.option("--bcd-epochs", "bcd_epochs", type=int, help=HELP["bcd_epochs"])
@click.option("--min-count", "min_count", type=int, help=HELP["min_count"])
@click.option("--encoding", help=HELP["encoding"])
@click.option("--normalize", type=click.Choice(["none", "nfkc"]), help=HELP["normalize"])
@click.option("--log", "log_path", metavar="FILE", help="Write per-epoch diagnostics as JSON lines.")
@click.option("--checkpoint-every", "checkpoint_every", type=click.IntRange(min=0), default=0, metavar="N",
              help="Write a checkpoint every N epochs (and on Ctrl-C), to continue with --resume.")
@click.option("--checkpoint", "checkpoint_path", metavar="FILE", help="Checkpoint file (default: MODEL.ckpt).")
@click.option("--resume", "resume_path", metavar="CKPT", help="Continue the run saved in a checkpoint; its "
              "settings and corpora are used (--epochs may extend it), with the same final model as an "
              "uninterrupted run.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@fail_cleanly
def train(config, template_file, train_path, dev_path, model_path, log_path, checkpoint_every, checkpoint_path,
          resume_path, quiet, **overrides):
    """Train a model on an annotated corpus.

    \b
    Examples:
      seqbil train --config configs/conll2000.toml --train train.txt --dev test.txt --model chunker.sbm
      seqbil train --config sighan2005 --train pku_training.utf8 --model pku.sbm
      seqbil train          # the bundled CoNLL-2000 sample, to see it work
    """
    from . import params
    from .train import SAMPLES, find_config, resolve_settings, sample_path, train as run

    echo = functools.partial(click.echo, err=True)
    if resume_path is not None:
        given = [k for k, v in overrides.items() if v is not None and k != "epochs"]
        if given or config or template_file or train_path or dev_path:
            raise click.UsageError("--resume takes the settings and corpora of the checkpoint; "
                                   "only --epochs, --model, --log and --checkpoint* may be given")
        run(params.defaults(), None, model_path, log_path=log_path, echo=echo, show_progress=not quiet,
            checkpoint_every=checkpoint_every, checkpoint_path=checkpoint_path, resume=resume_path,
            resume_epochs=overrides["epochs"])
        return
    if config is None:
        echo("no --config given: using the bundled conll2000 config")
        config = "conll2000"
    config = find_config(config)
    settings = resolve_settings(config, overrides)
    if train_path is None:
        train_name, dev_name = SAMPLES[settings["format"]]
        train_path = sample_path(train_name)
        dev_path = dev_path or sample_path(dev_name)
        echo(f"no --train given: training on the bundled sample corpus {train_path} "
             f"(dev: {dev_path})")
    run(settings, train_path, model_path, dev_path, template_file, config, log_path, echo=echo,
        show_progress=not quiet, checkpoint_every=checkpoint_every, checkpoint_path=checkpoint_path)


@main.command()
@click.option("--model", "model_path", required=True, metavar="FILE", help="Model file written by `seqbil train`.")
@click.argument("input_path", required=False, metavar="[INPUT]")
@click.option("--encoding", default=None, help="Input encoding (default: the model's).")
@fail_cleanly
def tag(model_path, input_path, encoding):
    """Tag INPUT (default: standard input) and write to standard output.

    CoNLL models read one token per line (the attribute fields, with or without the
    label) and print each line with the predicted label appended. Segmentation models
    read one sentence per line and print it split into words. Output is flushed after
    every sentence, so seqbil works inside a pipe.
    """
    from .model import Model

    model = Model.load(model_path)
    fmt, out = model.format, sys.stdout.buffer
    encoding = encoding or model.corpus.get("encoding", "utf-8")
    name = input_path or "<stdin>"
    for sentence in fmt.read(input_path, labeled=False, encoding=encoding, keep_empty=True):
        tags = model.predict([sentence], name)[0] if len(sentence) else []
        out.write((fmt.write(sentence, tags) if len(sentence) else "\n").encode("utf-8"))
        out.flush()


@main.command(name="eval")
@click.option("--model", "model_path", metavar="FILE", help="Model to tag --data with.")
@click.option("--data", "data_path", metavar="FILE", help="Annotated corpus to tag and score.")
@click.option("--gold", "gold_path", metavar="FILE", help="Annotated corpus (with --pred).")
@click.option("--pred", "pred_path", metavar="FILE", help="Predictions: `seqbil tag` output for --gold.")
@click.option("--format", "format_name", type=click.Choice(["conll", "sighan"]),
              help="Format of --gold/--pred (default: the model's, else conll).")
@click.option("--words", "words_path", metavar="FILE",
              help="Training words (a word list or the segmented training file) for OOV/IV recall.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@fail_cleanly
def evaluate(model_path, data_path, gold_path, pred_path, format_name, words_path, as_json):
    """Score a model on annotated data, or predictions against gold.

    \b
    Chunking: precision, recall and F1 overall and per chunk type, as conlleval.
    Segmentation: word precision, recall, F1, OOV rate and OOV/IV recall, as the
    SIGHAN 2005 scorer. Always: token accuracy.
    """
    from .evaluate import format_report
    from .scoring import evaluate_files, evaluate_model

    if model_path and data_path and not (gold_path or pred_path):
        result = evaluate_model(model_path, data_path, words_path)
    elif gold_path and pred_path and not data_path:
        result = evaluate_files(gold_path, pred_path, format_name, words_path, model_path)
    else:
        raise click.UsageError("give --model and --data, or --gold and --pred")
    if result.get("labels_unknown_to_model"):
        click.echo(f"seqbil: warning: {data_path}: gold labels the model does not know (scored as errors): "
                   f"{', '.join(result['labels_unknown_to_model'])}", err=True)
    click.echo(json.dumps(result, indent=2) if as_json else format_report(result, result["kind"]))
