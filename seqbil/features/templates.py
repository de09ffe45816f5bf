"""Feature templates in CRF++ syntax.

A template line such as ``U01:%x[-1,0]/%x[0,0]`` instantiates, at token i, the
attribute string ``U01:<field 0 of token i-1>/<field 0 of token i>``. Rows outside
the sentence read CRF++'s boundary symbols ``_B-1``, ``_B-2``, ... before the start
and ``_B+1``, ``_B+2``, ... after the end. ``U`` templates are 0-order (conjoined
with y_i), ``B`` templates are 1st-order (conjoined with (y_i, y_{i-1})); a bare
``B`` is the label-transition feature.

After a macro, a chain of functions may follow: ``%x[0,0]|lower``,
``%x[0,0]|suffix:3``, ``%x[-1,0]|shape`` (features/functions.py). A macro then reads
a *field*: a column passed through a chain of functions (the plain column is the
field with no functions).
"""
import re
from dataclasses import dataclass

from ..errors import ConfigError
from .dictionaries import KINDS
from .functions import chain_text, describe, parse_chain

_CHAIN = r"((?:\|[A-Za-z_]+(?::[^|/%\s]*)?)*)"
_MACRO = re.compile(r"%x\[\s*(@?-?\d+)\s*,\s*(-?\d+:?)\s*\]" + _CHAIN + r"|%(dict|gaz)\[([^\]]*)\]" + _CHAIN +
                    r"|%vec\[\s*(-?\d+)\s*,\s*(\d+)\s*,\s*([A-Za-z_][\w.-]*)\s*\]"
                    r"|%emb\[\s*(-?\d+)\s*,\s*(\d+)\s*\]|(%task)\b"
                    r"|(%attr)\b(?:\[((?:[^\[\]]|\[[^\[\]]*\])*)\])?")
TASK = "%task"  # the task of the sentence, in multi-task models (task_copies)
# %emb[r,c] is %vec over these vectors, the `embeddings` of the config, which the rpa
# learner learns (a name no %vec can take)
EMB = "%emb"
ATTR = "%attr"  # every attribute of an item (CRFsuite's files, feature dicts), or those of some keys
# %x[r,N:] is column N and every column after it but the label: such a template stands
# for one copy per column (TemplateSet.over_columns), made once the training corpus's
# columns are known, so that one config serves files of any number of columns
RANGE = "range"
# the farthest row a macro may read and the highest column: each tag pads a sentence's
# fields by the farthest row (a model's %x[-2000000000,0] made every tag allocate 2e9
# positions), and no corpus has a thousand columns
MAX_ROW = 1000
MAX_COLUMN = 1000
# a row counted from the sentence's ends (%x[@N,C]) that falls outside the sentence reads
# the boundary symbol of its distance, up to this one (and this one beyond it): Wapiti's
# cells there are _x-1 .. _x-4, then _x-# (its pattern.c), which a model of its patterns
# tells apart by them
AT_REACH = 5


def split_keys(text):
    """The keys of %attr[KEY,...]: split at the commas outside brackets (w[0],pos[-1])."""
    keys, depth, cur = [], 0, []
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            keys.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    keys.append("".join(cur).strip())
    return keys


def attr_keys(field):
    """The keys a %attr[KEY,...] field selects (empty: every attribute)."""
    return tuple(split_keys(field.source)) if field.source else ()


def attr_selects(field, name):
    """Whether the %attr field reads the attribute `name`: %attr reads all; with keys,
    a name that is a key or starts with one followed by ':', '=' or '[' (the feature
    dicts' w:the, CRFsuite's w[0]=the; the key w takes w[-1]=... too)."""
    keys = attr_keys(field)
    return not keys or any(name == k or (name.startswith(k) and name[len(k)] in ":=[") for k in keys)


@dataclass(frozen=True, order=True)
class Field:
    """What a macro reads at a token: a column, passed through a chain of functions
    ((name, arg), ...; empty for the cell itself); or, with a source, where the
    entries of that dictionary cover the token (features/dictionaries.py; kind:
    longest, begin, end, any or bilou), through the chain; or, with kind task, the
    task of the sentence (multi-task models); or, with kind at, the column at the
    token `at` counts from the sentence's ends (%x[@N,C]: token N - 1 from the first
    for N >= 0, as Wapiti counts, and from the end for N < 0), the same at every
    token of the sentence."""
    column: int
    chain: tuple = ()
    source: str = ""
    kind: str = ""
    at: int = 0

    def __str__(self):
        if self.kind == "at":
            return f"{self.column}@{self.at}{chain_text(self.chain)}"
        if self.kind == "task":
            return TASK
        if self.kind == "attr":
            return f"{ATTR}[{self.source}]" if self.source else ATTR
        if self.kind == "vec":
            return f"{self.column}%vec[{self.source}]"
        if self.kind == RANGE:
            return f"{self.column}:{chain_text(self.chain)}"
        if self.source:
            macro = "gaz" if self.kind == "bilou" else "dict"
            return f"{self.column}%{macro}[{self.source},{self.kind}]{chain_text(self.chain)}"
        return f"{self.column}{chain_text(self.chain)}"


