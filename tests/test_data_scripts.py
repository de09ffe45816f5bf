"""data_scripts/corpora.py and its corpus_lib/ modules (behind get_conll2000.sh, get_sighan2005.sh, get_cws_more.sh,
get_unlabeled.sh and get_pos_more.sh), on tiny corpora built here: no network, no local copy of the real corpora,
no seqbil."""
import gzip
import hashlib
import importlib.util
import io
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
# The modules corpora.py runs, as it imported them: a function is patched in the module that defines it
common, conll2000, sighan, cws_more, unlabeled, pos_more = (corpora.common, corpora.conll2000, corpora.sighan,
                                                            corpora.cws_more, corpora.unlabeled, corpora.pos_more)
REAL_DOWNLOAD = common.download
REAL_EXTRACT = common.extract

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
    """From now on, the AT-th call of common.extract leaves half a file and raises KeyboardInterrupt."""
    calls = []

    def interrupted(src, dest, *args, **kwargs):
        calls.append(src)
        if len(calls) == at:
            Path(dest).write_bytes(b"half")
            raise KeyboardInterrupt
        return REAL_EXTRACT(src, dest, *args, **kwargs)
    monkeypatch.setattr(common, "extract", interrupted)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No network, no real local copy, no writes into the repository's data/."""
    def no_network(url, dest, retries=2):
        raise common.DownloadError("network disabled in the tests")
    monkeypatch.setattr(common, "download", no_network)
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(tmp_path / "no-local-copy"))
    monkeypatch.setattr(common, "DATA_DIR", str(tmp_path / "default-data"))
    monkeypatch.setattr(conll2000, "CONLL_MD5", dict(CONLL_MD5))


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
    big5, cp950 = common.BIG5, common.CP950
    assert common.decode_big5(b"\xad\xbb\xb4\xe4  \xa4\x6a\xbe\xc7\r\n", big5) == "香港  大學\r\n"
    assert common.decode_big5(b"\x87\x7a\x87\xdf", big5) == "\u3875\u9fcb"  # HKSCS-2008 additions
    assert common.decode_big5(b"\x88\x62\x88\x64", big5) == "\u00ca\u0304\u00ca\u030c"
    assert common.decode_big5(b"a\x80b", big5) == "a\x80b"
    with pytest.raises(UnicodeDecodeError):
        common.decode_big5(b"\xa4\xa4\xa1\xfe", big5)
    # A1FE only straddles two characters here (B1A1 FE40), so it is not rejected
    assert common.decode_big5(b"\xb1\xa1\xfe\x40", big5) == "情鑂"
    assert common.decode_big5(b"\xa4\xa4\xa1\xfe\xc6\xa1\xc8\xfe\r\n", cp950) == "中／\uf6b1\uf848\r\n"
    with pytest.raises(UnicodeDecodeError):
        common.decode_big5(b"\xa4\r\n", big5)  # a lead byte without its trail byte


def test_extract_gunzips_converts_and_removes_what_fails(tmp_path):
    gz(tmp_path / "in.txt.gz", b"\xa4\xa4\xa4\xe5\r\n")
    assert common.extract(str(tmp_path / "in.txt.gz"), str(tmp_path / "out"), common.BIG5)
    assert (tmp_path / "out").read_bytes() == "中文\r\n".encode()
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o644
    # gzip recognised by its magic bytes, not only by the name
    write(tmp_path / "plain", gzip.compress(b"x y\n"))
    assert common.extract(str(tmp_path / "plain"), str(tmp_path / "out2"))
    assert (tmp_path / "out2").read_bytes() == b"x y\n"
    write(tmp_path / "bad.gz", b"not gzip")
    assert not common.extract(str(tmp_path / "bad.gz"), str(tmp_path / "out3"))
    write(tmp_path / "bad.b5", b"ok\r\n\xa1\xfe\r\n")
    assert not common.extract(str(tmp_path / "bad.b5"), str(tmp_path / "out4"), common.BIG5)
    assert not (tmp_path / "out3").exists() and not (tmp_path / "out4").exists()


def test_manifest_write_and_verify(tmp_path):
    d = tmp_path / "d"
    write(d / "a.txt", b"alpha\n")
    write(d / "b.txt", b"beta\n")
    assert common.manifest_verify(str(d)) == f"no {d}/SHA256SUMS"
    common.manifest_write(str(d), ["a.txt", "b.txt"])
    assert (d / "SHA256SUMS").read_text() == manifest_text({"a.txt": b"alpha\n", "b.txt": b"beta\n"})
    assert common.manifest_names(str(d)) == ["a.txt", "b.txt"]
    assert common.manifest_verify(str(d)) is None
    assert common.manifest_verify(str(d), ["a.txt"]) is None
    assert common.manifest_verify(str(d), ["c.txt"]) == "c.txt (available in the source) is not installed yet"
    (d / "b.txt").write_bytes(b"beta!\n")
    assert common.manifest_verify(str(d)) == "b.txt does not match its sha256 in SHA256SUMS"
    (d / "b.txt").unlink()
    assert common.manifest_verify(str(d)) == "b.txt is missing"
    (d / "SHA256SUMS").write_text("\n")
    assert common.manifest_verify(str(d)) == f"{d}/SHA256SUMS is empty"
    assert sorted(p.name for p in d.iterdir()) == ["SHA256SUMS", "a.txt"]  # no temporary file left


