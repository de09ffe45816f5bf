"""The Dask client a call runs on: given, connected to a scheduler, or a local cluster
of processes made for the call."""
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

from ..errors import SeqbilError
from ..tagging import cpus

CONNECT_TIMEOUT = "20s"  # to reach a scheduler that was given
START_TIMEOUT = 60.0  # for a local cluster's scheduler and workers to come up


def need_distributed():
    """The dask.distributed module, or an error saying how to get it."""
    try:
        import distributed
    except ImportError:
        raise SeqbilError('this needs Dask: pip install "seqbil[dask]"') from None
    return distributed


def worker_addresses(client):
    """The addresses of all the cluster's workers (some versions of Dask give only a
    few unless asked for all, others do not take the argument)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:
        info = client.scheduler_info()
    return set(info["workers"])


@contextlib.contextmanager
def connect(client=None, scheduler=None, workers=None, echo=None):
    """Yield a Client: `client` itself; one connected to `scheduler` (an address such
    as tcp://host:8786, or the path of a scheduler file); or, by default, one of a
    local cluster of `workers` processes with one thread each (default: one per CPU
    core), closed on exit (local_cluster). echo (a function of one line) is told the
    dashboard's address."""
    if sum(x is not None for x in (client, scheduler, workers)) > 1:
        raise SeqbilError("give one of a client, a scheduler and a number of local workers")
    if client is not None:
        yield client
        return
    distributed = need_distributed()
    with contextlib.ExitStack() as stack:
        if scheduler is None:
            if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
                raise SeqbilError(f"workers must be a whole number of at least 1, got {workers!r}")
            client = stack.enter_context(local_cluster(workers or cpus()))
        else:
            where = {"scheduler_file": scheduler} if os.path.isfile(scheduler) else {"address": scheduler}
            try:
                client = distributed.Client(**where, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise SeqbilError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
            stack.callback(client.close)
        if echo is not None and client.dashboard_link:
            echo(f"Dask dashboard: {client.dashboard_link}")
        yield client


@contextlib.contextmanager
def local_cluster(workers):
    """A Client of a Dask scheduler and `workers` worker processes (each under a
    nanny, which starts it again if it dies; one thread each: the kernels hold the
    GIL) started as processes of their own, as `dask scheduler` and `dask worker` run
    on a cluster: this process holds only the client. They end on exit, and end
    themselves if this process is killed (parent_watch.py)."""
    distributed = need_distributed()
    with tempfile.TemporaryDirectory(prefix="seqbil-dask-") as tmp:
        file = os.path.join(tmp, "scheduler.json")
        home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "SEQBIL_DASK_PARENT": str(os.getpid()),  # (the workers import this seqbil)
               "PYTHONPATH": os.pathsep.join(filter(None, [home, os.environ.get("PYTHONPATH")]))}
        watch = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parent_watch.py")
        where = ["--scheduler-file", file, "--host", "127.0.0.1"]
        commands = {"scheduler": ["scheduler", *where, "--preload", watch, "--port", "0", "--dashboard-address", ":0"],
                    "workers": ["worker", *where, "--preload-nanny", watch, "--nworkers", str(workers),
                                "--nthreads", "1", "--death-timeout", "60"]}
        procs, client = {}, None
        try:
            for name, args in commands.items():
                with open(os.path.join(tmp, f"{name}.log"), "wb") as log:
                    # a session of their own: a signal to this process's group (Ctrl-C, a
                    # SIGKILL of the whole group) reaches this process only, which ends the
                    # cluster, or whose end the cluster sees; the scheduler then removes tmp
                    procs[name] = subprocess.Popen([sys.executable, "-m", "dask", *args], stdin=subprocess.DEVNULL,
                                                   stdout=log, stderr=log, cwd=tmp, start_new_session=True,
                                                   env={**env, "SEQBIL_DASK_TMP": tmp} if name == "scheduler" else env)
            deadline = time.monotonic() + START_TIMEOUT
            while client is None or len(worker_addresses(client)) < workers:
                for name, proc in procs.items():
                    if proc.poll() is not None:
                        raise SeqbilError(f"the local Dask {name} ended as it started (exit status "
                                          f"{proc.returncode}): {_tail(os.path.join(tmp, f'{name}.log'))}")
                if time.monotonic() > deadline:
                    raise SeqbilError(f"the local Dask cluster did not start within {START_TIMEOUT:.0f} s")
                if client is None and _ready(file):
                    client = distributed.Client(scheduler_file=file, timeout=CONNECT_TIMEOUT)
                time.sleep(0.05)
            yield client
        finally:
            if client is not None:
                client.close()
            for name in ("workers", "scheduler"):  # (SIGTERM: Dask's own shutdown; workers whose
                proc = procs.get(name)               # scheduler went first wait for it for seconds)
                if proc is not None and proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()


def _ready(file):
    """Whether the scheduler has written its file whole."""
    try:
        with open(file, encoding="utf-8") as f:
            return "address" in json.load(f)
    except (OSError, ValueError):
        return False


def _tail(path, lines=5):
    with open(path, "rb") as f:
        return " / ".join(f.read().decode("utf-8", "replace").strip().splitlines()[-lines:])