def _lexicon_macro(macro, inside, text, source, line):
    """(row, Field) of %dict[[ROW,]NAME[,KIND]] or %gaz[[ROW,]NAME]."""
    parts = [p.strip() for p in inside.split(",")]
    row = 0
    if parts and re.fullmatch(r"-?\d+", parts[0]):
        row = int(parts.pop(0))
    kinds = KINDS[macro]
    if not parts or not re.fullmatch(r"[A-Za-z_][\w.-]*", parts[0]) or len(parts) > (2 if macro == "dict" else 1):
        form = "%dict[NAME], %dict[NAME,KIND] or %dict[ROW,NAME,KIND]" if macro == "dict" else \
            "%gaz[NAME] or %gaz[ROW,NAME]"
        raise ConfigError(source, line, f"template {text!r}: write {form}")
    kind = parts[1] if len(parts) > 1 else kinds[0]
    if kind not in kinds:
        raise ConfigError(source, line, f"template {text!r}: unknown %dict kind {kind!r} (one of {', '.join(kinds)})")
    return row, Field(0, (), parts[0], kind)


@dataclass(frozen=True)
class Template:
    text: str
    order: int     # 0 for U, 1 for B
    fmt: str       # str.format pattern, one {} per macro
    refs: tuple    # ((row, Field), ...) of the macros, in order

    @property
    def reads_task(self):
        """Whether a macro reads the sentence's task (%task)."""
        return any(f.kind == "task" for _, f in self.refs)

    @property
    def ranged(self):
        """Whether a macro reads a range of columns (%x[r,N:])."""
        return any(f.kind == RANGE for _, f in self.refs)

    def at_column(self, c):
        """The copy of a ranged template that reads column c where it reads the range:
        U30:%x[-1,1:]/%x[0,1:] at column 2 is U30.2:%x[-1,2]/%x[0,2] (the column joins
        the template's name, so that two columns' values never make one attribute)."""
        text = _MACRO.sub(lambda m: m.group(0) if not (m.group(2) or "").endswith(":") else
                          f"%x[{m.group(1)},{c}]{m.group(3) or ''}", self.text)
        at = text.index("%")
        colon = text.find(":", 0, at)
        text = text[:colon] + f".{c}" + text[colon:] if colon >= 0 else text[:at] + f".{c}:" + text[at:]
        return parse_template(text)


