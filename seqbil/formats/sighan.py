"""SIGHAN segmented text: one sentence per line, words separated by spaces, read as
characters tagged B/I/E/S (begin, inside, end of a word; single-character word)."""
import numpy as np

from ..errors import InputError, SeqbilError
from .base import Format, prob_text, register
from .sentence import Sentence
from .textio import read_lines

# a segmented corpus has words: below this share of lines (of two characters or more) with
# two words or more, the file is raw text or a word list, and a segmenter trained on it
# would never split
MIN_SEGMENTED = 0.05


# --- BIES encoding of segmented text ------------------------------------------

def bies_tags(words):
    """Character tags of a word sequence: S for one-character words, else B I* E."""
    tags = []
    for w in words:
        tags.extend(("S",) if len(w) == 1 else ("B",) + ("I",) * (len(w) - 2) + ("E",))
    return tags


def words_from_tags(chars, tags, breaks=()):
    """Group characters into words. A word ends after E or S, or before B or S, so
    that any tag sequence (even an ill-formed prediction) gives a segmentation; and
    before each position in breaks (where raw input had white space)."""
    words, start, breaks = [], 0, set(breaks)
    for i in range(len(chars)):
        if i + 1 == len(chars) or tags[i] in ("E", "S") or tags[i + 1] in ("B", "S") or i + 1 in breaks:
            words.append("".join(chars[start:i + 1]))
            start = i + 1
    return words


def split_raw(text):
    """(characters, breaks) of a line of raw text: its characters without white space,
    and the positions of those that white space preceded (the first excepted)."""
    chars, breaks = [], []
    for word in text.split():  # str.split() also splits on U+3000
        if chars:
            breaks.append(len(chars))
        chars.extend(word)
    return chars, tuple(breaks)


def partial_tags(chars, breaks, words=frozenset(), cap=0):
    """The partial labels (formats/partial.py) of a line of text segmented in part: its
    spaces are known word boundaries (breaks); the inner boundaries of the words of
    `words` matched in it (the longest, up to cap characters, first from the left, none
    across a space) are known not to be; the other gaps are unknown. Each character's
    label is then the B, I, E and S its gaps allow: one of them, a set (B|S), or ?."""
    n = len(chars)
    gap = [None] * (n + 1)  # gap[i]: before character i, True a boundary, False none, None unknown
    gap[0] = gap[n] = True
    for b in breaks:
        gap[b] = True
    i = 0
    while i < n:
        for length in range(min(cap, n - i), 1, -1):
            if not any(gap[k] for k in range(i + 1, i + length)) and "".join(chars[i:i + length]) in words:
                for k in range(i + 1, i + length):
                    gap[k] = False
                i += length - 1
                break
        i += 1
    out = []
    for i in range(n):
        tags = [t for t, begins, ends in (("B", True, False), ("I", False, False), ("E", False, True),
                                          ("S", True, True)) if gap[i] in (None, begins) and gap[i + 1] in (None, ends)]
        out.append("?" if len(tags) == 4 else "|".join(tags))
    return out


