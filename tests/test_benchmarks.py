"""benchmarks/crfpp_examples.py --quick: CRF++ built from its source tarball and seqbil on
CRF++'s basenp example; the record's structure, and its F1 figures are conlleval's over
the outputs the runs wrote."""
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seqbil.samples import sample_path
from test_cli import ENV, conll_sentences, reference_chunk_scores, reference_segment_scores

ROOT = Path(__file__).resolve().parent.parent
CRFPP_SRC = ROOT.parent / "shared" / "peers" / "crfpp-src.tar.gz"
BUILD_TOOLS = all(shutil.which(tool) for tool in ("make", "g++"))


def module(name):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_crfpp_flags_from_exec_sh(tmp_path):
    """The crf_learn lines of an exec.sh, commented out or not, and the threads given to them."""
    bench = module("crfpp_examples")
    (tmp_path / "exec.sh").write_text("#!/bin/sh\n../../crf_learn -p2 -f 3 -c 4.0 template train.data model\n"
                                      "../../crf_test -m model test.data\n\n"
                                      "../../crf_learn -a MIRA -f 3 template train.data model\n"
                                      "#../../crf_learn -a CRF-L1 template train.data model\nrm -f model\n")
    lines = bench.exec_lines(tmp_path / "exec.sh")
    assert lines == [(["-p2", "-f", "3", "-c", "4.0"], False), (["-a", "MIRA", "-f", "3"], False),
                     (["-a", "CRF-L1"], True)]
    assert [bench.algorithm(flags) for flags, _ in lines] == ["CRF", "MIRA", "CRF-L1"]
    assert bench.with_threads(lines[0][0], None) == (["-p2", "-f", "3", "-c", "4.0"], False)
    assert bench.with_threads(lines[1][0], None) == (["-a", "MIRA", "-f", "3", "-p", "1"], True)
    assert bench.with_threads(lines[0][0], 3) == (["-f", "3", "-c", "4.0", "-p", "3"], False)
    assert bench.with_threads(["-p", "2", "-c", "1"], 1) == (["-c", "1", "-p", "1"], False)


@pytest.mark.skipif(not CRFPP_SRC.is_file(), reason=f"CRF++'s source tarball is not at {CRFPP_SRC}")
@pytest.mark.skipif(not BUILD_TOOLS, reason="building CRF++ needs make and g++")
def test_crfpp_examples_quick(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "crfpp_examples.py"), "--quick", "--out",
                           str(out), "--work", str(work)], env=ENV, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((out / "crfpp_examples.json").read_text(encoding="utf-8"))
    assert record["benchmark"] == "crfpp_examples" and record["repeat"] == 1
    assert all(record[key] for key in ("command", "commit", "machine", "date", "seqbil"))
    assert record["crfpp"]["version"] and len(record["crfpp"]["sha256"]) == 64
    assert list(record["corpora"]) == ["basenp"]
    corpus = record["corpora"]["basenp"]
    gold_rows = conll_sentences((work / "basenp" / "test.data").read_text(encoding="utf-8"))
    gold = [[row[-1] for row in s] for s in gold_rows]
    assert corpus["test_sentences"] == len(gold) and corpus["test_tokens"] == sum(map(len, gold))
    rows = {r["system"]: r for r in corpus["rows"]}
    # exec.sh of basenp: `crf_learn -c 10.0`, then `crf_learn -a MIRA`; no -p given, so -p 1
    assert [(r["system"], r.get("flags")) for r in corpus["rows"]] == [
        ("CRF++ CRF", "-c 10.0 -p 1"), ("CRF++ MIRA", "-a MIRA -p 1"), ("seqbil crf", None), ("seqbil sp", None),
        ("seqbil (default learner)", None)]
    assert rows["seqbil crf"]["command"] == ("seqbil train --template template --train train.data --learner crf "
                                             "--model seqbil-crf.sbm -q")
    for r in corpus["rows"]:
        if "error" in r:  # a refusal: the command's message, no figures
            assert r["system"].startswith("seqbil") and r["error"] and "f1" not in r
            continue
        for key in ("train_s", "train_peak_rss_mib", "tag_s", "f1"):
            assert len(r[key]["runs"]) == 1 and r[key]["min"] == r[key]["median"] == r[key]["max"]
        assert r["model_bytes"] == (work / "basenp" / r["model"]).stat().st_size > 0
        assert r["iterations"] > 0
        # F1 by conlleval over the output the run wrote: its last column against test.data's labels
        output = conll_sentences((work / "basenp" / f"{Path(r['model']).stem}.out").read_text(encoding="utf-8"))
        assert [[row[:-1] for row in s] for s in output] == gold_rows  # the test file, the prediction appended
        expected = reference_chunk_scores(gold, [[row[-1] for row in s] for s in output])
        for key in ("f1", "precision", "recall"):
            assert r["scores"][key] == pytest.approx(expected[key], abs=1e-9)
        assert r["f1"]["median"] == pytest.approx(expected["f1"], abs=1e-9)
        assert 50 < expected["f1"] <= 100
    assert "error" not in rows["CRF++ CRF"] and "error" not in rows["CRF++ MIRA"]
    for name in ("seqbil crf", "seqbil sp"):
        if "error" not in rows[name]:
            assert rows[name]["settings"]["learner"] == name.split()[1]
    # the table is the one tables.py makes of the record
    tables = module("tables")
    assert (out / "crfpp_examples.md").read_text(encoding="utf-8") == tables.render_record(record) + "\n"


