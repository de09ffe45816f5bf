"""Dictionaries and gazetteers, read by the template macros %dict and %gaz.

A lexicon is a set of entries, each a sequence of tokens: words split into characters
for segmentation data (SIGHAN format), phrases split into tokens for CoNLL data. At
every token the macros read where the entries found in the sentence cover it:

  %dict[NAME]          (kind longest) the position (B, M, E or S) of the token in the
                       longest entry covering it, with that entry's length capped at
                       dict_length_cap: B3, M4, E2, S1; "-" when none covers it
  %dict[NAME,begin]    length of the longest entry starting at the token (0: none)
  %dict[NAME,end]      length of the longest entry ending at the token (0: none)
  %dict[NAME,any]      the positions the token takes in any entry covering it: BE, S, ...
  %gaz[NAME]           B, I, L or U inside the longest entry covering it, O outside
  %dict[ROW,NAME,KIND] and %gaz[ROW,NAME]: the same at the token ROW rows away

Ties between longest entries go to the leftmost. Matching runs on whole corpora at
once with numpy: entries and corpus windows are hashed (64-bit polynomial hashes of
the token ids), one vectorised pass per entry length.

A dictionary built from the training words covers every training word, so in
training the feature always fires and in use it does not. Built from the training
data (source "train"), it is therefore jackknifed: training sentences of fold k see
the words of the other folds only (Wu & Sun's corpora have no dictionary; the
practice is that of pkuseg's and the CWS literature's lexicon features).
"""
import hashlib

import numpy as np

from ..errors import ConfigError
from ..formats.sentence import Corpus
from ..formats.textio import read_lines

KINDS = {"dict": ("longest", "begin", "end", "any"), "gaz": ("bilou",)}
_BASE = np.uint64(0x9E3779B97F4A7C15)
_POSITIONS = "BMES"


class Lexicon:
    """Entries (tuples of tokens) and their hashes by length."""

    def __init__(self, entries):
        self.entries = sorted({tuple(e) for e in entries if len(e)})
        self.symbols = {}
        for e in self.entries:
            for tok in e:
                self.symbols.setdefault(tok, len(self.symbols) + 1)  # 0 never used: unknown tokens are 0
        self.max_len = max(map(len, self.entries), default=0)
        by_len = {}
        for e in self.entries:
            by_len.setdefault(len(e), []).append(e)
        self.tables = {}
        with np.errstate(over="ignore"):
            for L, es in by_len.items():
                ids = np.array([[self.symbols[t] for t in e] for e in es], dtype=np.uint64)
                h = np.zeros(len(es), dtype=np.uint64)
                for j in range(L):
                    h = h * _BASE + ids[:, j]
                self.tables[L] = np.unique(h)

    def __len__(self):
        return len(self.entries)

    def text(self):
        """The entries one per line, tokens separated by tabs: how a model file keeps
        them (a folded character may be several characters, NFKC's "…" -> "...", so
        tokens are never simply joined)."""
        return "\n".join("\t".join(e) for e in self.entries)

    def sha256(self):
        return hashlib.sha256(self.text().encode("utf-8")).hexdigest()

    @classmethod
    def from_text(cls, text):
        return cls(tuple(line.split("\t")) for line in text.split("\n") if line)

    @classmethod
    def read(cls, path, unit, encoding="utf-8"):
        """A word list (one word per line, optionally followed by a frequency, which is
        ignored) or, for token data, a gazetteer (one phrase per line, tokens
        separated by spaces; a tab and what follows it are ignored)."""
        entries = []
        for number, line in read_lines(path, encoding):
            try:
                entry = parse_entry(line, unit)
            except ValueError as exc:
                raise ConfigError(path, number, str(exc)) from None
            if entry:
                entries.append(entry)
        if not entries:
            raise ConfigError(path, 0, "no entries in the dictionary file")
        return cls(entries)

    def extended(self, entries):
        return Lexicon(list(self.entries) + [tuple(e) for e in entries])

    def starts(self, symbols, lengths):
        """{L: bool array}: an entry of length L starts at the token (windows never
        cross a sentence end). symbols: the tokens' ids in this lexicon (0: in no entry)."""
        P = len(symbols)
        sent = np.repeat(np.arange(len(lengths)), lengths)
        unknown = np.concatenate([[0], np.cumsum(symbols == 0)])
        h = np.zeros(P, dtype=np.uint64)
        s = symbols.astype(np.uint64)
        out = {}
        with np.errstate(over="ignore"):
            for L in range(1, min(self.max_len, P) + 1):
                n = P - L + 1
                h[:n] = h[:n] * _BASE + s[L - 1:]
                if L not in self.tables:
                    continue
                hit = np.zeros(P, dtype=bool)
                hit[:n] = (sent[:n] == sent[L - 1:]) & (unknown[L:] == unknown[:n]) & np.isin(h[:n], self.tables[L])
                out[L] = hit
        return out


