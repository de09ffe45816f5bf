"""Scores on held-out data: the gold labels, and the metric of the model's corpus over
them and the labels the model predicts."""
import numpy as np

from ..evaluation import score
from ..evaluation.common import f1, pct
from ..formats.partial import gold as partial_gold
from ..formats.sentence import Corpus


def segment_chars(run):
    """The characters of a segmentation run's dev sentences (what the SIGHAN scorer reads)."""
    return first_column(run.dev_sentences) if run.model.corpus["metric"] == "segment" else []


def gold_labels(sentences, partial=False):
    """The gold labels of each sentence of a list of Sentence or of a Corpus; partial:
    as partial labels (formats/partial.py: None where unknown, a frozenset for a set)."""
    labels = list(sentences.label_sequences()) if isinstance(sentences, Corpus) else [s.labels for s in sentences]
    return partial_gold(labels) if partial else labels


def first_column(sentences):
    """The first column of each sentence of a list of Sentence or of a Corpus."""
    return list(sentences.column_sequences(0)) if isinstance(sentences, Corpus) else \
        [s.columns[0] for s in sentences]


def dev_score(model, data, sentences, partial=False):
    """The scores of the model on an encoded held-out corpus (its sentences give the
    gold labels, partial ones with partial)."""
    chars = first_column(sentences) if model.corpus["metric"] == "segment" else None
    return score(model.corpus["metric"], gold_labels(sentences, partial), model.predict_data(data),
                 scheme=model.corpus.get("scheme", "auto"), chars=chars)


def ids_headline(runs):
    """The headline of the folds' held-out parts (runs, in order) as a function of
    their predicted label ids (a list of one id array per run), for the scores after
    every pass of an online learner: token accuracy, or the SIGHAN word F1 of
    segmentation (words_from_tags' boundaries: a word ends after E or S, before B or S,
    and at the end of a sentence; a gold word is right when the prediction has a word
    of the same span), counted over arrays. The same numbers as evaluation.score's
    headline over the label strings, whose Python loops took nearly as long as the
    pass itself on small corpora (wtb, under cProfile: 8 ms a pass, against 10 to 13 ms
    of training). None where only evaluation.score applies: chunk labels, partial gold
    labels."""
    metric = runs[0].model.corpus["metric"]
    if metric not in ("accuracy", "segment") or any(run.settings.partial for run in runs):
        return None
    gold, tables, last = [], [], []
    for run in runs:
        labels = [str(y) for y in run.model.label_array()]
        gold_text = [y for s in gold_labels(run.dev_sentences) for y in s]
        ptr = np.asarray(run.dev_data.seq_ptr, dtype=np.int64)
        is_last = np.zeros(int(ptr[-1]), dtype=bool)
        is_last[ptr[1:][ptr[1:] > ptr[:-1]] - 1] = True  # (an empty sentence has no last position)
        last.append(is_last)
        if metric == "accuracy":
            index = {y: i for i, y in enumerate(labels)}
            gold.append(np.array([index.get(y, -1) for y in gold_text], dtype=np.int64))
        else:
            gold.append((np.array([y in ("E", "S") for y in gold_text], dtype=bool),
                         np.array([y in ("B", "S") for y in gold_text], dtype=bool)))
            tables.append((np.array([y in ("E", "S") for y in labels], dtype=bool),
                           np.array([y in ("B", "S") for y in labels], dtype=bool)))
    if metric == "accuracy":
        gold_ids, n = np.concatenate(gold), sum(map(len, gold))

        def accuracy(ids):
            return "acc", pct(int(np.count_nonzero(np.concatenate(ids) == gold_ids)), n)
        return accuracy
    is_last = np.concatenate(last)
    gold_end = _word_ends(*map(np.concatenate, zip(*gold)), is_last)

    def word_f1(ids):
        pred_end = _word_ends(np.concatenate([t[0][i] for t, i in zip(tables, ids)]),
                              np.concatenate([t[1][i] for t, i in zip(tables, ids)]), is_last)
        ends = np.flatnonzero(gold_end)
        starts = np.concatenate([[0], ends[:-1] + 1])[:len(ends)]
        before = np.concatenate([[0], np.cumsum(pred_end)])  # before[i]: predicted word ends before i
        # right: the prediction starts a word at the gold word's start and ends one at its
        # end, and ends none inside it
        right = (starts == 0) | pred_end[np.maximum(starts - 1, 0)]
        right &= pred_end[ends] & (before[ends] == before[starts])
        precision, recall = pct(int(right.sum()), int(pred_end.sum())), pct(int(right.sum()), len(ends))
        return "F1", f1(precision, recall)
    return word_f1


def _word_ends(end_tag, start_tag, is_last):
    """Whether a word ends at each position: after E or S, before B or S, at a sentence's end."""
    ends = end_tag | is_last
    ends[:-1] |= start_tag[1:]
    return ends
