"""Models of CRF++ and CRFsuite read by seqbil.foreign: labels, sequence probabilities,
marginals and log Z of the converted model against brute-force enumeration of every
labelling under the source tool's own definition of a score (CRF++: template lines
expanded to strings and looked up; CRFsuite: attribute values times state weights plus
transitions), on random models written in each tool's file formats; and against the
tools themselves (crf_learn / crf_test built from CRF++'s source, python-crfsuite)
where they are available."""
import itertools
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from seqbil.cli import main
from seqbil.errors import ModelFileError
from seqbil.foreign import crfpp, load, sniff
from seqbil.formats import Sentence
from seqbil.model import Model

ROOT = Path(__file__).resolve().parent.parent
CRFPP_SRC = ROOT.parent / "shared" / "peers" / "crfpp-src.tar.gz"


# --- CRF++: the reference ---------------------------------------------------------------------------------------------

def expand(template, rows, i):
    """CRF++'s applyRule: the template line with each %x[r,c] replaced by column c of
    row i + r, or _B-k / _B+k outside the sentence."""
    def cell(m):
        j, c = i + int(m.group(1)), int(m.group(2))
        return f"_B-{-j}" if j < 0 else f"_B+{j - len(rows) + 1}" if j >= len(rows) else rows[j][c]
    return re.sub(r"%x\[(-?\d+),(\d+)\]", cell, template)


def crfpp_scores(model, rows, single=False):
    """(node [n, L], edge [n, L, L]) as crf_test computes them: the weights of the U
    features at each token, of the B features at each token after the first
    (edge[i, y', y]: from y' at i-1 to y at i), summed in template order; single:
    in float32, as crf_test sums a binary model's weights (feature_index.cpp: calcCost)."""
    L, n = len(model["labels"]), len(rows)
    node, edge = np.zeros((n, L), np.float32 if single else np.float64), np.zeros((n, L, L))
    for i in range(n):
        for t in model["templates"]:
            fid = model["dic"].get(expand(t, rows, i))
            if fid is None:
                continue
            if t[0] == "U":
                node[i] += model["alpha"][fid:fid + L].astype(node.dtype)
            elif i > 0:
                edge[i] += model["alpha"][fid:fid + L * L].reshape(L, L)
    return node.astype(np.float64), edge


def enumerate_all(node, edge):
    """(best labelling (the first of the best in label order), marginals, log Z) by
    scoring every labelling."""
    n, L = node.shape
    paths = list(itertools.product(range(L), repeat=n))
    scores = np.array([sum(node[i, y[i]] + (edge[i, y[i - 1], y[i]] if i else 0) for i in range(n)) for y in paths])
    logz = np.logaddexp.reduce(scores)
    p = np.exp(scores - logz)
    marg = np.zeros((n, L))
    for y, q in zip(paths, p):
        marg[np.arange(n), y] += q
    return list(paths[int(np.argmax(scores))]), marg, logz


# --- CRF++: random models in its two file formats -----------------------------------------------------------------------

CELLS = [["a", "b", "a/b", "ü", "_B-1", "x", "中"], ["N", "V", "/", "N/V"]]


def random_rows(rng, n, unseen=False):
    pool = [c + (["zz", "新"] if unseen else []) for c in CELLS]
    return [[str(rng.choice(pool[0])), str(rng.choice(pool[1]))] for _ in range(n)]


def random_crfpp(rng, labels=("B-NP", "I-NP", "O"), twice=True):
    """A CRF++ model as crf_learn would make it from a random corpus: templates with
    0 to 3 macros, separators that also occur inside cells (/), none at all, non-ASCII
    text, two lines making the same strings (U7), B lines with macros, a template
    line given twice (twice), and random weights for every string the corpus expands
    to."""
    templates = ["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,0]", "U02:%x[0,1]%x[1,1]", "U03:%x[-2,1]/%x[0,0]/%x[2,1]",
                 "U04:ö%x[1,0]", "U05", "U7:%x[0,1]", "U7:%x[1,1]"] + (["U00:%x[0,0]"] if twice else []) + \
        ["B", "B01:%x[0,1]", "B02:%x[-1,0]/%x[0,0]"]
    corpus = [random_rows(rng, int(rng.integers(1, 6))) for _ in range(25)]
    keys = sorted({expand(t, rows, i) for rows in corpus for i in range(len(rows)) for t in templates
                   if t[0] == "U" or i > 0} | {"B"})
    L, dic, maxid = len(labels), {}, 0
    for k in keys:
        dic[k] = maxid
        maxid += L if k[0] == "U" else L * L
    alpha = rng.normal(0, 1.5, maxid)
    return {"labels": list(labels), "templates": templates, "dic": dic, "alpha": alpha, "xsize": 2}


