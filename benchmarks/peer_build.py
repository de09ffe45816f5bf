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
import shutil
import subprocess
import sys
import tarfile
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
