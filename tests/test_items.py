"""Tokens given as attributes: feature dicts flattened as python-crfsuite names them,
CRFsuite's attribute files, the %attr templates, and models trained on them against
the same features written as CRF++ templates over columns."""
import math

import numpy as np
import pytest

from seqbil._kernels.items import flatten
from seqbil.errors import ConfigError, InputError
from seqbil.features.dataset import encode
from seqbil.features.templates import TemplateSet, parse_template
from seqbil.formats import make_format, read_corpus
from seqbil.formats.crfsuite import escape, parse_attribute
from seqbil.formats.sentence import Corpus
from seqbil.model import Model
from seqbil.samples import sample_path

from test_cli import run


# --- the reference: python-crfsuite's to_item (_pycrfsuite.pyx), written out ---------

def reference_item(x):
    """[(name, weight)] of one item, as python-crfsuite's to_item builds it."""
    out = []
    if isinstance(x, dict):
        for key, value in x.items():
            key = key.decode() if isinstance(key, bytes) else key
            if isinstance(value, (dict, list, set)):
                out += [(f"{key}:{name}", w) for name, w in reference_item(value)]
            elif isinstance(value, (str, bytes)):
                out.append((f"{key}:{value.decode() if isinstance(value, bytes) else value}", 1.0))
            else:
                out.append((key, float(value)))
    else:
        for key in x:
            if isinstance(key, tuple):
                out.append((key[0], float(key[1])))
            else:
                out.append((key.decode() if isinstance(key, bytes) else key, 1.0))
    return out


def random_item(rng, depth=0):
    keys = ["w", "pos", "suffix", "n", b"bk", "x:y", "é"]
    item = {}
    for _ in range(rng.integers(0, 5)):
        key = keys[rng.integers(len(keys))]
        kind = rng.integers(6 if depth < 2 else 4)
        item[key] = (str(rng.integers(3)) if kind == 0 else float(rng.normal()) if kind == 1 else
                     bool(rng.integers(2)) if kind == 2 else f"v{rng.integers(3)}".encode() if kind == 3 else
                     random_item(rng, depth + 1) if kind == 4 else [f"p{rng.integers(3)}", "len:3"])
    if rng.random() < 0.2:
        return [f"a{rng.integers(4)}", "b"]
    return item


def flat(sequences):
    """[[[(name, weight)]]] of flatten()'s arrays."""
    names, lengths, ptr, ids, vals = flatten(sequences)
    assert ptr[0] == 0 and len(ptr) == lengths.sum() + 1 and ptr[-1] == len(ids)
    w = np.ones(len(ids)) if vals is None else vals
    out, p = [], 0
    for n in lengths:
        out.append([[(names[ids[e]], float(w[e])) for e in range(ptr[q], ptr[q + 1])] for q in range(p, p + n)])
        p += n
    return out, names


def test_flatten_names_and_weights_as_python_crfsuite(rng):
    for _ in range(30):
        seqs = [[random_item(rng) for _ in range(rng.integers(0, 6))] for _ in range(rng.integers(1, 5))]
        got, names = flat(seqs)
        want = [[[(n, float(np.float32(w))) for n, w in reference_item(x)] for x in s] for s in seqs]
        assert got == want
        assert len(set(names)) == len(names)  # one id per distinct name


def test_flatten_the_documented_examples():
    got, _ = flat([[{"w": "the"}, {"g": 0.5, "t": True, "f": False}, {"n": {"b": "x"}}, {"l": ["p", "len:3"]},
                    ["a", ("b", 2.0)], {b"k": b"v"}]])
    assert got == [[[("w:the", 1.0)], [("g", 0.5), ("t", 1.0), ("f", 0.0)], [("n:b:x", 1.0)],
                    [("l:p", 1.0), ("l:len:3", 1.0)], [("a", 1.0), ("b", 2.0)], [("k:v", 1.0)]]]


def test_flatten_agrees_with_python_crfsuite_itself(rng):
    pycrfsuite = pytest.importorskip("pycrfsuite")
    seqs = [[x for x in (random_item(rng) for _ in range(8)) if not isinstance(x, list)] for _ in range(20)]
    got, _ = flat(seqs)
    for s, mine in zip(seqs, got):
        theirs = pycrfsuite.ItemSequence(s).items()
        assert [dict(sorted((n, pytest.approx(w)) for n, w in item)) for item in mine] == \
            [dict(sorted(d.items())) for d in theirs]


