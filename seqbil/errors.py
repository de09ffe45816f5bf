"""Errors a user can act on. The CLI prints them as one line and exits with status 2."""
import os
import sys



class SeqbilError(Exception):
    """Base class of the errors a user can act on: bad input, bad options or a bad model file.

    The command line prints them as one line and exits with status 2. Subclasses:

    - `InputError`: a problem at a place in an input file (its `path`, `line` and
      `message`);
    - `ConfigError`, an `InputError`: an unknown key, a wrong type or a bad value in
      a config or template file;
    - `ModelFileError`: a model file that is missing, truncated, corrupt, foreign or
      of an unknown version.

    Examples
    --------
    >>> import seqbil
    >>> try:
    ...     seqbil.load("no-such-model.sbm")
    ... except seqbil.SeqbilError as exc:
    ...     print(type(exc).__name__)
    ModelFileError
    """


class InputError(SeqbilError):
    """A problem at a place in an input file."""

    def __init__(self, path, line, message):
        self.path, self.line, self.message = str(path), line, message
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {message}")


def silence_stderr():
    """Standard error can no longer be written (its reader went away, as in `2>&1 |
    head -1`): later messages and progress bars go nowhere, and the work goes on; its
    result and exit status do not depend on whether anyone reads the messages."""
    try:
        sys.stderr = open(os.devnull, "w")
    except OSError:
        pass


def check_output(path, what="output", inputs=()):
    """Refuse, before any work, an output path that cannot be written: a directory, in
    a directory that does not exist, where this user may not write, or one of the
    `inputs` of the same run (the same file, links resolved), which the output would
    destroy. None and "-" (standard output) pass."""
    if path is None or str(path) == "-" or not isinstance(path, (str, os.PathLike)):
        return
    path = os.fspath(path)
    for source in inputs:
        if isinstance(source, (str, os.PathLike)) and same_file(path, source):
            raise InputError(path, 0, f"is an input of this run ({os.fspath(source)}): writing the {what} there "
                             f"would destroy it; give another file name")
    if os.path.isdir(path):
        raise InputError(path, 0, f"is a directory: give a file name for the {what}")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(path, 0, f"the directory {parent} of the {what} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise InputError(path, 0, f"cannot write the {what} here (permission denied)")


def same_file(a, b):
    """Whether two paths name one file: the same inode when both exist, else the same
    path once links and relative parts are resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class ConfigError(InputError):
    """An unknown key, a wrong type or a bad value in a config or template file."""


class ModelFileError(SeqbilError):
    """A model file that is missing, truncated, corrupt, foreign or of an unknown version."""


def line_in_file(path, text):
    """The number of the first line of a file that holds `text` (0: none, or no file):
    where a message about a template or a value read from it can point."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if text in line:
                    return number
    except (OSError, TypeError):
        pass
    return 0
