"""The local Dask cluster a call makes (seqbil/dask/cluster.py): a scheduler and
worker processes of their own, which end when the call does and when the process
that made them is killed."""
import os
import signal
import subprocess
import sys
import time

import pytest

from seqbil.dask.cluster import connect
from test_cli import ENV

pytest.importorskip("distributed")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # (a zombie is gone but for its parent's wait)
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def gone_within(pids, seconds):
    deadline = time.monotonic() + seconds
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [pid for pid in pids if alive(pid)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_local_cluster_is_processes_of_its_own_that_end_with_the_call():
    with connect(workers=2) as client:
        workers = client.run(os.getpid)
        scheduler = client.run_on_scheduler(os.getpid)
        assert len(workers) == 2 and all(w["nthreads"] == 1 for w in client.scheduler_info()["workers"].values())
        assert os.getpid() not in [scheduler, *workers.values()]
        assert client.submit(sum, [1, 2]).result() == 3
    assert gone_within([scheduler, *workers.values()], 20) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("group", [False, True], ids=["process", "its-group"])
def test_the_local_cluster_of_a_killed_process_ends_too(tmp_path, group):
    """SIGKILL of the process that made the cluster (which runs no cleanup), or of its
    whole process group (a shell's job, a timeout): its scheduler and workers end
    themselves (parent_watch.py) and the scheduler removes the cluster's folder."""
    code = ("import os, sys, time\n"
            "from seqbil.dask.cluster import connect\n"
            "if __name__ == '__main__':\n"
            "    with connect(workers=2) as c:\n"
            "        pids = [c.run_on_scheduler(os.getpid), *c.run(os.getpid).values()]\n"
            "        print(*pids, flush=True)\n"
            "        time.sleep(600)\n")
    (tmp_path / "driver.py").write_text(code)
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = subprocess.Popen([sys.executable, "driver.py"], cwd=tmp_path, env={**ENV, "TMPDIR": str(temp)},
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=group)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 3 and all(map(alive, pids))
        assert len([p for p in temp.iterdir() if p.name.startswith("seqbil-dask-")]) == 1  # (its file, the logs)
    finally:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert gone_within(pids, 30) == []
    assert [p for p in temp.iterdir() if p.name.startswith("seqbil-dask-")] == []  # (removed by the scheduler)
