"""Preloaded (as a file) by the scheduler and the worker launcher of a local cluster
(cluster.py): each ends itself when the process that started it is gone, killed or
not, so that no cluster outlives its run. The folder of the scheduler's file is its
parent's to remove; once the parent is gone, the scheduler removes it, whether it sees
the parent go or closes after it. It imports nothing of seqbil."""
import os
import shutil
import signal
import threading
import time


def dask_setup(server):
    parent = int(os.environ.get("SEQBIL_DASK_PARENT", "0"))
    if not parent:
        return

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        _remove_if_orphaned()
        os.kill(os.getpid(), signal.SIGTERM)  # (Dask's own graceful shutdown)

    threading.Thread(target=watch, name="seqbil-parent-watch", daemon=True).start()


def dask_teardown(server):
    # (a parent killed while it stops the cluster: the scheduler it stopped outlives it)
    _remove_if_orphaned()


def _remove_if_orphaned():
    """The scheduler's folder (SEQBIL_DASK_TMP, which its parent made) removed once
    the parent is gone."""
    leftover = os.environ.get("SEQBIL_DASK_TMP")
    if leftover and os.getppid() != int(os.environ.get("SEQBIL_DASK_PARENT", "0")):
        shutil.rmtree(leftover, ignore_errors=True)
