#!/usr/bin/env bash
# Install the SIGHAN 2005 word segmentation bakeoff data (icwb2-data) into data/sighan2005/
# and SIGHAN 2008 SXU into data/sighan2008-sxu/ (see --help).
# The work is done by corpora.py next to this script.
here=$(CDPATH='' cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd) || exit 1
command -v "${PYTHON:-python3}" >/dev/null 2>&1 ||
    { echo "get_sighan2005: error: ${PYTHON:-python3} not found (set PYTHON to a Python 3.11+ interpreter)" >&2; exit 1; }
exec "${PYTHON:-python3}" "$here/corpora.py" sighan2005 "$@"
