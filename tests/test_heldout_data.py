"""data_scripts' heldout command (get_heldout.sh) on tiny sources built here: the CoNLL-2002 and
CoNLL-U conversions, the reference check, downloads, and what a second run does. No network."""
import gzip
import hashlib
import importlib.util
import zipfile
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "data_scripts"


def _load_corpora():
    spec = importlib.util.spec_from_file_location("data_scripts_corpora_heldout", SCRIPTS / "corpora.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpora = _load_corpora()
common, heldout = corpora.common, corpora.heldout

ESP = {"train": "-DOCSTART- -DOCSTART- O\nEl DA O\nAbogado NC B-PER\n\nMadrid NP B-LOC\n",
       "testa": "Sao NC B-LOC\nPaulo VMI I-LOC\n\n", "testb": "La DA O\nEFE NC B-ORG\n\n"}
CONLLU = ("# sent_id = 1\n# text = Dis 'n toets.\n1\tDis\tdit\tPRON\t_\t_\t0\troot\t_\t_\n"
          "2-3\tn toets\t_\t_\t_\t_\t_\t_\t_\t_\n2\t'n\t'n\tDET\t_\t_\t3\tdet\t_\t_\n"
          "3\tto ets\ttoets\tNOUN\t_\t_\t1\tobj\t_\t_\n3.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n\n")
EXPECTED = {"es-conll2002": ("El DA O\nAbogado NC B-PER\n\nMadrid NP B-LOC\n\n", "Sao NC B-LOC\nPaulo VMI I-LOC\n\n",
                             "La DA O\nEFE NC B-ORG\n\n"),
            "af-afribooms": ("Dis PRON\n'n DET\nto_ets NOUN\n\n",) * 3}


def _sources(folder):
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / "conll2002.zip", "w") as z:
        for part, text in ESP.items():
            z.writestr(f"conll2002/esp.{part}", text)
    sub = folder / "ud"
    sub.mkdir(exist_ok=True)
    for split in ("train", "dev", "test"):
        (sub / f"af_afribooms-ud-{split}.conllu").write_text(CONLLU, encoding="utf-8")
    return folder


@pytest.fixture
def reference(monkeypatch):
    """The tiny sources' converted text as the reference text."""
    digests = {c: tuple(hashlib.sha256(t.encode()).hexdigest() for t in texts) for c, texts in EXPECTED.items()}
    monkeypatch.setattr(heldout, "HELDOUT_SHA256", {**heldout.HELDOUT_SHA256, **digests})


def installed(out, corpus):
    return tuple(gzip.decompress((out / "heldout" / corpus / f"{split}.txt.gz").read_bytes()).decode()
                 for split in ("train", "dev", "test"))


def test_converts_conll2002_and_conllu_from_local_files(tmp_path, reference, capsys):
    src = _sources(tmp_path / "src")
    assert corpora.main(["heldout", "--from", str(src), "--out", str(tmp_path / "out"),
                         "--only", "es-conll2002,af-afribooms"]) == 0
    for corpus, texts in EXPECTED.items():
        assert installed(tmp_path / "out", corpus) == texts
        assert common.manifest_verify(tmp_path / "out" / "heldout" / corpus, heldout.FILES) is None
    assert corpora.main(["heldout", "--from", str(src), "--out", str(tmp_path / "out"), "--only", "es-conll2002"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_text_that_is_not_the_reference_is_refused(tmp_path, capsys):
    src = _sources(tmp_path / "src")
    assert corpora.main(["heldout", "--from", str(src), "--out", str(tmp_path / "out"), "--only", "af-afribooms"]) == 1
    err = capsys.readouterr().err
    assert "not the reference text of af-afribooms" in err
    assert not (tmp_path / "out" / "heldout" / "af-afribooms" / "train.txt.gz").exists()


def test_a_missing_source_file_is_named(tmp_path, reference, capsys):
    src = tmp_path / "src"
    src.mkdir()
    assert corpora.main(["heldout", "--from", str(src), "--out", str(tmp_path / "out"), "--only", "mt-mudt"]) == 1
    assert "no mt_mudt-ud-train.conllu in it" in capsys.readouterr().err


def test_downloads_each_url_once(tmp_path, reference, monkeypatch):
    src = _sources(tmp_path / "src")
    asked = []

    def download(url, dest, retries=2):
        asked.append(url)
        name = url.rsplit("/", 1)[1]
        Path(dest).write_bytes(next(src.rglob(name)).read_bytes())
    monkeypatch.setattr(common, "download", download)
    assert corpora.main(["heldout", "--out", str(tmp_path / "out"), "--only", "es-conll2002,af-afribooms"]) == 0
    assert asked == [f"{common.NLTK_URL}/conll2002.zip",
                     *(f"{heldout.UD_URL}/UD_Afrikaans-AfriBooms/r2.18/af_afribooms-ud-{s}.conllu"
                       for s in ("train", "dev", "test"))]
    assert installed(tmp_path / "out", "es-conll2002") == EXPECTED["es-conll2002"]


def test_a_failed_download_installs_nothing(tmp_path, reference, monkeypatch, capsys):
    def download(url, dest, retries=2):
        raise common.DownloadError("timed out")
    monkeypatch.setattr(common, "download", download)
    assert corpora.main(["heldout", "--out", str(tmp_path / "out"), "--only", "nl-conll2002"]) == 1
    assert "conll2002.zip: timed out" in capsys.readouterr().err
    assert not (tmp_path / "out" / "heldout" / "nl-conll2002").exists()


@pytest.mark.parametrize("text, problem", [("a b\n", "not a `word POS label` line"),
                                           ("a\tb\n", "not a CoNLL-U token line")])
def test_malformed_lines_are_errors(text, problem):
    convert = heldout.conll2002_sentences if "POS" in problem else heldout.conllu_sentences
    with pytest.raises(ValueError, match=problem):
        convert(text)
