"""Raw (unlabeled) text for learning structure from unlabeled text (the unlabeled command,
get_unlabeled.sh): six English corpora of the NLTK data collection, downloaded and converted
to one sentence per line, and unsegmented Chinese built from the installed cws-more, SXU and
msr files, each checked against the local copy's text and installed gzip-compressed into
<out>/unlabeled/{en,zh}/, falling back on the local copy file by file."""
import gzip
import io
import os
import re
import tempfile
import zipfile
import zlib
from typing import Callable, NamedTuple

from . import common

UNLAB_PROG = "get_unlabeled"
NLTK_URL = common.NLTK_URL
UNLAB_EN = ("abc", "brown", "inaugural", "movie_reviews", "state_union", "webtext")
UNLAB_PARTS = (*UNLAB_EN, "zh")
UNLAB_ONLY = ("en", *UNLAB_PARTS)  # en: all of UNLAB_EN
# sha256 of the (uncompressed) text of each file of the local copy, the reference: a text converted from
# the NLTK data or built from the installed corpora is checked against it.
UNLAB_SHA256 = {
    "abc": "f8a0a2566709ad9d3f30f46c7824eb5171e38f13485609816231880d8cdc7b6f",
    "brown": "1c2bc5499dfabffb49758b2d93a78a83b567695ae3abc905bb84bf1ff0dc1587",
    "inaugural": "0e40adb0034a0c327a3ae592a80838a25e9456b2446747a5ac8d4450fbe52c1a",
    "movie_reviews": "036c1ed51fae5d25a0d0e1b0aae985a79ce11bb41b6e02a008ab02a7a39bbdd1",
    "state_union": "81b127c2f6c4c2f182854ef5e1df502171fed111e6edc7d824c25fed5df35eac",
    "webtext": "e21136157b2ba1a3fcfc885613a640d44780b2a979c30f2592e5c6a73a9b0d98",
    "zh": "2c347b3dcefba13781b80b6be8f5c1b70b333d605399558a3c7aab9573581e02",
}

