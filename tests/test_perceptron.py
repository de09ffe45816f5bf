import numpy as np
import pytest

from conftest import sentence
from seqbil.features.dataset import encode
from seqbil.learners import LEARNERS
from seqbil.params import Settings
from seqbil.features.templates import TemplateSet, parse_template


def separable_corpus(rng, n=60):
    """Labels follow from the word and the previous label: separable with U and B features."""
    sentences = []
    for _ in range(n):
        words = list(rng.choice(list("abcxyz"), int(rng.integers(2, 8))))
        labels, prev = [], "O"
        for w in words:
            y = "B" if w in "abc" and prev == "O" else "I" if w in "abc" else "O"
            labels.append(y)
            prev = y
        sentences.append(sentence(words, labels=labels))
    return sentences


def train_epochs(learner, data, epochs, seed=0):
    rng, history = np.random.default_rng(seed), []
    for _ in range(epochs):
        order = rng.permutation(data.n_sequences).astype(np.int64)
        history.append(learner.train_chunk(data, order))
    return history


@pytest.mark.parametrize("averaged", [False, True])
def test_perceptron_learns_a_separable_problem(rng, averaged):
    from seqbil.model import Model
    sentences = separable_corpus(rng)
    templates = TemplateSet(parse_template(t) for t in ["U00:%x[0,0]", "B"])
    labels = ["B", "I", "O"]
    data, index = encode(sentences, templates, None, labels)
    settings = Settings.of({"averaged": averaged})
    learner = LEARNERS["sp"](3, index.n_attributes(0), index.n_attributes(1), settings)
    history = train_epochs(learner, data, 15)
    assert history[0] > 0 and history[-1] == 0
    kind, weights = learner.parameters()
    model = Model(kind, labels, index, {"format": "conll", "n_fields": 2, "evaluation": "accuracy"}, weights)
    assert model.predict(sentences) == [s.labels for s in sentences]


def test_averaging_is_the_mean_of_the_weights_over_time(rng):
    """The lazy average equals the explicit mean of W after every sequence."""
    sentences = separable_corpus(rng, 20)
    templates = TemplateSet(parse_template(t) for t in ["U00:%x[0,0]", "B01:%x[-1,0]"])
    data, index = encode(sentences, templates, None, ["B", "I", "O"])
    learner = LEARNERS["sp"](3, index.n_attributes(0), index.n_attributes(1), Settings.of({"averaged": True}))
    total = [np.zeros_like(learner.W0), np.zeros_like(learner.W1), np.zeros_like(learner.end)]
    steps = 0
    for _ in range(3):
        for j in rng.permutation(data.n_sequences):
            learner.train_chunk(data, np.array([j], dtype=np.int64))
            for acc, w in zip(total, (learner.W0, learner.get_rows("W1", None), learner.end)):
                acc += w
            steps += 1
    _, avg = learner.parameters()
    # W - U/c averages over c = steps + 1 snapshots, the first being all zeros
    for acc, name in zip(total, ("W0", "W1", "end")):
        np.testing.assert_allclose(avg[name], acc / (steps + 1), atol=1e-12)
