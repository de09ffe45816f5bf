#!/usr/bin/env python3
"""Install the corpora of the seqbil benchmarks into data/ (see README.md here).

    python3 data_scripts/corpora.py conll2000  [--from DIR]  [--out DIR] [--force]
    python3 data_scripts/corpora.py sighan2005 [--from PATH] [--out DIR] [--only WHICH] [--force]
    python3 data_scripts/corpora.py cws-more   [--from DIR]  [--out DIR] [--only WHICH] [--force]
    python3 data_scripts/corpora.py unlabeled  [--from DIR]  [--out DIR] [--only WHICH] [--force]

get_conll2000.sh, get_sighan2005.sh, get_cws_more.sh and get_unlabeled.sh run these commands.
Standard library only.

Exit status: 0 done (or already up to date), 1 a corpus could not be obtained (the
message lists what was tried), 2 bad command line.

Environment:
  SEQBIL_LOCAL_DATA   local copy to fall back on when a download fails
                      (default: <repo>/../shared/data)
  SEQBIL_DL_TIMEOUT   download timeout for connecting and for each read, seconds (default 20)
  SEQBIL_DL_MAX_TIME  maximum time of one download, seconds (default 1800)
"""
import argparse
import gzip
import hashlib
import http.client
import io
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from typing import Callable, NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
DATA_DIR = f"{ROOT}/data"

CONLL_PROG = "get_conll2000"
CONLL_URL = "https://www.clips.uantwerpen.be/conll2000/chunking"
CONLL_FILES = ("train.txt", "test.txt")
# md5 of the official uncompressed files
CONLL_MD5 = {
    "train.txt": "2e2f24e90e20fcb910ab2251b5ed8cd0",
    "test.txt": "56944df34be553b72a2a634e539a0951",
}

SIGHAN_PROG = "get_sighan2005"
SIGHAN_URL = "http://sighan.cs.uchicago.edu/bakeoff2005/data/icwb2-data.zip"
SIGHAN_CORPORA = ("pku", "msr", "cityu", "as")
ONLY_CHOICES = ("sighan2005", "sighan2008-sxu")
MANIFEST = "SHA256SUMS"
PKU_STAND_IN = "pku_training.approx.utf8"  # in the local copy only: see README.md
BIG5 = "BIG5-HKSCS"
CP950 = "CP950"
# Extensions of the Big5 files that some versions of icwb2-data have instead of .utf8
BIG5_EXTENSIONS = {"cityu": ("txt",), "as": ("b5", "txt")}

CWS_PROG = "get_cws_more"
CWS_URL = "https://raw.githubusercontent.com/hankcs/multi-criteria-cws/master/data/other"
CWS_CORPORA = ("udc", "wtb", "zx")
CWS_SPLITS = ("train", "dev", "test")
CWS_README = "README.txt"  # wtb's licence, which must be installed with the data

TEMP_PREFIX = ".seqbil-tmp."


class Fatal(Exception):
    """A failure that ends the run with exit status 1 and this message."""


class DownloadError(Exception):
    """A download failed; the message says why.  TRANSIENT: worth trying again.  STATUS: the
    HTTP status the server answered with (None: no answer)."""

    def __init__(self, message, transient=False, status=None):
        super().__init__(message)
        self.transient = transient
        self.status = status


# ---------------------------------------------------------------- messages and paths

def say(prog, message):
    print(f"{prog}: {message}", flush=True)


def warn(prog, message):
    print(f"{prog}: warning: {message}", file=sys.stderr, flush=True)


def error(prog, message):
    print(f"{prog}: error: {message}", file=sys.stderr, flush=True)


def showpath(path):
    """PATH for messages: absolute with symlinks resolved when it exists, as given otherwise."""
    path = os.fspath(path)
    if not os.path.exists(path):
        return path
    if os.path.isdir(path):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(os.path.dirname(path) or "."), os.path.basename(path))


def local_data_dir():
    """The local copy of the corpora to fall back on (read when needed, so tests can set it)."""
    return os.environ.get("SEQBIL_LOCAL_DATA") or f"{ROOT}/../shared/data"


def find_file(*paths):
    """The first of PATHS that is a file, trying each as given and then with .gz; None if none is."""
    for path in paths:
        for candidate in (path, f"{path}.gz"):
            if os.path.isfile(candidate):
                return candidate
    return None


class Scratch:
    """What one run creates besides its results, undone when the run ends however it ends:
    temporary directories are removed, new directories are removed again if still empty."""

    def __init__(self):
        self._temporary = []
        self._new_dirs = []
        self._work = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        for path in reversed(self._temporary):
            shutil.rmtree(path, ignore_errors=True)
        for path in reversed(self._new_dirs):
            try:
                os.rmdir(path)
            except OSError:
                pass
        return False

    def makedirs(self, path):
        """mkdir -p PATH, remembering the directories it creates."""
        path = path.rstrip("/") or "/"
        missing = []
        d = path
        while not os.path.isdir(d):
            missing.append(d)
            parent = os.path.dirname(d) or "."
            if parent == d:
                break
            d = parent
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            raise Fatal(f"cannot create directory {path}") from None
        self._new_dirs.extend(reversed(missing))

    def tempdir(self, parent=None):
        """A private temporary directory in PARENT (default: the system's)."""
        try:
            path = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=parent)
        except OSError:
            raise Fatal(f"cannot create a temporary directory in {parent or tempfile.gettempdir()}") from None
        self._temporary.append(path)
        return path

    def work(self):
        """The run's directory for downloads and unpacked archives (not beside the output)."""
        if self._work is None:
            self._work = self.tempdir()
        return self._work


# ---------------------------------------------------------------- checksums

