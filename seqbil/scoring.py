"""Which scores a corpus gets, and computing them from sentences and predictions."""
from .errors import InputError
from .evaluate import chunk_scores, segment_scores, token_accuracy


def evaluation_kind(format_name, labels, requested="auto"):
    if requested != "auto":
        return requested
    if format_name == "sighan":
        return "segment"
    if any(label[:2] in ("B-", "I-", "E-", "S-") for label in labels):
        return "chunk"
    return "accuracy"


def score(fmt, kind, gold_labels, pred_labels, sentences=None, vocabulary=None):
    """Scores of predictions against gold label sequences; for segmentation the
    sentences give the characters and vocabulary the training words (OOV figures)."""
    result = {"kind": kind, "sentences": len(gold_labels), "accuracy": token_accuracy(gold_labels, pred_labels)}
    if kind == "chunk":
        result.update(chunk_scores(gold_labels, pred_labels))
    elif kind == "segment":
        gold = [fmt.words(s, g) for s, g in zip(sentences, gold_labels)]
        pred = [fmt.words(s, p) for s, p in zip(sentences, pred_labels)]
        result.update(segment_scores(gold, pred, vocabulary))
    return result


def headline(result):
    """The one number shown on progress bars: F1 or accuracy."""
    return ("F1", result["f1"]) if result["kind"] in ("chunk", "segment") else ("acc", result["accuracy"])


def read_vocabulary(path, encoding="utf-8"):
    """Words of a word list (one per line) or of a segmented corpus."""
    from .textio import read_lines
    return {w for _, text in read_lines(path, encoding) for w in text.split()}


def evaluate_model(model_path, data_path, words_path=None):
    """Tag an annotated corpus with a model and score it."""
    from .model import Model
    from .train import read_corpus

    model = Model.load(model_path)
    sentences = read_corpus(model.format, data_path, model.corpus.get("encoding", "utf-8"))
    missing = next((s for s in sentences if s.labels is None), None)
    if missing is not None:
        raise InputError(data_path, missing.line, "no label field: eval --data needs annotated data")
    gold = [s.labels for s in sentences]
    known = set(model.labels)
    if not any(y in known for g in gold for y in g):
        raise InputError(data_path, sentences[0].line, f"none of the labels is known to the model "
                         f"(model labels: {', '.join(model.labels)})")
    pred = model.predict(sentences, str(data_path))
    vocabulary = read_vocabulary(words_path) if words_path else None
    result = score(model.format, model.corpus["evaluation"], gold, pred, sentences, vocabulary)
    unknown = sorted({y for g in gold for y in g} - known)
    if unknown:  # the model can never predict them: every such token counts as an error
        result["labels_unknown_to_model"] = unknown
    return result


def evaluate_files(gold_path, pred_path, format_name=None, words_path=None, model_path=None):
    """Score a prediction file (`seqbil tag` output) against a gold file."""
    from .corpus import ConllFormat, make_format
    from .model import Model

    model = Model.load(model_path) if model_path else None
    format_name = format_name or (model.format.name if model else "conll")
    label_column = model.corpus.get("label_column", -1) if model else -1
    if format_name == "sighan":
        fmt = make_format("sighan")
        gold = list(fmt.read(gold_path))
        pred = list(fmt.read(pred_path))
    else:
        fmt = ConllFormat(None, label_column)
        gold = list(fmt.read(gold_path))
        pred = list(ConllFormat(None, -1).read(pred_path))
    if len(gold) != len(pred):
        raise InputError(pred_path, 0, f"{len(pred)} sentences, but the gold file {gold_path} has {len(gold)}")
    for g, p in zip(gold, pred):
        if len(g) != len(p) or (format_name == "sighan" and g.columns != p.columns):
            raise InputError(pred_path, p.line, f"sentence does not match the gold sentence at "
                             f"{gold_path}:{g.line}")
    labels = sorted({y for s in gold for y in s.labels})
    kind = model.corpus["evaluation"] if model else evaluation_kind(format_name, labels)
    vocabulary = read_vocabulary(words_path) if words_path else None
    return score(fmt, kind, [s.labels for s in gold], [s.labels for s in pred], gold, vocabulary)
