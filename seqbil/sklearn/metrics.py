"""sklearn-crfsuite's metrics (flat_accuracy_score ... sequence_accuracy_score: the
label sequences flattened, then scikit-learn's), and chunk-level scores that equal
conlleval's (seqbil.evaluation.chunks), as fractions in [0, 1]."""
from functools import wraps
from itertools import chain

from ..evaluation.chunks import chunk_scores


def flatten(y):
    """[[a, b], [c]] -> [a, b, c]."""
    return list(chain.from_iterable(y))


def _flattens_y(func):
    @wraps(func)
    def wrapper(y_true, y_pred, *args, **kwargs):
        return func(flatten(y_true), flatten(y_pred), *args, **kwargs)
    return wrapper


@_flattens_y
def flat_accuracy_score(y_true, y_pred):
    """Accuracy over the items of all sequences."""
    from sklearn import metrics
    return metrics.accuracy_score(y_true, y_pred)


@_flattens_y
def flat_precision_score(y_true, y_pred, **kwargs):
    """Precision over the items (scikit-learn's precision_score and its options)."""
    from sklearn import metrics
    return metrics.precision_score(y_true, y_pred, **kwargs)


@_flattens_y
def flat_recall_score(y_true, y_pred, **kwargs):
    """Recall over the items (scikit-learn's recall_score and its options)."""
    from sklearn import metrics
    return metrics.recall_score(y_true, y_pred, **kwargs)


@_flattens_y
def flat_f1_score(y_true, y_pred, **kwargs):
    """F1 over the items (scikit-learn's f1_score and its options, e.g. average='weighted')."""
    from sklearn import metrics
    return metrics.f1_score(y_true, y_pred, **kwargs)


@_flattens_y
def flat_fbeta_score(y_true, y_pred, beta, **kwargs):
    """F-beta over the items."""
    from sklearn import metrics
    return metrics.fbeta_score(y_true, y_pred, beta=beta, **kwargs)


@_flattens_y
def flat_classification_report(y_true, y_pred, labels=None, **kwargs):
    """scikit-learn's classification report over the items."""
    from sklearn import metrics
    return metrics.classification_report(y_true, y_pred, labels=labels, **kwargs)


def sequence_accuracy_score(y_true, y_pred):
    """The fraction of sequences labelled entirely right."""
    total = len(y_true)
    if not total:
        return 0
    return sum(list(t) == list(p) for t, p in zip(y_true, y_pred)) / total


def _chunks(y_true, y_pred, scheme, mode="default"):
    return chunk_scores([list(s) for s in y_true], [list(s) for s in y_pred], scheme, mode)


def _chunk_score(y_true, y_pred, key, scheme, mode, average):
    """The chunk score `key` / 100: micro (over all chunks, conlleval's), or the macro or
    weighted average of the per-type scores (seqeval's and scikit-learn's)."""
    result = _chunks(y_true, y_pred, scheme, mode)
    if average == "micro":
        return result[key] / 100
    if average not in ("macro", "weighted"):
        raise ValueError(f"average must be micro, macro or weighted, not {average!r}")
    return result[average][key] / 100


def chunk_precision_score(y_true, y_pred, scheme="auto", mode="default", average="micro"):
    """Chunk precision as conlleval computes it (a chunk is right when its type and both
    ends are), / 100. scheme: iob1, iob2, ioe1, ioe2, iobes, bilou or auto (from the
    labels); mode: default, or strict (only the chunks well-formed under the scheme, as
    seqeval's mode='strict'); average: micro, macro or weighted (over the chunk types)."""
    return _chunk_score(y_true, y_pred, "precision", scheme, mode, average)


def chunk_recall_score(y_true, y_pred, scheme="auto", mode="default", average="micro"):
    """Chunk recall as conlleval computes it, / 100 (options as chunk_precision_score)."""
    return _chunk_score(y_true, y_pred, "recall", scheme, mode, average)


def chunk_f1_score(y_true, y_pred, scheme="auto", mode="default", average="micro"):
    """Chunk F1 as conlleval computes it (its FB1), / 100 (options as chunk_precision_score;
    the macro and weighted F1 average the per-type F1s)."""
    return _chunk_score(y_true, y_pred, "f1", scheme, mode, average)


def chunk_classification_report(y_true, y_pred, scheme="auto", digits=2, mode="default"):
    """conlleval's per-type precision, recall and F1 (percent), as a text table, with the
    overall (micro) figures of conlleval and the macro and weighted averages of seqeval's report."""
    result = _chunks(y_true, y_pred, scheme, mode)
    support = sum(s["gold"] for s in result["per_type"].values())
    rows = [(t, s["precision"], s["recall"], s["f1"], s["gold"]) for t, s in sorted(result["per_type"].items())]
    rows.append(("overall", result["precision"], result["recall"], result["f1"], support))
    rows += [(f"{avg} avg", result[avg]["precision"], result[avg]["recall"], result[avg]["f1"], support)
             for avg in ("macro", "weighted")]
    width = max(len(r[0]) for r in rows)
    head = f"{'':>{width}}  precision     recall   f1-score    support\n"
    return head + "".join(f"{t:>{width}}  {p:9.{digits}f}  {r:9.{digits}f}  {f:9.{digits}f}  {n:9d}\n"
                          for t, p, r, f, n in rows)


__all__ = ["flat_accuracy_score", "flat_precision_score", "flat_recall_score", "flat_f1_score", "flat_fbeta_score",
           "flat_classification_report", "sequence_accuracy_score", "chunk_precision_score", "chunk_recall_score",
           "chunk_f1_score", "chunk_classification_report"]
