"""Scorers for scikit-learn's cross_val_score, GridSearchCV and RandomizedSearchCV:
sklearn-crfsuite's (flat_accuracy, sequence_accuracy) and conlleval's chunk F1."""
from sklearn.metrics import make_scorer

from . import metrics

flat_accuracy = make_scorer(metrics.flat_accuracy_score)
sequence_accuracy = make_scorer(metrics.sequence_accuracy_score)
chunk_f1 = make_scorer(metrics.chunk_f1_score)