def parse_template(text, source="<template>", line=0):
    text = text.strip()
    if not text or text[0] not in "UB":
        raise ConfigError(source, line, f"template {text!r} must start with U (0-order) or B (1st-order)")
    pieces, refs, last = [], [], 0
    for m in _MACRO.finditer(text):
        pieces.append(text[last:m.start()].replace("{", "{{").replace("}", "}}"))
        pieces.append("{}")
        if m.group(12):
            refs.append((0, Field(0, (), "", "task")))
            last = m.end()
            continue
        if m.group(13):  # the item's own attributes: the template is this macro alone
            if len(_MACRO.findall(text)) != 1 or m.end() != len(text):
                raise ConfigError(source, line, f"template {text!r}: %attr stands alone in a template, as in "
                                                f"U:%attr or B:%attr[KEY,...]")
            keys = split_keys(m.group(14) or "")
            if m.group(14) is not None and not all(keys):
                raise ConfigError(source, line, f"template {text!r}: write %attr[KEY,...] with no empty key")
            refs.append((0, Field(0, (), ",".join(keys) if m.group(14) is not None else "", "attr")))
            last = m.end()
            continue
        if m.group(9) or m.group(10):  # a dense vector: the template is this macro alone, 0-order
            macro = "%vec[r,c,NAME]" if m.group(9) else "%emb[r,c]"
            if text[0] != "U" or len(_MACRO.findall(text)) != 1 or m.end() != len(text):
                raise ConfigError(source, line, f"template {text!r}: {macro} stands alone in a U template, "
                                  f"as in U30:{macro.replace('r,c', '0,0')} (its components are real-valued "
                                  f"0-order features)")
            row, field = (int(m.group(7)), Field(int(m.group(8)), (), m.group(9), "vec")) if m.group(9) else \
                (int(m.group(10)), Field(int(m.group(11)), (), EMB, "vec"))
        elif m.group(4):
            row, field = _lexicon_macro(m.group(4), m.group(5), text, source, line)
        else:
            column, at = m.group(2), m.group(1).startswith("@")
            if at and column.endswith(":"):
                raise ConfigError(source, line, f"template {text!r}: a row counted from the sentence's ends reads "
                                  "one column, not a range")
            row = int(m.group(1).lstrip("@"))
            field = Field(int(column.rstrip(":")), (), "", "at" if at else RANGE if column[-1] == ":" else "",
                          row if at else 0)
            row = 0 if at else row
            if field.column < 0:
                raise ConfigError(source, line, f"template {text!r}: negative column {field.column}")
            if abs(field.at) > MAX_ROW:
                raise ConfigError(source, line, f"template {text!r}: rows are read at most {MAX_ROW} away")
        try:
            chain = parse_chain(m.group(3) or m.group(6) or "")
        except ValueError as exc:
            raise ConfigError(source, line, f"template {text!r}: {exc} (seqbil train --help-templates)") from None
        if abs(row) > MAX_ROW or field.column > MAX_COLUMN:
            raise ConfigError(source, line, f"template {text!r}: rows are read at most {MAX_ROW} away and "
                              f"columns up to {MAX_COLUMN}")
        refs.append((row, Field(field.column, chain, field.source, field.kind, field.at)))
        last = m.end()
    rest = text[last:]
    if "%" in "".join(p for p in pieces if p != "{}") + rest:
        raise ConfigError(source, line, f"template {text!r}: {_bad_macro(text)} (seqbil train --help-templates)")
    pieces.append(rest.replace("{", "{{").replace("}", "}}"))
    starts = {f.column for _, f in refs if f.kind == RANGE}
    if len(starts) > 1:
        raise ConfigError(source, line, f"template {text!r}: its column ranges start at different columns "
                                        f"({', '.join(f'{c}:' for c in sorted(starts))}); one range per template")
    return Template(text, 0 if text[0] == "U" else 1, "".join(pieces), tuple(refs))


# how each macro is written, for the message on one written otherwise
_FORMS = {"x": "%x[ROW,COL]", "dict": "%dict[NAME] or %dict[ROW,NAME,KIND]", "gaz": "%gaz[NAME] or %gaz[ROW,NAME]",
          "vec": "%vec[ROW,COL,NAME]", "emb": "%emb[ROW,COL]", "task": "%task", "attr": "%attr or %attr[KEY,...]"}


def _bad_macro(text):
    """What is wrong with the first macro of text that the grammar does not read:
    a known macro written otherwise (a ']' missing, a word for a number, ...), or an
    unknown one; with its place (the character, from 1)."""
    at = text.index("%", _first_unread(text))
    name = re.match(r"%([A-Za-z]*)", text[at:]).group(1)
    if name in _FORMS:
        missing = " (a ']' is missing)" if "[" in text[at:] and "]" not in text[at:] else ""
        return f"%{name} at character {at + 1} is not written {_FORMS[name]}{missing}: {text[at:]!r}"
    return (f"unknown macro %{name} at character {at + 1}: the macros are "
            f"{', '.join('%' + k for k in _FORMS)}")


def _first_unread(text):
    """Where the first '%' that no macro of the grammar reads may start: the end of the
    last well-formed macro before it."""
    end = 0
    for m in _MACRO.finditer(text):
        if "%" in text[end:m.start()]:
            break
        end = m.end()
    return end


