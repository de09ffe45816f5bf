"""Preloaded (as a file) by the scheduler and the worker launcher of a local cluster
(cluster.py): each ends itself when the process that started it is gone, killed or
not, so that no cluster outlives its run. It imports nothing of seqbil."""
import os
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
        os.kill(os.getpid(), signal.SIGTERM)  # (Dask's own graceful shutdown)

    threading.Thread(target=watch, name="seqbil-parent-watch", daemon=True).start()
