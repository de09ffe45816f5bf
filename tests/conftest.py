import numpy as np
import pytest

from seqbil.formats import Sentence
from seqbil.samples import sample_path


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def conll_sample():
    return sample_path("conll2000_train.txt")


@pytest.fixture
def pku_sample():
    return sample_path("pku_train.utf8")


def sentence(*columns, labels=None):
    """A Sentence from token columns, e.g. sentence(["He", "ran"], ["PRP", "VBD"], labels=["B-NP", "B-VP"])."""
    return Sentence([list(c) for c in columns] + ([None] if labels is not None else []), labels, 1)
