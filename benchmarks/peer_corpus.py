"""What the peer scripts share: the corpus options, the corpora and templates read as
seqbil reads them, and the test score."""
from seqbil.evaluation import choose_metric, score
from seqbil.features.index import normalizer
from seqbil.features.patterns import read_template_file
from seqbil.formats import make_format, read_corpus
from seqbil.params import find_config, resolve


def add_arguments(ap):
    ap.add_argument("--config", required=True, help="seqbil config (path or bundled name)")
    ap.add_argument("--template", help="CRF++ template file instead of the config's templates")
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)


class PeerCorpus:
    """settings, fmt, fold (the config's normaliser, or None), template texts, train, test."""

    def __init__(self, args):
        self.settings = resolve(find_config(args.config))
        self.fmt = make_format(self.settings.format, None, self.settings.label_column)
        self.fold = normalizer(self.settings.normalize)
        self.texts = [t.text for t in read_template_file(args.template)] if args.template \
            else self.settings.templates
        self._test_path = args.test
        if getattr(args, "stream", False):  # sentences read as they are used, as a user's loop over a file reads them
            self.train = _Stream(self.fmt, args.train, self.settings.encoding)
            self._test = None
        else:
            self.train = read_corpus(self.fmt, args.train, self.settings.encoding)
            self._test = read_corpus(self.fmt, args.test, self.settings.encoding)

    @property
    def test(self):
        """The test sentences (read when first asked for, with stream)."""
        if self._test is None:
            self._test = read_corpus(self.fmt, self._test_path, self.settings.encoding)
        return self._test

    def score(self, pred):
        """Test F1 and the rest: conlleval for chunking, the SIGHAN scorer for segmentation."""
        gold = [s.labels for s in self.test]
        metric, _ = choose_metric({y for g in gold for y in g}, self.fmt.segments, self.settings.metric)
        return score(metric, gold, pred, scheme=self.settings.scheme,
                     chars=[s.columns[0] for s in self.test] if metric == "segment" else None)


class _Stream:
    """The sentences of a file, read one at a time on each pass."""

    def __init__(self, fmt, path, encoding):
        self.fmt, self.path, self.encoding = fmt, path, encoding

    def __iter__(self):
        return iter(self.fmt.read(self.path, labeled=True, encoding=self.encoding))
