"""The peers' C/C++ tools built from their source tarballs (../shared/peers), each as
its users build it, once, into a cache folder named after the tarball's hash:

    CRF++:  ./configure --prefix=DIR/inst && make -j2 && make install   -> DIR/inst/bin/crf_learn, crf_test
    Wapiti: make (its Makefile's own flags)                            -> DIR/wapiti/wapiti

A lock keeps two runs from building at once. A build that fails exits with a message
naming its log (SystemExit: a caller that can go on without the tool catches it).
"""
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_dir(src, name):
    """$XDG_CACHE_HOME/seqbil/NAME-HASH (or ~/.cache/...), HASH from the tarball's sha256."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "seqbil" / f"{name}-{sha256(src)[:12]}"


def default_crfpp_dir(src):
    return cache_dir(src, "crfpp")


def default_wapiti_dir(src):
    return cache_dir(src, "wapiti")


def _extract(src, folder, top):
    shutil.rmtree(folder / top, ignore_errors=True)
    with tarfile.open(src) as tar:
        tar.extractall(folder, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))


def _make(cmds, cwd, log_path, who):
    with open(log_path, "w") as log:
        for cmd in cmds:
            try:
                status = subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT).returncode
            except OSError as exc:
                sys.exit(f"{who}: `{' '.join(cmd)}` could not run in {cwd}: {exc}")
            if status:
                sys.exit(f"{who}: `{' '.join(cmd)}` failed in {cwd}; see {log_path}")


def build_crfpp(src, folder):
    """CRF++ built as its README says (./configure --prefix; make; make install) in
    FOLDER, unless it is there already; the bin folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bin_dir = folder / "inst" / "bin"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (bin_dir / "crf_learn").exists() and (bin_dir / "crf_test").exists():
            return bin_dir
        print(f"building CRF++ from {src} in {folder} ...", file=sys.stderr)
        _extract(src, folder, "crfpp")
        winmain = folder / "crfpp" / "winmain.h"
        if not winmain.exists():
            # Missing from CRF++'s repository (taku910/crfpp issue 31, pull request 15), included by
            # crf_learn.cpp and crf_test.cpp; the released header only defines anything under _WIN32.
            winmain.write_text("/* empty: winmain.h only matters on Windows */\n")
        _make([["./configure", f"--prefix={folder / 'inst'}"], ["make", "-j2"], ["make", "install"]],
              folder / "crfpp", folder / "build.log", "CRF++ build")
    return bin_dir


def build_wapiti(src, folder):
    """Wapiti built as its INSTALL says (`make`, its Makefile's flags) in FOLDER, unless
    it is there already; the path of the wapiti program."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "wapiti" / "wapiti"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if program.exists():
            return program
        print(f"building Wapiti from {src} in {folder} ...", file=sys.stderr)
        _extract(src, folder, "wapiti")
        _make([["make"]], folder / "wapiti", folder / "build.log", "Wapiti build")
        if not program.exists():
            sys.exit(f"Wapiti build: make left no {program}; see {folder / 'build.log'}")
    return program


def measure(cmd, cwd, stdout=None, env=None):
    """(exit status, wall s, CPU s (user + sys, its children included), peak RSS MiB,
    stderr) of one command in a subprocess. The peak RSS is GNU time's when it is there
    (Linux carries a process's peak over exec, see record.run_measured)."""
    gnu_time = Path("/usr/bin/time")
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss_file:
        wrapped = [str(gnu_time), "-f", "%M", "-o", rss_file.name, *map(str, cmd)] if gnu_time.exists() \
            else [*map(str, cmd)]
        out = open(stdout, "wb") if stdout else subprocess.DEVNULL
        try:
            start = time.perf_counter()
            proc = subprocess.Popen(wrapped, cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=env)
            err = proc.stderr.read().decode("utf-8", "replace")
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        finally:
            if stdout:
                out.close()
        text = Path(rss_file.name).read_text().split() if gnu_time.exists() else []
        peak_kib = int(text[-1]) if text and text[-1].isdigit() else usage.ru_maxrss
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, peak_kib / 1024, err


def message(err, work, root):
    """The gist of a failed command's stderr, without this machine's paths."""
    lines = [line.strip() for line in err.replace("\r", "\n").splitlines() if line.strip()]
    picked = [line for line in lines if re.search(r"error|fail|cannot|not ", line, re.I)] or lines[-2:]
    text = " ".join(picked[-3:]) or "(no message)"
    return text.replace(f"{work}/", "").replace(f"{root}/", "")


# CRF++ splits a line at spaces and tabs (tokenize2(line, "\t ") in tagger.cpp)
FIELDS = re.compile(r"[ \t]+")


def column_sentences(text):
    """Sentences as lists of field lists, fields split at spaces and tabs as CRF++ splits them."""
    sentences, rows = [], []
    for line in text.splitlines():
        line = line.strip(" \t\r")
        if not line:
            if rows:
                sentences.append(rows)
                rows = []
            continue
        rows.append(FIELDS.split(line))
    if rows:
        sentences.append(rows)
    return sentences
