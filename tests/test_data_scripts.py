"""data_scripts/corpora.py (behind get_conll2000.sh, get_sighan2005.sh and get_cws_more.sh), on tiny
corpora built here: no network, no local copy of the real corpora, no seqbil."""
import gzip
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "data_scripts"


def _load_corpora():
    # data_scripts is not a package: load the module from its file
    spec = importlib.util.spec_from_file_location("data_scripts_corpora", SCRIPTS / "corpora.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpora = _load_corpora()
REAL_DOWNLOAD = corpora.download
REAL_EXTRACT = corpora.extract

# ---------------------------------------------------------------- fixtures

CONLL = {
    "train.txt": b"Confidence NN B-NP\nin IN B-PP\nthe DT B-NP\npound NN I-NP\n\nHe PRP B-NP\nsaid VBD B-VP\n\n",
    "test.txt": b"Rockwell NNP B-NP\nsaid VBD B-VP\n.  . O\n\n",
}
CONLL_MD5 = {name: hashlib.md5(data).hexdigest() for name, data in CONLL.items()}

# The fake icwb2-data archive: path in the archive -> bytes
ICWB2 = {
    "icwb2-data/training/pku_training.utf8": "共同  创造  美好\r\n新  世纪\r\n".encode(),
    # Big5 (香港  大學), then the HKSCS-2008 code 877A and the code 8862 (Ê + macron), CRLF line ends
    "icwb2-data/training/cityu_training.txt": b"\xad\xbb\xb4\xe4  \xa4\x6a\xbe\xc7\r\n\x87\x7a  \x88\x62\r\n",
    # A1FE (／ in CP950) is not valid in glibc's BIG5-HKSCS, so as falls back to CP950; C6A1 is CP950's
    # user-defined area, which glibc maps to U+F6B1
    "icwb2-data/training/as_training.b5": b"\xa4\xa4\xa4\xe5  \xa1\xfe\r\n\xc6\xa1\r\n",
    "icwb2-data/testing/pku_test.utf8": "共同创造\r\n".encode(),
    "icwb2-data/testing/cityu_test.utf8": "\ufeff香港大學\r\n".encode(),  # the cityu files start with a BOM
    "icwb2-data/gold/pku_test_gold.utf8": "共同  创造\r\n".encode(),
    "icwb2-data/gold/pku_training_words.utf8": "共同\r\n创造\r\n".encode(),
    "icwb2-data/gold/as_testing_gold.utf8": "中文  ／\r\n".encode(),  # the archive's name for as_test_gold
    "icwb2-data/scripts/score": b"#!/usr/bin/perl\nprint 1;\n",
}
# What must be installed from it, in the order of SHA256SUMS
SIGHAN_EXPECTED = {
    "pku_training.utf8": "共同  创造  美好\r\n新  世纪\r\n".encode(),
    "pku_test.utf8": "共同创造\r\n".encode(),
    "pku_test_gold.utf8": "共同  创造\r\n".encode(),
    "pku_training_words.utf8": "共同\r\n创造\r\n".encode(),
    "cityu_training.utf8": "香港  大學\r\n\u3875  \u00ca\u0304\r\n".encode(),
    "cityu_test.utf8": "\ufeff香港大學\r\n".encode(),
    "as_training.utf8": "中文  ／\r\n\uf6b1\r\n".encode(),
    "as_test_gold.utf8": "中文  ／\r\n".encode(),
    "score": b"#!/usr/bin/perl\nprint 1;\n",
}

# A local copy shaped like ../shared/data
LOCAL_SIGHAN = {
    "pku_training.approx.utf8": "迈向  充满\r\n".encode(),
    "pku_test.utf8": "迈向充满\r\n".encode(),
    "pku_test_gold.utf8": "迈向  充满\r\n".encode(),
    "msr_test.utf8": "扬帆\r\n".encode(),
}
LOCAL_SXU = {"train.txt": "我们  走\n".encode(), "test.txt": "他  来\n".encode()}

# cws-more as the local copy has it (and as it is installed): corpus -> {name: bytes}
WTB_README = b"This is the Chinese Weibo Treebank dataset.\nYou must retain this readme file in the re-distribution.\n"
LOCAL_CWS = {
    "udc": {"train.txt": "同样 , 施力 的 大小 .\n大 多数 的 礼车 .\n".encode(), "dev.txt": "这种 车辆 .\n".encode(),
            "test.txt": "动作 冒险 游戏 .\n".encode()},
    "wtb": {"train.txt": "不论 你 是 什么\n".encode(), "dev.txt": "中国 和 塔吉克斯坦\n".encode(),
            "test.txt": "很多 人\n".encode(), "README.txt": WTB_README},
    "zx": {"train.txt": "第一 章 妖逝\n".encode(), "dev.txt": "张小凡 只 觉得\n".encode(), "test.txt": "炽热 的 地下\n".encode()},
}
# The same corpora as upstream has them (data/other/ of hankcs/multi-criteria-cws), with what must come of them
UPSTREAM_CWS = {
    # comments, a multiword token (3-4) and an empty node (4.1) to skip; extra blank lines; no final blank line
    "udc/train.conll": ("# sent_id = 1\n# text = 同样,施力的大小.\n"
                        "1\t同样\t_\tADV\tRB\t_\t4\tadvmod\t_\t_\n2\t,\t_\tPUNCT\t,\t_\t4\tpunct\t_\t_\n"
                        "3-4\t施力的\t_\t_\t_\t_\t_\t_\t_\t_\n3\t施力\t_\tVERB\tVV\t_\t5\tacl\t_\t_\n"
                        "4\t的\t_\tPART\tDEC\t_\t3\tacl\t_\t_\n4.1\t是\t_\tVERB\tVC\t_\t_\t_\t_\t_\n"
                        "5\t大小\t_\tNOUN\tNN\t_\t0\troot\t_\t_\n6\t.\t_\tPUNCT\t.\t_\t5\tpunct\t_\t_\n\n\n"
                        "1\t大\t_\tADV\tRB\t_\t2\tadvmod\t_\t_\n2\t多数\t_\tADJ\tJJ\t_\t0\troot\t_\t_\n"
                        "3\t的\t_\tPART\tDEC\t_\t2\tcase\t_\t_\n4\t礼车\t_\tNOUN\tNN\t_\t2\tnsubj\t_\t_\n"
                        "5\t.\t_\tPUNCT\t.\t_\t2\tpunct\t_\t_").encode(),
    "udc/dev.conll": "1\t这种\t_\tDET\r\n2\t车辆\t_\tNOUN\r\n3\t.\t_\tPUNCT\r\n\r\n".encode(),  # CRLF
    "udc/test.conll": "1\t动作\t_\n2\t冒险\t_\n3\t游戏\t_\n4\t.\t_\n\n".encode(),
    "wtb/train.conll": "1\t不论\t_\tCS\n2\t你\t_\tPN\n3\t是\t_\tVC\n4\t什么\t_\tPN\n\n".encode(),
    "wtb/dev.conll": "1\t中国\t_\n2\t和\t_\n3\t塔吉克斯坦\t_\n\n".encode(),
    "wtb/test.conll": "1\t很多\t_\n2\t人\t_\n\n".encode(),
    "wtb/README.txt": WTB_README,
    "zx/train.zhuxian.wordpos": "第一_OD 章_M 妖逝_VV\n".encode(),
    "zx/dev.zhuxian.wordpos": "张小凡_NR 只_AD  觉得_VV \n\n".encode(),  # two spaces, a trailing space, a blank line
    "zx/test.zhuxian.wordpos": "炽热_VA 的_DEC 地下_NN\n".encode(),
}
# underscores in words: only the last _POS goes
UPSTREAM_CWS_EXTRA = {"zx/test.zhuxian.wordpos": "a_b_NN __PU 地下_NN\n".encode()}
EXPECTED_CWS_EXTRA = {"zx": {"test.txt": "a_b _ 地下\n".encode()}}


def gz(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb") as f:
        f.write(data)


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def make_zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def manifest_text(files):
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in files.items())


def tree(root):
    """{relative path: (contents, mode, mtime_ns)} of everything under ROOT; contents and mtime
    are None for directories (the temporary directory beside the output changes their mtime)."""
    out = {}
    for path in sorted(Path(root).rglob("*")):
        st = path.stat()
        if path.is_dir():
            out[str(path.relative_to(root))] = (None, st.st_mode & 0o777, None)
        else:
            out[str(path.relative_to(root))] = (path.read_bytes(), st.st_mode & 0o777, st.st_mtime_ns)
    return out


def age(root):
    """Give every file under ROOT an old mtime, so that rewriting it shows."""
    for path in Path(root).rglob("*"):
        if path.is_file():
            os.utime(path, ns=(10**18, 10**18))


def installed(out, *argv):
    """Run ARGV, which must succeed, then age what is under OUT and return its tree."""
    assert run(*argv) == 0
    age(out)
    return tree(out)


def assert_rewritten(before, after):
    """AFTER holds the files of BEFORE, with the same contents and modes, each written again."""
    assert {k: v[:2] for k, v in after.items()} == {k: v[:2] for k, v in before.items()}
    assert all(after[k][2] != before[k][2] for k in after if after[k][0] is not None)


def interrupt_extract(monkeypatch, at):
    """From now on, the AT-th call of corpora.extract leaves half a file and raises KeyboardInterrupt."""
    calls = []

    def interrupted(src, dest, *args, **kwargs):
        calls.append(src)
        if len(calls) == at:
            Path(dest).write_bytes(b"half")
            raise KeyboardInterrupt
        return REAL_EXTRACT(src, dest, *args, **kwargs)
    monkeypatch.setattr(corpora, "extract", interrupted)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No network, no real local copy, no writes into the repository's data/."""
    def no_network(url, dest, retries=2):
        raise corpora.DownloadError("network disabled in the tests")
    monkeypatch.setattr(corpora, "download", no_network)
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(tmp_path / "no-local-copy"))
    monkeypatch.setattr(corpora, "DATA_DIR", str(tmp_path / "default-data"))
    monkeypatch.setattr(corpora, "CONLL_MD5", dict(CONLL_MD5))


