"""The held-out run that fixes a named online learner's temperature, on a thread of
its own while the run on all the data goes on.

That run (selection.select: the learner trained on nine tenths of the sentences, its
probabilities fitted to the last tenth) needs nothing of the final run, and the final
run needs its temperature only once its model is made. Both spend their time in
kernels that let go of the GIL, so on a machine with a core the final run leaves idle
the temperature costs the reading of the corpus a second time in wall time, not a
second run (its CPU time, and the memory of a second learner, stay). The model is the
one the two runs give one after the other: the same settings, the same temperature.
"""
import os
import threading

from ..learners import LEARNERS
from .selection import plan, select


def cores():
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


def temperature_only(settings, dev):
    """Whether what select() has to choose is the temperature alone: a named online
    learner without a dev set or a temperature given."""
    choice = plan(settings, dev)
    return choice is not None and not choice.auto and not choice.grid and choice.fit


def fits_alongside(settings, dev):
    """Whether select() has the temperature alone to choose and a core is free of the
    final run's threads."""
    if not temperature_only(settings, dev):
        return False
    threads = (settings.jobs or cores()) if LEARNERS[settings.learner].supports_threads() else 1
    return cores() > threads


class Alongside:
    """select() on a thread; its messages are held back and said when it is joined,
    so that they do not cut into the final run's."""

    def __init__(self, settings, train_data, dev, template_file, config, init_model, echo):
        self.lines, self.result, self.error = [], None, None
        echo("choosing the temperature on a held-out tenth beside the run, on a second thread")

        def work():
            try:
                self.result = select(settings, train_data, dev, template_file, config, init_model,
                                     self.lines.append, show_progress=False)
            except BaseException as exc:  # raised again in the caller's thread, by finish()
                self.error = exc
        self.thread = threading.Thread(target=work, name="seqbil-temperature", daemon=True)
        self.thread.start()

    def finish(self, run, echo):
        """Wait for the held-out run, say what it said, and give the final run its
        temperature (run.settings). Returns the record of the choice. A held-out run
        stopped by Ctrl-C (which stops the final run too: the model is that run's)
        leaves temperature 1."""
        self.thread.join()
        for line in self.lines:
            echo(line)
        if self.error is not None:
            raise self.error
        settings, stopped, record = self.result
        if stopped is not None:
            echo("temperature 1: the held-out run beside the run was interrupted")
            run.settings = run.settings.but({"temperature": 1.0}, "<chosen>")
            return {}
        run.settings = run.settings.but({"temperature": settings.temperature}, "<chosen>")
        return record
