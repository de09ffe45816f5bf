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
        for _, line in read_lines(path, encoding):
            entry = parse_entry(line, unit)
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
    line = line.split("\t")[0].strip()
    if not line:
        return ()
    if unit == "char":
        return tuple(line.split()[0])  # "word 123": the word, its frequency ignored
    return tuple(line.split())


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


def words_of(sentence):
    """The words of a segmented sentence from its characters and B/I/E/S labels."""
    words, chars = [], sentence.columns[0]
    for ch, y in zip(chars, sentence.labels):
        if y in ("B", "S") or not words:
            words.append([ch])
        else:
            words[-1].append(ch)
    return [tuple(w) for w in words]


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
                      origin="<settings>", min_length=1):
    """(lexicons, jackknife, described) for a training run: {name: Lexicon} of every
    dictionary the templates read (entries folded as the fields are); {name: (folds,
    [Lexicon per fold])} for those built from the training data; and what each is,
    for the training record. base: {name: Lexicon} of a model being continued, whose
    entries stay."""
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
            words = [[w for w in words_of_sentence(s, unit, fold) if len(w) >= min_length] for s in sentences]
            lexicons[name] = Lexicon(kept + [w for ws in words for w in ws])
            described[name] = {"source": "train", "folds": folds if folds >= 2 else 0}
            if folds >= 2:
                jackknife[name] = (folds, [Lexicon(kept + [w for j, ws in enumerate(words) if j % folds != k
                                                           for w in ws]) for k in range(folds)])
        else:
            read = folded(Lexicon.read(source, unit, encoding), fold)
            lexicons[name] = Lexicon([e for e in read.entries if len(e) >= min_length] + kept)
            described[name] = {"source": source}
        described[name].update(entries=len(lexicons[name]), sha256=lexicons[name].sha256())
    return lexicons, jackknife, described


def words_of_sentence(sentence, unit, fold=None):
    if unit != "char":
        raise ConfigError("<settings>", 0, "a dictionary from the training data (NAME=train) needs segmentation "
                          "(sighan) data; for token data give a file")
    if sentence.labels is None:
        return []
    words = words_of(sentence)
    return [tuple(map(fold, w)) for w in words] if fold else words
