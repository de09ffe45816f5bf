"""Wapiti's files: its regular-expression subset against Python's re on random cases,
its pattern files read as seqbil templates, its model files read (and damaged ones
refused), and converted models against `wapiti label` itself, built from its source:
the same labels and the same marginals on random corpora and patterns."""
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import seqbil
from seqbil.errors import ConfigError, ModelFileError
from seqbil.features.functions import apply_chain, wapiti_match
from seqbil.features.patterns import is_pattern_file, read_patterns, translate
from seqbil.foreign import wapiti
from test_cli import ENV

ROOT = Path(__file__).resolve().parent.parent
WAPITI_SRC = ROOT.parent / "shared" / "peers" / "wapiti-src.tar.gz"
BUILDS = all(shutil.which(tool) for tool in ("make", "cc"))

# --- the regular expressions --------------------------------------------------------------------------------------

_CLASS = {"d": rb"0-9", "a": rb"A-Za-z", "w": rb"A-Za-z0-9", "l": rb"a-z", "u": rb"A-Z", "s": rb" \t\n\x0b\x0c\r",
          "p": rb"!-/:-@\[-`{-~"}


def python_regex(regex):
    """Wapiti's regular expression as Python's, matched on bytes: a star takes the
    fewest repetitions first (lazy), an optional character tries itself first
    (greedy), so that the first match found is the one Wapiti's recursion finds."""
    out, i = [], 0
    anchored = regex.startswith(b"^")
    if anchored:
        i = 1
    while i < len(regex):
        if regex[i:i + 1] == b"$" and i + 1 == len(regex):
            out.append(rb"\Z")
            break
        if regex[i:i + 1] == b"\\" and i + 1 < len(regex):
            c = chr(regex[i + 1])
            atom = (b"[^" if c.isupper() else b"[") + _CLASS[c.lower()] + b"]" if c.lower() in _CLASS else \
                re.escape(regex[i + 1:i + 2])
            i += 2
        elif regex[i:i + 1] == b".":
            atom, i = rb"(?s:.)", i + 1
        else:
            atom, i = re.escape(regex[i:i + 1]), i + 1
        if regex[i:i + 1] == b"*":
            atom, i = b"(?:" + atom + b")*?", i + 1
        elif regex[i:i + 1] == b"?":
            atom, i = b"(?:" + atom + b")?", i + 1
        out.append(atom)
    return re.compile(b"".join(out)), anchored


def test_wapiti_regex_matches_as_pythons_on_random_cases(rng):
    atoms = [b".", rb"\d", rb"\D", rb"\u", rb"\U", rb"\l", rb"\a", rb"\w", rb"\p", rb"\s", rb"\S", b"a", b"A", b"1",
             b",", rb"\.", rb"\*"]
    alphabet = b"aAbB1,. -z9"
    for _ in range(3000):
        parts = [atoms[int(rng.integers(len(atoms)))] + [b"", b"*", b"?"][int(rng.integers(3))]
                 for _ in range(int(rng.integers(1, 5)))]
        regex = (b"^" if rng.random() < 0.3 else b"") + b"".join(parts) + (b"$" if rng.random() < 0.3 else b"")
        text = bytes(alphabet[int(k)] for k in rng.integers(len(alphabet), size=int(rng.integers(0, 9))))
        pattern, anchored = python_regex(regex)
        m = pattern.match(text) if anchored else pattern.search(text)
        assert wapiti_match(regex, text) == (None if m is None else m.group(0)), (regex, text)


def test_the_commands_functions():
    assert apply_chain((("wtest", r"^\u"),), "Madrid") == "true"
    assert apply_chain((("wtest", r"^\u"),), "madrid") == "false"
    assert apply_chain((("wmatch", ".?.?$"),), "Madrid") == "id"
    assert apply_chain((("wmatch", r"\d"),), "abc") == ""
    assert apply_chain((("asciilower", None),), "ÉCOLE Madrid") == "École madrid"
    # a match that cuts a character keeps its bytes, escaped: é is two bytes
    assert apply_chain((("wmatch", "^.?"),), "été") == "\\xc3"
    with pytest.raises(ValueError, match="unescaped"):
        wapiti_match("a**", b"aa")


# --- pattern files ------------------------------------------------------------------------------------------------