def parse_entry(line, unit):
    """The entry of a line of a word list (unit char: a word, optionally followed by
    its frequency, which is not used) or of a gazetteer (tokens separated by spaces);
    a tab and what follows it are ignored. Raises ValueError for a line of a word list
    that holds more than that."""
    line = line.split("\t")[0].strip()
    if not line:
        return ()
    if unit == "char":
        parts = line.split()
        if len(parts) > 2 or (len(parts) == 2 and not _is_count(parts[1])):
            raise ValueError(f"{line!r}: a line of a word list holds one word, optionally followed by its "
                             f"frequency (a number); write one word per line")
        return tuple(parts[0])
    return tuple(line.split())


def _is_count(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def codes(starts, P, kind, cap):
    """Per token, the code of what the macro reads (see value_strings)."""
    if kind in ("longest", "bilou"):
        best_len = np.zeros(P, dtype=np.int64)
        best_start = np.full(P, -1, dtype=np.int64)
        for L in sorted(starts, reverse=True):
            begin = np.flatnonzero(starts[L])
            for k in range(L):
                pos = begin + k
                take = (best_len[pos] < L) | ((best_len[pos] == L) & (begin < best_start[pos]))
                best_len[pos[take]], best_start[pos[take]] = L, begin[take]
        offset = np.arange(P) - best_start
        position = np.where(best_len == 1, 3, np.where(offset == 0, 0, np.where(offset == best_len - 1, 2, 1)))
        if kind == "bilou":
            return np.where(best_len > 0, 1 + position, 0)
        return np.where(best_len > 0, 1 + position * cap + np.minimum(best_len, cap) - 1, 0)
    if kind == "begin":
        out = np.zeros(P, dtype=np.int64)
        for L in sorted(starts):
            out[starts[L]] = L
        return np.minimum(out, cap)
    if kind == "end":
        out = np.zeros(P, dtype=np.int64)
        for L in sorted(starts):  # longer entries come later and overwrite
            out[np.flatnonzero(starts[L]) + L - 1] = L
        return np.minimum(out, cap)
    if kind == "any":
        out = np.zeros(P, dtype=np.int64)
        for L, hit in starts.items():
            begin = np.flatnonzero(hit)
            if L == 1:
                out[begin] |= 8
                continue
            out[begin] |= 1
            out[begin + L - 1] |= 4
            for k in range(1, L - 1):
                out[begin + k] |= 2
        return out
    raise ValueError(f"unknown dictionary kind {kind!r}")


def value_strings(kind, cap):
    """The string of every code of a kind: what the attribute holds."""
    if kind == "longest":
        return ["-"] + [f"{p}{n}" for p in _POSITIONS for n in range(1, cap + 1)]
    if kind == "bilou":
        return ["O", "B", "I", "L", "U"]
    if kind in ("begin", "end"):
        return [str(n) for n in range(cap + 1)]
    return ["".join(p for b, p in zip((1, 2, 4, 8), _POSITIONS) if m & b) or "-" for m in range(16)]


def training_words(corpus, fold=None, min_length=1, folds=0):
    """The words of a segmented corpus (formats.Corpus of characters tagged B/I/E/S),
    each once, as tuples of its characters through fold: [words], and with folds >= 2
    [[the words of the sentences outside fold k] for every fold k], sentence j being
    in fold j mod folds. A word starts at a sentence start or a B or S label;
    sentences without labels have none. Words are told apart as rows of character
    ids, one matrix per length, so no string or tuple is made per occurrence."""
    values, chars = corpus.column(0, fold)
    labels = corpus.label_ids
    starts = np.asarray([y in ("B", "S") for y in corpus.label_values] + [False])[labels]
    starts[corpus.offsets()[:-1][corpus.lengths > 0]] = True
    starts &= labels >= 0
    begin = np.flatnonzero(starts)
    # a word ends where the next one starts, at its sentence end, or before an unlabeled sentence
    stop = np.minimum(np.append(begin[1:], len(labels)),
                      np.repeat(corpus.offsets()[1:], corpus.lengths)[begin] if len(begin) else begin)
    length = stop - begin
    sentence = np.repeat(np.arange(len(corpus)), corpus.lengths)[begin] if len(begin) else begin
    strings = np.array(values, dtype=object)
    words, per_fold = [], [[] for _ in range(folds if folds >= 2 else 0)]
    for L in np.unique(length[length >= max(min_length, 1)]).tolist():
        at = length == L
        rows = chars[begin[at][:, None] + np.arange(L)]
        distinct, which = np.unique(rows, axis=0, return_inverse=True)
        as_tuples = list(map(tuple, strings[distinct].tolist()))
        words.extend(as_tuples)
        if per_fold:
            seen = np.zeros((len(distinct), folds), dtype=bool)
            seen[which.ravel(), sentence[at] % folds] = True
            for k, out in enumerate(per_fold):
                outside = np.delete(seen, k, axis=1).any(axis=1)
                out.extend(w for w, keep in zip(as_tuples, outside.tolist()) if keep)
    return words, per_fold


def parse_specs(specs, origin="<settings>"):
    """{name: source} of "NAME=FILE" / "NAME=train" strings."""
    out = {}
    for spec in specs:
        name, eq, source = spec.partition("=")
        name, source = name.strip(), source.strip()
        if not eq or not name or not source:
            raise ConfigError(origin, 0, f"[features] dictionaries: {spec!r} is not NAME=FILE or NAME=train")
        if name in out:
            raise ConfigError(origin, 0, f"[features] dictionaries: {name!r} is given twice")
        out[name] = source
    return out


def folded(lexicon, fold):
    return Lexicon(tuple(map(fold, e)) for e in lexicon.entries) if fold else lexicon


def training_lexicons(specs, templates, sentences, unit, fold=None, folds=5, encoding="utf-8", base=None,
                      origin="<settings>", min_length=1, words=None):
    """(lexicons, jackknife, described) for a training run on sentences (a list of
    Sentence or a Corpus): {name: Lexicon} of every dictionary the templates read
    (entries folded as the fields are); {name: (folds, [Lexicon per fold])} for those
    built from the training data; and what each is, for the training record. base:
    {name: Lexicon} of a model being continued, whose entries stay. words: the words
    of the sentences (training_words) when they were found elsewhere (on the shards
    of a Dask cluster; no folds then)."""
    specs = parse_specs(specs, origin)
    base = base or {}
    lexicons, jackknife, described = {}, {}, {}
    for name in templates.dictionaries:
        source = specs.get(name)
        if source is None and name not in base:
            raise ConfigError(origin, 0, f"the templates read dictionary {name!r}, but [features] dictionaries does "
                              f"not name it: add \"{name}=FILE\" or \"{name}=train\"")
        kept = list(base[name].entries) if name in base else []
        if source is None or (name in base and source != "train"):  # a file's entries are in the model already
            lexicons[name] = base[name]
            described[name] = {"source": "the model continued"}
        elif source == "train":
            if unit != "char":
                raise ConfigError("<settings>", 0, "a dictionary from the training data (NAME=train) needs "
                                  "segmentation (sighan) data; for token data give a file")
            if words is None:
                found, per_fold = training_words(Corpus.of(sentences), fold, min_length, folds)
            elif folds >= 2:
                raise ValueError("the words of the sentences, found elsewhere, have no folds")
            else:
                found = words
            lexicons[name] = Lexicon(kept + found)
            described[name] = {"source": "train", "folds": folds if folds >= 2 else 0}
            if folds >= 2:
                jackknife[name] = (folds, [Lexicon(kept + fold_words) for fold_words in per_fold])
        else:
            read = folded(Lexicon.read(source, unit, encoding), fold)
            lexicons[name] = Lexicon([e for e in read.entries if len(e) >= min_length] + kept)
            described[name] = {"source": source}
        described[name].update(entries=len(lexicons[name]), sha256=lexicons[name].sha256())
    return lexicons, jackknife, described

