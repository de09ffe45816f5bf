"""Held-out corpora (the heldout command, get_heldout.sh): named-entity and part-of-speech corpora
in languages and annotation standards that none of the development suite's corpora share, kept
apart from the choice of seqbil's defaults and read only to judge them.  There is no local copy of
them in ../shared: they are downloaded from their official sources, or read from a directory that
holds those sources' files (--from).

- es-conll2002, nl-conll2002: the CoNLL-2002 shared task's Spanish and Dutch named-entity data, as
  NLTK's data collection distributes them (conll2002.zip: esp.train, esp.testa, esp.testb and
  ned.*; `word POS label` lines, IOB2).  train, testa and testb are the train, dev and test splits;
  the Dutch files' -DOCSTART- lines (a document's start, not a token) are dropped.
- af-afribooms, mt-mudt: Universal Dependencies treebanks (Afrikaans AfriBooms, Maltese MUDT), their
  own train/dev/test files at a fixed release, as `word UPOS` lines (multiword-token ranges and
  empty nodes, which are not tokens of the text, are dropped; a space inside a word becomes _).

The converted text of each file must be the one whose sha256 is recorded here (HELDOUT_SHA256): a
source that gives another text is refused, so that every measurement reads the same corpora."""
import io
import os
import tempfile
import zipfile
import zlib
from typing import NamedTuple

from . import common

HELD_PROG = "get_heldout"
SPLITS = ("train", "dev", "test")
FILES = tuple(f"{split}.txt.gz" for split in SPLITS)
UD_URL = "https://raw.githubusercontent.com/UniversalDependencies"


class Source(NamedTuple):
    """Where a corpus comes from: the file names of its train, dev and test splits in the source
    directory (or zip member names), their download URLs, and how a file's text becomes sentences."""
    names: tuple
    urls: tuple
    kind: str  # conll2002 or conllu


def _ud(repo, tag, code):
    names = tuple(f"{code}-ud-{split}.conllu" for split in SPLITS)
    return Source(names, tuple(f"{UD_URL}/{repo}/{tag}/{name}" for name in names), "conllu")


def _conll2002(lang):
    names = tuple(f"{lang}.{part}" for part in ("train", "testa", "testb"))
    return Source(names, (f"{common.NLTK_URL}/conll2002.zip",) * 3, "conll2002")


HELDOUT = {
    "es-conll2002": _conll2002("esp"),
    "nl-conll2002": _conll2002("ned"),
    "af-afribooms": _ud("UD_Afrikaans-AfriBooms", "r2.18", "af_afribooms"),
    "mt-mudt": _ud("UD_Maltese-MUDT", "r2.16", "mt_mudt"),
}
# the task each corpus is judged on: the config it is trained with
TASK = {"es-conll2002": "ner", "nl-conll2002": "ner", "af-afribooms": "pos", "mt-mudt": "pos"}
# sha256 of the converted (uncompressed) train, dev and test text
HELDOUT_SHA256 = {
    "es-conll2002": ("a20d95cab7d88a19a86f8c1ad6329325c99fbd9529ed978cbd7e31d4b01b4008",
                    "85c17793b77881c53d19017d9d0f1e6fb98b7ddcab54a5f24b05ed1793103c87",
                    "1f8f7a392c6d4979a5592a5794eed43d7869b46da6851bbcde99714149f1d016"),
    "nl-conll2002": ("85cbac7b95de57be39b543a6c44b5e69b1087fc50fe5b33524e041d0fdba4305",
                    "d475225b466a9d28110718f5802a9e1906410c7c4765526a1a99b74c3e75b34f",
                    "639b3f5a039b1f5ee6e1bd1ce5009aa2745006abee5d46df2840d1c246cb326c"),
    "af-afribooms": ("10125bbaa7ce02603cb8599b8d690bf5af98c84f5b977a35b21db64ad35e894f",
                    "c513e324bad5db26f62bb42795e860ce71d46696aa5a3e581de7eb46dc5a8ea0",
                    "6b46ea13cb99faf530678fa73270c0d3bf73c86882fb1ef90a93b3b243b5700f"),
    "mt-mudt": ("791a810a00de90ac45685127c957b84e8a0ad66e664ade16ee45163a5a034704",
               "9cdbd5ce4be716b93af9c2eb114448ecb3c7dc03fcbe680c6a6993ea1de930cf",
               "ec7d480e8f2cf1e41bc48ff07ab65d68e0a6c6dad361345d9856cb74db1e9a92"),
}
HELDOUT_CORPORA = tuple(HELDOUT)

