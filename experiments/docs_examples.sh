#!/usr/bin/env bash
# The examples of README.md and docs/ that need a corpus (marked needs=CORPUS): each
# such block run in a folder whose data/ holds the corpora of data_scripts/.
NAME=docs_examples
USAGE="Installs the corpora the examples name (data_scripts/, into --data) and runs every
block of README.md and docs/ marked <!-- example: needs=CORPUS -->, page by page, each
page in a folder of its own with data/ pointing to the corpora and links to the checkout's
script folders; the tests run the other blocks on the bundled samples. The blocks of
docs/papers.md run every experiment script in full: hours. Writes the count of examples
run to OUT/docs_examples.txt."
source "$(dirname "$0")/common.sh"
parse_options "$@"

if [ "$QUICK" = 1 ]; then
    echo "$NAME: --quick: the blocks need the real corpora; checking their commands only"
    "$PY" -m pytest -q "$ROOT/tests/test_docs.py" -k needing
    exit
fi
need_data conll2000 get_conll2000.sh
need_data sighan2005 get_sighan2005.sh
need_data cws-more get_cws_more.sh
need_data unlabeled get_unlabeled.sh
"$PY" "$EXP/lib/doc_examples.py" --needs --data "$DATA" | tee "$OUT/docs_examples.txt"
