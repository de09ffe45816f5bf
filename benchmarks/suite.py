"""seqbil's default against the three CRF peers, each run as its own users run it, on
every corpus of a development suite: the same training file, the same split scored by
the same scorer. The measuring stick for seqbil's out-of-the-box default.

The suite (under --data, default ../shared/data, beside the repository):

    pos-more/NAME/{train,dev,test}.txt.gz   nine POS corpora (`word TAG`), token accuracy:
        pt-macmorpho es-cast3lb eu-3lb en-masc en-npschat hi-indian bn-indian mr-indian te-indian
    conll2000/{train,test}.txt.gz           chunking (`word POS chunk`), conlleval F1. It has no dev
        split: its last 10% of training sentences (the last len // 10) are the dev split, and
        every system trains on the first 90%, whichever split is scored
    cws-more/NAME/{train,dev,test}.txt.gz   word segmentation (one sentence a line, words
        separated by spaces), SIGHAN word F1: udc wtb zx

--split dev (the default) scores the dev split; --split test is for reporting only.

The held-out corpora (under --heldout, default data/ of the repository, installed by
data_scripts/get_heldout.sh; never used to choose a default, and not run unless named in --corpora):

    heldout/NAME/{train,dev,test}.txt.gz
        es-conll2002 nl-conll2002   named entities (`word POS label`, IOB2), conlleval F1; seqbil
                                    trains them with --config ner
        af-afribooms mt-mudt        part of speech (`word UPOS`), token accuracy; --config pos

The systems, in the work folder of each corpus (train.txt: the training file in columns,
the label last; eval.txt: the scored split, the same way, gold label last; for
segmentation train.txt and eval.txt have one character a line with its B/I/E/S tag,
converted from the segmented train.seg.txt and the scored split, and eval.raw.txt is
the scored split's text without spaces):

    seqbil    seqbil train --config C --train train.txt --model seqbil.sbm -q
              seqbil tag -m seqbil.sbm eval.txt -o seqbil.out
              (no learner named: the config's own; C is pos for pos-more, conll2000 for
              CoNLL-2000, cws for segmentation, which trains on train.seg.txt and tags
              eval.raw.txt; --seqbil-args adds options, or replaces --config)
    CRF++     crf_learn -p 1 template train.txt crfpp.model
              crf_test -m crfpp.model eval.txt > crfpp.out
              (CRF++'s default flags: CRF-L2, -c 1, -f 1, to convergence; -p 1 keeps it to
              one core, CRF++'s own default being a thread per core: --crfpp-threads. The
              template: words at -2..2, word bigrams -1/0 and 0/1, and B (a corpus with a column
              between the word and the label adds it at -1..1 and its bigrams -1/0, 0/1); for CoNLL-2000
              CRF++'s own example/chunking template (configs/crfpp_chunking.template); for
              segmentation the same seven patterns over the characters)
    CRFsuite  python benchmarks/crfsuite_rich.py train --kind words train.txt crfsuite.model
              python benchmarks/crfsuite_rich.py tag --kind words crfsuite.model eval.txt crfsuite.out
              (python-crfsuite's L-BFGS, c1 = c2 = 0.1, 100 iterations, fed sentence by
              sentence with the usual rich features, --kind chars for segmentation; see
              that script. Its Python feature building is timed apart from CRFsuite's
              training call: features CPU s in the record)
    Wapiti    wapiti train -p template train.txt wapiti.model
              wapiti label -c -m wapiti.model eval.txt wapiti.out
              (Wapiti 1.5.0's defaults: L-BFGS, rho1 = 0.5, rho2 = 1e-4, one thread; the
              same template as CRF++, which Wapiti reads as patterns)

CRF++ and Wapiti are built from ../shared/peers/{crfpp,wapiti}-src.tar.gz with their own
`./configure && make` and `make` into a cache folder (benchmarks/peer_build.py); a peer
that does not build, or a command that fails, gives its rows an error instead of figures.

Every output is scored by seqbil's own scorer (seqbil.evaluation.score) against the
gold labels of the scored split: token accuracy for POS, conlleval F1 for chunking, SIGHAN
word F1 for segmentation (the training words give the OOV figures). Each command runs in a
subprocess of its own: CPU seconds are its user + sys time (os.wait4, its children
included), peak RSS its own (GNU time's %M when /usr/bin/time is there, else ru_maxrss),
wall seconds, and the model's size in bytes. --repeats N trains and tags each system N
times (default 1: the suite is long), the systems in turn; the record keeps every run's
figures, and min / median / max when N >= 2. The record is rewritten after each corpus
(with "complete": false until the last), so a stopped run keeps the corpora it finished.
--append adds this run's rows to the record already in --out (the same split, seqbil
options and --quick; a system run again on a corpus replaces its row there, the other
systems' rows stay): a suite too long for one sitting is run in parts (the peers once, and
seqbil again after a change), and the record keeps each part's command, commit, date,
machine and repeats, and the part of every row.

Writes results/suite/suite.json (the record) and suite.md (its table, benchmarks/tables.py):
one row per corpus, per system the score, training CPU seconds, training peak RSS and the
model's size, the best score in bold, then the average over the corpora every system ran.

    python benchmarks/suite.py [--split dev] [--corpora hi-indian,wtb,...] [--repeats 1]
        [--systems seqbil,crfpp,crfsuite,wapiti] [--seqbil-args "--learner crf"] [--data DIR]
        [--crfpp-src ...] [--wapiti-src ...] [--out results/suite] [--work DIR]
    python benchmarks/suite.py --quick    # hi-indian and wtb, one repeat, 3 iterations or
        # 2 epochs each (seqbil --epochs 2, crf_learn -m 3, crfsuite --iterations 3,
        # wapiti -i 3): every code path in seconds, for a test; its scores mean nothing
"""
import argparse
import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from peer_build import (build_crfpp, build_wapiti, column_sentences, default_crfpp_dir, default_wapiti_dir,
                        measure, message, sha256)
