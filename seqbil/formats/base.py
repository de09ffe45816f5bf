"""What every corpus format answers for, and the registry of formats.

A format is a class registered here with its name: the rest of seqbil asks it what
differs between formats (what a unit is, the label order, which columns templates may
read, how a sentence given in Python becomes one of its Sentence objects, the layouts
of its output) and never compares a format's name.
"""
from ..errors import ConfigError, InputError, line_in_file

FORMATS = {}


def register(cls):
    """Class decorator: make a format known by its name (params' choices, model files)."""
    FORMATS[cls.name] = cls
    return cls


def make_format(name, n_fields=None, label_column=-1):
    """The format `name`, for a corpus of n_fields columns (None: the first sentence
    read says) whose label is in column label_column (the formats with columns)."""
    if name not in FORMATS:
        raise ValueError(f"unknown corpus format {name!r} (choose {', '.join(FORMATS)})")
    return FORMATS[name](n_fields, label_column)


def score_text(x):
    """A score or margin: 10 significant digits, inf as inf."""
    return format(x, ".10g")


def prob_text(p):
    """A probability as CRF++ prints one (tagger.cpp: toString writes the double to an
    ostream at its default precision, printf's %g with 6 significant digits)."""
    return format(p, ".6g")


class Format:
    """The defaults: a token per unit, labels of the corpus in sorted order, no columns."""

    name = None
    n_fields = 1              # the fields of a token as the corpus record keeps them
    label_column = None       # the field of the label, in a format of columns
    unit = "token"            # what dictionary entries and structures are sequences of
    segments = False          # the labels segment text into words (B/I/E/S)
    labels = None             # a fixed label set in its order, else the corpus's, sorted
    attributes = False        # tokens are given as attributes (%attr), not as columns
    spaced_labels = False     # a label may hold spaces (a whole field)
    sentence_per_line = False  # a line is a sentence (input may be cut at any line end)
    notes = "# "              # what starts a line of output that is not a token's
    default_config = "conll2000"  # the bundled config of a run given no config

    def __init__(self, n_fields=None, label_column=-1):
        pass

    def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
        """Yield the Sentence objects of a file (labeled: each with its labels)."""
        raise NotImplementedError

    def write(self, sentence, tags):
        """The text of a sentence with its tags."""
        raise NotImplementedError

    def sentence(self, tokens, number):
        """The Sentence of one sentence given in Python (Model.tag)."""
        raise NotImplementedError

    def annotated(self, sentences, name):
        """Sentence objects of annotated sentences given in Python (seqbil.train)."""
        raise InputError(f"<{name}>", 0, f"sentences in the {self.name} format are given in a file")

    def check_training(self, corpus, name):
        """Refuse a training corpus (a Corpus read from `name`) that cannot be what it
        says, beyond what reading checks."""

    def known_of(self, sentences, labels):
        """What a format's input says of the labels of its tokens beside a label column,
        for forced decoding: (known, sets) as Dataset holds them (features/dataset.py),
        or None: nothing (a column format gives its labels in its label column)."""
        return None

    def label_order(self, values):
        """The labels of a model trained on a corpus whose labels are `values`."""
        return list(self.labels) if self.labels else sorted(values)

    def layout(self):
        """(number of fields, index of the label field or None): what templates may read."""
        return 1, None

    def layout_unknown(self):
        """Whether the layout is still to be learned from the first sentence read."""
        return False

    def check_templates(self, templates, corpus, origin, tokens=None):
        """The templates for this format's corpus: a column range (%x[r,N:]) made one
        template per column; refuse templates that read what the corpus does not give
        (ConfigError at their origin; `corpus` names the training corpus, `tokens` is it
        read)."""
        if templates.items and not self.attributes:
            bad = next(t.text for t in templates.item_templates)
            raise ConfigError(origin, line_in_file(origin, bad), f"template {bad!r}: %attr reads the attributes "
                              "of tokens given as attributes (--format crfsuite, seqbil.sklearn); this corpus "
                              "gives columns")
        n_fields, label = self.layout()
        templates = templates.over_columns(n_fields, label)
        templates.check_columns(n_fields, label, corpus, origin)
        return templates

    @classmethod
    def check_corpus_record(cls, corpus):
        """Raise ValueError naming what is wrong with a model file's corpus record."""

    def example(self):
        """One token, as `sentence` takes it (what warms a model up)."""
        return [["x"]]

    def compiled_block(self, index):
        """Which compiled path of cython_ext/conll_block.pyx reads a block of this
        format's input for a model of `index` (whose fields are plain columns): "columns",
        "chars", or None (the reader and writer of this class)."""
        return None

    def with_margins(self, tags, margins):
        """The tags of a sentence as `write` takes them with each token's margin."""
        return tags

    def read_predictions(self, source, encoding="utf-8"):
        """The sentences of a file of predictions (`seqbil tag`'s output)."""
        return list(self.read(source, encoding=encoding))

    def check_predictions(self, gold, pred, gold_path, pred_path):
        """Refuse predictions (lists of Sentence) that are not of the gold sentences,
        or a gold file that cannot be what it is scored as (InputError)."""
        if len(gold) != len(pred):
            raise InputError(pred_path, 0, f"{len(pred)} sentences, but the gold file {gold_path} has {len(gold)}")
        for g, p in zip(gold, pred):
            if not self.same_sentence(g, p):
                raise InputError(pred_path, p.line, f"sentence does not match the gold sentence at "
                                 f"{gold_path}:{g.line}")

    def same_sentence(self, gold, pred):
        """Whether a predicted sentence can be the gold one."""
        return len(gold) == len(pred)

    def write_marginals(self, sentence, paths, table, labels, every, nbest):
        """The lines of --marginals (every: --all-marginals) for one sentence: `paths`
        its labelings [(tags, probability)], `table` each token's label probabilities
        (rows of floats, in the order of `labels`); nbest: the paths are ranked."""
        index = {y: k for k, y in enumerate(labels)}
        if every:
            others = [tuple(f"{y}/{prob_text(q)}" for y, q in zip(labels, row)) for row in table]
        parts = []
        for rank, (tags, p) in enumerate(paths):
            parts.append(f"# {rank} {prob_text(p)}\n" if nbest else f"# {prob_text(p)}\n")
            fields = [(f"{y}/{prob_text(row[index[y]])}",) for y, row in zip(tags, table)]
            if every:
                fields = [mine + more for mine, more in zip(fields, others)]
            parts.append(self.write(sentence, fields))
        return "".join(parts)