@pytest.mark.parametrize("bad, message", [
    ([[{"w": None}]], "sequence 1, item 1: the value of 'w' is NoneType"),
    ([[{"w": "a"}], [{"w": "a"}, {"w": (1, 2)}]], "sequence 2, item 2: the value of 'w' is tuple"),
    ([[["the"]], "abc"], "sequence 2: a sequence is a list of items, not str"),
    ([["ok", "the cat"], ["x", "a string"]], None),
    ([[{"w": "a"}, "word"]], "sequence 1, item 2: an item is a dict or a list of attribute names, not a string"),
    ([[[1]]], "sequence 1, item 1: an attribute name is a string or bytes, not int"),
])
def test_flatten_bad_items_name_the_sequence_and_item(bad, message):
    if message is None:  # lists of names are fine, whatever the names hold
        flatten([[x] if isinstance(x, list) else [[x]] for x in bad])
        return
    with pytest.raises(TypeError, match=message.replace("(", r"\(")):
        flatten(bad)


# --- CRFsuite's attribute files -----------------------------------------------------

def test_attribute_fields_with_escapes():
    assert parse_attribute("w=the") == ("w=the", 1.0)
    assert parse_attribute("w=the:2.5") == ("w=the", 2.5)
    assert parse_attribute("w=the:") == ("w=the", 1.0)
    assert parse_attribute(r"url=http\://x") == ("url=http://x", 1.0)
    assert parse_attribute(r"a\\b:0.5") == ("a\\b", 0.5)
    assert parse_attribute(r"a\\\:b:-1") == ("a\\:b", -1.0)
    assert parse_attribute(r"a\b") == ("a\\b", 1.0)  # a backslash before anything else stays
    for name in ("x:y", "a\\b", "\\:", "plain", "a\\\\:b"):
        assert parse_attribute(escape(name)) == (name, 1.0)
        assert parse_attribute(escape(name) + ":3") == (name, 3.0)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_read_a_hand_written_file(tmp_path):
    path = write(tmp_path / "a.txt", "B-NP\tw=He\tpos=PRP:2\n"
                                     "B-VP\tw=ran\t\tlen\\:3:0.5\r\n"
                                     "\n\n"
                                     "O\tw=.\n")
    sents = read_corpus(make_format("crfsuite"), str(path))
    assert [s.labels for s in sents] == [["B-NP", "B-VP"], ["O"]]
    assert [s.line for s in sents] == [1, 5]
    assert sents[0].items == [["w=He", ("pos=PRP", 2.0)], ["w=ran", ("len:3", 0.5)]]
    corpus = Corpus.of(sents)
    assert corpus.items.names == ["w=He", "pos=PRP", "w=ran", "len:3", "w=."]
    assert list(corpus.items.ptr) == [0, 2, 4, 5] and list(corpus.items.vals) == [1, 2, 1, 0.5, 1]


@pytest.mark.parametrize("text, line, message", [
    ("B-NP\tw=a\nO\tw=b:x\n", 2, "the weight 'x' is not a number"),
    ("B-NP\tw=a:1:2\n", 1, "more than one unescaped ':'"),
    ("@weight:2\nB-NP\tw=a\n", 1, "instance weights"),
    ("B-NP\tw=a\n\nB:X\tw=b\n", 3, "the label 'B:X' has an unescaped ':'"),
])
def test_bad_files_name_the_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path / "bad.txt", text)
    with pytest.raises(InputError, match=message) as info:
        read_corpus(make_format("crfsuite"), str(path))
    assert info.value.line == line and str(path) in str(info.value)


# --- %attr templates ------------------------------------------------------------------

def test_attr_templates_parse_and_refuse():
    ts = TemplateSet([parse_template(t) for t in ["U:%attr", "B:%attr[w, pos]", "B"]])
    assert ts.items and [t.text for t in ts.by_order[0]] == ["U:%attr"] and ts.n_column_templates == [0, 0]
    for bad in ["U:%attr/%x[0,0]", "U:%attr[]", "U:%attr[w,]"]:
        with pytest.raises(ConfigError):
            parse_template(bad)