def test_manifest_write_interrupted_leaves_the_old_manifest(tmp_path, monkeypatch):
    write(tmp_path / "a.txt", b"alpha\n")
    common.manifest_write(str(tmp_path), ["a.txt"])
    old = (tmp_path / "SHA256SUMS").read_bytes()

    def interrupted(path, algorithm):
        raise KeyboardInterrupt
    monkeypatch.setattr(common, "file_digest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        common.manifest_write(str(tmp_path), ["a.txt"])
    assert sorted(os.listdir(tmp_path)) == ["SHA256SUMS", "a.txt"]
    assert (tmp_path / "SHA256SUMS").read_bytes() == old


def test_download_writes_the_file_or_nothing(tmp_path, monkeypatch):
    write(tmp_path / "remote.gz", b"payload")
    REAL_DOWNLOAD((tmp_path / "remote.gz").as_uri(), str(tmp_path / "got"))
    assert (tmp_path / "got").read_bytes() == b"payload"
    with pytest.raises(common.DownloadError):
        REAL_DOWNLOAD((tmp_path / "missing.gz").as_uri(), str(tmp_path / "got2"))
    assert not (tmp_path / "got2").exists()
    monkeypatch.setenv("SEQBIL_DL_TIMEOUT", "soon")
    with pytest.raises(common.DownloadError, match="SEQBIL_DL_TIMEOUT"):
        REAL_DOWNLOAD((tmp_path / "remote.gz").as_uri(), str(tmp_path / "got3"))


def test_download_retries_transient_failures_and_removes_partial_files(tmp_path, monkeypatch):
    attempts = []

    def cut_off(url, dest, timeout, deadline, max_time):
        attempts.append(url)
        Path(dest).write_bytes(b"partial")
        raise common.DownloadError("connection reset", transient=len(attempts) < 3)
    monkeypatch.setattr(common, "_fetch", cut_off)
    monkeypatch.setattr(common.time, "sleep", lambda seconds: None)
    with pytest.raises(common.DownloadError, match="connection reset"):
        REAL_DOWNLOAD("http://example.invalid/x.gz", str(tmp_path / "x.gz"))
    assert len(attempts) == 3 and not (tmp_path / "x.gz").exists()
    attempts.clear()
    with pytest.raises(common.DownloadError):
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
    monkeypatch.setitem(conll2000.CONLL_MD5, "test.txt", "0" * 32)
    out = tmp_path / "out"
    assert run("conll2000", "--from", local, "--out", out) == 1
    err = capsys.readouterr().err
    assert "get_conll2000: error: could not obtain CoNLL-2000. Tried:" in err
    assert f"  - local copy {local}: test.txt has md5 {CONLL_MD5['test.txt']}, expected {'0' * 32}\n" in err
    assert not out.exists()  # not even the directories it created


def test_conll_md5_table_is_a_parameter(tmp_path, local):
    out = tmp_path / "out"
    assert conll2000.install_conll2000(str(out), str(local), md5={"train.txt": "1" * 32, "test.txt": "2" * 32}) == 1
    assert not out.exists()
    assert conll2000.install_conll2000(str(out), str(local), md5=CONLL_MD5) == 0


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
        raise common.DownloadError("connection refused")
    monkeypatch.setattr(common, "download", broken)
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    out = tmp_path / "out"
    assert run("conll2000", "--out", out) == 0
    captured = capsys.readouterr()
    url = f"{conll2000.CONLL_URL}/train.txt.gz"
    assert captured.err == f"get_conll2000: warning: download {url}: connection refused\n"
    assert captured.out == (f"get_conll2000: downloading {url}\n"
                            f"get_conll2000: download failed; falling back to the local copy in {local}\n"
                            f"get_conll2000: installed {out}/conll2000/train.txt and test.txt (md5 verified) "
                            f"from local copy {local}, as the download failed\n")
    assert {f: (out / "conll2000" / f).read_bytes() for f in CONLL} == CONLL


def test_conll_downloaded_files_are_checked(tmp_path, local, capsys, monkeypatch):
    served = {f"{conll2000.CONLL_URL}/{name}.gz": gzip.compress(data) for name, data in CONLL.items()}
    monkeypatch.setattr(common, "download", lambda url, dest, retries=2: Path(dest).write_bytes(served[url]))
    out = tmp_path / "out"
    assert run("conll2000", "--out", out) == 0
    assert capsys.readouterr().out.endswith(f"(md5 verified) from {conll2000.CONLL_URL}\n")
    assert {f: (out / "conll2000" / f).read_bytes() for f in CONLL} == CONLL
    # a corrupt download is not installed: the local copy is used instead
    served[f"{conll2000.CONLL_URL}/test.txt.gz"] = gzip.compress(b"garbage\n")
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    assert run("conll2000", "--out", tmp_path / "out2", "--force") == 0
    captured = capsys.readouterr()
    bad_md5 = hashlib.md5(b"garbage\n").hexdigest()
    assert (f"warning: download from {conll2000.CONLL_URL}: test.txt has md5 {bad_md5}, "
            f"expected {CONLL_MD5['test.txt']}") in captured.err
    assert "as the download failed" in captured.out
    assert (tmp_path / "out2" / "conll2000" / "test.txt").read_bytes() == CONLL["test.txt"]


def test_conll_failure_lists_what_was_tried(tmp_path, capsys):
    out = tmp_path / "out"
    assert run("conll2000", "--out", out) == 1
    err = capsys.readouterr().err
    assert err.endswith(
        "get_conll2000: error: could not obtain CoNLL-2000. Tried:\n"
        f"  - download {conll2000.CONLL_URL}/train.txt.gz: network disabled in the tests\n"
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
    monkeypatch.setattr(common, "extract", REAL_EXTRACT)
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
        raise common.DownloadError("timed out")
    monkeypatch.setattr(common, "download", broken)
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    out = tmp_path / "out"
    assert run("sighan2005", "--out", out) == 0
    captured = capsys.readouterr()
    assert captured.err == f"get_sighan2005: warning: download {sighan.SIGHAN_URL}: timed out\n"
    assert (f"get_sighan2005: installed 4 files into {out}/sighan2005 from local copy {local}/sighan2005, "
            "as the download failed (sha256 in SHA256SUMS)\n") in captured.out
    assert "notice: pku training = local stand-in pku_training.approx.utf8" in captured.out
    assert (f"get_sighan2005: installed 2 files into {out}/sighan2008-sxu from local copy {local}/sighan2008-sxu "
            "(sha256 in SHA256SUMS)\n") in captured.out
    assert {f: (out / "sighan2005" / f).read_bytes() for f in LOCAL_SIGHAN} == LOCAL_SIGHAN
    # and then it is up to date, without a download
    monkeypatch.setattr(common, "download", lambda *a, **k: pytest.fail("downloaded although up to date"))
    assert run("sighan2005", "--out", out) == 0
    assert "nothing to do (--force to reinstall)" in capsys.readouterr().out


def test_sighan_downloaded_zip(tmp_path, icwb2_zip, capsys, monkeypatch):
    def serve(url, dest, retries=2):
        assert url == sighan.SIGHAN_URL
        Path(dest).write_bytes(icwb2_zip.read_bytes())
    monkeypatch.setattr(common, "download", serve)
    out = tmp_path / "out"
    assert run("sighan2005", "--out", out, "--only", "sighan2005") == 0
    assert f"from download from {sighan.SIGHAN_URL} (sha256" in capsys.readouterr().out
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
    assert list(cws_more.conll_sentences(lines)) == ["a b c", "d", "e"]
    with pytest.raises(ValueError, match="no FORM column"):
        list(cws_more.conll_sentences(["1\ta\n", "oops\n"]))
    assert list(cws_more.wordpos_sentences(["x_NN y_z_VV  __PU\n", "\n", "w\n"])) == ["x y_z _", "w"]


def test_extract_converts_or_writes_nothing(tmp_path):
    gz(tmp_path / "a.conll.gz", "1\t甲\t_\n2\t乙\t_\n\n1\t丙\t_\n".encode())
    assert common.extract(str(tmp_path / "a.conll.gz"), str(tmp_path / "a.txt"), sentences=cws_more.conll_sentences)
    assert (tmp_path / "a.txt").read_bytes() == "甲 乙\n丙\n".encode()
    write(tmp_path / "bad.conll", b"1\tok\n2 no tab\n")
    assert not common.extract(str(tmp_path / "bad.conll"), str(tmp_path / "b.txt"), sentences=cws_more.conll_sentences)
    write(tmp_path / "latin1.wordpos", b"caf\xe9_NN\n")
    assert not common.extract(str(tmp_path / "latin1.wordpos"), str(tmp_path / "c.txt"),
                               sentences=cws_more.wordpos_sentences)
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
        asked.append(url.removeprefix(cws_more.CWS_URL + "/"))
        if files[asked[-1]] is None:
            raise common.DownloadError("timed out")
        Path(dest).write_bytes(files[asked[-1]])
    monkeypatch.setattr(common, "download", download)
    return asked


def test_cws_download_is_converted(tmp_path, capsys, monkeypatch):
    asked = serve(monkeypatch, UPSTREAM_CWS)
    assert run("cws-more", "--out", tmp_path / "out") == 0
    assert asked == list(UPSTREAM_CWS)
    assert cws_files(tmp_path / "out") == LOCAL_CWS
    assert (f"get_cws_more: installed 4 files into {tmp_path}/out/cws-more/wtb from download from "
            f"{cws_more.CWS_URL}/wtb (sha256 in SHA256SUMS)\n") in capsys.readouterr().out


def test_cws_download_failure_falls_back_to_the_local_copy(tmp_path, local, capsys, monkeypatch):
    # udc and wtb cannot be downloaded; zx can, but it is empty: that falls back too
    serve(monkeypatch, {**dict.fromkeys(UPSTREAM_CWS), **{k: b"" for k in UPSTREAM_CWS if k.startswith("zx/")}})
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(local))
    assert run("cws-more", "--out", tmp_path / "out") == 0
    captured = capsys.readouterr()
    assert captured.err == (f"get_cws_more: warning: download {cws_more.CWS_URL}/udc/train.conll: timed out\n"
                            f"get_cws_more: warning: download {cws_more.CWS_URL}/wtb/train.conll: timed out\n"
                            f"get_cws_more: warning: download from {cws_more.CWS_URL}/zx: "
                            "nothing in train.zhuxian.wordpos\n")
    assert captured.out.count(f"get_cws_more: download failed; falling back to the local copy in {local}\n") == 3
    assert (f"get_cws_more: installed 3 files into {tmp_path}/out/cws-more/zx from local copy {local}/cws-more/zx, "
            "as the download failed (sha256 in SHA256SUMS)\n") in captured.out
    assert cws_files(tmp_path / "out") == LOCAL_CWS
    monkeypatch.setattr(common, "download", lambda *a, **k: pytest.fail("downloaded although up to date"))
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
        f"  - download {cws_more.CWS_URL}/zx/train.zhuxian.wordpos: network disabled in the tests\n"
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


# ---------------------------------------------------------------- unlabeled: raw text

# What the local copy has, and what must be installed: part -> text
UNLAB_TEXT = {
    "abc": "PM denies knowledge of AWB kickbacks\n"
           "The Prime Minister has denied he knew AWB was paying kickbacks to Iraq .\n"
           "Dr Müller's study : 5 , 000 U.S . tests ( 3.5 % ) didn't fail . . .\n",
    "brown": "The Fulton County Grand Jury said Friday an investigation of Atlanta's recent primary election "
             "produced `` no evidence '' .\nMerger proposed\nHowever , Mayor-nominate Ivan Allen Jr. .\n"
             "And 1/2 of it\n",
    "inaugural": "Fellow-Citizens of the Senate and of the House of Representatives :\n"
                 "America ¡ ¦ s influence is not unlimited ; exceptionalâ \x80 \x94 what makes us\n",
    "movie_reviews": "plot : two teen couples go to a church party , drink and then drive .\n"
                     "they get into an accident .\nfilms adapted from comic books , whether they're about 'heroes' .\n",
    "state_union": "PRESIDENT HARRY S . TRUMAN'S ADDRESS BEFORE A JOINT SESSION OF THE CONGRESS\nApril 16 , 1945\n"
                   "Mr . Speaker , Mr . President , Members of the Congress :\n"
                   "It is with a heavy heart . We must carry on.Our departed leader never looked backward .\n"
                   "The United Nations ' war has been determined - due in no small measure\n",
    "webtext": "Cookie Manager : \" Don't allow sites that set removed cookies \" should stay checked\n"
               "http : / / www.watch.impress.co.jp ( not in ' open in tabs ' )\nSCENE 1 : [ wind ] [ clop clop ]\n",
    # the udc, wtb, zx and SXU training sets of the local fixture without their spaces, then its msr test text
    "zh": "同样,施力的大小.\n大多数的礼车.\n不论你是什么\n第一章妖逝\n我们走\n扬帆\n",
}
UNLAB_SHA256 = {part: hashlib.sha256(text.encode()).hexdigest() for part, text in UNLAB_TEXT.items()}
UNLAB_EN = ["abc", "brown", "inaugural", "movie_reviews", "state_union", "webtext"]
# The same English text as NLTK distributes it: corpus -> {path in its zip: bytes}.  Members are out of
# order (the files are read sorted); READMEs and the like are not text.
NLTK_ZIPS = {
    "abc": {"abc/README": b"Australian Broadcasting Commission 2006\n",
            "abc/science.txt": "Dr Müller's study: 5,000 U.S. tests (3.5%) didn't fail...\r\n".encode("latin-1"),
            "abc/rural.txt": ("\ufeffPM denies knowledge of AWB kickbacks\nThe Prime Minister has denied he knew AWB "
                              "was paying kickbacks to Iraq.\n\n").encode()},
    "brown": {"brown/cb01": b"\n\n\tAnd/cc 1/2/cd of/in it/ppo\n\n",
              "brown/ca01": b"\n\n\tThe/at Fulton/np-tl County/nn-tl Grand/jj-tl Jury/nn-tl said/vbd Friday/nr an/at "
                            b"investigation/nn of/in Atlanta's/np$ recent/jj primary/nn election/nn produced/vbd ``/`` "
                            b"no/at evidence/nn ''/'' ./.\n\n\nMerger/nn-hl proposed/vbn-hl\nHowever/wrb ,/, "
                            b"Mayor-nominate/nn-tl Ivan/np Allen/np Jr./np ./.\n",
              "brown/README": b"BROWN CORPUS\n", "brown/cats.txt": b"ca01 news\ncb01 editorial\n"},
    "inaugural": {"inaugural/2005-Bush.txt": b"America\xa1\xa6s influence is not unlimited; exceptional\xe2\x80\x94what "
                                             b"makes us\n",
                  "inaugural/1789-Washington.txt": b"Fellow-Citizens of the Senate and of the House of Representatives:"
                                                   b"\n\n",
                  "inaugural/README": b"C-Span Inaugural Address Corpus\n"},
    "movie_reviews": {"movie_reviews/pos/cv000_29590.txt": b"films adapted from comic books , whether they're about "
                                                           b"'heroes' .\n",
                      "movie_reviews/neg/cv000_29416.txt": b"plot : two teen couples go to a church party , drink and "
                                                           b"then drive .\n\nthey get into  an accident . \n",
                      "movie_reviews/README": b"polarity dataset v2.0\n"},
    "state_union": {"state_union/1945-Truman.txt": b"PRESIDENT HARRY S. TRUMAN'S ADDRESS BEFORE A JOINT SESSION OF THE "
                                                   b"CONGRESS\n\nApril 16, 1945\n\nMr. Speaker, Mr. President, Members of "
                                                   b"the Congress:\n It is with a heavy heart. We must carry on.Our "
                                                   b"departed leader never looked backward.\nThe United Nations' war "
                                                   b"has been determined - due in no small measure\n"},
    "webtext": {"webtext/grail.txt": b"SCENE 1: [wind] [clop clop]\n",
                "webtext/firefox.txt": b"Cookie Manager: \"Don't allow sites that set removed cookies\" should stay "
                                       b"checked\r\nhttp://www.watch.impress.co.jp (not in 'open in tabs')\r\n",
                "webtext/README": b"webtext\n"},
}
NLTK_URL = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora"


def local_unlabeled(root, parts=UNLAB_TEXT, compress=True):
    """ROOT/unlabeled/{en,zh}/ laid out as the local copy is."""
    for part in parts:
        path = root / "unlabeled" / unlabeled.unlab_name(part)
        if compress:
            write(path, gzip_like_the_local_copy(path.name, UNLAB_TEXT[part].encode()))
        else:
            write(path.with_suffix(""), UNLAB_TEXT[part].encode())
    return root


def gzip_like_the_local_copy(name, data):
    """DATA compressed as the files of the local copy are: original name, no time stamp, level 9."""
    out = io.BytesIO()
    with gzip.GzipFile(name, "wb", 9, out, mtime=0) as f:
        f.write(data)
    return out.getvalue()


def nltk_data(root, corpora_dir=True, unpacked=False):
    """An nltk_data directory (corpora/<c>.zip, or corpora/<c>/ unpacked), or without CORPORA_DIR the zips in ROOT."""
    d = root / "corpora" if corpora_dir else root
    d.mkdir(parents=True, exist_ok=True)
    for corpus, members in NLTK_ZIPS.items():
        if unpacked:
            for name, data in members.items():
                write(d / name, data)
        else:
            make_zip(d / f"{corpus}.zip", members)
    return root


def unlabeled_files(out):
    """{part: text} installed under OUT/unlabeled, checking each file's bytes and the SHA256SUMS."""
    found = {}
    for sub in ("en", "zh"):
        d = Path(out) / "unlabeled" / sub
        if not d.exists():
            continue
        files = sorted(p.name for p in d.iterdir() if p.name != "SHA256SUMS")
        assert (d / "SHA256SUMS").read_text() == manifest_text({name: (d / name).read_bytes() for name in files})
        for name in files:
            data = (d / name).read_bytes()
            assert data == gzip_like_the_local_copy(name.removesuffix(".gz"), gzip.decompress(data)), name
            assert (d / name).stat().st_mode & 0o777 == 0o644
            found["zh" if sub == "zh" else name.removesuffix(".txt.gz")] = gzip.decompress(data).decode()
    return found


def installed_corpora(out, local):
    """OUT with the corpora zh/mixed.txt is built from installed by the other commands."""
    assert run("sighan2005", "--from", local, "--out", out) == 0
    assert run("cws-more", "--from", local, "--out", out) == 0
    return out


@pytest.fixture
def unlab_local(local):
    """The local fixture with the unlabeled text too."""
    return local_unlabeled(local)


def test_sentences_of_the_nltk_formats():
    # a line of the State of the Union addresses, as it is in the NLTK data and in the local copy
    assert unlabeled.plain_sentence("The grand strategy of the United Nations' war has been determined - due in no "
                                  "small measure to the vision of our departed Commander in Chief.\n") == (
        "The grand strategy of the United Nations ' war has been determined - due in no small measure to the "
        "vision of our departed Commander in Chief .")
    assert unlabeled.plain_sentence("U.S.S.R. $29.6b, 10:30 well-being e.g. don't 'quoted' ...") == (
        "U.S.S.R . $ 29.6b , 10 : 30 well-being e.g . don't ' quoted ' . . .")
    assert unlabeled.plain_sentence("America\xa1\xa6s 100,000,000ºC 460°C\x85 \n") == \
        "America ¡ ¦ s 100 , 000 , 000ºC 460 ° C"
    assert unlabeled.plain_sentence(" \t\n") == ""
    assert unlabeled.tagged_sentence("\tThe/at Jr./np 1/2/cd ./.\n") == "The Jr. 1/2 ."
    assert unlabeled.tagged_sentence("notag x/y\n") == "notag x"
    assert unlabeled.spaced_sentence(" a  b \t'c'\n") == "a b 'c'"


@pytest.mark.parametrize("corpus", UNLAB_EN)
def test_nltk_zip_and_unpacked_directory_give_the_text(tmp_path, corpus):
    zipped = make_zip(tmp_path / f"{corpus}.zip", NLTK_ZIPS[corpus])
    assert "\n".join(unlabeled.nltk_sentences(str(zipped), corpus)) + "\n" == UNLAB_TEXT[corpus]
    for name, data in NLTK_ZIPS[corpus].items():
        write(tmp_path / "unpacked" / name, data)
    assert list(unlabeled.nltk_sentences(str(tmp_path / "unpacked" / corpus), corpus)) == \
        UNLAB_TEXT[corpus].splitlines()
    with pytest.raises(ValueError, match=f"no {corpus} text files in it"):
        list(unlabeled.nltk_sentences(str(make_zip(tmp_path / "other.zip", {"other/a.txt": b"a\n"})), corpus))


def test_zh_text_is_built_without_spaces_except_in_the_msr_test_text(tmp_path):
    files = []
    for i, (rel, _) in enumerate(unlabeled.ZH_SOURCES):
        data = "\ufeff上海  推 “ 迎\r\n\r\n一\u3000二\n" if i == 0 else f"{i}  号\n"
        if rel.startswith("sighan2005"):
            data = " 扬帆  远航 \r\n"
        files.append(str(tmp_path / rel))
        (gz if i == 1 else write)(tmp_path / rel, data.encode())
    assert list(unlabeled.zh_sentences(files)) == ["上海推“迎", "一二", "1号", "2号", "3号", "扬帆  远航"]


def test_write_gz_writes_the_bytes_of_the_local_copy(tmp_path):
    count, digest = common.write_gz(str(tmp_path / "abc.txt.gz"), ["a b", "c"])
    assert (count, digest) == (2, hashlib.sha256(b"a b\nc\n").hexdigest())
    data = (tmp_path / "abc.txt.gz").read_bytes()
    # FNAME set, no time stamp, maximum compression, unknown OS: as the local copy's files
    assert data.startswith(b"\x1f\x8b\x08\x08\x00\x00\x00\x00\x02\xffabc.txt\x00")
    assert data == gzip_like_the_local_copy("abc.txt", b"a b\nc\n")
    assert (tmp_path / "abc.txt.gz").stat().st_mode & 0o777 == 0o644
    write(tmp_path / "plain.txt", b"x\ny\n")
    assert common.copy_gz(str(tmp_path / "plain.txt"), str(tmp_path / "p.txt.gz")) == \
        (2, hashlib.sha256(b"x\ny\n").hexdigest())
    assert (tmp_path / "p.txt.gz").read_bytes() == gzip_like_the_local_copy("p.txt", b"x\ny\n")
    assert common.copy_gz(str(tmp_path / "abc.txt.gz"), str(tmp_path / "copy.gz")) == (count, digest)
    assert (tmp_path / "copy.gz").read_bytes() == data


def test_manifest_record_keeps_the_other_entries(tmp_path):
    write(tmp_path / "a.txt", b"alpha\n")
    write(tmp_path / "b.txt", b"beta\n")
    common.manifest_record(str(tmp_path), "b.txt", hashlib.sha256(b"beta\n").hexdigest())
    common.manifest_record(str(tmp_path), "a.txt", hashlib.sha256(b"alpha\n").hexdigest())
    assert (tmp_path / "SHA256SUMS").read_text() == manifest_text({"a.txt": b"alpha\n", "b.txt": b"beta\n"})
    assert common.manifest_check(str(tmp_path), "a.txt") is None
    (tmp_path / "b.txt").write_bytes(b"beta!\n")  # a modified file keeps its recorded sha256
    common.manifest_record(str(tmp_path), "a.txt", None)
    assert (tmp_path / "SHA256SUMS").read_text() == manifest_text({"b.txt": b"beta\n"})
    assert common.manifest_check(str(tmp_path), "a.txt") == "a.txt is not listed in SHA256SUMS"
    assert common.manifest_check(str(tmp_path), "b.txt") == "b.txt does not match its sha256 in SHA256SUMS"
    common.manifest_record(str(tmp_path), "b.txt", None)
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]  # no manifest left without entries
    assert common.manifest_check(str(tmp_path), "b.txt") == f"no {tmp_path}/SHA256SUMS"