def test_small_corpora_quick(tmp_path):
    """benchmarks/small_corpora.py --quick on the bundled samples: each sample's row says
    what learner = auto chose and the best candidate of the other kind (from the tried
    rows), each model's dev score is seqbil eval's of a model trained so, and the table
    is the record's."""
    out, work = tmp_path / "out", tmp_path / "work"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "small_corpora.py"), "--quick", "--out",
                           str(out), "--work", str(work)], env=ENV, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((out / "small_corpora.json").read_text(encoding="utf-8"))
    assert record["benchmark"] == "small_corpora" and all(record[k] for k in ("command", "commit", "machine", "date"))
    assert [r["corpus"] for r in record["samples"]] == ["conll2000", "pku"]
    import seqbil
    others = 0
    for r in record["samples"]:
        here = work / f"{r['corpus']}-{r['size']}-{r['draw']}"
        model = seqbil.load(str(here / "default.sbm"))
        assert r["selection"] == json.loads(json.dumps(model.training.get("selection", {})))
        dev = seqbil.evaluate(model, str(here / "dev.txt"))
        assert r["dev"] == pytest.approx(dev.get("f1", dev["accuracy"]), abs=1e-9)
        crf = r["chosen"] is not None and r["chosen"]["learner"] == "crf"
        rivals = [(i, t) for i, t in enumerate(r["selection"].get("tried", []))
                  if "value" in t and (t["learner"] == "crf") != crf]
        assert ("other" in r) == bool(rivals) == (here / "other.sbm").exists()
        if rivals:
            others += 1
            top = max(rivals, key=lambda it: (it[1]["value"], -it[1].get("nll", 0.0), -it[0]))[1]
            assert r["other"] == {k: top[k] for k in ("learner", "epochs", "c1", "c2") if k in top}
            kept = seqbil.load(str(here / "other.sbm"))
            assert kept.training["learner"] == top["learner"] != r["chosen"]["learner"]
            dev = seqbil.evaluate(kept, str(here / "dev.txt"))
            assert r["other_dev"] == pytest.approx(dev.get("f1", dev["accuracy"]), abs=1e-9)
    assert others >= 1
    tables = module("tables")
    assert (out / "small_corpora.md").read_text(encoding="utf-8") == tables.render_record(record) + "\n"


