#!/usr/bin/env python3
"""Install the corpora of the seqbil benchmarks into data/ (see README.md here): the command
line behind get_conll2000.sh, get_sighan2005.sh, get_cws_more.sh, get_unlabeled.sh, get_pos_more.sh
and get_heldout.sh, which run `python3 corpora.py COMMAND [--from PATH] [--out DIR] [--only WHICH] [--force]`.  COMMANDS
registers each command with its corpus family's module in corpus_lib/; this file parses the
command line (exit status 2 when it is bad) and runs the family's install function (0 done or
already up to date, 1 a corpus could not be obtained).  Standard library only."""
import argparse
import os
import signal
import sys
from typing import Callable, NamedTuple

# corpus_lib/ lies beside this file, which is run as a script from any directory or loaded by path
_HERE = os.path.dirname(os.path.realpath(__file__))
if sys.path[:1] != [_HERE]:
    sys.path.insert(0, _HERE)

from corpus_lib import common, conll2000, cws_more, heldout, pos_more, sighan, unlabeled  # noqa: E402


class Only(NamedTuple):
    """What --only takes: its words in messages, whether a comma-separated list of them, the values."""
    choices: str
    listed: bool
    valid: tuple


class Command(NamedTuple):
    """A command: the program name its messages begin with, its --help text, the function that
    installs it, called as install(out=, source=, force=) plus only= if it has --only (ONLY: what
    --only takes, None if it has none), and what --from names in its error message."""
    prog: str
    usage: str
    install: Callable
    only: Only | None = None
    from_takes: str = "a directory"


# The commands, in the order argparse lists them
COMMANDS = {
    "conll2000": Command(conll2000.CONLL_PROG, conll2000.CONLL_USAGE, conll2000.install_conll2000),
    "sighan2005": Command(sighan.SIGHAN_PROG, sighan.SIGHAN_USAGE, sighan.install_sighan,
                          Only("sighan2005 or sighan2008-sxu", False, sighan.ONLY_CHOICES), "a path"),
    "cws-more": Command(cws_more.CWS_PROG, cws_more.CWS_USAGE, cws_more.install_cws_more,
                        Only("udc, wtb or zx", True, cws_more.CWS_CORPORA)),
    "unlabeled": Command(unlabeled.UNLAB_PROG, unlabeled.UNLAB_USAGE, unlabeled.install_unlabeled,
                         Only("en, zh, abc, brown, inaugural, movie_reviews, state_union or webtext", True,
                              unlabeled.UNLAB_ONLY)),
    "pos-more": Command(pos_more.POS_PROG, pos_more.POS_USAGE, pos_more.install_pos_more,
                        Only(f"{', '.join(pos_more.POS_CORPORA[:-1])} or {pos_more.POS_CORPORA[-1]}", True,
                             pos_more.POS_CORPORA)),
    "heldout": Command(heldout.HELD_PROG, heldout.HELD_USAGE, heldout.install_heldout,
                       Only(f"{', '.join(heldout.HELDOUT_CORPORA[:-1])} or {heldout.HELDOUT_CORPORA[-1]}", True,
                            heldout.HELDOUT_CORPORA)),
}

TOP_USAGE = """\
Usage: python3 data_scripts/corpora.py conll2000  [--from DIR]  [--out DIR] [--force]
       python3 data_scripts/corpora.py sighan2005 [--from PATH] [--out DIR] [--only WHICH] [--force]
       python3 data_scripts/corpora.py cws-more   [--from DIR]  [--out DIR] [--only WHICH] [--force]
       python3 data_scripts/corpora.py unlabeled  [--from DIR]  [--out DIR] [--only WHICH] [--force]
       python3 data_scripts/corpora.py pos-more   [--from DIR]  [--out DIR] [--only WHICH] [--force]
       python3 data_scripts/corpora.py heldout    [--from DIR]  [--out DIR] [--only WHICH] [--force]
Installs the corpora of the seqbil benchmarks; COMMAND --help tells more.
"""


class _UsageError(Exception):
    def __init__(self, prog, message):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse that never exits by itself: main() reports errors in the scripts' words."""

    def error(self, message):
        raise _UsageError(self.prog, f"{message} (try --help)")


_MISSING = object()  # an option given without its value


def _parser():
    top = _Parser(prog="corpora.py", add_help=False, allow_abbrev=False)
    commands = top.add_subparsers(dest="command", parser_class=_Parser)
    for name, command in COMMANDS.items():
        p = commands.add_parser(name, prog=command.prog, add_help=False, allow_abbrev=False)
        p.add_argument("--from", dest="source", nargs="?", const=_MISSING)
        p.add_argument("--out", nargs="?", const=_MISSING)
        if command.only:
            p.add_argument("--only", nargs="?", const=_MISSING)
        p.add_argument("--force", action="store_true")
        p.add_argument("-h", "--help", action="store_true")
    return top


def _check_values(args):
    """The scripts' messages for options given without a value or with a wrong one."""
    command = COMMANDS[args.command]
    if args.source is _MISSING:
        return f"--from needs {command.from_takes} (try --help)"
    if args.out is _MISSING:
        return "--out needs a directory (try --help)"
    only = getattr(args, "only", None)
    if only is None:
        return None
    choices, listed, valid = command.only
    if only is _MISSING:
        return f"--only needs {choices}"
    if not all(name in valid for name in (only.split(",") if listed else [only])):
        return f"--only takes {choices}{' (or a comma-separated list of them)' if listed else ''}, not '{only}'"
    return None


def main(argv=None):
    """Run a command line (without the program name); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args, unknown = _parser().parse_known_args(argv)
    except _UsageError as e:
        common.error(e.prog, str(e))
        return 2
    if args.command is None:
        helped = any(a in ("-h", "--help") for a in argv)
        print(TOP_USAGE, end="", file=sys.stdout if helped else sys.stderr)
        return 0 if helped else 2
    command = COMMANDS[args.command]
    if args.help:
        print(command.usage, end="")
        return 0
    if unknown:
        common.error(command.prog, f"unknown argument: {unknown[0]} (try --help)")
        return 2
    if problem := _check_values(args):
        common.error(command.prog, problem)
        return 2
    only = {"only": args.only} if command.only else {}
    try:
        return command.install(out=args.out, source=args.source, force=args.force, **only)
    except KeyboardInterrupt:
        return 130
    except _Signalled as e:
        return 128 + e.signum
    except BrokenPipeError:
        # nobody reads our messages any more; let the interpreter exit quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


class _Signalled(BaseException):
    """SIGTERM or SIGHUP arrived: unwind (removing temporary files) and exit with 128 + signum."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_signalled(signum, frame):
    raise _Signalled(signum)


if __name__ == "__main__":
    for _sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(_sig, _raise_signalled)
    sys.exit(main())
