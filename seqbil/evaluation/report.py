"""Reports of the scorers: conlleval's and the SIGHAN scorer's own text layouts."""
from __future__ import annotations

def format_report(scores: dict, kind: str | None = None) -> str:
    """Human-readable table of ``chunk_scores`` (kind ``"chunk"``) or ``segment_scores`` (``"segment"``) output.

    ``"chunk"`` prints conlleval's own layout (same ``printf`` formats, so the text matches the
    script's output line for line, except that conlleval prints the line of the empty type ``''``
    twice when it occurs in both gold and prediction); ``"segment"`` prints the SIGHAN ``score`` summary lines, with
    rates as fractions to three decimals like the script (``--`` when a rate is undefined).
    """
    kind = kind or scores["metric"]
    if kind == "accuracy":
        return "accuracy: %6.2f%% (%d tokens)\n" % (scores["accuracy"], scores.get("tokens", 0))
    if kind == "chunk":
        s = scores
        lines = [f"processed {s['tokens']} tokens with {s['phrases_gold']} phrases; "
                 f"found: {s['phrases_pred']} phrases; correct: {s['correct']}."]
        if s["tokens"] > 0:
            lines.append("accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f"
                         % (s["accuracy"], s["precision"], s["recall"], s["f1"]))
        for t, v in sorted(s["per_type"].items()):
            lines.append("%17s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d"
                         % (t, v["precision"], v["recall"], v["f1"], v["pred"]))
        return "\n".join(lines) + "\n"
    if kind == "segment":
        s = scores
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
    raise ValueError(f"kind must be 'chunk' or 'segment', not {kind!r}")