@pytest.mark.skipif(not CRFPP_SRC.is_file(), reason=f"CRF++'s source tarball is not at {CRFPP_SRC}")
@pytest.mark.skipif(not BUILD_TOOLS, reason="building CRF++ needs make and g++")
def test_foreign_models_quick(tmp_path):
    """benchmarks/foreign_models.py --quick: a CRF++ model and a python-crfsuite model of
    the bundled samples, converted; the record says they label every test token as the
    tools do, with marginals within crf_test's rounding, and its table is the record's."""
    pytest.importorskip("pycrfsuite", reason="python-crfsuite is not installed")
    out, work = tmp_path / "out", tmp_path / "work"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "foreign_models.py"), "--quick", "--out",
                           str(out), "--work", str(work)], env=ENV, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((out / "foreign.json").read_text(encoding="utf-8"))
    assert record["benchmark"] == "foreign_models" and record["repeat"] == 1
    crfpp, crfsuite = record["crfpp"], record["crfsuite"]
    tokens = sum(map(len, conll_sentences(sample_path("conll2000_test.txt").read_text(encoding="utf-8"))))
    assert crfpp["test"]["tokens"] == tokens == crfsuite["test"]["tokens"]
    assert crfpp["test"]["labels_differ"] == 0 and crfpp["speed"]["labels_differ"] == 0
    assert crfpp["test"]["max_token_marginal_diff"] < 1e-6 and crfpp["model"]["iterations"] == 5
    assert crfsuite["test"]["labels_differ"] == 0 and crfsuite["test"]["max_token_marginal_diff"] < 1e-6
    assert len(crfpp["speed"]["systems"]["crf_test"]["seconds"]["runs"]) == 1
    tables = module("tables")
    assert (out / "foreign.md").read_text(encoding="utf-8") == tables.render_record(record) + "\n"


def test_tag_breakdown_quick(tmp_path):
    """benchmarks/tag_breakdown.py --quick: both paths' stages are timed on the same
    block, whose outputs the script checks are the same bytes; every stage is there."""
    out = tmp_path / "tag_breakdown.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tag_breakdown.py"), "--quick", "--repeat", "1",
                           "--copies", "2", "--out", str(out)], env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(out.read_text(encoding="utf-8"))
    stages = {(r["path"], r["stage"]) for r in record["rows"]}
    for path in ("reference", "compiled"):
        assert {(path, "scoring"), (path, "Viterbi"), (path, "whole block (_Tagger)")} <= stages
    assert all(r["us_per_token"]["median"] >= 0 for r in record["rows"])
    assert record["tokens"] > 0 and (tmp_path / "tag_breakdown.md").exists()


def test_records_keep_paths_portable(tmp_path):
    """A record names the repository's files relative to it, a corpus from its data
    folder on, a copy of the checkout's folders from that folder on, any other path
    by its name: never a folder of the machine that ran it."""
    record = module("record")
    root = record.ROOT
    given = {"command": f"{root}/benchmarks/x.py --data /tmp/b2/data --out {root}/results/x /tmp/snap/experiments/"
                        f"t.sh", "files": ["/work/shared/data/unlabeled/en/brown.txt.gz", "/tmp/tmpab12/emb.template",
                                           "tokens/s", "3/4", "https://example.org/a/b"]}
    out = record.portable(given)
    assert out == {"command": "benchmarks/x.py --data data --out results/x experiments/t.sh",
                   "files": ["data/unlabeled/en/brown.txt.gz", "emb.template", "tokens/s", "3/4",
                             "https://example.org/a/b"]}
    record.write_record(tmp_path / "r.json", given)
    assert json.loads((tmp_path / "r.json").read_text()) == out
    # a checkout in a folder no pattern knows (a CI runner's) is still the repository
    elsewhere = Path("/check/runner/main")
    moved = {k: v.replace(str(root), str(elsewhere)) if k == "command" else v for k, v in given.items()}
    assert record.portable(moved, root=elsewhere) == out
    assert record.portable("/check/runner/mainline/x", root=elsewhere) == "/check/runner/mainline/x"


def test_no_published_page_or_record_names_a_folder_of_a_machine():
    import re
    absolute = re.compile(r"(?<![\w.:/-])/(?:tmp|work|root|home|Users|private|var/folders|mnt|srv|opt)/")
    found = [f"{p.relative_to(ROOT)}:{n}" for base in ("results", "docs") for p in sorted((ROOT / base).rglob("*"))
             if p.is_file() and p.suffix in (".json", ".md", ".csv", ".txt", ".html", ".yml")
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if absolute.search(line)]
    assert not found, found[:20]


# --- benchmarks/suite.py on small fake corpora in the suite's layout (no ../shared needed) ------------