@pytest.fixture
def local(tmp_path):
    """A local copy like ../shared/data: conll2000/, sighan2005/ (pku stand-in), sighan2008-sxu/, cws-more/."""
    root = tmp_path / "local"
    for corpus, files in LOCAL_CWS.items():
        for name, data in files.items():
            if name == "README.txt":
                write(root / "cws-more" / corpus / name, data)
            else:
                gz(root / "cws-more" / corpus / f"{name}.gz", data)
    for name, data in CONLL.items():
        gz(root / "conll2000" / f"{name}.gz", data)
    for name, data in LOCAL_SIGHAN.items():
        gz(root / "sighan2005" / f"{name}.gz", data)
    for name, data in LOCAL_SXU.items():
        gz(root / "sighan2008-sxu" / f"{name}.gz", data)
    return root


@pytest.fixture
def icwb2_zip(tmp_path):
    return make_zip(tmp_path / "icwb2-data.zip", ICWB2)


def run(*argv):
    return corpora.main([str(a) for a in argv])


# ---------------------------------------------------------------- converters and manifests

def test_decode_big5_uses_glibc_mappings():
    big5, cp950 = corpora.BIG5, corpora.CP950
    assert corpora.decode_big5(b"\xad\xbb\xb4\xe4  \xa4\x6a\xbe\xc7\r\n", big5) == "香港  大學\r\n"
    assert corpora.decode_big5(b"\x87\x7a\x87\xdf", big5) == "\u3875\u9fcb"  # HKSCS-2008 additions
    assert corpora.decode_big5(b"\x88\x62\x88\x64", big5) == "\u00ca\u0304\u00ca\u030c"
    assert corpora.decode_big5(b"a\x80b", big5) == "a\x80b"
    with pytest.raises(UnicodeDecodeError):
        corpora.decode_big5(b"\xa4\xa4\xa1\xfe", big5)
    # A1FE only straddles two characters here (B1A1 FE40), so it is not rejected
    assert corpora.decode_big5(b"\xb1\xa1\xfe\x40", big5) == "情鑂"
    assert corpora.decode_big5(b"\xa4\xa4\xa1\xfe\xc6\xa1\xc8\xfe\r\n", cp950) == "中／\uf6b1\uf848\r\n"
    with pytest.raises(UnicodeDecodeError):
        corpora.decode_big5(b"\xa4\r\n", big5)  # a lead byte without its trail byte


