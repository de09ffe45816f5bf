"""SIGHAN segmented text: one sentence per line, words separated by spaces, read as
characters tagged B/I/E/S (begin, inside, end of a word; single-character word)."""
from .sentence import Sentence
from .textio import read_lines


# --- BIES encoding of segmented text ------------------------------------------

def bies_tags(words):
    """Character tags of a word sequence: S for one-character words, else B I* E."""
    tags = []
    for w in words:
        tags.extend(("S",) if len(w) == 1 else ("B",) + ("I",) * (len(w) - 2) + ("E",))
    return tags


def words_from_tags(chars, tags):
    """Group characters into words. A word ends after E or S, or before B or S, so
    that any tag sequence (even an ill-formed prediction) gives a segmentation."""
    words, start = [], 0
    for i in range(len(chars)):
        if i + 1 == len(chars) or tags[i] in ("E", "S") or tags[i + 1] in ("B", "S"):
            words.append("".join(chars[start:i + 1]))
            start = i + 1
    return words


class SighanFormat:
    """One sentence per line, words separated by whitespace (ASCII or U+3000)."""

    name = "sighan"
    labels = ("B", "I", "E", "S")
    n_fields = 1
    label_column = None

    def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
        """Segmented sentences (labeled) or raw text whose whitespace is ignored."""
        for number, text in read_lines(source, encoding):
            words = text.split()  # str.split() also splits on U+3000
            if not words:
                if keep_empty:
                    yield Sentence([[]], [] if labeled else None, number)
                continue
            chars = list("".join(words))
            yield Sentence([chars], bies_tags(words) if labeled else None, number)

    def write(self, sentence, tags):
        return "  ".join(words_from_tags(sentence.columns[0], tags)) + "\n"

    def words(self, sentence, tags):
        return words_from_tags(sentence.columns[0], tags)
