"""The corpus families that corpora.py installs, one module each (conll2000, sighan, cws_more,
unlabeled), and what they share (common)."""