from record import ROOT, header, stats, write_record
from tables import HELDOUT, publish

POS = ("pt-macmorpho", "es-cast3lb", "eu-3lb", "en-masc", "en-npschat", "hi-indian", "bn-indian", "mr-indian",
       "te-indian")
CWS = ("udc", "wtb", "zx")
CORPORA = POS + ("conll2000",) + CWS
# HELDOUT (tables.py): kept apart from every choice of the defaults (data_scripts/get_heldout.sh), named
# entities with a POS column and part of speech, in languages and standards the suite does not have
QUICK = ("hi-indian", "wtb")
SYSTEMS = ("seqbil", "crfpp", "crfsuite", "wapiti")
SHOWN = {"seqbil": "seqbil", "crfpp": "CRF++", "crfsuite": "CRFsuite", "wapiti": "Wapiti"}
SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
HERE = Path(__file__).resolve().parent
# words (or characters) at -2..2, the bigrams -1/0 and 0/1, the label bigram
WORD_TEMPLATE = ("U00:%x[-2,0]\nU01:%x[-1,0]\nU02:%x[0,0]\nU03:%x[1,0]\nU04:%x[2,0]\n"
                 "U05:%x[-1,0]/%x[0,0]\nU06:%x[0,0]/%x[1,0]\n\nB\n")
CHUNK_TEMPLATE = ROOT / "configs" / "crfpp_chunking.template"  # CRF++'s example/chunking/template


# and every other column (a POS column of a named-entity corpus) at -1..1, and its bigrams -1/0 and 0/1
COLUMN_TEMPLATE = WORD_TEMPLATE.replace("\n\nB\n", "\nU10:%x[-1,1]\nU11:%x[0,1]\nU12:%x[1,1]\n"
                                                  "U13:%x[-1,1]/%x[0,1]\nU14:%x[0,1]/%x[1,1]\n\nB\n")


def task_of(name):
    return HELDOUT.get(name) or ("pos" if name in POS else "chunk" if name == "conll2000" else "cws")


CONFIG = {"pos": "pos", "chunk": "conll2000", "cws": "cws", "ner": "ner"}
METRIC = {"pos": "accuracy", "chunk": "chunk", "cws": "segment", "ner": "chunk"}


# --- the corpora -----------------------------------------------------------------------------------