GRAMMAR = """\
Templates (CRF++ syntax, one per line; a line starting with # is a comment):

  U<id>:<text>   a 0-order template: its attribute at a token is conjoined with the label y_i
  B<id>:<text>   a 1st-order template: conjoined with the label pair (y_i-1, y_i); factored
                 by the bilinear learners (bol, bcd)
  B              alone: the label-transition feature

In <text>, each macro is replaced by what it reads at the token:

  %x[r,c]           column c (from 0) of the token r rows away (r < 0: before); rows outside
                    the sentence read _B-1, _B-2, ... and _B+1, _B+2, ...; r at most 1000
                    away, c at most 1000 (every macro)
  %x[r,c]|f|g:N     that cell through functions f, then g with argument N
  %x[@n,c]          column c of the sentence's token n - 1 (n >= 0) or n from its end (n < 0),
                    at every token (Wapiti's absolute rows); outside the sentence _B-1 ..
                    _B-5, _B+1 .. _B+5
  %x[r,N:]          column N and each column after it but the label: the template stands for
                    one copy per such column of the training corpus, c in the copy's name
                    (U30:%x[0,1:] on word-POS-chunk-label columns is U30.1:%x[0,1] and
                    U30.2:%x[0,2]; on word-label columns, nothing)
  %dict[NAME]       where the words of dictionary NAME cover the token: its position in the
                    longest word covering it and that word's length (B3, M4, E2, S1; - for none)
  %dict[NAME,KIND]  KIND begin / end: the length of the longest word starting / ending here;
                    any: every position the token takes in a covering word (BE, S, ...)
  %gaz[NAME]        B, I, L or U inside the longest phrase of gazetteer NAME covering the
                    token, O outside
  %dict[ROW,NAME,KIND], %gaz[ROW,NAME]: the same at the token ROW rows away
  %attr             every attribute of the token, when tokens are given as attributes
                    (--format crfsuite, feature dicts in seqbil.sklearn): alone in a template,
                    U:%attr (0-order, with its weight) or B:%attr (1st-order: factored by
                    the bilinear learners; present or not: an attribute of weight 0, a
                    False flag, is left out, another weight is not used)
  %attr[K1,K2,...]  only the attributes of those keys: named K, or K:..., K=... or K[...
  %task             the task of the sentence, in multi-task training (seqbil train --task):
                    each template T gets the copy T/%task, which seqbil adds by itself
  %vec[r,c,NAME]    the vector of the cell in the word vectors NAME: its components are
                    real-valued 0-order features; alone in a U template (U30:%vec[0,0,emb]).
                    A word without a vector is tried in lower case, then reads an unknown
                    indicator (vector_unknown = learned) or nothing (zero)
  %emb[r,c]         the same with the vectors `embeddings` (a file, or random:K), which the
                    rpa learner adapts to the task; every training word has one, and words
                    without one read a fallback vector (E00:%emb[0,0])

  Dictionaries are named in the config: [features] dictionaries = ["NAME=FILE"] (one word or
  phrase per line) or "NAME=train" (the training words; jackknifed over dict_folds folds so
  that training sentences never see their own words). Vectors likewise: [features]
  vectors = ["NAME=FILE"] (word2vec text format, or a .npy matrix with NAME.vocab beside it).

Functions (computed once per distinct value; boundary symbols are left as they are):
"""


def help_text():
    """The template grammar and every function with an example (train --help-templates)."""
    return GRAMMAR + describe() + """

Examples:
  U00:%x[0,0]|lower                    the current word in lower case
  U01:%x[0,0]|suffix:3                 its last three characters
  U02:%x[-1,0]|shape/%x[0,0]|shape     the shapes of the previous and current words
  B10:%x[-1,1]/%x[0,1]                 the POS bigram, 1st-order (bilinear in bol)
  U30:%x[-1,1:]/%x[0,1:]               the bigram of every column after the word, each apart
  U20:%dict[words]/%x[0,0]|chartype    dictionary position and length, with the character type
"""


def read_crfpp_templates(lines, path):
    """Templates of a CRF++ template file's (number, line) pairs (lines starting with #
    are comments, as in CRF++)."""
    templates = []
    for number, text in lines:
        text = text.strip()
        if text and not text.startswith("#"):
            templates.append(parse_template(text, path, number))
    if not templates:
        raise ConfigError(path, 0, "no templates in file")
    return templates


def task_copies(templates, source="<templates>"):
    """The templates of a multi-task model (Cavallanti et al. 2008, as augmented
    features): every template, then a copy of each that also reads the task, T/%task
    (not the bare B: the learners keep a copy of the label transitions per task).
    The copies come after all the others, so that in each order the task copies of
    the attributes are the ids after the shared ones. %vec templates, whose
    components follow the keyed attributes, have no task copies: they are refused."""
    templates = list(templates)
    for t in templates:
        if t.reads_task:
            raise ConfigError(source, 0, f"template {t.text!r}: the %task copies of the templates are made by "
                              f"multi-task training itself; give the templates without %task")
        if t.refs and t.refs[0][1].kind in ("vec", "attr"):
            what = "word vectors (%vec) are" if t.refs[0][1].kind == "vec" else "attributes (%attr) are"
            raise ConfigError(source, 0, f"template {t.text!r}: {what} not supported in multi-task training")
    copies = [parse_template(f"{t.text}/{TASK}", source) for t in templates if t.order == 0 or t.refs]
    return TemplateSet(templates + copies)


