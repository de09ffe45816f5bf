"""JSON records behind every published figure: what ran, on which commit and machine,
when, and timings over repeated runs (min / median / max).

A benchmark writes RECORD.json with `write_record`; the Markdown table beside it and
the README's copy are generated from the record (`tables.py`), never typed.
"""
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine():
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal"))) / 2 ** 20
    except (OSError, StopIteration):
        mem = float("nan")
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1), "system": platform.platform()}


def commit():
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+modified" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def stats(values):
    """min / median / max of repeated measurements, with the runs themselves."""
    values = [float(v) for v in values]
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "runs": values}


def header(command=None):
    import numpy
    import seqbil
    return {"command": command or " ".join([Path(sys.argv[0]).name] + sys.argv[1:]), "commit": commit(),
            "machine": machine(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": platform.python_version(), "numpy": numpy.__version__, "seqbil": seqbil.__version__}


# an absolute path of the machine that ran a benchmark: it says nothing on another, and
# names the machine's folders; a record keeps paths relative to the repository instead
ABSOLUTE = re.compile(r"(?<![\w.:/-])/(?:tmp|work|root|home|Users|private|var/folders|mnt|srv|opt)(?:/[^\s\"'`,;()\[\]]*)?")


# folders named as the repository's: a path through one (a copy of the checkout, the data
# folder that data_scripts/ fills) is kept from the last of them on
FOLDERS = ("data", "results", "experiments", "benchmarks", "configs", "data_scripts", "tests")


def portable(value, root=ROOT):
    """value (a string, or lists and dicts of them) with every absolute path made
    portable: relative to the repository when inside it (results/x), from the last
    folder named as one of the repository's on when it goes through one (a copy of
    experiments/, data/conll2000/train.txt: where data_scripts/ put the corpora), else
    its file name."""
    if isinstance(value, dict):
        return {k: portable(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [portable(v, root) for v in value]
    if not isinstance(value, str):
        return value

    def one(m):
        path = m.group(0).rstrip(".")
        tail = m.group(0)[len(path):]
        inside = os.path.relpath(path, root)
        if not inside.startswith(".."):
            return inside + tail
        parts = Path(path).parts
        at = max((i for i, part in enumerate(parts) if part in FOLDERS), default=None)
        return ("/".join(parts[at:]) if at is not None else parts[-1]) + tail
    # the checkout itself may be anywhere (a CI runner's folder): its own paths first
    here = re.compile(r"(?<![\w.:/-])" + re.escape(str(root)) + r"(?![^/\s\"'`,;()\[\]])(?:/[^\s\"'`,;()\[\]]*)?")
    return ABSOLUTE.sub(one, here.sub(one, value))


def write_record(path, record):
    """Write atomically (a killed benchmark leaves the previous record), its paths
    made portable in the dict itself: a table rendered from it afterwards says what
    the record says."""
    if isinstance(record, dict):
        record.update(portable(record))
    else:
        record = portable(record)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def run_measured(cmd, stdin=None, stdout=None, env=None, cpu=False):
    """(wall seconds, peak RSS in MiB, stderr text) of one subprocess; exits on failure.
    cpu: and its CPU seconds (user and system, its own and its children's), fourth.

    The peak RSS comes from GNU time when it is there: Linux carries a process's peak
    over exec, so a command started straight from this (possibly large) Python process
    would report at least this process's size."""
    import tempfile
    gnu_time = Path("/usr/bin/time")
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss_file:
        wrapped = [str(gnu_time), "-f", "%M", "-o", rss_file.name, *map(str, cmd)] if gnu_time.exists() else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdin=stdin, stdout=stdout or subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env)
        err = proc.stderr.read().decode("utf-8", "replace")
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(map(str, cmd))}\n{err}")
        peak_kib = int(Path(rss_file.name).read_text().split()[-1]) if gnu_time.exists() else usage.ru_maxrss
    if cpu:  # (GNU time waits for the command: its usage holds the command's)
        return wall, peak_kib / 1024, err, usage.ru_utime + usage.ru_stime
    return wall, peak_kib / 1024, err


def eval_f1(model, data):
    """The F1 `seqbil eval --json` gives a model on a corpus (chunk or word F1 by the
    model's task)."""
    out = subprocess.run([sys.executable, "-P", "-m", "seqbil", "eval", "--model", str(model), "--data", str(data),
                          "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["f1"]


def byte_compile():
    """Byte-compile the seqbil package that the timed commands import, as `pip install`
    leaves an installed package: a checkout run in place (or an environment with
    PYTHONDONTWRITEBYTECODE) would otherwise compile every module at each start."""
    import compileall
    import seqbil
    compileall.compile_dir(str(Path(seqbil.__file__).parent), quiet=1)


def find_corpus(folder, name, data=None):
    """A corpus file as data_scripts/ installs it: under DATA, else data/, else
    ../shared/data (possibly gzipped); exits with a message when it is missing."""
    roots = [Path(data)] if data else [ROOT / "data", ROOT.parent / "shared" / "data"]
    for r in roots:
        for path in (r / folder / name, r / folder / (name + ".gz"), r / name, r / (name + ".gz")):
            if path.exists():
                return path
    sys.exit(f"{folder}/{name} not found under {', '.join(map(str, roots))} (see data_scripts/)")
