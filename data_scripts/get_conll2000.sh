#!/usr/bin/env bash
# Install the CoNLL-2000 chunking corpus into data/conll2000/ (see --help).
# The work is done by corpora.py next to this script.
here=$(CDPATH='' cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd) || exit 1
command -v "${PYTHON:-python3}" >/dev/null 2>&1 ||
    { echo "get_conll2000: error: ${PYTHON:-python3} not found (set PYTHON to a Python 3.11+ interpreter)" >&2; exit 1; }
exec "${PYTHON:-python3}" "$here/corpora.py" conll2000 "$@"
