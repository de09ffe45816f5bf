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
from test_cli import ENV, conll_sentences, reference_chunk_scores

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
