"""Functions of a cell value, written after a template macro: ``%x[0,0]|lower``,
``%x[0,0]|suffix:3``, ``%x[-1,0]|lower|shape``.

Each function maps a string to a string; a chain applies them left to right. They are
computed once per distinct value of a column in a corpus (features/fields.py), never
per token, so a template with functions costs little more to encode than a plain one.
Boundary symbols (rows outside the sentence) are not passed through functions.

To add one: a function of (value, arg) returning a string, decorated with
``@function(name, example, takes_arg)``; it is then part of the template grammar,
``seqbil train --help-templates`` and the model files that use it.
"""
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Function:
    name: str
    apply: object      # (value: str, arg: int | str | None) -> str
    takes_arg: bool    # a positive length, or with pattern a regular expression (Wapiti's subset)
    help: str
    example: tuple     # (input, output) or (input, arg, output)
    pattern: bool = False


FUNCTIONS = {}


def function(name, example, takes_arg=False, pattern=False):
    def register(fn):
        FUNCTIONS[name] = Function(name, fn, takes_arg or pattern, " ".join(fn.__doc__.split()), example, pattern)
        return fn
    return register


def _flag(x):
    return "1" if x else "0"


@function("lower", ("Madrid", "madrid"))
def _lower(v, _):
    """lower case"""
    return v.lower()


@function("upper", ("Madrid", "MADRID"))
def _upper(v, _):
    """upper case"""
    return v.upper()


@function("prefix", ("Madrid", 3, "Mad"), takes_arg=True)
def _prefix(v, n):
    """the first N characters (the whole value when shorter)"""
    return v[:n]


@function("suffix", ("Madrid", 3, "rid"), takes_arg=True)
def _suffix(v, n):
    """the last N characters (the whole value when shorter)"""
    return v[-n:]


def _shape_char(ch):
    if ch.isdigit():
        return "d"
    if ch.isalpha():
        return "X" if ch.isupper() else "x"
    return ch


@function("shape", ("Jan-2000", "Xxx-dddd"))
def _shape(v, _):
    """word shape: upper-case letters X, other letters x, digits d, other characters kept"""
    return "".join(map(_shape_char, v))


@function("shortshape", ("Jan-2000", "Xx-d"))
def _shortshape(v, _):
    """word shape with runs of the same symbol collapsed"""
    out = []
    for ch in map(_shape_char, v):
        if not out or out[-1] != ch:
            out.append(ch)
    return "".join(out)


@function("len", ("Madrid", "6"))
def _len(v, _):
    """length in characters"""
    return str(len(v))


@function("isupper", ("USA", "1"))
def _isupper(v, _):
    """1 if every cased character is upper case (and there is one), else 0"""
    return _flag(v.isupper())


@function("istitle", ("Madrid", "1"))
def _istitle(v, _):
    """1 if the value is title-cased (Madrid, New-York), else 0"""
    return _flag(v.istitle())


@function("isdigit", ("2000", "1"))
def _isdigit(v, _):
    """1 if every character is a digit, else 0"""
    return _flag(v.isdigit())


@function("hasdigit", ("A4", "1"))
def _hasdigit(v, _):
    """1 if some character is a digit, else 0"""
    return _flag(any(ch.isdigit() for ch in v))


@function("ispunct", ("--", "1"))
def _ispunct(v, _):
    """1 if every character is punctuation or a symbol (Unicode categories P*, S*), else 0"""
    return _flag(bool(v) and all(unicodedata.category(ch)[0] in "PS" for ch in v))


# Characters that segmenters treat apart from other Han characters: numerals, and the
# date and time words that follow numbers (2000年, 十二月, 3点).
_HAN_DIGITS = set("〇零一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟萬億")
_DATE_WORDS = set("年月日时分秒号点")


def char_type(ch):
    """digit, date, latin, punct, han or other, of one character after NFKC folding
    (so full-width and half-width forms are alike)."""
    ch = unicodedata.normalize("NFKC", ch)[:1] or ch
    if ch.isdigit() or ch in _HAN_DIGITS:
        return "digit"
    if ch in _DATE_WORDS:
        return "date"
    if ch.isascii() and ch.isalpha():
        return "latin"
    cat = unicodedata.category(ch)
    if cat[0] in "PS":
        return "punct"
    if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\U00020000" <= ch <= "\U0002ffff":
        return "han"
    return "other"


@function("chartype", ("２０００年", "digit-date"))
def _chartype(v, _):
    """character types (digit, date, latin, punct, han, other; NFKC-folded first), runs collapsed and joined by -"""
    out = []
    for t in map(char_type, v):
        if not out or out[-1] != t:
            out.append(t)
    return "-".join(out)


# Wapiti's pattern commands (its pattern.c), for its pattern files: %X, %t and %m read
# through these. Wapiti works on the bytes of the text in the C locale: a character class
# holds ASCII characters only, `.` takes one byte, and case is folded for A-Z alone; so
# do these, on the UTF-8 bytes (a match that cuts a character keeps its bytes escaped).


@function("asciilower", ("Madrid-É", "madrid-É"))
def _asciilower(v, _):
    """A-Z in lower case, every other character as it is (Wapiti's upper-case commands, %X)"""
    return v.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