def attribute_names(index, order):
    """The name each attribute of the %attr templates of an order reads, by id."""
    table, ptr = index.tables[order]
    first = int(ptr[index.templates.n_column_templates[order]])
    return {a: index.attributes.strings[table[a]] for a in range(first, len(table))}


def test_encoding_against_a_reference(rng):
    """Every position's attributes are its items' names that a template reads and that
    were seen min_count times in training (with their weights); unknown names drop."""
    vocab = [f"w:{i}" for i in range(6)] + [f"pos={i}" for i in range(4)] + ["bias", "w"]

    def corpus(n):
        seqs, labels = [], []
        for _ in range(n):
            k = int(rng.integers(1, 6))
            seqs.append([[(vocab[j], float(rng.choice([1.0, 0.5, 2.0]))) for j in rng.integers(len(vocab), size=3)]
                         for _ in range(k)])
            labels.append([["A", "B", "C"][j] for j in rng.integers(3, size=k)])
        return Corpus.of_items(seqs, labels), seqs

    train, seqs = corpus(40)
    ts = TemplateSet([parse_template(t) for t in ["U:%attr", "U:%attr[pos]", "B:%attr[w]", "B"]])
    data, index = encode(train, ts, None, ["A", "B", "C"], min_count=3)
    counts = {}
    for s in seqs:
        for item in s:
            for name, _ in item:
                counts[name] = counts.get(name, 0) + 1
    test, test_seqs = corpus(10)
    test.items.names[0] = "never seen"  # an unknown name
    test_seqs = [[[("never seen" if name == test_seqs[0][0][0][0] else name, w) for name, w in item] for item in s]
                 for s in test_seqs]
    enc = encode(test, ts, index, ["A", "B", "C"])[0]
    for d, ss in ((data, seqs), (enc, test_seqs)):
        u_names, b_names = attribute_names(index, 0), attribute_names(index, 1)
        p = 0
        for s in ss:
            for item in s:
                want_u = sorted([(n, w) for n, w in item if counts.get(n, 0) >= 3] +
                                [(n, w) for n, w in item if counts.get(n, 0) >= 3 and n.startswith("pos=")])
                got_u = sorted((u_names[a], float(d.u_vals[e])) for e, a in
                               enumerate(d.u_ids[d.u_ptr[p]:d.u_ptr[p + 1]], int(d.u_ptr[p])))
                assert got_u == want_u
                want_b = sorted(n for n, _ in item if counts.get(n, 0) >= 3 and (n == "w" or n.startswith("w:")))
                bp = d.b_pointers()
                assert sorted(b_names[a] for a in d.b_ids[bp[p]:bp[p + 1]]) == want_b
                p += 1


# --- training on attribute files -------------------------------------------------------

def to_crfsuite(conll_path, out_path, n=None):
    """A CoNLL file (word POS chunk) as CRFsuite's attribute file with the features
    of the templates U00:%x[0,0] U01:%x[0,1] U02:%x[-1,1]/%x[0,1], boundaries as
    CRF++ names them."""
    blocks = conll_path.read_text().strip().split("\n\n")[:n]
    lines = []
    for block in blocks:
        rows = [line.split() for line in block.splitlines()]
        for i, (word, pos, chunk) in enumerate(rows):
            prev = rows[i - 1][1] if i else "_B-1"
            lines.append("\t".join([chunk, escape(f"U00:{word}"), escape(f"U01:{pos}"), escape(f"U02:{prev}/{pos}")]))
        lines.append("")
    out_path.write_text("\n".join(lines) + "\n")
    (out_path.with_suffix(".conll")).write_text("\n\n".join(blocks) + "\n")
    return out_path


TEMPLATE = "U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]/%x[0,1]\nB\n"