@pytest.mark.parametrize("layout", ["parent", "unlabeled", "uncompressed"])
def test_unlabeled_installs_the_local_copy(tmp_path, unlab_local, capsys, layout):
    source = {"parent": unlab_local, "unlabeled": unlab_local / "unlabeled",
              "uncompressed": local_unlabeled(tmp_path / "plain", compress=False) / "unlabeled"}[layout]
    out = tmp_path / "out"
    assert run("unlabeled", "--from", source, "--out", out) == 0
    assert unlabeled_files(out) == UNLAB_TEXT
    for part in UNLAB_TEXT:  # a compressed file is copied as it is
        name = unlabeled.unlab_name(part)
        if layout != "uncompressed":
            assert (out / "unlabeled" / name).read_bytes() == (unlab_local / "unlabeled" / name).read_bytes()
    shown = (unlab_local if layout != "uncompressed" else tmp_path / "plain") / "unlabeled"
    assert capsys.readouterr().out == "".join(
        f"get_unlabeled: installed {out}/unlabeled/{unlabeled.unlab_name(part)} ({text.count(chr(10))} lines) "
        f"from local copy {shown}/{unlabeled.unlab_name(part).split('/')[0]} (sha256 in SHA256SUMS)\n"
        for part, text in UNLAB_TEXT.items())
    assert sorted(os.listdir(out / "unlabeled")) == ["en", "zh"]  # no temporary directory left


