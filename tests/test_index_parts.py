"""The feature index of a corpus made from its parts' vocabularies and key counts
(what the shards of a training on a Dask cluster send): the same index as
FeatureIndex.build on the whole corpus, and the same encoding of every part."""
import numpy as np
import pytest

from conftest import sentence
from seqbil.features.dictionaries import Lexicon
from seqbil.features.index import FeatureIndex, field_vocabularies, merge_vocabularies, normalizer
from seqbil.features.templates import TemplateSet, parse_template
from seqbil.formats.sentence import Corpus

TEMPLATES = ["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,0]/%x[1,1]", "U02:%x[2,1]", "U03:%x[0,0]|suffix:2/%x[1,0]|upper",
             "U04:%x[-1,0]|prefix:1|upper", "U05:%x[0,0]%dict[lex]", "B10:%x[-1,1]/%x[0,1]", "B11:%x[0,0]|len", "B"]


def random_sentences(rng, n):
    words = ["a", "b", "Cc", "dd", "Ｅ", "ｆg", "h"]
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 7))
        out.append(sentence([str(rng.choice(words)) for _ in range(k)], [str(rng.choice(["X", "Y", "Z"]))
                                                                          for _ in range(k)], labels=["O"] * k))
    return out


def cuts(rng, n, parts):
    inner = sorted(rng.choice(np.arange(1, n), size=parts - 1, replace=False).tolist()) if parts > 1 else []
    return list(zip([0] + inner, inner + [n]))


def index_of_parts(parts, templates, min_count, normalize, lexicons=None, items=False):
    """The index the shards and the driver make: vocabularies merged, then counts."""
    fold = normalizer(normalize)
    vocabularies = [field_vocabularies(p, templates.fields, fold) for p in parts]
    fields = {f: merge_vocabularies([v[i] for v in vocabularies]) for i, f in enumerate(templates.fields)}
    attributes = merge_vocabularies([p.items.names for p in parts]) if items else None
    counter = FeatureIndex(templates, fields, [None, None], normalize, None, lexicons, 6, attributes)
    counted = [counter.key_counts(p) for p in parts]
    counts = [[[c[0][order][t] for c in counted] for t in range(len(counted[0][0][order]))] for order in (0, 1)]
    names = sum(c[1] for c in counted) if items else None
    return FeatureIndex.from_counts(templates, fields, counts, min_count, normalize, lexicons, 6, attributes, names)


def same_index(a, b):
    assert a.field_list == b.field_list
    for f in a.field_list:
        assert a.fields[f].strings == b.fields[f].strings
    for order in (0, 1):
        assert np.array_equal(a.tables[order][0], b.tables[order][0])
        assert np.array_equal(a.tables[order][1], b.tables[order][1])
    if a.attributes is not None or b.attributes is not None:
        assert a.attributes.strings == b.attributes.strings


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("min_count", [1, 2, 3])
def test_the_index_of_the_parts_is_the_index_of_the_whole(seed, min_count):
    rng = np.random.default_rng(seed)
    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    lexicons = {"lex": Lexicon([("a", "b"), ("dd",), ("Cc", "a", "h")])}
    sentences = random_sentences(rng, 40)
    normalize = ["none", "nfkc"][seed % 2]
    whole, encoded = FeatureIndex.build(sentences, templates, min_count, normalize, lexicons=lexicons)
    corpus = Corpus.of(sentences)
    bounds = cuts(rng, len(sentences), int(rng.integers(1, 5)))
    parts = [corpus.part(lo, hi) for lo, hi in bounds]
    index = index_of_parts(parts, templates, min_count, normalize, lexicons)
    same_index(index, whole)
    # each part encoded by it: its rows of the whole corpus's encoding
    offsets = corpus.offsets()
    for (lo, hi), part in zip(bounds, parts):
        mine = index.encode(part)
        for order in (0, 1):
            ptr, ids = encoded[2 * order], encoded[2 * order + 1]
            a, b = int(offsets[lo]), int(offsets[hi])
            assert np.array_equal(mine[2 * order], ptr[a:b + 1] - ptr[a])
            assert np.array_equal(mine[2 * order + 1], ids[ptr[a]:ptr[b]])


@pytest.mark.parametrize("seed", range(4))
def test_the_attribute_names_of_the_parts(seed):
    """Tokens given as attributes (%attr): names numbered in order of first appearance
    over the parts, counted over all of them."""
    rng = np.random.default_rng(seed)
    vocab = [f"w:{i}" for i in range(8)] + ["pos=1", "pos=2", "bias"]
    seqs = [[[str(vocab[j]) for j in rng.integers(len(vocab), size=3)] for _ in range(int(rng.integers(1, 5)))]
            for _ in range(30)]
    labels = [[["A", "B"][j] for j in rng.integers(2, size=len(s))] for s in seqs]
    templates = TemplateSet(parse_template(t) for t in ["U:%attr", "U:%attr[pos]", "B:%attr[w]", "B"])
    whole, _ = FeatureIndex.build(Corpus.of_items(seqs, labels), templates, min_count=2)
    bounds = cuts(rng, len(seqs), 3)
    parts = [Corpus.of_items(seqs[lo:hi], labels[lo:hi]) for lo, hi in bounds]
    same_index(index_of_parts(parts, templates, 2, "none", items=True), whole)