@pytest.mark.parametrize("learner, options", [("sp", ["--epochs", "3"]), ("crf", ["--c2", "1", "--epochs", "15"])])
def test_attribute_file_trains_the_model_the_columns_train(tmp_path, learner, options):
    """The same features as attributes and as CRF++ templates: the same predictions and
    probabilities (the attributes are numbered in another order)."""
    train = to_crfsuite(sample_path("conll2000_train.txt"), tmp_path / "train.crfsuite", 150)
    test = to_crfsuite(sample_path("conll2000_test.txt"), tmp_path / "test.crfsuite", 40)
    write(tmp_path / "t.template", TEMPLATE)
    common = ["--learner", learner, *options, "--temperature", "1", "-q"]
    r = run("train", "--format", "crfsuite", "--train", train, "--model", tmp_path / "a.sbm", *common)
    assert r.exit_code == 0, r.output
    r = run("train", "--config", "conll2000", "--template", tmp_path / "t.template", "--train",
            train.with_suffix(".conll"), "--model", tmp_path / "c.sbm", *common)
    assert r.exit_code == 0, r.output
    a, c = Model.load(tmp_path / "a.sbm"), Model.load(tmp_path / "c.sbm")
    sa = list(make_format("crfsuite").read(str(test), labeled=False))
    sc = list(make_format("conll", 3).read(str(test.with_suffix(".conll")), labeled=False))
    assert a.predict(sa) == c.predict(sc)
    for (ya, pa, ma, za), (yc, pc, mc, zc) in zip(a.predict_marginals(sa), c.predict_marginals(sc)):
        assert ya == yc and math.isclose(pa, pc, rel_tol=1e-4) and np.allclose(ma, mc, atol=1e-5)
    # tag and eval on the command line, as crfsuite tag writes its output
    r = run("tag", "--model", tmp_path / "a.sbm", test)
    assert r.exit_code == 0, r.output
    blocks = [b.split("\n") for b in r.stdout.strip("\n").split("\n\n")]
    assert blocks == a.predict(sa)
    r = run("tag", "--model", tmp_path / "a.sbm", "--marginals", test)
    lines = r.stdout.split("\n")
    first = a.predict_marginals(sa[:1])[0]
    assert lines[0] == f"@probability\t{first[1]:.6f}"
    assert lines[1:1 + len(first[0])] == [f"{y}:{first[2][i, a.labels.index(y)]:.6f}" for i, y in enumerate(first[0])]
    pred = tmp_path / "pred.txt"
    pred.write_text(r.stdout)
    r1 = run("eval", "--model", tmp_path / "a.sbm", "--data", test, "--json")
    r2 = run("eval", "--format", "crfsuite", "--gold", test, "--pred", pred, "--json")
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    assert '"f1"' in r1.stdout and r1.stdout.split('"f1": ')[1][:8] == r2.stdout.split('"f1": ')[1][:8]


def test_names_survive_the_model_file(tmp_path):
    odd = ["a:b", "new\nline", "tab\tin", "back\\slash", "\udcff bad byte", "é"]
    seqs = [[[n] for n in odd], [["a:b"], ["é"]]]
    ts = TemplateSet([parse_template(t) for t in ["U:%attr", "B"]])
    corpus = Corpus.of_items(seqs, [["X"] * 6, ["Y", "X"]])
    data, index = encode(corpus, ts, None, ["X", "Y"])
    assert index.attributes.strings == odd
    from seqbil.features.index import attribute_arrays, read_attributes
    assert read_attributes(attribute_arrays(index)).strings == odd


def test_format_errors_on_the_command_line(tmp_path):
    bad = write(tmp_path / "bad.txt", "B-NP\tw=a\nI-NP\tw=b:zz\n")
    r = run("train", "--format", "crfsuite", "--train", bad, "--model", tmp_path / "m.sbm", "-q")
    assert r.exit_code != 0 and f"{bad}:2" in r.output and "not a number" in r.output
    good = write(tmp_path / "good.txt", "B-NP\tw=a\nI-NP\tw=b\n\nO\tw=c\n")
    r = run("train", "--format", "crfsuite", "--train", good, "--model", tmp_path / "m.sbm", "--template",
            write(tmp_path / "t", "U00:%x[0,0]\nB\n"), "-q")
    assert r.exit_code != 0 and "reads columns" in r.output
    conll = write(tmp_path / "c.txt", "a B-NP\nb I-NP\n")
    r = run("train", "--train", conll, "--model", tmp_path / "m.sbm", "--template", write(tmp_path / "u", "U:%attr\n"),
            "-q")
    assert r.exit_code != 0 and "%attr" in r.output


