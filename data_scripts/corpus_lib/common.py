"""What every corpus family shares: the messages, the run's temporary directories (Scratch),
SHA256SUMS manifests, glibc-compatible Big5 decoding, unpacking (also the files of an NLTK data
package), gzip files written as the local copy's are, downloads with retries and timeouts, and
installing a plan of files (or files already staged beside the output) atomically.  The family
modules call these through the module (common.download(...)), so that replacing one here reaches
every caller."""
import gzip
import hashlib
import http.client
import io
import os
import re
import shutil
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

# the repository: data_scripts/corpus_lib/common.py is three levels down
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
DATA_DIR = f"{ROOT}/data"
# The NLTK data collection's packages, each as NAME.zip
NLTK_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora"

MANIFEST = "SHA256SUMS"
BIG5 = "BIG5-HKSCS"
CP950 = "CP950"
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


def say_up_to_date(prog, path):
    """Say that PATH (a file or a directory) matches its SHA256SUMS, so that nothing is done."""
    say(prog, f"up to date: {showpath(path)} matches its {MANIFEST}; nothing to do (--force to reinstall)")


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
        remove_file(tmp)
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
        remove_file(f"{directory}/{MANIFEST}")


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

def remove_file(path):
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
        remove_file(dest)
        return False


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


def nltk_members(path, corpus, pattern):
    """The files of CORPUS in PATH, its NLTK data zip or the directory that unpacks to, whose paths in the
    corpus directory match PATTERN, in the order of those paths (NLTK's file ids): (path, binary file) pairs,
    each file open until the next pair is asked for.  ValueError if none matches."""
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
            with (archive.open(f"{corpus}/{name}") if archive else open(f"{path}/{name}", "rb")) as f:
                yield name, f
    finally:
        if archive is not None:
            archive.close()


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
            remove_file(dest)
            pause = 2 ** attempt  # 1 s, then 2 s, as curl --retry waits
            if not e.transient or attempt == retries or time.monotonic() + pause >= deadline:
                raise
        except BaseException:
            remove_file(dest)
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


# ---------------------------------------------------------------- installing

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


def install_plan(prog, dest, found, scratch):
    """Write every file of FOUND's plan into DEST atomically, then DEST/SHA256SUMS.  False if none could be."""
    scratch.makedirs(dest)
    stage = scratch.tempdir(dest)  # beside the output, so that installing is a rename
    names = []
    for item in found.plan:
        staged = f"{stage}/{item.name}"
        if extract(item.source, staged, item.encoding):
            if item.encoding:
                say(prog, f"converted {os.path.basename(item.source)} from {item.encoding} to UTF-8")
        # (SIGHAN 2005's as files: those that are not valid BIG5-HKSCS are CP950)
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
    install_staged(prog, dest, stage, names, found.description)
    return True


def install_staged(prog, dest, stage, names, description):
    """Move the files NAMES from STAGE (a directory beside DEST) into DEST, then write DEST/SHA256SUMS for
    them, saying that they come from DESCRIPTION."""
    old = manifest_names(dest)
    remove_file(f"{dest}/{MANIFEST}")  # an interrupted run must not look up to date
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
              f"from {description} (sha256 in {MANIFEST})")


def report_failed(prog, failed, tried, installed, advice):
    """Say what could not be obtained, every place tried, how to point at a local copy
    (ADVICE: lines) and what was installed anyway; returns exit status 1."""
    lines = [f"{prog}: error: could not obtain {' '.join(failed)}. Tried:",
             *(f"  - {t}" for t in dict.fromkeys(tried)), *advice]  # (a missing local copy is tried per item)
    if installed:
        lines.append(f"(installed: {' '.join(installed)}; to ask for these only, add --only {','.join(installed)})")
    print("\n".join(lines), file=sys.stderr, flush=True)
    return 1


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
        raise  # corpora.main() ends the run quietly
    except (Fatal, OSError) as e:
        error(prog, str(e))
        return 1
    if failed:
        return failed_report(failed, tried, [i for i in items if i not in failed])
    return 0


def only_list(only, choices):
    """The names a comma-separated --only value lists (all the choices when None); corpora.py
    checks the value first, so a name outside the choices is a caller's bug (ValueError)."""
    selected = only.split(",") if only else list(choices)
    if not set(selected) <= set(choices):
        raise ValueError(f"only must list some of {choices}, not {only!r}")
    return selected