WAPITI_SRC = ROOT.parent / "shared" / "peers" / "wapiti-src.tar.gz"
C_TOOLS = all(shutil.which(tool) for tool in ("make", "cc"))


def fake_suite(folder):
    """pos-more/hi-indian, conll2000 and cws-more/wtb, small and made up, gzipped as the real ones."""
    import gzip
    import random
    rng = random.Random(7)
    lexicon = {"DET": ["the", "a", "this"], "NOUN": ["dog", "cat", "Paris", "idea", "car"],
               "VERB": ["runs", "sees", "likes"], "NUM": ["12", "3"], "PUNCT": ["."]}

    def pos_sentence():
        tags = ["DET", "NOUN", "VERB"] + rng.choice([["DET", "NOUN"], ["NUM", "NOUN"], []]) + ["PUNCT"]
        return [(rng.choice(lexicon[t]), t) for t in tags]

    def write(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)

    def columns(sentences):
        return "".join("".join(" ".join(row) + "\n" for row in s) + "\n" for s in sentences)
    for split, n in (("train", 60), ("dev", 12), ("test", 12)):
        write(folder / "pos-more" / "hi-indian" / f"{split}.txt.gz", columns([pos_sentence() for _ in range(n)]))
    chunk = {"DET": "B-NP", "NUM": "B-NP", "NOUN": "I-NP", "VERB": "B-VP", "PUNCT": "O"}

    def chunk_sentence():
        rows = pos_sentence()
        return [(w, t, chunk[t] if t != "NOUN" or i == 0 or rows[i - 1][1] in ("DET", "NUM") else "B-NP")
                for i, (w, t) in enumerate(rows)]
    write(folder / "conll2000" / "train.txt.gz", columns([chunk_sentence() for _ in range(50)]))
    write(folder / "conll2000" / "test.txt.gz", columns([chunk_sentence() for _ in range(10)]))
    # a held-out named-entity corpus with a POS column, as data_scripts/get_heldout.sh installs it
    for split, n in (("train", 50), ("dev", 10), ("test", 10)):
        write(folder / "heldout" / "es-conll2002" / f"{split}.txt.gz", columns([chunk_sentence() for _ in range(n)]))
    words = ["我们", "喜欢", "中国", "的", "人", "了", "学习", "很", "好"]
    for split, n in (("train", 60), ("dev", 10), ("test", 10)):
        write(folder / "cws-more" / "wtb" / f"{split}.txt.gz",
              "".join(" ".join(rng.choice(words) for _ in range(rng.randint(2, 7))) + "\n" for _ in range(n)))


def run_suite(tmp_path, systems):
    fake_suite(tmp_path / "data")
    out, work = tmp_path / "out", tmp_path / "work"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--quick", "--data",
                           str(tmp_path / "data"), "--heldout", str(tmp_path / "data"),
                           "--corpora", "hi-indian,conll2000,wtb,es-conll2002", "--systems", systems,
                           "--out", str(out), "--work", str(work)], env=ENV, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    assert record["benchmark"] == "suite" and record["repeat"] == 1 and record["split"] == "dev" and record["quick"]
    assert record["complete"]
    assert all(record[key] for key in ("command", "commit", "machine", "date", "seqbil"))
    assert list(record["corpora"]) == ["hi-indian", "conll2000", "wtb", "es-conll2002"]
    # the held-out corpus: trained with the ner config, its POS column in the peers' template
    held = record["corpora"]["es-conll2002"]
    assert held["task"] == "ner" and held["metric"] == "chunk" and held["eval_sentences"] == 10
    assert "%x[0,1]" in held["template"] and "%x[0,1]" not in record["corpora"]["hi-indian"]["template"]
    tables = module("tables")
    assert (out / "suite.md").read_text(encoding="utf-8") == tables.render_record(record) + "\n"
    return record, work


def char_words(rows):
    """The words of character rows [char, ..., B/I/E/S]: one starts at B or S, or after E or S."""
    words = []
    for i, row in enumerate(rows):
        if i == 0 or row[-1] in ("B", "S") or rows[i - 1][-1] in ("E", "S"):
            words.append(row[0])
        else:
            words[-1] += row[0]
    return words