@pytest.mark.parametrize("layout", ["nltk_data", "zips", "unpacked"])
def test_unlabeled_converts_the_nltk_data(tmp_path, capsys, monkeypatch, layout):
    monkeypatch.setattr(unlabeled, "UNLAB_SHA256", dict(UNLAB_SHA256))
    source = nltk_data(tmp_path / "nltk_data", corpora_dir=layout != "zips", unpacked=layout == "unpacked")
    out = tmp_path / "out"
    assert run("unlabeled", "--from", source, "--out", out, "--only", "en") == 0
    assert unlabeled_files(out) == {c: UNLAB_TEXT[c] for c in UNLAB_EN}
    where = source / "corpora" if layout != "zips" else source
    captured = capsys.readouterr()
    assert captured.err == ""
    assert (f"get_unlabeled: installed {out}/unlabeled/en/brown.txt.gz (4 lines) converted from NLTK data "
            f"{where}/brown{'' if layout == 'unpacked' else '.zip'}: the reference text (sha256 in SHA256SUMS)\n"
            in captured.out)


def test_unlabeled_from_text_that_is_not_the_reference_installs_it_with_a_warning(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(unlabeled, "UNLAB_SHA256", {**UNLAB_SHA256, "brown": "0" * 64})
    source = nltk_data(tmp_path / "nltk_data")
    out = tmp_path / "out"
    assert run("unlabeled", "--from", source, "--out", out, "--only", "brown") == 0
    assert unlabeled_files(out) == {"brown": UNLAB_TEXT["brown"]}
    captured = capsys.readouterr()
    assert captured.err == (f"get_unlabeled: warning: NLTK data {source}/corpora/brown.zip: not the reference text "
                            f"(its sha256 is {UNLAB_SHA256['brown']}, the reference's {'0' * 64}); "
                            "installing it all the same\n")
    assert captured.out.endswith(f"converted from NLTK data {source}/corpora/brown.zip: not the reference text "
                                 "(sha256 in SHA256SUMS)\n")


def serve_nltk(monkeypatch, zips):
    """Downloads from NLTK_URL get the zip of ZIPS[corpus] (None: no answer; an int: that HTTP status);
    returns the corpora asked for."""
    asked = []

    def download(url, dest, retries=2):
        corpus = url.removeprefix(f"{NLTK_URL}/").removesuffix(".zip")
        asked.append(corpus)
        if zips[corpus] is None:
            raise common.DownloadError("could not resolve host raw.githubusercontent.com (Temporary failure)")
        if isinstance(zips[corpus], int):
            raise common.DownloadError(f"the server answered HTTP {zips[corpus]} Not Found", False, zips[corpus])
        make_zip(Path(dest), zips[corpus])
    monkeypatch.setattr(common, "download", download)
    return asked


def test_unlabeled_download_is_converted(tmp_path, unlab_local, capsys, monkeypatch):
    assert unlabeled.NLTK_URL == NLTK_URL
    monkeypatch.setattr(unlabeled, "UNLAB_SHA256", dict(UNLAB_SHA256))
    asked = serve_nltk(monkeypatch, NLTK_ZIPS)
    out = installed_corpora(tmp_path / "out", unlab_local)
    capsys.readouterr()
    assert run("unlabeled", "--out", out) == 0
    assert asked == UNLAB_EN
    assert unlabeled_files(out) == UNLAB_TEXT
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines()[:2] == [
        f"get_unlabeled: downloading {NLTK_URL}/abc.zip",
        f"get_unlabeled: installed {out}/unlabeled/en/abc.txt.gz (3 lines) converted from download from "
        f"{NLTK_URL}/abc.zip: the reference text (sha256 in SHA256SUMS)"]
    assert captured.out.splitlines()[-1] == (
        f"get_unlabeled: installed {out}/unlabeled/zh/mixed.txt.gz (6 lines) built from the corpora in {out}: "
        "the reference text (sha256 in SHA256SUMS)")
    monkeypatch.setattr(common, "download", lambda *a, **k: pytest.fail("downloaded although up to date"))
    assert run("unlabeled", "--out", out) == 0


def test_unlabeled_download_failure_falls_back_to_the_local_copy(tmp_path, unlab_local, capsys, monkeypatch):
    monkeypatch.setattr(unlabeled, "UNLAB_SHA256", dict(UNLAB_SHA256))
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(unlab_local))
    # no answer from the server: the other files are not downloaded at all
    asked = serve_nltk(monkeypatch, dict.fromkeys(NLTK_ZIPS))
    out = tmp_path / "out"
    assert run("unlabeled", "--out", out) == 0
    assert asked == ["abc"]
    assert unlabeled_files(out) == UNLAB_TEXT
    captured = capsys.readouterr()
    assert captured.err == (f"get_unlabeled: warning: download {NLTK_URL}/abc.zip: could not resolve host "
                            "raw.githubusercontent.com (Temporary failure)\n")
    lines = captured.out.splitlines()
    assert lines[:5] == [
        f"get_unlabeled: downloading {NLTK_URL}/abc.zip",
        f"get_unlabeled: the download failed; falling back to the local copy in {unlab_local}",
        f"get_unlabeled: installed {out}/unlabeled/en/abc.txt.gz (3 lines) from local copy {unlab_local}/unlabeled/en, "
        "as the download failed (sha256 in SHA256SUMS)",
        f"get_unlabeled: not downloading {NLTK_URL}/brown.zip, as an earlier download failed; "
        f"falling back to the local copy in {unlab_local}",
        f"get_unlabeled: installed {out}/unlabeled/en/brown.txt.gz (4 lines) from local copy "
        f"{unlab_local}/unlabeled/en, as the download failed (sha256 in SHA256SUMS)"]
    assert lines[-2:] == [
        f"get_unlabeled: cannot build zh/mixed.txt.gz here: no cws-more/udc/train.txt in {out}; "
        f"falling back to the local copy in {unlab_local}",
        f"get_unlabeled: installed {out}/unlabeled/zh/mixed.txt.gz (6 lines) from local copy "
        f"{unlab_local}/unlabeled/zh, as the corpora to build it from are not installed (sha256 in SHA256SUMS)"]
    # an HTTP error is about one file only: the others are still downloaded; a zip that cannot be used falls back too
    asked = serve_nltk(monkeypatch, {**NLTK_ZIPS, "abc": 404, "brown": {"brown/README": b"no text\n"}})
    assert run("unlabeled", "--out", tmp_path / "out2", "--only", "en") == 0
    assert asked == UNLAB_EN
    assert unlabeled_files(tmp_path / "out2") == {c: UNLAB_TEXT[c] for c in UNLAB_EN}
    assert capsys.readouterr().err == (
        f"get_unlabeled: warning: download {NLTK_URL}/abc.zip: the server answered HTTP 404 Not Found\n"
        f"get_unlabeled: warning: download from {NLTK_URL}/brown.zip: could not read/convert it "
        "(no brown text files in it)\n")


