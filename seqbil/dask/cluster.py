"""The Dask client a call runs on: given, connected to a scheduler, or a LocalCluster."""
import contextlib
import logging
import os

from ..errors import SeqbilError
from ..tagging import cpus

CONNECT_TIMEOUT = "20s"  # to reach a scheduler that was given


def need_distributed():
    """The dask.distributed module, or an error saying how to get it."""
    try:
        import distributed
    except ImportError:
        raise SeqbilError('this needs Dask: pip install "seqbil[dask]"') from None
    return distributed


@contextlib.contextmanager
def connect(client=None, scheduler=None, workers=None, echo=None):
    """Yield a Client: `client` itself; one connected to `scheduler` (an address such
    as tcp://host:8786, or the path of a scheduler file); or, by default, a LocalCluster
    of `workers` processes with one thread each (default: one per CPU core), closed on
    exit. echo (a function of one line) is told the dashboard's address."""
    if sum(x is not None for x in (client, scheduler, workers)) > 1:
        raise SeqbilError("give one of a client, a scheduler and a number of local workers")
    if client is not None:
        yield client
        return
    distributed = need_distributed()
    cluster = None
    if scheduler is not None:
        where = {"scheduler_file": scheduler} if os.path.isfile(scheduler) else {"address": scheduler}
        try:
            client = distributed.Client(**where, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise SeqbilError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    else:
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise SeqbilError(f"workers must be a whole number of at least 1, got {workers!r}")
        # worker processes of one thread: the kernels hold the GIL while they tag
        cluster = distributed.LocalCluster(n_workers=workers or cpus(), threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=logging.CRITICAL)  # errors reach the caller
        client = distributed.Client(cluster)
    try:
        if echo is not None and client.dashboard_link:
            echo(f"Dask dashboard: {client.dashboard_link}")
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