def write_text(model, path):
    """The text model of crf_learn -t (EncoderFeatureIndex::save)."""
    lines = ["version: 100", "cost-factor: 1", f"maxid: {len(model['alpha'])}", f"xsize: {model['xsize']}", ""]
    lines += model["labels"] + [""] + [t for t in model["templates"] if t[0] == "U"] + \
        [t for t in model["templates"] if t[0] == "B"] + [""]
    lines += [f"{fid} {key}" for key, fid in sorted(model["dic"].items())] + [""]
    lines += [f"{w:.16f}" for w in model["alpha"]]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def double_array(keys, values):
    """A Darts double array (base, check) of byte-string keys, built the plain way: a
    node's children on bytes c at base + c + 1, its key end at base, each node at the
    first base where all of them fit and that no other node has; the root at 0 with
    base 1."""
    size = 1 << 12
    base, check, used = np.zeros(size, np.int64), np.zeros(size, np.int64), set()

    def place(pos, items, depth):
        codes = sorted({0 if len(k) == depth else k[depth] + 1 for k, _ in items})
        b = 1
        while b in used or any(check[b + c] or b + c == 0 for c in codes):
            b += 1
        used.add(b)
        base[pos] = b
        for c in codes:
            check[b + c] = b
        for c in codes:
            if c == 0:
                base[b] = -[v for k, v in items if len(k) == depth][0] - 1
            else:
                place(b + c, [(k, v) for k, v in items if len(k) > depth and k[depth] + 1 == c], depth + 1)

    place(0, list(zip(keys, values)), 0)
    end = int(max(np.flatnonzero(check).max(), 0)) + 257
    return base[:end], check[:end]


def write_binary(model, path, encoding="utf-8"):
    """crf_learn's binary model: header, labels, templates, double array, float32 weights."""
    keys = sorted(k.encode(encoding) for k in model["dic"])
    base, check = double_array(keys, [model["dic"][k.decode(encoding)] for k in keys])
    ys = b"".join(y.encode(encoding) + b"\0" for y in model["labels"])
    ts = b"".join(t.encode(encoding) + b"\0" for t in [t for t in model["templates"] if t[0] == "U"] +
                  [t for t in model["templates"] if t[0] == "B"])
    ts += b"\0" * (-(len(ys) + len(ts)) % 4)
    units = np.zeros(len(base), dtype=[("base", "<i4"), ("check", "<u4")])
    units["base"], units["check"] = base, check
    alpha = model["alpha"].astype("<f4")
    with open(path, "wb") as f:
        f.write(struct.pack("<IidIII", 100, 0, 1.0, len(alpha), model["xsize"], units.nbytes))
        f.write(struct.pack("<I", len(ys)) + ys + struct.pack("<I", len(ts)) + ts)
        f.write(units.tobytes() + alpha.tobytes())


def test_double_array_keys_are_the_keys_put_in(rng):
    words = sorted({bytes(rng.integers(97, 100, int(rng.integers(1, 6))).astype(np.uint8)) for _ in range(60)} |
                   {"中文".encode(), b"a", b"ab"})
    values = list(rng.permutation(len(words)) * 7)
    base, check = double_array(words, values)
    keys, got = crfpp.double_array_keys(base, check)
    assert keys == words and list(got) == values