def test_patterns_become_templates():
    templates, pieces, macros = translate('*:Caps? L=%t[-1,0,"\\u"]')
    assert [t.text for t in templates] == ['U:Caps? L=%x[-1,0]|wtest:\\u', 'B:Caps? L=%x[-1,0]|wtest:\\u']
    assert pieces == ["*:Caps? L=", ""] and macros == [(-1, 0, (("wtest", "\\u"),))]
    templates, pieces, _ = translate("u:w=%X[ 0,0]/%M[1,1,\".?$\"]")
    assert [t.text for t in templates] == ["U:w=%x[0,0]|asciilower/%x[1,1]|wmatch:.?$|asciilower"]
    assert pieces == ["u:w=", "/", ""]
    assert [t.text for t in translate("b")[0]] == ["B"] and [t.text for t in translate("*")[0]] == ["U", "B"]
    lines = list(enumerate(["# a comment", "U:w=%x[0,0] # after", "", "*", "b:p=%x[-1,1]"], 1))
    assert is_pattern_file(lines)
    assert [t.text for t in read_patterns(lines)] == ["U:w=%x[0,0]", "U", "B", "B:p=%x[-1,1]"]
    assert not is_pattern_file(list(enumerate(["U00:%x[0,0]", "B"], 1)))  # CRF++'s


@pytest.mark.parametrize("pattern, problem", [
    ("x:%x[0,0]", "unknown pattern type"), ("u:%y[0,0]", "no command"),
    ('u:%t[0,0,"a b"]', "must be non-empty and hold no"), ("u:%x[0,0]|pos", "reads as a function")])
def test_patterns_seqbil_cannot_read_are_refused(pattern, problem):
    with pytest.raises(ConfigError, match=problem):
        translate(pattern)


def test_training_reads_a_pattern_file(tmp_path):
    patterns = tmp_path / "patterns.txt"
    patterns.write_text('*\nU:w=%X[0,0]\n*:p=%x[-1,1]/%x[0,1]\nu:cap=%t[0,0,"^\\u"]\nu:suf=%m[0,0,".?.?$"]\n',
                        encoding="utf-8")
    model = seqbil.train(template=str(patterns), learner="sp", epochs=3)
    texts = [t.text for t in model.index.templates.templates]
    assert "U:cap=%x[0,0]|wtest:^\\u" in texts and "B" in texts and "B:p=%x[-1,1]/%x[0,1]" in texts
    assert seqbil.evaluate(model, seqbil.samples.sample_path("conll2000_test.txt"))["f1"] > 80


# --- model files --------------------------------------------------------------------------------------------------

def netstrings(items):
    return "".join(f"{len(s.encode())}:{s},\n" for s in items)


def model_text(weights, patterns=("u:w=%x[0,0]", "b"), labels=("A", "B"), observations=("u:w=x", "b"), kind=2):
    return (f"#mdl#{kind}#{len(weights)}\n#rdr#{len(patterns)}/0/0\n" + netstrings(patterns) +
            f"#qrk#{len(labels)}\n" + netstrings(labels) + f"#qrk#{len(observations)}\n" + netstrings(observations) +
            "".join(f"{f}={float(w).hex()}\n" for f, w in weights.items()))


def test_a_model_file_is_read_and_scores_as_it_says(tmp_path):
    # u:w=x: weights 0 (A) and 1 (B); b: 2 + 2 * y' + y
    path = tmp_path / "m.wapiti"
    path.write_text(model_text({0: 1.5, 1: -0.5, 2 + 2 * 0 + 1: 2.0, 2 + 2 * 1 + 1: -3.0}), encoding="utf-8")
    model = wapiti.to_model(wapiti.read(path), path)
    assert model.labels == ["A", "B"] and model.corpus["n_fields"] == 2
    # x y: unary A 1.5 / B -0.5 at x, 0 at y; A->B 2.0, B->B -3.0: the best labelling is A B (1.5 + 2)
    assert model.tag([["x"], ["y"]]) == ["A", "B"]
    p = model.marginals([["x"], ["y"]])
    scores = {("A", "A"): 1.5, ("A", "B"): 3.5, ("B", "A"): -0.5, ("B", "B"): -3.5}
    z = sum(np.exp(s) for s in scores.values())
    assert p[0][0] == pytest.approx((np.exp(1.5) + np.exp(3.5)) / z)