def test_extract_gunzips_converts_and_removes_what_fails(tmp_path):
    gz(tmp_path / "in.txt.gz", b"\xa4\xa4\xa4\xe5\r\n")
    assert corpora.extract(str(tmp_path / "in.txt.gz"), str(tmp_path / "out"), corpora.BIG5)
    assert (tmp_path / "out").read_bytes() == "中文\r\n".encode()
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o644
    # gzip recognised by its magic bytes, not only by the name
    write(tmp_path / "plain", gzip.compress(b"x y\n"))
    assert corpora.extract(str(tmp_path / "plain"), str(tmp_path / "out2"))
    assert (tmp_path / "out2").read_bytes() == b"x y\n"
    write(tmp_path / "bad.gz", b"not gzip")
    assert not corpora.extract(str(tmp_path / "bad.gz"), str(tmp_path / "out3"))
    write(tmp_path / "bad.b5", b"ok\r\n\xa1\xfe\r\n")
    assert not corpora.extract(str(tmp_path / "bad.b5"), str(tmp_path / "out4"), corpora.BIG5)
    assert not (tmp_path / "out3").exists() and not (tmp_path / "out4").exists()


def test_manifest_write_and_verify(tmp_path):
    d = tmp_path / "d"
    write(d / "a.txt", b"alpha\n")
    write(d / "b.txt", b"beta\n")
    assert corpora.manifest_verify(str(d)) == f"no {d}/SHA256SUMS"
    corpora.manifest_write(str(d), ["a.txt", "b.txt"])
    assert (d / "SHA256SUMS").read_text() == manifest_text({"a.txt": b"alpha\n", "b.txt": b"beta\n"})
    assert corpora.manifest_names(str(d)) == ["a.txt", "b.txt"]
    assert corpora.manifest_verify(str(d)) is None
    assert corpora.manifest_verify(str(d), ["a.txt"]) is None
    assert corpora.manifest_verify(str(d), ["c.txt"]) == "c.txt (available in the source) is not installed yet"
    (d / "b.txt").write_bytes(b"beta!\n")
    assert corpora.manifest_verify(str(d)) == "b.txt does not match its sha256 in SHA256SUMS"
    (d / "b.txt").unlink()
    assert corpora.manifest_verify(str(d)) == "b.txt is missing"
    (d / "SHA256SUMS").write_text("\n")
    assert corpora.manifest_verify(str(d)) == f"{d}/SHA256SUMS is empty"
    assert sorted(p.name for p in d.iterdir()) == ["SHA256SUMS", "a.txt"]  # no temporary file left


