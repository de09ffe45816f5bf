"""Reports of the scorers: conlleval's and the SIGHAN scorer's own text layouts, and a
per-label table for token accuracy."""
from __future__ import annotations


def _perl_pad(text: str, width: int) -> str:
    """Perl's ``printf "%17s"``: conlleval reads its input as bytes, so the width counts the
    bytes of the (UTF-8) text, not its characters."""
    return " " * max(0, width - len(text.encode("utf-8", "surrogatepass"))) + text


def _chunk_report(s: dict) -> str:
    """conlleval's summary, with the same ``printf`` formats, line for line."""
    lines = [f"processed {s['tokens']} tokens with {s['phrases_gold']} phrases; "
             f"found: {s['phrases_pred']} phrases; correct: {s['correct']}."]
    if s["tokens"] > 0:
        lines.append("accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f"
                     % (s["accuracy"], s["precision"], s["recall"], s["f1"]))
    for t, v in sorted(s["per_type"].items()):
        line = "%s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d" % (
            _perl_pad(t, 17), v["precision"], v["recall"], v["f1"], v["pred"])
        # conlleval de-duplicates the sorted gold and guessed type lists with
        # `not($lastType) or $lastType ne $i`; the empty type is false in Perl, so its line
        # is printed twice when it occurs in both.
        lines += [line] * (2 if t == "" and v["gold"] and v["pred"] else 1)
    return "\n".join(lines) + "\n"


def _accuracy_report(s: dict) -> str:
    """``accuracy: XX.XX% (N tokens)``, then one row per label with aligned columns."""
    lines = ["accuracy: %.2f%% (%d tokens)" % (s["accuracy"], s.get("tokens", 0)) if not s.get("partial") else
             "accuracy: %.2f%% (%d known tokens of %d)" % (s["accuracy"], s["known_tokens"], s["tokens"])]
    per_label = s.get("per_label") or {}
    if per_label:
        head = ("label", "count", "predicted", "correct", "precision", "recall", "F1")
        rows = [(str(y), str(v["count"]), str(v["predicted"]), str(v["correct"]),
                 "%.2f" % v["precision"], "%.2f" % v["recall"], "%.2f" % v["f1"])
                for y, v in per_label.items()]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        for r in [head, *rows]:
            cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
            lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _segment_report(s: dict) -> str:
    """The SIGHAN ``score`` summary lines, rates as fractions to three decimals like the
    script (``--`` when a rate is undefined)."""
    lines = [f"=== TOTAL TRUE WORD COUNT:\t{s['words_gold']}",
             f"=== TOTAL TEST WORD COUNT:\t{s['words_pred']}",
             "=== TOTAL TRUE WORDS RECALL:\t%.3f" % (s["recall"] / 100),
             "=== TOTAL TEST WORDS PRECISION:\t%.3f" % (s["precision"] / 100),
             "=== F MEASURE:\t%.3f" % (s["f1"] / 100)]
    if "oov_rate" in s:
        def rate(key: str, count: str) -> str:
            return "%.3f" % (s[key] / 100) if s.get(count, 1) > 0 else "--"
        lines += ["=== OOV Rate:\t%.3f" % (s["oov_rate"] / 100),
                  "=== OOV Recall Rate:\t" + rate("oov_recall", "oov_gold"),
                  "=== IV Recall Rate:\t" + rate("iv_recall", "iv_gold")]
    return "\n".join(lines) + "\n"


_REPORTS = {"chunk": _chunk_report, "accuracy": _accuracy_report, "segment": _segment_report}


def format_report(result: dict, kind: str | None = None) -> str:
    """The text report of a ``score`` result: for chunk, conlleval's summary lines (byte for
    byte, so scripts that parse conlleval's output can read it); for segment, the SIGHAN
    scorer's; for accuracy, the accuracy line and a per-label table.

    kind: the metric, by default ``result["metric"]``; give it for the bare dicts of
    ``chunk_scores`` (``"chunk"``) or ``segment_scores`` (``"segment"``)."""
    kind = kind or result.get("metric")
    if kind not in _REPORTS:
        raise ValueError(f"kind must be one of {', '.join(_REPORTS)}, not {kind!r}")
    return _REPORTS[kind](result)
