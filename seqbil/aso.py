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

Memory: the text is held as read (per column, the id of every token's value among the
column's distinct values: 4 bytes a token, and the sentence offsets); a split's
features are never encoded for the whole text but for CHUNK positions at a time
(SplitText), in each pass: counting its attributes, each SGD epoch (the chunks of the
epoch's random order, shared by all blocks of problems), the closed form's counts and
the RMS. What stays is one epoch's order (4 bytes a token) and the split's weights,
d x (problems) float32, one split at a time; the SVD reads them block by block.

The text as read and a split's features over it are in aso_text.py, the SVD in
aso_svd.py.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
import scipy.sparse as sp
from tqdm import tqdm

from ._kernels.aso import fold_scale, sgd_steps, sum_squares
from .aso_svd import top_singular
from .aso_text import CHUNK, SplitText, read_columns, read_text
from .errors import ConfigError, SeqbilError
from .features.structure import DEFAULT_SPLITS, Split, Structure, parse_split
from .features.templates import TemplateSet, parse_template
from .formats import FORMATS
from .formats.sentence import Corpus, Ids
from .progress import disabled

BLOCK = 64  # problems per kernel call: a feature's weights for them are one 256-byte row


def fold_target(word):
    """What a target is: the word in lower case, every digit as 0."""
    return "".join("0" if c.isdigit() else c for c in word.lower())


def target_table(corpus, m, column=0):
    """(targets, table, covered): the m most frequent values of a column (ties: first
    seen first), words (column 0) folded by fold_target; table[v]: the target id of
    the column's value v, or -1; covered: the tokens whose value is a target."""
    values = corpus.values[column]
    counts = np.bincount(corpus.ids[column], minlength=len(values)) if len(values) else np.zeros(0, np.int64)
    return targets_of_counts(values, counts, m, column)


def targets_of_counts(values, counts, m, column=0):
    """target_table of a column's values and how often each is seen."""
    folded = Ids()
    fold = fold_target if column == 0 else str
    lut = np.fromiter(map(folded.__getitem__, map(fold, values)), dtype=np.int64, count=len(values))
    total = np.zeros(len(folded), np.int64)
    np.add.at(total, lut, counts)
    order = np.argsort(-total, kind="stable")[:m]
    order = order[total[order] > 0]
    rank = np.full(len(folded), -1, dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    names = list(folded)
    table = rank[lut]
    return [names[i] for i in order], table, int(counts[table >= 0].sum())


def target_ids(corpus, m, column=0):
    """(targets, id of every token's target or -1): target_table over the tokens."""
    names, table, _ = target_table(corpus, m, column)
    return names, table[corpus.ids[column]]


def shifted(tok_target, lengths, offset):
    """target[p] = the target of the token `offset` away from p in its sentence, -1
    when there is none: for every token of the text at once (the learner reads them a
    chunk of positions at a time, SplitText.values)."""
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
    clipped to [-1, 1] for the hinge. Returns U (d x m float32). X: the features of
    every token (CSR, n x d); target: the target of every token (-1: none)."""
    n = X.shape[0]
    rows = np.flatnonzero(target >= 0)
    Y = sp.csr_matrix((np.ones(len(rows), np.float64), (rows, target[rows])), shape=(n, m))
    pos = np.asarray((X.astype(np.float64).T @ Y).todense()).astype(np.int32)
    total = np.asarray(X.astype(np.float64).sum(axis=0)).reshape(-1).astype(np.int64)
    return closed_form_counts(pos, total, n, lam, loss)


def closed_form_counts(pos, total, n, lam, loss, rows=4096):
    """closed_form from the counts: pos[f, l] (int32 d x m), the tokens with feature f
    whose target is l, and total[f], the tokens with feature f, among n. U is written
    over pos (a float32 view of its memory, returned), a few rows at a time in
    float64: no d x m temporaries."""
    U = pos.view(np.float32)
    for a in range(0, pos.shape[0], rows):
        c = pos[a:a + rows].astype(np.float64)  # a copy: U's rows are written after
        t = total[a:a + rows, None].astype(np.float64)
        if loss == "hinge":
            U[a:a + rows] = np.clip((2 * c - t) / (2 * lam * n), -1, 1)
        else:
            U[a:a + rows] = (2 * c - t) / (lam * n + t)
    return U


class StructureLearner:
    """One run of `seqbil aso`: settings (the parameter table's), a Corpus of the
    unlabeled text, the split specs; learn() gives a Structure. chunk: positions
    encoded at a time (the result does not depend on it)."""

    def __init__(self, settings, corpus, unit, splits, jobs=1, echo=None, progress=False, chunk=CHUNK):
        self.settings, self.corpus, self.unit, self.splits = settings, corpus, unit, splits
        self.jobs, self.echo, self.progress = max(1, jobs), echo or (lambda _m: None), progress
        self.chunk = chunk
        self.fields = {}  # the splits' field vocabularies, shared (SplitText)

    def learn(self):
        s = self.settings
        t0 = time.perf_counter()
        P = self.n_tokens()
        self.targets = {}  # column: (target values, target id of each of the column's values or -1, coverage)
        for column in sorted({c for _, _, _, c in self.splits}):
            if column >= self.n_columns():
                continue  # _split says which split asks for it
            names, table, covered = self.target_table(s.targets, column)
            self.targets[column] = names, table, covered / P if P else 0.0
            self.echo(f"{len(names)} targets{f' of column {column}' if column else ''} cover "
                      f"{100 * self.targets[column][2]:.1f}% of the {P} "
                      f"{'tokens' if self.unit == 'token' else 'characters'}")
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
                  "target_coverage": round(float(self.targets[first][2]), 4),
                  "target_columns": {str(c): len(v[0]) for c, v in self.targets.items()}, "dim": s.dim,
                  "loss": s.aux_loss, "lambda": s.aux_lambda, "epochs": s.aux_epochs, "rate": s.aux_rate,
                  "min_count": s.aux_min_count, "rounds": s.rounds, "seed": s.seed, "splits": report,
                  "seconds": round(time.perf_counter() - t0, 2), "jobs": self.jobs}
        return Structure(splits, self.unit, record)

    def _split(self, name, texts, offsets, column):
        s = self.settings
        templates = TemplateSet(parse_template(t) for t in texts)
        n_columns = self.n_columns()
        for c in sorted({f.column for t in templates.templates for _, f in t.refs} | {column}):
            if c >= n_columns:
                raise SeqbilError(f"split {name} reads or predicts column {c}, but the unlabeled text has "
                                  f"{n_columns} column{'s' * (n_columns > 1)}")
        text = self.split_text(name, templates)
        index = text.index
        values, table, _ = self.targets[column]
        d, m = index.n_keyed(0), len(values)
        if d == 0:
            raise SeqbilError(f"split {name}: no feature is seen {s.aux_min_count} times in the unlabeled text")
        if m < 2:
            raise SeqbilError(f"split {name}: column {column} has {m} value in the unlabeled text: nothing to predict")
        theta, methods = None, []
        for r in range(s.rounds):
            U = self.weights(text, r, name, offsets, column, theta)
            methods.append("closed form" if r == 0 and len(texts) == 1 else f"SGD, {s.aux_epochs} epochs")
            # M = [sqrt(lambda) u_l]: one lambda for all, so the singular vectors are those of U
            theta, sv = top_singular(U, s.dim, s.seed, self.jobs)
            del U
        rms = self.rms(text, theta)
        self.done_with(name)
        method = methods[0] + (f"; then {len(methods) - 1} more round(s) by SGD" if len(methods) > 1 else "")
        info = {"name": name, "attributes": d, "problems": m * len(offsets), "method": method,
                "singular_values": [round(float(x), 6) for x in sv[:10]], "rms": rms}
        return Split(name, offsets, index, theta, rms, column), info

    # what the text is asked for; seqbil/dask/aso.py asks the shards of a cluster instead

    def n_tokens(self):
        return self.corpus.n_tokens

    def n_columns(self):
        return len(self.corpus.values)

    def target_table(self, m, column):
        return target_table(self.corpus, m, column)

    def split_text(self, name, templates):
        """The split's SplitText, its index counted."""
        text = SplitText(self.corpus, templates, self.chunk, self.fields)
        text.count(self.settings.aux_min_count)
        text.name = name
        return text

    def done_with(self, name):
        """(the split is learned)"""

    def weights(self, text, rnd, name, offsets, column, theta=None):
        """The problems of a split (SplitText, counted) in round rnd: U = [u_l] as its
        column blocks (d x m_k float32 each; offset by offset, BLOCK targets at a
        time), in closed form in the first round of a one-template split."""
        if rnd == 0 and len(text.templates.templates) == 1:
            return self._closed_form(text, offsets, column)
        return self._sgd(text, rnd, name, offsets, column, theta)

    def _closed_form(self, text, offsets, column):
        s = self.settings
        pos, total = self.cooccurrence_counts(text, offsets, column)
        return [closed_form_counts(counts, total, text.P, s.aux_lambda, s.aux_loss) for counts in pos]

    def cooccurrence_counts(self, text, offsets, column):
        """(pos, total) of closed_form_counts for each offset: counts, which add up over
        the parts of a text."""
        _, table, _ = self.targets[column]
        d, m = text.index.n_keyed(0), len(self.targets[column][0])
        pos = list(column_blocks(d, [m] * len(offsets), np.int32))
        total = np.zeros(d, np.int64)
        for at, buf in text.chunks():
            ptr, ids = text.csr(at, buf)
            has = np.flatnonzero(ptr[1:] > ptr[:-1])  # at most one feature per token
            total += np.bincount(ids, minlength=d)
            for o, counts in zip(offsets, pos):
                target = text.values(at[has], column, table, o)
                keep = target >= 0
                np.add.at(counts.reshape(-1), ids[keep].astype(np.int64) * m + target[keep], 1)
        return pos, total

    def _sgd(self, text, rnd, name, offsets, column, theta):
        steps = self.sgd_epochs(text, rnd, name, offsets, column, theta)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    def sgd_epochs(self, text, rnd, name, offsets, column, theta):
        """The SGD of a split's problems (weights: U as its column blocks) an epoch at a
        time: yields, after each epoch, the blocks [offset, first target, W, V, steps
        taken, scale of W = 1] (their W and V may be set in between: the shards of
        seqbil/dask/aso.py mix them); returns the weights."""
        s = self.settings
        _, table, _ = self.targets[column]
        d, m, P = text.index.n_keyed(0), len(self.targets[column][0]), text.P
        h = 0 if theta is None else theta.shape[1]
        th = theta if theta is not None else np.zeros((0, 0), np.float32)
        rng = np.random.default_rng(s.seed + 7919 * rnd)
        hinge = s.aux_loss == "hinge"
        # per block of problems: [offset, first target, W, V, steps taken, scale of W]
        W = column_blocks(d, [min(b0 + BLOCK, m) - b0 for _ in offsets for b0 in range(0, m, BLOCK)])
        blocks = [[k, b0, next(W), np.zeros((h, min(b0 + BLOCK, m) - b0), np.float32), 0, 1.0]
                  for k in range(len(offsets)) for b0 in range(0, m, BLOCK)]
        bar = tqdm(total=P * s.aux_epochs, desc=f"split {name}" + (f", round {rnd + 1}" if rnd else ""),
                   unit="tok", unit_scale=True, leave=False, disable=disabled(self.progress), dynamic_ncols=True)

        def run(block, ptr, ids, targets):
            k, b0, W, V, t, scale = block
            block[4], block[5] = sgd_steps(ptr, ids, targets[k], b0, W, V, th, s.aux_lambda, s.aux_rate, t,
                                           scale, hinge)

        bufs = [text.buffers(len(offsets)) for _ in range(2)]  # one chunk trains, the next is encoded
        with bar, ThreadPoolExecutor(self.jobs) as pool:
            for _ in range(s.aux_epochs):
                # the epoch's order: rng.permutation(P), which numpy draws as the shuffle of
                # arange(P), held in 4 bytes a position
                order = np.arange(P, dtype=np.int32 if P < 2 ** 31 else np.int64)
                rng.shuffle(order)
                running, done = [], 0
                for at, buf in text.chunks(order, bufs):
                    # the next chunk is encoded while the blocks train on the last one
                    ptr, ids = text.csr(at, buf)
                    targets = [text.values(at, column, table, o, out) for o, out in zip(offsets, buf.values)]
                    for f in wait(running).done:
                        f.result()
                    bar.update(done)
                    running = [pool.submit(run, block, ptr, ids, targets) for block in blocks]
                    done = len(at)
                for f in wait(running).done:
                    f.result()
                bar.update(done)
                order = running = ptr = ids = targets = None  # (a text without tokens has no chunk)
                for block in blocks:
                    fold_scale(block[2], block[5])
                    block[5] = 1.0
                yield blocks
        out = []
        for k, b0, W, V, _, _ in blocks:
            if h:
                W += theta @ V  # u_l = w_l + Theta^T v_l
            out.append(W)
        return out

    def rms(self, text, theta):
        """Root mean square of the entries of Theta phi(x) over the tokens."""
        n = self.n_tokens() * theta.shape[1]
        return float(np.sqrt(self.sum_squares(text, theta) / n)) if n else 0.0

    def sum_squares(self, text, theta):
        """The sum of the squared entries of Theta phi(x) over the text's tokens."""
        total = 0.0
        for at, buf in text.chunks():
            total += sum_squares(*text.csr(at, buf), theta)
        return total


def column_blocks(d, widths, dtype=np.float32):
    """Zero d x widths[k] arrays, each C-contiguous, cut from one allocation: freed all
    at once, it goes back to the system (blocks of a few MB each would come from the
    heap, where they may stay)."""
    flat = np.zeros(d * sum(widths), dtype)
    at = 0
    for w in widths:
        yield flat[at:at + d * w].reshape(d, w)
        at += d * w


def split_specs(settings, fmt, origin="<settings>"):
    """[(name, templates, offsets)] of the settings' splits, or the format's defaults."""
    texts = settings.splits or DEFAULT_SPLITS[fmt]
    specs = [parse_split(t, origin) for t in texts]
    names = [n for n, _, _, _ in specs]
    if len(set(names)) != len(names):
        raise ConfigError(origin, 0, "[structure] splits: two splits share a name")
    return specs


def word_vectors(structure, corpus, min_count, counts=None):
    """(words, vectors) of the first split that reads only the token itself: every word
    of the unlabeled text seen min_count times, most frequent first, and its Theta phi
    divided by the split's RMS (Theta phi of a word alone is all such a split sees).
    counts: how often each of corpus.values[0] is seen (default: counted in corpus)."""
    for split in structure.splits:
        if all(r == 0 for t in split.index.templates.templates for r, _ in t.refs):
            break
    else:
        raise SeqbilError("no split reads only the token itself, so the structure gives no word vectors "
                          "(declare one such as 'word: %x[0,0] %x[0,0]|suffix:3 -> -1 1')")
    if counts is None:
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


def learn_from_files(unlabeled, settings, config, echo, *, out=None, vectors=None, jobs=1, progress=False,
                     shards=0, client=None, scheduler=None, workers=None, sharded=None):
    """What api.learn_structure does once it has the text's paths (unlabeled) and the
    settings (params.Settings; config: the config file, or None): read
    the text, learn the structure in this process, or with shards on a Dask cluster
    by sharded(...) (api.py: _sharded_structure; client, scheduler, workers: the
    cluster), record what it was learned from, and write it and the word vectors
    when asked."""
    fmt = settings.format
    unit = FORMATS[fmt].unit
    specs = split_specs(settings, fmt, settings.origin("splits"))
    if shards is None or isinstance(shards, bool) or not isinstance(shards, int) or shards < 0:
        raise SeqbilError(f"shards must be a whole number of at least 0, got {shards!r}")
    if not shards and (client is not None or scheduler is not None or workers is not None):
        raise SeqbilError("a Dask client, scheduler or workers go with shards")
    t0 = time.perf_counter()
    columns = settings.unlabeled_format == "columns"
    with tqdm(desc="reading", unit=" " + unit + "s", unit_scale=True, leave=False, disable=disabled(progress),
              dynamic_ncols=True) as bar:
        # with shards, the driver only counts the sentences (and checks the files): the
        # workers read their parts
        keep = (0, 0) if shards else None
        if columns:
            corpus, records = read_columns(unlabeled, settings.encoding, bar.update, keep=keep)
        else:
            corpus, records = read_text(unlabeled, unit, settings.encoding, bar.update, keep=keep)
    n_sentences = sum(r["sentences"] for r in records)
    if shards:
        structure, corpus, counts = sharded(settings, unlabeled, unit, columns, n_sentences, specs, jobs, echo,
                                            progress, shards, client, scheduler, workers, len(records))
    else:
        echo(f"read {len(corpus)} sentences, {corpus.n_tokens} {unit}s ({len(corpus.values[0])} distinct) from "
             f"{len(records)} file{'s' * (len(records) > 1)} in {time.perf_counter() - t0:.1f} s")
        structure, counts = StructureLearner(settings, corpus, unit, specs, jobs, echo, progress).learn(), None
    structure.provenance["unlabeled"] = records
    structure.provenance["config"] = str(config) if config is not None else None
    structure.provenance["format"] = fmt
    if out is not None:
        structure.save(out)
        echo(f"wrote {out}: {len(structure.splits)} splits, {structure.dim} features per token "
             f"({structure.provenance['seconds']:.1f} s)")
    if vectors is not None:
        words, matrix = word_vectors(structure, corpus, settings.aux_min_count, counts)
        write_vectors(vectors, words, matrix)
        echo(f"wrote {vectors}: {len(words)} word vectors of dimension {matrix.shape[1]}")
    return structure
