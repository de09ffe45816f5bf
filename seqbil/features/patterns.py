"""Wapiti's pattern files (its reader.c and pattern.c), read as seqbil templates.

A Wapiti pattern is a line whose first character gives its kind: `u` (0-order), `b`
(1st-order, on the label pair) or `*` (both), in either case; the rest is text with
commands `%x[ROW,COL]` (the cell), `%t[ROW,COL,"RE"]` (`true` if Wapiti's regular
expression matches in the cell, else `false`) and `%m[ROW,COL,"RE"]` (its first
match), a command in upper case folding A-Z of its result to lower case; ROW `@N`
counts from the sentence's first token (token N - 1, for N >= 0) or from its end
(N < 0), as seqbil's `%x[@N,C]` does. `#` starts a comment anywhere on a line.

A pattern becomes seqbil templates: `u` a U template, `b` a B template, `*` one of
each, its commands macros through the functions that compute Wapiti's commands
(features/functions.py: `%X` is `%x|asciilower`, `%t` `%x|wtest:RE`, `%m`
`%x|wmatch:RE`). Trained in seqbil, a pattern file's features are Wapiti's, but at
the rows outside the sentence, which seqbil keeps apart from every value as CRF++ does
(Wapiti reads them as `_x-1`, ...: its `%t` there is `false`).
"""
import re

from ..errors import ConfigError
from ..formats.textio import read_lines
from .functions import parse_chain
from .templates import parse_template, read_crfpp_templates

# a command as pattern.c reads it: "[" then (@)ROW "," COL, for t and m ,"RE", then "]"
COMMAND = re.compile(r'%([xXtTmM])\[(@?)\s*([-+]?\d+),\s*(\d+)(?:,"((?:[^"\\]|\\.)*)")?\]')
# what a function's argument may hold in a seqbil template (features/templates.py: _CHAIN)
_ARG = re.compile(r"[^|/%\s]+")
KINDS = "ub*"


def pattern_lines(lines):
    """(line number, pattern) of the lines of a Wapiti pattern file, as its reader takes
    them (rdr_loadpat): cut at the first #, trailing blanks dropped, blank lines
    skipped, the kind letter in lower case."""
    out = []
    for number, line in lines:
        line = line.split("#", 1)[0].rstrip()
        if line:
            out.append((number, line[0].lower() + line[1:]))
    return out


def is_pattern_file(lines):
    """Whether template lines are Wapiti's rather than CRF++'s: a line of kind `*` or
    written in lower case, or a command CRF++ does not have (CRF++'s lines are
    Wapiti's too, but for their reading of the rows outside the sentence)."""
    for _, line in lines:
        line = line.strip()
        if line and not line.startswith("#") and (line[0] in "*ub" or re.search(r"%[XtTmM]\[|%x\[@", line)):
            return True
    return False


def translate(pattern, source="<patterns>", line=0):
    """(templates, pieces, macros) of one Wapiti pattern (kind letter in lower case): the
    seqbil templates (a U, a B, or both for `*`), the literal pieces of the pattern
    between its commands, and each command's (row, column, function chain), a row
    counted from the sentence's ends written "@N"."""
    kind = pattern[0]
    if kind not in KINDS:
        raise ConfigError(source, line, f"Wapiti pattern {pattern!r}: unknown pattern type {kind!r} (u, b or *)")
    pieces, macros, body, last = [], [], [], 1
    for m in COMMAND.finditer(pattern, 1):
        letter, absolute, row, column, regex = m.groups()
        command = letter.lower()
        chain = ""
        if command in "tm":
            if regex is None or not _ARG.fullmatch(regex):
                raise ConfigError(source, line, f"Wapiti pattern {pattern!r}: the regular expression {regex!r} "
                                  "must be non-empty and hold no |, /, % or blank to be read in seqbil")
            chain = f"|{'wtest' if command == 't' else 'wmatch'}:{regex}"
        if letter.isupper():
            chain += "|asciilower"
        pieces.append(pattern[0 if not pieces else last:m.start()])  # (the observation starts with the kind)
        body += [pattern[last:m.start()], f"%x[{absolute}{int(row)},{int(column)}]{chain}"]
        macros.append((f"@{int(row)}" if absolute else int(row), int(column), parse_chain(chain)))
        last = m.end()
    pieces.append(pattern[0 if not pieces else last:])
    body.append(pattern[last:])
    if any("%" in p for p in body[::2]):
        raise ConfigError(source, line, f"Wapiti pattern {pattern!r}: a % that is no command of Wapiti's "
                          "(%x, %t, %m and their upper-case forms)")
    if any(re.match(r"\|[A-Za-z_]", p) for p in pieces[1:]):
        raise ConfigError(source, line, f"Wapiti pattern {pattern!r}: a | right after a command reads as a "
                          "function in seqbil")
    text = "".join(body)
    letters = {"u": "U", "b": "B", "*": "UB"}[kind]
    templates = []
    for letter in letters:
        t = parse_template(letter + text, source, line)
        if [(f"@{f.at}" if f.kind == "at" else r, f.column, f.chain) for r, f in t.refs] != macros:
            raise ConfigError(source, line, f"Wapiti pattern {pattern!r} reads otherwise in seqbil")
        templates.append(t)
    return templates, pieces, macros


def read_patterns(lines, source="<patterns>"):
    """The seqbil templates of a Wapiti pattern file's lines ((number, text) pairs)."""
    templates = []
    for number, pattern in pattern_lines(lines):
        templates += translate(pattern, source, number)[0]
    if not templates:
        raise ConfigError(source, 0, "no patterns in file")
    return templates


def read_template_file(path):
    """The templates of a template file: CRF++'s, or Wapiti's patterns, told apart by
    their lines (is_pattern_file)."""
    lines = list(read_lines(path))
    return read_patterns(lines, path) if is_pattern_file(lines) else read_crfpp_templates(lines, path)