@pytest.mark.parametrize("form", ["text", "binary"])
def test_crfpp_model_scores_as_crf_test(rng, tmp_path, form):
    """A text model (float64) sums in float64; a binary one, as crf_test, its float32
    weights in float32, to the last bit (so not with a line given twice: seqbil adds
    its weight once, doubled)."""
    model = random_crfpp(rng, twice=form == "text")
    path = tmp_path / f"model.{form}"
    (write_text if form == "text" else write_binary)(model, path)
    assert sniff(path) == "crfpp"
    if form == "binary":  # what crf_test reads: float32 weights
        model = {**model, "alpha": model["alpha"].astype(np.float32).astype(np.float64)}
    converted = load(path, "crfpp")
    assert converted.precision == ("float64" if form == "text" else "float32")
    assert converted.sums32 == (form == "binary")
    converted.save(tmp_path / "m.sbm")
    seqbil_model = Model.load(tmp_path / "m.sbm")
    order = [converted.labels.index(y) for y in model["labels"]]
    for n in (1, 2, 4, 5):
        for _ in range(4):
            rows = random_rows(rng, n, unseen=True)
            node, edge = crfpp_scores(model, rows, single=form == "binary")
            best, marg, logz = enumerate_all(node, edge)
            tokens = [list(r) for r in rows]
            got_marg = seqbil_model.marginals(tokens)[:, order]
            np.testing.assert_allclose(got_marg, marg, atol=1e-9)
            assert abs(seqbil_model.log_partition(tokens) - logz) < 1e-9
            assert seqbil_model.tag(tokens) == [model["labels"][y] for y in best]


def test_crfpp_damaged_files(rng, tmp_path):
    model = random_crfpp(rng)
    write_binary(model, tmp_path / "m.bin")
    data = (tmp_path / "m.bin").read_bytes()
    (tmp_path / "short.bin").write_bytes(data[:-4])
    with pytest.raises(ModelFileError, match="damaged or truncated CRF\\+\\+ model"):
        load(tmp_path / "short.bin", "crfpp")
    (tmp_path / "v2.bin").write_bytes(struct.pack("<I", 200) + data[4:])
    with pytest.raises(ModelFileError, match="not a CRF\\+\\+ model"):
        load(tmp_path / "v2.bin", "crfpp")
    write_text(model, tmp_path / "m.txt")
    lines = (tmp_path / "m.txt").read_text(encoding="utf-8").splitlines()
    (tmp_path / "cut.txt").write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")
    with pytest.raises(ModelFileError, match="weights where maxid says"):
        load(tmp_path / "cut.txt", "crfpp")
    latin = {**model, "dic": {k.replace("中", "ÿ"): v for k, v in model["dic"].items()}}
    write_binary(latin, tmp_path / "latin.bin", "latin-1")
    with pytest.raises(ModelFileError, match="is not utf-8: give the model's encoding"):
        load(tmp_path / "latin.bin", "crfpp")
    # a seqbil command given a CRF++ model says how to convert it
    result = CliRunner().invoke(main, ["tag", "-m", str(tmp_path / "m.bin"), str(tmp_path / "m.txt")])
    assert result.exit_code == 2 and "seqbil convert --from crfpp" in result.output


def test_crfpp_encoding_is_kept(rng, tmp_path):
    """A CRF++ model of EUC-JP text: the strings are read with --encoding and the
    converted model reads its input in that encoding."""
    model = random_crfpp(rng)
    model["dic"] = {k.replace("ü", "日本"): v for k, v in model["dic"].items()}
    model["templates"] = [t.replace("ö", "語") for t in model["templates"]]
    path = tmp_path / "m.txt"
    write_text(model, path)
    path.write_bytes(path.read_text(encoding="utf-8").encode("euc-jp"))
    out = tmp_path / "m.sbm"
    result = CliRunner().invoke(main, ["convert", "--from", "crfpp", "--encoding", "euc-jp", str(path), str(out)])
    assert result.exit_code == 0, result.output
    converted = Model.load(out)
    assert converted.corpus["encoding"] == "euc-jp"
    assert converted.training["converted_from"]["encoding"] == "euc-jp"
    rows = [["日本", "N"], ["a", "V"], ["日本", "N/V"]]
    node, edge = crfpp_scores({**model, "templates": model["templates"]}, rows)
    best, marg, _ = enumerate_all(node, edge)
    (tmp_path / "in.txt").write_bytes("\n".join(" ".join(r) for r in rows).encode("euc-jp") + b"\n")
    result = CliRunner().invoke(main, ["tag", "-m", str(out), str(tmp_path / "in.txt")])
    assert result.exit_code == 0, result.output
    assert [line.split()[-1] for line in result.output.splitlines() if line] == [model["labels"][y] for y in best]


