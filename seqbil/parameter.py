"""One entry of the parameter table (params.py): a training option's name, type,
default, range and help, and the learners that read it. Learners declare their own
options with it, so it imports nothing of seqbil's."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: object
    help: str
    section: str = "train"
    choices: tuple = ()
    minimum: float | None = None  # least allowed value (ints and floats)
    positive: bool = False        # must be > 0
    learners: tuple = ()          # the learners that read it; () for all
    flag: str = ""                # command-line flag when not --name-with-dashes; "-" for none
    metavar: str = ""             # what the flag's value is called in --help (default: its type)
    own_defaults: tuple = ()      # ((learner, value), ...): learners whose `defaults` replace `default`
    maximum: float | None = None  # greatest allowed value (default: INT_MAX for ints, 1e9 for floats)
    validate: object = None       # a function of the value: what is wrong with it, or None

    @property
    def cli_flag(self):
        return self.flag or "--" + self.name.replace("_", "-")

    def default_text(self):
        """The default for people: the table's, then the learners' own ("20 (crf: 1000)")."""
        def text(value):
            value = " ".join(value) if isinstance(value, list) else value
            value = str(value).lower() if isinstance(value, bool) else value
            return str(value) if value != "" else "(none)"
        own = ", ".join(f"{name}: {text(value)}" for name, value in self.own_defaults)
        return text(self.default) + (f" ({own})" if own else "")

    @property
    def summary(self):
        """The help's first clause, for --help (the whole of it: `seqbil params` and the
        docs): up to the first ': ', ' (', '; ' or '. ' that leaves a phrase of a few
        words; the choices and the default are shown beside it."""
        text = self.help
        cuts = [at for at in (text.find(": "), text.find(" ("), text.find("; "), text.find(". ")) if at >= 12]
        return text[:min(cuts)] if cuts else text

    def used_by(self, learner):
        return not self.learners or learner in self.learners

    @property
    def upper(self):
        """The greatest value allowed of a number (no option needs more: larger values
        only overflow float32 weights or allocations)."""
        if self.maximum is not None:
            return self.maximum
        return 2 ** 31 - 1 if self.type is int else 1e9

    def range_text(self):
        """The allowed values of a number, for people: "> 0 and <= 1e+09", "0 to 10"."""
        if self.type not in (int, float) or self.choices:
            return ""
        upper = f"{self.upper:,}" if self.type is int else f"{self.upper:g}"
        if self.positive:
            return f"> 0, <= {upper}"
        lower = self.minimum if self.minimum is not None else -self.upper if self.name != "label_column" else -1000
        lower = f"{lower:,}" if self.type is int else f"{lower:g}"
        return f"{lower} to {upper}"