HELD_USAGE = f"""\
Usage: bash data_scripts/get_heldout.sh [--from DIR] [--out DIR] [--only WHICH] [--force]
   or: python3 data_scripts/corpora.py heldout [--from DIR] [--out DIR] [--only WHICH] [--force]

Held-out corpora, in languages and standards the development suite does not
have, to judge the shipped configs on (never to choose them):
  es-conll2002  Spanish named entities (CoNLL-2002), word POS label   NLTK conll2002
  nl-conll2002  Dutch named entities (CoNLL-2002), word POS label     NLTK conll2002
  af-afribooms  Afrikaans POS (UD AfriBooms r2.18), word UPOS          UD GitHub
  mt-mudt       Maltese POS (UD MUDT r2.16), word UPOS                 UD GitHub
installed as
  <out>/heldout/<c>/train.txt.gz, dev.txt.gz, test.txt.gz
        one token a line, fields separated by a space, a blank line after
        each sentence, UTF-8 (CoNLL-2002: train, testa, testb; UD: its own
        train, dev and test)
  <out>/heldout/<c>/SHA256SUMS    sha256 of the installed files

Without --from it downloads {common.NLTK_URL}/conll2002.zip
and {UD_URL}/<treebank>/<release>/<file>.conllu.
The converted text must be the reference text (its sha256 is known here).
There is no local copy of these corpora in ../shared.

Options:
  --from DIR   read the sources' files from DIR instead of downloading: conll2002.zip
               (or its unpacked conll2002/ directory), and the treebanks' .conllu
               files (af_afribooms-ud-train.conllu, ...), in DIR or a subdirectory
  --out DIR    data directory to install into (default: <repo>/data);
               the files go to DIR/heldout/<c>/
  --only WHICH install only some of the corpora: a comma-separated list of
               {", ".join(HELDOUT_CORPORA)}
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

If a corpus cannot be obtained, the others are installed and the exit status is 1.
Environment: SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""


# ---------------------------------------------------------------- the sources' formats

def conll2002_sentences(text):
    """`word POS label` sentences of a CoNLL-2002 file, -DOCSTART- lines dropped."""
    sentences, words = [], []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if words:
                sentences.append(words)
            words = []
            continue
        if len(fields) != 3:
            raise ValueError(f"not a `word POS label` line: {line!r}")
        words.append(fields)
    if words:
        sentences.append(words)
    return sentences


def conllu_sentences(text):
    """`word UPOS` sentences of a CoNLL-U file: its token lines (not the multiword-token ranges 1-2 or
    the empty nodes 1.1), FORM and UPOS."""
    sentences, words = [], []
    for line in text.splitlines():
        if not line.strip():
            if words:
                sentences.append(words)
            words = []
            continue
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 10:
            raise ValueError(f"not a CoNLL-U token line: {line!r}")
        if fields[0].isdigit():
            words.append(["_".join(fields[1].split()), fields[3]])
    if words:
        sentences.append(words)
    return sentences


def text_lines(sentences):
    """Sentences as the installed text: a line a token, then a blank line."""
    for words in sentences:
        if any(not all(field and not field.isspace() for field in row) for row in words):
            raise ValueError(f"a blank field in {words!r}")
        yield "".join(" ".join(row) + "\n" for row in words)


# ---------------------------------------------------------------- installing

def _find(source, name):
    """The file NAME in the directory SOURCE, or in conll2002.zip / conll2002/ there, or in a
    subdirectory: its text, or None."""
    for d, _, files in os.walk(source):
        if name in files:
            with open(os.path.join(d, name), encoding="utf-8-sig") as f:
                return f.read()
        if "conll2002.zip" in files:
            with zipfile.ZipFile(os.path.join(d, "conll2002.zip")) as z:
                if f"conll2002/{name}" in z.namelist():
                    return io.TextIOWrapper(z.open(f"conll2002/{name}"), "utf-8-sig").read()
    return None


def _download(url, work, fetched, tried):
    """URL downloaded once in a run: its path, or None (a note in TRIED)."""
    if url not in fetched:
        path = os.path.join(tempfile.mkdtemp(dir=work), os.path.basename(url))
        common.say(HELD_PROG, f"downloading {url}")
        try:
            common.download(url, path)
        except (common.DownloadError, OSError) as e:
            tried.append(f"download {url}: {e}")
            path = None
        fetched[url] = path
    return fetched[url]


def _texts(corpus, source, work, fetched, tried):
    """The text of CORPUS's train, dev and test files, from SOURCE or downloaded; None (a note in TRIED)."""
    spec, texts = HELDOUT[corpus], []
    for name, url in zip(spec.names, spec.urls):
        if source:
            text = _find(source, name)
            if text is None:
                tried.append(f"{common.showpath(source)}: no {name} in it (nor in a conll2002.zip there)")
                return None
        else:
            path = _download(url, work, fetched, tried)
            if path is None:
                return None
            if url.endswith(".zip"):
                with zipfile.ZipFile(path) as z:
                    text = io.TextIOWrapper(z.open(f"conll2002/{name}"), "utf-8-sig").read()
            else:
                with open(path, encoding="utf-8-sig") as f:
                    text = f.read()
        texts.append(text)
    return texts


