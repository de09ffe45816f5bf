"""Extending an attribute dictionary with new data (continuing a model): every old
attribute keeps its meaning under its new id, checked against attribute strings
built the slow way, as CRF++ builds them."""
import numpy as np
import pytest

from conftest import sentence
from seqbil.features import index as index_module
from seqbil.features.index import FeatureIndex
from seqbil.features.functions import apply_chain
from seqbil.features.templates import Field, TemplateSet, parse_template

TEMPLATES = ["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,0]/%x[1,1]", "U02:%x[2,1]", "U03:%x[0,0]|suffix:2/%x[1,0]|upper",
             "U04:%x[-1,0]|prefix:1|upper", "B10:%x[-1,1]/%x[0,1]", "B11:%x[0,0]|len", "B"]


def attribute_strings(s, t, i):
    """CRF++'s attribute string of template t at token i of sentence s."""
    n = len(s)
    values = []
    for row, field in t.refs:
        j = i + row
        values.append(apply_chain(field.chain, s.columns[field.column][j]) if 0 <= j < n
                      else (f"_B{j - n + 1:+d}" if j >= n else f"_B{j:+d}"))
    return t.fmt.format(*values)


def random_corpus(rng, n, words, tags):
    out = []
    for _ in range(n):
        length = int(rng.integers(1, 6))
        out.append(sentence([str(rng.choice(words)) for _ in range(length)],
                            [str(rng.choice(tags)) for _ in range(length)], ["O"] * length))
    return out


def per_position(ids_ptr, ids, p):
    return list(ids[ids_ptr[p]:ids_ptr[p + 1]])


@pytest.mark.parametrize("layout", ["values-first", "boundaries-first"])
@pytest.mark.parametrize("seed", range(4))
def test_old_attributes_keep_their_meaning(monkeypatch, layout, seed):
    monkeypatch.setattr(index_module, "LAYOUT", layout)
    rng = np.random.default_rng(seed)
    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    old_data = random_corpus(rng, 30, ["a", "b", "c", "d"], ["X", "Y"])
    new_data = random_corpus(rng, 30, ["c", "d", "e", "f", "g"], ["Y", "Z", "W"])
    old, old_parts = FeatureIndex.build(old_data, templates, min_count=2)
    new, new_parts = FeatureIndex.build(new_data, templates, min_count=2, base=old)
    assert new.fields[Field(0)].strings[:len(old.fields[Field(0)])] == old.fields[Field(0)].strings
    # old data encoded with the new index = its old ids renumbered, plus attributes
    # that were rare in the old data and are frequent in the new
    again = new.encode(old_data)
    for order in (0, 1):
        ptr, ids = old_parts[2 * order], old_parts[2 * order + 1]
        ptr2, ids2 = again[2 * order], again[2 * order + 1]
        old_ids = set(new.renumber[order].tolist())
        assert len(old_ids) == old.n_attributes(order)
        for p in range(len(ptr) - 1):
            renumbered = sorted(new.renumber[order][per_position(ptr, ids, p)].tolist())
            found = per_position(ptr2, ids2, p)
            assert renumbered == sorted(a for a in found if a in old_ids)
    # the new index's attributes are exactly the old ones plus the frequent new ones, by their strings
    for order in (0, 1):
        expected = {}
        for data, minimum in ((old_data, 2), (new_data, 2)):
            counts = {}
            for s in data:
                for i in range(len(s)):
                    for t in templates.by_order[order]:
                        key = attribute_strings(s, t, i)
                        counts[key] = counts.get(key, 0) + 1
            expected.update({k: 1 for k, c in counts.items() if c >= minimum})
        assert new.n_attributes(order) == len(expected)
        # every string maps to one id, and distinct strings to distinct ids
        seen = {}
        for data in (old_data, new_data):
            enc = new.encode(data)
            ptr, ids = enc[2 * order], enc[2 * order + 1]
            p = 0
            for s in data:
                for i in range(len(s)):
                    found = per_position(ptr, ids, p)
                    strings = [attribute_strings(s, t, i) for t in templates.by_order[order]]
                    present = [x for x in strings if x in expected]
                    assert len(found) == len(present)
                    for a, x in zip(found, present):
                        assert seen.setdefault(x, a) == a
                    p += 1
        assert len(set(seen.values())) == len(seen)


def test_hashed_templates(monkeypatch):
    """A template whose key space overflows is hashed; hashed keys of the
    boundaries-first layout survive extension, those of the old layout cannot."""
    monkeypatch.setattr(index_module, "_MAX_RADIX", 8)
    rng = np.random.default_rng(5)
    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    old_data = random_corpus(rng, 20, ["a", "b", "c"], ["X", "Y"])
    new_data = random_corpus(rng, 20, ["c", "e", "f"], ["Y", "Z"])
    monkeypatch.setattr(index_module, "LAYOUT", "boundaries-first")
    old, old_parts = FeatureIndex.build(old_data, templates)
    assert any(m == 0 for m in old.specs[0][3])  # some template is hashed
    new, _ = FeatureIndex.build(new_data, templates, base=old)
    again = new.encode(old_data)
    for order in (0, 1):
        ids = old_parts[2 * order + 1]
        assert np.array_equal(np.sort(new.renumber[order][ids]), np.sort(again[2 * order + 1]))
    monkeypatch.setattr(index_module, "LAYOUT", "values-first")
    old, _ = FeatureIndex.build(old_data, templates)
    with pytest.raises(ValueError, match="cannot be renumbered"):
        FeatureIndex.build(new_data, templates, base=old)