def file_digest(path, algorithm):
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _manifest_lines(directory):
    with open(f"{directory}/{MANIFEST}", "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


_MANIFEST_ENTRY = re.compile(r"[0-9a-f]{64} [ *](.*)")


def manifest_names(directory):
    """Names listed in DIRECTORY/SHA256SUMS (none if there is no such file)."""
    if not os.path.isfile(f"{directory}/{MANIFEST}"):
        return []
    return [m.group(1) for line in _manifest_lines(directory) if (m := _MANIFEST_ENTRY.fullmatch(line))]


def manifest_verify(directory, names=()):
    """None when DIRECTORY/SHA256SUMS lists at least one file, every file it lists has that
    sha256, and each of NAMES is listed; otherwise the reason it does not hold."""
    if not os.path.isfile(f"{directory}/{MANIFEST}"):
        return f"no {directory}/{MANIFEST}"
    count = 0
    for line in _manifest_lines(directory):
        fields = line.split(None, 1)
        if not fields:
            continue
        digest = fields[0]
        name = fields[1].rstrip() if len(fields) > 1 else ""
        name = name.removeprefix("*")
        count += 1
        if not os.path.isfile(f"{directory}/{name}"):
            return f"{name} is missing"
        if file_digest(f"{directory}/{name}", "sha256") != digest:
            return f"{name} does not match its sha256 in {MANIFEST}"
    if count == 0:
        return f"{directory}/{MANIFEST} is empty"
    listed = set(manifest_names(directory))
    for name in names:
        if name not in listed:
            return f"{name} (available in the source) is not installed yet"
    return None


def manifest_write(directory, names):
    """Write DIRECTORY/SHA256SUMS for NAMES (files in DIRECTORY), atomically."""
    _write_manifest(directory, {name: file_digest(f"{directory}/{name}", "sha256") for name in names})


def _write_manifest(directory, digests):
    """Write DIRECTORY/SHA256SUMS listing DIGESTS ({name: sha256}, in that order), atomically."""
    fd, tmp = tempfile.mkstemp(prefix=f".{MANIFEST}.tmp.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
            for name, digest in digests.items():
                f.write(f"{digest}  {name}\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, f"{directory}/{MANIFEST}")
    except BaseException:
        _remove(tmp)
        raise


def manifest_digests(directory):
    """{name: sha256} as listed in DIRECTORY/SHA256SUMS ({} if there is no such file)."""
    if not os.path.isfile(f"{directory}/{MANIFEST}"):
        return {}
    return {m.group(1): line[:64] for line in _manifest_lines(directory) if (m := _MANIFEST_ENTRY.fullmatch(line))}


def manifest_check(directory, name):
    """None when DIRECTORY/SHA256SUMS lists NAME with the sha256 it has; otherwise the reason it does not hold.
    (The other files listed are not looked at: see manifest_verify for that.)"""
    if not os.path.isfile(f"{directory}/{MANIFEST}"):
        return f"no {directory}/{MANIFEST}"
    digest = manifest_digests(directory).get(name)
    if digest is None:
        return f"{name} is not listed in {MANIFEST}"
    if not os.path.isfile(f"{directory}/{name}"):
        return f"{name} is missing"
    if file_digest(f"{directory}/{name}", "sha256") != digest:
        return f"{name} does not match its sha256 in {MANIFEST}"
    return None


def manifest_record(directory, name, digest):
    """Record DIGEST as the sha256 of NAME in DIRECTORY/SHA256SUMS (DIGEST None: list NAME no more), keeping
    the other entries as they are; atomically.  A manifest left with no entry is removed."""
    digests = {n: d for n, d in manifest_digests(directory).items() if n != name}
    if digest is not None:
        digests[name] = digest
    if digests:
        _write_manifest(directory, dict(sorted(digests.items())))
    else:
        _remove(f"{directory}/{MANIFEST}")


# ---------------------------------------------------------------- Big5

# These files used to be converted with glibc's iconv, and the conversion must give the
# same bytes.  Python's codecs differ from glibc's in a few codes:
# - big5hkscs follows HKSCS-2004; glibc's BIG5-HKSCS follows HKSCS-2008, which adds the 68
#   codes below, passes the byte 0x80 through, and rejects 7 codes (None) that big5hkscs
#   decodes.  glibc's rejection matters: it is what sends as_training.b5 to CP950.
# - glibc's CP950 maps the user-defined area C6A1-C8FE to U+F6B1-U+F848 (as Windows
#   does), where Python's cp950 has the Big5-ETEN kana and Cyrillic or rejects the code,
#   and also passes 0x80 through.
_HKSCS_2008 = """
877a:3875 877b:21d53 877c:2369e 877d:26021 877e:3eec 87a1:258de 87a2:3af5 87a3:7afc
87a4:9f97 87a5:24161 87a6:2890d 87a7:231ea 87a8:20a8a 87a9:2325e 87aa:430a 87ab:8484
87ac:9f96 87ad:942f 87ae:4930 87af:8613 87b0:5896 87b1:974a 87b2:9218 87b3:79d0
87b4:7a32 87b5:6660 87b6:6a29 87b7:889d 87b8:744c 87b9:7bc5 87ba:6782 87bb:7a2c
87bc:524f 87bd:9046 87be:34e6 87bf:73c4 87c0:25db9 87c1:74c6 87c2:9fc7 87c3:57b3
87c4:492f 87c5:544c 87c6:4131 87c7:2368e 87c8:5818 87c9:7a72 87ca:27b65 87cb:8b8f
87cc:46ae 87cd:26e88 87ce:4181 87cf:25d99 87d0:7bae 87d1:224bc 87d2:9fc8 87d3:224c1
87d4:224c9 87d5:224cc 87d6:9fc9 87d7:8504 87d8:235bb 87d9:40b4 87da:9fca 87db:44e1
87dc:2adff 87dd:62c1 87de:706e 87df:9fcb
"""
_GLIBC_HKSCS_REJECTS = "a15a a1c3 a1c5 a1fe a240 a2cc a2ce"
_BIG5_TRAILS = [*range(0x40, 0x7F), *range(0xA1, 0xFF)]


def _big5_overrides():
    hkscs = {bytes.fromhex(code): chr(int(u, 16)) for code, u in (e.split(":") for e in _HKSCS_2008.split())}
    hkscs.update(dict.fromkeys(map(bytes.fromhex, _GLIBC_HKSCS_REJECTS.split())))
    hkscs[b"\x80"] = "\x80"
    user_area = [bytes((lead, trail)) for lead in (0xC6, 0xC7, 0xC8) for trail in _BIG5_TRAILS]
    user_area = user_area[user_area.index(b"\xc6\xa1"):]
    cp950 = {code: chr(0xF6B1 + i) for i, code in enumerate(user_area)}
    cp950[b"\x80"] = "\x80"
    return {BIG5: ("big5hkscs", hkscs), CP950: ("cp950", cp950)}


def _candidates(overrides):
    """A regex finding (perhaps misaligned) occurrences of the override codes."""
    by_lead = {}
    for code in overrides:
        by_lead.setdefault(code[:1], []).append(code[1:])
    parts = []
    for lead, trails in sorted(by_lead.items()):
        head = b"\\x%02x" % lead[0]
        tails = [t for t in trails if t]
        if tails:
            parts.append(head + b"[" + b"".join(b"\\x%02x" % t[0] for t in sorted(tails)) + b"]")
        if b"" in trails:
            parts.append(head)
    return re.compile(b"|".join(parts))


_BIG5_CODECS = {name: (codec, overrides, _candidates(overrides))
                for name, (codec, overrides) in _big5_overrides().items()}
# One Big5 character: a lead byte and a trail byte, a run of ASCII, or any other single byte
_BIG5_TOKEN = re.compile(rb"[\x81-\xfe][\x40-\x7e\xa1-\xfe]|[\x00-\x7f]+|[\x00-\xff]")


def decode_big5(data, encoding=BIG5):
    """DATA (whole lines) decoded from ENCODING (BIG5-HKSCS or CP950) as glibc's iconv does;
    UnicodeDecodeError if iconv would reject it."""
    codec, overrides, candidates = _BIG5_CODECS[encoding]
    if not candidates.search(data):
        return data.decode(codec)
    # Big5 is not self-synchronizing: split into characters to find the codes that really occur.
    out = []
    for token in _BIG5_TOKEN.findall(data):
        if token in overrides:
            if overrides[token] is None:
                raise UnicodeDecodeError(codec, token, 0, len(token), f"not valid in glibc's {encoding}")
            out.append(overrides[token])
        else:
            out.append(token.decode(codec))
    return "".join(out)


# ---------------------------------------------------------------- files

def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _starts_with(path, magic):
    try:
        with open(path, "rb") as f:
            return f.read(len(magic)) == magic
    except OSError:
        return False


def is_gzip(path):
    return path.endswith(".gz") or _starts_with(path, b"\x1f\x8b")


def is_zip(path):
    return os.path.isfile(path) and _starts_with(path, b"PK\x03\x04")


def extract(src, dest, encoding=None, sentences=None):
    """Write SRC to DEST (mode 644), gunzipped if it is gzip-compressed and converted from
    ENCODING to UTF-8 if ENCODING is given.  With SENTENCES (a function from the lines of a UTF-8
    text to its sentences), DEST gets instead the sentences of SRC, one a line.  False, and no
    DEST, if that fails."""
    try:
        with (gzip.open(src, "rb") if is_gzip(src) else open(src, "rb")) as fin, open(dest, "wb") as fout:
            if sentences is not None:
                fout.writelines(f"{s}\n".encode() for s in sentences(io.TextIOWrapper(fin, "utf-8-sig")))
            elif encoding is None:
                shutil.copyfileobj(fin, fout, 1 << 20)
            else:
                # Big5 trail bytes are never b"\n", so lines can be decoded one by one.
                for line in fin:
                    fout.write(decode_big5(line, encoding).encode("utf-8"))
        os.chmod(dest, 0o644)
        return True
    except (OSError, EOFError, zlib.error, ValueError):  # ValueError: also UnicodeDecodeError
        _remove(dest)
        return False


# ---------------------------------------------------------------- download

_TRANSIENT_HTTP = {408, 429, 500, 502, 503, 504}


def _seconds(variable, default):
    value = os.environ.get(variable) or default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1
    if not seconds > 0:
        raise DownloadError(f"{variable}={value!r} is not a positive number of seconds")
    return seconds


def download(url, dest, retries=2):
    """Download URL to DEST, retrying transient failures; DownloadError (and no DEST) if it fails.
    Timeouts from SEQBIL_DL_TIMEOUT and SEQBIL_DL_MAX_TIME."""
    timeout = _seconds("SEQBIL_DL_TIMEOUT", 20)
    max_time = _seconds("SEQBIL_DL_MAX_TIME", 1800)
    deadline = time.monotonic() + max_time
    for attempt in range(retries + 1):
        try:
            _fetch(url, dest, timeout, deadline, max_time)
            return
        except DownloadError as e:
            _remove(dest)
            pause = 2 ** attempt  # 1 s, then 2 s, as curl --retry waits
            if not e.transient or attempt == retries or time.monotonic() + pause >= deadline:
                raise
        except BaseException:
            _remove(dest)
            raise
        time.sleep(pause)


def download_files(prog, urls, work, tried):
    """Download URLS into WORK, each under its last name, saying so: the files, or None (a note
    in TRIED) as soon as one fails."""
    files = []
    for url in urls:
        files.append(f"{work}/{url.rsplit('/', 1)[-1]}")
        say(prog, f"downloading {url}")
        try:
            download(url, files[-1])
        except (DownloadError, OSError) as e:
            tried.append(f"download {url}: {e}")
            return None
    return files


def _fetch(url, dest, timeout, deadline, max_time):
    request = urllib.request.Request(url, headers={"User-Agent": "seqbil-data-scripts"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response, open(dest, "wb") as out:
            while block := response.read(1 << 16):
                out.write(block)
                if time.monotonic() > deadline:
                    raise DownloadError(f"gave up after {max_time:g} s (SEQBIL_DL_MAX_TIME)")
    except urllib.error.HTTPError as e:
        raise DownloadError(f"the server answered HTTP {e.code} {e.reason}", e.code in _TRANSIENT_HTTP,
                            e.code) from None
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, socket.gaierror):
            host = urllib.parse.urlsplit(url).hostname
            raise DownloadError(f"could not resolve host {host} ({reason.strerror})",
                                reason.errno == socket.EAI_AGAIN) from None
        message = (reason.strerror if isinstance(reason, OSError) else None) or str(reason)
        raise DownloadError(message, isinstance(reason, TimeoutError)) from None
    except TimeoutError:
        raise DownloadError(f"no data for {timeout:g} s (SEQBIL_DL_TIMEOUT)", True) from None
    except (OSError, ValueError, EOFError, http.client.HTTPException) as e:  # ValueError: a malformed URL
        raise DownloadError(str(e) or type(e).__name__) from None


# ---------------------------------------------------------------- CoNLL-2000

CONLL_USAGE = f"""\
Usage: bash data_scripts/get_conll2000.sh [--from DIR] [--out DIR] [--force]
   or: python3 data_scripts/corpora.py conll2000 [--from DIR] [--out DIR] [--force]

Installs the CoNLL-2000 chunking corpus (Tjong Kim Sang & Buchholz, 2000) as
  <out>/conll2000/train.txt   (8,936 sentences; md5 {CONLL_MD5['train.txt']})
  <out>/conll2000/test.txt    (2,012 sentences; md5 {CONLL_MD5['test.txt']})
one "word POS chunk" token per line, blank line between sentences.

Without --from it downloads {CONLL_URL}/{{train,test}}.txt.gz;
if that fails it falls back to the local copy in <repo>/../shared/data
(or $SEQBIL_LOCAL_DATA) and says so.  The md5 of both files is checked
before anything is installed; files are written atomically.  When the
installed files already have the right checksums nothing is done.

Options:
  --from DIR   take a local copy instead of downloading.  DIR holds
               train.txt.gz and test.txt.gz (or uncompressed train.txt and
               test.txt), directly or in a conll2000/ subdirectory, e.g.
               --from ../shared/data  or  --from ../shared/data/conll2000
  --out DIR    data directory to install into (default: <repo>/data);
               the files go to DIR/conll2000/
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""


def conll_up_to_date(dest, md5):
    return all(os.path.isfile(f"{dest}/{f}") and file_digest(f"{dest}/{f}", "md5") == md5[f] for f in CONLL_FILES)


def find_conll(directory, tried):
    """{name: source file} for train.txt and test.txt in DIRECTORY or DIRECTORY/conll2000."""
    if not os.path.isdir(directory):
        tried.append(f"local copy {showpath(directory)}: no such directory")
        return None
    for d in (directory, f"{directory}/conll2000"):
        sources = {f: find_file(f"{d}/{f}") for f in CONLL_FILES}
        if all(sources.values()):
            return sources
    tried.append(f"local copy {showpath(directory)}: "
                 "no {train,test}.txt[.gz] in it or in its conll2000/ subdirectory")
    return None


def stage_conll(sources, stage, what, md5, tried):
    """Unpack SOURCES into STAGE and check their md5; False (a note in TRIED) if that fails."""
    for f in CONLL_FILES:
        if not extract(sources[f], f"{stage}/{f}"):
            tried.append(f"{what}: could not read/unpack {sources[f]}")
            return False
        digest = file_digest(f"{stage}/{f}", "md5")
        if digest != md5[f]:
            tried.append(f"{what}: {f} has md5 {digest}, expected {md5[f]}")
            _remove(f"{stage}/{f}")
            return False
    return True


def download_conll(work, tried):
    """Download train.txt.gz and test.txt.gz into WORK: {name: file}, or None."""
    files = download_files(CONLL_PROG, [f"{CONLL_URL}/{f}.gz" for f in CONLL_FILES], work, tried)
    return None if files is None else dict(zip(CONLL_FILES, files))


def conll_failed(tried):
    lines = [f"{CONLL_PROG}: error: could not obtain CoNLL-2000. Tried:", *(f"  - {t}" for t in tried),
             "Point --from at a directory holding train.txt.gz and test.txt.gz (or train.txt and test.txt),",
             "directly or in a conll2000/ subdirectory, e.g.:",
             "  bash data_scripts/get_conll2000.sh --from ../shared/data"]
    print("\n".join(lines), file=sys.stderr, flush=True)
    return 1


def install_conll2000(out=None, source=None, force=False, md5=None):
    """Install CoNLL-2000 into OUT/conll2000 (OUT default <repo>/data), from the local copy
    SOURCE or, without SOURCE, by download, falling back on the local copy.  Returns the exit status."""
    md5 = CONLL_MD5 if md5 is None else md5
    dest = f"{out or DATA_DIR}/conll2000"
    tried = []
    with Scratch() as scratch:
        stage = None

        def stage_from(sources, what):
            nonlocal stage
            if stage is None:
                scratch.makedirs(dest)
                stage = scratch.tempdir(dest)  # beside the output, so that installing is a rename
            return stage_conll(sources, stage, what, md5, tried)

        def from_local(directory):
            """'up to date', 'staged' or None (failed)."""
            sources = find_conll(directory, tried)
            if sources is None:
                return None
            if not force and conll_up_to_date(dest, md5):
                return "up to date"
            return "staged" if stage_from(sources, f"local copy {showpath(directory)}") else None

        try:
            if source:
                outcome = from_local(source)
                origin = f"local copy {showpath(source)}"
            else:
                if not force and conll_up_to_date(dest, md5):
                    outcome = "up to date"
                else:
                    sources = download_conll(scratch.work(), tried)
                    if sources is not None and stage_from(sources, f"download from {CONLL_URL}"):
                        outcome, origin = "staged", CONLL_URL
                    else:
                        local = local_data_dir()
                        warn(CONLL_PROG, tried[-1])
                        say(CONLL_PROG, f"download failed; falling back to the local copy in {showpath(local)}")
                        outcome = from_local(local)
                        origin = f"local copy {showpath(local)}, as the download failed"
            if outcome is None:
                return conll_failed(tried)
            if outcome == "up to date":
                say(CONLL_PROG, f"up to date: {showpath(dest)}/{{train,test}}.txt have the right md5; nothing to do")
                return 0
            for f in CONLL_FILES:
                os.replace(f"{stage}/{f}", f"{dest}/{f}")
        except BrokenPipeError:
            raise  # main() ends the run quietly
        except (Fatal, OSError) as e:
            error(CONLL_PROG, str(e))
            return 1
    say(CONLL_PROG, f"installed {showpath(dest)}/train.txt and test.txt (md5 verified) from {origin}")
    return 0


# ---------------------------------------------------------------- SIGHAN 2005 and SIGHAN 2008 SXU

SIGHAN_USAGE = f"""\
Usage: bash data_scripts/get_sighan2005.sh [--from PATH] [--out DIR] [--only WHICH] [--force]
   or: python3 data_scripts/corpora.py sighan2005 [--from PATH] [--out DIR] [--only WHICH] [--force]

SIGHAN 2005 (Second International Chinese Word Segmentation Bakeoff), corpora
pku msr cityu as, installed as (whatever the source has):
  <out>/sighan2005/<c>_training.utf8        segmented training set
  <out>/sighan2005/<c>_test.utf8            raw test text
  <out>/sighan2005/<c>_test_gold.utf8       segmented gold test set
  <out>/sighan2005/<c>_training_words.utf8  training word list (for OOV scoring)
  <out>/sighan2005/score                    the bakeoff's scoring script (if present)
  <out>/sighan2005/SHA256SUMS               sha256 of the installed files
All files are UTF-8 (Big5 training/test files of cityu and as, found in some
versions of the archive, are converted from {BIG5} as glibc's iconv does;
for as, from {CP950} if {BIG5} fails).

Without --from it downloads {SIGHAN_URL}
and, if that fails, uses the local copy in <repo>/../shared/data (or
$SEQBIL_LOCAL_DATA) and says so.  The local copy has no official training
sets: for pku it has the stand-in pku_training.approx.utf8 (installed under
that name, never as pku_training.utf8); msr, cityu and as are test-only there.

No checksums of the official files are known, so the sha256 of what was
installed is recorded in SHA256SUMS; the next run checks the installed files
against it and does nothing when they match (use --force to reinstall).

SIGHAN 2008 SXU (fourth bakeoff, simplified Chinese) has no official public
download URL that can be used, so it is installed from a local copy only:
a directory containing sighan2008-sxu/{{train,test}}.txt[.gz] (the --from
directory, or <repo>/../shared/data without --from) gives
  <out>/sighan2008-sxu/train.txt, test.txt, SHA256SUMS
If no such copy is found it is skipped with a notice.

Options:
  --from PATH  take a local copy instead of downloading.  PATH is one of:
               a directory with a sighan2005/ subdirectory (e.g. ../shared/data),
               a sighan2005/ directory of (optionally .gz) files,
               an unpacked icwb2-data directory (training/ testing/ gold/ scripts/),
               a directory holding icwb2-data/ or icwb2-data.zip, or the zip itself
  --out DIR    data directory to install into (default: <repo>/data)
  --only WHICH install only sighan2005 or only sighan2008-sxu
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""


class PlanItem(NamedTuple):
    """One file a source provides: installed NAME, SOURCE file, its ENCODING (None: UTF-8),
    and the function giving its SENTENCES if it is in another format (see extract)."""
    name: str
    source: str
    encoding: str | None = None
    sentences: Callable | None = None


class Found(NamedTuple):
    """A source that provides files to install: the plan, and how to describe the source."""
    plan: list
    description: str


def find_text(corpus, directory, subdir, stems):
    """(source, encoding) for STEM.utf8 in DIRECTORY/SUBDIR or DIRECTORY (each also .gz),
    or, for cityu and as, for the Big5 files some versions of the archive have instead."""
    for stem in stems:
        if src := find_file(f"{directory}/{subdir}/{stem}.utf8", f"{directory}/{stem}.utf8"):
            return src, None
    for stem in stems:
        for ext in BIG5_EXTENSIONS.get(corpus, ()):
            if src := find_file(f"{directory}/{subdir}/{stem}.{ext}", f"{directory}/{stem}.{ext}"):
                return src, BIG5
    return None


def plan_sighan2005(directory):
    """What DIRECTORY (icwb2-data layout, or flat) provides for SIGHAN 2005."""
    plan = []
    d = directory
    for c in SIGHAN_CORPORA:
        if found := find_text(c, d, "training", [f"{c}_training"]):
            plan.append(PlanItem(f"{c}_training.utf8", *found))
        elif c == "pku" and (src := find_file(f"{d}/training/{PKU_STAND_IN}", f"{d}/{PKU_STAND_IN}")):
            plan.append(PlanItem(PKU_STAND_IN, src, None))
        # (the official archive calls the as gold file as_testing_gold.utf8)
        for name, subdir, stems in ((f"{c}_test.utf8", "testing", [f"{c}_test"]),
                                    (f"{c}_test_gold.utf8", "gold", [f"{c}_test_gold", f"{c}_testing_gold"]),
                                    (f"{c}_training_words.utf8", "gold", [f"{c}_training_words"])):
            if found := find_text(c, d, subdir, stems):
                plan.append(PlanItem(name, *found))
    if src := find_file(f"{d}/scripts/score", f"{d}/score"):
        plan.append(PlanItem("score", src, None))
    return plan


def plan_sighan2008(directory):
    """SIGHAN 2008 SXU from DIRECTORY/sighan2008-sxu, or DIRECTORY itself if it is sighan2008-sxu."""
    for d in (f"{directory}/sighan2008-sxu", directory):
        if d == directory and os.path.basename(showpath(directory)) != "sighan2008-sxu":
            continue
        train, test = find_file(f"{d}/train.txt"), find_file(f"{d}/test.txt")
        if train and test:
            return [PlanItem("train.txt", train, None), PlanItem("test.txt", test, None)]
    return []


def sighan_from_zip(path, what, scratch, tried):
    if not is_zip(path):
        tried.append(f"{what}: not a zip file")
        return None
    unpacked = tempfile.mkdtemp(prefix="unzip.", dir=scratch.work())
    try:
        with zipfile.ZipFile(path) as archive:
            archive.extractall(unpacked)
    except (OSError, EOFError, ValueError, RuntimeError, zlib.error, zipfile.BadZipFile):
        tried.append(f"{what}: could not unpack it")
        return None
    for d in (f"{unpacked}/icwb2-data", unpacked):
        if os.path.isdir(d) and (plan := plan_sighan2005(d)):
            return Found(plan, what)
    tried.append(f"{what}: no icwb2-data files in it")
    return None


def sighan_from_path(path, scratch, tried):
    """SIGHAN 2005 from a local directory or zip file."""
    show = showpath(path)
    if os.path.isfile(path):
        return sighan_from_zip(path, show, scratch, tried)
    if not os.path.isdir(path):
        tried.append(f"local copy {show}: no such file or directory")
        return None
    for d in (f"{path}/sighan2005", f"{path}/icwb2-data", path):
        if os.path.isdir(d) and (plan := plan_sighan2005(d)):
            return Found(plan, f"local copy {showpath(d)}")
    if os.path.isfile(f"{path}/icwb2-data.zip"):
        return sighan_from_zip(f"{path}/icwb2-data.zip", f"{show}/icwb2-data.zip", scratch, tried)
    tried.append(f"local copy {show}: no SIGHAN 2005 files (<c>_test.utf8, <c>_test_gold.utf8, ...) in it, "
                 "in its sighan2005/ or icwb2-data/ subdirectory, nor an icwb2-data.zip")
    return None


def sighan_download(scratch, tried):
    if (files := download_files(SIGHAN_PROG, [SIGHAN_URL], scratch.work(), tried)) is None:
        return None
    return sighan_from_zip(files[0], f"download from {SIGHAN_URL}", scratch, tried)


def install_plan(dest, found, scratch, prog=SIGHAN_PROG):
    """Write every file of FOUND's plan into DEST atomically, then DEST/SHA256SUMS.  False if none could be."""
    scratch.makedirs(dest)
    stage = scratch.tempdir(dest)  # beside the output, so that installing is a rename
    names = []
    for item in found.plan:
        staged = f"{stage}/{item.name}"
        if extract(item.source, staged, item.encoding):
            if item.encoding:
                say(prog, f"converted {os.path.basename(item.source)} from {item.encoding} to UTF-8")
        elif item.encoding and item.name.startswith("as_") and extract(item.source, staged, CP950):
            say(prog, f"converted {os.path.basename(item.source)} from {CP950} to UTF-8")
        else:
            how = f"/convert from {item.encoding}" if item.encoding else ""
            warn(prog, f"skipping {item.name}: could not read{how} {item.source}")
            continue
        names.append(item.name)
    if not names:
        warn(prog, f"nothing could be installed into {dest}")
        return False
    old = manifest_names(dest)
    _remove(f"{dest}/{MANIFEST}")  # an interrupted run must not look up to date
    for name in names:
        os.replace(f"{stage}/{name}", f"{dest}/{name}")
    if os.path.isfile(f"{dest}/score"):
        os.chmod(f"{dest}/score", 0o755)
    manifest_write(dest, names)
    for name in old:
        if name and os.path.isfile(f"{dest}/{name}") and name not in names:
            warn(prog, f"kept {name} from an earlier install "
                       f"(not in this source; no longer listed in {MANIFEST})")
    say(prog, f"installed {len(names)} files into {showpath(dest)} "
              f"from {found.description} (sha256 in {MANIFEST})")
    return True


def report_sighan2005(dest):
    """Say which corpora in DEST have a training set and which are test-only."""
    names = set(manifest_names(dest))
    say(SIGHAN_PROG, f"SIGHAN 2005 in {showpath(dest)}:")
    with_training, test_only = [], []
    for c in SIGHAN_CORPORA:
        if f"{c}_training.utf8" in names:
            training = f"{c}_training.utf8"
            with_training.append(c)
        elif c == "pku" and PKU_STAND_IN in names:
            training = f"{PKU_STAND_IN} (stand-in)"
            with_training.append("pku(stand-in)")
        else:
            training = "none"
            test_only.append(c)
        parts = "".join(f" {part}" if f"{c}_{part}.utf8" in names else f" (no {part})"
                        for part in ("test", "test_gold", "training_words"))
        print(f"  {c:<6} training: {training:<36}{parts}", flush=True)
    if "score" not in names:
        print("  (no scoring script in this source; the official one is scripts/score in icwb2-data.zip)", flush=True)
    say(SIGHAN_PROG, f"with a training set: {' '.join(with_training) or 'none'}; "
                     f"test-only: {' '.join(test_only) or 'none'}")
    if PKU_STAND_IN in names and "pku_training.utf8" not in names:
        say(SIGHAN_PROG, "notice: pku training = local stand-in pku_training.approx.utf8 (People's Daily 1998, "
                         "not the official pku_training.utf8; F1 only approximately comparable)")


def sighan2005_failed(tried, source):
    lines = [f"{SIGHAN_PROG}: error: could not obtain SIGHAN 2005 (icwb2-data). Tried:", *(f"  - {t}" for t in tried),
             "Point --from at the local copy (a directory with sighan2005/, a sighan2005/ directory,",
             "an unpacked icwb2-data directory, or icwb2-data.zip), e.g.:",
             "  bash data_scripts/get_sighan2005.sh --from ../shared/data"]
    if source and os.path.exists(source) and plan_sighan2008(source):
        lines.append(f"({showpath(source)} does hold SIGHAN 2008 SXU; to install only that, add --only sighan2008-sxu)")
    print("\n".join(lines), file=sys.stderr, flush=True)
    return 1


def install_sighan2005(dest, source, force, scratch):
    tried = []
    problem = None  # why the installed files are not up to date, if that was checked
    if source:
        found = sighan_from_path(source, scratch, tried)
        if found is None:
            return sighan2005_failed(tried, source)
        if not force:
            problem = manifest_verify(dest, [item.name for item in found.plan])
            if problem is None:
                say(SIGHAN_PROG, f"up to date: {showpath(dest)} matches its {MANIFEST}; nothing to do")
                report_sighan2005(dest)
                return 0
    else:
        if not force:
            problem = manifest_verify(dest)
            if problem is None:
                say(SIGHAN_PROG, f"up to date: {showpath(dest)} matches its {MANIFEST}; "
                                 "nothing to do (--force to reinstall)")
                report_sighan2005(dest)
                return 0
        found = sighan_download(scratch, tried)
        if found is None:
            local = local_data_dir()
            warn(SIGHAN_PROG, tried[-1])
            say(SIGHAN_PROG, f"download failed; falling back to the local copy in {showpath(local)}")
            found = sighan_from_path(local, scratch, tried)
            if found is None:
                return sighan2005_failed(tried, None)
            found = found._replace(description=f"{found.description}, as the download failed")
    if problem and os.path.isfile(f"{dest}/{MANIFEST}"):
        say(SIGHAN_PROG, f"reinstalling: {problem}")
    if not install_plan(dest, found, scratch):
        return 1
    report_sighan2005(dest)
    return 0


def install_sighan2008(dest, source, only, force, scratch):
    """SIGHAN 2008 SXU, from SOURCE or the local copy (it has no usable public download)."""
    source = source or local_data_dir()
    show = showpath(source)
    plan = plan_sighan2008(source) if os.path.exists(source) else []
    expected = ["train.txt", "test.txt"]
    if plan:
        found = Found(plan, f"local copy {showpath(os.path.dirname(plan[0].source))}")
        problem = None if force else manifest_verify(dest, expected)
        if not force and problem is None:
            say(SIGHAN_PROG, f"up to date: {showpath(dest)} (SIGHAN 2008 SXU) matches its {MANIFEST}; nothing to do")
            return 0
        if problem and os.path.isfile(f"{dest}/{MANIFEST}"):
            say(SIGHAN_PROG, f"reinstalling SIGHAN 2008 SXU: {problem}")
        return 0 if install_plan(dest, found, scratch) else 1
    if only == "sighan2008-sxu":
        print(f"{SIGHAN_PROG}: error: SIGHAN 2008 SXU: no sighan2008-sxu/{{train,test}}.txt[.gz] in {show}.\n"
              "It has no usable public download URL; point --from at a directory containing sighan2008-sxu/, e.g.:\n"
              "  bash data_scripts/get_sighan2005.sh --only sighan2008-sxu --from ../shared/data",
              file=sys.stderr, flush=True)
        return 1
    if manifest_verify(dest, expected) is None:
        say(SIGHAN_PROG, f"SIGHAN 2008 SXU: no local copy in {show}, "
                         f"but {showpath(dest)} is installed and matches its {MANIFEST}")
    else:
        say(SIGHAN_PROG, f"notice: SIGHAN 2008 SXU not installed: no sighan2008-sxu/{{train,test}}.txt[.gz] in {show} "
                         "(there is no public download; use --from DIR with DIR/sighan2008-sxu/)")
    return 0


def install_sighan(out=None, source=None, only=None, force=False):
    """Install SIGHAN 2005 into OUT/sighan2005 and SIGHAN 2008 SXU into OUT/sighan2008-sxu
    (OUT default <repo>/data; ONLY: one of them).  Returns the exit status."""
    if only and only not in ONLY_CHOICES:
        raise ValueError(f"only must be one of {ONLY_CHOICES}, not {only!r}")
    root = out or DATA_DIR
    status = 0
    with Scratch() as scratch:
        try:
            if only != "sighan2008-sxu":
                status = install_sighan2005(f"{root}/sighan2005", source, force, scratch)
            # (after a SIGHAN 2005 failure its error is the whole story; SXU is not attempted)
            if only != "sighan2005" and status == 0:
                status = install_sighan2008(f"{root}/sighan2008-sxu", source, only, force, scratch)
        except BrokenPipeError:
            raise  # main() ends the run quietly
        except (Fatal, OSError) as e:
            error(SIGHAN_PROG, str(e))
            return 1
    return status


# ---------------------------------------------------------------- cws-more: udc, wtb, zx

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
    readme = [PlanItem(name, find_file(f"{d}/{name}")) for name in cws_readme(corpus)]
    for plan in ([PlanItem(f"{split}.txt", find_file(f"{d}/{split}.txt")) for split in CWS_SPLITS],
                 [PlanItem(f"{split}.txt", find_file(f"{d}/{name}"), None, sentences)
                  for split, (name, sentences) in zip(CWS_SPLITS, cws_upstream(corpus))]):
        if all(item.source for item in plan + readme):
            return plan + readme
    return []


def cws_from_path(path, corpus, tried):
    """CORPUS from the local directory PATH (not unpacked or converted yet)."""
    for d in (f"{path}/cws-more", f"{path}/data/other", path):
        if plan := plan_cws(f"{d}/{corpus}", corpus):
            return Found(plan, f"local copy {showpath(d)}/{corpus}")
    readme = "".join(f", {name}" for name in cws_readme(corpus))
    upstream = "{" + ",".join(name for name, _ in cws_upstream(corpus)) + "}"
    tried.append(f"local copy {showpath(path)}: " + (
        f"no {corpus}/{{train,dev,test}}.txt[.gz]{readme} (nor {corpus}/{upstream}{readme}) "
        "in it or in its cws-more/ or data/other/ subdirectory" if os.path.isdir(path) else "no such directory"))
    return None


def cws_download(corpus, scratch, tried):
    """Download CORPUS's upstream files (not converted yet); None if that fails."""
    work = tempfile.mkdtemp(prefix=f"{corpus}.", dir=scratch.work())
    names = [name for name, _ in cws_upstream(corpus)] + cws_readme(corpus)
    if download_files(CWS_PROG, [f"{CWS_URL}/{corpus}/{name}" for name in names], work, tried) is None:
        return None
    return Found(plan_cws(work, corpus), f"download from {CWS_URL}/{corpus}")


def cws_stage(found, scratch, tried):
    """FOUND's files unpacked and converted in the run's directory, so that a file that cannot be
    read is noticed before anything is installed: a Found of them, or None (a note in TRIED)."""
    if found is None:
        return None
    work = tempfile.mkdtemp(prefix="staged.", dir=scratch.work())
    for item in found.plan:
        staged = f"{work}/{item.name}"
        if not extract(item.source, staged, sentences=item.sentences):
            problem = "could not read/convert"
        elif os.path.getsize(staged) == 0:
            problem = "nothing in"
        else:
            continue
        tried.append(f"{found.description}: {problem} {os.path.basename(item.source)}")
        return None
    return Found([PlanItem(item.name, f"{work}/{item.name}") for item in found.plan], found.description)


def install_cws_corpus(dest, corpus, source, force, scratch, tried):
    """Install CORPUS into DEST from the local copy SOURCE or, without SOURCE, by download, falling
    back on the local copy.  False (notes in TRIED) if it could not be obtained."""
    problem = None if force else manifest_verify(dest, [f"{split}.txt" for split in CWS_SPLITS] + cws_readme(corpus))
    found = cws_from_path(source, corpus, tried) if source else None
    if not force and problem is None and (found or not source):
        say(CWS_PROG, f"up to date: {showpath(dest)} matches its {MANIFEST}; nothing to do (--force to reinstall)")
        return True
    if source:
        found = cws_stage(found, scratch, tried)
    else:
        found = cws_stage(cws_download(corpus, scratch, tried), scratch, tried)
        if found is None:
            local = local_data_dir()
            warn(CWS_PROG, tried[-1])
            say(CWS_PROG, f"download failed; falling back to the local copy in {showpath(local)}")
            if found := cws_from_path(local, corpus, tried):
                found = cws_stage(found._replace(description=f"{found.description}, as the download failed"),
                                  scratch, tried)
    if found is None:
        return False
    if problem and os.path.isfile(f"{dest}/{MANIFEST}"):
        say(CWS_PROG, f"reinstalling {corpus}: {problem}")
    return install_plan(dest, found, scratch, CWS_PROG)


def report_failed(prog, failed, tried, installed, advice):
    """Say what could not be obtained, every place tried, how to point at a local copy
    (ADVICE: lines) and what was installed anyway; returns exit status 1."""
    lines = [f"{prog}: error: could not obtain {' '.join(failed)}. Tried:",
             *(f"  - {t}" for t in dict.fromkeys(tried)), *advice]  # (a missing local copy is tried per item)
    if installed:
        lines.append(f"(installed: {' '.join(installed)}; to ask for these only, add --only {','.join(installed)})")
    print("\n".join(lines), file=sys.stderr, flush=True)
    return 1


def cws_failed(failed, tried, installed):
    return report_failed(CWS_PROG, failed, tried, installed, [
        "Point --from at the local copy (a directory with cws-more/, a cws-more/ directory,",
        "a clone of hankcs/multi-criteria-cws or its data/other/ directory), e.g.:",
        "  bash data_scripts/get_cws_more.sh --from ../shared/data"])


def install_cws_more(out=None, source=None, only=None, force=False):
    """Install udc, wtb and zx into OUT/cws-more/<c> (OUT default <repo>/data; ONLY: a comma-separated
    list of some of them).  Returns the exit status."""
    selected = only.split(",") if only else CWS_CORPORA
    if not set(selected) <= set(CWS_CORPORA):
        raise ValueError(f"only must list some of {CWS_CORPORA}, not {only!r}")
    root = f"{out or DATA_DIR}/cws-more"
    with Scratch() as scratch:
        return install_each(CWS_PROG, [c for c in CWS_CORPORA if c in selected], cws_failed,
                            lambda c, notes: install_cws_corpus(f"{root}/{c}", c, source, force, scratch, notes))


def install_each(prog, items, failed_report, install_one):
    """install_one(item, notes) for each item (False: not obtained, NOTES saying where it was
    looked for); then failed_report(failed, tried, installed) if any failed. Returns the exit
    status."""
    failed, tried = [], []
    try:
        for item in items:
            notes = []
            if not install_one(item, notes):
                failed.append(item)
                tried += notes
    except BrokenPipeError:
        raise  # main() ends the run quietly
    except (Fatal, OSError) as e:
        error(prog, str(e))
        return 1
    if failed:
        return failed_report(failed, tried, [i for i in items if i not in failed])
    return 0


# ---------------------------------------------------------------- unlabeled: raw text for seqbil aso

UNLAB_PROG = "get_unlabeled"
NLTK_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora"
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
    archive = None
    if os.path.isdir(path):
        names = [os.path.relpath(os.path.join(d, f), path).replace(os.sep, "/")
                 for d, _, files in os.walk(path) for f in files]
    else:
        archive = zipfile.ZipFile(path)
        names = [n.removeprefix(f"{corpus}/") for n in archive.namelist() if n.startswith(f"{corpus}/")]
    try:
        names = sorted(n for n in names if re.fullmatch(pattern, n))
        if not names:
            raise ValueError(f"no {corpus} text files in it")
        for name in names:
            encoding = "utf-8-sig" if f"{corpus}/{name}" in NLTK_UTF8 else "latin-1"
            with (archive.open(f"{corpus}/{name}") if archive else open(f"{path}/{name}", "rb")) as f:
                for line in io.TextIOWrapper(f, encoding):
                    if s := sentence(line):
                        yield s
    finally:
        if archive is not None:
            archive.close()


def zh_sentences(files):
    """The lines of zh/mixed.txt from FILES, those of ZH_SOURCES (each plain or gzip-compressed)."""
    for path, (_, keep_spaces) in zip(files, ZH_SOURCES):
        with gzip.open(path, "rb") if is_gzip(path) else open(path, "rb") as f:
            for line in io.TextIOWrapper(f, "utf-8-sig"):
                if s := line.strip() if keep_spaces else "".join(line.split()):
                    yield s


def write_gz(path, sentences):
    """Write SENTENCES, one a line, gzip-compressed to PATH (mode 644) as the local copy's files are, so that
    the same text gives the same bytes (no time stamp).  Returns (number of lines, sha256 of the text)."""
    h, count = hashlib.sha256(), 0
    with open(path, "wb") as raw, gzip.GzipFile(path, "wb", 9, raw, mtime=0) as out:
        for s in sentences:
            data = f"{s}\n".encode()
            h.update(data)
            out.write(data)
            count += 1
    os.chmod(path, 0o644)
    return count, h.hexdigest()


def copy_gz(src, path):
    """Copy SRC, a gzip-compressed or plain text file, to PATH gzip-compressed (a compressed SRC is copied
    unchanged, once it has been read through).  Returns (number of lines, sha256 of the text)."""
    h, count = hashlib.sha256(), 0
    if is_gzip(src):
        with gzip.open(src, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
                count += block.count(b"\n")
        shutil.copyfile(src, path)
    else:
        with open(src, "rb") as f, open(path, "wb") as raw, gzip.GzipFile(path, "wb", 9, raw, mtime=0) as out:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
                count += block.count(b"\n")
                out.write(block)
    os.chmod(path, 0o644)
    return count, h.hexdigest()


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
        if src := find_file(f"{d}/{stem}"):
            return Text(f"local copy {showpath(os.path.dirname(src))}", lambda path: copy_gz(src, path))
    return None


def unlab_nltk(corpus, directory):
    """CORPUS in DIRECTORY as NLTK distributes it ([corpora/]<c>.zip, or unpacked): a Text, or None."""
    for d in (f"{directory}/corpora", directory):
        for src in (f"{d}/{corpus}.zip", f"{d}/{corpus}"):
            if os.path.isfile(src) or os.path.isdir(src):
                return Text(f"NLTK data {showpath(src)}", lambda path: write_gz(path, nltk_sentences(src, corpus)),
                            "converted from")
    return None


def unlab_built(directory):
    """zh/mixed.txt built from the corpora installed in DIRECTORY: (a Text, []), or (None, the files missing)."""
    files = [find_file(f"{directory}/{rel}") for rel, _ in ZH_SOURCES]
    if missing := [rel for (rel, _), f in zip(ZH_SOURCES, files) if f is None]:
        return None, missing
    return Text(f"the corpora in {showpath(directory)}", lambda path: write_gz(path, zh_sentences(files)),
                "built from"), []


def unlab_missing(part, directory, also=None):
    """Why DIRECTORY, a local copy, does not give PART (ALSO: what else was looked for in it)."""
    if not os.path.isdir(directory):
        return f"local copy {showpath(directory)}: no such directory"
    sub, name = unlab_name(part).removesuffix(".gz").split("/")
    missing = (f"local copy {showpath(directory)}: no {name}[.gz] in it or in its {sub}/ or unlabeled/{sub}/ "
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
            _remove(path)
            tried.append(f"{text.description}: could not read/convert it ({e})")
            return None
        if lines == 0:
            _remove(path)
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
    manifest_record(dest, name, None)  # an interrupted run must not look up to date
    os.replace(staged.path, f"{dest}/{name}")
    manifest_record(dest, name, file_digest(f"{dest}/{name}", "sha256"))
    if staged.text.how != "from":
        why = f": {'' if staged.digest == UNLAB_SHA256[part] else 'not '}the reference text{why}"
    say(UNLAB_PROG, f"installed {showpath(dest)}/{name} ({staged.lines:,} lines) "
                    f"{staged.text.how} {staged.text.description}{why} (sha256 in {MANIFEST})")


def unlab_download(run, corpus, tried):
    """CORPUS downloaded from NLTK_URL and converted: a Staged, or None (a note in TRIED)."""
    url = f"{NLTK_URL}/{corpus}.zip"
    if run.offline:
        tried.append(f"download {url}: not tried, {run.offline}")
        return None
    zip_path = f"{tempfile.mkdtemp(prefix=f'{corpus}.', dir=run.scratch.work())}/{corpus}.zip"
    say(UNLAB_PROG, f"downloading {url}")
    try:
        download(url, zip_path)
    except (DownloadError, OSError) as e:
        tried.append(f"download {url}: {e}")
        if isinstance(e, DownloadError) and e.status is None:  # no answer: the other downloads would fail too
            run.offline = "as an earlier download failed"
        return None
    return run.stage(corpus, Text(f"download from {url}", lambda path: write_gz(path, nltk_sentences(zip_path, corpus)),
                                  "converted from"), tried)


def install_unlab_part(run, part, source, force, tried):
    """Install PART from the local copy SOURCE or, without SOURCE, from NLTK_URL (English) or the installed
    corpora (Chinese), falling back on the local copy.  False (notes in TRIED) if it could not be obtained."""
    dest, name = os.path.split(f"{run.root}/{unlab_name(part)}")
    problem = None if force else manifest_check(dest, name)
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
        say(UNLAB_PROG, f"up to date: {showpath(dest)}/{name} matches its {MANIFEST}; "
                        "nothing to do (--force to reinstall)")
        return True
    if problem and os.path.isfile(f"{dest}/{name}"):
        say(UNLAB_PROG, f"reinstalling {unlab_name(part)}: {problem}")
    if source:
        if (staged := run.stage(part, text, tried)) is None:
            return False
        if text.how != "from" and not unlab_reference(part, staged, tried):
            warn(UNLAB_PROG, f"{tried[-1]}; installing it all the same")
        unlab_install(run, part, staged)
        return True

    # NLTK_URL (English) or the installed corpora (Chinese), then the local copy
    staged, reason = None, None
    if part == "zh":
        text, missing = unlab_built(run.data)
        if text is None:
            tried.append(f"build from the corpora in {showpath(run.data)}: no {', '.join(missing)}")
            reason = f"cannot build {unlab_name(part)} here: no {missing[0]} in {showpath(run.data)}"
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
        warn(UNLAB_PROG, tried[-1])
        reason = because
    local = local_data_dir()
    say(UNLAB_PROG, f"{reason}; falling back to the local copy in {showpath(local)}")
    if (text := unlab_local(part, local)) is None:
        tried.append(unlab_missing(part, local))
    elif local_staged := run.stage(part, text, tried):
        if staged is not None:
            _remove(staged.path)
        unlab_install(run, part, local_staged, f", as {because}")
        return True
    if staged is not None:  # a text that is not the reference text, but the only one there is
        warn(UNLAB_PROG, f"installing the text {staged.text.how} {staged.text.description} all the same: "
                         "there is no local copy to use instead")
        unlab_install(run, part, staged)
        return True
    return False


def unlab_failed(failed, tried, installed):
    return report_failed(UNLAB_PROG, [unlab_name(p) for p in failed], tried, installed, [
        "Point --from at the local copy (a directory with unlabeled/, an unlabeled/ directory, or its",
        "en/ or zh/ directory; for English also an nltk_data directory), e.g.:",
        "  bash data_scripts/get_unlabeled.sh --from ../shared/data"])


def install_unlabeled(out=None, source=None, only=None, force=False):
    """Install the unlabeled text into OUT/unlabeled/{en,zh} (OUT default <repo>/data; ONLY: a comma-separated
    list of parts, en standing for the six English files).  Returns the exit status."""
    selected = only.split(",") if only else UNLAB_ONLY
    if not set(selected) <= set(UNLAB_ONLY):
        raise ValueError(f"only must list some of {UNLAB_ONLY}, not {only!r}")
    selected = {p for s in selected for p in (UNLAB_EN if s == "en" else [s])}
    with Scratch() as scratch:
        run = _UnlabRun(out or DATA_DIR, scratch)
        return install_each(UNLAB_PROG, [p for p in UNLAB_PARTS if p in selected], unlab_failed,
                            lambda part, notes: install_unlab_part(run, part, source, force, notes))


# ---------------------------------------------------------------- command line

class _UsageError(Exception):
    def __init__(self, prog, message):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse that never exits by itself: main() reports errors in the scripts' words."""

    def error(self, message):
        raise _UsageError(self.prog, f"{message} (try --help)")


_MISSING = object()  # an option given without its value
# command: (program name in messages, usage)
_COMMANDS = {"conll2000": (CONLL_PROG, CONLL_USAGE), "sighan2005": (SIGHAN_PROG, SIGHAN_USAGE),
             "cws-more": (CWS_PROG, CWS_USAGE), "unlabeled": (UNLAB_PROG, UNLAB_USAGE)}
# command: (what --only takes, whether it takes a comma-separated list of them, the values it takes)
_ONLY = {"sighan2005": ("sighan2005 or sighan2008-sxu", False, ONLY_CHOICES),
         "cws-more": ("udc, wtb or zx", True, CWS_CORPORA),
         "unlabeled": ("en, zh, abc, brown, inaugural, movie_reviews, state_union or webtext", True, UNLAB_ONLY)}


def _parser():
    top = _Parser(prog="corpora.py", add_help=False, allow_abbrev=False)
    commands = top.add_subparsers(dest="command", parser_class=_Parser)
    for name, (prog, _) in _COMMANDS.items():
        p = commands.add_parser(name, prog=prog, add_help=False, allow_abbrev=False)
        p.add_argument("--from", dest="source", nargs="?", const=_MISSING)
        p.add_argument("--out", nargs="?", const=_MISSING)
        if name in _ONLY:
            p.add_argument("--only", nargs="?", const=_MISSING)
        p.add_argument("--force", action="store_true")
        p.add_argument("-h", "--help", action="store_true")
    return top


TOP_USAGE = """\
Usage: python3 data_scripts/corpora.py conll2000  [--from DIR]  [--out DIR] [--force]
       python3 data_scripts/corpora.py sighan2005 [--from PATH] [--out DIR] [--only WHICH] [--force]
       python3 data_scripts/corpora.py cws-more   [--from DIR]  [--out DIR] [--only WHICH] [--force]
       python3 data_scripts/corpora.py unlabeled  [--from DIR]  [--out DIR] [--only WHICH] [--force]
Installs the corpora of the seqbil benchmarks; COMMAND --help tells more.
"""


def _check_values(args):
    """The scripts' messages for options given without a value or with a wrong one."""
    what = "a path" if args.command == "sighan2005" else "a directory"
    if args.source is _MISSING:
        return f"--from needs {what} (try --help)"
    if args.out is _MISSING:
        return "--out needs a directory (try --help)"
    only = getattr(args, "only", None)
    if only is None:
        return None
    choices, listed, valid = _ONLY[args.command]
    if only is _MISSING:
        return f"--only needs {choices}"
    if not all(name in valid for name in (only.split(",") if listed else [only])):
        return f"--only takes {choices}{' (or a comma-separated list of them)' if listed else ''}, not '{only}'"
    return None


def main(argv=None):
    """Run a command line (without the program name); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args, unknown = _parser().parse_known_args(argv)
    except _UsageError as e:
        error(e.prog, str(e))
        return 2
    if args.command is None:
        helped = any(a in ("-h", "--help") for a in argv)
        print(TOP_USAGE, end="", file=sys.stdout if helped else sys.stderr)
        return 0 if helped else 2
    prog, usage = _COMMANDS[args.command]
    if args.help:
        print(usage, end="")
        return 0
    if unknown:
        error(prog, f"unknown argument: {unknown[0]} (try --help)")
        return 2
    if problem := _check_values(args):
        error(prog, problem)
        return 2
    try:
        if args.command == "conll2000":
            return install_conll2000(args.out, args.source, args.force)
        if args.command == "cws-more":
            return install_cws_more(args.out, args.source, args.only, args.force)
        if args.command == "unlabeled":
            return install_unlabeled(args.out, args.source, args.only, args.force)
        return install_sighan(args.out, args.source, args.only, args.force)
    except KeyboardInterrupt:
        return 130
    except _Signalled as e:
        return 128 + e.signum
    except BrokenPipeError:
        # nobody reads our messages any more; let the interpreter exit quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


class _Signalled(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (removing temporary files) and exit with 128 + signum."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum, frame):
    raise _Signalled(signum)


if __name__ == "__main__":
    for _sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(_sig, _raise_signalled)
    sys.exit(main())
