"""Template expansion against a direct, string-based reading of CRF++'s rules."""
import re

import numpy as np
import pytest

from conftest import sentence
from seqbil.errors import ConfigError
from seqbil.features.functions import FUNCTIONS
from seqbil.features.index import FeatureIndex
from seqbil.features.patterns import read_template_file
from seqbil.features.templates import Field, TemplateSet, parse_template


def crfpp_string(text, columns, i):
    """The attribute string CRF++ builds for template text at token i; a function
    chain after a macro is applied to the cell (never to a boundary symbol)."""
    n = len(columns[0])

    def field(r, c, chain):
        if r.startswith("@"):  # counted from the sentence's ends, as Wapiti counts; boundaries up to 5 away
            at = int(r[1:])
            j = at - 1 if at >= 0 else n + at
            if j < 0 or j >= n:
                return f"_B-{min(-j, 5)}" if j < 0 else f"_B+{min(j - n + 1, 5)}"
        else:
            j = i + int(r)
            if j < 0 or j >= n:
                return f"_B{j}" if j < 0 else f"_B+{j - n + 1}"
        value = columns[c][j]
        for part in chain.split("|")[1:]:
            name, _, arg = part.partition(":")
            fn = FUNCTIONS[name]
            value = fn.apply(value, arg if fn.pattern else int(arg) if arg else None)
        return value
    return re.sub(r"%x\[(@?-?\d+),(\d+)\]((?:\|[a-z]+(?::[^|/%\s]+)?)*)", lambda m: field(m[1], int(m[2]), m[3]),
                  text)


def test_reference_matches_hand_worked_crfpp_examples():
    cols = [["He", "reckons", "the"], ["PRP", "VBZ", "DT"]]
    assert crfpp_string("U01:%x[-1,0]/%x[0,0]", cols, 0) == "U01:_B-1/He"
    assert crfpp_string("U01:%x[-1,0]/%x[0,0]", cols, 2) == "U01:reckons/the"
    assert crfpp_string("U22:%x[0,1]/%x[1,1]/%x[2,1]", cols, 2) == "U22:DT/_B+1/_B+2"
    assert crfpp_string("U00:%x[-2,0]", cols, 0) == "U00:_B-2"
    assert crfpp_string("B", cols, 1) == "B"


def test_parse_marks_order_and_macros():
    u = parse_template("U05:%x[-1,0]/%x[0,0]")
    b = parse_template("B")
    assert (u.order, u.refs, u.fmt) == (0, ((-1, Field(0)), (0, Field(0))), "U05:{}/{}")
    f = parse_template("U06:%x[0,1]|lower|suffix:3/%x[-1,0]")
    assert f.refs == ((0, Field(1, (("lower", None), ("suffix", 3)))), (-1, Field(0))) and f.fmt == "U06:{}/{}"
    assert (b.order, b.refs) == (1, ())
    assert parse_template("B{x}:%x[0,1]").fmt == "B{{x}}:{}"


@pytest.mark.parametrize("text, message", [
    ("X01:%x[0,0]", "must start with U"), ("U01:%t[0,0,\"a\"]", "unknown macro %t at character 5"),
    ("U00:%x[0,0", r"%x at character 5 is not written %x\[ROW,COL\] \(a '\]' is missing\)"),
    ("U00:%x[0,0]/%x[1,a]", r"%x at character 13 is not written %x\[ROW,COL\]: '%x\[1,a\]'"),
    ("U00:%dict(words)", r"%dict at character 5 is not written %dict\[NAME\]"),
    ("", "must start"),
    ("U:%x[0,-1]", "negative column"), ("U:%x[0,0]|lowr", "unknown function 'lowr'"),
    ("U:%x[0,0]|suffix", "positive length"), ("U:%x[0,0]|suffix:0", "positive length"),
    ("U:%x[0,0]|lower:2", "takes no argument")])
