"""Learning structure from unlabeled text: alternating structure optimization (ASO),
Ando & Zhang (2005), "A framework for learning predictive structures from multiple
tasks and unlabeled data", JMLR 6; read with K. Stratos' notes on it.

For every feature split (features/structure.py: e.g. the words at -1 and -2) and every
frequent target (the `targets` most frequent words or characters, lower-cased, digits
as 0) seqbil sets the auxiliary problem "is the token at offset o the target?", which
raw text answers by itself. Each problem is a regularised linear classifier u_l over
the split's sparse features (cython_ext/aso.pyx: SGD on the modified Huber loss or the
hinge, lambda ||w||^2, a few passes; blocks of problems run in parallel threads). The
notes' SVD step (section 2.2, eqs. 10-11) then gives Theta: the top-h left singular
vectors of M = [sqrt(lambda) u_1 ... sqrt(lambda) u_m]. One round is what Ando & Zhang
use (section 3 of the notes); later rounds train w_l and v_l with the previous Theta
(eq. 6) and take the SVD of u_l = w_l + Theta^T v_l again.

Where a split is one template, every token has at most one of its features and each
problem separates into one-dimensional problems per feature with a closed form in the
co-occurrence counts (see closed_form); it is used in the first round.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from .errors import ConfigError, InputError, SeqbilError
from .features.index import FeatureIndex
from .features.structure import DEFAULT_SPLITS, Split, Structure, parse_split
from .features.templates import TemplateSet, parse_template
from .formats.conll import split_fields
from .formats.sentence import Corpus, _Ids
from .formats.textio import read_lines, sha256_file

BLOCK = 64  # problems per kernel call: a feature's weights for them are one 256-byte row


def fold_target(word):
    """What a target is: the word in lower case, every digit as 0."""
    return "".join("0" if c.isdigit() else c for c in word.lower())


def read_text(paths, unit, encoding="utf-8", progress=None):
    """(Corpus of one column, records): raw text, a sentence per line; unit "token":
    tokens separated by white space; "char": the characters, white space dropped.
    Empty lines are skipped. records: per file its path, sha256, bytes, lines and
    units read."""
    lengths, ids, vocab, records = [], [], _Ids(), []
    get = vocab.__getitem__
    for path in paths:
        n_lines = n_units = 0
        for _, line in read_lines(path, encoding):
            units = line.split() if unit == "token" else [c for c in line if not c.isspace()]
            if not units:
                continue
            lengths.append(len(units))
            ids.extend(map(get, units))
            n_lines += 1
            n_units += len(units)
            if progress is not None:
                progress(len(units))
        records.append(_file_record(path, n_lines, n_units))
    corpus = Corpus(np.array(lengths, dtype=np.int64), [list(vocab)], [np.array(ids, dtype=np.int32)], [],
                    np.full(len(ids), -1, dtype=np.int32))
    return corpus, records


def read_columns(paths, encoding="utf-8", progress=None):
    """(Corpus, records) of column files (a token per line, fields separated by spaces
    or tabs as in CoNLL files, formats/conll.py: split_fields; a blank line between
    sentences), every field a column: e.g. raw text tagged by seqbil models (`seqbil
    tag` writes the input's fields and the label)."""
    lengths, records, width = [], [], None
    columns, vocab = [], []
    for path in paths:
        n_sent = n_units = n = 0
        for number, line in read_lines(path, encoding):
            fields = split_fields(line)
            if not fields:
                if n:
                    lengths.append(n)
                    n_sent += 1
                    n = 0
                continue
            if width is None:
                width = len(fields)
                columns, vocab = [[] for _ in fields], [_Ids() for _ in fields]
            if len(fields) != width:
                raise InputError(path, number, f"expected {width} fields, found {len(fields)}")
            for col, ids, value in zip(columns, vocab, fields):
                col.append(ids[value])
            n += 1
            n_units += 1
            if progress is not None:
                progress(1)
        if n:
            lengths.append(n)
            n_sent += 1
        records.append(_file_record(path, n_sent, n_units, columns=width))
    corpus = Corpus(np.array(lengths, dtype=np.int64), [list(v) for v in vocab],
                    [np.array(c, dtype=np.int32) for c in columns], [], np.full(sum(lengths), -1, dtype=np.int32))
    return corpus, records


def _file_record(path, sentences, units, **extra):
    """What the structure's provenance keeps of a file read; a file without text is an
    error."""
    if not sentences:
        raise InputError(path, 0, "no text in the file")
    return {"path": os.path.abspath(path), "sha256": sha256_file(path), "bytes": os.path.getsize(path),
            "sentences": sentences, "units": units, **extra}


def target_ids(corpus, m, column=0):
    """(targets, id of every token's target or -1): the m most frequent values of a
    column (ties: first seen first); words (column 0) folded by fold_target."""
    values, inverse = corpus.values[column], corpus.ids[column]
    folded = _Ids()
    fold = fold_target if column == 0 else str
    lut = np.fromiter(map(folded.__getitem__, map(fold, values)), dtype=np.int64, count=len(values))
    tok = lut[inverse]
    counts = np.bincount(tok, minlength=len(folded))
    order = np.argsort(-counts, kind="stable")[:m]
    order = order[counts[order] > 0]
    rank = np.full(len(folded), -1, dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    names = list(folded)
    return [names[i] for i in order], rank[tok]


def shifted(tok_target, lengths, offset):
    """target[p] = the target of the token `offset` away from p in its sentence, -1
    when there is none."""
    P = len(tok_target)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    src = np.arange(P) + offset
    inside = (src >= starts) & (src < starts + np.repeat(lengths, lengths))
    return np.where(inside, tok_target[np.clip(src, 0, max(P - 1, 0))], -1).astype(np.int32)


def closed_form(X, target, m, lam, loss):
    """The first-round problems of a split with at most one feature per token, in
    closed form. Problem l separates into, per feature f with c+ positive and c-
    negative tokens among n, min_u lambda u^2 + (c+ L(u, 1) + c- L(u, -1)) / n:
    u = (c+ - c-) / (lambda n + c+ + c-) for the modified Huber loss (both terms
    quadratic on [-1, 1], where the minimum lies), and (c+ - c-) / (2 lambda n)
    clipped to [-1, 1] for the hinge. Returns U (d x m float32)."""
    n = X.shape[0]
    rows = np.flatnonzero(target >= 0)
    Y = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, target[rows])), shape=(n, m))
    pos = np.asarray((X.T @ Y).todense(), dtype=np.float64)
    total = np.asarray(X.sum(axis=0), dtype=np.float64).reshape(-1, 1)
    if loss == "hinge":
        return np.clip((2 * pos - total) / (2 * lam * n), -1, 1).astype(np.float32)
    return ((2 * pos - total) / (lam * n + total)).astype(np.float32)