def find(folder, name):
    """FOLDER/NAME, gzipped or not."""
    for path in (folder / (name + ".gz"), folder / name):
        if path.is_file():
            return path
    sys.exit(f"suite: {folder / name}(.gz) not found (give --data; for the held-out corpora --heldout, after "
             "data_scripts/get_heldout.sh)")


def read_text(path):
    with (gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz")
          else open(path, encoding="utf-8")) as f:
        return f.read()


def segmented_sentences(text):
    """Sentences as word lists (blank lines skipped)."""
    return [line.split() for line in text.splitlines() if line.split()]


def conll2000_split(sentences):
    """(train, dev) of CoNLL-2000's train.txt: the last len // 10 sentences are dev."""
    cut = len(sentences) - len(sentences) // 10
    return sentences[:cut], sentences[cut:]


def write_columns(path, sentences):
    with open(path, "w", encoding="utf-8") as f:
        for s in sentences:
            f.write("".join(" ".join(row) + "\n" for row in s) + "\n")


def char_rows(words):
    """A segmented sentence as character rows [char, B/I/E/S]."""
    from seqbil.formats.sighan import bies_tags
    return [[c, t] for c, t in zip("".join(words), bies_tags(words))]


class Corpus:
    """One corpus of the suite, written into its work folder: train.txt and eval.txt in
    columns (and train.seg.txt, eval.raw.txt for segmentation); gold labels and, for
    segmentation, characters and the training vocabulary."""

    def __init__(self, name, data, split, folder, heldout=None):
        self.name, self.task, self.split, self.folder = name, task_of(name), split, folder
        folder.mkdir(parents=True, exist_ok=True)
        self.note = None
        if name in HELDOUT or self.task == "pos":
            src = heldout / "heldout" / name if name in HELDOUT else data / "pos-more" / name
            train = column_sentences(read_text(find(src, "train.txt")))
            scored = column_sentences(read_text(find(src, f"{split}.txt")))
        elif self.task == "chunk":
            src = data / "conll2000"
            train, dev = conll2000_split(column_sentences(read_text(find(src, "train.txt"))))
            scored = dev if split == "dev" else column_sentences(read_text(find(src, "test.txt")))
            self.note = (f"no dev split: the last {len(dev):,} sentences of train.txt are dev; every system trains "
                         f"on the first {len(train):,}")
        else:
            src = data / "cws-more" / name
            seg_train = segmented_sentences(read_text(find(src, "train.txt")))
            seg_scored = segmented_sentences(read_text(find(src, f"{split}.txt")))
            (folder / "train.seg.txt").write_text("".join(" ".join(s) + "\n" for s in seg_train), encoding="utf-8")
            (folder / "eval.raw.txt").write_text("".join("".join(s) + "\n" for s in seg_scored), encoding="utf-8")
            self.vocabulary = {w for s in seg_train for w in s}
            train, scored = [char_rows(s) for s in seg_train], [char_rows(s) for s in seg_scored]
        write_columns(folder / "train.txt", train)
        write_columns(folder / "eval.txt", scored)
        template = (CHUNK_TEMPLATE.read_text(encoding="utf-8") if self.task == "chunk" else
                    COLUMN_TEMPLATE if min(len(row) for s in train for row in s) > 2 else WORD_TEMPLATE)
        (folder / "template").write_text(template, encoding="utf-8")
        self.template = template
        self.tokens = [[row[0] for row in s] for s in scored]
        self.gold = [[row[-1] for row in s] for s in scored]
        self.info = {"task": self.task, "metric": METRIC[self.task], "source": str(src),
                     "train_sentences": len(train), "train_tokens": sum(map(len, train)),
                     "eval_sentences": len(scored), "eval_tokens": sum(map(len, scored)),
                     "labels": len({row[-1] for s in train for row in s})}
        if self.note:
            self.info["note"] = self.note

    def score(self, pred):
        """seqbil's scores of predicted label sequences (lined up with the scored split's
        tokens): the headline figure and the rest."""
        from seqbil.evaluation import headline, score
        metric = METRIC[self.task]
        if metric == "segment":
            r = score(metric, self.gold, pred, chars=self.tokens, vocabulary=self.vocabulary)
        else:
            r = score(metric, self.gold, pred)
        keep = {k: v for k, v in r.items() if isinstance(v, (int, float, str)) and k != "scheme"}
        return headline(r)[1], keep

    def read_output(self, path, kind):
        """Predicted labels of an output: the last field of each token line (columns), or
        the B/I/E/S tags of each segmented line (seqbil's segmentation output). Raises
        ValueError when it does not line up with the scored split."""
        text = path.read_text(encoding="utf-8")
        if kind == "segmented":
            from seqbil.formats.sighan import bies_tags
            lines = [line.split() for line in text.splitlines()]
            if len(lines) != len(self.tokens) or any("".join(w) != "".join(c) for w, c in zip(lines, self.tokens)):
                raise ValueError(f"{path.name} does not line up with the scored split's characters")
            return [bies_tags(w) for w in lines]
        out = column_sentences(text)
        if len(out) != len(self.tokens) or any(len(o) != len(t) or any(r[0] != w for r, w in zip(o, t))
                                               for o, t in zip(out, self.tokens)):
            raise ValueError(f"{path.name} does not line up with the scored split's tokens")
        return [[r[-1] for r in s] for s in out]


