"""The worker processes of `seqbil tag --jobs`: blocks tagged in parallel, each worker
holding the model, and written in input order."""
import multiprocessing
import multiprocessing.connection
import os
import signal

from ..errors import InputError, SeqbilError


def cpus():
    """The CPU cores available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def tag_in_workers(tagger, reader, write, jobs):
    """Blocks to idle workers, at most 2 * jobs ahead of the output; results written in
    input order as they complete. From a pipe, input is read only when it is waiting or
    when nothing is being tagged, so output never waits for more input."""
    warm_model(tagger.model)
    tagger.warm()
    workers = _Workers(tagger, jobs)
    finished = False
    try:
        limit = 2 * jobs
        blocks = iter(reader)
        idle = list(workers.conns)
        busy, done = {}, {}  # busy: connection -> block number; done: block number -> result
        sent = written = count = 0
        ended = False
        while True:
            while written in done:
                result = done.pop(written)
                written += 1
                if result[0] != "ok":
                    raise_failure(result)
                write(result[1])
                count += result[2]
            if ended and written == sent:
                finished = True
                return count
            while idle and not ended and sent - written < limit and (not busy or reader.waiting()):
                try:
                    block = next(blocks)
                except StopIteration:
                    ended = True
                except SeqbilError as exc:  # a read error comes after the blocks before it, as with one job
                    done[sent], sent, ended = failure_of(exc), sent + 1, True
                else:
                    if block is not None:
                        conn = idle.pop()
                        workers.send(conn, block)
                        busy[conn], sent = sent, sent + 1
            if not busy:
                continue
            watch = list(busy)
            if reader.pause_fd is not None and idle and not ended and sent - written < limit:
                watch.append(reader.pause_fd)
            for conn in multiprocessing.connection.wait(watch):
                if conn in busy:
                    done[busy.pop(conn)] = workers.receive(conn)
                    idle.append(conn)
    finally:
        workers.close(abort=not finished)


def warm_model(model):
    """Tag one token, so that what a model builds on first use is built once, here,
    and shared by the workers (fork) instead of built in each."""
    fmt = model.format
    model.tag(fmt.example())


def failure_of(exc):
    if isinstance(exc, InputError):
        return ("input", exc.path, exc.line, exc.message)
    if isinstance(exc, SeqbilError):
        return ("seqbil", str(exc))
    return ("failed", f"{type(exc).__name__}: {exc}")


def raise_failure(result):
    if result[0] == "input":
        raise InputError(*result[1:])
    if result[0] == "seqbil":
        raise SeqbilError(result[1])
    raise SeqbilError(f"tagging failed in a worker process: {result[1]}")


class _Workers:
    """Worker processes, one pipe each, one block at a time each (so that neither side
    ever waits to send while the other waits to send too)."""

    def __init__(self, tagger, n):
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        self.conns, self.procs = [], []
        try:
            for _ in range(n):
                mine, theirs = context.Pipe()
                # a forked worker closes its copies of this process's ends, so that each
                # side sees the other's end of the pipe close when it exits or dies
                inherited = self.conns + [mine] if method == "fork" else []
                proc = context.Process(target=_work, args=(tagger, theirs, inherited), daemon=True,
                                       name="seqbil-tag")
                proc.start()
                theirs.close()
                self.conns.append(mine)
                self.procs.append(proc)
        except BaseException:
            self.close(abort=True)
            raise

    def send(self, conn, block):
        try:
            conn.send(block)
        except OSError:
            raise SeqbilError(self._died(conn)) from None

    def receive(self, conn):
        try:
            return conn.recv()
        except (EOFError, OSError):
            raise SeqbilError(self._died(conn)) from None

    def _died(self, conn):
        proc = self.procs[self.conns.index(conn)]
        proc.join(5)
        code = proc.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        return f"a tagging worker process stopped unexpectedly ({how})"

    def close(self, abort):
        """Stop the workers: at once (abort), or when they see their pipe close."""
        if abort:
            for proc in self.procs:
                if proc.is_alive():
                    proc.terminate()
        for conn in self.conns:
            conn.close()
        for proc in self.procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join()


def _work(tagger, conn, inherited):
    """A worker process: tag the blocks that come on conn until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches every process; the main one stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler of the main process's, inherited by fork
    for other in inherited:
        other.close()
    while True:
        try:
            block = conn.recv()
        except (EOFError, OSError):
            return
        try:
            data, n = tagger(block)
            result = ("ok", data, n)
        except Exception as exc:  # reported by the main process, in its place in the output
            result = failure_of(exc)
        try:
            conn.send(result)
        except OSError:
            return