def test_manifest_write_interrupted_leaves_the_old_manifest(tmp_path, monkeypatch):
    write(tmp_path / "a.txt", b"alpha\n")
    corpora.manifest_write(str(tmp_path), ["a.txt"])
    old = (tmp_path / "SHA256SUMS").read_bytes()

    def interrupted(path, algorithm):
        raise KeyboardInterrupt
    monkeypatch.setattr(corpora, "file_digest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        corpora.manifest_write(str(tmp_path), ["a.txt"])
    assert sorted(os.listdir(tmp_path)) == ["SHA256SUMS", "a.txt"]
    assert (tmp_path / "SHA256SUMS").read_bytes() == old


def test_download_writes_the_file_or_nothing(tmp_path, monkeypatch):
    write(tmp_path / "remote.gz", b"payload")
    REAL_DOWNLOAD((tmp_path / "remote.gz").as_uri(), str(tmp_path / "got"))
    assert (tmp_path / "got").read_bytes() == b"payload"
    with pytest.raises(corpora.DownloadError):
        REAL_DOWNLOAD((tmp_path / "missing.gz").as_uri(), str(tmp_path / "got2"))
    assert not (tmp_path / "got2").exists()
    monkeypatch.setenv("SEQBIL_DL_TIMEOUT", "soon")
    with pytest.raises(corpora.DownloadError, match="SEQBIL_DL_TIMEOUT"):
        REAL_DOWNLOAD((tmp_path / "remote.gz").as_uri(), str(tmp_path / "got3"))


def test_download_retries_transient_failures_and_removes_partial_files(tmp_path, monkeypatch):
    attempts = []

    def cut_off(url, dest, timeout, deadline, max_time):
        attempts.append(url)
        Path(dest).write_bytes(b"partial")
        raise corpora.DownloadError("connection reset", transient=len(attempts) < 3)
    monkeypatch.setattr(corpora, "_fetch", cut_off)
    monkeypatch.setattr(corpora.time, "sleep", lambda seconds: None)
    with pytest.raises(corpora.DownloadError, match="connection reset"):
        REAL_DOWNLOAD("http://example.invalid/x.gz", str(tmp_path / "x.gz"))
    assert len(attempts) == 3 and not (tmp_path / "x.gz").exists()
    attempts.clear()
    with pytest.raises(corpora.DownloadError):
        REAL_DOWNLOAD("http://example.invalid/x.gz", str(tmp_path / "x.gz"), retries=0)
    assert len(attempts) == 1 and not (tmp_path / "x.gz").exists()


# ---------------------------------------------------------------- CoNLL-2000

@pytest.mark.parametrize("layout", ["parent", "conll2000", "uncompressed"])
def test_conll_installs_the_local_copy(tmp_path, local, capsys, layout):
    source = {"parent": local, "conll2000": local / "conll2000", "uncompressed": tmp_path / "plain"}[layout]
    for name, data in CONLL.items():
        write(tmp_path / "plain" / name, data)
    out = tmp_path / "out"
    assert run("conll2000", "--from", source, "--out", out) == 0
    assert tree(out / "conll2000").keys() == {"train.txt", "test.txt"}  # nothing else, no temporary dir
    for name, data in CONLL.items():
        assert (out / "conll2000" / name).read_bytes() == data
        assert (out / "conll2000" / name).stat().st_mode & 0o777 == 0o644
    assert capsys.readouterr().out == (f"get_conll2000: installed {out}/conll2000/train.txt and test.txt "
                                       f"(md5 verified) from local copy {source}\n")


def test_installed_files_are_world_readable_whatever_the_umask(tmp_path, local):
    previous = os.umask(0o077)
    try:
        assert run("conll2000", "--from", local, "--out", tmp_path / "out") == 0
        assert run("sighan2005", "--from", local, "--out", tmp_path / "out") == 0
    finally:
        os.umask(previous)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(files) == 2 + len(LOCAL_SIGHAN) + 1 + len(LOCAL_SXU) + 1
    assert {p.stat().st_mode & 0o777 for p in files} == {0o644}


def test_conll_md5_mismatch_installs_nothing(tmp_path, local, capsys, monkeypatch):
    monkeypatch.setitem(corpora.CONLL_MD5, "test.txt", "0" * 32)
    out = tmp_path / "out"
    assert run("conll2000", "--from", local, "--out", out) == 1
    err = capsys.readouterr().err
    assert "get_conll2000: error: could not obtain CoNLL-2000. Tried:" in err
    assert f"  - local copy {local}: test.txt has md5 {CONLL_MD5['test.txt']}, expected {'0' * 32}\n" in err
    assert not out.exists()  # not even the directories it created


def test_conll_md5_table_is_a_parameter(tmp_path, local):
    out = tmp_path / "out"
    assert corpora.install_conll2000(str(out), str(local), md5={"train.txt": "1" * 32, "test.txt": "2" * 32}) == 1
    assert not out.exists()
    assert corpora.install_conll2000(str(out), str(local), md5=CONLL_MD5) == 0


def test_conll_second_run_changes_nothing_and_force_reinstalls(tmp_path, local, capsys):
    out = tmp_path / "out"
    before = installed(out, "conll2000", "--from", local, "--out", out)
    capsys.readouterr()
    assert run("conll2000", "--from", local, "--out", out) == 0
    assert capsys.readouterr().out == (f"get_conll2000: up to date: {out}/conll2000/{{train,test}}.txt "
                                       "have the right md5; nothing to do\n")
    assert tree(out) == before
    assert run("conll2000", "--out", out) == 0  # without --from: no download when up to date
    assert "up to date" in capsys.readouterr().out and tree(out) == before
    assert run("conll2000", "--from", local, "--out", out, "--force") == 0
    after = tree(out)
    assert "installed" in capsys.readouterr().out
    assert after.keys() == before.keys()
    assert all(after[f][2] != before[f][2] for f in ("conll2000/train.txt", "conll2000/test.txt"))
    assert all(after[f][0] == before[f][0] for f in after)


def test_conll_download_failure_falls_back_to_the_local_copy(tmp_path, local, capsys, monkeypatch):
    def broken(url, dest, retries=2):
        raise corpora.DownloadError("connection refused")
    monkeypatch.setattr(corpora, "download", broken)
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    out = tmp_path / "out"
    assert run("conll2000", "--out", out) == 0
    captured = capsys.readouterr()
    url = f"{corpora.CONLL_URL}/train.txt.gz"
    assert captured.err == f"get_conll2000: warning: download {url}: connection refused\n"
    assert captured.out == (f"get_conll2000: downloading {url}\n"
                            f"get_conll2000: download failed; falling back to the local copy in {local}\n"
                            f"get_conll2000: installed {out}/conll2000/train.txt and test.txt (md5 verified) "
                            f"from local copy {local}, as the download failed\n")
    assert {f: (out / "conll2000" / f).read_bytes() for f in CONLL} == CONLL


def test_conll_downloaded_files_are_checked(tmp_path, local, capsys, monkeypatch):
    served = {f"{corpora.CONLL_URL}/{name}.gz": gzip.compress(data) for name, data in CONLL.items()}
    monkeypatch.setattr(corpora, "download", lambda url, dest, retries=2: Path(dest).write_bytes(served[url]))
    out = tmp_path / "out"
    assert run("conll2000", "--out", out) == 0
    assert capsys.readouterr().out.endswith(f"(md5 verified) from {corpora.CONLL_URL}\n")
    assert {f: (out / "conll2000" / f).read_bytes() for f in CONLL} == CONLL
    # a corrupt download is not installed: the local copy is used instead
    served[f"{corpora.CONLL_URL}/test.txt.gz"] = gzip.compress(b"garbage\n")
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    assert run("conll2000", "--out", tmp_path / "out2", "--force") == 0
    captured = capsys.readouterr()
    bad_md5 = hashlib.md5(b"garbage\n").hexdigest()
    assert (f"warning: download from {corpora.CONLL_URL}: test.txt has md5 {bad_md5}, "
            f"expected {CONLL_MD5['test.txt']}") in captured.err
    assert "as the download failed" in captured.out
    assert (tmp_path / "out2" / "conll2000" / "test.txt").read_bytes() == CONLL["test.txt"]


def test_conll_failure_lists_what_was_tried(tmp_path, capsys):
    out = tmp_path / "out"
    assert run("conll2000", "--out", out) == 1
    err = capsys.readouterr().err
    assert err.endswith(
        "get_conll2000: error: could not obtain CoNLL-2000. Tried:\n"
        f"  - download {corpora.CONLL_URL}/train.txt.gz: network disabled in the tests\n"
        f"  - local copy {tmp_path}/no-local-copy: no such directory\n"
        "Point --from at a directory holding train.txt.gz and test.txt.gz (or train.txt and test.txt),\n"
        "directly or in a conll2000/ subdirectory, e.g.:\n"
        "  bash data_scripts/get_conll2000.sh --from ../shared/data\n")
    assert not out.exists()


def test_conll_interrupted_install_leaves_no_partial_files(tmp_path, local, monkeypatch):
    out = tmp_path / "out"
    interrupt_extract(monkeypatch, 2)  # train.txt is staged, test.txt is being written
    assert run("conll2000", "--from", local, "--out", out) == 130
    assert not out.exists()
    # with an earlier install: it stays as it was
    monkeypatch.setattr(corpora, "extract", REAL_EXTRACT)
    before = installed(out, "conll2000", "--from", local, "--out", out)
    interrupt_extract(monkeypatch, 2)
    assert run("conll2000", "--from", local, "--out", out, "--force") == 130
    assert tree(out) == before


def test_out_defaults_to_the_data_dir_and_may_be_relative(tmp_path, local, monkeypatch):
    assert run("conll2000", "--from", local) == 0
    assert (tmp_path / "default-data" / "conll2000" / "train.txt").read_bytes() == CONLL["train.txt"]
    monkeypatch.chdir(tmp_path)
    assert run("sighan2005", "--from", "local", "--out", "rel/data") == 0
    assert sorted(os.listdir(tmp_path / "rel" / "data")) == ["sighan2005", "sighan2008-sxu"]


# ---------------------------------------------------------------- SIGHAN

def test_sighan_from_the_official_zip(tmp_path, icwb2_zip, capsys):
    out = tmp_path / "out"
    assert run("sighan2005", "--from", icwb2_zip, "--out", out) == 0
    installed = out / "sighan2005"
    assert sorted(os.listdir(installed)) == sorted([*SIGHAN_EXPECTED, "SHA256SUMS"])
    for name, data in SIGHAN_EXPECTED.items():
        assert (installed / name).read_bytes() == data, name
        assert (installed / name).stat().st_mode & 0o777 == (0o755 if name == "score" else 0o644)
    assert (installed / "SHA256SUMS").read_text() == manifest_text(SIGHAN_EXPECTED)
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:8] == [
        "get_sighan2005: converted cityu_training.txt from BIG5-HKSCS to UTF-8",
        "get_sighan2005: converted as_training.b5 from CP950 to UTF-8",
        f"get_sighan2005: installed 9 files into {installed} from {icwb2_zip} (sha256 in SHA256SUMS)",
        f"get_sighan2005: SIGHAN 2005 in {installed}:",
        "  pku    training: pku_training.utf8                    test test_gold training_words",
        "  msr    training: none                                 (no test) (no test_gold) (no training_words)",
        "  cityu  training: cityu_training.utf8                  test (no test_gold) (no training_words)",
        "  as     training: as_training.utf8                     (no test) test_gold (no training_words)",
    ]
    assert "get_sighan2005: with a training set: pku cityu as; test-only: msr\n" in captured.out
    assert captured.err == ""
    assert not (out / "sighan2008-sxu").exists()  # no SXU in this source: a notice only
    assert "notice: SIGHAN 2008 SXU not installed" in captured.out


