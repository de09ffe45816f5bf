"""Training corpora without b_ptr (Dataset.without_b_ptr): when every position has
the same number of 1st-order ids, the kernels find them at p * b_width. Every learner
must learn exactly what it learns from the same corpus with its pointers."""
import dataclasses

import numpy as np
import pytest

from seqbil.checkpoint import fingerprint
from seqbil.features.dataset import encode
from seqbil.features.templates import TemplateSet, parse_template
from seqbil.learners import LEARNERS
from seqbil.params import Settings
from test_bilinear import separable_corpus

TEMPLATES = ["U00:%x[0,0]", "B01:%x[0,0]", "B02:%x[-1,0]", "B03:%x[-1,0]%x[1,0]", "B"]


def encoded(rng, min_count=1):
    sentences = separable_corpus(rng, 40)
    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    return encode(sentences, templates, None, ["B", "I", "O"], min_count=min_count)


@pytest.mark.parametrize("learner", ["sp", "bol", "bcd"])
@pytest.mark.parametrize("averaged", [False, True])
def test_learners_learn_the_same_without_b_ptr(rng, learner, averaged):
    data, index = encoded(rng)
    fixed = dataclasses.replace(data).without_b_ptr()
    assert fixed.b_ptr is None and fixed.b_width == 3  # three B templates with %x
    assert np.array_equal(fixed.b_pointers(), data.b_ptr)
    assert fingerprint(fixed) == fingerprint(data)  # checkpoints stay valid
    settings = Settings.of({"averaged": averaged, "C": 0.7})
    A0, A1 = index.n_attributes(0), index.n_attributes(1)
    runs = []
    for d in (data, fixed):
        model = LEARNERS[learner](3, A0, A1, settings)
        order_rng = np.random.default_rng(5)
        mistakes = [model.train_chunk(d, order_rng.permutation(d.n_sequences).astype(np.int64))
                    for _ in range(model.passes() if learner == "bcd" else 3)]
        runs.append((mistakes, model.parameters()[1]))
    assert runs[0][0] == runs[1][0] and sum(runs[0][0]) > 0
    for name, value in runs[0][1].items():
        assert np.array_equal(value, runs[1][1][name]), name


def test_irregular_corpora_keep_their_pointers(rng):
    data, _ = encoded(rng, min_count=2)  # rare attributes are left out: widths vary
    assert len(set(np.diff(data.b_ptr))) > 1
    assert data.without_b_ptr().b_ptr is not None


def test_decoding_refuses_a_corpus_without_b_ptr(rng):
    from seqbil._kernels.decode import decode_corpus
    data, _ = encoded(rng)
    data.without_b_ptr()
    with pytest.raises(ValueError, match="b_ptr"):
        decode_corpus(data, {}, np.zeros(data.n_positions, dtype=np.int32))