@pytest.mark.parametrize("text, problem", [
    ("#mdl#2#1\n", "truncated"),
    ("#mdl#2#1\n#rdr#x\n", "no reader line"),
    (model_text({0: 1.0})[:-20], "not a Wapiti model file"),
    (model_text({9: 1.0}), "past the model's"),
    (model_text({0: 1.0}, kind=0), "maxent model"),
    (model_text({0: 1.0}, patterns=()), "trained without patterns"),
    (model_text({0: 1.0}, observations=("q:w=x", "b")), "of no kind Wapiti has"),
    (model_text({0: 1.0}, labels=("A", "A")), "duplicate labels"),
    (model_text({0: 1.0}).replace("11:u:w=%x[0,0],", "12:u:w=%x[0,0],"), "does not end where its length says"),
    ("version: 100\n", "does not start with #mdl#"),
])
def test_damaged_model_files_are_refused(tmp_path, text, problem):
    path = tmp_path / "m.wapiti"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFileError, match=problem):
        wapiti.to_model(wapiti.read(path), path)
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", "--from", "wapiti", str(path),
                           str(tmp_path / "out.sbm")], capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and problem in proc.stderr


# --- against Wapiti itself ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wapiti_program():
    if not WAPITI_SRC.is_file():
        pytest.skip(f"Wapiti's source tarball is not at {WAPITI_SRC}")
    if not BUILDS:
        pytest.skip("building Wapiti needs make and cc")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("peer_build", ROOT / "benchmarks" / "peer_build.py")
    peer_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer_build)
    return peer_build.build_wapiti(WAPITI_SRC, peer_build.default_wapiti_dir(WAPITI_SRC))


WORDS = ["The", "dog", "runs", "a", "Cat", "sees", "12", "Paris", "quickly", ",", "éclair", "Über", "_x-1"]
PATTERNS = ['*', 'u:w=%x[0,0]', 'U:lw=%X[-1,0]/%x[1,1]', '*:cap=%t[0,0,"^\\u"]', '*:suf=%m[0,0,".?.?$"]',
            'b:p=%x[-1,1]', 'u:far=%x[-5,0]', '*:dig=%T[2,0,"\\d"]', 'u:pre=%M[0,0,"^.?"]', 'u:end=%x[6,1]',
            'u:first=%x[@1,0]/%x[0,1]', '*:last=%t[@-1,0,"\\p"]', 'u:far2=%X[@7,1]', 'u:before=%x[@0,0]']


def random_corpus(rng, n):
    lines = []
    for _ in range(n):
        for i in range(int(rng.integers(1, 12))):
            w = WORDS[int(rng.integers(len(WORDS)))]
            pos = "N" if w[0].isupper() else "V" if w.endswith("s") else "X"
            label = ("B" if i == 0 or rng.random() < 0.3 else "I") + "-" + pos
            lines.append(f"{w} {pos} {label}")
        lines.append("")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_converted_models_label_as_wapiti_does(wapiti_program, tmp_path, seed):
    rng = np.random.default_rng(seed)
    (tmp_path / "train.txt").write_text(random_corpus(rng, 60), encoding="utf-8")
    (tmp_path / "test.txt").write_text(random_corpus(rng, 40), encoding="utf-8")
    chosen = [p for p in PATTERNS if rng.random() < 0.8] or PATTERNS[:2]
    (tmp_path / "patterns.txt").write_text("\n".join(chosen) + "\n", encoding="utf-8")
    run = {"cwd": tmp_path, "capture_output": True, "text": True, "check": True}
    subprocess.run([str(wapiti_program), "train", "-p", "patterns.txt", "-i", "25", "train.txt", "w.model"], **run)
    subprocess.run([str(wapiti_program), "label", "-m", "w.model", "-p", "-s", "test.txt", "w.out"], **run)
    subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", "--from", "wapiti", "w.model", "w.sbm"],
                   env=ENV, **run)
    out = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", "w.sbm", "--posterior", "--marginals",
                          "test.txt"], env=ENV, **run).stdout
    theirs = [line.split("\t")[-1].rsplit("/", 1) for line in (tmp_path / "w.out").read_text().splitlines()
              if line and not line.startswith("#")]
    ours = [line.split()[-1].rsplit("/", 1) for line in out.splitlines() if line and not line.startswith("#")]
    assert len(ours) == len(theirs)
    assert [label for label, _ in ours] == [label for label, _ in theirs]
    assert np.allclose([float(p) for _, p in ours], [float(p) for _, p in theirs], atol=1e-6)
    # and Viterbi's labels, as `wapiti label` gives them
    subprocess.run([str(wapiti_program), "label", "-m", "w.model", "test.txt", "v.out"], **run)
    viterbi = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", "w.sbm", "test.txt"], env=ENV,
                             **run).stdout
    assert [line.split()[-1] for line in viterbi.splitlines() if line] == \
        [line.split()[-1] for line in (tmp_path / "v.out").read_text().splitlines() if line]