def test_unlabeled_text_that_is_not_the_reference_gives_way_to_the_local_copy(tmp_path, unlab_local, capsys,
                                                                             monkeypatch):
    monkeypatch.setattr(unlabeled, "UNLAB_SHA256", {**UNLAB_SHA256, "webtext": "1" * 64, "zh": "2" * 64})
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(unlab_local))
    serve_nltk(monkeypatch, NLTK_ZIPS)
    out = installed_corpora(tmp_path / "out", unlab_local)
    capsys.readouterr()
    assert run("unlabeled", "--out", out, "--only", "webtext,zh") == 0
    assert unlabeled_files(out) == {"webtext": UNLAB_TEXT["webtext"], "zh": UNLAB_TEXT["zh"]}
    captured = capsys.readouterr()
    assert captured.err == (
        f"get_unlabeled: warning: download from {NLTK_URL}/webtext.zip: not the reference text (its sha256 is "
        f"{UNLAB_SHA256['webtext']}, the reference's {'1' * 64})\n"
        f"get_unlabeled: warning: the corpora in {out}: not the reference text (its sha256 is {UNLAB_SHA256['zh']}, "
        f"the reference's {'2' * 64})\n")
    assert (f"installed {out}/unlabeled/en/webtext.txt.gz (3 lines) from local copy {unlab_local}/unlabeled/en, "
            "as the downloaded text is not the reference text (sha256 in SHA256SUMS)\n") in captured.out
    assert (f"installed {out}/unlabeled/zh/mixed.txt.gz (6 lines) from local copy {unlab_local}/unlabeled/zh, "
            "as the text built here is not the reference text (sha256 in SHA256SUMS)\n") in captured.out
    # without a local copy, what was made here is installed after all
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(tmp_path / "none"))
    assert run("unlabeled", "--out", out, "--only", "webtext,zh", "--force") == 0
    assert unlabeled_files(out) == {"webtext": UNLAB_TEXT["webtext"], "zh": UNLAB_TEXT["zh"]}
    err = capsys.readouterr().err
    assert (f"get_unlabeled: warning: installing the text converted from download from {NLTK_URL}/webtext.zip "
            "all the same: there is no local copy to use instead\n") in err
    assert (f"get_unlabeled: warning: installing the text built from the corpora in {out} all the same: "
            "there is no local copy to use instead\n") in err


def test_unlabeled_zh_from_the_corpora_in_the_from_directory(tmp_path, local, capsys, monkeypatch):
    monkeypatch.setattr(unlabeled, "UNLAB_SHA256", dict(UNLAB_SHA256))
    assert run("unlabeled", "--from", local, "--out", tmp_path / "out", "--only", "zh") == 0
    assert unlabeled_files(tmp_path / "out") == {"zh": UNLAB_TEXT["zh"]}
    assert capsys.readouterr().out == (f"get_unlabeled: installed {tmp_path}/out/unlabeled/zh/mixed.txt.gz (6 lines) "
                                       f"built from the corpora in {local}: the reference text (sha256 in SHA256SUMS)\n")


def test_unlabeled_second_run_changes_nothing_and_force_reinstalls(tmp_path, unlab_local, capsys):
    out = tmp_path / "out"
    argv = ["unlabeled", "--from", unlab_local, "--out", out]
    before = installed(out, *argv)
    capsys.readouterr()
    for again in (argv, argv[:1] + argv[3:]):  # (without --from: no download when up to date)
        assert run(*again) == 0 and tree(out) == before
        assert capsys.readouterr().out == "".join(
            f"get_unlabeled: up to date: {out}/unlabeled/{unlabeled.unlab_name(part)} matches its SHA256SUMS; "
            "nothing to do (--force to reinstall)\n" for part in UNLAB_TEXT)
    # a modified file is noticed and reinstalled, the others stay as they are
    with open(out / "unlabeled" / "en" / "inaugural.txt.gz", "ab") as f:
        f.write(b"x")
    assert run(*argv) == 0
    assert ("get_unlabeled: reinstalling en/inaugural.txt.gz: inaugural.txt.gz does not match its sha256 in "
            "SHA256SUMS\n" in capsys.readouterr().out)
    assert unlabeled_files(out) == UNLAB_TEXT
    rewritten = {k for k, v in tree(out).items() if v[2] != before[k][2]}
    assert rewritten == {"unlabeled/en/inaugural.txt.gz", "unlabeled/en/SHA256SUMS"}
    before = installed(out, *argv)
    assert run(*argv, "--force") == 0
    assert_rewritten(before, tree(out))


def test_unlabeled_files_are_world_readable_whatever_the_umask(tmp_path, unlab_local, monkeypatch):
    monkeypatch.setattr(unlabeled, "UNLAB_SHA256", dict(UNLAB_SHA256))
    previous = os.umask(0o077)
    try:
        assert run("unlabeled", "--from", unlab_local, "--out", tmp_path / "out", "--only", "en") == 0
        assert run("unlabeled", "--from", unlab_local, "--out", tmp_path / "out", "--only", "zh", "--force") == 0
        assert run("unlabeled", "--from", nltk_data(tmp_path / "nltk"), "--out", tmp_path / "out2", "--only", "abc") == 0
    finally:
        os.umask(previous)
    files = [p for p in tmp_path.glob("out*/**/*") if p.is_file()]
    assert len(files) == 6 + 1 + 1 + 1 + 1 + 1
    assert {p.stat().st_mode & 0o777 for p in files} == {0o644}


@pytest.mark.parametrize("only, parts", [("en", UNLAB_EN), ("zh", ["zh"]), ("brown,zh", ["brown", "zh"]),
                                         ("abc,en", UNLAB_EN)])
def test_unlabeled_only(tmp_path, unlab_local, only, parts):
    out = tmp_path / "out"
    assert run("unlabeled", "--from", unlab_local, "--out", out, "--only", only) == 0
    assert unlabeled_files(out) == {p: UNLAB_TEXT[p] for p in parts}
    # another part later: the manifest keeps the earlier ones
    assert run("unlabeled", "--from", unlab_local, "--out", out, "--only", "webtext") == 0
    assert unlabeled_files(out) == {p: UNLAB_TEXT[p] for p in [*parts, "webtext"]}


UNLAB_HINT = ("Point --from at the local copy (a directory with unlabeled/, an unlabeled/ directory, or its\n"
              "en/ or zh/ directory; for English also an nltk_data directory), e.g.:\n"
              "  bash data_scripts/get_unlabeled.sh --from ../shared/data\n")


def test_unlabeled_failure_lists_what_was_tried(tmp_path, unlab_local, capsys):
    out = tmp_path / "out"
    assert run("unlabeled", "--out", out, "--only", "abc,zh") == 1
    assert capsys.readouterr().err.endswith(
        "get_unlabeled: error: could not obtain en/abc.txt.gz zh/mixed.txt.gz. Tried:\n"
        f"  - download {NLTK_URL}/abc.zip: network disabled in the tests\n"
        f"  - local copy {tmp_path}/no-local-copy: no such directory\n"
        f"  - build from the corpora in {out}: no cws-more/udc/train.txt, cws-more/wtb/train.txt, "
        "cws-more/zx/train.txt, sighan2008-sxu/train.txt, sighan2005/msr_test.utf8\n" + UNLAB_HINT)
    assert not out.exists()
    # a local copy without some of the files: the others are installed
    partial = local_unlabeled(tmp_path / "partial", ["abc", "brown"])
    assert run("unlabeled", "--from", partial / "unlabeled" / "en", "--out", out, "--only", "brown,inaugural,zh") == 1
    assert capsys.readouterr().err == (
        "get_unlabeled: error: could not obtain en/inaugural.txt.gz zh/mixed.txt.gz. Tried:\n"
        f"  - local copy {partial}/unlabeled/en: no inaugural.txt[.gz] in it or in its en/ or unlabeled/en/ "
        "subdirectory, nor the NLTK data inaugural.zip or inaugural/ in it or in its corpora/ subdirectory\n"
        f"  - local copy {partial}/unlabeled/en: no mixed.txt[.gz] in it or in its zh/ or unlabeled/zh/ subdirectory, "
        "nor the corpora to build it from (no cws-more/udc/train.txt, cws-more/wtb/train.txt, cws-more/zx/train.txt, "
        "sighan2008-sxu/train.txt, sighan2005/msr_test.utf8)\n"
        f"{UNLAB_HINT}(installed: brown; to ask for these only, add --only brown)\n")
    assert unlabeled_files(out) == {"brown": UNLAB_TEXT["brown"]}


def test_unlabeled_interrupted_install_leaves_no_partial_files(tmp_path, unlab_local, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "out"
    before = installed(out, "unlabeled", "--from", unlab_local, "--out", out)
    real_copy = common.copy_gz
    calls = []

    def interrupted(src, path):
        calls.append(src)
        if len(calls) == 3:
            Path(path).write_bytes(b"half")
            raise KeyboardInterrupt
        return real_copy(src, path)
    monkeypatch.setattr(common, "copy_gz", interrupted)
    assert run("unlabeled", "--from", unlab_local, "--out", out, "--force") == 130
    after = tree(out)
    # abc and brown were reinstalled (the same bytes), nothing else changed, no temporary file is left
    assert {k: v[:2] for k, v in after.items()} == {k: v[:2] for k, v in before.items()}
    assert {k for k in after if after[k][2] != before[k][2]} <= {"unlabeled/en/abc.txt.gz", "unlabeled/en/brown.txt.gz",
                                                                  "unlabeled/en/SHA256SUMS"}
    calls.clear()
    assert run("unlabeled", "--from", unlab_local, "--out", tmp_path / "new", "--only", "inaugural") == 0
    calls.clear()
    calls.append("skip two")
    assert run("unlabeled", "--from", unlab_local, "--out", tmp_path / "new", "--only", "zh,abc") == 130
    assert sorted(p.relative_to(tmp_path / "new").as_posix() for p in (tmp_path / "new").rglob("*")) == [
        "unlabeled", "unlabeled/en", "unlabeled/en/SHA256SUMS", "unlabeled/en/abc.txt.gz",
        "unlabeled/en/inaugural.txt.gz"]
    assert os.listdir(tmp_path / "tmp") == []


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
    (["unlabeled", "--only"],
     "get_unlabeled: error: --only needs en, zh, abc, brown, inaugural, movie_reviews, state_union or webtext"),
    (["unlabeled", "--only", "brown,fr"],
     "get_unlabeled: error: --only takes en, zh, abc, brown, inaugural, movie_reviews, state_union or webtext "
     "(or a comma-separated list of them), not 'brown,fr'"),
    (["unlabeled", "--out"], "get_unlabeled: error: --out needs a directory (try --help)"),
    (["unlabeled", "--from", "x", "--bogus"], "get_unlabeled: error: unknown argument: --bogus (try --help)"),
    (["conll2001"], "corpora.py: error: argument command: invalid choice"),
    ([], "Usage: python3 data_scripts/corpora.py conll2000"),
], ids=["unknown", "stray", "from-without-value", "flag-with-value", "out-without-value", "only-without-value",
        "only-wrong", "abbreviation", "cws-only-without-value", "cws-only-wrong", "cws-from-without-value",
        "unlabeled-only-without-value", "unlabeled-only-wrong", "unlabeled-out-without-value", "unlabeled-unknown",
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
    (["unlabeled", "--help"],
     "Usage: bash data_scripts/get_unlabeled.sh [--from DIR] [--out DIR] [--only WHICH] [--force]"),
    (["--help"], "Usage: python3 data_scripts/corpora.py conll2000  [--from DIR]  [--out DIR] [--force]"),
], ids=["conll2000", "sighan2005", "cws-more", "unlabeled", "top"])
def test_help(capsys, argv, first_line):
    assert run(*argv) == 0
    assert capsys.readouterr().out.splitlines()[0] == first_line


