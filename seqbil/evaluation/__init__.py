"""Scores of predictions: which metric a corpus gets, and computing it.

chunks.py (IOB1 and IOB2 as conlleval, IOBES and BILOU as seqeval), segmentation.py
(the SIGHAN scorer), accuracy.py (per token and per label), report.py (their text layouts).
"""
from ..formats.sighan import words_from_tags
from ..formats.textio import read_lines
from .accuracy import label_scores, token_accuracy
from .chunks import chunk_scores
from .report import format_report
from .segmentation import segment_scores

METRICS = ("chunk", "segment", "accuracy")
CHUNK_PREFIXES = frozenset("BIESLU")

__all__ = ["METRICS", "choose_metric", "format_report", "headline", "known_scores", "read_vocabulary", "score"]


def is_chunk_label(label):
    """O, PREFIX-TYPE with a chunk prefix (B-NP, I-PER, S-LOC, U-ORG ...), or a bare
    prefix (B, I: chunks without a type, as CRF++'s base-NP example and conlleval read them)."""
    prefix, hyphen, typ = label.partition("-")
    return label == "O" or (prefix in CHUNK_PREFIXES and (bool(typ) or not hyphen))


def choose_metric(labels, segments=False, requested="auto"):
    """(metric, reason): the requested metric, or one chosen from the corpus format
    (segments: its labels segment text, Format.segments) and the label set. Raises
    ValueError when the requested metric cannot apply."""
    labels = set(labels)
    chunky = bool(labels) and all(map(is_chunk_label, labels))  # all O: no gold chunks, as conlleval scores it
    if requested == "segment" and not segments and not labels <= set("BIES"):
        raise ValueError("segment needs segmented text (format sighan) or B/I/E/S character labels")
    if requested == "chunk" and not chunky:
        odd = sorted(y for y in labels if not is_chunk_label(y))[:5]
        raise ValueError(f"chunk needs chunk labels such as B-NP or O, but the data has {', '.join(odd)}")
    if requested != "auto":
        return requested, "as set"
    if segments:
        return "segment", "segmented text"
    if chunky:
        return "chunk", "the labels are chunk tags"
    return "accuracy", "the labels are not chunk tags"


def score(metric, gold, pred, *, scheme="auto", chars=None, vocabulary=None, mode="default"):
    """Scores of predicted label sequences against gold ones.

    metric: chunk, segment or accuracy. scheme: for chunk, iob1, iob2, ioe1, ioe2,
    iobes, bilou or auto; mode: for chunk, default or strict (see chunks.chunk_scores). chars: for segment, the characters of each
    sentence (gold and pred are then B/I/E/S tags). Gold labels that are partial
    (None: unknown; a frozenset: one of its labels; formats/partial.py) are scored
    by known_scores. vocabulary: for segment, the
    training words (OOV figures). Every result has metric, sentences, tokens and
    accuracy (percent); chunk and segment add precision, recall and f1, chunk also
    scheme and per_type, accuracy adds per_label. Raises ValueError for labels
    the chunk scorer cannot read (chunks.LabelError)."""
    gold, pred = [list(s) for s in gold], [list(s) for s in pred]
    if any(not isinstance(y, str) for s in gold for y in s):
        return known_scores(metric, gold, pred)
    result = {"metric": metric, "sentences": len(gold), "tokens": sum(map(len, gold)),
              "accuracy": token_accuracy(gold, pred)}
    if metric == "chunk":
        result.update(chunk_scores(gold, pred, scheme, mode))
    elif metric == "segment":
        g = [words_from_tags(c, t) for c, t in zip(chars, gold)]
        p = [words_from_tags(c, t) for c, t in zip(chars, pred)]
        result.update(segment_scores(g, p, vocabulary))
    elif metric == "accuracy":
        result["per_label"] = label_scores(gold, pred)
    else:
        raise ValueError(f"unknown metric {metric!r}")
    return result


def known_scores(metric, gold, pred):
    """Scores against partial gold labels: what is known of them is scored, and the
    rest is not. A chunk or a word is not known where a token's label is not, so
    every metric becomes the accuracy over the tokens whose label is known (a
    frozenset of labels: a prediction among them is right), with the number of
    tokens left out (partial: the metric it stands for)."""
    right = known = 0
    for gs, ps in zip(gold, pred):
        for g, p in zip(gs, ps):
            if g is not None:
                known += 1
                right += p == g if isinstance(g, str) else p in g
    tokens = sum(map(len, gold))
    return {"metric": "accuracy", "partial": metric, "sentences": len(gold), "tokens": tokens,
            "known_tokens": known, "unknown_tokens": tokens - known,
            "accuracy": 100.0 * right / known if known else 0.0}


def headline(result):
    """The one number shown per epoch: F1, or accuracy (over the known tokens, under
    partial gold labels)."""
    if result.get("partial"):
        return "known acc", result["accuracy"]
    return ("F1", result["f1"]) if result["metric"] in ("chunk", "segment") else ("acc", result["accuracy"])


def read_vocabulary(path, encoding="utf-8"):
    """Words of a word list (one per line) or of a segmented corpus."""
    return {w for _, text in read_lines(path, encoding) for w in text.split()}
