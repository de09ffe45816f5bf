"""Reading the corpora of a run: files or sentences in memory into a Corpus, the
tasks' corpora joined, their provenance records; the word vectors and the structure
that the templates read."""
import hashlib
import json
import os

import numpy as np

from .. import params
from ..errors import ConfigError, InputError
from ..features.index import normalizer
from ..features.structure import Structure, StructureFeatures
from ..features.vectors import VectorFeatures, VectorTable, embedding_table
from ..features.vectors import parse_specs as vector_specs
from ..features.templates import EMB
from ..formats import read_corpus
from ..formats.sentence import Corpus
from ..formats.textio import read_lines, sha256_file


def file_record(path, sentences):
    """Provenance of a corpus: its name, sha256, and what was read from it (sentences:
    a list of Sentence, or for a file also its Corpus)."""
    tokens = sentences.n_tokens if isinstance(sentences, Corpus) else int(sum(map(len, sentences)))
    record = {"path": str(path), "sentences": len(sentences), "tokens": tokens}
    if isinstance(path, str) and path.startswith("<"):
        h = hashlib.sha256()
        if isinstance(sentences, Corpus):  # (a part of a file held out from: its arrays)
            for values, ids in zip(sentences.values + [sentences.label_values], sentences.ids + [sentences.label_ids]):
                h.update(json.dumps(values, ensure_ascii=False).encode("utf-8"))
                h.update(b"-" if ids is None else np.ascontiguousarray(ids).tobytes())
            h.update(np.ascontiguousarray(sentences.lengths).tobytes())
        elif len(sentences) and sentences[0].items is not None:  # tokens as attributes: their flattened arrays
            corpus = Corpus.of(sentences)
            h.update("\0".join(corpus.items.names).encode("utf-8", "surrogateescape"))
            for a in (corpus.lengths, corpus.items.ptr, corpus.items.ids, corpus.items.vals, corpus.label_ids):
                h.update(b"-" if a is None else np.ascontiguousarray(a).tobytes())
            h.update(json.dumps(corpus.label_values, ensure_ascii=False).encode("utf-8"))
        else:
            for s in sentences:
                h.update(json.dumps([s.columns, s.labels], ensure_ascii=False).encode("utf-8"))
        record["sha256"] = h.hexdigest()
    else:
        record["sha256"] = sha256_file(path)
    return record


def read_sentences(fmt, source, encoding):
    """(sentences, name) of a path or of sentences already in memory (a list of
    Sentence, or a Corpus)."""
    if isinstance(source, Corpus):
        return source, "<memory>"
    if isinstance(source, list):
        if not source:
            raise InputError("<memory>", 0, "no sentences")
        return source, "<memory>"
    return read_corpus(fmt, source, encoding), str(source)


def read_tasks(fmt, tasks, encoding):
    """(the tasks' training corpora joined into one, each sentence in its task;
    a name for messages; each task's training-file record)."""
    corpora, records, labels = [], {}, {}
    for name, path, _ in tasks:
        corpus, _ = corpus_of(fmt, path, encoding)
        corpora.append(corpus)
        records[name] = file_record(path, corpus)
        labels[name] = sorted(corpus.label_values)
    joined = Corpus.joined(corpora, [name for name, _, _ in tasks])
    # where the tasks' label sets differ (CoNLL), each task tags with its own labels only
    if fmt.labels or all(v == labels[tasks[0][0]] for v in labels.values()):
        labels = {}
    return joined, "; ".join(f"{name}={path}" for name, path, _ in tasks), records, labels


def corpus_of(fmt, source, encoding):
    """(Corpus, name) of a path or of sentences already in memory. A file's sentences
    go into the corpus as they are read: they are never all in memory as strings."""
    if isinstance(source, Corpus):
        return source, "<memory>"
    if isinstance(source, list):
        corpus, name = Corpus.of(read_sentences(fmt, source, encoding)[0]), "<memory>"
    else:
        corpus, name = Corpus.of(fmt.read(source, labeled=True, encoding=encoding)), str(source)
        if not len(corpus):
            raise InputError(name, 0, "no sentences in file")
    fmt.check_training(corpus, name)
    return corpus, name