def check_rows(record, work, names):
    """Every row ran once, and its score is the reference scorer's of the output the run wrote."""
    corpora = record["corpora"]
    for corpus, c in corpora.items():
        assert [r["system"] for r in c["rows"]] == names
        gold = conll_sentences((work / corpus / "eval.txt").read_text(encoding="utf-8"))
        for r in c["rows"]:
            assert "error" not in r, r
            assert len(r["runs"]) == 1 and "stats" not in r
            run = r["runs"][0]
            for key in ("train_cpu_s", "train_wall_s", "train_peak_rss_mib", "tag_cpu_s", "tag_peak_rss_mib"):
                assert run[key] > 0, key
            stem = {"seqbil": "seqbil", "CRF++": "crfpp", "CRFsuite": "crfsuite", "Wapiti": "wapiti"}[r["system"]]
            model = work / corpus / (stem + (".sbm" if stem == "seqbil" else ".model"))
            assert run["model_bytes"] == model.stat().st_size > 0
            text = (work / corpus / f"{stem}.out").read_text(encoding="utf-8")
            if corpus == "wtb":
                words = [line.split() for line in (work / corpus / "train.seg.txt").read_text("utf-8").splitlines()]
                gold_words = [char_words(rows) for rows in gold]
                pred_words = [line.split() for line in text.splitlines()] if stem == "seqbil" else \
                    [char_words(rows) for rows in conll_sentences(text)]
                expected = reference_segment_scores(gold_words, pred_words, {w for s in words for w in s})
                for key in ("precision", "recall", "f1", "oov_recall"):
                    assert run["scores"][key] == pytest.approx(expected[key], abs=1e-9)
                assert run["score"] == run["scores"]["f1"]
                continue
            out = conll_sentences(text)
            assert [[row[:-1] for row in s] for s in out] == gold  # the scored file, a label appended
            pred, labels = [[row[-1] for row in s] for s in out], [[row[-1] for row in s] for s in gold]
            if corpus in ("conll2000", "es-conll2002"):
                expected = reference_chunk_scores(labels, pred)["f1"]
            else:
                pairs = [(g, p) for gs, ps in zip(labels, pred) for g, p in zip(gs, ps)]
                expected = 100 * sum(g == p for g, p in pairs) / len(pairs)
            assert run["score"] == pytest.approx(expected, abs=1e-9)
    # CoNLL-2000 has no dev split: the last len // 10 of the 50 training sentences
    assert corpora["conll2000"]["train_sentences"] == 45 and corpora["conll2000"]["eval_sentences"] == 5
    assert corpora["hi-indian"]["eval_sentences"] == 12 and corpora["wtb"]["eval_sentences"] == 10


def test_suite_quick_seqbil_and_crfsuite(tmp_path):
    """benchmarks/suite.py --quick on fake corpora: seqbil's default and python-crfsuite,
    each scored by the reference scorers on the outputs the runs wrote."""
    pytest.importorskip("pycrfsuite", reason="python-crfsuite is not installed")
    record, work = run_suite(tmp_path, "seqbil,crfsuite")
    check_rows(record, work, ["seqbil", "CRFsuite"])
    rows = {r["system"]: r for r in record["corpora"]["hi-indian"]["rows"]}
    assert rows["seqbil"]["command"].startswith("seqbil train --config pos --train train.txt --model seqbil.sbm")
    assert rows["seqbil"]["runs"][0]["learner"]
    held = {r["system"]: r for r in record["corpora"]["es-conll2002"]["rows"]}
    assert held["seqbil"]["command"].startswith("seqbil train --config ner --train train.txt")
    cs = rows["CRFsuite"]["runs"][0]
    assert cs["iterations"] == 3 and cs["c1"] == cs["c2"] == 0.1 and cs["sentences"] == 60
    assert 0 <= cs["feature_cpu_s"] <= cs["train_cpu_s"]
    wtb = {r["system"]: r for r in record["corpora"]["wtb"]["rows"]}
    assert "--config cws --train train.seg.txt" in wtb["seqbil"]["command"]
    assert "--kind chars" in wtb["CRFsuite"]["command"]


