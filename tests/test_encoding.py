"""The one-pass encoding (formats.Corpus, the compiled per-template passes of
cython_ext/features.pyx) against slow references on small random corpora: the field
vocabularies built token by token in Python, and the attribute dictionary built the
direct way, from the P x T matrix of keys with np.unique per template."""
import numpy as np
import pytest

from conftest import sentence
from seqbil._kernels.features import lookup_csr
from seqbil.features import index as index_module
from seqbil.features.dataset import encode, encode_labels
from seqbil.features.dictionaries import training_words
from seqbil.features.functions import apply_chain
from seqbil.features.index import FeatureIndex, field_matrix, normalizer
from seqbil.features.templates import TemplateSet, parse_template
from seqbil.formats.sentence import Corpus

TEMPLATES = ["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,0]/%x[1,1]", "U02:%x[2,1]", "U03:%x[0,0]|suffix:2/%x[1,0]|upper",
             "U04:%x[-1,0]|prefix:1|upper", "U05:bias", "B10:%x[-1,1]/%x[0,1]", "B11:%x[0,0]|len", "B"]


def random_corpus(rng, n, words, tags, labels=("X", "Y", "Z")):
    out = []
    for _ in range(n):
        length = int(rng.integers(0, 7))
        out.append(sentence([str(rng.choice(words)) for _ in range(length)],
                            [str(rng.choice(tags)) for _ in range(length)],
                            labels=[str(rng.choice(labels)) for _ in range(length)]))
    return out


def reference_vocabulary(sentences, field, fold):
    """The values of a field in order of first appearance, token by token."""
    seen = {}
    for s in sentences:
        for v in s.columns[field.column]:
            seen.setdefault(apply_chain(field.chain, fold(v) if fold else v), len(seen))
    return list(seen)


def reference_fields(index, sentences):
    """The field matrix of sentences under the vocabularies of index."""
    return field_matrix(Corpus.of(sentences), index.field_list, index.K,
                        lambda c, values: (index.fields[c].lookup(values, -1), len(index.fields[c])),
                        index.fold, index.layout, index.lexicon_codes)


def reference_build(index, sentences, min_count, base=None):
    """(tables, parts, renumber) of the attribute dictionary of `sentences` under the
    vocabularies of `index`, the direct way: every key of every template at every
    token at once, np.unique per template."""
    fields, positions = reference_fields(index, sentences)
    tables, parts, renumbers = [], [], []
    for order in (0, 1):
        keys = index.keys(fields, positions, order)
        old = base.rekeyed(order, index) if base is not None else None
        table, ptr, ids = [], [0], np.empty_like(keys)
        renumber = np.empty(len(old[0]) if old is not None else 0, dtype=np.int64)
        for t in range(keys.shape[1]):
            uniq, inverse, counts = np.unique(keys[:, t], return_inverse=True, return_counts=True)
            keep = counts >= min_count
            if old is not None:
                old_keys = old[0][old[1][t]:old[1][t + 1]]
                keep |= np.isin(uniq, old_keys)
                merged = np.union1d(uniq[keep], old_keys)
                renumber[old[1][t]:old[1][t + 1]] = ptr[-1] + np.searchsorted(merged, old_keys)
                keep_keys, new_id = merged, np.where(keep, ptr[-1] + np.searchsorted(merged, uniq), -1)
            else:
                keep_keys, new_id = uniq[keep], np.where(keep, ptr[-1] + np.cumsum(keep) - 1, -1)
            ids[:, t] = new_id[inverse.ravel()]
            table.append(keep_keys)
            ptr.append(ptr[-1] + len(keep_keys))
        tables.append((np.concatenate(table) if table else np.zeros(0, np.int64), np.array(ptr, np.int64)))
        present = ids >= 0
        csr_ptr = np.zeros(len(positions) + 1, dtype=np.int64)
        np.cumsum(present.sum(axis=1), out=csr_ptr[1:])
        parts.extend((csr_ptr, ids[present].astype(np.int32)))
        renumbers.append(renumber)
        # encoding with the finished tables: the compiled lookup of the key matrix
        lookup = lookup_csr(keys, *tables[-1])
        assert np.array_equal(lookup[0], csr_ptr) and np.array_equal(lookup[1], parts[-1])
    return tables, parts, renumbers