def partial_segments(fmt, source, settings):
    """(Corpus, name) of segmented text read as partial labels (SighanFormat.read_partial:
    its spaces known boundaries, the words of [corpus] partial_words known words, the
    rest unknown): a file, or sentences in memory (strings, or lists of words; a
    Corpus, a part of one read so, as it is)."""
    if isinstance(source, Corpus):
        return source, "<memory>"
    words = set()
    if settings.partial_words:
        words = {w for _, line in read_lines(settings.partial_words, settings.encoding) for w in line.split()}
    cap = max(map(len, words), default=0)
    if isinstance(source, list):
        lines, name = [(n, s if isinstance(s, str) else " ".join(s)) for n, s in enumerate(source, 1)], "<memory>"
    else:
        lines, name = read_lines(source, settings.encoding), str(source)
    sentences = list(fmt.read_partial(lines, words, cap))
    if not sentences:
        raise InputError(name, 0, "no sentences in file")
    return Corpus.of(sentences), name


def vector_features(settings, templates, tokens, base, encoding):
    """(what each table is, the %vec templates' features): the tables named in
    [features] vectors, cut to the rows the model keeps; a continued model keeps its own."""
    if not templates.vector_templates:
        return {}, None
    if base is not None:
        return {name: {"source": "the model continued"} for name in templates.vectors}, base.index.vectors
    origin = settings.origin("vectors")
    files = vector_specs(settings.vectors, origin)
    info, full, fold = {}, {}, normalizer(settings.normalize)
    if EMB in templates.vectors:  # %emb: every training word gets a row
        where = settings.origin("embeddings")
        if not settings.embeddings:
            raise ConfigError(where, 0, "the templates read %emb, but [features] embeddings names no vectors "
                              "(a file, or random:K)")
        columns = {t.refs[0][1].column for t in templates.vector_templates if t.refs[0][1].source == EMB}
        words = {fold(v) if fold else v for c in columns for v in tokens.column(c)[0]}
        full[EMB], found = embedding_table(settings.embeddings, words, settings.embedding_vocab,
                                           settings.seed, encoding, where)
        spec = settings.embeddings
        info[EMB] = {"source": spec, "dim": full[EMB].dim, "training_words": len(words)}
        if not spec.startswith("random:"):
            info[EMB].update(sha256=sha256_file(spec), training_words_in_file=found)
    missing = [n for n in templates.vectors if n not in files and n != EMB]
    if missing:
        raise ConfigError(origin, 0, f"the templates read vectors {missing[0]!r}, but [features] vectors does not "
                          f"name them: add \"{missing[0]}=FILE\"")
    for name in templates.vectors:
        if name != EMB:
            full[name] = VectorTable.read(files[name], encoding)
            info[name] = {"source": files[name], "sha256": sha256_file(files[name]), "dim": full[name].dim,
                          "rows_in_file": len(full[name])}
    return info, VectorFeatures.for_training(templates.vector_templates, full, tokens, fold,
                                       settings.vector_unknown, settings.vector_scale, settings.vector_rows)


def structure_features(settings, fmt, base, tasks):
    """(its record, StructureFeatures) of [features] structure; a continued model keeps
    its own."""
    if base is not None and base.index.structure is not None:
        if settings.structure:
            raise ConfigError(settings.origin("structure"), 0, "the continued model has a structure "
                              "of its own; it keeps it (leave out structure)")
        return {"source": "the model continued"}, base.index.structure
    if not settings.structure:
        return None, None
    origin = settings.origin("structure")
    if tasks:
        raise ConfigError(origin, 0, "a structure (structure = FILE) is not supported in multi-task training")
    if base is not None:
        raise ConfigError(origin, 0, "the continued model was trained without a structure; one cannot be added")
    window = params.offsets(settings.structure_window)  # (checked with the other settings)
    unit = fmt.unit
    parts, records = [], []
    for path in settings.structure:
        if not os.path.isfile(path):
            raise ConfigError(origin, 0, f"[features] structure: no such file {path!r}")
        part = Structure.load(path)
        if part.unit != unit:
            raise ConfigError(origin, 0, f"{path}: a structure of {part.unit}s, for a corpus of {unit}s "
                              f"(format {fmt.name}); learn one with seqbil aso --config for this format")
        parts.append(part)
        records.append({"path": os.path.abspath(path), "sha256": sha256_file(path), "bytes": os.path.getsize(path)})
    structure = Structure.merged(parts, records)
    info = {**(records[0] if len(records) == 1 else {"files": records}), "window": window,
            "scale": settings.structure_scale, "dim": structure.dim, "splits": [s.spec() for s in structure.splits],
            "provenance": structure.provenance}
    return info, StructureFeatures(structure, window, settings.structure_scale)
