"""Train and score a python-crfsuite peer on the same corpus and templates as seqbil.

CRFsuite's linear chain has state features (attribute, y_i) and label transitions
only, so every template is used as a state feature (its CRF++ string) and a bare
`B` becomes CRFsuite's transition features.

    python benchmarks/crfsuite_peer.py --config sighan2005 --train TRAIN --test TEST \\
        --algorithm lbfgs --c2 1.0          # "crf2" (L2);  --c1 1.0 --c2 0 for "crf1"

Prints one JSON line: algorithm, training seconds, iterations, the test score as "f1"
(conlleval F1 for chunking, SIGHAN word F1 for segmentation, token accuracy for other
tags; "metric" says which), model size. With --log FILE, CRFsuite also
scores the test corpus after every iteration (as a holdout set: not used for training)
and the file gets one JSON line per iteration: seconds so far and label error rate.
"""
import argparse
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
    args = ap.parse_args()
    import pycrfsuite

    corpus = PeerCorpus(args)
    fold, test = corpus.fold, corpus.test
    templates = peer_templates(corpus.texts)
    train = corpus.train[:max(1, round(len(corpus.train) * args.fraction))]
    trainer = pycrfsuite.Trainer(algorithm=args.algorithm, verbose=False)
    for s in train:
        trainer.append(attributes(s, templates, fold), s.labels, 0)
    if args.log:  # group 1 is CRFsuite's holdout: scored after each iteration, never trained on
        for s in test:
            trainer.append(attributes(s, templates, fold), s.labels, 1)
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
        pred = [tagger.tag(attributes(s, templates, fold)) for s in test]
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
                      "iterations": len(trainer.logparser.iterations), "metric": result["metric"],
                      "f1": headline(result)[1], "model_mib": size / 2**20}))


if __name__ == "__main__":
    main()
