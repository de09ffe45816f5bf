"""A trained model: label set, templates, attribute dictionaries and weights.

Two model forms share one decoder:
  linear    W0[a, y] (0-order), W1[a, y, v] (1st-order, eq. 2 of Wu & Sun)
  bilinear  W0[a, y] (0-order), alpha[a, y] * beta[a, v] (1st-order, eq. 1)
Both have trans[y, v], the label-transition weights of the bare `B` template
(linear in both forms: a rank-1 transition matrix could not express constraints
such as "I-NP follows B-NP or I-NP"), and end[y], the score of ending a sequence in
label y. The previous-label index S (= number of labels) is the start symbol.

`core.py` is the Model and what it does; `files.py` its file, written and read back
with every part checked; `tasks.py` the tasks of a multi-task model.
"""
from .core import Model
from .files import KINDS
from .probabilities import NBEST_MAX

__all__ = ["KINDS", "NBEST_MAX", "Model"]