def test_bad_templates_are_rejected(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_template(text)


def test_template_file_and_column_check(tmp_path):
    path = tmp_path / "template"
    path.write_text("# comment\nU00:%x[0,0]\n\nU01:%x[0,3]\nB\n")
    templates = TemplateSet(read_template_file(str(path)))
    assert [t.text for t in templates.templates] == ["U00:%x[0,0]", "U01:%x[0,3]", "B"]
    with pytest.raises(ConfigError, match="column 3"):
        templates.check_columns(3, 2, "data", "t")
    with pytest.raises(ConfigError, match="label column"):
        TemplateSet([parse_template("U:%x[0,2]")]).check_columns(3, 2, "data", "t")


TEMPLATES = ["U00:%x[-2,0]", "U01:%x[0,0]/%x[1,1]", "U02:%x[2,1]", "U03", "B10:%x[-1,0]%x[0,0]",
             "B11:%x[0,1]", "U04:%x[0,0]|upper/%x[-1,1]|lower", "U05:%x[1,0]|shape|len", "U06:%x[0,0]|isdigit",
             "U07:%x[0,0]|suffix:2/%x[0,0]|prefix:1", "B12:%x[-1,0]|chartype", "B"]


def random_sentences(rng, n, vocab=("a", "b", "Ab", "1", "12", "x1", "年", "２")):
    out = []
    for _ in range(n):
        length = int(rng.integers(1, 7))
        out.append(sentence(rng.choice(list(vocab), length), rng.choice(list("XYZ"), length),
                            labels=["O"] * length))
    return out


def attribute_table(index_ptrs, sentences, templates, order):
    """(template, reference string, id or None) for every token and template."""
    ptr, ids = index_ptrs
    rows, p = [], 0
    for s in sentences:
        for i in range(len(s)):
            found = list(ids[ptr[p]:ptr[p + 1]])
            for t, tmpl in enumerate(templates.by_order[order]):
                rows.append((t, crfpp_string(tmpl.text, s.columns, i), found[t] if t < len(found) else None))
            p += 1
    return rows


# rows counted from the sentence's ends, and the functions of Wapiti's commands
WAPITI_TEMPLATES = ["U00:%x[@1,0]", "U01:%x[@-1,1]/%x[0,0]", "U02:%x[@7,0]|asciilower", "U03:%x[@0,1]",
                    "U04:%x[0,0]|wtest:^\\u", "U05:%x[-1,0]|wmatch:.?$", "B06:%x[@-2,0]|wmatch:\\d", "B"]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("which", ["crfpp", "wapiti"])
def test_ids_are_a_bijection_with_crfpp_strings(seed, which):
    rng = np.random.default_rng(seed)
    templates = TemplateSet(parse_template(t) for t in (TEMPLATES if which == "crfpp" else WAPITI_TEMPLATES))
    train = random_sentences(rng, 30)
    index, parts = FeatureIndex.build(train, templates)
    for order in (0, 1):
        rows = attribute_table(parts[2 * order:2 * order + 2], train, templates, order)
        by_string = {}
        for t, text, i in rows:
            assert i is not None  # every training attribute is in the dictionary
            assert by_string.setdefault((t, text), i) == i
        assert len(set(by_string.values())) == len(by_string) == index.n_attributes(order)
    # unseen data: an attribute is found exactly when its string occurred in training
    test = random_sentences(rng, 20, vocab=("a", "b", "Ab", "1", "12", "x1", "年", "２", "c", "7", "Cd"))
    parts_test = index.encode(test)
    for order in (0, 1):
        known = {(t, s): i for t, s, i in attribute_table(parts[2 * order:2 * order + 2], train, templates, order)}
        ptr, ids = parts_test[2 * order:2 * order + 2]
        p = 0
        for s in test:
            for i in range(len(s)):
                expected = [known[(t, crfpp_string(tm.text, s.columns, i))]
                            for t, tm in enumerate(templates.by_order[order])
                            if (t, crfpp_string(tm.text, s.columns, i)) in known]
                assert list(ids[ptr[p]:ptr[p + 1]]) == expected
                p += 1


def test_min_count_drops_rare_attributes():
    templates = TemplateSet([parse_template("U00:%x[0,0]"), parse_template("B01:%x[0,1]")])
    train = [sentence(list("aab"), list("XXY"), labels=["O"] * 3)]
    index, (u_ptr, u_ids, b_ptr, b_ids) = FeatureIndex.build(train, templates, min_count=2)
    assert index.n_attributes(0) == 1 and list(np.diff(u_ptr)) == [1, 1, 0]
    assert index.n_attributes(1) == 1 and list(np.diff(b_ptr)) == [1, 1, 0]


def test_bare_b_is_the_transition_feature():
    templates = TemplateSet([parse_template("U00:%x[0,0]"), parse_template("B")])
    assert templates.transition and templates.by_order[1] == []
    assert not TemplateSet([parse_template("B01:%x[0,0]")]).transition


def test_hashed_keys_for_templates_beyond_the_radix():
    # six macros over a column with many values overflow 62 bits: keys are hashed
    words = [f"w{i}" for i in range(2000)]
    templates = TemplateSet([parse_template("U:" + "/".join(f"%x[{r},0]" for r in range(-3, 3)))])
    train = [sentence(words[:1000], ["X"] * 1000, labels=["O"] * 1000),
             sentence(words[1000:], ["X"] * 1000, labels=["O"] * 1000)]
    index, parts = FeatureIndex.build(train, templates)
    assert index.specs[0][3].tolist() == [0] * 6
    assert index.n_attributes(0) == 2000  # all distinct, no collision
    assert list(index.encode(train[:1])[1]) == list(parts[1][:1000])


def test_nfkc_normalization_merges_full_width_forms():
    templates = TemplateSet([parse_template("U00:%x[0,0]")])
    train = [sentence(list("２０００年"), labels=["B", "I", "I", "I", "E"])]
    index, _ = FeatureIndex.build(train, templates, normalize="nfkc")
    plain, _ = FeatureIndex.build(train, templates)
    test = [sentence(list("2000年"), labels=None)]
    assert list(index.encode(test)[1]) == list(index.encode(train)[1])  # ASCII digits read as full-width ones
    assert list(plain.encode(test)[1]) == list(plain.encode(train)[1])[-1:]  # only 年 is known


def expanded_by_hand(text, start, n_fields, label):
    """The copies of a ranged template read directly off its text: for each column c
    from start to the last, but the label, every %x[r,start:] made %x[r,c] and .c put
    after the template's name."""
    out = []
    for c in range(start, n_fields):
        if c == label:
            continue
        body = text.replace(f",{start}:]", f",{c}]")
        name, _, rest = body.partition(":")
        out.append(f"{name}.{c}:{rest}")
    return out


@pytest.mark.parametrize("n_fields, label", [(2, 1), (3, 2), (5, 4), (5, 2), (4, 0)])
def test_a_column_range_is_one_template_per_column_but_the_label(n_fields, label):
    texts = ["U00:%x[0,0]", "U30:%x[-1,1:]/%x[0,1:]|lower", "U31:%x[0,0:]", "B"]
    got = [t.text for t in TemplateSet(parse_template(t) for t in texts).over_columns(n_fields, label).templates]
    want = ["U00:%x[0,0]", *expanded_by_hand(texts[1], 1, n_fields, label),
            *expanded_by_hand(texts[2], 0, n_fields, label), "B"]
    assert got == want
    assert not TemplateSet(parse_template(t) for t in got).ranged


def test_column_ranges_are_refused_where_no_corpus_says_the_columns(tmp_path):
    with pytest.raises(ConfigError, match="different columns"):
        parse_template("U:%x[0,1:]/%x[0,2:]")
    with pytest.raises(ConfigError, match="only in training"):
        TemplateSet([parse_template("U:%x[0,1:]")]).check_columns(3, 2, "data", "t")


def test_a_range_trains_the_model_its_columns_written_out_train(tmp_path):
    """Training with %x[r,1:] gives the model (the same predictions, the same weights)
    that the templates written out column by column give; on a file with no column
    between the word and the label, the range adds nothing."""
    from seqbil import api
    from seqbil.errors import ModelFileError
    from seqbil.model import Model
    from seqbil.modelfile import read_model, write_model
    rng = np.random.default_rng(3)
    words, tags = ["a", "b", "c", "d"], ["X", "Y", "Z"]
    rows = []
    for _ in range(40):
        n = int(rng.integers(1, 6))
        rows.append([(rng.choice(words), rng.choice(tags), rng.choice(tags), rng.choice(["L", "M"]))
                     for _ in range(n)])
    four, two = tmp_path / "four.txt", tmp_path / "two.txt"
    four.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in rows))
    two.write_text("".join("".join(f"{t[0]} {t[3]}\n" for t in s) + "\n" for s in rows))
    ranged = ["U00:%x[0,0]", "U30:%x[-1,1:]/%x[0,1:]", "B"]
    written = ["U00:%x[0,0]", "U30.1:%x[-1,1]/%x[0,1]", "U30.2:%x[-1,2]/%x[0,2]", "B"]
    options = dict(learner="sp", epochs=3, temperature=1.0)
    for path, plain in ((four, written), (two, ["U00:%x[0,0]", "B"])):
        models = []
        for k, templates in enumerate((ranged, plain)):
            cfg = tmp_path / f"c{k}.toml"
            cfg.write_text('[corpus]\nformat = "conll"\n[features]\ntemplates = [' +
                           ", ".join(f'"{t}"' for t in templates) + ']\n')
            models.append(api.train(str(path), config=str(cfg), model=str(tmp_path / f"m{k}.sbm"), **options))
        assert [t.text for t in models[0].templates.templates] == plain
        inputs = [sentence(*[list(col) for col in zip(*s)][:3 if path == four else 1]) for s in rows]
        assert models[0].predict(inputs) == models[1].predict(inputs)
        assert read_model(tmp_path / "m0.sbm")[1].keys() == read_model(tmp_path / "m1.sbm")[1].keys()
        for name, a in read_model(tmp_path / "m0.sbm")[1].items():
            assert np.array_equal(a, read_model(tmp_path / "m1.sbm")[1][name]), name
    meta, arrays = read_model(tmp_path / "m0.sbm")
    write_model(tmp_path / "bad.sbm", {**meta, "templates": ["U00:%x[0,0]", "U30:%x[0,1:]", "B"]}, dict(arrays))
    with pytest.raises(ModelFileError, match="range of columns"):
        Model.load(tmp_path / "bad.sbm")