# --- running ---------------------------------------------------------------------------------------

class System:
    """One system on one corpus: its commands (as run, and as shown), its runs, its error."""

    def __init__(self, key, train_cmd, tag_cmd, shown, model, output, kind="columns", error=None):
        self.key, self.train_cmd, self.tag_cmd, self.shown = key, train_cmd, tag_cmd, shown
        self.model, self.output, self.kind = model, output, kind
        self.runs, self.error = [], error

    def row(self, repeats):
        row = {"system": SHOWN[self.key], "command": self.shown}
        if self.error:
            return {**row, "error": self.error}
        row["runs"] = self.runs
        if repeats >= 2:
            row["stats"] = {key: stats([r[key] for r in self.runs]) for key in self.runs[0]
                            if isinstance(self.runs[0][key], (int, float)) and not isinstance(self.runs[0][key], bool)}
        return row


def make_systems(corpus, tools, args):
    """The four systems' commands on a corpus (the peers not built get their reason)."""
    cws, quick = corpus.task == "cws", args.quick
    train_file = "train.seg.txt" if cws else "train.txt"
    eval_in = "eval.raw.txt" if cws else "eval.txt"
    extra = shlex.split(args.seqbil_args or "")
    config = [] if "--config" in extra else ["--config", CONFIG[corpus.task]]
    epochs = ["--epochs", "2"] if quick and "--epochs" not in extra else []
    user = [*config, "--train", train_file, "--model", "seqbil.sbm", "-q", *epochs, *extra]
    tag = ["-m", "seqbil.sbm", eval_in, "-o", "seqbil.out"]
    systems = {"seqbil": System("seqbil", [*SEQBIL, "train", *user], [*SEQBIL, "tag", *tag],
                                f"seqbil train {shlex.join(user)}; seqbil tag {shlex.join(tag)}", "seqbil.sbm",
                                "seqbil.out", "segmented" if cws else "columns")}
    crfpp = tools.get("crfpp")
    flags = ["-p", str(args.crfpp_threads), *(["-m", "3"] if quick else [])]
    learn = [*flags, "template", "train.txt", "crfpp.model"]
    if isinstance(crfpp, Path):
        systems["crfpp"] = System("crfpp", [crfpp / "crf_learn", *learn], [crfpp / "crf_test", "-m", "crfpp.model",
                                                                           "eval.txt"],
                                  f"crf_learn {shlex.join(learn)}; crf_test -m crfpp.model eval.txt > crfpp.out",
                                  "crfpp.model", "crfpp.out")
    kind = ["--kind", "chars" if cws else "words"]
    its = ["--iterations", "3"] if quick else []
    cs_train = ["train", *kind, *its, "train.txt", "crfsuite.model"]
    cs_tag = ["tag", *kind, "crfsuite.model", "eval.txt", "crfsuite.out"]
    script = [sys.executable, str(HERE / "crfsuite_rich.py")]
    systems["crfsuite"] = System("crfsuite", [*script, *cs_train], [*script, *cs_tag],
                                 f"python benchmarks/crfsuite_rich.py {shlex.join(cs_train)}; "
                                 f"python benchmarks/crfsuite_rich.py {shlex.join(cs_tag)}", "crfsuite.model",
                                 "crfsuite.out")
    wapiti = tools.get("wapiti")
    w_train = ["train", *(["-i", "3"] if quick else []), "-p", "template", "train.txt", "wapiti.model"]
    w_label = ["label", "-c", "-m", "wapiti.model", "eval.txt", "wapiti.out"]
    if isinstance(wapiti, Path):
        systems["wapiti"] = System("wapiti", [wapiti, *w_train], [wapiti, *w_label],
                                   f"wapiti {shlex.join(w_train)}; wapiti {shlex.join(w_label)}", "wapiti.model",
                                   "wapiti.out")
    out = []
    for key in args.systems:
        if key in args.not_run:  # (its row says why, and its command)
            out.append(System(key, None, None, systems[key].shown if key in systems else None, None, None,
                              error=f"not run: {args.not_run[key]}"))
        elif key in systems:
            out.append(systems[key])
        else:  # a peer that was not built: its reason
            out.append(System(key, None, None, None, None, None, error=f"not run: {tools[key]}"))
    return out


