"""Scores on held-out data: the gold labels, and the metric of the model's corpus over
them and the labels the model predicts."""
from ..evaluation import score
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
