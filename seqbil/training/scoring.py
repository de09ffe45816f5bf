"""Scores on held-out data: the labels a model predicts for an encoded corpus, the gold
labels, and the metric of the model's corpus over them."""
import numpy as np

from ..evaluation import score
from ..formats.sentence import Corpus


def predict_labels(model, data):
    """The label strings of every sequence of an encoded corpus."""
    ids = model.decode(data)
    labels = np.array(model.labels, dtype=object)
    return [list(labels[ids[data.seq_ptr[j]:data.seq_ptr[j + 1]]]) for j in range(data.n_sequences)]


def segment_chars(run):
    """The characters of a segmentation run's dev sentences (what the SIGHAN scorer reads)."""
    return first_column(run.dev_sentences) if run.model.corpus["metric"] == "segment" else []


def gold_labels(sentences):
    """The gold labels of each sentence of a list of Sentence or of a Corpus."""
    return list(sentences.label_sequences()) if isinstance(sentences, Corpus) else [s.labels for s in sentences]


def first_column(sentences):
    return list(sentences.column_sequences(0)) if isinstance(sentences, Corpus) else \
        [s.columns[0] for s in sentences]


def dev_score(model, data, sentences):
    pred_l = predict_labels(model, data)
    chars = first_column(sentences) if model.corpus["metric"] == "segment" else None
    return score(model.corpus["metric"], gold_labels(sentences), pred_l,
                 scheme=model.corpus.get("scheme", "auto"), chars=chars)