def run_once(system, corpus, env, work):
    """Train, tag and score once; the run's figures, or None with system.error set."""
    folder = corpus.folder
    stem = system.model.split(".")[0]
    status, wall, cpu, rss, err = measure(system.train_cmd, folder, stdout=folder / f"{stem}.train.log", env=env)
    if status:
        system.error = f"training (exit status {status}): {message(err, work, ROOT)}"
        return None
    train_log = (folder / f"{stem}.train.log").read_text(encoding="utf-8", errors="replace")
    tag_stdout = folder / f"{stem}.tag.log" if system.key != "crfpp" else folder / system.output
    status, tag_wall, tag_cpu, tag_rss, tag_err = measure(system.tag_cmd, folder, stdout=tag_stdout, env=env)
    if status:
        system.error = f"tagging (exit status {status}): {message(tag_err, work, ROOT)}"
        return None
    try:
        headline, scores = corpus.score(corpus.read_output(folder / system.output, system.kind))
    except (ValueError, UnicodeDecodeError) as exc:
        system.error = f"output: {exc}"
        return None
    result = {"score": headline, "train_cpu_s": cpu, "train_wall_s": wall, "train_peak_rss_mib": rss,
              "tag_cpu_s": tag_cpu, "tag_wall_s": tag_wall, "tag_peak_rss_mib": tag_rss,
              "model_bytes": (folder / system.model).stat().st_size, "scores": scores}
    if system.key == "seqbil":  # what the model says was chosen, and on what
        from seqbil.model import Model
        training = Model.load(folder / system.model).training or {}
        result["learner"] = training.get("learner")
        result["selection"] = training.get("selection")
    elif system.key == "crfpp":
        result["iterations"] = len(re.findall(r"^iter=", train_log, re.M))
    elif system.key == "crfsuite":
        result.update(json.loads(train_log.strip().splitlines()[-1]))
        result["tag_features"] = json.loads((folder / f"{stem}.tag.log").read_text().strip().splitlines()[-1])
    elif system.key == "wapiti":
        result["iterations"] = len(re.findall(r"^\s*\[\s*\d+\]", err.replace("\r", "\n"), re.M))
    return result


def build_peers(args):
    """{crfpp: bin folder, wapiti: program} for the peers asked for and built; a peer
    that is not gets the reason instead; and what the record says of each."""
    tools, info = {}, {}
    for key, src, folder, build, default in (
            ("crfpp", args.crfpp_src, args.crfpp_dir, build_crfpp, default_crfpp_dir),
            ("wapiti", args.wapiti_src, args.wapiti_dir, build_wapiti, default_wapiti_dir)):
        if key not in args.systems:
            continue
        src = Path(src)
        if not src.is_file():
            tools[key] = f"{src.name} not found (its source tarball; give --{key}-src)"
        else:
            try:
                tools[key] = build(src, folder or default(src))
            except SystemExit as exc:
                tools[key] = f"build failed: {exc}"
        if isinstance(tools[key], Path):
            info[key] = {"name": SHOWN[key], "source": src.name, "sha256": sha256(src)}
            if key == "crfpp":
                env = {**os.environ, "LD_LIBRARY_PATH": str(tools[key].parent / "lib")}
                info[key]["version"] = subprocess.run([tools[key] / "crf_learn", "--version"], capture_output=True,
                                                      text=True, env=env).stdout.strip()
                info[key]["build"] = "./configure --prefix=DIR && make -j2 && make install"
                info[key]["threads"] = args.crfpp_threads
            else:
                said = subprocess.run([tools[key], "--version"], capture_output=True, text=True)
                info[key]["version"] = (said.stdout + said.stderr).strip().split("\n")[0]  # "Wapiti v1.5.0"
                info[key]["build"] = "make"
        else:
            info[key] = {"name": SHOWN[key], "error": tools[key]}
    if "crfsuite" in args.systems:
        try:
            from importlib.metadata import version
            info["crfsuite"] = {"name": SHOWN["crfsuite"], "version": f"python-crfsuite {version('python-crfsuite')}"}
        except Exception as exc:  # noqa: BLE001 - the record says what is missing
            info["crfsuite"] = {"name": SHOWN["crfsuite"], "error": str(exc)}
    return tools, info


