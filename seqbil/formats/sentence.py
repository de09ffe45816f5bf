"""A sentence as read from a corpus: attribute columns, labels when known, and what
the writer needs to echo the input back with predictions."""
from dataclasses import dataclass, field


@dataclass
class Sentence:
    columns: list          # columns[c][i]: field c of token i (None for the label column)
    labels: list | None    # gold labels, or None when the input has none
    line: int              # line number of the first token, for messages
    rows: list = field(default_factory=list)  # CoNLL: the fields of each input line

    def __len__(self):
        return len(self.columns[0]) if self.columns else 0