def top_singular(M, h, seed=0):
    """The top-h left singular vectors of M (d x m) as the columns of a d x h matrix,
    largest singular value first, each signed so that its largest entry is positive;
    and the singular values."""
    k = min(h, min(M.shape) - 1)
    if k < 1:
        raise SeqbilError(f"a split has {M.shape[0]} features and {M.shape[1]} problems: too few for a structure")
    # float32 throughout: a copy of M in float64 would double the peak memory
    v0 = np.random.default_rng(seed).standard_normal(min(M.shape)).astype(M.dtype)
    U, s, _ = svds(M, k=k, v0=v0)
    order = np.argsort(-s)
    U, s = U[:, order], s[order]
    flip = np.sign(U[np.abs(U).argmax(axis=0), np.arange(U.shape[1])])
    return np.ascontiguousarray(U * flip, dtype=np.float32), s


class StructureLearner:
    """One run of `seqbil aso`: settings (the parameter table's), a Corpus of the
    unlabeled text, the split specs; learn() gives a Structure."""

    def __init__(self, settings, corpus, unit, splits, jobs=1, echo=None, progress=False):
        self.settings, self.corpus, self.unit, self.splits = settings, corpus, unit, splits
        self.jobs, self.echo, self.progress = max(1, jobs), echo or (lambda _m: None), progress

    def learn(self):
        s = self.settings
        t0 = time.perf_counter()
        self.targets = {}  # column: (target values, every token's target id or -1)
        for column in sorted({c for _, _, _, c in self.splits}):
            names, tok = self.targets[column] = target_ids(self.corpus, s["targets"], column)
            covered = float(np.mean(tok >= 0)) if len(tok) else 0.0
            self.echo(f"{len(names)} targets{f' of column {column}' if column else ''} cover {100 * covered:.1f}% "
                      f"of the {len(tok)} {'tokens' if self.unit == 'token' else 'characters'}")
        splits, report = [], []
        for name, texts, offsets, column in self.splits:
            t_split = time.perf_counter()
            split, info = self._split(name, texts, offsets, column)
            info["seconds"] = round(time.perf_counter() - t_split, 2)
            splits.append(split)
            report.append(info)
            self.echo(f"split {name}: {info['attributes']} features, {info['problems']} problems "
                      f"({info['method']}), h = {split.dim}, {info['seconds']:.1f} s")
        first = min(self.targets)
        record = {"targets": len(self.targets[first][0]),
                  "target_coverage": round(float(np.mean(self.targets[first][1] >= 0)), 4),
                  "target_columns": {str(c): len(v[0]) for c, v in self.targets.items()}, "dim": s["dim"],
                  "loss": s["aux_loss"], "lambda": s["aux_lambda"], "epochs": s["aux_epochs"], "rate": s["aux_rate"],
                  "min_count": s["aux_min_count"], "rounds": s["rounds"], "seed": s["seed"], "splits": report,
                  "seconds": round(time.perf_counter() - t0, 2), "jobs": self.jobs}
        return Structure(splits, self.unit, record)

    def _split(self, name, texts, offsets, column):
        s = self.settings
        templates = TemplateSet(parse_template(t) for t in texts)
        n_columns = len(self.corpus.values)
        for c in sorted({f.column for t in templates.templates for _, f in t.refs} | {column}):
            if c >= n_columns:
                raise SeqbilError(f"split {name} reads or predicts column {c}, but the unlabeled text has "
                                  f"{n_columns} column{'s' * (n_columns > 1)}")
        index, parts = FeatureIndex.build(self.corpus, templates, s["aux_min_count"])
        u_ptr, u_ids = parts[0], parts[1]
        values, tok_target = self.targets[column]
        d, m = index.n_keyed(0), len(values)
        if d == 0:
            raise SeqbilError(f"split {name}: no feature is seen {s['aux_min_count']} times in the unlabeled text")
        if m < 2:
            raise SeqbilError(f"split {name}: column {column} has {m} value in the unlabeled text: nothing to predict")
        targets = [shifted(tok_target, self.corpus.lengths, o) for o in offsets]
        X = sp.csr_matrix((np.ones(len(u_ids), np.float32), u_ids, u_ptr), shape=(len(u_ptr) - 1, d))
        theta, methods = None, []
        for r in range(s["rounds"]):
            if r == 0 and len(texts) == 1:
                U = np.hstack([closed_form(X, tg, m, s["aux_lambda"], s["aux_loss"]) for tg in targets])
                methods.append("closed form")
            else:
                U = self._sgd(name, r, u_ptr, u_ids, d, m, targets, theta)
                methods.append(f"SGD, {s['aux_epochs']} epochs")
            # M = [sqrt(lambda) u_l]: one lambda for all, so the singular vectors are those of U
            theta, sv = top_singular(U, s["dim"], s["seed"])
            del U
        rms = _rms(X, theta)
        method = methods[0] + (f"; then {len(methods) - 1} more round(s) by SGD" if len(methods) > 1 else "")
        info = {"name": name, "attributes": d, "problems": m * len(offsets), "method": method,
                "singular_values": [round(float(x), 6) for x in sv[:10]], "rms": rms}
        return Split(name, offsets, index, theta, rms, column), info

    def _sgd(self, name, rnd, u_ptr, u_ids, d, m, targets, theta):
        from tqdm import tqdm

        from ._kernels.aso import sgd_block
        s = self.settings
        h = 0 if theta is None else theta.shape[1]
        P = len(u_ptr) - 1
        rng = np.random.default_rng(s["seed"] + 7919 * rnd)
        orders = [rng.permutation(P).astype(np.int64) for _ in range(s["aux_epochs"])]
        u_ptr = np.ascontiguousarray(u_ptr, dtype=np.int64)
        u_ids = np.ascontiguousarray(u_ids, dtype=np.int32)
        th = theta if theta is not None else np.zeros((0, 0), np.float32)
        jobs = [(o, b0, min(b0 + BLOCK, m)) for o in range(len(targets)) for b0 in range(0, m, BLOCK)]
        out = np.zeros((d, m * len(targets)), dtype=np.float32)
        bar = tqdm(total=len(jobs) * s["aux_epochs"], desc=f"split {name}" + (f", round {rnd + 1}" if rnd else ""),
                   unit="block", leave=False, disable=not self.progress, dynamic_ncols=True)

        def run(job):
            o, b0, b1 = job
            W = np.zeros((d, b1 - b0), dtype=np.float32)
            V = np.zeros((h, b1 - b0), dtype=np.float32)
            t = 0
            for order in orders:
                t = sgd_block(u_ptr, u_ids, targets[o], b0, W, V, th, order, s["aux_lambda"], s["aux_rate"], t,
                              s["aux_loss"] == "hinge")
                bar.update(1)
            if h:
                W += theta @ V  # u_l = w_l + Theta^T v_l
            out[:, o * m + b0:o * m + b1] = W

        with bar, ThreadPoolExecutor(self.jobs) as pool:
            for _ in pool.map(run, jobs):
                pass
        return out