def appended(path, record, error):
    """The record at path with this run (record) as its next part: the earlier parts'
    corpora and rows kept (each row with its part), the peers' versions of both."""
    before = json.loads(path.read_text(encoding="utf-8"))
    for key in ("benchmark", "split", "seqbil_args", "quick"):
        if before.get(key) != record[key]:
            error(f"--append: {path} holds a record of {key} {before.get(key)!r}, not {record[key]!r}")
    parts = before.get("parts") or [{key: before[key] for key in ("command", "commit", "date", "machine", "repeat")}]
    corpora = {name: {**c, "rows": [{"part": 0, **r} for r in c["rows"]]} for name, c in before["corpora"].items()}
    part = {key: record[key] for key in ("command", "commit", "date", "machine", "repeat")}
    return {**record, "peers": {**before.get("peers", {}), **record["peers"]}, "parts": parts + [part],
            "corpora": corpora}


def same_corpus(before, name, info, error):
    """Refuse a corpus whose sizes or scored split disagree with those of the corpus an
    earlier part ran on under its name: before its runs, which it would waste."""
    if before is not None and any(before.get(key) != value for key, value in info.items()
                                  if key != "source"):  # (source: a path)
        error(f"--append: {name} is not the corpus the record's earlier part ran on")


def merged_rows(before, rows):
    """A corpus's rows: this run's, and those of the other systems an earlier part ran
    on it (same_corpus)."""
    if before is None:
        return rows
    ran = {r["system"] for r in rows}
    kept = {r["system"]: r for r in before["rows"] if r["system"] not in ran}
    new = {r["system"]: r for r in rows}
    return [kept.get(SHOWN[key]) or new[SHOWN[key]] for key in SYSTEMS if SHOWN[key] in kept or SHOWN[key] in new]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"),
                    help="folder holding pos-more/, conll2000/ and cws-more/ (default: ../shared/data)")
    ap.add_argument("--split", choices=("dev", "test"), default="dev", help="the split scored (test: reporting only)")
    ap.add_argument("--corpora", help=f"comma-separated, of {','.join(CORPORA)} (default: all; --quick: "
                                      f"{','.join(QUICK)}), or of the held-out {','.join(HELDOUT)}")
    ap.add_argument("--heldout", default=str(ROOT / "data"),
                    help="folder holding heldout/ (data_scripts/get_heldout.sh; default: data/ of the repository)")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {','.join(SYSTEMS)}")
    ap.add_argument("--repeats", type=int, default=1, help="trainings of each system on each corpus (default 1)")
    ap.add_argument("--seqbil-args", help="more options of seqbil train (a --config here replaces the suite's)")
    ap.add_argument("--crfpp-src", default=str(ROOT.parent / "shared" / "peers" / "crfpp-src.tar.gz"))
    ap.add_argument("--crfpp-dir", help="where CRF++ is built, once (default: under $XDG_CACHE_HOME or ~/.cache)")
    ap.add_argument("--crfpp-threads", type=int, default=1, help="crf_learn -p (default 1: one core)")
    ap.add_argument("--wapiti-src", default=str(ROOT.parent / "shared" / "peers" / "wapiti-src.tar.gz"))
    ap.add_argument("--wapiti-dir", help="where Wapiti is built, once (default: under $XDG_CACHE_HOME or ~/.cache)")
    ap.add_argument("--quick", action="store_true", help="the smallest corpora, one repeat, a few iterations: a test")
    ap.add_argument("--out", default=str(ROOT / "results" / "suite"), help="where the record and table go")
    ap.add_argument("--work", help="keep the corpora, models and outputs here (default: a temporary folder)")
    ap.add_argument("--append", action="store_true",
                    help="add this run's rows to the record already in --out, as a part of it (see above)")
    ap.add_argument("--not-run", action="append", default=[], metavar="SYSTEM=REASON",
                    help="a system of --systems not run on these corpora, its row giving the reason (a peer whose "
                         "runs take longer than the sitting has): it replaces an earlier part's row with --append")
    args = ap.parse_args()
    reasons = [item.partition("=") for item in args.not_run]
    if any(not sep or key not in SYSTEMS or not why.strip() for key, sep, why in reasons):
        ap.error(f"--not-run takes SYSTEM=REASON, a system of {','.join(SYSTEMS)}")
    args.not_run = {key: why.strip() for key, _, why in reasons}
    names = (args.corpora or ",".join(QUICK if args.quick else CORPORA)).split(",")
    if set(names) - set(CORPORA) - set(HELDOUT):
        ap.error(f"unknown corpora: {', '.join(sorted(set(names) - set(CORPORA) - set(HELDOUT)))}")
    args.systems = args.systems.split(",")
    if set(args.systems) - set(SYSTEMS):
        ap.error(f"unknown systems: {', '.join(sorted(set(args.systems) - set(SYSTEMS)))}")
    repeats = 1 if args.quick else args.repeats
    data = Path(args.data)
    tools, peers = build_peers(args)
    paths = [str(p.parent / "lib") for p in tools.values() if isinstance(p, Path) and (p.parent / "lib").is_dir()]
    env = {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [*paths, os.environ.get("LD_LIBRARY_PATH")]))}
    record = {**header(), "benchmark": "suite", "split": args.split, "repeat": repeats, "quick": args.quick,
              "seqbil_args": args.seqbil_args, "peers": peers, "corpora": {}}
    part = {key: record[key] for key in ("command", "commit", "date", "machine", "repeat")}
    if args.append and (Path(args.out) / "suite.json").exists():
        record = appended(Path(args.out) / "suite.json", record, ap.error)
    parts = record.get("parts", [part])
    tmp = None if args.work else tempfile.TemporaryDirectory()
    work = Path(args.work or tmp.name).resolve()
    try:
        for name in names:
            corpus = Corpus(name, data, args.split, work / name, Path(args.heldout))
            print(f"{name}: {corpus.info['train_sentences']:,} training, {corpus.info['eval_sentences']:,} "
                  f"{args.split} sentences", file=sys.stderr)
            same_corpus(record["corpora"].get(name), name, corpus.info, ap.error)
            systems = make_systems(corpus, tools, args)
            for n in range(repeats):  # the systems in turn, so a drift of the machine hits them alike
                for system in systems:
                    if system.error is not None:
                        continue
                    result = run_once(system, corpus, env, work)
                    if result is None:
                        print(f"  {SHOWN[system.key]}: failed: {system.error}", file=sys.stderr)
                    else:
                        system.runs.append(result)
                        print(f"  {SHOWN[system.key]} run {n + 1}: {result['score']:.2f}, train CPU "
                              f"{result['train_cpu_s']:.2f} s, {result['train_peak_rss_mib']:.0f} MiB", file=sys.stderr)
            rows = [{**s.row(repeats), "part": len(parts) - 1} if "parts" in record else s.row(repeats)
                    for s in systems]
            rows = merged_rows(record["corpora"].get(name), rows)
            record["corpora"][name] = {**corpus.info, "template": corpus.template, "rows": rows}
            record["complete"] = name == names[-1]
            # after each corpus: a run stopped on a long corpus keeps those it finished (complete: false)
            write_record(Path(args.out) / "suite.json", record)
    finally:
        if tmp:
            tmp.cleanup()
    publish(Path(args.out) / "suite.json", record)


if __name__ == "__main__":
    main()
