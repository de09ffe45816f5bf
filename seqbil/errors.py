"""Errors a user can act on. The CLI prints them as one line and exits with status 2."""


class SeqbilError(Exception):
    """Base class: bad input, bad options or a bad model file."""


class InputError(SeqbilError):
    """A problem at a place in an input file."""

    def __init__(self, path, line, message):
        self.path, self.line, self.message = str(path), line, message
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {message}")


class ConfigError(InputError):
    """An unknown key, a wrong type or a bad value in a config or template file."""


class ModelFileError(SeqbilError):
    """A model file that is missing, truncated, corrupt, foreign or of an unknown version."""
