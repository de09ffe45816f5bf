"""Part-of-speech corpora in several languages and sizes (the pos-more command, get_pos_more.sh):
nine corpora of five NLTK data packages, downloaded and converted to CoNLL columns `word TAG`,
split 80/10/10 by sentence order, checked against the local copy's text and installed
gzip-compressed into <out>/pos-more/<c>/, each corpus on its own, falling back on the local copy.

The conversion reads the packages' files directly (no nltk).  What it assumes of them, from NLTK's
corpus readers and the local copy's README (not checked on the real zips, hence the check of the
converted text against POS_SHA256):
- mac_morpho: text files `*.txt`, Latin-1, one `word_TAG` token a line; the tag is what follows the
  last `_`, and only its part before `|` is kept (coarse tags); a sentence ends at the tag `.`.
- conll2007: CoNLL-X files (tab-separated ID FORM LEMMA CPOSTAG POSTAG ...) `esp.*` (Cast3LB,
  UTF-8) and `eus.*` (3LB, read as Latin-1: NLTK says ISO-8859-2, but the local copy has its ñ),
  read in the order of their names (NLTK's: test before train); the word is FORM, the tag POSTAG;
  a blank line ends a sentence.
- masc_tagged: `spoken/*.txt` then `written/*.txt`, UTF-8, one sentence a line of `word_TAG` tokens
  separated by spaces.
- nps_chat: XML files `*.xml` (not README): each Post is a sentence of its terminals/t elements,
  the word and tag in their `word` and `pos` attributes, kept as they are.
- indian: `bangla.pos`, `hindi.pos`, `marathi.pos`, `telugu.pos`, UTF-8, one sentence a line of
  `word_TAG` tokens; lines starting with `<` are markup, not text.
Tags are kept as written (NLTK's readers upper-case the word_TAG tags; the local copy does not).
A token without a word or a tag is an error, so that an unexpected format is noticed."""
import functools
import io
import os
import tempfile
import zipfile
import zlib
from typing import NamedTuple
from xml.etree import ElementTree

from . import common

POS_PROG = "get_pos_more"
POS_SPLITS = ("train", "dev", "test")
POS_FILES = tuple(f"{split}.txt.gz" for split in POS_SPLITS)
# sha256 of the (uncompressed) train, dev and test text of each corpus of the local copy, the reference: the text
# converted from a download is checked against it
POS_SHA256 = {
    "pt-macmorpho": ("4dbdf97ae014d456233d07ab789f3b1cd12a86b5b66b655892440de3cde0906c",
                     "d0dde0294b73c06aabcf800b7bc1ff551ab81c63cc13e10718e13cf344d9dc0f",
                     "bdbaac60862565380488851981ea94ebe7cfafbbbda32daa8a617c0e33a0ebfd"),
    "es-cast3lb": ("4d0fc56dc236df42d1af55bd4f86f5532eee32bf330d9a7668a80c6cbcba9c48",
                   "a9eddee459d0050ba4f34eac3f47fa432c7819d60000c70bef1d8e7158cc2420",
                   "ba899f9ce5934f355aa51983c023f664bd53e9679ddc3d6ce37d7139feecca7c"),
    "eu-3lb": ("009bdc7b7121e0b4437b51df3bfebbb838ac33fc92fbbbf07a693b4c7e27f811",
               "d458f897b617b95ec30d04af493b3e7e125f8e2078383d043ad8026e7e1fda20",
               "d4a88ecef2e59d83dcb320d6dad478d7551cb9c6ecf870e6fda544c93145df91"),
    "en-masc": ("3f0cbb3964d01e7e7679b9a90dccdd58bd1a2d10d3fc7ce22d0f7f30cf234898",
                "4c5ce153d49d0f65101e3e5e3e7d9c2378f0cd1117ba0fb62bd4f7bce5e3e741",
                "aaeb0cfe61ebf1f59eb8828a759f4a89f01a3b3004932460b000a17472228262"),
    "en-npschat": ("d181fffb5ff30fc4099fa4a488a3178de5f4014e8a46cf0a1840dd5e52df66e9",
                   "af04fac2b9fa24ee8f50cc83bfd02564d5813077b5b9a6534ff7d89910f7ff5e",
                   "6d8f685a0963e08e8730e19c36265794bb1d7e12b3e44e25db9144aabafc4e8e"),
    "hi-indian": ("649d5ef653e3d8f9d1c8e3d031ef94ce215a0139fc68dd26d632928f9d4e8c32",
                  "a3e7a3dc1372de74f8abde49110995e7c52d3a6f11e4dbdbb2737436366c3290",
                  "76b3c3d4ec425514fcd1d9f361826b996053489496c22222cfa6d3221bf132c1"),
    "bn-indian": ("18c5c7c5ec7d9a50737c8779bd85f15331504ecf0b7d47ab716a10e5306a7bd4",
                  "0edaec635187fb74447264249a7bbeb00349a8d85bb1f5065f32f61018f8089b",
                  "d4cbd4c7024ab839e5b15372f82473bca5539cb3a24919b54d8c5099c0586d71"),
    "mr-indian": ("dcdf10fb69e1b037bec7ca5a6159c57e4c59b7fbce9da85811a732429a36a4d3",
                  "0a5547367e211f997cd0d0f6baab337a608b7d3e3a05f77724cbc4432972d255",
                  "265e3ad8dd30a6966b6076d1f8d0d49f3add6d596c0c621926815b04b13dcf56"),
    "te-indian": ("fad9ee038edebd1233e2f477121053511bc3301bf392bd1080384df185d1635a",
                  "ff6444d30b3eeefade43b3ceba81108950c03716b58e71f97e9a43364e802613",
                  "3fb11af0403dd37e08d1e3dd07e9e2cbd2ed780434411f1f9d2258c21c58c14d"),
}
POS_CORPORA = tuple(POS_SHA256)