def test_registry_runs_each_family_module():
    assert list(corpora.COMMANDS) == ["conll2000", "sighan2005", "cws-more", "unlabeled", "pos-more", "heldout"]
    for name, module, prog, install in [("conll2000", conll2000, "get_conll2000", "install_conll2000"),
                                        ("sighan2005", sighan, "get_sighan2005", "install_sighan"),
                                        ("cws-more", cws_more, "get_cws_more", "install_cws_more"),
                                        ("unlabeled", unlabeled, "get_unlabeled", "install_unlabeled"),
                                        ("pos-more", pos_more, "get_pos_more", "install_pos_more"),
                                        ("heldout", corpora.heldout, "get_heldout", "install_heldout")]:
        command = corpora.COMMANDS[name]
        assert command.prog == prog
        assert command.usage.startswith(f"Usage: bash data_scripts/{prog}.sh ")
        assert command.install is getattr(module, install)
        assert (command.only is None) == (name == "conll2000")
        # the shared functions are looked up in common when called, so that patching them there reaches every family
        assert not {"download", "download_files", "extract", "file_digest", "DATA_DIR"} & set(vars(module))


def test_script_runs_from_anywhere_without_its_directory_on_sys_path(tmp_path):
    # -I: the script's directory is not put on sys.path, nor is the current directory
    proc = subprocess.run([sys.executable, "-I", str(SCRIPTS / "corpora.py"), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, corpora.TOP_USAGE, "")
    proc = subprocess.run([sys.executable, "-I", str(SCRIPTS / "corpora.py"), "cws-more", "--only", "sxu"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (
        2, "get_cws_more: error: --only takes udc, wtb or zx (or a comma-separated list of them), not 'sxu'\n")


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
    local_unlabeled(local, ["brown"])
    proc = _script("get_unlabeled.sh", "--only", "brown", "--from", local, "--out", "out", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert unlabeled_files(elsewhere / "out") == {"brown": UNLAB_TEXT["brown"]}
    # zh is built from the fixture's corpora, which is not the real reference text: taken from --from, it is
    # installed all the same, with a warning
    proc = _script("get_unlabeled.sh", "--only", "zh", "--from", local, "--out", "out", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert "not the reference text" in proc.stderr


# ---------------------------------------------------------------- pos-more: part-of-speech corpora

POS_CORPORA = ["pt-macmorpho", "es-cast3lb", "eu-3lb", "en-masc", "en-npschat", "hi-indian", "bn-indian", "mr-indian",
               "te-indian"]
POS_PACKAGES = ["mac_morpho", "conll2007", "masc_tagged", "nps_chat", "indian"]


def pos_filler(prefix, n, tag):
    """N sentences [(word, TAG), (".", ".")] to make up ten sentences of a corpus."""
    return [[(f"{prefix}{i}", tag), (".", ".")] for i in range(n)]


def conll_x(sentences):
    """SENTENCES in the CoNLL-X format: ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL."""
    return "".join("".join(f"{i}\t{w}\t{w.lower()}\t{t[:1]}\t{t}\t_\t0\tROOT\t_\t_\n" for i, (w, t) in enumerate(s, 1))
                   + "\n" for s in sentences)


def word_tag_lines(sentences):
    return "".join(" ".join(f"{w}_{t}" for w, t in s) + "\n" for s in sentences)


def nps_posts(sentences):
    return "".join('<Post class="Statement" user="u">x<terminals>'
                   + "".join(f'<t pos="{t}" word="{w}"/>' for w, t in s) + "</terminals></Post>\n" for s in sentences)


MACMORPHO_FILLER, ES_FILLER, EU_FILLER = pos_filler("palavra", 7, "N"), pos_filler("palabra", 8, "nc"), \
    pos_filler("hitz", 9, "IZE_ARR")
MASC_FILLER, NPS_FILLER = pos_filler("word", 7, "NN"), pos_filler("lol", 8, "UH")
INDIAN = {"hindi": ("hi", "NN"), "bangla": ("bn", "VM"), "marathi": ("mr", "NNP"), "telugu": ("te", "QC")}
# The five NLTK packages, with out-of-order members that are not text: package -> {path in its zip: bytes}
POS_NLTK_ZIPS = {
    "mac_morpho": {
        "mac_morpho/README": b"Mac-Morpho\n",
        # a sentence ends at the tag ., not at another punctuation mark; the last one of a file is kept
        "mac_morpho/b.txt": ("".join(f"{w}_{t}\n" for s in MACMORPHO_FILLER[3:] for w, t in s)
                             + "fim_N\n").encode("latin-1"),
        "mac_morpho/a.txt": ("Jersei_N\natinge_V\nm\xe9dia_N\nem_PREP|+\na_ART\nS\xe3o Paulo_NPROP\n._.\n\n"
                             "Cr$_CUR\n1,4_NUM\n a_b_N\n?_?\n._.\n"
                             + "".join(f"{w}_{t}\n" for s in MACMORPHO_FILLER[:3] for w, t in s)).encode("latin-1"),
    },
    "conll2007": {
        "conll2007/README": b"CoNLL 2007\n",
        # read in the order of the names: test, then train
        "conll2007/esp.train": conll_x(ES_FILLER).encode(),
        "conll2007/esp.test": ("1\tEl\tel\td\tda\tgen=m|num=s\t2\tspec\t_\t_\n"
                               "1\tde vez\tde_vez\ts\tsp\t_\t0\tROOT\t_\t_\n"
                               "2\t\u00edndice\t\u00edndice\tn\tnc\t_\t0\tROOT\t_\t_\n\n\n"
                               "1\tSe\tse\tp\tp0\t_\t0\tROOT\t_\t_\n").encode(),
        "conll2007/eus.test": conll_x(EU_FILLER[:2]).replace("\n", "\r\n").encode("latin-1"),
        "conll2007/eus.train": (conll_x([[("i\xf1igo", "IZE_IZB"), ("eta", "LOT_JNT")]])
                                + conll_x(EU_FILLER[2:])).encode("latin-1"),
    },
    "masc_tagged": {
        "masc_tagged/categories.txt": b"spoken/s.txt spoken\n",
        "masc_tagged/written/w.txt": ("December_NNP 1998_CD\n\nX_M_L_NNP is_VBZ\tone_CD\n"
                                      + word_tag_lines(MASC_FILLER)).encode(),
        "masc_tagged/spoken/s.txt": "\ufeffYeah_UH ._.\n".encode(),
    },
    "nps_chat": {
        "nps_chat/README": b"NPS Chat\n",
        "nps_chat/11-08-20s_705posts.xml": ('<?xml version="1.0" encoding="UTF-8"?>\n<Session><Posts>\n'
                                            + nps_posts(NPS_FILLER) + "</Posts></Session>\n").encode(),
        "nps_chat/10-19-20s_706posts.xml": (
            '<?xml version="1.0" encoding="UTF-8"?>\n<Session><Posts>\n'
            '<Post class="Statement" user="10-19-20sUser7">now im left<terminals><t pos="RB" word="now"/>'
            '<t pos="PRP" word="im"/><t pos="VBD" word="left"/></terminals></Post>\n'
            '<Post class="System" user="u2">JOIN<terminals/></Post>\n'  # no terminals: no sentence
            '<Post class="Emotion" user="u3">:P<terminals><t pos="UH" word=":P"/><t pos="NNP" word="New York"/>'
            '<t pos="^NN" word="&gt;_&gt;"/></terminals></Post>\n</Posts></Session>\n').encode(),
    },
    "indian": {
        **{f"indian/{name}.pos": (f'<Corpora type="POS" language="{name}">\n<Sentence id="1">\n\n'
                                  + word_tag_lines(pos_filler(code, 10, tag))).encode()
           for name, (code, tag) in INDIAN.items()},
        "indian/README": b"Indian languages POS corpus\n",
    },
}
# What must come of them: corpus -> its ten sentences
POS_SENTENCES = {
    "pt-macmorpho": [[("Jersei", "N"), ("atinge", "V"), ("m\xe9dia", "N"), ("em", "PREP"), ("a", "ART"),
                      ("S\xe3o_Paulo", "NPROP"), (".", ".")],
                     [("Cr$", "CUR"), ("1,4", "NUM"), ("a_b", "N"), ("?", "?"), (".", ".")],
                     *MACMORPHO_FILLER, [("fim", "N")]],
    "es-cast3lb": [[("El", "da"), ("de_vez", "sp"), ("\u00edndice", "nc")], [("Se", "p0")], *ES_FILLER],
    "eu-3lb": [*EU_FILLER[:2], [("i\xf1igo", "IZE_IZB"), ("eta", "LOT_JNT")], *EU_FILLER[2:]],
    "en-masc": [[("Yeah", "UH"), (".", ".")], [("December", "NNP"), ("1998", "CD")],
                [("X_M_L", "NNP"), ("is", "VBZ"), ("one", "CD")], *MASC_FILLER],
    "en-npschat": [[("now", "RB"), ("im", "PRP"), ("left", "VBD")], [(":P", "UH"), ("New_York", "NNP"), (">_>", "^NN")],
                   *NPS_FILLER],
    **{f"{code}-indian": pos_filler(code, 10, tag) for code, tag in INDIAN.values()},
}


def pos_text(sentences):
    return "".join("".join(f"{w} {t}\n" for w, t in s) + "\n" for s in sentences)


# corpus -> {installed file: its text}: ten sentences give 8, 1 and 1
POS_TEXT = {corpus: {"train.txt.gz": pos_text(s[:8]), "dev.txt.gz": pos_text(s[8:9]), "test.txt.gz": pos_text(s[9:])}
            for corpus, s in POS_SENTENCES.items()}
POS_SHA256 = {corpus: tuple(hashlib.sha256(text.encode()).hexdigest() for text in files.values())
              for corpus, files in POS_TEXT.items()}


def local_pos(root, corpora=POS_CORPORA, compress=True):
    """ROOT/pos-more/<c>/ laid out as the local copy is."""
    for corpus in corpora:
        for name, text in POS_TEXT[corpus].items():
            path = root / "pos-more" / corpus / name
            if compress:
                write(path, gzip_like_the_local_copy(name.removesuffix(".gz"), text.encode()))
            else:
                write(path.with_suffix(""), text.encode())
    return root


def pos_files(out):
    """{corpus: {name: text}} installed under OUT/pos-more, checking the SHA256SUMS and the modes."""
    found = {}
    for d in sorted((Path(out) / "pos-more").iterdir(), key=lambda d: POS_CORPORA.index(d.name)):
        files = {name: (d / name).read_bytes() for name in ("train.txt.gz", "dev.txt.gz", "test.txt.gz")}
        assert (d / "SHA256SUMS").read_text() == manifest_text(files)
        assert sorted(os.listdir(d)) == sorted([*files, "SHA256SUMS"])
        assert {(d / name).stat().st_mode & 0o777 for name in os.listdir(d)} == {0o644}
        found[d.name] = {name: gzip.decompress(data).decode() for name, data in files.items()}
    return found


@pytest.fixture
def pos_local(tmp_path, monkeypatch):
    """A local copy with pos-more/, and the fixture's text as the reference text."""
    monkeypatch.setattr(pos_more, "POS_SHA256", dict(POS_SHA256))
    return local_pos(tmp_path / "pos-local")


def serve_pos(monkeypatch, zips):
    """Downloads from NLTK_URL get the zip of ZIPS[package] (None: no answer; an int: that HTTP status);
    returns the packages asked for."""
    asked = []

    def download(url, dest, retries=2):
        package = url.removeprefix(f"{NLTK_URL}/").removesuffix(".zip")
        asked.append(package)
        if zips[package] is None:
            raise common.DownloadError("could not resolve host raw.githubusercontent.com (Temporary failure)")
        if isinstance(zips[package], int):
            raise common.DownloadError(f"the server answered HTTP {zips[package]} Not Found", False, zips[package])
        make_zip(Path(dest), zips[package])
    monkeypatch.setattr(common, "download", download)
    return asked


@pytest.mark.parametrize("corpus", POS_CORPORA)
def test_pos_nltk_formats_are_converted(tmp_path, corpus):
    package, sentences = pos_more.POS_NLTK[corpus]
    zipped = make_zip(tmp_path / f"{package}.zip", POS_NLTK_ZIPS[package])
    assert [pos_more.conll_lines(s) for s in sentences(str(zipped))] == \
        ["".join(f"{w} {t}\n" for w, t in s) for s in POS_SENTENCES[corpus]]
    for name, data in POS_NLTK_ZIPS[package].items():  # the directory the zip unpacks to gives the same
        write(tmp_path / "unpacked" / name, data)
    assert list(sentences(str(tmp_path / "unpacked" / package))) == list(sentences(str(zipped)))


def test_pos_conversion_details():
    assert pos_more.tagged_token("a_b__NN") == ("a_b_", "NN")
    for bad in ("word", "_NN", "word_"):
        with pytest.raises(ValueError, match="not a word_TAG token"):
            pos_more.tagged_token(bad)
    assert pos_more.conll_lines([("New  York", "NNP"), (" x\t", "NN")]) == "New_York NNP\nx NN\n"
    with pytest.raises(ValueError, match="a blank word or tag"):
        pos_more.conll_lines([(" ", "NN")])
    # 80/10/10 by sentence order, rounded down as in the local copy (its README's numbers of sentences)
    for train, dev, test in [(8, 1, 1), (40756, 5094, 5095), (2809, 351, 352), (716, 90, 90), (795, 99, 100)]:
        parts = pos_more.split_sentences(list(range(train + dev + test)))
        assert [len(p) for p in parts] == [train, dev, test]
        assert parts[0] + parts[1] + parts[2] == list(range(train + dev + test))


def test_pos_installs_the_local_copy(tmp_path, pos_local, capsys):
    out = tmp_path / "out"
    assert run("pos-more", "--from", pos_local, "--out", out) == 0
    assert pos_files(out) == POS_TEXT
    for corpus in POS_CORPORA:  # the compressed files are copied as they are
        for name in POS_TEXT[corpus]:
            assert (out / "pos-more" / corpus / name).read_bytes() == \
                (pos_local / "pos-more" / corpus / name).read_bytes()
    assert capsys.readouterr().out == "".join(
        f"get_pos_more: installed 3 files into {out}/pos-more/{corpus} from local copy {pos_local}/pos-more/{corpus} "
        "(sha256 in SHA256SUMS)\n" for corpus in POS_CORPORA)
    assert sorted(os.listdir(out / "pos-more")) == sorted(POS_CORPORA)  # no temporary directory left
    # the pos-more/ directory itself, or uncompressed files
    assert run("pos-more", "--from", pos_local / "pos-more", "--out", tmp_path / "out2", "--only", "eu-3lb") == 0
    assert pos_files(tmp_path / "out2") == {"eu-3lb": POS_TEXT["eu-3lb"]}
    plain = local_pos(tmp_path / "plain", ["en-masc"], compress=False)
    assert run("pos-more", "--from", plain, "--out", tmp_path / "out3", "--only", "en-masc") == 0
    assert pos_files(tmp_path / "out3") == {"en-masc": POS_TEXT["en-masc"]}


def test_pos_second_run_changes_nothing_and_force_reinstalls(tmp_path, pos_local, capsys):
    out = tmp_path / "out"
    argv = ["pos-more", "--from", pos_local, "--out", out]
    before = installed(out, *argv)
    capsys.readouterr()
    for again in (argv, argv[:1] + argv[3:]):  # (without --from: no download when up to date)
        assert run(*again) == 0 and tree(out) == before
        assert capsys.readouterr().out == "".join(f"get_pos_more: up to date: {out}/pos-more/{corpus} matches its "
                                                  "SHA256SUMS; nothing to do (--force to reinstall)\n"
                                                  for corpus in POS_CORPORA)
    # a corrupted file is noticed and reinstalled, the other corpora stay as they are
    path = out / "pos-more" / "bn-indian" / "dev.txt.gz"
    path.write_bytes(path.read_bytes()[:-3] + b"xyz")
    assert run(*argv) == 0
    assert ("get_pos_more: reinstalling bn-indian: dev.txt.gz does not match its sha256 in SHA256SUMS\n"
            in capsys.readouterr().out)
    assert pos_files(out) == POS_TEXT
    rewritten = {k for k, v in tree(out).items() if v[2] != before[k][2]}
    assert rewritten == {f"pos-more/bn-indian/{name}" for name in ("train.txt.gz", "dev.txt.gz", "test.txt.gz",
                                                                   "SHA256SUMS")}
    before = installed(out, *argv)
    assert run(*argv, "--force") == 0
    assert_rewritten(before, tree(out))


@pytest.mark.parametrize("only", ["pt-macmorpho", "eu-3lb,te-indian", "hi-indian,en-masc,hi-indian"])
def test_pos_only(tmp_path, pos_local, only):
    assert run("pos-more", "--from", pos_local, "--out", tmp_path / "out", "--only", only) == 0
    assert pos_files(tmp_path / "out") == {c: POS_TEXT[c] for c in POS_CORPORA if c in only.split(",")}


def test_pos_download_is_converted(tmp_path, capsys, monkeypatch):
    assert pos_more.POS_CORPORA == tuple(POS_CORPORA) and common.NLTK_URL == NLTK_URL
    monkeypatch.setattr(pos_more, "POS_SHA256", dict(POS_SHA256))
    asked = serve_pos(monkeypatch, POS_NLTK_ZIPS)
    out = tmp_path / "out"
    assert run("pos-more", "--out", out) == 0
    assert asked == POS_PACKAGES  # each package once, though conll2007 and indian give several corpora
    assert pos_files(out) == POS_TEXT
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines()[:5] == [
        f"get_pos_more: downloading {NLTK_URL}/mac_morpho.zip",
        f"get_pos_more: installed 3 files into {out}/pos-more/pt-macmorpho from download from "
        f"{NLTK_URL}/mac_morpho.zip, converted: 10 sentences, the reference text (sha256 in SHA256SUMS)",
        f"get_pos_more: downloading {NLTK_URL}/conll2007.zip",
        f"get_pos_more: installed 3 files into {out}/pos-more/es-cast3lb from download from {NLTK_URL}/conll2007.zip, "
        "converted: 10 sentences, the reference text (sha256 in SHA256SUMS)",
        f"get_pos_more: installed 3 files into {out}/pos-more/eu-3lb from download from {NLTK_URL}/conll2007.zip, "
        "converted: 10 sentences, the reference text (sha256 in SHA256SUMS)"]
    monkeypatch.setattr(common, "download", lambda *a, **k: pytest.fail("downloaded although up to date"))
    assert run("pos-more", "--out", out) == 0


def test_pos_download_failure_falls_back_to_the_local_copy(tmp_path, pos_local, capsys, monkeypatch):
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(pos_local))
    # no answer from the server: the other packages are not downloaded at all
    asked = serve_pos(monkeypatch, dict.fromkeys(POS_NLTK_ZIPS))
    out = tmp_path / "out"
    assert run("pos-more", "--out", out, "--only", "pt-macmorpho,en-masc") == 0
    assert asked == ["mac_morpho"]
    assert pos_files(out) == {c: POS_TEXT[c] for c in ("pt-macmorpho", "en-masc")}
    captured = capsys.readouterr()
    assert captured.err == (f"get_pos_more: warning: download {NLTK_URL}/mac_morpho.zip: could not resolve host "
                            "raw.githubusercontent.com (Temporary failure)\n")
    assert captured.out.splitlines() == [
        f"get_pos_more: downloading {NLTK_URL}/mac_morpho.zip",
        f"get_pos_more: the download failed; falling back to the local copy in {pos_local}",
        f"get_pos_more: installed 3 files into {out}/pos-more/pt-macmorpho from local copy "
        f"{pos_local}/pos-more/pt-macmorpho, as the download failed (sha256 in SHA256SUMS)",
        f"get_pos_more: not downloading {NLTK_URL}/masc_tagged.zip, as an earlier download failed; "
        f"falling back to the local copy in {pos_local}",
        f"get_pos_more: installed 3 files into {out}/pos-more/en-masc from local copy "
        f"{pos_local}/pos-more/en-masc, as the download failed (sha256 in SHA256SUMS)"]
    # an HTTP error is about one package only; a zip that cannot be converted falls back too
    broken = {"masc_tagged/written/w.txt": b"December_NNP 1998\n"}
    asked = serve_pos(monkeypatch, {**POS_NLTK_ZIPS, "conll2007": 404, "masc_tagged": broken})
    assert run("pos-more", "--out", tmp_path / "out2") == 0
    assert asked == POS_PACKAGES
    assert pos_files(tmp_path / "out2") == POS_TEXT
    err = capsys.readouterr().err
    assert err.count(f"get_pos_more: warning: download {NLTK_URL}/conll2007.zip: the server answered HTTP 404 "
                     "Not Found\n") == 2  # es-cast3lb and eu-3lb
    assert (f"get_pos_more: warning: download from {NLTK_URL}/masc_tagged.zip: could not read/convert en-masc "
            "(not a word_TAG token: '1998')\n") in err


def test_pos_text_that_is_not_the_reference_gives_way_to_the_local_copy(tmp_path, pos_local, capsys, monkeypatch):
    monkeypatch.setattr(pos_more, "POS_SHA256", {**POS_SHA256, "hi-indian": (POS_SHA256["hi-indian"][0], "1" * 64,
                                                                             POS_SHA256["hi-indian"][2])})
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(pos_local))
    serve_pos(monkeypatch, POS_NLTK_ZIPS)
    out = tmp_path / "out"
    assert run("pos-more", "--out", out, "--only", "hi-indian,bn-indian") == 0
    assert pos_files(out) == {c: POS_TEXT[c] for c in ("hi-indian", "bn-indian")}
    captured = capsys.readouterr()
    assert captured.err == (f"get_pos_more: warning: download from {NLTK_URL}/indian.zip: not the reference text "
                            "(dev.txt.gz differs from the local copy's)\n")
    assert (f"installed 3 files into {out}/pos-more/hi-indian from local copy {pos_local}/pos-more/hi-indian, "
            "as the downloaded text is not the reference text (sha256 in SHA256SUMS)\n") in captured.out
    assert (f"installed 3 files into {out}/pos-more/bn-indian from download from {NLTK_URL}/indian.zip, "
            "converted: 10 sentences, the reference text (sha256 in SHA256SUMS)\n") in captured.out
    # without a local copy, the converted text is installed after all
    monkeypatch.setenv("SEQBIL_LOCAL_DATA", str(tmp_path / "none"))
    assert run("pos-more", "--out", out, "--only", "hi-indian", "--force") == 0
    assert pos_files(out)["hi-indian"] == POS_TEXT["hi-indian"]
    captured = capsys.readouterr()
    assert (f"get_pos_more: warning: installing hi-indian converted from download from {NLTK_URL}/indian.zip all "
            "the same: there is no local copy to use instead\n") in captured.err
    assert captured.out.endswith(f"from download from {NLTK_URL}/indian.zip, converted: not the reference text "
                                 "(sha256 in SHA256SUMS)\n")


POS_HINT = ("Point --from at the local copy (a directory with pos-more/, or a pos-more/ directory), e.g.:\n"
            "  bash data_scripts/get_pos_more.sh --from ../shared/data\n")


def test_pos_failure_lists_what_was_tried(tmp_path, capsys):
    out = tmp_path / "out"
    assert run("pos-more", "--out", out, "--only", "en-npschat") == 1
    assert capsys.readouterr().err.endswith(
        "get_pos_more: error: could not obtain en-npschat. Tried:\n"
        f"  - download {NLTK_URL}/nps_chat.zip: network disabled in the tests\n"
        f"  - local copy {tmp_path}/no-local-copy: no such directory\n" + POS_HINT)
    assert not out.exists()
    # a local copy without some of the corpora: the others are installed
    partial = local_pos(tmp_path / "partial", ["mr-indian"])
    assert run("pos-more", "--from", partial, "--out", out, "--only", "mr-indian,te-indian") == 1
    assert capsys.readouterr().err == (
        "get_pos_more: error: could not obtain te-indian. Tried:\n"
        f"  - local copy {partial}: no te-indian/{{train,dev,test}}.txt[.gz] in it or in its pos-more/ subdirectory\n"
        f"{POS_HINT}(installed: mr-indian; to ask for these only, add --only mr-indian)\n")
    assert pos_files(out) == {"mr-indian": POS_TEXT["mr-indian"]}


def test_pos_interrupted_install_leaves_no_partial_files(tmp_path, pos_local, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "out"
    before = installed(out, "pos-more", "--from", pos_local, "--out", out)
    real_copy = common.copy_gz
    calls = []

    def interrupted(src, path):
        calls.append(src)
        if len(calls) == 5:  # the second corpus's dev file
            Path(path).write_bytes(b"half")
            raise KeyboardInterrupt
        return real_copy(src, path)
    monkeypatch.setattr(common, "copy_gz", interrupted)
    assert run("pos-more", "--from", pos_local, "--out", out, "--force") == 130
    after = tree(out)
    assert {k: v[:2] for k, v in after.items()} == {k: v[:2] for k, v in before.items()}
    assert {k for k in after if after[k][2] != before[k][2]} <= {f"pos-more/pt-macmorpho/{name}" for name in (
        "train.txt.gz", "dev.txt.gz", "test.txt.gz", "SHA256SUMS")}
    calls.clear()
    assert run("pos-more", "--from", pos_local, "--out", tmp_path / "new") == 130
    assert sorted(p.relative_to(tmp_path / "new").as_posix() for p in (tmp_path / "new").rglob("*")) == [
        "pos-more", "pos-more/pt-macmorpho", *(f"pos-more/pt-macmorpho/{name}" for name in (
            "SHA256SUMS", "dev.txt.gz", "test.txt.gz", "train.txt.gz"))]
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("argv, message", [
    (["pos-more", "--only"], "get_pos_more: error: --only needs pt-macmorpho, es-cast3lb, eu-3lb, en-masc, en-npschat, "
                             "hi-indian, bn-indian, mr-indian or te-indian"),
    (["pos-more", "--only", "hi-indian,hindi"], "get_pos_more: error: --only takes pt-macmorpho, es-cast3lb, eu-3lb, "
     "en-masc, en-npschat, hi-indian, bn-indian, mr-indian or te-indian (or a comma-separated list of them), "
     "not 'hi-indian,hindi'"),
    (["pos-more", "--from"], "get_pos_more: error: --from needs a directory (try --help)"),
    (["pos-more", "--bogus"], "get_pos_more: error: unknown argument: --bogus (try --help)"),
])
def test_pos_bad_command_line_exits_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert run(*argv) == 2
    assert capsys.readouterr().err.startswith(message)
    assert os.listdir(tmp_path) == []


def test_pos_help_and_shell_entry_point(tmp_path, pos_local, capsys):
    assert run("pos-more", "--help") == 0
    assert capsys.readouterr().out.splitlines()[0] == \
        "Usage: bash data_scripts/get_pos_more.sh [--from DIR] [--out DIR] [--only WHICH] [--force]"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    proc = _script("get_pos_more.sh", "--only", "te-indian", "--from", pos_local, "--out", "out", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert pos_files(elsewhere / "out") == {"te-indian": POS_TEXT["te-indian"]}
