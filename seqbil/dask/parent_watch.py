"""Preloaded (as a file) by the scheduler and the worker launcher of a local cluster
(cluster.py): each ends itself when the process that started it is gone, killed or
not, so that no cluster outlives its run; the scheduler also removes the folder of its
file. It imports nothing of seqbil."""
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
        leftover = os.environ.get("SEQBIL_DASK_TMP")  # (the scheduler's: the folder its parent made)
        if leftover:
            shutil.rmtree(leftover, ignore_errors=True)
        os.kill(os.getpid(), signal.SIGTERM)  # (Dask's own graceful shutdown)

    threading.Thread(target=watch, name="seqbil-parent-watch", daemon=True).start()
