"""The online learners' passes decode by bounded search (bounded.pxd) from enough
labels, its bounds kept true as every update moves the transitions: the models must
be exactly those of the same passes decoded by the full search (viterbi())."""
import numpy as np
import pytest

from conftest import sample_head
from seqbil import params
from seqbil.training.passes import run_passes
from seqbil.training.prepare import make_learner, prepare

FULL = 1 << 30  # bounded_from: never the bounded search

UNIGRAMS = ["U00:%x[-1,0]", "U01:%x[0,0]", "U02:%x[1,0]", "U03:%x[0,0]/%x[1,0]"]


def _random_corpus(path, rng, labels, sentences=150):
    """Words from a skewed vocabulary; a word's label is its own most of the time, so
    that the model learns and its scores stop tying, and random otherwise."""
    own = rng.integers(0, labels, size=400)
    blocks = []
    for _ in range(sentences):
        words = np.minimum(rng.zipf(1.3, size=rng.integers(1, 25)), 400) - 1
        tags = [own[w] if rng.random() < 0.7 else rng.integers(0, labels) for w in words]
        blocks.append("\n".join(f"w{w} L{t}" for w, t in zip(words, tags)))
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bounded")
    rng = np.random.default_rng(7)
    chunking = sample_head("conll2000_train.txt", 150, tmp / "chunking.txt")
    return {
        # CoNLL-2000's config: 1st-order attributes at every token (the pair table filled)
        "conll2000": (chunking, {}),
        # CRF++'s chunking template: label transitions only (the pair table left out)
        "transitions": (chunking, {"templates": UNIGRAMS + ["B"]}),
        # many labels, with and without 1st-order attributes
        "labels40": (_random_corpus(tmp / "r40.txt", rng, 40), {"templates": UNIGRAMS + ["B"]}),
        "labels40_pairs": (_random_corpus(tmp / "r40p.txt", rng, 40), {"templates": UNIGRAMS + ["B01:%x[0,0]", "B"]}),
        "labels7": (_random_corpus(tmp / "r7.txt", rng, 7), {"templates": UNIGRAMS + ["B"]}),
    }


def _train(path, learner, bounded_from, options):
    settings = params.Settings.of(params.resolve(params.find_config("conll2000"),
                                                 {"learner": learner, "epochs": 3, **options}))
    run = prepare(settings, str(path), None, None, None, None, lambda line: None)
    model = make_learner(run, None, None, lambda line: None)
    model.kernel.bounded_from = bounded_from
    run_passes(run, model, np.random.default_rng(run.settings.seed), [], echo=lambda line: None,
               show_progress=False, score_dev=False)
    return model


@pytest.mark.parametrize("learner", ["sp", "pa", "arow"])
@pytest.mark.parametrize("corpus", ["conll2000", "transitions", "labels40", "labels40_pairs", "labels7"])
def test_bounded_passes_train_the_model_of_the_full_search(corpora, corpus, learner):
    path, options = corpora[corpus]
    reference = _train(path, learner, FULL, options)
    arrays = {k: v for k, v in vars(reference).items() if isinstance(v, np.ndarray)}
    assert {"W0", "trans"} <= set(arrays)
    assert np.abs(reference.trans).sum() > 0  # the transitions moved: the bounds had to follow them
    for bounded_from in (1, 20):  # bounded at any number of labels; and from the default's 20
        bounded = _train(path, learner, bounded_from, options)
        for name, value in arrays.items():
            np.testing.assert_array_equal(getattr(bounded, name), value, err_msg=f"{name}, from {bounded_from}")