def own_attributes(index, templates):
    """Per order, the (lo, hi) ids of the task copies of the attributes in an index of
    task_copies(templates): those of the templates reading %task."""
    out = []
    for order in (0, 1):
        table, ptr = index.tables[order]
        reads = [t.reads_task for t in templates.by_order[order]]
        first = reads.index(True) if True in reads else len(reads)
        if any(not r for r in reads[first:]):
            raise ValueError("the task copies of the templates must come after the shared ones")
        out.append((int(ptr[first]), int(ptr[-1])))
    return out


def task_digits(index, templates, names):
    """(radix, digits): a task copy T/%task of an attribute of T with key x has key
    x * radix + digits[k] in task k."""
    field = next(f for f in templates.fields if f.kind == "task")
    offset = 2 * index.K + 1 if index.layout == "boundaries-first" else 0
    return len(index.fields[field]) + 2 * index.K + 1, [index.fields[field].index[n] + offset for n in names]


class TemplateSet:
    """The 0-order and 1st-order templates of a model and their expansion."""

    def __init__(self, templates):
        self.templates = list(templates)
        texts = [t.text for t in self.templates]
        dup = {t for t in texts if texts.count(t) > 1}
        if dup:
            raise ConfigError("<templates>", 0, f"duplicate template {sorted(dup)[0]!r}")
        # A 1st-order template without macros fires everywhere: it is the label-transition
        # feature, kept apart as one S x (S+1) matrix (linear in every model).
        self.transition = any(t.order == 1 and not t.refs for t in self.templates)
        # %vec templates bring real-valued features of their own (features/vectors.py); the
        # others map each position to one attribute id through the key tables
        self.vector_templates = [t for t in self.templates if t.refs and t.refs[0][1].kind == "vec"]
        # %attr templates read the tokens' own attributes (features/index.py keys them by
        # their names' ids); they come after the others of their order
        self.item_templates = [t for t in self.templates if t.refs and t.refs[0][1].kind == "attr"]
        self.by_order = tuple([t for t in self.templates if t.order == order and (t.refs or order == 0) and
                               t not in self.vector_templates and t not in self.item_templates] +
                              [t for t in self.item_templates if t.order == order] for order in (0, 1))
        self.n_column_templates = [len(ts) - sum(t in self.item_templates for t in ts) for ts in self.by_order]
        self.items = bool(self.item_templates)
        keyed = [t for t in self.by_order[0] + self.by_order[1] if t not in self.item_templates]
        self.fields = sorted({f for t in keyed for _, f in t.refs})  # what the keyed macros read
        self.dictionaries = sorted({f.source for f in self.fields if f.source})
        self.vectors = sorted({t.refs[0][1].source for t in self.vector_templates})
        self.reach = max([abs(r) for t in keyed for r, _ in t.refs] or [0])
        if any(f.kind == "at" for f in self.fields):
            self.reach = max(self.reach, AT_REACH)
        self.tasks = any(f.kind == "task" for f in self.fields)

    @property
    def ranged(self):
        """The templates that read a range of columns (%x[r,N:])."""
        return [t for t in self.templates if t.ranged]

    def over_columns(self, n_fields, label_index):
        """The set with each ranged template replaced by its copies, one per column from
        its range's start to the last that is not the label (label_index, from 0; None:
        no label column), in place: the set a model keeps."""
        if not self.ranged:
            return self
        out = []
        for t in self.templates:
            if not t.ranged:
                out.append(t)
                continue
            start = next(f.column for _, f in t.refs if f.kind == RANGE)
            out += [t.at_column(c) for c in range(start, n_fields) if c != label_index]
        return TemplateSet(out)

    def check_columns(self, n_fields, label_index, data, origin):
        """Every column a template reads exists in `data` and is not its label column."""
        for t in self.templates:
            for _, f in t.refs:
                c = f.column
                if f.kind in ("task", "attr"):
                    continue
                if f.kind == RANGE:  # (over_columns makes the copies before a corpus is read)
                    raise ConfigError(origin, 0, f"template {t.text!r}: a column range is read only in "
                                                 f"training, where the corpus's columns are known")
                if c >= n_fields or c == label_index:
                    what = (f"column {c}, the label column of {n_fields}-field data (are the labels missing?)"
                            if c == label_index else f"column {c}, but the data has {n_fields} fields")
                    raise ConfigError(data, 0, f"template {t.text!r} of {origin} reads {what}")
