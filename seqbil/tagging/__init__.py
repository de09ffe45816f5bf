"""Tagging a stream: what `seqbil tag` runs, as seqbil.tag_file.

The input is read as bytes and cut into blocks of whole sentences (at a blank line for
CoNLL models, at a line end for segmentation models) without looking at every line.
Each block is decoded, parsed, tagged, formatted and encoded in one piece, by this
process (jobs=1) or by worker processes that each hold the model (jobs>1), and the
blocks are written in input order: the output does not depend on the number of jobs
or on where the blocks were cut. A block ends after about BLOCK_BYTES (reader.py) of
input, at the end of the input, or, from a pipe or a terminal, when no more input is
waiting, so that each sentence comes out as soon as the input pauses.

The parts: reader.py cuts the input into blocks (BlockReader), tagger.py tags a block
(BlockTagger: the compiled path or the format's reader and writer), output.py encodes
it and writes it where it goes, workers.py runs the worker processes of jobs>1.
dask/tagging.py tags files on a cluster with the same reader and tagger.
"""
import os

from ..errors import SeqbilError, check_output
from ..formats.textio import encoding_problem, open_binary, utf8_input
from ..model import Model
from .output import byte_order_mark, destination, encode_text
from .reader import BLANK_LINE, BlockReader, block_bytes
from .tagger import BlockTagger
from .workers import cpus, failure_of, raise_failure, tag_in_workers, warm_model

__all__ = ["BLANK_LINE", "BlockReader", "BlockTagger", "block_bytes", "byte_order_mark", "cpus", "encode_text",
           "failure_of", "prepare", "raise_failure", "tag_file", "warm_model"]


def tag_file(model, input=None, output=None, *, encoding=None, jobs=1, nbest=None, confidence=False, marginals=False,
             task=None, force=False, well_formed=False, forbid=None, posterior=False):
    """Tag a file or stream and write the result.

    `seqbil tag` calls this function. The output of a CoNLL model is each input line
    with the predicted label appended (after a tab where the line's fields are
    separated by tabs, else after a space) and a blank line after each sentence;
    that of a segmentation model, each line split into words.

    Parameters
    ----------
    model : Model or str or os.PathLike
        A model (`seqbil.load`) or the path of a model file.
    input : str, os.PathLike or binary file object, default=None
        A path (plain or gzip), None or `"-"` for standard input, or a binary
        stream. CoNLL models read one token per line (the attribute fields, with or
        without the label) with a blank line after each sentence; segmentation
        models read one sentence per line.
    output : str, os.PathLike or file object, default=None
        A path, None or `"-"` for standard output, or a stream. A path is written
        atomically: a temporary file in the same directory replaces the file only
        when everything has been tagged, so that a failed or interrupted run leaves
        the old file as it was. Streams are flushed after every block.
    encoding : str, default=None
        Of the input and the output; default: the model's (the encoding of its
        training corpus, utf-8 unless it was trained otherwise).
    jobs : int, default=1
        Worker processes tagging blocks of sentences in parallel, each with the
        model (shared with this process where processes start by fork); 0: one per
        available CPU core. The output is the same, byte for byte, for any `jobs`.
    nbest : int, default=None
        Print the `nbest` best labelings of each sentence, each under a line
        `# RANK SCORE` (as `seqbil tag --nbest`).
    confidence : bool, default=False
        Print the margins (as `seqbil tag --confidence`). Not with `nbest` or
        `marginals`.
    marginals : bool or str, default=False
        True prints probabilities as CRF++'s `crf_test -v1` does (`seqbil tag
        --marginals`): a line `# PROB` before each sentence, the probability of its
        labeling, and `LABEL/PROB`, the label and its marginal probability, in
        place of each token's label; `"all"` also appends every label's
        `LABEL/PROB` (`crf_test -v2`, `--all-marginals`). Segmentation models print
        `# PROB`, `# boundary P1 ... Pn` (per character, the probability that a word
        ends after it) and, with `"all"`, a line `# LABEL P1 ... Pn` per label, then
        the segmented line. With `nbest`, `# RANK PROB` heads each labeling, PROB
        being its probability.
    task : str, default=None
        The task to tag, for a multi-task model (`Model.for_task`).
    force, well_formed, forbid, posterior : bool, bool, path, bool
        Forced, constrained (`Model.constrain`) and posterior decoding, as `seqbil tag
        --force`, `--well-formed`, `--forbid FILE` and `--posterior`.

    Returns
    -------
    n : int
        The number of sentences read (for segmentation models: of lines).

    Raises
    ------
    SeqbilError
        For problems with the input or the options; an `InputError` names the file
        and line.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import seqbil
    >>> from seqbil.samples import sample_path
    >>> model = seqbil.train(epochs=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     seqbil.tag_file(model, sample_path("conll2000_test.txt"), os.path.join(tmp, "tagged.txt"))
    200
    """
    model_path = model
    model, encoding = prepare(model, task, encoding, nbest, confidence, marginals)
    if posterior and (nbest or confidence):
        raise SeqbilError("posterior decoding chooses each token's label by its marginal; nbest, confidence: Viterbi's")
    if well_formed or forbid is not None:
        model = model.constrain(well_formed, forbid)
    if isinstance(output, (str, os.PathLike)):
        check_output(output, inputs=[input, model_path])
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise SeqbilError(f"jobs must be a whole number of at least 0, got {jobs!r}")
    jobs = jobs or cpus()
    raw, name, close = open_binary(input)
    try:
        stream, read_encoding = utf8_input(raw, name, encoding)  # UTF-16 and UTF-32 read as UTF-8
        tagger = BlockTagger(model, name, encoding, nbest, confidence, marginals, read_encoding, force, posterior)
        reader = BlockReader(stream, name, model.format.sentence_per_line, block_bytes(nbest))
        with destination(output, encoding) as write:
            if jobs == 1:
                return _tag_here(tagger, reader, write)
            return tag_in_workers(tagger, reader, write, jobs)
    finally:
        if close:
            raw.close()


def prepare(model, task, encoding, nbest, confidence, marginals=False):
    """(model, encoding) of a tagging run, after checking the options (see tag_file)."""
    if not isinstance(model, Model):
        model = Model.load(model)
    if task is not None:
        model = model.for_task(task)
    model.require_task()
    if nbest is not None and (isinstance(nbest, bool) or not isinstance(nbest, int) or nbest < 1):
        raise SeqbilError(f"nbest must be a whole number of at least 1, got {nbest!r}")
    if nbest and confidence:
        raise SeqbilError("nbest and confidence print different layouts; give one of them")
    if marginals not in (False, None, True, "all"):
        raise SeqbilError(f"marginals must be True, \"all\" or False, got {marginals!r}")
    if marginals and confidence:
        raise SeqbilError("marginals and confidence print different layouts; give one of them")
    encoding = encoding or model.corpus.get("encoding", "utf-8")
    problem = encoding_problem(encoding)
    if problem:
        raise SeqbilError(problem)
    return model, encoding


def _tag_here(tagger, reader, write):
    count = 0
    for block in reader:
        if block is not None:
            data, n = tagger(block)
            write(data)
            count += n
    return count