POS_USAGE = f"""\
Usage: bash data_scripts/get_pos_more.sh [--from DIR] [--out DIR] [--only WHICH] [--force]
   or: python3 data_scripts/corpora.py pos-more [--from DIR] [--out DIR] [--only WHICH] [--force]

Part-of-speech corpora in several languages and sizes (a development suite),
from the NLTK data collection:
  pt-macmorpho  Portuguese news (Mac-Morpho), coarse tags     NLTK mac_morpho
  es-cast3lb    Spanish (Cast3LB), fine POS                   NLTK conll2007
  eu-3lb        Basque (3LB), fine POS                        NLTK conll2007
  en-masc       English, MASC written and spoken, PTB tags    NLTK masc_tagged
  en-npschat    English chat posts (NPS Chat), PTB tags       NLTK nps_chat
  hi-indian, bn-indian, mr-indian, te-indian
                Hindi, Bengali, Marathi, Telugu               NLTK indian
installed as
  <out>/pos-more/<c>/train.txt.gz, dev.txt.gz, test.txt.gz
        one `word TAG` line a token, a blank line after each sentence, UTF-8;
        the first 80% of the sentences, the next 10%, the last 10%
  <out>/pos-more/<c>/SHA256SUMS    sha256 of the installed files

Without --from it downloads {common.NLTK_URL}/<package>.zip
(mac_morpho, conll2007, masc_tagged, nps_chat, indian) and converts it: spaces
inside a token become _, Mac-Morpho keeps the part of a tag before | and ends a
sentence at the tag ".".  The converted text must be the reference text (the
sha256 of the local copy's text is known here).  If a download fails, or gives
another text, the local copy in <repo>/../shared/data (or $SEQBIL_LOCAL_DATA)
is used instead and the script says so; another text is installed (with a
warning) only when there is no local copy.  Once a download has failed with no
answer from the server, the other packages are not downloaded.

The sha256 of the installed files is recorded in SHA256SUMS; the next run
checks them against it and does nothing when they match (use --force to
reinstall).

Options:
  --from DIR   take a local copy instead of downloading.  DIR is a directory
               with a pos-more/ subdirectory (e.g. ../shared/data) or a pos-more/
               directory: <c>/{{train,dev,test}}.txt.gz (or .txt)
  --out DIR    data directory to install into (default: <repo>/data);
               the files go to DIR/pos-more/<c>/
  --only WHICH install only some of the corpora: a comma-separated list of
               {", ".join(POS_CORPORA[:5])},
               {", ".join(POS_CORPORA[5:])}
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

If a corpus cannot be obtained, the others are installed and the exit status is 1.
Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""


# ---------------------------------------------------------------- the NLTK packages' formats

def tagged_token(token):
    """(word, tag) of a word_TAG token, the tag being what follows the last _."""
    word, _, tag = token.rpartition("_")
    if not (word and tag):
        raise ValueError(f"not a word_TAG token: {token!r}")
    return word, tag


def texts(path, package, pattern, encoding="utf-8-sig"):
    """(name, lines) of each file of PACKAGE in PATH (its zip or the directory that unpacks to) whose path
    matches PATTERN, in NLTK's order."""
    for name, f in common.nltk_members(path, package, pattern):
        yield name, io.TextIOWrapper(f, encoding)