def _rms(X, theta, rows=500_000):
    """Root mean square of the entries of Theta phi(x) over the tokens (in blocks)."""
    total, n = 0.0, 0
    for a in range(0, X.shape[0], rows):
        v = np.asarray(X[a:a + rows] @ theta, dtype=np.float64)
        total += float(np.square(v).sum())
        n += v.size
    return float(np.sqrt(total / n)) if n else 0.0


def split_specs(settings, fmt, origin="<settings>"):
    """[(name, templates, offsets)] of the settings' splits, or the format's defaults."""
    texts = settings["splits"] or DEFAULT_SPLITS[fmt]
    specs = [parse_split(t, origin) for t in texts]
    names = [n for n, _, _, _ in specs]
    if len(set(names)) != len(names):
        raise ConfigError(origin, 0, "[structure] splits: two splits share a name")
    return specs


def word_vectors(structure, corpus, min_count):
    """(words, vectors) of the first split that reads only the token itself: every word
    of the unlabeled text seen min_count times, most frequent first, and its Theta phi
    divided by the split's RMS (Theta phi of a word alone is all such a split sees)."""
    for split in structure.splits:
        if all(r == 0 for t in split.index.templates.templates for r, _ in t.refs):
            break
    else:
        raise SeqbilError("no split reads only the token itself, so the structure gives no word vectors "
                          "(declare one such as 'word: %x[0,0] %x[0,0]|suffix:3 -> -1 1')")
    counts = np.bincount(corpus.ids[0], minlength=len(corpus.values[0]))
    keep = np.flatnonzero(counts >= min_count)
    keep = keep[np.argsort(-counts[keep], kind="stable")]
    words = [corpus.values[0][i] for i in keep]
    single = Corpus(np.ones(len(words), np.int64), [words], [np.arange(len(words), dtype=np.int32)], [],
                    np.full(len(words), -1, np.int32))
    return words, split.vectors(single) / (split.rms or 1.0)


def write_vectors(path, words, vectors):
    """word2vec text format, written atomically."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{len(words)} {vectors.shape[1]}\n")
        for w, v in zip(words, vectors):
            f.write(w + " " + " ".join(f"{x:.6g}" for x in v) + "\n")
    os.replace(tmp, path)