def assert_same_arrays(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("min_count", [1, 2])
def test_build_and_encode_match_the_direct_way(monkeypatch, seed, min_count):
    rng = np.random.default_rng(seed)
    if seed % 3 == 2:
        monkeypatch.setattr(index_module, "_MAX_RADIX", 64)  # some templates are hashed
    normalize = "nfkc" if seed % 2 else "none"
    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    # many distinct words: the hash tables of the compiled pass grow several times
    words = ["a", "b", "Ａ", "ab", "ｂ"] + [f"w{i}" for i in range(int(rng.integers(1, 3000)))]
    data = random_corpus(rng, 400, words, ["N", "V", "D"])
    index, parts = FeatureIndex.build(data, templates, min_count, normalize)
    for f in templates.fields:
        assert index.fields[f].strings == reference_vocabulary(data, f, normalizer(normalize))
    tables, ref_parts, _ = reference_build(index, data, min_count)
    for order in (0, 1):
        assert_same_arrays(index.tables[order], tables[order])
    assert_same_arrays(parts, ref_parts)
    # other sentences, with values and attributes the index does not know
    other = random_corpus(rng, 50, words[:40] + ["new", "ｎｅｗ"], ["N", "V", "X"])
    assert_same_arrays(index.encode(other), [*reference_lookup(index, other)])
    assert_same_arrays(index.encode(Corpus.of(other)), index.encode(other))


def reference_lookup(index, sentences):
    fields, positions = reference_fields(index, sentences)
    for order in (0, 1):
        yield from lookup_csr(index.keys(fields, positions, order), *index.tables[order])


@pytest.mark.parametrize("seed", range(4))
def test_extension_matches_the_direct_way(seed):
    rng = np.random.default_rng(10 + seed)
    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    old_data = random_corpus(rng, 60, ["a", "b", "c", "d"], ["X", "Y"])
    new_data = random_corpus(rng, 60, ["c", "d", "e", "f", "g"], ["Y", "Z", "W"])
    old, _ = FeatureIndex.build(old_data, templates, min_count=2)
    new, parts = FeatureIndex.build(new_data, templates, min_count=2, base=old)
    tables, ref_parts, renumber = reference_build(new, new_data, 2, base=old)
    for order in (0, 1):
        assert_same_arrays(new.tables[order], tables[order])
        assert np.array_equal(new.renumber[order], renumber[order])
    assert_same_arrays(parts, ref_parts)


def test_templates_of_one_order_only_and_no_tokens():
    templates = TemplateSet(parse_template(t) for t in ["B00:%x[0,0]", "B"])
    data = [sentence(["a", "b"], labels=["X", "Y"]), sentence([], labels=[]), sentence(["b"], labels=["Y"])]
    ds, index = encode(data, templates, None, ["X", "Y"])
    assert ds.u_ptr.dtype == np.int64 and not ds.u_ptr.any() and len(ds.u_ids) == 0 and ds.u_ids.dtype == np.int32
    assert np.array_equal(ds.b_ptr, [0, 1, 2, 3]) and np.array_equal(ds.seq_ptr, [0, 2, 2, 3])
    assert np.array_equal(ds.labels, [0, 1, 1])
    empty = index.encode([sentence([], labels=[])])
    assert [len(a) for a in empty] == [1, 0, 1, 0]
    nothing = index.encode([])
    assert [len(a) for a in nothing] == [1, 0, 1, 0]


def test_corpus_keeps_every_cell():
    rng = np.random.default_rng(7)
    data = random_corpus(rng, 40, ["a", "b", "c", "Ａ"], ["N", "V"])
    data.append(sentence(["a", "z"], ["N", "N"]))  # no labels (and no label column)
    corpus = Corpus.of(data)
    assert corpus.n_tokens == sum(map(len, data)) and len(corpus) == len(data)
    for c in (0, 1):
        values, ids = corpus.column(c)
        assert [values[i] for i in ids] == [v for s in data for v in s.columns[c]]
        assert values == list(dict.fromkeys(v for s in data for v in s.columns[c]))
    values, ids = corpus.column(0, normalizer("nfkc"))
    assert [values[i] for i in ids] == [normalizer("nfkc")(v) for s in data for v in s.columns[0]]
    assert len(values) == len(set(values))
    assert list(corpus.label_sequences()) == [s.labels for s in data]
    assert np.array_equal(encode_labels(corpus, ["Y", "X"]),
                          [{"Y": 0, "X": 1}.get(y, -1) for s in data for y in (s.labels or [None] * len(s))])
    with pytest.raises(ValueError, match="column 2"):
        corpus.column(2)  # the label column


def test_a_part_of_a_corpus_is_the_corpus_of_its_sentences():
    """Corpus.part(lo, hi) equals Corpus.of of those sentences (values in their order
    of first appearance, labels, lengths), and its column and label sequences are the
    sentences' own."""
    rng = np.random.default_rng(11)
    data = random_corpus(rng, 30, ["a", "b", "c", "d", "e"], ["N", "V", "D"])
    whole = Corpus.of(data)
    for lo, hi in [(0, 30), (0, 7), (27, 30), (12, 13)] + \
            [(a, b) for a, b in (sorted(rng.integers(0, 31, size=2)) for _ in range(30)) if a < b]:
        got, want = whole.part(lo, hi), Corpus.of(data[lo:hi])
        assert got.values == want.values and got.label_values == want.label_values
        for a, b in zip(got.ids, want.ids):
            assert np.array_equal(a, b)
        assert np.array_equal(got.label_ids, want.label_ids) and np.array_equal(got.lengths, want.lengths)
        assert list(got.column_sequences(0)) == [s.columns[0] for s in data[lo:hi]]
        assert list(got.label_sequences()) == [s.labels for s in data[lo:hi]]


def reference_words(sentences, fold, min_length):
    """Words per sentence, as the B/I/E/S labels group the characters."""
    out = []
    for s in sentences:
        words = []
        if s.labels is not None:
            for ch, y in zip(s.columns[0], s.labels):
                if y in ("B", "S") or not words:
                    words.append([ch])
                else:
                    words[-1].append(ch)
        out.append([tuple(map(fold, w)) if fold else tuple(w) for w in words if len(w) >= min_length])
    return out


@pytest.mark.parametrize("seed", range(4))
def test_training_words(seed):
    rng = np.random.default_rng(seed)
    sents = []
    for _ in range(30):
        words = ["".join(rng.choice(list("ab１2Ｃ"), int(rng.integers(1, 5)))) for _ in range(int(rng.integers(0, 6)))]
        labels = [("S" if len(w) == 1 else "B" if k == 0 else "E" if k == len(w) - 1 else "I")
                  for w in words for k in range(len(w))]
        unlabeled = rng.random() < 0.2
        sents.append(sentence(list("".join(words)), labels=None if unlabeled else labels))
        if unlabeled:
            sents[-1].columns.append(None)
    fold = normalizer("nfkc") if seed % 2 else None
    min_length = 1 + seed % 3
    folds = 3
    expected = reference_words(sents, fold, min_length)
    words, per_fold = training_words(Corpus.of(sents), fold, min_length, folds)
    assert sorted(words) == sorted({w for ws in expected for w in ws})
    for k in range(folds):
        assert sorted(per_fold[k]) == sorted({w for j, ws in enumerate(expected) if j % folds != k for w in ws})
