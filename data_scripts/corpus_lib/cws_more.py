"""Three more Chinese word segmentation corpora (the cws-more command, get_cws_more.sh): udc,
wtb and zx of the multi-criteria segmentation papers, downloaded from hankcs/multi-criteria-cws
or taken from a local copy, converted from CoNLL or word_POS files to one sentence of
space-separated words per line, and installed into <out>/cws-more/<c>/, each corpus on its own."""
import os
import tempfile

from . import common

CWS_PROG = "get_cws_more"
CWS_URL = "https://raw.githubusercontent.com/hankcs/multi-criteria-cws/master/data/other"
CWS_CORPORA = ("udc", "wtb", "zx")
CWS_SPLITS = ("train", "dev", "test")
CWS_README = "README.txt"  # wtb's licence, which must be installed with the data

CWS_USAGE = f"""\
Usage: bash data_scripts/get_cws_more.sh [--from DIR] [--out DIR] [--only WHICH] [--force]
   or: python3 data_scripts/corpora.py cws-more [--from DIR] [--out DIR] [--only WHICH] [--force]

Three more Chinese word segmentation corpora, as collected for multi-criteria
segmentation by Chen et al. (ACL 2017) and He et al. (2019):
  udc  Universal Dependencies Chinese (UD_Chinese-GSD)
  wtb  Chinese Weibo Treebank (Wang et al., EMNLP 2014)
  zx   Zhuxian, a web novel (Zhang et al., 2014)
installed as
  <out>/cws-more/<c>/train.txt, dev.txt, test.txt   one sentence per line, words
                                                    separated by single spaces, UTF-8
  <out>/cws-more/wtb/README.txt                     wtb's licence: keep it with the data
  <out>/cws-more/<c>/SHA256SUMS                     sha256 of the installed files

Without --from it downloads from {CWS_URL}/
  udc/ and wtb/{{train,dev,test}}.conll   converted: the words are the second column
  zx/{{train,dev,test}}.zhuxian.wordpos   converted: word_POS tokens, the POS tags go
  wtb/README.txt
For a corpus whose download fails it uses the local copy in <repo>/../shared/data
(or $SEQBIL_LOCAL_DATA) and says so.

No checksums of the official files are known, so the sha256 of what was
installed is recorded in SHA256SUMS; the next run checks the installed files
against it and does nothing when they match (use --force to reinstall).

Options:
  --from DIR   take a local copy instead of downloading.  DIR is one of:
               a directory with a cws-more/ subdirectory (e.g. ../shared/data),
               a cws-more/ directory: <c>/{{train,dev,test}}.txt[.gz], wtb/README.txt,
               a clone of hankcs/multi-criteria-cws, its data/other/ directory, or
               a directory holding udc/ wtb/ zx/ with the files named as upstream
  --out DIR    data directory to install into (default: <repo>/data);
               the files go to DIR/cws-more/<c>/
  --only WHICH install only udc, wtb or zx (or a comma-separated list of them)
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

If a corpus cannot be obtained, the others are installed and the exit status is 1.
Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""


def conll_sentences(lines):
    """The sentences of CoNLL(-U) LINES: the words of the FORM (second) column, a blank line ending
    a sentence.  Comment lines (#) and multiword-token or empty-node lines (ids 3-4, 3.1) are skipped."""
    words = []
    for line in lines:
        if not line.strip():
            if words:
                yield " ".join(words)
            words = []
        elif not line.startswith("#"):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 2:
                raise ValueError(f"no FORM column in {line!r}")
            if "-" not in fields[0] and "." not in fields[0]:
                words.append(fields[1])
    if words:
        yield " ".join(words)


def wordpos_sentences(lines):
    """The sentences of LINES of word_POS tokens separated by spaces, without the _POS."""
    for line in lines:
        if tokens := line.split():
            yield " ".join(token.rsplit("_", 1)[0] for token in tokens)


def cws_upstream(corpus):
    """[(upstream file name, the function giving its sentences)] for each split of CORPUS."""
    if corpus == "zx":
        return [(f"{split}.zhuxian.wordpos", wordpos_sentences) for split in CWS_SPLITS]
    return [(f"{split}.conll", conll_sentences) for split in CWS_SPLITS]


def cws_readme(corpus):
    return [CWS_README] if corpus == "wtb" else []


def plan_cws(d, corpus):
    """The files of CORPUS in directory D, in the local copy's layout (train.txt[.gz], ...) or named
    as upstream (train.conll, ...), and wtb's README.txt; [] if D lacks any of them."""
    readme = [common.PlanItem(name, common.find_file(f"{d}/{name}")) for name in cws_readme(corpus)]
    for plan in ([common.PlanItem(f"{split}.txt", common.find_file(f"{d}/{split}.txt")) for split in CWS_SPLITS],
                 [common.PlanItem(f"{split}.txt", common.find_file(f"{d}/{name}"), None, sentences)
                  for split, (name, sentences) in zip(CWS_SPLITS, cws_upstream(corpus))]):
        if all(item.source for item in plan + readme):
            return plan + readme
    return []


def cws_from_path(path, corpus, tried):
    """CORPUS from the local directory PATH (not unpacked or converted yet)."""
    for d in (f"{path}/cws-more", f"{path}/data/other", path):
        if plan := plan_cws(f"{d}/{corpus}", corpus):
            return common.Found(plan, f"local copy {common.showpath(d)}/{corpus}")
    readme = "".join(f", {name}" for name in cws_readme(corpus))
    upstream = "{" + ",".join(name for name, _ in cws_upstream(corpus)) + "}"
    tried.append(f"local copy {common.showpath(path)}: " + (
        f"no {corpus}/{{train,dev,test}}.txt[.gz]{readme} (nor {corpus}/{upstream}{readme}) "
        "in it or in its cws-more/ or data/other/ subdirectory" if os.path.isdir(path) else "no such directory"))
    return None


def cws_download(corpus, scratch, tried):
    """Download CORPUS's upstream files (not converted yet); None if that fails."""
    work = tempfile.mkdtemp(prefix=f"{corpus}.", dir=scratch.work())
    names = [name for name, _ in cws_upstream(corpus)] + cws_readme(corpus)
    if common.download_files(CWS_PROG, [f"{CWS_URL}/{corpus}/{name}" for name in names], work, tried) is None:
        return None
    return common.Found(plan_cws(work, corpus), f"download from {CWS_URL}/{corpus}")


def cws_stage(found, scratch, tried):
    """FOUND's files unpacked and converted in the run's directory, so that a file that cannot be
    read is noticed before anything is installed: a Found of them, or None (a note in TRIED)."""
    if found is None:
        return None
    work = tempfile.mkdtemp(prefix="staged.", dir=scratch.work())
    for item in found.plan:
        staged = f"{work}/{item.name}"
        if not common.extract(item.source, staged, sentences=item.sentences):
            problem = "could not read/convert"
        elif os.path.getsize(staged) == 0:
            problem = "nothing in"
        else:
            continue
        tried.append(f"{found.description}: {problem} {os.path.basename(item.source)}")
        return None
    return common.Found([common.PlanItem(item.name, f"{work}/{item.name}") for item in found.plan], found.description)


def install_cws_corpus(dest, corpus, source, force, scratch, tried):
    """Install CORPUS into DEST from the local copy SOURCE or, without SOURCE, by download, falling
    back on the local copy.  False (notes in TRIED) if it could not be obtained."""
    expected = [f"{split}.txt" for split in CWS_SPLITS] + cws_readme(corpus)
    problem = None if force else common.manifest_verify(dest, expected)
    found = cws_from_path(source, corpus, tried) if source else None
    if not force and problem is None and (found or not source):
        common.say_up_to_date(CWS_PROG, dest)
        return True
    if source:
        found = cws_stage(found, scratch, tried)
    else:
        found = cws_stage(cws_download(corpus, scratch, tried), scratch, tried)
        if found is None:
            local = common.local_data_dir()
            common.warn(CWS_PROG, tried[-1])
            common.say(CWS_PROG, f"download failed; falling back to the local copy in {common.showpath(local)}")
            if found := cws_from_path(local, corpus, tried):
                found = cws_stage(found._replace(description=f"{found.description}, as the download failed"),
                                  scratch, tried)
    if found is None:
        return False
    if problem and os.path.isfile(f"{dest}/{common.MANIFEST}"):
        common.say(CWS_PROG, f"reinstalling {corpus}: {problem}")
    return common.install_plan(CWS_PROG, dest, found, scratch)


def cws_failed(failed, tried, installed):
    return common.report_failed(CWS_PROG, failed, tried, installed, [
        "Point --from at the local copy (a directory with cws-more/, a cws-more/ directory,",
        "a clone of hankcs/multi-criteria-cws or its data/other/ directory), e.g.:",
        "  bash data_scripts/get_cws_more.sh --from ../shared/data"])


def install_cws_more(out=None, source=None, only=None, force=False):
    """Install udc, wtb and zx into OUT/cws-more/<c> (OUT default <repo>/data; ONLY: a comma-separated
    list of some of them).  Returns the exit status."""
    selected = common.only_list(only, CWS_CORPORA)
    root = f"{out or common.DATA_DIR}/cws-more"
    with common.Scratch() as scratch:
        return common.install_each(CWS_PROG, [c for c in CWS_CORPORA if c in selected], cws_failed,
                                   lambda c, notes: install_cws_corpus(f"{root}/{c}", c, source, force, scratch, notes))
