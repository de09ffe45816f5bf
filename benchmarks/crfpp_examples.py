"""CRF++'s own example corpora (`example/` in its source: basenp, chunking, JapaneseNE,
seg), each with its own template, run by CRF++ with the flags of the corpus's exec.sh and
by seqbil's learners crf, sp and the default one with the same template, as their users
run them:

    crf_learn FLAGS template train.data model && crf_test -m model test.data
    seqbil train --template template --train train.data [--learner L] --model model.sbm -q
    seqbil tag -m model.sbm test.data

Every crf_learn line of exec.sh is run (the CRF line first, then MIRA, and CRF-L1 where a
line has it commented out). Threads: `-p` as exec.sh gives it, else `-p 1` (CRF++'s own
default is one thread per core; --crfpp-threads overrides both). JapaneseNE is EUC-JP:
seqbil gets `--encoding euc-jp`. Each output is scored alike: test F1 by conlleval's
definition (seqbil.evaluation.chunks.conlleval_scores, its literal port) on the last
column against the gold labels of test.data, fields split at spaces and tabs as CRF++
splits them. A seqbil command that refuses a corpus (exit status not 0) gives a row with
its message instead of scores.

CRF++ is built from its source tarball with its own `./configure && make` into
--crfpp-dir (default: a folder under $XDG_CACHE_HOME or ~/.cache named after the
tarball's hash), once (benchmarks/peer_build.py); the corpora are extracted from the
same tarball.

Each training runs --repeats times (default 5), the systems in turn; training seconds and
peak RSS are min / median / max over the runs, every run's model is tagged and scored.
Writes results/speed/crfpp_examples.json (the record) and crfpp_examples.md (its table,
benchmarks/tables.py).

    python benchmarks/crfpp_examples.py [--repeats 5] [--corpora basenp,chunking,JapaneseNE,seg]
        [--crfpp-src ../shared/peers/crfpp-src.tar.gz] [--crfpp-dir DIR] [--out DIR] [--work DIR]
    python benchmarks/crfpp_examples.py --quick       # one run of basenp (a test)
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from peer_build import build_crfpp, column_sentences, default_crfpp_dir, measure, message, sha256  # noqa: F401 (imported from here by others)
from record import ROOT, header, stats
from tables import publish

CORPORA = ("basenp", "chunking", "JapaneseNE", "seg")
ENCODING = {"JapaneseNE": "euc-jp"}
DESCRIPTION = {"basenp": "base NP chunking (word, POS; B/I/O)", "chunking": "chunking (word, POS; IOB2 chunk tags)",
               "JapaneseNE": "Japanese named entities (word, character type, POS; IOB2; EUC-JP)",
               "seg": "Japanese word segmentation (character, character type; B/I)"}
SEQBIL_LEARNERS = ("crf", "sp", None)  # None: no --learner, the default one
SETTINGS = {"crf": ("epochs", "c1", "c2"), "sp": ("epochs", "averaged"), "bol": ("epochs", "C", "averaged", "rank1")}
SEQBIL = [sys.executable, "-P", "-m", "seqbil"]


# --- CRF++: corpora from the source tarball (built by peer_build) ---------------------------------

def extract_examples(src, work, names):
    """example/NAME/{template,train.data,test.data,exec.sh} of the tarball into WORK/NAME."""
    with tarfile.open(src) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if member.isfile() and len(parts) == 4 and parts[1] == "example" and parts[2] in names:
                dest = work / parts[2] / parts[3]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(tar.extractfile(member).read())


def exec_lines(path):
    """The crf_learn lines of an exec.sh: (flags, commented out). The flags are the
    words between crf_learn and the template argument."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        commented = text.startswith("#")
        words = shlex.split(text.lstrip("#").strip())
        if words and words[0].endswith("crf_learn"):
            lines.append((words[1:-3], commented))
    return lines


def with_threads(flags, threads):
    """FLAGS with -p THREADS where asked (threads not None), else with exec.sh's -p, else
    with -p 1; and whether -p was added."""
    out, given, skip = [], False, False
    for i, w in enumerate(flags):
        if skip:
            skip = False
            continue
        if w.startswith("-p"):
            given = True
            skip = w == "-p"
            if threads is None:
                out += [w] + ([flags[i + 1]] if w == "-p" else [])
            continue
        out.append(w)
    if threads is not None:
        return out + ["-p", str(threads)], not given
    return (out, False) if given else (out + ["-p", "1"], True)


def algorithm(flags):
    for i, w in enumerate(flags):
        if w == "-a":
            return flags[i + 1]
        if w.startswith("-a"):
            return w[2:]
        if w.startswith("--algorithm="):
            return w.split("=", 1)[1]
    return "CRF"


# --- reading and scoring ---------------------------------------------------------------------------

