"""Progress bars: shown, hidden, or "auto": shown where a person watches, a terminal."""

AUTO = "auto"


def disabled(progress):
    """tqdm's `disable` for a progress setting: for "auto" None, tqdm's own test (off
    where the stream is not a terminal), so that a log redirected to a file or a pipe
    does not keep every redraw of every bar; what is said once (a Dask dashboard's
    address) is still said."""
    return None if progress == AUTO else not progress
