"""Tagging one block of input: its bytes in, the output's bytes out, by compiled code
(cython_ext/conll_block.pyx) where it applies, else by the format's reader and writer."""
import codecs
import io

import numpy as np

from .._kernels.conll_block import Vocab, char_block, split_block, write_block, write_chars
from ..errors import InputError
from ..features.dataset import Dataset
from ..features.functions import apply_chain
from ..formats.base import score_text
from .output import encode_text


class BlockTagger:
    """Tags a block: its bytes in, (output bytes, sentences) out. The same in this
    process and in the workers."""

    def __init__(self, model, name, encoding, nbest, confidence, marginals=False, read_encoding=None, force=False,
                 posterior=False):
        """encoding: the output's; read_encoding: the input's (default: the same);
        force: keep the labels the input gives (forced decoding); posterior: posterior
        decoding (Model.decode_posterior)."""
        self.model, self.name, self.encoding = model, name, encoding
        self.read_encoding = read_encoding or encoding
        self.nbest, self.confidence, self.marginals = nbest, confidence, marginals
        self.utf8 = self.read_encoding.replace("-", "").lower().startswith("utf8")
        # (not utf-8-sig: decoding each line, the reference drops a BOM at every line's start;
        # the compiled paths read and write UTF-8)
        plain = codecs.lookup(self.read_encoding).name == "utf-8" and codecs.lookup(encoding).name == "utf-8"
        self.force, self.posterior = force, posterior
        # (forced decoding of a segmentation model reads the input's spaces: Model.encode)
        self.fast = None if posterior or force and model.format.sentence_per_line else \
            _fast_applies(model, plain, nbest, confidence, marginals)
        self._block = None  # the compiled CoNLL reader and writer, made on first use (in the process that tags)

    def __call__(self, block):
        raw, line, offset = block
        if offset == 0 and self.utf8 and raw.startswith(codecs.BOM_UTF8):  # as formats/textio.py reads a file
            raw, offset = raw[3:], 3
        self._check(raw, line, offset)
        if self.fast == "columns":
            done = self._tag_block(raw)
            if done is not None:
                return done
        elif self.fast == "chars":
            return self._tag_chars(raw)
        # An empty line in front: the reader drops a byte order mark only from its first
        # line, which a block after the first must not lose.
        try:
            sentences = list(self.model.format.read(io.BytesIO(b"\n" + raw), labeled=False, encoding=self.read_encoding,
                                                    keep_empty=True))
        except InputError as exc:
            raise InputError(self.name, exc.line and exc.line + line - 2, exc.message) from None
        if sentences and sentences[0].line == 1:  # segmentation: the empty line in front
            del sentences[0]
        return encode_text(self._text(sentences), self.encoding), len(sentences)

    def __getstate__(self):
        return {**self.__dict__, "_block": None}

    def warm(self):
        """Build what the compiled path makes on first use (vocabulary and key hash
        tables, character tables) now, so that forked workers share it."""
        if self.fast == "columns":
            self._tag_block(b"")
        elif self.fast == "chars":
            self._tag_chars(b"")

    def _tag_block(self, raw):
        """(output, sentences) of a block of CoNLL lines by the compiled reader and
        writer (cython_ext/conll_block.pyx), or None for input that formats/conll.py
        must read (and refuse, with file and line)."""
        model, index = self.model, self.model.index
        if self._block is None:
            vocabs = [Vocab([v.encode("utf-8") for v in index.fields[f].strings]) for f in index.field_list]
            columns = np.array([f.column for f in index.field_list], dtype=np.int32)
            labels = [y.encode("utf-8") for y in model.labels]
            fmt = model.format
            self._block = (vocabs, columns, labels, fmt.n_fields, fmt.label_index(),
                           Vocab(labels) if self.force else None)
        vocabs, columns, labels, n_fields, label_at, known_labels = self._block
        found = split_block(raw, n_fields, label_at, index.K, vocabs, columns, known_labels)
        if found is None:
            return None
        matrix, positions, seq_ptr, line_start, line_end, sep = found[:6]
        best = self._decode_fields(matrix, positions, seq_ptr, found[6] if self.force else None)
        return write_block(raw, seq_ptr, line_start, line_end, sep, best, labels), len(seq_ptr) - 1

    def _decode_fields(self, matrix, positions, seq_ptr, known=None):
        """The best label of every token of a field matrix (features/index.py:
        field_matrix), its keys looked up in the index's hash tables; known: the labels
        kept (forced decoding), -1 where free."""
        index = self.model.index
        parts = index.encode_fields(matrix, positions, hashed=True)
        return self.model.decode(Dataset(seq_ptr, np.full(len(positions), -1, dtype=np.int32), *parts), known)

    def _tag_chars(self, raw):
        """(output, lines) of a block of raw text for a segmentation model: the
        characters and their field ids as arrays, the field matrix, encoding, decoding
        and the segmented lines in compiled code; each distinct character's ids (the
        model's normalization and the templates' functions) computed once."""
        model, index = self.model, self.model.index
        if self._block is None:
            space = np.array([chr(c).isspace() for c in range(1 << 16)], dtype=np.uint8)
            labels = model.labels
            ends = np.array([y in ("E", "S") for y in labels], dtype=np.uint8)
            starts = np.array([y in ("B", "S") for y in labels], dtype=np.uint8)
            luts = [np.full(1 << 16, -2, dtype=np.int32) for _ in index.field_list]
            self._block = (space, ends, starts, luts, [{} for _ in index.field_list])
        space, ends, starts, luts, wide = self._block
        cps = np.frombuffer(raw.decode("utf-8").encode("utf-32-le"), dtype=np.uint32)
        values = np.empty((len(index.field_list), len(cps)), dtype=np.int32)
        narrow = cps < (1 << 16)
        every = bool(narrow.all())
        bmp = cps if every else np.where(narrow, cps, 0)  # (the others read from the dicts below)
        for f, field in enumerate(index.field_list):
            new = np.unique(bmp[luts[f][bmp] == -2])  # characters whose ids this process has not made yet
            if len(new):
                luts[f][new] = [self._char_id(field, int(c)) for c in new]
            ids = luts[f][bmp]
            if not every:  # characters beyond the BMP: a dict
                for i in np.flatnonzero(~narrow):
                    c = int(cps[i])
                    if c not in wide[f]:
                        wide[f][c] = self._char_id(field, c)
                    ids[i] = wide[f][c]
            values[f] = ids
        matrix, positions, seq_ptr, char_at, seq_line, lines = char_block(cps, space, values, index.K)
        best = self._decode_fields(matrix, positions, seq_ptr)
        out = write_chars(cps, char_at, seq_ptr, seq_line, lines, best, ends, starts)
        return out.tobytes().decode("utf-32-le").encode(self.encoding), lines

    def _char_id(self, field, c):
        """The id of a character in a field's vocabulary (-1: unknown), as
        features/index.py: field_matrix gives it: normalized, then the field's functions."""
        index = self.model.index
        value = chr(c)
        if index.fold is not None:
            value = index.fold(value)
        if field.chain:
            value = apply_chain(field.chain, value)
        return index.fields[field].index.get(value, -1)

    def _check(self, raw, line, offset):
        """The errors of formats/textio.py for a NUL byte or bytes the encoding cannot
        decode, with the line and byte offset in the whole input."""
        nul = raw.find(b"\0")
        try:
            raw.decode(self.read_encoding)
            bad = -1
        except UnicodeDecodeError as exc:
            bad = exc.start
        if nul < 0 and bad < 0:
            return
        nul_line = line + raw.count(b"\n", 0, nul) if nul >= 0 else float("inf")
        bad_line = line + raw.count(b"\n", 0, bad) if bad >= 0 else float("inf")
        if nul_line <= bad_line:  # a line is checked for NUL bytes before it is decoded
            raise InputError(self.name, nul_line, f"NUL byte at byte offset {offset + nul}: not a text file?")
        raise InputError(self.name, bad_line, f"invalid {self.read_encoding} at byte offset {offset + bad} "
                         f"(byte 0x{raw[bad]:02x}); give the right --encoding")

    def _text(self, sentences):
        model, fmt, name = self.model, self.model.format, self.name
        if self.posterior:
            found = model.predict_posterior(sentences, name, self.force)
            if self.marginals:
                return "".join(fmt.write_marginals(s, [(tags, p)], P.tolist(), model.labels, self.marginals == "all",
                                                   None) for s, (tags, p, P) in zip(sentences, found))
            return "".join(fmt.write(s, tags) if len(s) else "\n" for s, (tags, _, _) in zip(sentences, found))
        if self.marginals:
            return self._probabilities(sentences)
        notes = fmt.notes
        force = self.force
        if self.nbest:  # an empty line (segmentation) has one labeling, the empty one
            found = model.predict_nbest(sentences, self.nbest, name, force)
            return "".join(f"{notes}{rank} {score_text(score)}\n" + fmt.write(s, tags)
                           for s, paths in zip(sentences, found) for rank, (tags, score) in enumerate(paths))
        if self.confidence:
            parts = []
            for s, (tags, margins, margin) in zip(sentences, model.predict_confidence(sentences, name, force)):
                parts.append(f"{notes}confidence {score_text(margin)}\n" + fmt.write(s, fmt.with_margins(tags, margins)))
            return "".join(parts)
        nonempty = [s for s in sentences if len(s)]
        tags = iter(model.predict(nonempty, name, force) if nonempty else [])
        return "".join(fmt.write(s, next(tags)) if len(s) else "\n" for s in sentences)

    def _probabilities(self, sentences):
        """The layout of --marginals and --all-marginals (see tag_file), with --nbest too."""
        model, fmt, every = self.model, self.model.format, self.marginals == "all"
        if self.nbest:
            found = model.predict_nbest_marginals(sentences, self.nbest, self.name, self.force)
        else:
            found = [([(tags, p)], P) for tags, p, P, _ in model.predict_marginals(sentences, self.name, self.force)]
        return "".join(fmt.write_marginals(s, paths, P.tolist(), model.labels, every, self.nbest)
                       for s, (paths, P) in zip(sentences, found))


def _fast_applies(model, utf8, nbest, confidence, marginals):
    """Whether blocks of input can go through compiled code (cython_ext/conll_block.pyx):
    one label per token, UTF-8 text, a model of the current index layout whose templates
    read columns (no dictionaries, vectors, structure or tasks); for CoNLL models, plain
    columns as the model reads them (no functions, no normalization), for segmentation
    models any function of a character. Returns "columns", "chars" or None."""
    index = model.index
    if not (utf8 and not nbest and not confidence and not marginals and not model.tasks and
            index.layout == "boundaries-first" and index.vectors is None and index.structure is None and
            not index.lexicons and not model.templates.items and index.field_list and
            all(f.kind == "" and not f.source for f in index.field_list)):
        return None
    return model.format.compiled_block(index)