def test_sighan_unpacked_archive_gives_the_same_files(tmp_path, icwb2_zip):
    for name, data in ICWB2.items():
        write(tmp_path / "unpacked" / name, data)
    assert run("sighan2005", "--from", tmp_path / "unpacked", "--out", tmp_path / "a") == 0
    assert run("sighan2005", "--from", icwb2_zip, "--out", tmp_path / "b") == 0
    assert {k: v[:2] for k, v in tree(tmp_path / "a").items()} == {k: v[:2] for k, v in tree(tmp_path / "b").items()}


def test_sighan_skips_a_cityu_file_that_is_not_big5(tmp_path, capsys):
    members = dict(ICWB2)
    members["icwb2-data/training/cityu_training.txt"] += b"\xa1\xfe\r\n"  # not valid in glibc's BIG5-HKSCS
    out = tmp_path / "out"
    assert run("sighan2005", "--from", make_zip(tmp_path / "x.zip", members), "--out", out) == 0
    captured = capsys.readouterr()
    assert ("get_sighan2005: warning: skipping cityu_training.utf8: could not read/convert from BIG5-HKSCS "
            in captured.err)
    assert not (out / "sighan2005" / "cityu_training.utf8").exists()
    assert (out / "sighan2005" / "as_training.utf8").read_bytes() == SIGHAN_EXPECTED["as_training.utf8"]
    assert "cityu_training.utf8" not in (out / "sighan2005" / "SHA256SUMS").read_text()


def test_sighan_second_run_changes_nothing_and_checks_the_manifest(tmp_path, icwb2_zip, local, capsys):
    out = tmp_path / "out"
    before = installed(out, "sighan2005", "--from", icwb2_zip, "--out", out)
    capsys.readouterr()
    assert run("sighan2005", "--from", icwb2_zip, "--out", out) == 0
    up_to_date = f"get_sighan2005: up to date: {out}/sighan2005 matches its SHA256SUMS; nothing to do\n"
    assert up_to_date in capsys.readouterr().out
    assert tree(out) == before
    # a modified file is noticed and reinstalled
    with open(out / "sighan2005" / "pku_test.utf8", "ab") as f:
        f.write(b"x")
    assert run("sighan2005", "--from", icwb2_zip, "--out", out) == 0
    assert ("get_sighan2005: reinstalling: pku_test.utf8 does not match its sha256 in SHA256SUMS\n"
            in capsys.readouterr().out)
    assert (out / "sighan2005" / "pku_test.utf8").read_bytes() == SIGHAN_EXPECTED["pku_test.utf8"]
    age(out)
    before = tree(out)
    assert run("sighan2005", "--from", icwb2_zip, "--out", out, "--force") == 0
    assert_rewritten(before, tree(out))
    # a source with other files: the earlier ones are kept, but no longer listed
    assert run("sighan2005", "--from", local, "--out", out, "--only", "sighan2005") == 0
    captured = capsys.readouterr()
    assert "reinstalling: pku_training.approx.utf8 (available in the source) is not installed yet" in captured.out
    assert ("warning: kept cityu_training.utf8 from an earlier install (not in this source; "
            "no longer listed in SHA256SUMS)") in captured.err
    assert (out / "sighan2005" / "SHA256SUMS").read_text() == manifest_text(LOCAL_SIGHAN)


@pytest.mark.parametrize("only, installed", [("sighan2005", ["sighan2005"]), ("sighan2008-sxu", ["sighan2008-sxu"]),
                                             (None, ["sighan2005", "sighan2008-sxu"])])
def test_sighan_only(tmp_path, local, only, installed):
    out = tmp_path / "out"
    assert run("sighan2005", "--from", local, "--out", out, *(["--only", only] if only else [])) == 0
    assert sorted(os.listdir(out)) == installed
    if "sighan2008-sxu" in installed:
        assert {f: (out / "sighan2008-sxu" / f).read_bytes() for f in LOCAL_SXU} == LOCAL_SXU
        assert (out / "sighan2008-sxu" / "SHA256SUMS").read_text() == manifest_text(LOCAL_SXU)
    if "sighan2005" in installed:
        assert {f: (out / "sighan2005" / f).read_bytes() for f in LOCAL_SIGHAN} == LOCAL_SIGHAN