UNLAB_USAGE = f"""\
Usage: bash data_scripts/get_unlabeled.sh [--from DIR] [--out DIR] [--only WHICH] [--force]
   or: python3 data_scripts/corpora.py unlabeled [--from DIR] [--out DIR] [--only WHICH] [--force]

Raw (unlabeled) text for learning structure from unlabeled text (seqbil aso):
one sentence (or line) per line, tokens separated by single spaces, UTF-8,
gzip-compressed.  Installed as
  <out>/unlabeled/en/<c>.txt.gz     c in abc brown inaugural movie_reviews
                                    state_union webtext: English from the NLTK
                                    data collection (4.3 M tokens in all)
  <out>/unlabeled/zh/mixed.txt.gz   unsegmented Chinese (28,283 lines): the udc,
                                    wtb, zx and SXU training sets without their
                                    spaces, then the SIGHAN 2005 msr test text
                                    (never use it for an msr evaluation)
  <out>/unlabeled/{{en,zh}}/SHA256SUMS sha256 of the installed files

English: without --from it downloads
  {NLTK_URL}/<c>.zip
and converts it: brown's word/TAG tokens lose their /TAG, movie_reviews (already
tokenized) is kept as it is, the other corpora have their punctuation split off.
The converted text must be the reference text (the sha256 of the local copy's
text is known here).  If a download fails, or gives another text, the local
copy in <repo>/../shared/data (or $SEQBIL_LOCAL_DATA) is used instead and the
script says so.  Once a download has failed with no answer from the server,
the other files are taken from the local copy without trying to download them.

Chinese: nothing to download.  When the corpora are installed in <out>
(get_sighan2005.sh and get_cws_more.sh), zh/mixed.txt.gz is built from them:
  cws-more/{{udc,wtb,zx}}/train.txt, sighan2008-sxu/train.txt   spaces removed
  sighan2005/msr_test.utf8                                  as it is
in that order; otherwise, or if that does not give the reference text, it is
copied from the local copy.

A text that differs from the reference is installed (with a warning) only when
there is no local copy to use instead, or when --from gave nothing else.  The
sha256 of the installed files is recorded in SHA256SUMS; the next run checks
them against it and does nothing when they match (use --force to reinstall).

Options:
  --from DIR   take a local copy instead of downloading.  DIR is one of:
               a directory with an unlabeled/ subdirectory (../shared/data),
               an unlabeled/ directory, or its en/ or zh/ directory
                 (<c>.txt.gz or <c>.txt, mixed.txt.gz or mixed.txt);
               for English, also an nltk_data directory or a directory
                 holding the NLTK zips: [corpora/]<c>.zip or [corpora/]<c>/;
               for Chinese, also a data directory holding the corpora above
  --out DIR    data directory to install into (default: <repo>/data);
               the files go to DIR/unlabeled/en/ and DIR/unlabeled/zh/
  --only WHICH install only en (the six English files), zh, or one of
               abc brown inaugural movie_reviews state_union webtext
               (or a comma-separated list of them)
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

If a file cannot be obtained, the others are installed and the exit status is 1.
Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""

# A word: letters, digits and _, with single inner ' - or . (don't, well-being, U.S, 3.5); any other
# character that is not a space is a token by itself.
_WORD = re.compile(r"\w+(?:[-'.]\w+)*|\S")


def plain_sentence(line):
    """A line of plain text with its punctuation split off."""
    return " ".join(_WORD.findall(line))


def tagged_sentence(line):
    """A line of word/TAG tokens (the Brown corpus) without the /TAGs."""
    return " ".join(token[:token.rfind("/")] if "/" in token else token for token in line.split())


def spaced_sentence(line):
    """A line of tokens separated by single spaces."""
    return " ".join(line.split())


# corpus: (a regular expression matching the paths of its text files in the corpus directory, the
# function giving the sentence of one line).  The files are read in the order of their paths (that
# of NLTK's fileids), as Latin-1 except those of NLTK_UTF8; blank lines are left out.  This conversion has
# been checked on excerpts of these corpora (a Brown file, State of the Union lines) against the local copy,
# not on the whole zips: the text it gives is installed only if its sha256 is the reference's (UNLAB_SHA256),
# unless nothing else can be had.
NLTK_CORPORA = {
    "abc": (r"rural\.txt|science\.txt", plain_sentence),
    "brown": (r"c[a-z]\d\d", tagged_sentence),
    "inaugural": (r"[^/.][^/]*\.txt", plain_sentence),
    "movie_reviews": (r"(?:neg|pos)/[^/.][^/]*\.txt", spaced_sentence),
    "state_union": (r"[^/.][^/]*\.txt", plain_sentence),
    "webtext": (r"(?!README)[^/.][^/]*\.txt", plain_sentence),
}
NLTK_UTF8 = ("abc/rural.txt",)

# The files zh/mixed.txt is built from, in this order: (path in a data directory, whether its spaces
# are kept: the msr test text is raw text, whose few spaces are part of it)
ZH_SOURCES = (("cws-more/udc/train.txt", False), ("cws-more/wtb/train.txt", False), ("cws-more/zx/train.txt", False),
              ("sighan2008-sxu/train.txt", False), ("sighan2005/msr_test.utf8", True))


def unlab_name(part):
    """PART's file, relative to <out>/unlabeled."""
    return "zh/mixed.txt.gz" if part == "zh" else f"en/{part}.txt.gz"


def nltk_sentences(path, corpus):
    """The sentences of CORPUS in PATH, its NLTK data zip or the directory that unpacks to."""
    pattern, sentence = NLTK_CORPORA[corpus]
    for name, f in common.nltk_members(path, corpus, pattern):
        encoding = "utf-8-sig" if f"{corpus}/{name}" in NLTK_UTF8 else "latin-1"
        for line in io.TextIOWrapper(f, encoding):
            if s := sentence(line):
                yield s


def zh_sentences(files):
    """The lines of zh/mixed.txt from FILES, those of ZH_SOURCES (each plain or gzip-compressed)."""
    for path, (_, keep_spaces) in zip(files, ZH_SOURCES):
        with gzip.open(path, "rb") if common.is_gzip(path) else open(path, "rb") as f:
            for line in io.TextIOWrapper(f, "utf-8-sig"):
                if s := line.strip() if keep_spaces else "".join(line.split()):
                    yield s


class Text(NamedTuple):
    """A source of one file: its DESCRIPTION, the function that WRITEs the file to a path, returning (lines,
    sha256 of the text), and how the file comes from it: "from", or "converted from" and "built from" when
    its text is made here (and so checked against the reference text)."""
    description: str
    write: Callable
    how: str = "from"


class Staged(NamedTuple):
    """The file of a Text, written beside its destination."""
    path: str
    text: Text
    lines: int
    digest: str  # sha256 of the text


def unlab_local(part, directory):
    """PART in DIRECTORY, laid out as the local copy is (unlabeled/en/<c>.txt.gz, ...): a Text, or None."""
    sub, name = unlab_name(part).split("/")
    stem = name.removesuffix(".gz")
    for d in (f"{directory}/unlabeled/{sub}", f"{directory}/{sub}", directory):
        if src := common.find_file(f"{d}/{stem}"):
            return Text(f"local copy {common.showpath(os.path.dirname(src))}", lambda path: common.copy_gz(src, path))
    return None


