"""Every experiment script runs with --quick on the bundled samples, from the repository
root and from elsewhere, and writes its tables with the run details; seqbil's numbers in
them are those of the same runs done with the Python API."""
import csv
import importlib.util
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import seqbil
from seqbil.samples import sample_path
from test_cli import ENV

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ROOT / "experiments"
CRF = importlib.util.find_spec("pycrfsuite") is not None
PLOTS = importlib.util.find_spec("matplotlib") is not None
CRFPP = bool(shutil.which("crf_learn") and shutil.which("crf_test"))


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def every(items, k):
    """items[0], items[k], items[2k], ...: the rows of a long table that are run again
    through the API, chosen so that each kind of row (structure, method, learner) is
    among them, since all rows come from the same code path and each API run is a
    training of its own."""
    return items[::k]


# --- the scripts' seqbil runs again, through the Python API ------------------------------

QUICK = {"epochs": 3, "bcd_epochs": 1}  # what --quick gives seqbil train
PKU = sample_path("pku_train.utf8"), sample_path("pku_test.utf8")
CONLL = sample_path("conll2000_train.txt"), sample_path("conll2000_test.txt")


def part(work, fmt, fraction, corpus, rest=False):
    """The scripts' fixed-seed part of a corpus (and the rest of it), by experiments/lib/subset.py."""
    work.mkdir(exist_ok=True)
    out = [work / f"{fmt}.{fraction}.part", work / f"{fmt}.{fraction}.rest"][:1 + rest]
    subprocess.run([sys.executable, str(EXPERIMENTS / "lib" / "subset.py"), "--format", fmt, "--fraction",
                    str(fraction), "--seed", "1", str(corpus), *map(str, out)], check=True)
    return out if rest else out[0]


def scores(train, test, words=None, **options):
    model = seqbil.train(str(train), **options)
    return seqbil.evaluate(model, str(test), words=words and str(words))


def table1_runs(work):
    methods = {"bol": ("sighan2005", {"learner": "bol", "rank1": "block"}),
               "bol-global": ("sighan2005", {"learner": "bol", "rank1": "global"}),
               "bcd": ("sighan2005", {"learner": "bcd"}), "sp": ("sighan2005", {"learner": "sp"}),
               "bol+0": ("sighan2005_0order", {"learner": "bol"}), "sp+0": ("sighan2005_0order", {"learner": "sp"})}
    return {("sample", m): scores(*PKU, words=PKU[0], config=c, **QUICK, **o)["f1"] for m, (c, o) in methods.items()}


def curve_runs(work, corpus, fmt, config, data):
    return {(corpus, learner, pct): scores(part(work, fmt, pct / 100, data[0]), data[1], config=config,
                                           learner=learner, **QUICK)["f1"]
            for pct in (50, 100) for learner in ("bol", "bcd", "sp")}


def convergence_runs(work):
    # the label error after pass k of a 3-pass run: that of a k-pass run (the same passes)
    return {(learner, k): 100 - scores(*PKU, config="sighan2005", learner=learner, epochs=k)["accuracy"]
            for learner in ("bol", "sp") for k in (1, 2, 3)}


def power_runs(work):
    train, dev = part(work, "sighan", 0.9, PKU[0], rest=True)
    # without --diagnose, which only measures: the same model
    return {(mode, R): scores(train, dev, config="sighan2005", learner="bol", rank1=mode, power_steps=R,
                              epochs=3)["f1"]
            for mode in ("block", "global") for R in (1, 4)}


def seeds_runs(work):
    f1 = {}
    for seed in (1, 2):
        for learner in ("bol", "sp"):
            for config, suffix in (("sighan2005", ""), ("sighan2005_0order", "+0")):
                for averaged in (False, True):
                    f1.setdefault(("pku", learner + suffix + "-avg" * averaged), []).append(
                        scores(*PKU, config=config, learner=learner, seed=seed, averaged=averaged, **QUICK)["f1"])
            f1.setdefault(("conll2000", learner), []).append(
                scores(*CONLL, config="conll2000", learner=learner, seed=seed, **QUICK)["f1"])
    return {key: statistics.fmean(values) for key, values in f1.items()}


