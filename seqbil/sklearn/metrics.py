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


def _chunks(y_true, y_pred, scheme):
    return chunk_scores([list(s) for s in y_true], [list(s) for s in y_pred], scheme)


def chunk_precision_score(y_true, y_pred, scheme="auto"):
    """Chunk precision as conlleval computes it (a chunk is right when its type and both
    ends are), / 100. scheme: iob1, iob2, iobes, bilou or auto (from the labels)."""
    return _chunks(y_true, y_pred, scheme)["precision"] / 100


def chunk_recall_score(y_true, y_pred, scheme="auto"):
    """Chunk recall as conlleval computes it, / 100."""
    return _chunks(y_true, y_pred, scheme)["recall"] / 100


def chunk_f1_score(y_true, y_pred, scheme="auto"):
    """Chunk F1 as conlleval computes it (its FB1), / 100."""
    return _chunks(y_true, y_pred, scheme)["f1"] / 100


def chunk_classification_report(y_true, y_pred, scheme="auto", digits=2):
    """conlleval's per-type precision, recall and F1 (percent), as a text table."""
    result = _chunks(y_true, y_pred, scheme)
    rows = [(t, s["precision"], s["recall"], s["f1"], s["gold"]) for t, s in sorted(result["per_type"].items())]
    rows.append(("overall", result["precision"], result["recall"], result["f1"],
                 sum(s["gold"] for s in result["per_type"].values())))
    width = max(len(r[0]) for r in rows)
    head = f"{'':>{width}}  precision     recall   f1-score    support\n"
    return head + "".join(f"{t:>{width}}  {p:9.{digits}f}  {r:9.{digits}f}  {f:9.{digits}f}  {n:9d}\n"
                          for t, p, r, f, n in rows)


__all__ = ["flat_accuracy_score", "flat_precision_score", "flat_recall_score", "flat_f1_score", "flat_fbeta_score",
           "flat_classification_report", "sequence_accuracy_score", "chunk_precision_score", "chunk_recall_score",
           "chunk_f1_score", "chunk_classification_report"]