def unlab_nltk(corpus, directory):
    """CORPUS in DIRECTORY as NLTK distributes it ([corpora/]<c>.zip, or unpacked): a Text, or None."""
    for d in (f"{directory}/corpora", directory):
        for src in (f"{d}/{corpus}.zip", f"{d}/{corpus}"):
            if os.path.isfile(src) or os.path.isdir(src):
                return Text(f"NLTK data {common.showpath(src)}",
                            lambda path: common.write_gz(path, nltk_sentences(src, corpus)), "converted from")
    return None


def unlab_built(directory):
    """zh/mixed.txt built from the corpora installed in DIRECTORY: (a Text, []), or (None, the files missing)."""
    files = [common.find_file(f"{directory}/{rel}") for rel, _ in ZH_SOURCES]
    if missing := [rel for (rel, _), f in zip(ZH_SOURCES, files) if f is None]:
        return None, missing
    return Text(f"the corpora in {common.showpath(directory)}", lambda path: common.write_gz(path, zh_sentences(files)),
                "built from"), []


def unlab_missing(part, directory, also=None):
    """Why DIRECTORY, a local copy, does not give PART (ALSO: what else was looked for in it)."""
    if not os.path.isdir(directory):
        return f"local copy {common.showpath(directory)}: no such directory"
    sub, name = unlab_name(part).removesuffix(".gz").split("/")
    missing = (f"local copy {common.showpath(directory)}: no {name}[.gz] in it or in its {sub}/ or unlabeled/{sub}/ "
               "subdirectory")
    return f"{missing}, nor {also}" if also else missing


class _UnlabRun:
    """What the parts of one run share: the data directory DATA (the files go to DATA/unlabeled), the
    temporary directories beside the output, and why downloads are no longer tried (None: they are)."""

    def __init__(self, data, scratch):
        self.data = data
        self.root = f"{data}/unlabeled"
        self.scratch = scratch
        self.stages = {}
        self.offline = None

    def stage(self, part, text, tried):
        """Write TEXT's file of PART beside its destination: a Staged, or None (a note in TRIED)."""
        dest = os.path.dirname(f"{self.root}/{unlab_name(part)}")
        if dest not in self.stages:
            self.scratch.makedirs(dest)
            self.stages[dest] = self.scratch.tempdir(dest)  # beside the output, so that installing is a rename
        # (in a directory of its own: the local copy may be staged after a text that is not the reference)
        path = f"{tempfile.mkdtemp(dir=self.stages[dest])}/{os.path.basename(unlab_name(part))}"
        try:
            lines, digest = text.write(path)
        except (OSError, EOFError, ValueError, RuntimeError, NotImplementedError, zlib.error,
                zipfile.BadZipFile) as e:  # ValueError: also UnicodeDecodeError
            common.remove_file(path)
            tried.append(f"{text.description}: could not read/convert it ({e})")
            return None
        if lines == 0:
            common.remove_file(path)
            tried.append(f"{text.description}: no text in it")
            return None
        return Staged(path, text, lines, digest)


def unlab_reference(part, staged, tried):
    """True if the text of STAGED is PART's reference text; otherwise False, and a note in TRIED."""
    if staged.digest == UNLAB_SHA256[part]:
        return True
    tried.append(f"{staged.text.description}: not the reference text (its sha256 is {staged.digest}, "
                 f"the reference's {UNLAB_SHA256[part]})")
    return False


def unlab_install(run, part, staged, why=""):
    """Move STAGED into place and record its sha256; WHY: why it comes from where it does."""
    dest, name = os.path.split(f"{run.root}/{unlab_name(part)}")
    common.manifest_record(dest, name, None)  # an interrupted run must not look up to date
    os.replace(staged.path, f"{dest}/{name}")
    common.manifest_record(dest, name, common.file_digest(f"{dest}/{name}", "sha256"))
    if staged.text.how != "from":
        why = f": {'' if staged.digest == UNLAB_SHA256[part] else 'not '}the reference text{why}"
    common.say(UNLAB_PROG, f"installed {common.showpath(dest)}/{name} ({staged.lines:,} lines) "
                           f"{staged.text.how} {staged.text.description}{why} (sha256 in {common.MANIFEST})")


def unlab_download(run, corpus, tried):
    """CORPUS downloaded from NLTK_URL and converted: a Staged, or None (a note in TRIED)."""
    url = f"{NLTK_URL}/{corpus}.zip"
    if run.offline:
        tried.append(f"download {url}: not tried, {run.offline}")
        return None
    zip_path = f"{tempfile.mkdtemp(prefix=f'{corpus}.', dir=run.scratch.work())}/{corpus}.zip"
    common.say(UNLAB_PROG, f"downloading {url}")
    try:
        common.download(url, zip_path)
    except (common.DownloadError, OSError) as e:
        tried.append(f"download {url}: {e}")
        if isinstance(e, common.DownloadError) and e.status is None:  # no answer: the other downloads would fail too
            run.offline = "as an earlier download failed"
        return None
    return run.stage(corpus, Text(f"download from {url}",
                                  lambda path: common.write_gz(path, nltk_sentences(zip_path, corpus)),
                                  "converted from"), tried)


