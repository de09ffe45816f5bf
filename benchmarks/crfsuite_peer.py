"""Train and score a python-crfsuite peer on the same corpus and templates as seqbil.

CRFsuite's linear chain has state features (attribute, y_i) and label transitions
only, so every template is used as a state feature (its CRF++ string) and a bare
`B` becomes CRFsuite's transition features.

    python benchmarks/crfsuite_peer.py --config sighan2005 --train TRAIN --test TEST \\
        --algorithm lbfgs --c2 1.0          # "crf2" (L2);  --c1 1.0 --c2 0 for "crf1"

Prints one JSON line: algorithm, training seconds (CRFsuite's own training call), the
seconds spent building and appending the attributes in Python before it, iterations and
the seconds of each, the test score as "f1"
(conlleval F1 for chunking, SIGHAN word F1 for segmentation, token accuracy for other
tags; "metric" says which), model size. With --log FILE, CRFsuite also
scores the test corpus after every iteration (as a holdout set: not used for training)
and the file gets one JSON line per iteration: seconds so far and label error rate.
With --structure FILE (from `seqbil aso`), every token also gets the structure's
real-valued features, as `seqbil train --structure` builds them (each split divided by
its RMS, times --structure-scale, at the offsets of --structure-window).
"""
import argparse
import itertools
import json
import os
import re
import tempfile
import time

from peer_corpus import PeerCorpus, add_arguments
from seqbil.evaluation import headline
from seqbil.features.functions import apply_chain
from seqbil.features.templates import parse_template


def attributes(sentence, templates, fold):
    """CRF++ attribute strings of every token, boundary symbols included; a macro's
    functions (%x[0,0]|lower) are applied to the cell, as seqbil applies them."""
    columns = [[fold(v) if fold else v for v in c] if c is not None else None for c in sentence.columns]
    n = len(sentence)

    def field(i, r, f):
        j = i + r
        return f"_B{j}" if j < 0 else f"_B+{j - n + 1}" if j >= n else apply_chain(f.chain, columns[f.column][j])
    return [[t.fmt.format(*(field(i, r, f) for r, f in t.refs)) for t in templates] for i in range(n)]


def structure_attributes(sentences, structure, scale, window):
    """Per sentence, per token, {name: value}: the features of `structure` (a
    seqbil.features.structure.Structure) as seqbil train --structure gives them
    (StructureFeatures). A generator: a sentence's dicts are made when CRFsuite takes it."""
    import numpy as np
    vec = structure.vectors(sentences) * np.float32(scale)
    names = [[f"S{w}:{j}" for j in range(vec.shape[1])] for w in window]
    at = 0
    for s in sentences:
        n = len(s)
        yield [{name: float(v) for w, ns in zip(window, names) if 0 <= i + w < n
                for name, v in zip(ns, vec[at + i + w]) if v} for i in range(n)]
        at += n


def items(sentence, templates, fold, dense=None):
    """CRFsuite's item sequence of a sentence: its attribute strings (value 1), plus
    the real-valued ones of `dense` (one dict per token) when given."""
    attrs = attributes(sentence, templates, fold)
    if dense is None:
        return attrs
    return [{**dict.fromkeys(a, 1.0), **d} for a, d in zip(attrs, dense)]


def peer_templates(texts):
    """The templates CRFsuite gets as state features: those with macros (a bare B is
    its own label transitions)."""
    return [parse_template(t) for t in texts if re.search(r"%x\[", t)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    ap.add_argument("--algorithm", default="lbfgs", choices=["lbfgs", "ap", "pa", "l2sgd", "arow"])
    ap.add_argument("--c1", type=float, default=0.0)
    ap.add_argument("--c2", type=float, default=1.0)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--fraction", type=float, default=1.0, help="train on the first part of the corpus")
    ap.add_argument("--log", help="per-iteration label error rate on the test corpus (JSON lines)")
    ap.add_argument("--structure", help="a structure from seqbil aso: its features at every token")
    ap.add_argument("--structure-scale", type=float, default=0.3)
    ap.add_argument("--structure-window", default="0", help="offsets, e.g. -1,0,1")
    ap.add_argument("--stream", action="store_true", help="read the training file a sentence at a time as it is "
                    "appended (no list of its sentences), the test file after training")
    args = ap.parse_args()
    if args.stream and (args.fraction != 1.0 or args.structure or args.log):
        ap.error("--stream goes without --fraction, --structure and --log")
    import pycrfsuite

    corpus = PeerCorpus(args)
    fold = corpus.fold
    templates = peer_templates(corpus.texts)
    train = corpus.train if args.stream else corpus.train[:max(1, round(len(corpus.train) * args.fraction))]
    structure = None
    if args.structure:
        from seqbil.features.structure import Structure
        structure, window = Structure.load(args.structure), [int(w) for w in args.structure_window.split(",")]

    def dense(part):  # the structure's features of each sentence, or None
        if structure is None:
            return itertools.repeat(None)
        return structure_attributes(part, structure, args.structure_scale, window)
    trainer = pycrfsuite.Trainer(algorithm=args.algorithm, verbose=False)
    start = time.perf_counter()  # the attribute strings made in Python and handed over, sentence by sentence
    for s, d in zip(train, dense(train)):
        trainer.append(items(s, templates, fold, d), s.labels, 0)
    feature_seconds = time.perf_counter() - start
    if args.log:  # group 1 is CRFsuite's holdout: scored after each iteration, never trained on
        test = corpus.test
        for s, d in zip(test, dense(test)):
            trainer.append(items(s, templates, fold, d), s.labels, 1)
    params = {"max_iterations": args.iterations}
    if args.algorithm == "lbfgs":
        params.update({"c1": args.c1, "c2": args.c2})
    trainer.set_params(params)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "crf.model")
        start = time.perf_counter()
        trainer.train(model, holdout=1 if args.log else -1)
        seconds = time.perf_counter() - start
        tagger = pycrfsuite.Tagger()
        tagger.open(model)
        test = corpus.test
        pred = [tagger.tag(items(s, templates, fold, d)) for s, d in zip(test, dense(test))]
        size = os.path.getsize(model)
    if args.log:
        with open(args.log, "w") as log:
            elapsed = 0.0
            for it in trainer.logparser.iterations:
                elapsed += it.get("time", 0.0)
                log.write(json.dumps({"pass": it["num"], "seconds": it.get("time", 0.0), "elapsed": elapsed,
                                      "label_error": 100 * (1 - it.get("item_accuracy_float", float("nan")))})
                          + "\n")
    result = corpus.score(pred)
    # "f1" is the headline score: F1 for chunking and segmentation, token accuracy otherwise
    print(json.dumps({"algorithm": args.algorithm, "c1": args.c1, "c2": args.c2, "train_seconds": seconds,
                      "feature_seconds": feature_seconds, "iterations": len(trainer.logparser.iterations),
                      "iteration_seconds": [it.get("time") for it in trainer.logparser.iterations],
                      "metric": result["metric"], "f1": headline(result)[1], "model_mib": size / 2**20}))


if __name__ == "__main__":
    main()