@pytest.mark.skipif(not CRFPP_SRC.is_file(), reason=f"CRF++'s source tarball is not at {CRFPP_SRC}")
@pytest.mark.skipif(not WAPITI_SRC.is_file(), reason=f"Wapiti's source tarball is not at {WAPITI_SRC}")
@pytest.mark.skipif(not (BUILD_TOOLS and C_TOOLS), reason="building CRF++ and Wapiti needs make, cc and g++")
def test_suite_quick_crfpp_and_wapiti(tmp_path):
    """benchmarks/suite.py --quick on fake corpora: CRF++ and Wapiti built from their
    tarballs, run with their defaults (3 iterations here) and the same template."""
    record, work = run_suite(tmp_path, "crfpp,wapiti")
    check_rows(record, work, ["CRF++", "Wapiti"])
    assert record["peers"]["crfpp"]["version"] and record["peers"]["wapiti"]["version"].startswith("Wapiti")
    for corpus, c in record["corpora"].items():
        rows = {r["system"]: r for r in c["rows"]}
        assert 1 <= rows["CRF++"]["runs"][0]["iterations"] <= 3 and 1 <= rows["Wapiti"]["runs"][0]["iterations"] <= 3
        template = (work / corpus / "template").read_text(encoding="utf-8")
        assert template == c["template"] and template.rstrip().endswith("B")
    assert "%x[2,1]" in record["corpora"]["conll2000"]["template"]  # CRF++'s chunking template, POS column


def test_suite_names_a_peer_that_is_not_there(tmp_path):
    """A peer whose tarball is missing gives its rows a reason, and the rest still run."""
    fake_suite(tmp_path / "data")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--quick", "--data",
                           str(tmp_path / "data"), "--corpora", "hi-indian", "--systems", "seqbil,wapiti",
                           "--wapiti-src", str(tmp_path / "missing.tar.gz"), "--out", str(out)], env=ENV,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    rows = record["corpora"]["hi-indian"]["rows"]
    assert "error" not in rows[0] and rows[1]["error"].startswith("not run: missing.tar.gz not found")
    assert "(1)" in (out / "suite.md").read_text(encoding="utf-8")


def test_suite_in_parts_is_one_record(tmp_path):
    """--append: a second part adds its rows to the record (a system run again on a
    corpus replaces its row there, the other systems' rows stay), each part keeps its
    own provenance, and the table names every part's rows; a part of another split is
    refused."""
    pytest.importorskip("pycrfsuite", reason="python-crfsuite is not installed")
    fake_suite(tmp_path / "data")
    out = tmp_path / "out"

    def suite(*args):
        return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--quick", "--data",
                               str(tmp_path / "data"), "--out", str(out), *args], env=ENV,
                              capture_output=True, text=True, timeout=600)
    first = suite("--corpora", "hi-indian,wtb", "--systems", "seqbil,crfsuite")
    assert first.returncode == 0, first.stdout + first.stderr
    before = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    second = suite("--corpora", "wtb,conll2000", "--systems", "seqbil", "--append")
    assert second.returncode == 0, second.stdout + second.stderr
    record = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    assert list(record["corpora"]) == ["hi-indian", "wtb", "conll2000"]
    parts = {name: [(r["system"], r["part"]) for r in c["rows"]] for name, c in record["corpora"].items()}
    assert parts == {"hi-indian": [("seqbil", 0), ("CRFsuite", 0)], "wtb": [("seqbil", 1), ("CRFsuite", 0)],
                     "conll2000": [("seqbil", 1)]}
    for name, system in (("hi-indian", 0), ("hi-indian", 1), ("wtb", 1)):
        assert {k: v for k, v in record["corpora"][name]["rows"][system].items() if k != "part"} == \
            before["corpora"][name]["rows"][system]
    assert record["corpora"]["wtb"]["rows"][0]["runs"] != before["corpora"]["wtb"]["rows"][0]["runs"]
    assert [p["command"] for p in record["parts"]] == [before["command"], record["command"]]
    assert "--append" in record["command"] and "--append" not in before["command"]
    text = (out / "suite.md").read_text(encoding="utf-8")
    assert text == module("tables").render_record(record) + "\n"
    assert "Part 1 (seqbil, CRFsuite on hi-indian; CRFsuite on wtb): `suite.py" in text
    assert "Part 2 (seqbil on wtb, conll2000): `suite.py" in text
    other = suite("--corpora", "hi-indian", "--systems", "seqbil", "--append", "--split", "test")
    assert other.returncode == 2 and "holds a record of split 'dev', not 'test'" in other.stderr
    assert json.loads((out / "suite.json").read_text(encoding="utf-8")) == record
    # a system not run in a part: its row says why, in place of the earlier part's
    bad = suite("--corpora", "wtb", "--systems", "crfsuite", "--append", "--not-run", "crfsuite")
    assert bad.returncode == 2 and "--not-run takes SYSTEM=REASON" in bad.stderr
    third = suite("--corpora", "wtb", "--systems", "crfsuite", "--append", "--not-run", "crfsuite=longer than a sitting")
    assert third.returncode == 0, third.stdout + third.stderr
    record = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    rows = {r["system"]: r for r in record["corpora"]["wtb"]["rows"]}
    assert rows["CRFsuite"]["error"] == "not run: longer than a sitting" and rows["CRFsuite"]["part"] == 2
    assert "runs" in rows["seqbil"] and rows["seqbil"]["part"] == 1
    assert "(1) not run: longer than a sitting" in (out / "suite.md").read_text(encoding="utf-8")
    # a corpus of another size than the one the record ran on is refused before its runs
    held = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    held["corpora"]["wtb"]["train_sentences"] += 1
    (out / "suite.json").write_text(json.dumps(held), encoding="utf-8")
    odd = suite("--corpora", "wtb", "--systems", "seqbil", "--append", "--work", str(tmp_path / "work"))
    assert odd.returncode == 2 and "wtb is not the corpus the record's earlier part ran on" in odd.stderr
    assert "seqbil run 1" not in odd.stderr and not list((tmp_path / "work").rglob("*.sbm"))
    assert json.loads((out / "suite.json").read_text(encoding="utf-8")) == held