def test_sighan_only_sxu_without_a_copy_of_it_fails(tmp_path, icwb2_zip, capsys):
    assert run("sighan2005", "--from", icwb2_zip, "--out", tmp_path / "out", "--only", "sighan2008-sxu") == 1
    assert f"get_sighan2005: error: SIGHAN 2008 SXU: no sighan2008-sxu/{{train,test}}.txt[.gz] in {icwb2_zip}.\n" \
        in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_sighan_download_failure_falls_back_to_the_local_copy(tmp_path, local, capsys, monkeypatch):
    def broken(url, dest, retries=2):
        raise corpora.DownloadError("timed out")
    monkeypatch.setattr(corpora, "download", broken)
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    out = tmp_path / "out"
    assert run("sighan2005", "--out", out) == 0
    captured = capsys.readouterr()
    assert captured.err == f"get_sighan2005: warning: download {corpora.SIGHAN_URL}: timed out\n"
    assert (f"get_sighan2005: installed 4 files into {out}/sighan2005 from local copy {local}/sighan2005, "
            "as the download failed (sha256 in SHA256SUMS)\n") in captured.out
    assert "notice: pku training = local stand-in pku_training.approx.utf8" in captured.out
    assert (f"get_sighan2005: installed 2 files into {out}/sighan2008-sxu from local copy {local}/sighan2008-sxu "
            "(sha256 in SHA256SUMS)\n") in captured.out
    assert {f: (out / "sighan2005" / f).read_bytes() for f in LOCAL_SIGHAN} == LOCAL_SIGHAN
    # and then it is up to date, without a download
    monkeypatch.setattr(corpora, "download", lambda *a, **k: pytest.fail("downloaded although up to date"))
    assert run("sighan2005", "--out", out) == 0
    assert "nothing to do (--force to reinstall)" in capsys.readouterr().out


def test_sighan_downloaded_zip(tmp_path, icwb2_zip, capsys, monkeypatch):
    def serve(url, dest, retries=2):
        assert url == corpora.SIGHAN_URL
        Path(dest).write_bytes(icwb2_zip.read_bytes())
    monkeypatch.setattr(corpora, "download", serve)
    out = tmp_path / "out"
    assert run("sighan2005", "--out", out, "--only", "sighan2005") == 0
    assert f"from download from {corpora.SIGHAN_URL} (sha256" in capsys.readouterr().out
    assert {f: (out / "sighan2005" / f).read_bytes() for f in SIGHAN_EXPECTED} == SIGHAN_EXPECTED


def test_sighan_failure_lists_what_was_tried(tmp_path, capsys):
    write(tmp_path / "notzip.zip", b"hello")
    assert run("sighan2005", "--from", tmp_path / "notzip.zip", "--out", tmp_path / "out") == 1
    err = capsys.readouterr().err
    assert err.startswith("get_sighan2005: error: could not obtain SIGHAN 2005 (icwb2-data). Tried:\n"
                          f"  - {tmp_path}/notzip.zip: not a zip file\n")
    assert not (tmp_path / "out").exists()


def test_sighan_interrupted_install_leaves_no_partial_files(tmp_path, icwb2_zip, local, monkeypatch):
    out = tmp_path / "out"
    before = installed(out, "sighan2005", "--from", icwb2_zip, "--out", out, "--only", "sighan2005")
    interrupt_extract(monkeypatch, 3)
    assert run("sighan2005", "--from", local, "--out", out, "--force") == 130
    assert tree(out) == before
    # nothing left in a new output directory either
    interrupt_extract(monkeypatch, 3)
    assert run("sighan2005", "--from", local, "--out", tmp_path / "new") == 130
    assert not (tmp_path / "new").exists()


# ---------------------------------------------------------------- cws-more: udc, wtb, zx

def cws_files(out):
    """{corpus: {name: bytes}} installed under OUT/cws-more, without the SHA256SUMS (checked here)."""
    found = {}
    for d in sorted((Path(out) / "cws-more").iterdir()):
        files = {p.name: p.read_bytes() for p in d.iterdir() if p.name != "SHA256SUMS"}
        assert (d / "SHA256SUMS").read_text() == manifest_text(
            {name: files[name] for name in ("train.txt", "dev.txt", "test.txt", "README.txt") if name in files})
        found[d.name] = files
    return found


def upstream_copy(root, members=None, compress=False):
    for name, data in (members or UPSTREAM_CWS).items():
        (gz if compress else write)(root / (f"{name}.gz" if compress else name), data)
    return root


def test_conll_and_wordpos_sentences():
    lines = ["# newdoc\n", "1\ta\t_\n", "2-3\tbc\t_\n", "2\tb\t_\n", "3\tc\t_\n", "3.1\tx\t_\n", "\n", "  \n",
             "1\td\n", "\n", "1\te\t_\n"]
    assert list(corpora.conll_sentences(lines)) == ["a b c", "d", "e"]
    with pytest.raises(ValueError, match="no FORM column"):
        list(corpora.conll_sentences(["1\ta\n", "oops\n"]))
    assert list(corpora.wordpos_sentences(["x_NN y_z_VV  __PU\n", "\n", "w\n"])) == ["x y_z _", "w"]


def test_extract_converts_or_writes_nothing(tmp_path):
    gz(tmp_path / "a.conll.gz", "1\t甲\t_\n2\t乙\t_\n\n1\t丙\t_\n".encode())
    assert corpora.extract(str(tmp_path / "a.conll.gz"), str(tmp_path / "a.txt"), sentences=corpora.conll_sentences)
    assert (tmp_path / "a.txt").read_bytes() == "甲 乙\n丙\n".encode()
    write(tmp_path / "bad.conll", b"1\tok\n2 no tab\n")
    assert not corpora.extract(str(tmp_path / "bad.conll"), str(tmp_path / "b.txt"), sentences=corpora.conll_sentences)
    write(tmp_path / "latin1.wordpos", b"caf\xe9_NN\n")
    assert not corpora.extract(str(tmp_path / "latin1.wordpos"), str(tmp_path / "c.txt"),
                               sentences=corpora.wordpos_sentences)
    assert sorted(os.listdir(tmp_path)) == ["a.conll.gz", "a.txt", "bad.conll", "latin1.wordpos"]