def read_columns(path, encoding):
    """Sentences as lists of field lists, fields split at spaces and tabs only."""
    return column_sentences(Path(path).read_text(encoding=encoding))


def score(gold, out_path, encoding):
    """conlleval over the last column of OUT_PATH against the gold sentences; the
    output must hold the test file's tokens in order."""
    from seqbil.evaluation.chunks import conlleval_scores
    pred = read_columns(out_path, encoding)
    if [len(s) for s in pred] != [len(s) for s in gold] or any(
            p[0] != g[0] for ps, gs in zip(pred, gold) for p, g in zip(ps, gs)):
        raise ValueError(f"{out_path} does not line up with the test file's tokens")
    r = conlleval_scores([[t[-1] for t in s] for s in gold], [[t[-1] for t in s] for s in pred])
    return {k: r[k] for k in ("f1", "precision", "recall", "accuracy", "phrases_gold", "phrases_pred", "correct")}


# --- running ---------------------------------------------------------------------------------------

def run(cmd, cwd, stdout=None, env=None):
    """(exit status, wall s, peak RSS MiB, stderr) of one command (peer_build.measure)."""
    status, wall, _, rss, err = measure(cmd, cwd, stdout, env)
    return status, wall, rss, err


def refusal(err, work):
    """The message of a failed command, without the paths of this machine."""
    return message(err, work, ROOT)


class System:
    """One trainer on one corpus: its commands, its runs and, once it failed, its error."""

    def __init__(self, name, train_cmd, tag_cmd, shown, extra=None):
        self.name, self.train_cmd, self.tag_cmd, self.shown = name, train_cmd, tag_cmd, shown
        self.extra = extra or {}
        self.runs, self.error = [], None

    def row(self):
        row = {"system": self.name, "command": self.shown, **self.extra}
        if self.error:
            return {**row, "error": self.error}
        row.update({key: stats([r[key] for r in self.runs]) for key in ("train_s", "train_peak_rss_mib", "tag_s")})
        row.update({key: self.runs[0][key] for key in self.runs[0] if key not in row})
        row["f1"] = stats([r["scores"]["f1"] for r in self.runs])
        return row


def systems_for(name, folder, crf_learn, crf_test, args):
    encoding = ENCODING.get(name)
    systems = []
    for number, (flags, commented) in enumerate(exec_lines(folder / "exec.sh")):
        flags, added = with_threads(flags, args.crfpp_threads)
        shown = " ".join(["crf_learn", *flags, "template", "train.data", f"crfpp{number}.model"])
        systems.append(System(f"CRF++ {algorithm(flags)}", [crf_learn, *flags, "template", "train.data",
                                                             f"crfpp{number}.model"],
                              [crf_test, "-m", f"crfpp{number}.model", "test.data"], shown,
                              {"flags": " ".join(flags), "threads_added": added,
                               "exec_sh": "commented out" if commented else f"crf_learn line {number + 1}",
                               "model": f"crfpp{number}.model"}))
    for learner in SEQBIL_LEARNERS:
        model = f"seqbil-{learner or 'default'}.sbm"
        user = ["--template", "template", "--train", "train.data", *(["--learner", learner] if learner else []),
                *(["--encoding", encoding] if encoding else []), "--model", model, "-q"]
        systems.append(System(f"seqbil {learner}" if learner else "seqbil (default learner)",
                              [*SEQBIL, "train", *user], [*SEQBIL, "tag", "-m", model, "test.data"],
                              " ".join(["seqbil train", *user]), {"model": model}))
    return systems


def train_and_score(system, folder, gold, encoding, work, env, n):
    out = folder / f"{Path(system.extra['model']).stem}.out"
    learn_log = folder / f"{Path(system.extra['model']).stem}.learn.txt"
    status, wall, rss, err = run(system.train_cmd, folder, stdout=learn_log, env=env)
    if status:
        system.error = refusal(err, work)
        return None
    model = folder / system.extra["model"]
    status, tag_wall, _, tag_err = run(system.tag_cmd, folder, stdout=out, env=env)
    if status:
        system.error = "tagging: " + refusal(tag_err, work)
        return None
    try:
        scores = score(gold, out, encoding or "utf-8")
    except (ValueError, UnicodeDecodeError) as exc:
        system.error = f"output: {exc}".replace(f"{work}/", "")
        return None
    result = {"train_s": wall, "train_peak_rss_mib": rss, "tag_s": tag_wall, "model_bytes": model.stat().st_size,
              "scores": scores}
    if system.name.startswith("CRF++"):
        learned = learn_log.read_text(encoding="utf-8", errors="replace")
        result["iterations"] = len(re.findall(r"^iter=", learned, re.M))
    else:
        steps = re.findall(r"^(?:epoch|iteration) (\d+)/\d+:", err.replace("\r", "\n"), re.M)
        result["iterations"] = int(steps[-1]) if steps else None
        said = re.search(r"^learner (\S+) \(\w+\): (.*)$", err, re.M)
        result["learner"] = said.group(1) if said else None
        result["learner_line"] = said.group(0) if said else None
        result["settings"] = model_settings(model, env)
    print(f"  {system.name} run {n}: F1 {result['scores']['f1']:.2f}, train {wall:.2f} s", file=sys.stderr)
    return result