# --- CRF++ itself ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def crfpp_bin():
    if not CRFPP_SRC.exists():
        pytest.skip(f"CRF++'s source tarball {CRFPP_SRC} is not there")
    if not all(shutil.which(tool) for tool in ("make", "g++")):
        pytest.skip("building CRF++ needs make and g++")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from crfpp_examples import build_crfpp, default_crfpp_dir
    return build_crfpp(CRFPP_SRC, default_crfpp_dir(CRFPP_SRC))


def read_v2(path, n_labels):
    """crf_test -v2 output: per sentence (probability, labels, marginals [n, L])."""
    out, cur = [], None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            cur = (float(line[2:]), [], [])
            out.append(cur)
        elif line.strip():
            fields = line.split("\t")
            cur[1].append(fields[-n_labels - 1].rsplit("/", 1)[0])
            cur[2].append([float(f.rsplit("/", 1)[1]) for f in fields[-n_labels:]])
    return out


def read_nbest(text):
    """[(rank, probability, labels)] of n-best output (# RANK PROB, then the tokens,
    each ending in its label, or LABEL/PROB)."""
    out = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        if lines:
            _, rank, prob = lines[0].split()
            out.append((int(rank), float(prob), tuple(line.split()[-1].rsplit("/", 1)[0] for line in lines[1:])))
    return out


def test_crf_learn_models_convert_to_the_same_labels_and_probabilities(crfpp_bin, rng, tmp_path):
    """crf_learn on a small corpus of three columns (non-ASCII cells, / inside cells),
    a template with B lines with macros; crf_test -v2 on held-out sentences with
    unseen words against seqbil tag --all-marginals on the converted binary and text
    models."""
    def corpus(n, unseen):
        lines = []
        for _ in range(n):
            for _ in range(int(rng.integers(2, 8))):
                w = str(rng.choice(["le", "chat", "dört", "a/b", "中", "x"] + (["nouveau", "ünseen"] if unseen else [])))
                lines.append(f"{w} {rng.choice(['D', 'N', 'V/X'])} {rng.choice(['B-NP', 'I-NP', 'O'])}")
            lines.append("")
        return "\n".join(lines) + "\n"

    (tmp_path / "train.txt").write_text(corpus(60, False), encoding="utf-8")
    (tmp_path / "test.txt").write_text(corpus(20, True), encoding="utf-8")
    (tmp_path / "template").write_text("U00:%x[0,0]\nU01:%x[-1,0]/%x[0,0]\nU02:%x[0,1]/%x[1,1]\nU03:%x[0,0]%x[1,1]\n"
                                       "B\nB01:%x[0,1]\n", encoding="utf-8")
    subprocess.run([str(crfpp_bin / "crf_learn"), "-t", "-c", "2", "template", "train.txt", "model"], cwd=tmp_path,
                   check=True, capture_output=True)
    with open(tmp_path / "crf.v2", "w") as out:
        subprocess.run([str(crfpp_bin / "crf_test"), "-v2", "-m", "model", "test.txt"], cwd=tmp_path, check=True,
                       stdout=out)
    runner = CliRunner()
    for name in ("model", "model.txt"):
        sbm = tmp_path / f"{name}.sbm"
        result = runner.invoke(main, ["convert", "--from", "crfpp", str(tmp_path / name), str(sbm)])
        assert result.exit_code == 0, result.output
        model = Model.load(sbm)
        ref = read_v2(tmp_path / "crf.v2", len(model.labels))
        sentences = list(model.format.read(str(tmp_path / "test.txt"), labeled=False))
        got = model.predict_marginals(sentences)
        assert len(got) == len(ref)
        for (labels, prob, marg, _), (ref_prob, ref_labels, ref_marg) in zip(got, ref):
            assert labels == ref_labels
            assert abs(prob - ref_prob) <= 1e-6  # crf_test prints six decimals
            np.testing.assert_allclose(marg, np.array(ref_marg), atol=1e-6)
        # the n-best lists of crf_test -n 3: the same labellings, in the same order, with their probabilities
        nbest = subprocess.run([str(crfpp_bin / "crf_test"), "-n", "3", "-m", "model", "test.txt"], cwd=tmp_path,
                               check=True, capture_output=True, text=True).stdout
        result = runner.invoke(main, ["tag", "--nbest", "3", "--marginals", "-m", str(sbm), str(tmp_path / "test.txt")])
        assert result.exit_code == 0, result.output
        got, want = read_nbest(result.output), read_nbest(nbest)
        assert [(r, y) for r, _, y in got] == [(r, y) for r, _, y in want]
        np.testing.assert_allclose([p for _, p, _ in got], [p for _, p, _ in want], atol=1e-6, rtol=1e-5)