def test_partial_labels_quick(tmp_path):
    """benchmarks/partial_labels.py --quick: every corpus variant trains and is scored,
    and the record's table is made from it."""
    out = tmp_path / "partial.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "partial_labels.py"), "--quick", "--learners",
                           "crf,sp", "--out", str(out)], env=ENV, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["quick"] and set(record["f1"]) == {"crf", "sp"}
    for r in record["f1"].values():
        assert set(r) == {"full", "tokens: partial", "chunks: partial", "chunks: O", "recovered"}
        assert r["recovered"] == pytest.approx((r["chunks: partial"] - r["chunks: O"]) / (r["full"] - r["chunks: O"]))
    # half the tokens and the hidden chunks' tokens are unknown; the O workaround knows them all
    assert record["known_tokens"]["full"] == record["known_tokens"]["chunks: O"] == record["tokens"]
    assert 0.4 * record["tokens"] < record["known_tokens"]["tokens: partial"] < 0.6 * record["tokens"]
    assert out.with_suffix(".md").read_text(encoding="utf-8").startswith("| learner |")


@pytest.mark.skipif(not WAPITI_SRC.is_file(), reason=f"Wapiti's source tarball is not at {WAPITI_SRC}")
@pytest.mark.skipif(not C_TOOLS, reason="building Wapiti needs make and cc")
def test_wapiti_model_quick(tmp_path):
    """benchmarks/wapiti_model.py --quick: a Wapiti model of the bundled sample, converted,
    labels as wapiti label does; the record and its table."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "wapiti_model.py"), "--quick", "--work",
                           str(tmp_path / "work"), "--out", str(out)], env=ENV, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((out / "wapiti.json").read_text(encoding="utf-8"))
    assert record["test"]["labels_differ"] == record["test"]["posterior_labels_differ"] == 0
    assert record["test"]["max_token_marginal_diff"] <= 5e-7 and record["speed"]["labels_differ"] == 0
    assert record["wapiti"]["version"].startswith("Wapiti") and record["model"]["iterations"] == 5
    tables = module("tables")
    assert (out / "wapiti.md").read_text(encoding="utf-8") == tables.render_record(record) + "\n"