def model_settings(model, env):
    """The learner's options as the model keeps them (seqbil inspect --json)."""
    import json
    proc = subprocess.run([*SEQBIL, "inspect", "--json", str(model)], capture_output=True, text=True, env=env)
    if proc.returncode:
        return None
    info = json.loads(proc.stdout)
    learner = info.get("learner")
    return {"learner": learner, **{k: info["params"][k] for k in SETTINGS.get(learner, ("epochs",))
                                   if k in info.get("params", {})}}


def corpus_info(gold, train):
    return {"train_sentences": len(train), "train_tokens": sum(map(len, train)), "test_sentences": len(gold),
            "test_tokens": sum(map(len, gold)), "labels": sorted({t[-1] for s in train for t in s})}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crfpp-src", default=str(ROOT.parent / "shared" / "peers" / "crfpp-src.tar.gz"),
                    help="CRF++'s source tarball (default: ../shared/peers/crfpp-src.tar.gz)")
    ap.add_argument("--crfpp-dir", help="where CRF++ is built, once (default: under $XDG_CACHE_HOME or ~/.cache)")
    ap.add_argument("--crfpp-threads", type=int, help="crf_learn -p for every run (default: exec.sh's, else 1)")
    ap.add_argument("--corpora", help=f"comma-separated, of {','.join(CORPORA)} (default: all; --quick: basenp)")
    ap.add_argument("--repeats", type=int, help="trainings of each system (default 5; --quick: 1)")
    ap.add_argument("--quick", action="store_true", help="one run of basenp, for a test")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed"), help="where the record and table go")
    ap.add_argument("--work", help="keep the corpora, models and outputs here (default: a temporary folder)")
    args = ap.parse_args()
    names = (args.corpora or ("basenp" if args.quick else ",".join(CORPORA))).split(",")
    if set(names) - set(CORPORA):
        ap.error(f"unknown corpora: {', '.join(sorted(set(names) - set(CORPORA)))}")
    repeats = args.repeats or (1 if args.quick else 5)
    src = Path(args.crfpp_src)
    if not src.is_file():
        sys.exit(f"crfpp_examples: {src} not found (CRF++'s source tarball; give --crfpp-src)")
    bin_dir = build_crfpp(src, args.crfpp_dir or default_crfpp_dir(src))
    env = {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(
        filter(None, [str(bin_dir.parent / "lib"), os.environ.get("LD_LIBRARY_PATH")]))}
    version = subprocess.run([bin_dir / "crf_learn", "--version"], capture_output=True, text=True, env=env).stdout
    record = {**header(), "benchmark": "crfpp_examples", "repeat": repeats,
              "crfpp": {"version": version.strip(), "source": src.name, "sha256": sha256(src),
                        "build": "./configure --prefix=DIR && make -j2 && make install",
                        "threads": args.crfpp_threads}, "corpora": {}}
    tmp = None if args.work else tempfile.TemporaryDirectory()
    work = Path(args.work or tmp.name).resolve()
    try:
        extract_examples(src, work, names)
        for name in names:
            folder, encoding = work / name, ENCODING.get(name)
            gold = read_columns(folder / "test.data", encoding or "utf-8")
            train = read_columns(folder / "train.data", encoding or "utf-8")
            systems = systems_for(name, folder, bin_dir / "crf_learn", bin_dir / "crf_test", args)
            print(f"{name}: {len(train)} training, {len(gold)} test sentences", file=sys.stderr)
            for n in range(repeats):  # the systems in turn, so a drift of the machine hits them alike
                for system in systems:
                    if system.error is None:
                        result = train_and_score(system, folder, gold, encoding, work, env, n + 1)
                        if result is None:
                            print(f"  {system.name}: failed: {system.error}", file=sys.stderr)
                        else:
                            system.runs.append(result)
            record["corpora"][name] = {"description": DESCRIPTION[name], "encoding": encoding or "utf-8",
                                       "template": (folder / "template").read_text(encoding or "utf-8"),
                                       **corpus_info(gold, train), "rows": [s.row() for s in systems]}
    finally:
        if tmp:
            tmp.cleanup()
    publish(Path(args.out) / "crfpp_examples.json", record)


if __name__ == "__main__":
    main()