def install_unlab_part(run, part, source, force, tried):
    """Install PART from the local copy SOURCE or, without SOURCE, from NLTK_URL (English) or the installed
    corpora (Chinese), falling back on the local copy.  False (notes in TRIED) if it could not be obtained."""
    dest, name = os.path.split(f"{run.root}/{unlab_name(part)}")
    problem = None if force else common.manifest_check(dest, name)
    if source:
        if (text := unlab_local(part, source)) is None:
            if part == "zh":
                text, missing = unlab_built(source)
                also = f"the corpora to build it from (no {', '.join(missing)})"
            else:
                text = unlab_nltk(part, source)
                also = f"the NLTK data {part}.zip or {part}/ in it or in its corpora/ subdirectory"
            if text is None:
                tried.append(unlab_missing(part, source, also))
                return False
    if not force and problem is None:
        common.say_up_to_date(UNLAB_PROG, f"{dest}/{name}")
        return True
    if problem and os.path.isfile(f"{dest}/{name}"):
        common.say(UNLAB_PROG, f"reinstalling {unlab_name(part)}: {problem}")
    if source:
        if (staged := run.stage(part, text, tried)) is None:
            return False
        if text.how != "from" and not unlab_reference(part, staged, tried):
            common.warn(UNLAB_PROG, f"{tried[-1]}; installing it all the same")
        unlab_install(run, part, staged)
        return True

    # NLTK_URL (English) or the installed corpora (Chinese), then the local copy
    staged, reason = None, None
    if part == "zh":
        text, missing = unlab_built(run.data)
        if text is None:
            tried.append(f"build from the corpora in {common.showpath(run.data)}: no {', '.join(missing)}")
            reason = f"cannot build {unlab_name(part)} here: no {missing[0]} in {common.showpath(run.data)}"
            because = "the corpora to build it from are not installed"
        else:
            staged = run.stage(part, text, tried)
            because = "building it failed" if staged is None else "the text built here is not the reference text"
    else:
        if run.offline:
            reason = f"not downloading {NLTK_URL}/{part}.zip, {run.offline}"
        staged = unlab_download(run, part, tried)
        because = "the download failed" if staged is None else "the downloaded text is not the reference text"
    if staged is not None and unlab_reference(part, staged, tried):
        unlab_install(run, part, staged)
        return True
    if reason is None:
        common.warn(UNLAB_PROG, tried[-1])
        reason = because
    local = common.local_data_dir()
    common.say(UNLAB_PROG, f"{reason}; falling back to the local copy in {common.showpath(local)}")
    if (text := unlab_local(part, local)) is None:
        tried.append(unlab_missing(part, local))
    elif local_staged := run.stage(part, text, tried):
        if staged is not None:
            common.remove_file(staged.path)
        unlab_install(run, part, local_staged, f", as {because}")
        return True
    if staged is not None:  # a text that is not the reference text, but the only one there is
        common.warn(UNLAB_PROG, f"installing the text {staged.text.how} {staged.text.description} all the same: "
                                "there is no local copy to use instead")
        unlab_install(run, part, staged)
        return True
    return False


def unlab_failed(failed, tried, installed):
    return common.report_failed(UNLAB_PROG, [unlab_name(p) for p in failed], tried, installed, [
        "Point --from at the local copy (a directory with unlabeled/, an unlabeled/ directory, or its",
        "en/ or zh/ directory; for English also an nltk_data directory), e.g.:",
        "  bash data_scripts/get_unlabeled.sh --from ../shared/data"])


def install_unlabeled(out=None, source=None, only=None, force=False):
    """Install the unlabeled text into OUT/unlabeled/{en,zh} (OUT default <repo>/data; ONLY: a comma-separated
    list of parts, en standing for the six English files).  Returns the exit status."""
    selected = common.only_list(only, UNLAB_ONLY)
    selected = {p for s in selected for p in (UNLAB_EN if s == "en" else [s])}
    with common.Scratch() as scratch:
        run = _UnlabRun(out or common.DATA_DIR, scratch)
        return common.install_each(UNLAB_PROG, [p for p in UNLAB_PARTS if p in selected], unlab_failed,
                                   lambda part, notes: install_unlab_part(run, part, source, force, notes))
