"""What the readers of other tools' models share, whose features are strings made from
templates (CRF++'s feature strings, Wapiti's observations): a string taken apart again
into the cells of the template that made it, and the weight tables of a seqbil index
built from those cells."""
from bisect import bisect_left
from itertools import product

import numpy as np

from ..errors import ModelFileError


def splits(middle, seps):
    """Every way of cutting `middle` into len(seps) + 1 non-empty cells with the
    literal separators seps between them."""
    if not seps:
        return [(middle,)] if middle else []
    out, sep, start = [], seps[0], 1
    while True:
        at = middle.find(sep, start) if sep else start
        if at < 0 or at >= len(middle):
            return out
        for rest in splits(middle[at + len(sep):], seps[1:]):
            out.append((middle[:at],) + rest)
        start = at + 1


def cells(key, pieces):
    """The tuples of cells that expand a template's pieces to the key, if any."""
    head, tail = pieces[0], pieces[-1]
    if len(pieces) == 1:
        return [()] if key == head else []
    if not key.startswith(head) or not key.endswith(tail) or len(key) < len(head) + len(tail):
        return []
    middle = key[len(head):len(key) - len(tail)]
    return splits(middle, pieces[1:-1])


def feature_cells(keys, offsets, parts):
    """(keys, offsets, found): the feature strings sorted, the offsets of their
    weights, and found[t], the (offset, (cell, ...)) of every tuple of cells that
    template t (parts[t]: its literal pieces, first) expands to one of them."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    keys, offsets = [keys[i] for i in order], np.asarray(offsets)[order]
    found = {t: [] for t in range(len(parts))}  # t -> [(offset, (cell, ...))]
    for t, (pieces, *_) in enumerate(parts):
        lo = bisect_left(keys, pieces[0])
        for i in range(lo, len(keys)):
            key = keys[i]
            if not key.startswith(pieces[0]):
                break
            for made in cells(key, pieces):
                found[t].append((int(offsets[i]), made))
    return keys, offsets, found


def weight_tables(path, index, texts, parts, found, options, alpha, S):
    """(tables, blocks): per order, the index's key table (sorted keys, int64
    pointers per template) and the weights of its attributes, a row each, from
    the weights of the feature strings that stand for them. texts: each template's
    text, in the order of parts and found; parts[t]: (literal pieces, macros, how
    often the template is given); found[t]: the (offset, (cell, ...)) of each
    feature string of template t; options(t, m, cell): the ids in the index that
    the cell of macro m stands for (a value, and the boundary symbols that read as
    it): every combination fires."""
    tables, blocks = [], {}
    for order in (0, 1):
        table, ptr, rows = [], [0], []
        width = S if order == 0 else S * S
        for ti, tmpl in enumerate(index.templates.by_order[order]):
            t = texts.index(tmpl.text)
            pieces, macros, mult = parts[t]
            offs, tuples = [], []
            for off, cells in found[t]:
                for combo in product(*(options(t, m, cell) for m, cell in enumerate(cells))):
                    offs.append(off)
                    tuples.append(combo)
            if offs and max(offs) + width > len(alpha):
                raise ModelFileError(f"{path}: a feature's weights lie outside the model's {len(alpha)}")
            cols = np.array(tuples, dtype=np.int64).reshape(len(tuples), len(macros))
            key = index.combine(order, ti, [cols[:, m] for m in range(len(macros))]) if macros else \
                np.zeros(len(offs), dtype=np.int64)  # a template without macros has the one key 0
            uniq, inverse = np.unique(key, return_inverse=True)
            block = np.zeros((len(uniq), width))
            if len(offs):
                np.add.at(block, inverse, alpha[np.array(offs)[:, None] + np.arange(width)] * mult)
            table.append(uniq)
            ptr.append(ptr[-1] + len(uniq))
            rows.append(block)
        tables.append((np.concatenate(table) if table else np.zeros(0, np.int64), np.array(ptr, np.int64)))
        blocks[order] = np.concatenate(rows) if rows else np.zeros((0, width))
    return tables, blocks


def text_of(path, encoding, errors="strict"):
    """A function decoding a model's strings (bytes) as text in `encoding`: one that
    does not decode is a ModelFileError naming what it is (`what`) and how to say
    the encoding."""
    def text(b, what):
        try:
            return b.decode(encoding, errors)
        except UnicodeDecodeError:
            raise ModelFileError(f"{path}: {what} {b[:40]!r} is not {encoding}: give the model's encoding "
                                 f"(--encoding)") from None
    return text


def model_labels(path, raw, text, tool):
    """The labels of another tool's model (raw: bytes), decoded, distinct and some."""
    labels = [text(y, "the label") for y in raw]
    if not labels or len(set(labels)) != len(labels):
        raise ModelFileError(f"{path}: a {tool} model with {'duplicate' if labels else 'no'} labels")
    return labels