@pytest.mark.parametrize("layout", ["parent", "cws-more", "uncompressed"])
def test_cws_installs_the_local_copy(tmp_path, local, capsys, layout):
    for corpus, files in LOCAL_CWS.items():
        for name, data in files.items():
            write(tmp_path / "plain" / corpus / name, data)
    source = {"parent": local, "cws-more": local / "cws-more", "uncompressed": tmp_path / "plain"}[layout]
    out = tmp_path / "out"
    assert run("cws-more", "--from", source, "--out", out) == 0
    assert cws_files(out) == LOCAL_CWS
    assert {p.stat().st_mode & 0o777 for p in (out / "cws-more").rglob("*") if p.is_file()} == {0o644}
    shown = local / "cws-more" if layout != "uncompressed" else source
    assert capsys.readouterr().out == "".join(
        f"get_cws_more: installed {len(files)} files into {out}/cws-more/{corpus} "
        f"from local copy {shown}/{corpus} (sha256 in SHA256SUMS)\n" for corpus, files in LOCAL_CWS.items())


@pytest.mark.parametrize("layout", ["clone", "data-other", "gzipped"])
def test_cws_converts_the_upstream_files(tmp_path, layout):
    clone = tmp_path / "multi-criteria-cws"
    upstream_copy(clone / "data" / "other", compress=layout == "gzipped")
    source = clone if layout == "clone" else clone / "data" / "other"
    assert run("cws-more", "--from", source, "--out", tmp_path / "out") == 0
    assert cws_files(tmp_path / "out") == LOCAL_CWS
    upstream_copy(tmp_path / "extra", {**UPSTREAM_CWS, **UPSTREAM_CWS_EXTRA})
    assert run("cws-more", "--from", tmp_path / "extra", "--out", tmp_path / "out2", "--only", "zx") == 0
    assert cws_files(tmp_path / "out2") == {"zx": {**LOCAL_CWS["zx"], **EXPECTED_CWS_EXTRA["zx"]}}


def test_cws_second_run_changes_nothing_and_force_reinstalls(tmp_path, local, capsys):
    out = tmp_path / "out"
    argv = ["cws-more", "--from", local, "--out", out]
    before = installed(out, *argv)
    capsys.readouterr()
    for again in (argv, argv[:1] + argv[3:]):  # (without --from: no download when up to date)
        assert run(*again) == 0 and tree(out) == before
        assert capsys.readouterr().out == "".join(f"get_cws_more: up to date: {out}/cws-more/{corpus} matches its "
                                                  "SHA256SUMS; nothing to do (--force to reinstall)\n"
                                                  for corpus in LOCAL_CWS)
    # a modified file is noticed and reinstalled, the other corpora stay as they are
    with open(out / "cws-more" / "zx" / "dev.txt", "ab") as f:
        f.write(b"x")
    assert run(*argv) == 0
    assert ("get_cws_more: reinstalling zx: dev.txt does not match its sha256 in SHA256SUMS\n"
            in capsys.readouterr().out)
    assert cws_files(out) == LOCAL_CWS
    rewritten = {k for k, v in tree(out).items() if v[2] != before[k][2]}
    assert rewritten == {f"cws-more/zx/{name}" for name in ("train.txt", "dev.txt", "test.txt", "SHA256SUMS")}
    before = installed(out, *argv)
    assert run(*argv, "--force") == 0
    assert_rewritten(before, tree(out))


def serve(monkeypatch, files):
    """Downloads from CWS_URL get FILES[path] (None: the download fails); returns the paths asked for."""
    asked = []

    def download(url, dest, retries=2):
        asked.append(url.removeprefix(corpora.CWS_URL + "/"))
        if files[asked[-1]] is None:
            raise corpora.DownloadError("timed out")
        Path(dest).write_bytes(files[asked[-1]])
    monkeypatch.setattr(corpora, "download", download)
    return asked


def test_cws_download_is_converted(tmp_path, capsys, monkeypatch):
    asked = serve(monkeypatch, UPSTREAM_CWS)
    assert run("cws-more", "--out", tmp_path / "out") == 0
    assert asked == list(UPSTREAM_CWS)
    assert cws_files(tmp_path / "out") == LOCAL_CWS
    assert (f"get_cws_more: installed 4 files into {tmp_path}/out/cws-more/wtb from download from "
            f"{corpora.CWS_URL}/wtb (sha256 in SHA256SUMS)\n") in capsys.readouterr().out


def test_cws_download_failure_falls_back_to_the_local_copy(tmp_path, local, capsys, monkeypatch):
    # udc and wtb cannot be downloaded; zx can, but it is empty: that falls back too
    serve(monkeypatch, {**dict.fromkeys(UPSTREAM_CWS), **{k: b"" for k in UPSTREAM_CWS if k.startswith("zx/")}})
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    assert run("cws-more", "--out", tmp_path / "out") == 0
    captured = capsys.readouterr()
    assert captured.err == (f"get_cws_more: warning: download {corpora.CWS_URL}/udc/train.conll: timed out\n"
                            f"get_cws_more: warning: download {corpora.CWS_URL}/wtb/train.conll: timed out\n"
                            f"get_cws_more: warning: download from {corpora.CWS_URL}/zx: "
                            "nothing in train.zhuxian.wordpos\n")
    assert captured.out.count(f"get_cws_more: download failed; falling back to the local copy in {local}\n") == 3
    assert (f"get_cws_more: installed 3 files into {tmp_path}/out/cws-more/zx from local copy {local}/cws-more/zx, "
            "as the download failed (sha256 in SHA256SUMS)\n") in captured.out
    assert cws_files(tmp_path / "out") == LOCAL_CWS
    monkeypatch.setattr(corpora, "download", lambda *a, **k: pytest.fail("downloaded although up to date"))
    assert run("cws-more", "--out", tmp_path / "out") == 0


CWS_HINT = ("Point --from at the local copy (a directory with cws-more/, a cws-more/ directory,\n"
            "a clone of hankcs/multi-criteria-cws or its data/other/ directory), e.g.:\n"
            "  bash data_scripts/get_cws_more.sh --from ../shared/data\n")