@function("wtest", ("Madrid", "^\\u", "true"), pattern=True)
def _wtest(v, regex):
    """true if Wapiti's regular expression RE matches in the value, else false (Wapiti's %t)"""
    return "false" if wapiti_match(regex, v.encode("utf-8", "surrogateescape")) is None else "true"


@function("wmatch", ("Madrid", ".?.?$", "id"), pattern=True)
def _wmatch(v, regex):
    """the first match of Wapiti's regular expression RE in the value, or nothing (Wapiti's %m)"""
    found = wapiti_match(regex, v.encode("utf-8", "surrogateescape"))
    return "" if found is None else found.decode("utf-8", "backslashreplace")


_CLASSES = {
    "a": bytes.isalpha, "d": bytes.isdigit, "l": bytes.islower, "u": bytes.isupper, "w": bytes.isalnum,
    "s": lambda b: b in b" \t\n\v\f\r",
    "p": lambda b: 33 <= b[0] <= 126 and not b.isalnum(),
}


def _matches_one(re_, i, text, j):
    """Whether the regular expression's character at re_[i] (., \\x or a byte) matches
    text[j] (a byte string), as pattern.c: rex_matchit."""
    if j >= len(text):
        return False
    if re_[i] == ord("."):
        return True
    b = text[j:j + 1]
    if re_[i] == ord("\\") and i + 1 < len(re_):
        c = chr(re_[i + 1])
        if c.lower() in _CLASSES:
            found = _CLASSES[c.lower()](b)
            return not found if c.isupper() else found
        return re_[i + 1] == text[j]
    return re_[i] == text[j]


def _match_here(re_, i, text, j):
    """The end of a match of re_[i:] at text[j:], or -1 (pattern.c: rex_matchme, whose
    star tries the shortest repetition first)."""
    if i >= len(re_):
        return j
    if re_[i] == ord("$") and i + 1 == len(re_):
        return j if j == len(text) else -1
    if re_[i] in b"*?":
        raise ValueError(f"unescaped * or ? in the regular expression {re_.decode(errors='replace')!r}")
    nxt = i + 1 + (re_[i] == ord("\\") and i + 1 < len(re_))
    if nxt < len(re_) and re_[nxt] == ord("*"):
        while True:
            end = _match_here(re_, nxt + 1, text, j)
            if end >= 0:
                return end
            if not _matches_one(re_, i, text, j):
                return -1
            j += 1
    if nxt < len(re_) and re_[nxt] == ord("?"):
        if _matches_one(re_, i, text, j):
            end = _match_here(re_, nxt + 1, text, j + 1)
            if end >= 0:
                return end
        return _match_here(re_, nxt + 1, text, j)
    return _match_here(re_, nxt, text, j + 1) if _matches_one(re_, i, text, j) else -1


def wapiti_match(regex, text):
    """The first match (bytes) of Wapiti's regular expression in text (bytes), or None:
    the leftmost start, and there its first match in Wapiti's order of trying
    (pattern.c: rex_match). The subset: . any byte; \\d \\a \\w \\l \\u \\p \\s a class
    (upper case: its complement) or \\x the byte x; x* and x? after a character; ^ and $
    anchors."""
    re_ = regex.encode("utf-8") if isinstance(regex, str) else regex
    if re_[:1] == b"^":
        end = _match_here(re_, 1, text, 0)
        return None if end < 0 else text[:end]
    for start in range(len(text) + 1):
        end = _match_here(re_, 0, text, start)
        if end >= 0:
            return text[start:end]
    return None


def parse_chain(text):
    """((name, arg), ...) of a chain written as "|lower|suffix:3"; ValueError naming
    the first unknown function or bad argument."""
    chain = []
    for part in text.split("|")[1:]:
        name, _, arg = part.partition(":")
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise ValueError(f"unknown function {name!r} (known: {', '.join(sorted(FUNCTIONS))})")
        if fn.pattern:
            if not arg:
                raise ValueError(f"function {name} needs a regular expression, as in {name}:^\\u")
            chain.append((name, arg))
        elif fn.takes_arg:
            if not arg.isdigit() or int(arg) < 1:
                raise ValueError(f"function {name} needs a positive length, as in {name}:3")
            chain.append((name, int(arg)))
        elif arg:
            raise ValueError(f"function {name} takes no argument")
        else:
            chain.append((name, None))
    return tuple(chain)


def chain_text(chain):
    return "".join(f"|{name}" + (f":{arg}" if arg is not None else "") for name, arg in chain)


def apply_chain(chain, value):
    for name, arg in chain:
        value = FUNCTIONS[name].apply(value, arg)
    return value


def describe():
    """The functions, one line each with an example (for --help-templates)."""
    lines = []
    for fn in FUNCTIONS.values():
        if fn.takes_arg:
            given, arg, out = fn.example
            call = f"{fn.name}:RE" if fn.pattern else f"{fn.name}:N"
            ex = f"{given!r}|{fn.name}:{arg} -> {out!r}"
        else:
            given, out = fn.example
            call = fn.name
            ex = f"{given!r}|{fn.name} -> {out!r}"
        lines.append(f"  {call:<12} {fn.help}; {ex}")
    return "\n".join(lines)