def test_a_growing_index_keeps_every_attribute_by_name(rng):
    """Continuing a model on new data (FeatureIndex.build with a base): every attribute
    of the base keeps its name under its new id, and new names are added."""
    from seqbil.features.index import FeatureIndex
    ts = TemplateSet([parse_template(t) for t in ["U:%attr", "B:%attr[w]", "B"]])

    def corpus(names):
        seqs = [[[names[j] for j in rng.integers(len(names), size=2)] for _ in range(4)] for _ in range(30)]
        return Corpus.of_items(seqs, [["A"] * 4] * 30)

    old_names = [f"w:{i}" for i in range(8)] + ["x"]
    base, _ = FeatureIndex.build(corpus(old_names), ts, min_count=2)
    grown, _ = FeatureIndex.build(corpus([f"w:{i}" for i in range(4, 14)] + ["y"]), ts, base=base)
    assert grown.attributes.strings[:len(base.attributes)] == base.attributes.strings
    for order in (0, 1):
        before, after = attribute_names(base, order), attribute_names(grown, order)
        for a, name in before.items():
            assert after[int(grown.renumber[order][a])] == name
        assert set(after.values()) > set(before.values())


def test_continue_an_attribute_model_and_convert_it(tmp_path):
    train = to_crfsuite(sample_path("conll2000_train.txt"), tmp_path / "train.crfsuite", 60)
    more = to_crfsuite(sample_path("conll2000_test.txt"), tmp_path / "more.crfsuite", 60)
    r = run("train", "--format", "crfsuite", "--train", train, "--model", tmp_path / "a.sbm", "--epochs", "2", "-q")
    assert r.exit_code == 0, r.output
    r = run("train", "--init-model", tmp_path / "a.sbm", "--train", more, "--model", tmp_path / "b.sbm", "--epochs",
            "2", "-q")
    assert r.exit_code == 0, r.output
    a, b = Model.load(tmp_path / "a.sbm"), Model.load(tmp_path / "b.sbm")
    assert set(a.index.attributes.strings) < set(b.index.attributes.strings)
    r = run("convert", tmp_path / "b.sbm", tmp_path / "c.sbm", "--precision", "float64")
    assert r.exit_code == 0, r.output
    sents = list(make_format("crfsuite").read(str(more), labeled=False))
    assert Model.load(tmp_path / "c.sbm").predict(sents) == b.predict(sents)


def test_tag_in_worker_processes_as_in_one(tmp_path):
    from seqbil.samples import SAMPLES
    train, test = (sample_path(name) for name in SAMPLES["crfsuite"])
    r = run("train", "--format", "crfsuite", "--train", train, "--model", tmp_path / "m.sbm", "--epochs", "2",
            "--temperature", "1", "-q")
    assert r.exit_code == 0, r.output
    one = run("tag", "--model", tmp_path / "m.sbm", "--marginals", test)
    two = run("tag", "--model", tmp_path / "m.sbm", "--marginals", "--jobs", "2", test)
    assert one.exit_code == 0 and one.stdout == two.stdout and one.stdout.count("@probability") == 100


def test_tag_output_of_crfsuite_is_read_back():
    from seqbil.formats.crfsuite import predicted_label
    assert predicted_label("B-NP") == "B-NP"
    assert predicted_label("B-NP:0.973") == "B-NP"                             # -i
    assert predicted_label("B-NP\tB-NP:0.9\tI-NP:0.1") == "B-NP"               # -l
    assert predicted_label("B-NP:0.9\tB-NP:0.9\tI-NP:0.1") == "B-NP"           # -i -l
    assert predicted_label("I-NP\tB-NP") == "B-NP"                             # -r
    assert predicted_label("I-NP\tB-NP:0.9") == "B-NP"                         # -r -i
    assert predicted_label("a:b") == "a:b"                                      # a label with a colon


@pytest.mark.parametrize("text, line, message", [
    ("B-NP\tw=a:nan\n", 1, "not a finite number"),
    ("B-NP\tw=a\n\t\n", 2, "only blanks"),
    ("B-NP\tw=a\n   \tw=b\n", 2, "only blanks"),
])
def test_more_bad_files(tmp_path, text, line, message):
    path = write(tmp_path / "bad.txt", text)
    with pytest.raises(InputError, match=message) as info:
        read_corpus(make_format("crfsuite"), str(path))
    assert info.value.line == line