def cws_runs(work):
    # the test-set rows: configs/cws.toml as it is; the dev rows use subsets of the same templates
    return {("sample-test", "cws", learner): scores(*PKU, words=PKU[0], config="cws", learner=learner, **QUICK)["f1"]
            for learner in ("bol", "sp")}


API_RUNS = {
    "table1.sh": table1_runs,
    "figure1.sh": lambda work: curve_runs(work, "sample", "sighan", "sighan2005", PKU),
    "figure2.sh": convergence_runs,
    "figure3.sh": lambda work: curve_runs(work, "conll2000", "conll", "conll2000", CONLL),
    "power_iteration.sh": power_runs,
    "seeds.sh": seeds_runs,
    "cws_features.sh": cws_runs,
}


def row_numbers(stem, table):
    """{key of the run: its F1 (label error for convergence)} of a table's rows."""
    if stem == "table1":
        return {(r["corpus"], r["method"]): float(r["f1"]) for r in table}
    if stem == "curve":
        return {(r["corpus"], r["method"], int(r["percent"])): float(r["f1"]) for r in table}
    if stem == "cws_features":
        return {(r["split"], r["variant"], r["learner"]): float(r["f1"]) for r in table}
    if stem == "seeds":
        return {(r["corpus"], r["method"]): float(r["mean_f1"]) for r in table}
    if stem == "convergence":
        return {(r["method"], int(r["iteration"])): float(r["label_error_percent"]) for r in table}
    return {(r["mode"], int(r["R"])): float(r["dev_f1"]) for r in table}