# --- CRFsuite -------------------------------------------------------------------------------------------------------

def write_crfsuite(path, labels, attributes, features):
    """A CRFsuite model file (crf1d_model.c): header, FEAT chunk, label and attribute
    CQDB databases with their backward arrays (hash tables empty: the reader goes by
    id), feature references left empty."""
    def cqdb(strings):
        records, offsets, at = b"", [], 24 + 8 * 256
        for i, s in enumerate(strings):
            offsets.append(at + len(records))
            data = s.encode("utf-8") + b"\0"
            records += struct.pack("<II", i, len(data)) + data
        bwd = at + len(records)
        body = b"\0" * (8 * 256) + records + struct.pack(f"<{len(strings)}I", *offsets)
        return struct.pack("<4sIIIII", b"CQDB", 24 + len(body), 0, 0x62445371, len(strings), bwd) + body

    feat = b"".join(struct.pack("<IIId", *f) for f in features)
    feat = struct.pack("<4sII", b"FEAT", 12 + len(feat), len(features)) + feat
    lab, att = cqdb(labels), cqdb(attributes)
    off_feat = 48
    off_lab = off_feat + len(feat)
    off_att = off_lab + len(lab)
    refs = struct.pack("<4sII", b"LFRF", 12, 0) + struct.pack("<4sII", b"AFRF", 12, 0)
    size = off_att + len(att) + len(refs)
    header = struct.pack("<4sI4s9I", b"lCRF", size, b"FOMC", 100, 0, len(labels), len(attributes), off_feat, off_lab,
                         off_att, off_att + len(att), off_att + len(att) + 12)
    Path(path).write_bytes(header + feat + lab + att + refs)


def test_crfsuite_model_scores_as_crfsuite(rng, tmp_path):
    labels = ["B-NP", "I-NP", "O", "ü"]
    attributes = ["w:le", "w:chat", "suffix:é", "len", "w:a:b", "中"]
    features = [(0, a, y, float(rng.normal())) for a in range(len(attributes)) for y in range(len(labels))
                if rng.random() < 0.7]
    features += [(1, y0, y1, float(rng.normal())) for y0 in range(len(labels)) for y1 in range(len(labels))
                 if rng.random() < 0.8]
    path = tmp_path / "model.crfsuite"
    write_crfsuite(path, labels, attributes, features)
    assert sniff(path) == "crfsuite"
    state, trans = np.zeros((len(attributes), len(labels))), np.zeros((len(labels), len(labels)))
    for kind, a, b, w in features:
        (state if kind == 0 else trans)[a, b] += w
    converted = load(path, "crfsuite")
    for n in (1, 3, 5):
        items = [{attributes[a]: float(rng.choice([1.0, 0.5, -2.0])) for a in rng.choice(len(attributes), 3)} |
                 {"unseen": 1.0} for _ in range(n)]
        node = np.array([sum(v * state[attributes.index(k)] for k, v in it.items() if k in attributes)
                         for it in items])
        edge = np.broadcast_to(trans, (n, len(labels), len(labels)))
        best, marg, logz = enumerate_all(node, edge)
        sentence = Sentence([], None, 1, items=[list(it.items()) for it in items])
        got = converted.predict_marginals([sentence])[0]
        assert got[0] == [labels[y] for y in best]
        np.testing.assert_allclose(got[2], marg, atol=1e-9)
        assert abs(got[3] - logz) < 1e-9
    data = path.read_bytes()
    path.write_bytes(data[:-20])
    with pytest.raises(ModelFileError, match="damaged or truncated CRFsuite model"):
        load(path, "crfsuite")
    path.write_bytes(data[:12] + struct.pack("<I", 200) + data[16:])
    with pytest.raises(ModelFileError, match="of version 200; this reader knows version 100"):
        load(path, "crfsuite")
    path.write_bytes(b"not a model at all, but long enough to have a header" * 2)
    with pytest.raises(ModelFileError, match="not a CRFsuite model file"):
        load(path, "crfsuite")
    result = CliRunner().invoke(main, ["convert", "--from", "crfsuite", str(path), str(tmp_path / "x.sbm")])
    assert result.exit_code == 2 and "not a CRFsuite model file" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "x.sbm").exists()