def macmorpho_sentences(path):
    """Mac-Morpho's sentences: one word_TAG token a line, coarse tags, a sentence ending at the tag `.`."""
    for _, lines in texts(path, "mac_morpho", r"(?!\.).*\.txt", "latin-1"):
        words = []
        for line in lines:
            if token := line.strip():
                word, tag = tagged_token(token)
                words.append((word, tag.split("|")[0]))
                if words[-1][1] == ".":
                    yield words
                    words = []
        if words:  # (a file does not end a sentence; its last one is kept all the same)
            yield words


def conll2007_sentences(path, language, encoding):
    """The sentences of LANGUAGE's CoNLL-X files (esp or eus): FORM and POSTAG, a blank line ending one."""
    for _, lines in texts(path, "conll2007", rf"{language}[^/]*\.(?:test|train)[^/]*", encoding):
        words = []
        for line in lines:
            line = line.rstrip("\r\n")
            if not line.strip():
                if words:
                    yield words
                words = []
                continue
            fields = line.split("\t") if "\t" in line else line.split()
            if len(fields) < 5:
                raise ValueError(f"no POSTAG column in {line!r}")
            words.append((fields[1], fields[4]))
        if words:
            yield words


def line_sentences(path, package, pattern, markup=False):
    """The sentences of PACKAGE's files in PATH whose path matches PATTERN: a line of word_TAG tokens each
    (with MARKUP, lines starting with < are markup, not text)."""
    for _, lines in texts(path, package, pattern):
        for line in lines:
            if not (markup and line.startswith("<")) and (tokens := line.split()):
                yield [tagged_token(token) for token in tokens]


def npschat_sentences(path):
    """The posts of the NPS Chat corpus, each a sentence of its terminals."""
    for name, f in common.nltk_members(path, "nps_chat", r"(?!README|\.)[^/]*\.xml"):
        for post in ElementTree.parse(f).getroot().iter("Post"):
            words = [(t.get("word"), t.get("pos")) for t in post.iter("t")]
            if any(not word or not tag for word, tag in words):
                raise ValueError(f"a terminal without its word or pos in {name}")
            if words:
                yield words


# corpus: (the NLTK package it is in, the function giving its sentences from the package's zip)
POS_NLTK = {
    "pt-macmorpho": ("mac_morpho", macmorpho_sentences),
    "es-cast3lb": ("conll2007", functools.partial(conll2007_sentences, language="esp", encoding="utf-8-sig")),
    "eu-3lb": ("conll2007", functools.partial(conll2007_sentences, language="eus", encoding="latin-1")),
    "en-masc": ("masc_tagged", functools.partial(line_sentences, package="masc_tagged",
                                                 pattern=r"(?:spoken|written)/.*\.txt")),
    "en-npschat": ("nps_chat", npschat_sentences),
    **{f"{code}-indian": ("indian", functools.partial(line_sentences, package="indian", pattern=rf"{name}\.pos",
                                                      markup=True))
       for code, name in (("hi", "hindi"), ("bn", "bangla"), ("mr", "marathi"), ("te", "telugu"))},
}


def conll_lines(words):
    """A sentence as `word TAG` lines (without the blank line after it), spaces inside a token made _."""
    lines = []
    for word, tag in words:
        word, tag = "_".join(word.split()), "_".join(tag.split())
        if not (word and tag):
            raise ValueError(f"a blank word or tag in {words!r}")
        lines.append(f"{word} {tag}\n")
    return "".join(lines)