@pytest.mark.parametrize("script, stem, n_rows", [
    ("table1.sh", "table1", 6 + 2 * CRF + 2 * CRFPP),
    ("figure1.sh", "curve", 3 * 2),
    ("figure2.sh", "convergence", 2 * 3 + 2 * 5 * CRF),
    ("figure3.sh", "curve", 3 * 2),
    ("power_iteration.sh", "power_iteration", 2 * 2),
    ("seeds.sh", "seeds", 8 + 2),
    ("cws_features.sh", "cws_features", 2 * 5 + 2),
])
def test_experiment_script_quick(tmp_path, script, stem, n_rows):
    out = tmp_path / "out"
    # from the repository root, whose seqbil/ must not shadow the installed package
    proc = subprocess.run(["bash", str(EXPERIMENTS / script), "--quick", "--out", str(out)], cwd=ROOT,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"results go to {out}" in proc.stdout and f"wrote {out / stem}.md" in proc.stdout
    table = rows(out / f"{stem}.csv")
    assert len(table) == n_rows
    numbers = row_numbers(stem, table)
    for key, value in API_RUNS[script](tmp_path / "api").items():
        assert numbers.pop(key) == value, key  # exactly: the same runs
    # what is left: the CRF peers' rows (python-crfsuite, CRF++), another tool's numbers, and the
    # feature variants on dev splits
    assert all(any(str(field).startswith("crf") or str(field).endswith("-dev") for field in key)
               for key in numbers), numbers
    assert all(0 < v < 100 for v in numbers.values())
    record = json.loads((out / f"{stem}.json").read_text())  # the record beside the table
    assert len(record["rows"]) == n_rows and record["columns"] == list(table[0])
    assert all(record[key] for key in ("command", "seqbil", "machine", "date")) and "git " in record["seqbil"]
    text = (out / f"{stem}.md").read_text()
    for key in ("command: ", "seqbil: ", "machine: ", "--quick"):
        assert key in text and key in (out / f"{stem}.csv").read_text()
    if stem in ("curve", "convergence"):
        assert (out / f"{stem}.png").exists() == PLOTS
        assert PLOTS or "pip install 'seqbil[plots]'" in proc.stdout
    # a second run, from elsewhere, keeps the finished runs and rebuilds the same table
    again = subprocess.run(["bash", str(EXPERIMENTS / script), "--quick", "--out", str(out)], cwd=tmp_path,
                           env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and not [line for line in again.stdout.splitlines() if line.startswith("  ")]
    assert rows(out / f"{stem}.csv") == table


def test_unknown_option_is_an_error(tmp_path):
    proc = subprocess.run(["bash", str(EXPERIMENTS / "table1.sh"), "--quik"], cwd=tmp_path,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown option --quik" in proc.stderr


def test_aso_rawtext_script_quick(tmp_path):
    """experiments/aso_rawtext.sh --quick: its texts are every Nth sentence of the raw text,
    its structures the API's on them, and its rows the API's runs with those structures."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(EXPERIMENTS / "aso_rawtext.sh"), "--quick", "--out", str(out)], cwd=ROOT,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = out / "runs"
    blocks = CONLL[0].read_text(encoding="utf-8").split("\n\n")
    sentences = [[line.split()[0] for line in b.splitlines() if line.strip()] for b in blocks]
    sentences = [s for s in sentences if s]
    texts = json.loads((r / "texts.json").read_text())
    for name, every in (("1", 1), ("2", 2), ("20", 20), ("wsj", 1)):
        assert texts[name] == {"sentences": len(sentences[::every]), "tokens": sum(map(len, sentences[::every]))}
    from seqbil.features.structure import Structure
    text = tmp_path / "text.2"
    text.write_text("".join(" ".join(s) + "\n" for s in sentences[::2]), encoding="utf-8")
    structure = seqbil.learn_structure([text], targets=50, dim=8)
    for a, b in zip(Structure.load(r / "words.2.sbs").splits, structure.splits):
        np.testing.assert_array_equal(a.theta, b.theta)
    table = {(row["structure"], row["text"], row["learner"]): row for row in rows(out / "aso_rawtext.csv")}
    assert {k[:2] for k in table} == {("none", ""), ("words", "2"), ("words", "1"), ("words", "20"), ("words", "wsj"),
                                      ("chunk tags", "2"), ("chunk tags", "1")}
    for learner in ("bol", "sp"):
        opts = dict(config="conll2000", learner=learner, seed=1, **QUICK)
        plain = scores(*CONLL, **opts)["f1"]
        assert float(table["none", "", learner]["f1"]) == pytest.approx(plain, abs=5e-3)
        for kind, name, scale in (("words", "words.2", 0.1), ("chunk tags", "semi.1", 0.3)):
            f1 = scores(*CONLL, structure=[str(r / f"{name}.sbs")], structure_scale=scale,
                        structure_window="-1,0,1", **opts)["f1"]
            row = table[kind, name.split(".")[1], learner]
            assert float(row["f1"]) == pytest.approx(f1, abs=5e-3)
            assert float(row["gain"]) == pytest.approx(f1 - plain, abs=1e-2)
    # the CRFsuite peer, without and with the structures from all the raw text
    assert {k for k in table if k[2] == "crf"} == ({("none", "", "crf"), ("words", "1", "crf"),
                                                    ("chunk tags", "1", "crf")} if CRF else set())
    record = json.loads((out / "aso_rawtext.json").read_text())
    assert all(record[key] for key in ("command", "seqbil", "machine", "date"))
    assert (out / "aso_rawtext.png").exists() == PLOTS


def test_crfsuite_peer_structure_attributes(tmp_path):
    """The CRFsuite peer gives each token the structure's features with the values
    seqbil train --structure appends (StructureFeatures, the compiled append_dense)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from crfsuite_peer import structure_attributes
    from seqbil.features.structure import Structure, StructureFeatures
    from seqbil.formats import make_format, read_corpus
    text = tmp_path / "text"
    sample_text = [" ".join(line.split()[0] for line in b.splitlines() if line.strip())
                   for b in CONLL[0].read_text(encoding="utf-8").split("\n\n")]
    text.write_text("\n".join(t for t in sample_text if t) + "\n", encoding="utf-8")
    seqbil.learn_structure([text], targets=20, dim=4, aux_epochs=1).save(tmp_path / "s.sbs")
    sentences = read_corpus(make_format("conll", None, -1), str(CONLL[1]))[:30]
    window, scale = [-1, 0, 1], 0.3
    got = list(structure_attributes(sentences, Structure.load(tmp_path / "s.sbs"), scale, window))
    features = StructureFeatures(Structure.load(tmp_path / "s.sbs"), window, scale)
    n = sum(map(len, sentences))
    ptr, ids, vals = features.append(sentences, np.zeros(n + 1, np.int64), np.zeros(0, np.int32), None, 0)
    dim = features.structure.dim
    flat = [d for sent in got for d in sent]
    assert len(flat) == n
    for p, d in enumerate(flat):
        want = {f"S{window[i // dim]}:{i % dim}": v for i, v in zip(ids[ptr[p]:ptr[p + 1]], vals[ptr[p]:ptr[p + 1]])
                if v}
        assert d.keys() == want.keys()
        np.testing.assert_allclose([d[k] for k in want], list(want.values()), rtol=1e-6)


def test_rpa_tagging_script_quick(tmp_path):
    """experiments/rpa_tagging.sh --quick: each method's choice for each training set is
    its best held-out epoch and setting, and the test rows (each method's, on one split
    each) are the API's runs with those choices."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(EXPERIMENTS / "rpa_tagging.sh"), "--quick", "--out", str(out)], cwd=ROOT,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = out / "runs"
    # conllpos: the config's templates but those that read the words
    sparse = (r / "conllpos.template").read_text().split()
    assert sparse and "B" in sparse and not [t for t in sparse if ",0]" in t]
    assert (r / "conllpos.emb.template").read_text().split() == sparse[:-1] + [
        "U90:%emb[-1,0]", "U91:%emb[0,0]", "U92:%emb[1,0]", "B"]
    held = rows(out / "rpa_tagging_held.csv")
    chosen = {}
    splits = ("conll100", "conllpos100", "pku")  # (--quick trains on the whole samples only)
    methods = ("sp", "pa", "frozen-rand", "rpa-rand", "frozen-aso", "rpa-aso")
    for split in splits:
        corpus = split.rstrip("0123456789")
        for method in methods:
            settings = [h for h in held if (h["split"], h["method"]) == (split, method)]
            # every setting's best epoch is the top of its held-out curve (read here from the log)
            for h in settings:
                tag = h["setting"].replace(" ", "").replace("-", "") if h["setting"] != "–" else ""
                log = [json.loads(line) for line in (r / f"held{split.removesuffix('100')}__{method}"
                                                        f"{'-' + tag if tag else ''}__1.jsonl").read_text().splitlines()]
                curve = [e["dev"]["f1"] for e in log]
                assert int(h["best_epoch"]) == curve.index(max(curve)) + 1
                assert float(h["held_f1"]) == pytest.approx(max(curve), abs=5e-3)
            best = max(settings, key=lambda h: (float(h["held_f1"]), -int(h["best_epoch"])))
            assert [h["chosen"] for h in settings].count("yes") == 1 and best["chosen"] == "yes"
            chosen[split, method] = best
    table = rows(out / "rpa_tagging.csv")
    assert {(t["split"], t["method"]) for t in table} == set(chosen)
    for row in table:
        split, method = row["split"], row["method"]
        best = chosen[split, method]
        assert int(row["epochs"]) == int(best["best_epoch"])
        if splits.index(split) != methods.index(method) % len(splits):
            continue  # each method's row is run again through the API on one of the splits, in turn
        corpus = split.removesuffix("100")
        opts = {"config": "sighan2005" if corpus == "pku" else "conll2000", "averaged": True, "seed": 1,
                "epochs": int(best["best_epoch"]), "learner": "sp" if method == "sp" else "rpa",
                "template": str(r / f"{corpus}.template")}
        if best["setting"].startswith("-C"):
            opts["C"] = float(best["setting"].split()[1])
        elif best["setting"].startswith("--lambda"):
            opts["lam"] = float(best["setting"].split()[1])
        if "-" in method:
            opts.update(template=str(r / f"{corpus}.emb.template"), freeze_embeddings=method.startswith("frozen"),
                        embeddings="random:10" if method.endswith("rand") else str(r / ("zh.vec" if corpus == "pku"
                                                                                        else "en.vec")))
        data = PKU if corpus == "pku" else CONLL
        assert float(row["f1"]) == pytest.approx(scores(*data, **opts)["f1"], abs=5e-3), row
    record = json.loads((out / "rpa_tagging.json").read_text())
    assert all(record[key] for key in ("command", "seqbil", "machine", "date"))
    assert "rpa-rand" in (out / "rpa_tagging.md").read_text()


def test_multitask_script_quick(tmp_path):
    """experiments/multitask.sh --quick: its single and joint rows (one per learner) are
    the runs the API gives on the same files, the coupling is the one with the best dev mean, and
    the record, the mistakes table and (with matplotlib) the figure are written."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(EXPERIMENTS / "multitask.sh"), "--quick", "--out", str(out)], cwd=ROOT,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    b = float(re.search(r"coupling b = ([0-9.]+)", proc.stdout).group(1))
    pooled = {}  # each coupling's dev F1, pooled over tasks and learners
    for r in rows(out / "multitask_dev.csv"):
        if r["model"] != "single":
            pooled.setdefault(float(r["model"][2:]), []).append(float(r["mean"]))
    assert b == max(sorted(pooled), key=lambda k: statistics.fmean(pooled[k]))
    q = out / "runs" / "quick"
    names = ("words", "pairs")
    for r in every([r for r in rows(out / "multitask.csv") if r["task"] != "mean"], 3):  # a row per learner
        task, learner, seeds = r["task"], r["learner"], range(1, int(r["seeds"]) + 1)
        train, test = q / f"{task}.train", q / f"{task}.test"
        single = [scores(train, test, words=train, config="cws", learner=learner, seed=s, **QUICK)["f1"]
                  for s in seeds]
        joint = [seqbil.evaluate(seqbil.train(config="cws", tasks=[f"{n}={q / n}.train" for n in names],
                                              coupling=b, learner=learner, seed=s, **QUICK),
                                 str(test), words=str(train), task=task)["f1"] for s in seeds]
        assert float(r["single_f1"]) == pytest.approx(statistics.fmean(single), abs=1e-9)
        assert float(r["joint_f1"]) == pytest.approx(statistics.fmean(joint), abs=1e-9)
    mistakes = rows(out / "multitask_mistakes.csv")
    assert {(r["learner"], r["task"]) for r in mistakes} == {(m, t) for m in ("bol", "sp") for t in names}
    assert all(int(r["first_pass_coupled"]) <= int(r["all_passes_coupled"]) for r in mistakes)
    record = json.loads((out / "multitask.json").read_text())
    assert all(record[key] for key in ("command", "seqbil", "machine", "date"))
    assert (out / "multitask_mistakes.png").exists() == PLOTS
    text = (out / "multitask.md").read_text()
    assert "### An extra corpus as a sixth task" in text and "### Training time and model size" in text


def test_aso_script_quick(tmp_path):
    """experiments/aso.sh --quick: the structure it learns is the API's on the same raw
    text, its held-out choice is the best row, and its test rows (one of each kind of
    structure) are the API's runs."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(EXPERIMENTS / "aso.sh"), "--quick", "--out", str(out)], cwd=ROOT,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = out / "runs"
    structure = seqbil.learn_structure([r / "en.txt"], targets=50, dim=8, aux_epochs=1, jobs=2)
    from seqbil.features.structure import Structure
    saved = Structure.load(r / "en.sbs")
    for a, b in zip(saved.splits, structure.splits):
        np.testing.assert_array_equal(a.theta, b.theta)  # the threads do not change the result
    scale, window = re.search(r"scale (\S+), window (\S+) \(best", proc.stdout).groups()
    semi_scale, both_scale = re.search(r"scale (\S+) for the semi-supervised structure, (\S+) for both",
                                       proc.stdout).groups()
    held = rows(out / "aso_held.csv")
    best = max((h for h in held if h["scale"] != "none"), key=lambda h: (float(h["f1"]), -float(h["scale"])))
    assert (best["scale"], best["window"]) == (scale, window)
    chosen = re.search(r"epochs (\d+) without a structure, (\d+) with words, (\d+) with chunk tags, (\d+) with "
                       r"both", proc.stdout).groups()
    epochs = dict(zip(["none", "words", "chunk tags", "both"], map(int, chosen)))
    for kind, long_run in (("none", "none"), ("words", "aso"), ("chunk tags", "semi"), ("both", "both")):
        # the longer run wins only if better than the config's epochs at the chosen scale
        f1 = json.loads((r / f"held__{long_run}-e6__bol__1.eval.json").read_text())["f1"]
        short = {"none": "held__none", "words": f"held__s{scale}w{window}", "chunk tags": f"held__semi-s{semi_scale}",
                 "both": f"held__both-s{both_scale}"}[kind]
        f1_short = json.loads((r / f"{short}__bol__1.eval.json").read_text())["f1"]
        assert epochs[kind] == (6 if f1 > f1_short else 3)
    structures = {"words": [r / "en.sbs"], "chunk tags": None, "both": None}
    seen, plain_f1 = set(), {}
    for row in every([row for row in rows(out / "aso.csv") if row["corpus"].startswith("conll")], 5):
        size = row["corpus"][5:]
        structures["chunk tags"] = [r / f"semi_{size}.sbs"]
        structures["both"] = [r / "en.sbs", r / f"semi_{size}.sbs"]
        work = tmp_path / row["corpus"]
        work.mkdir(exist_ok=True)
        subprocess.run([sys.executable, str(EXPERIMENTS / "lib" / "subset.py"), "--format", "conll", "--first",
                        str(int(size) / 100), str(CONLL[0]), str(work / "train")], check=True)
        opts = dict(config="conll2000", learner=row["learner"], seed=1, **{**QUICK, "epochs": epochs["none"]})
        key = row["corpus"], row["learner"]
        plain = plain_f1[key] = plain_f1.get(key) or scores(work / "train", CONLL[1], **opts)["f1"]
        opts["epochs"] = epochs[row["structure"]]
        kind_scale = {"words": scale, "chunk tags": semi_scale, "both": both_scale}[row["structure"]]
        with_s = scores(work / "train", CONLL[1], structure=[str(p) for p in structures[row["structure"]]],
                        structure_scale=float(kind_scale), structure_window=window, **opts)["f1"]
        assert float(row["f1_without"]) == pytest.approx(plain, abs=5e-3)
        assert float(row["f1_with"]) == pytest.approx(with_s, abs=5e-3)
        seen.add(row["structure"])
    assert seen == set(structures)
    record = json.loads((out / "aso.json").read_text())
    assert all(record[key] for key in ("command", "seqbil", "machine", "date"))
    assert (out / "aso_curve.png").exists() == PLOTS


def test_config_choice_script_quick(tmp_path):
    """experiments/config_choice.sh --quick: every corpus has every candidate, its rows are
    the API's runs on the same dev split (crf's c2 the one the API's model chose), and each
    config's winner and margin are those of its rows."""
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(EXPERIMENTS / "config_choice.sh"), "--quick", "--out", str(out)], cwd=ROOT,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"results go to {out}" in proc.stdout and f"wrote {out / 'config_choice'}.md" in proc.stdout
    table = rows(out / "config_choice.csv")
    learners = {"sp", "bol", "crf", "pa", "arow"}
    rich = {"sp", "crf", "crf-peer-settings"} | ({"crfsuite"} if CRF else set())
    expected = {(c, "config", s) for c in ("chunking", "pos", "chunk-words", "sample") for s in learners}
    expected |= {(c, "rich", s) for c in ("pos", "chunk-words") for s in rich}
    got = {(r["corpus"], r["features"], r["system"]): r for r in table}
    assert set(got) == expected and len(table) == len(expected)
    shipped = {"chunking": "bol", "pos": "sp", "chunk-words": "sp", "sample": "bol"}
    assert {(r["corpus"], r["system"]) for r in table if r["shipped"] == "yes"} == set(shipped.items())
    for r in table:  # only crf chooses c2, within the training part
        chooses = r["system"] == "crf"
        assert (r["c2_chosen"] != "") == chooses and (r["c2_chosen_on"] != "") == chooses
        if chooses:  # the CoNLL part is under 25,000 tokens: cross-validation; the pku sample is not
            assert r["c2_chosen_on"] == ("held-out" if r["corpus"] == "sample" else "10-fold cross-validation")
    # the same splits by the same helper: the first 60 sentences of the sample, then 90% / 10%
    work = tmp_path / "api"
    work.mkdir()
    subset = [sys.executable, str(EXPERIMENTS / "lib" / "subset.py"), "--format", "conll", "--first"]
    subprocess.run(subset + ["0.12", str(CONLL[0]), str(work / "sample")], check=True)
    subprocess.run(subset + ["0.9", str(work / "sample"), str(work / "train"), str(work / "dev")], check=True)
    for part in ("train", "dev"):
        lines = (work / part).read_text().splitlines()
        (work / f"words.{part}").write_text("".join(" ".join(line.split()[0::2]) + "\n" for line in lines))
    record = json.loads((out / "config_choice.json").read_text())
    runs = {(r["corpus"], r["features"], r["system"]): r for r in record["runs"]}
    template = out / "runs" / "rich.template"
    assert template.read_text().split() == record["rich_template"]
    assert "U107:%x[0,0]|suffix:3" in record["rich_template"]
    quick = dict(temperature=1, epochs=3)
    for key, train, options in ((("chunk-words", "config", "sp"), "words", dict(config="ner", learner="sp")),
                                (("chunking", "config", "crf"), "", dict(config="conll2000", learner="crf")),
                                (("chunk-words", "rich", "crf-peer-settings"), "words",
                                 dict(config="ner", learner="crf", template=str(template), c1=0.1, c2=0.1,
                                      epochs=10))):
        model = seqbil.train(str(work / f"{train + '.' if train else ''}train"), **{**quick, **options})
        f1 = seqbil.evaluate(model, str(work / f"{train + '.' if train else ''}dev"))["f1"]
        assert runs[key]["score"] == f1 and float(got[key]["dev_score"]) == pytest.approx(f1, abs=1e-4), key
        if key[2] == "crf":
            c2 = model.training["selection"]["chosen"]["c2"]
            assert float(got[key]["c2_chosen"]) == c2 == runs[key]["selection"]["chosen"]["c2"]
    # each config's winner: the best dev score among its candidates, and the margin over the shipped one
    winners = {w["config"]: w for w in rows(out / "config_choice_winners.csv")}
    configs = {"chunking": "conll2000", "pos": "pos", "chunk-words": "ner", "sample": "cws"}
    assert set(winners) == set(configs.values())
    for corpus, config in configs.items():
        scores_ = {r["system"]: float(r["dev_score"]) for r in table
                   if (r["corpus"], r["features"]) == (corpus, "config")}
        w = winners[config]
        assert w["shipped"] == shipped[corpus] and float(w["winner_score"]) == max(scores_.values())
        assert scores_[w["winner"]] == max(scores_.values())
        assert float(w["margin"]) == pytest.approx(max(scores_.values()) - scores_[shipped[corpus]], abs=2e-4)
    assert len(record["rows"]) == len(table) and record["columns"] == list(table[0])
    assert all(record[key] for key in ("command", "seqbil", "machine", "date")) and "git " in record["seqbil"]
    assert record["quick"] and set(record["corpora"]) == set(configs)
    text = (out / "config_choice.md").read_text()
    for key in ("command: ", "seqbil: ", "machine: ", "--quick", "### The choice per config"):
        assert key in text
    # a second run, from elsewhere, keeps the finished runs and rebuilds the same table
    again = subprocess.run(["bash", str(EXPERIMENTS / "config_choice.sh"), "--quick", "--out", str(out)],
                           cwd=tmp_path, env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0 and not [line for line in again.stdout.splitlines() if line.startswith("  ")]
    assert rows(out / "config_choice.csv") == table
    # candidates and corpora left out: neither run nor reported, and the report says so
    cmd = ["bash", str(EXPERIMENTS / "config_choice.sh"), "--quick", "--out", str(out), "--skip-run", "rich:crf",
           "--skip-corpus", "sample", "--why", "for want of time"]
    fewer = subprocess.run(cmd, cwd=ROOT, env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True,
                           timeout=600)
    assert fewer.returncode == 0, fewer.stdout + fewer.stderr
    left = {(r["corpus"], r["features"], r["system"]) for r in rows(out / "config_choice.csv")}
    assert left == {k for k in expected if k[0] != "sample" and k[1:] != ("rich", "crf")}
    assert {w["config"] for w in rows(out / "config_choice_winners.csv")} == {"conll2000", "pos", "ner"}
    assert "Not run: the corpus sample; the rich crf runs (for want of time)." in (out / "config_choice.md").read_text()
    bad = subprocess.run(cmd[:5] + ["--skip-run", "rich:bol"], cwd=ROOT, env={**ENV, "PYTHON": sys.executable},
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "--skip-run rich:bol: no such candidate" in bad.stderr + bad.stdout


def test_config_choice_winners_over_several_corpora(tmp_path):
    """A config read by several corpora (cws) is won by the best mean dev score over them,
    ties going to the shipped learner; the margin is over the shipped learner's mean."""
    sys.path.insert(0, str(EXPERIMENTS / "lib"))
    from config_choice import Corpus, winners
    for part in ("train", "dev"):
        (tmp_path / part).write_text("扬帆 远东\n")
    corpora = [Corpus(f"{name}|cws|{tmp_path / 'train'}|{tmp_path / 'dev'}") for name in ("a", "b", "c")]
    scores = {"a": {"bol": 90, "sp": 89, "crf": 93, "pa": 88, "arow": 80},
              "b": {"bol": 95, "sp": 94, "crf": 92, "pa": 95, "arow": 80},
              "c": {"bol": 85, "sp": 86, "crf": 88, "pa": 86, "arow": 80}}
    cpu = {"a": 1.0, "b": 2.0, "c": 3.0}  # crf: 50 times the other learners' CPU seconds
    records = [{"corpus": c, "features": "config", "system": s, "metric": "F1", "score": v, "settings": {},
                "cpu_seconds": cpu[c] * (50 if s == "crf" else 1),
                "selection": {"on": "held-out", "chosen": {"c1": 0.0, "c2": 0.1}} if s == "crf" else None}
               for c, by in scores.items() for s, v in by.items()]
    [w] = winners(corpora, records)
    assert (w["shipped"], w["winner"], w["corpora_won"]) == ("bol", "crf", 2)
    assert w["cpu_ratio"] == pytest.approx(50)
    assert w["winner_score"] == pytest.approx(91) and w["margin"] == pytest.approx(1)
    assert w["crf_c2"] == {"a": 0.1, "b": 0.1, "c": 0.1} and w["runner_up"] == "bol"
    scores["a"]["crf"] = 90  # crf now level with bol (mean 90): the shipped learner stays
    for r in records:
        r["score"] = scores[r["corpus"]][r["system"]]
    [w] = winners(corpora, records)
    assert w["winner"] == "bol" and w["margin"] == 0