def test_python_crfsuite_models_give_the_same_labels_and_marginals(rng, tmp_path):
    pycrfsuite = pytest.importorskip("pycrfsuite", reason="python-crfsuite is not installed")
    from seqbil.sklearn import CRF

    def sentence(n, unseen):
        words = ["le", "chat", "dört", "a:b", "中文", "x"] + (["nouveau", "ünseen"] if unseen else [])
        ws = [str(rng.choice(words)) for _ in range(n)]
        xs = [{"w": w, "upper": w.isupper(), "len": len(w) / 3, "prev": {"w": ws[i - 1] if i else "BOS"},
               "tags": ["t1", "t2"] if i % 2 else []} for i, w in enumerate(ws)]
        return xs, [str(rng.choice(["B-NP", "I-NP", "O"])) for _ in ws]

    train = [sentence(int(rng.integers(1, 8)), False) for _ in range(80)]
    test = [sentence(int(rng.integers(1, 8)), True) for _ in range(30)]
    trainer = pycrfsuite.Trainer(verbose=False)
    for x, y in train:
        trainer.append(x, y)
    trainer.set_params({"c1": 0.05, "c2": 0.01, "max_iterations": 50})
    path = str(tmp_path / "model.crfsuite")
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    crf = CRF(model_filename=path)  # opens the CRFsuite file itself
    X = [x for x, _ in test]
    pred, marginals = crf.predict(X), crf.predict_marginals(X)
    for x, p, m in zip(X, pred, marginals):
        tagger.set(x)
        assert p == tagger.tag()
        for i in range(len(x)):
            for y in tagger.labels():
                assert abs(m[i][y] - tagger.marginal(y, i)) < 1e-6
    # the command line: converted once, then CRFsuite's attribute files
    out = tmp_path / "model.sbm"
    result = CliRunner().invoke(main, ["convert", "--from", "crfsuite", path, str(out)])
    assert result.exit_code == 0, result.output
    assert Model.load(out).training["converted_from"]["format"] == "crfsuite"
    result = CliRunner().invoke(main, ["inspect", str(out)])
    assert "trained by CRFsuite" in result.output and "converted from" in result.output

    def field(name, value):
        return name.replace("\\", "\\\\").replace(":", "\\:") + ("" if value == 1 else f":{value!r}")
    lines = []
    for x, y in test:  # CRFsuite's attribute file of the test items, named as python-crfsuite names them
        for item, label in zip(pycrfsuite.ItemSequence(x).items(), y):
            lines.append("\t".join([label] + [field(k, v) for k, v in item.items()]))
        lines.append("")
    (tmp_path / "test.crfsuite").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["tag", "--marginals", "-m", str(out), str(tmp_path / "test.crfsuite")])
    assert result.exit_code == 0, result.output
    blocks = [b.splitlines() for b in result.output.strip("\n").split("\n\n")]
    assert len(blocks) == len(X)
    for x, block in zip(X, blocks):
        tagger.set(x)
        want = tagger.tag()
        assert block[0].startswith("@probability\t")
        assert abs(float(block[0].split("\t")[1]) - tagger.probability(want)) <= 5e-7  # six decimals
        assert [line.rsplit(":", 1)[0] for line in block[1:]] == want