def test_cws_missing_corpus_fails_listing_what_was_tried(tmp_path, local, capsys):
    partial = upstream_copy(tmp_path / "partial" / "data" / "other",  # no zx, and wtb without its README.txt
                            {k: v for k, v in UPSTREAM_CWS.items() if k[:3] in ("udc", "wtb") and "README" not in k})
    out = tmp_path / "out"
    assert run("cws-more", "--from", partial.parent.parent, "--out", out) == 1
    missing = "in it or in its cws-more/ or data/other/ subdirectory"
    assert capsys.readouterr().err == (
        "get_cws_more: error: could not obtain wtb zx. Tried:\n"
        f"  - local copy {partial.parent.parent}: no wtb/{{train,dev,test}}.txt[.gz], README.txt "
        f"(nor wtb/{{train.conll,dev.conll,test.conll}}, README.txt) {missing}\n"
        f"  - local copy {partial.parent.parent}: no zx/{{train,dev,test}}.txt[.gz] "
        f"(nor zx/{{train.zhuxian.wordpos,dev.zhuxian.wordpos,test.zhuxian.wordpos}}) {missing}\n"
        f"{CWS_HINT}(installed: udc; to ask for these only, add --only udc)\n")
    assert cws_files(out) == {"udc": LOCAL_CWS["udc"]}  # and no wtb without its licence
    assert run("cws-more", "--from", partial, "--out", out, "--only", "udc") == 0
    # nothing at all: no download, no local copy
    assert run("cws-more", "--out", tmp_path / "none", "--only", "zx") == 1
    assert capsys.readouterr().err.endswith(
        "get_cws_more: error: could not obtain zx. Tried:\n"
        f"  - download {corpora.CWS_URL}/zx/train.zhuxian.wordpos: network disabled in the tests\n"
        f"  - local copy {tmp_path}/no-local-copy: no such directory\n{CWS_HINT}")
    assert not (tmp_path / "none").exists()


@pytest.mark.parametrize("only", ["udc", "wtb,zx", "zx,udc,zx"])
def test_cws_only(tmp_path, local, only):
    assert run("cws-more", "--from", local, "--out", tmp_path / "out", "--only", only) == 0
    assert cws_files(tmp_path / "out") == {c: LOCAL_CWS[c] for c in only.split(",")}


def test_cws_interrupted_install_leaves_no_partial_files(tmp_path, local, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "out"
    before = installed(out, "cws-more", "--from", upstream_copy(tmp_path / "upstream"), "--out", out)
    interrupt_extract(monkeypatch, 5)  # udc's files are staged, and train.txt copied beside the output
    assert run("cws-more", "--from", local, "--out", out, "--force") == 130
    assert tree(out) == before
    interrupt_extract(monkeypatch, 5)
    assert run("cws-more", "--from", local, "--out", tmp_path / "new") == 130
    assert not (tmp_path / "new").exists()
    assert os.listdir(tmp_path / "tmp") == []  # nor anything in the temporary directory


# ---------------------------------------------------------------- command line and entry points

@pytest.mark.parametrize("argv, message", [
    (["conll2000", "--bogus"], "get_conll2000: error: unknown argument: --bogus (try --help)"),
    (["conll2000", "--out", "x", "stray"], "get_conll2000: error: unknown argument: stray (try --help)"),
    (["conll2000", "--from"], "get_conll2000: error: --from needs a directory (try --help)"),
    (["conll2000", "--force=yes"], "get_conll2000: error: argument --force: ignored explicit argument 'yes'"),
    (["sighan2005", "--out"], "get_sighan2005: error: --out needs a directory (try --help)"),
    (["sighan2005", "--only"], "get_sighan2005: error: --only needs sighan2005 or sighan2008-sxu"),
    (["sighan2005", "--only", "sxu"], "get_sighan2005: error: --only takes sighan2005 or sighan2008-sxu, not 'sxu'"),
    (["sighan2005", "--forc"], "get_sighan2005: error: unknown argument: --forc (try --help)"),
    (["cws-more", "--only"], "get_cws_more: error: --only needs udc, wtb or zx"),
    (["cws-more", "--only", "udc,sxu"],
     "get_cws_more: error: --only takes udc, wtb or zx (or a comma-separated list of them), not 'udc,sxu'"),
    (["cws-more", "--from"], "get_cws_more: error: --from needs a directory (try --help)"),
    (["conll2001"], "corpora.py: error: argument command: invalid choice"),
    ([], "Usage: python3 data_scripts/corpora.py conll2000"),
], ids=["unknown", "stray", "from-without-value", "flag-with-value", "out-without-value", "only-without-value",
        "only-wrong", "abbreviation", "cws-only-without-value", "cws-only-wrong", "cws-from-without-value",
        "no-such-command", "no-command"])
def test_bad_command_line_exits_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert run(*argv) == 2
    assert capsys.readouterr().err.startswith(message)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv, first_line", [
    (["conll2000", "--help"], "Usage: bash data_scripts/get_conll2000.sh [--from DIR] [--out DIR] [--force]"),
    (["sighan2005", "-h"],
     "Usage: bash data_scripts/get_sighan2005.sh [--from PATH] [--out DIR] [--only WHICH] [--force]"),
    (["cws-more", "--help"],
     "Usage: bash data_scripts/get_cws_more.sh [--from DIR] [--out DIR] [--only WHICH] [--force]"),
    (["--help"], "Usage: python3 data_scripts/corpora.py conll2000  [--from DIR]  [--out DIR] [--force]"),
], ids=["conll2000", "sighan2005", "cws-more", "top"])
def test_help(capsys, argv, first_line):
    assert run(*argv) == 0
    assert capsys.readouterr().out.splitlines()[0] == first_line


def _script(name, *args, cwd):
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run(["bash", str(SCRIPTS / name), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_shell_entry_points(tmp_path, local):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    proc = _script("get_sighan2005.sh", "--only", "sighan2008-sxu", "--from", local, "--out", "out", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert {f: (elsewhere / "out" / "sighan2008-sxu" / f).read_bytes() for f in LOCAL_SXU} == LOCAL_SXU
    # the real md5 table applies here, and the fixture does not match it
    proc = _script("get_conll2000.sh", "--from", local, "--out", "out", cwd=elsewhere)
    assert proc.returncode == 1
    assert f"  - local copy {local}: train.txt has md5 {CONLL_MD5['train.txt']}, expected 2e2f24e9" in proc.stderr
    assert not (elsewhere / "out" / "conll2000").exists()
    proc = _script("get_conll2000.sh", "--frm", local, cwd=elsewhere)
    assert (proc.returncode, proc.stderr) == (2, "get_conll2000: error: unknown argument: --frm (try --help)\n")
    proc = _script("get_cws_more.sh", "--only", "wtb", "--from", local, "--out", "out", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert cws_files(elsewhere / "out") == {"wtb": LOCAL_CWS["wtb"]}