def test_non_finite_weights_and_the_numbers_of_sequences():
    with pytest.raises(ValueError, match="sequence 1, item 1: the weight of 'x' is nan"):
        flatten([[{"x": float("nan")}]])
    with pytest.raises(ValueError, match="sequence 1, item 2: the weight of 'y' is inf"):
        flatten([[["a"], [("y", float("inf"))]]])
    from seqbil.formats import Sentence
    with pytest.raises(TypeError, match="sequence 4, item 1"):  # a sentence's number, not its place among these
        Corpus.of([Sentence([], ["A"], 2, items=[{"w": "a"}]), Sentence([], ["A"], 4, items=[{"w": None}])])


def test_weights_are_kept_only_when_some_are_not_1():
    assert flatten([[["a", "b"], {"c": True}]])[4] is None
    names, _, _, ids, vals = flatten([[["a", "b"], {"c": 2}], [["a"]]])
    assert vals.dtype == np.float32 and list(vals) == [1, 1, 2, 1]


def test_bracketed_keys_select_crfsuite_names():
    from seqbil.features.templates import attr_selects
    t = parse_template("B:%attr[w[0], pos[-1]|pos[0],x]")
    field = t.refs[0][1]
    assert [attr_selects(field, n) for n in ("w[0]=the", "w[1]=a", "pos[-1]|pos[0]=NN|VB", "x", "x:1", "xy")] == \
        [True, False, True, True, True, False]
    assert attr_selects(parse_template("B:%attr[w]").refs[0][1], "w[-1]=a")


def test_a_model_keeps_only_the_names_it_reads(tmp_path):
    from seqbil.samples import SAMPLES
    train, test = (sample_path(name) for name in SAMPLES["crfsuite"])
    r = run("train", "--format", "crfsuite", "--train", train, "--model", tmp_path / "m.sbm", "--epochs", "2",
            "--temperature", "1", "--min-count", "3", "-q")
    assert r.exit_code == 0, r.output
    model = Model.load(tmp_path / "m.sbm")
    table, ptr = model.index.tables[0]
    assert sorted(model.index.attributes.strings) == sorted({model.index.attributes.strings[k] for k in table})
    everything = Corpus.of(read_corpus(make_format("crfsuite"), str(train))).items.names
    assert len(model.index.attributes) < len(everything) / 2
    # names no table reads, put back between the others, change nothing, and pruning takes them out again
    from seqbil.features.index import Vocabulary
    sents = read_corpus(make_format("crfsuite"), str(test))
    labels = model.predict(sents)
    index, strings = model.index, list(model.index.attributes.strings)
    tables = [(np.array(t), p) for t, p in index.tables]
    grown, where = [], []
    for i, name in enumerate(strings):
        grown += [f"unused {i}", name] if i % 3 == 0 else [name]
        where.append(len(grown) - 1)
    index.attributes = Vocabulary(grown)
    index.tables = [(np.where(np.arange(len(t)) >= p[index.templates.n_column_templates[o]],
                              np.array(where)[np.minimum(t, len(where) - 1)], t), p) for o, (t, p) in enumerate(tables)]
    assert model.predict(sents) == labels
    index.prune_attributes()
    assert index.attributes.strings == strings
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(index.tables, tables))
    assert model.predict(sents) == labels


def test_in_memory_items_hash_the_same_each_time():
    from seqbil.formats import Sentence
    from seqbil.training import file_record

    def sents(v):
        return [Sentence([], ["A", "B"], 1, items=[{"w": "a", "g": v}, ["b", ("c", 2.0)]])]
    assert file_record("<memory>", sents(0.5))["sha256"] == file_record("<memory>", sents(0.5))["sha256"]
    assert file_record("<memory>", sents(0.5))["sha256"] != file_record("<memory>", sents(0.25))["sha256"]


def test_a_false_flag_is_no_first_order_attribute():
    ts = TemplateSet([parse_template(t) for t in ["U:%attr", "B:%attr", "B"]])
    corpus = Corpus.of_items([[{"up": False, "w": "a"}, {"up": True, "w": "b"}]], [["A", "B"]])
    data, index = encode(corpus, ts, None, ["A", "B"])
    names1, names0 = attribute_names(index, 1), attribute_names(index, 0)
    bp = data.b_pointers()
    assert [sorted(names1[a] for a in data.b_ids[bp[p]:bp[p + 1]]) for p in range(2)] == [["w:a"], ["up", "w:b"]]
    assert sorted((names0[a], float(v)) for a, v in zip(data.u_ids[:2], data.u_vals[:2])) == [("up", 0.0), ("w:a", 1.0)]