def split_sentences(sentences):
    """SENTENCES split by their order: the first 80%, the next 10%, the rest (train, dev, test)."""
    n = len(sentences)
    return sentences[:n * 8 // 10], sentences[n * 8 // 10:n * 9 // 10], sentences[n * 9 // 10:]


# ---------------------------------------------------------------- installing

class Staged(NamedTuple):
    """A corpus's files written into STAGE, a directory beside their destination: whence they come
    (DESCRIPTION), the number of SENTENCES (None: not counted) and the sha256 of each file's text."""
    stage: str
    description: str
    sentences: int | None
    digests: tuple


class _PosRun:
    """What the corpora of one run share: where they go (ROOT/<c>), the temporary directories, each
    package's download ((its zip or None, a note on why not)) and why downloads are no longer tried."""

    def __init__(self, root, scratch):
        self.root = root
        self.scratch = scratch
        self.packages = {}
        self.offline = None
        self.not_tried = set()  # the packages not downloaded because of self.offline

    def stage_dir(self, corpus):
        dest = f"{self.root}/{corpus}"
        self.scratch.makedirs(dest)
        return self.scratch.tempdir(dest)  # beside the output, so that installing is a rename

    def download(self, package, tried):
        """PACKAGE's zip, downloaded once in a run: its path, or None (a note in TRIED)."""
        if package not in self.packages:
            self.packages[package] = self._fetch(package)
        path, note = self.packages[package]
        if path is None:
            tried.append(note)
        return path

    def _fetch(self, package):
        url = f"{common.NLTK_URL}/{package}.zip"
        if self.offline:
            self.not_tried.add(package)
            return None, f"download {url}: not tried, {self.offline}"
        path = f"{tempfile.mkdtemp(prefix=f'{package}.', dir=self.scratch.work())}/{package}.zip"
        common.say(POS_PROG, f"downloading {url}")
        try:
            common.download(url, path)
        except (common.DownloadError, OSError) as e:
            if isinstance(e, common.DownloadError) and e.status is None:  # no answer: the others would fail too
                self.offline = "as an earlier download failed"
            return None, f"download {url}: {e}"
        return path, None


def pos_local(path, corpus):
    """The directory of CORPUS's files in PATH, laid out as the local copy is; None if it lacks any."""
    for d in (f"{path}/pos-more/{corpus}", f"{path}/{corpus}"):
        if all(common.find_file(f"{d}/{split}.txt") for split in POS_SPLITS):
            return d
    return None


def pos_missing(path, corpus):
    """Why PATH, a local copy, does not give CORPUS."""
    if not os.path.isdir(path):
        return f"local copy {common.showpath(path)}: no such directory"
    return (f"local copy {common.showpath(path)}: no {corpus}/{{train,dev,test}}.txt[.gz] in it "
            "or in its pos-more/ subdirectory")


def stage_local(run, corpus, d, tried, why=""):
    """CORPUS's files copied from the local copy D beside their destination: a Staged, or None (a note in
    TRIED).  WHY: why the local copy is used."""
    stage, digests = run.stage_dir(corpus), []
    description = f"local copy {common.showpath(d)}"
    for split, name in zip(POS_SPLITS, POS_FILES):
        src = common.find_file(f"{d}/{split}.txt")
        try:
            lines, digest = common.copy_gz(src, f"{stage}/{name}")
        except (OSError, EOFError, zlib.error) as e:  # OSError: also gzip.BadGzipFile
            tried.append(f"{description}: could not read {os.path.basename(src)} ({e})")
            return None
        if lines == 0:
            tried.append(f"{description}: nothing in {os.path.basename(src)}")
            return None
        digests.append(digest)
    return Staged(stage, description + why, None, tuple(digests))


def stage_converted(run, corpus, zip_path, description, tried):
    """CORPUS converted from its NLTK package ZIP_PATH beside its destination: a Staged, or None (a note
    in TRIED)."""
    try:
        sentences = [conll_lines(words) for words in POS_NLTK[corpus][1](zip_path)]
        if not sentences:
            raise ValueError("no sentences in it")
        stage = run.stage_dir(corpus)
        digests = tuple(common.write_gz(f"{stage}/{name}", part)[1]
                        for name, part in zip(POS_FILES, split_sentences(sentences)))
    except (OSError, EOFError, ValueError, zlib.error, zipfile.BadZipFile,
            ElementTree.ParseError) as e:  # ValueError: also UnicodeDecodeError
        tried.append(f"{description}: could not read/convert {corpus} ({e})")
        return None
    return Staged(stage, description, len(sentences), digests)


def is_reference(corpus, staged, tried):
    """True if STAGED has CORPUS's reference text; otherwise False, and a note in TRIED."""
    if staged.digests == POS_SHA256[corpus]:
        return True
    differ = [name for name, a, b in zip(POS_FILES, staged.digests, POS_SHA256[corpus]) if a != b]
    tried.append(f"{staged.description}: not the reference text ({', '.join(differ)} "
                 f"{'differs' if len(differ) == 1 else 'differ'} from the local copy's)")
    return False


def pos_fetch(run, corpus, tried):
    """CORPUS downloaded and converted or, if that fails or does not give the reference text, from the
    local copy: a Staged, or None (notes in TRIED)."""
    package = POS_NLTK[corpus][0]
    converted = None
    if zip_path := run.download(package, tried):
        converted = stage_converted(run, corpus, zip_path, f"download from {common.NLTK_URL}/{package}.zip", tried)
        if converted is not None and is_reference(corpus, converted, tried):
            return converted._replace(description=f"{converted.description}, converted: "
                                                  f"{converted.sentences:,} sentences, the reference text")
    because = "the download failed" if converted is None else "the downloaded text is not the reference text"
    local = common.local_data_dir()
    if package in run.not_tried:
        reason = f"not downloading {common.NLTK_URL}/{package}.zip, {run.offline}"
    else:
        common.warn(POS_PROG, tried[-1])
        reason = because
    common.say(POS_PROG, f"{reason}; falling back to the local copy in {common.showpath(local)}")
    if (d := pos_local(local, corpus)) is None:
        tried.append(pos_missing(local, corpus))
    elif staged := stage_local(run, corpus, d, tried, f", as {because}"):
        return staged
    if converted is not None:  # a text that is not the reference text, but the only one there is
        common.warn(POS_PROG, f"installing {corpus} converted from {converted.description} all the same: "
                              "there is no local copy to use instead")
        return converted._replace(description=f"{converted.description}, converted: not the reference text")
    return None


def install_pos_corpus(run, corpus, source, force, tried):
    """Install CORPUS from the local copy SOURCE or, without SOURCE, from its NLTK package, falling back on
    the local copy.  False (notes in TRIED) if it could not be obtained."""
    dest = f"{run.root}/{corpus}"
    problem = None if force else common.manifest_verify(dest, POS_FILES)
    local = pos_local(source, corpus) if source else None
    if source and local is None:
        tried.append(pos_missing(source, corpus))
        return False
    if not force and problem is None:
        common.say_up_to_date(POS_PROG, dest)
        return True
    staged = stage_local(run, corpus, local, tried) if source else pos_fetch(run, corpus, tried)
    if staged is None:
        return False
    if problem and os.path.isfile(f"{dest}/{common.MANIFEST}"):
        common.say(POS_PROG, f"reinstalling {corpus}: {problem}")
    common.install_staged(POS_PROG, dest, staged.stage, POS_FILES, staged.description)
    return True


def pos_failed(failed, tried, installed):
    return common.report_failed(POS_PROG, failed, tried, installed, [
        "Point --from at the local copy (a directory with pos-more/, or a pos-more/ directory), e.g.:",
        "  bash data_scripts/get_pos_more.sh --from ../shared/data"])


def install_pos_more(out=None, source=None, only=None, force=False):
    """Install the pos-more corpora into OUT/pos-more/<c> (OUT default <repo>/data; ONLY: a comma-separated
    list of some of them).  Returns the exit status."""
    selected = common.only_list(only, POS_CORPORA)
    with common.Scratch() as scratch:
        run = _PosRun(f"{out or common.DATA_DIR}/pos-more", scratch)
        return common.install_each(POS_PROG, [c for c in POS_CORPORA if c in selected], pos_failed,
                                   lambda c, notes: install_pos_corpus(run, c, source, force, notes))