def install_corpus(corpus, source, out, scratch, fetched, force, tried):
    """Install CORPUS into OUT/CORPUS; False (notes in TRIED) if it could not be obtained."""
    dest = f"{out}/{corpus}"
    if not force and common.manifest_verify(dest, FILES) is None:
        common.say_up_to_date(HELD_PROG, dest)
        return True
    where = f"local files in {common.showpath(source)}" if source else "the official sources"
    try:
        texts = _texts(corpus, source, scratch.work(), fetched, tried)
        if texts is None:
            return False
        convert = conll2002_sentences if HELDOUT[corpus].kind == "conll2002" else conllu_sentences
        scratch.makedirs(dest)
        stage = scratch.tempdir(dest)
        digests = tuple(common.write_gz(f"{stage}/{name}", text_lines(convert(text)))[1]
                        for name, text in zip(FILES, texts))
    except (OSError, EOFError, KeyError, ValueError, zlib.error, zipfile.BadZipFile) as e:
        tried.append(f"{where}: could not read/convert {corpus} ({e})")
        return False
    if digests != HELDOUT_SHA256[corpus]:
        differ = [name for name, a, b in zip(FILES, digests, HELDOUT_SHA256[corpus]) if a != b]
        tried.append(f"{where}: not the reference text of {corpus} ({', '.join(differ)} differ)")
        return False
    common.install_staged(HELD_PROG, dest, stage, FILES, where)
    return True


def held_failed(failed, tried, installed):
    return common.report_failed(HELD_PROG, failed, tried, installed, [
        "Point --from at a directory with the sources' files (conll2002.zip, the treebanks' .conllu files)."])


def install_heldout(out=None, source=None, only=None, force=False):
    """Install the held-out corpora into OUT/heldout/<c> (OUT default <repo>/data; ONLY: a comma-separated
    list of some of them).  Returns the exit status."""
    selected = common.only_list(only, HELDOUT_CORPORA)
    if source and not os.path.isdir(source):
        common.error(HELD_PROG, f"--from {source}: no such directory")
        return 1
    fetched = {}
    with common.Scratch() as scratch:
        root = f"{out or common.DATA_DIR}/heldout"
        return common.install_each(HELD_PROG, [c for c in HELDOUT_CORPORA if c in selected], held_failed,
                                   lambda c, notes: install_corpus(c, source, root, scratch, fetched, force, notes))
