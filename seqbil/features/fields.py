"""The field matrix: the ids of what the templates' macros read (a column's
value through its functions, a %dict or %gaz field's code, the task), at every
position of a corpus padded with boundary symbols, as the attribute
dictionary (index.py) keys them."""
import numpy as np

from . import dictionaries
from .functions import apply_chain


def field_matrix(corpus, fields, K, token_ids, fold=None, layout="boundaries-first", lexicon_codes=None):
    """(matrix, index): matrix[i, q] is the id of field fields[i] (a column, through
    its chain of functions) at padded position q, where each sentence of the corpus
    (formats.Corpus) is padded with K boundary positions on both sides, and index[p]
    is the padded position of token p. token_ids(field, values) gives (ids, V) for
    distinct values of a field: vocabulary ids, -1 for unknown values.
    lexicon_codes(field, values, inverse, lengths) gives what a %dict or %gaz field
    reads: (code per token, string per code).

    Functions and vocabulary lookups run on the distinct values of a column, not on
    every token.

    Layouts of the ids (V values, boundary symbols _B-k and _B+k, one unknown):
      boundaries-first  _B-k: k-1, _B+k: K+k-1, unknown: 2K, value v: 2K+1+v.
                        A value keeps its id when the vocabulary grows, which is
                        what continuing a model on new data needs.
      values-first      value v: v, _B-k: V+k-1, _B+k: V+K+k-1, unknown: V+2K
                        (model files of seqbil 0.1).
    """
    lengths = corpus.lengths
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1] + 2 * K, out=starts[1:])
    token_starts = np.cumsum(lengths) - lengths
    index = np.repeat(starts + K - token_starts, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    matrix = np.empty((len(fields), int((lengths + 2 * K).sum())), dtype=np.int32)
    distinct = {}  # column -> (its distinct values, the position of each token's value among them)
    for i, f in enumerate(fields):
        if f.kind == "task":  # the sentence's task (multi-task models)
            values, inverse = corpus.task_values()
        else:
            if f.column not in distinct:
                distinct[f.column] = corpus.column(f.column, fold)
            values, inverse = distinct[f.column]
        if f.source:
            inverse, values = lexicon_codes(f, values, inverse, lengths)
        if f.chain:
            values = [apply_chain(f.chain, v) for v in values]
        local_ids, V = token_ids(f, values)
        value0, boundary0, unknown = (2 * K + 1, 0, 2 * K) if layout == "boundaries-first" else (0, V, V + 2 * K)
        # the id of every distinct value in the matrix, then one gather over the tokens
        row = matrix[i]
        row[index] = np.where(local_ids >= 0, local_ids + value0, unknown).astype(np.int32)[inverse]
        if f.kind == "at":  # every token reads the cell of one token of its sentence, or a boundary symbol
            row[index] = _at_rows(row[index], f.at, lengths, token_starts, K, boundary0)
        for k in range(1, K + 1):
            row[starts + K - k] = boundary0 + k - 1
            row[starts + K + lengths + k - 1] = boundary0 + K + k - 1
    return matrix, index


def _at_rows(ids, at, lengths, token_starts, K, boundary0):
    """The ids a field of kind at (a row counted from the sentence's ends) gives each
    token: those of the column at token at - 1 (at >= 0) or lengths + at (at < 0) of
    its sentence, as Wapiti counts them (pattern.c: pat_exec), or the boundary symbol
    of that token's distance from the sentence, K at most."""
    pos = np.full(len(lengths), at - 1, dtype=np.int64) if at >= 0 else lengths.astype(np.int64) + at
    inside = (pos >= 0) & (pos < lengths)
    before = np.minimum(np.maximum(-pos, 1), K)  # (the distance before the first token)
    after = np.minimum(np.maximum(pos - lengths + 1, 1), K)
    per_sentence = np.where(inside, 0, np.where(pos < 0, boundary0 + before - 1, boundary0 + K + after - 1))
    out = np.repeat(per_sentence, lengths).astype(np.int32)
    taken = np.repeat(inside, lengths)
    out[taken] = ids[np.repeat(token_starts + np.where(inside, pos, 0), lengths)[taken]]
    return out


def lexicon_codes(lexicons, cap, jackknife, field, values, inverse, lengths):
    """(code per token, string per code) of a %dict or %gaz field: where the entries
    of its lexicon cover each token. jackknife: {name: (folds, [Lexicon per fold])}
    for lexicons built from the sentences being encoded: sentence j, in fold j mod
    folds, is matched against the lexicon of the other folds."""
    P = int(lengths.sum())
    parts = (jackknife or {}).get(field.source)
    if parts is None:
        lex = lexicons[field.source]
        symbols = np.array([lex.symbols.get(v, 0) for v in values], dtype=np.int64)[inverse]
        codes = dictionaries.codes(lex.starts(symbols, lengths), P, field.kind, cap)
    else:
        folds, fold_lexicons = parts
        sentence_fold = np.arange(len(lengths)) % folds
        token_fold = np.repeat(sentence_fold, lengths)
        codes = np.zeros(P, dtype=np.int64)
        for k, lex in enumerate(fold_lexicons):
            mine = token_fold == k
            symbols = np.array([lex.symbols.get(v, 0) for v in values], dtype=np.int64)[inverse[mine]]
            codes[mine] = dictionaries.codes(lex.starts(symbols, lengths[sentence_fold == k]), len(symbols),
                                             field.kind, cap)
    return codes, dictionaries.value_strings(field.kind, cap)