@register
class SighanFormat(Format):
    """One sentence per line, words separated by whitespace (ASCII or U+3000)."""

    name = "sighan"
    labels = ("B", "I", "E", "S")
    unit = "char"
    segments = True
    sentence_per_line = True

    def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
        """Segmented sentences (labeled), or raw text, whose white space separates words
        that the output keeps apart (Sentence.breaks)."""
        for number, text in read_lines(source, encoding):
            if labeled:
                words = text.split()  # str.split() also splits on U+3000
                chars, tags, breaks = list("".join(words)), bies_tags(words), ()
            else:
                (chars, breaks), tags = split_raw(text), None
            if not chars:
                if keep_empty:
                    yield Sentence([[]], [] if labeled else None, number)
                continue
            yield Sentence([chars], tags, number, breaks=breaks)

    def known_of(self, sentences, labels):
        """The word boundaries raw input gives by its white space, for forced decoding: a
        character before a space ends a word (E or S), one after it begins one (B or S),
        one between two both (S); the others are free. None when no sentence has a space."""
        if not any(s.breaks for s in sentences):
            return None
        ids = {y: i for i, y in enumerate(labels)}
        sets = np.zeros((2, len(labels)), dtype=np.uint8)
        sets[0, [ids["E"], ids["S"]]] = 1  # -2: a word ends here
        sets[1, [ids["B"], ids["S"]]] = 1  # -3: a word begins here
        known = []
        for s in sentences:
            row = np.full(len(s), -1, dtype=np.int32)
            for b in s.breaks:
                row[b - 1] = ids["S"] if row[b - 1] == -3 else -2
                row[b] = -3
            known.append(row)
        known = np.concatenate(known) if known else np.zeros(0, np.int32)
        return np.ascontiguousarray(known), sets

    def read_partial(self, lines, words=frozenset(), cap=0):
        """Lines ((number, text) pairs) of text segmented in part, as sentences of
        partial labels (partial_tags): a space a known boundary, a word of `words` a
        known word inside, the rest unknown."""
        for number, text in lines:
            chars, breaks = split_raw(text)
            if chars:
                yield Sentence([chars], partial_tags(chars, breaks, words, cap), number)

    def check_training(self, corpus, name):
        """Refuse a training corpus that is not segmented: unsegmented text (or a word
        list) reads as sentences of one word each."""
        if not len(corpus):
            return
        starts = np.isin(corpus.label_ids, [i for i, y in enumerate(corpus.label_values) if y in ("B", "S")])
        offsets = np.concatenate([[0], np.cumsum(corpus.lengths)[:-1]])
        words = np.add.reduceat(starts.astype(np.int64), offsets) if len(starts) else np.zeros(0, np.int64)
        long = corpus.lengths >= 2
        several = int((words[long] >= 2).sum())
        if long.any() and several < MIN_SEGMENTED * long.sum():
            first = "".join(corpus.values[0][i] for i in corpus.ids[0][:min(int(corpus.lengths[0]), 20)])
            raise InputError(name, 0, f"only {several} of its {int(long.sum())} lines hold two words or more (the "
                             f"first: {first!r}): this is unsegmented text or a word list, not a segmented "
                             f"corpus; a segmenter learns from sentences whose words are separated by spaces")

    def write(self, sentence, tags):
        return "  ".join(self.words(sentence, tags)) + "\n"

    def words(self, sentence, tags):
        return words_from_tags(sentence.columns[0], tags, sentence.breaks)

    def example(self):
        return "x"

    def compiled_block(self, index):
        """The characters as code points, any function of a character computed once per
        distinct character."""
        return "chars"

    def sentence(self, tokens, number):
        """The Sentence of a string (its white space left out) or a list of characters."""
        chars = [c for c in tokens if not c.isspace()] if isinstance(tokens, str) else list(tokens)
        if not all(isinstance(c, str) and len(c) == 1 for c in chars):
            raise SeqbilError(f"sentence {number}: a segmentation model tags characters")
        return Sentence([chars], None, number)

    def annotated(self, sentences, name):
        """Segmented sentences given in Python: each a string of words or a list of words."""
        out = []
        for number, s in enumerate(sentences, 1):
            words = s.split() if isinstance(s, str) else list(s)
            if not all(isinstance(w, str) and w for w in words):
                raise InputError(f"<{name} sentence {number}>", 0, "a segmented sentence is a string of words or a "
                                 "list of words")
            if words:
                out.append(Sentence([list("".join(words))], bies_tags(words), number))
        return out

    def same_sentence(self, gold, pred):
        return len(gold) == len(pred) and gold.columns == pred.columns

    def write_marginals(self, sentence, paths, table, labels, every, nbest):
        """Per character, P(a word ends after it) = P(E) + P(S) (and with every, each
        label's), as comment lines before the segmented sentence."""
        index = {y: k for k, y in enumerate(labels)}
        notes = _line("boundary", (row[index["E"]] + row[index["S"]] for row in table))
        if every:
            notes += "".join(_line(y, (row[k] for row in table)) for k, y in enumerate(labels))
        parts = []
        for rank, (tags, p) in enumerate(paths):
            parts.append(f"# {rank} {prob_text(p)}\n" if nbest else f"# {prob_text(p)}\n")
            parts.append(notes + self.write(sentence, tags))
        return "".join(parts)


def _line(name, values):
    """`# NAME P1 P2 ...`: a segmentation model's per-character probabilities."""
    return " ".join(["#", name] + [prob_text(v) for v in values]) + "\n"
