"""tmagemm.cache (python/tmagemm/cache.py): listing, clearing, export and import of the kernel cache and the tuning
database under TMAGEMM_CACHE_DIR, as `tmagemm cache` does. CPU test (no GPU is needed for any of it)."""

import json
import math

import pytest

import tmagemm
from tmagemm import cache

DOC = {
    "version": 1,
    "entries": [
        {"key": "k-one", "winner": "persistent_tma_128x256x64_s3_c2",
         "timings": [{"choice": "persistent_tma_128x256x64_s3_c2", "ms": 0.5}, {"choice": "cublaslt_algo0", "ms": 0.6}],
         "tuned_at": "2026-12-02T00:00:00Z"},
        {"key": "k-two", "winner": "skinny_x", "timings": [{"choice": "skinny_x", "ms": None},
                                                           {"choice": "cublaslt_algo1", "ms": 0.25}]},
    ],
}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TMAGEMM_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_empty_listing_creates_nothing(cache_dir):
    info = cache.ls()
    assert info["cache_dir"] == str(cache_dir)
    assert info["cubins"] == 0 and info["entries"] == []
    assert not (cache_dir / "tuning.sqlite").exists()


def test_import_list_export_clear(cache_dir):
    assert cache.import_(json.dumps(DOC)) == 2
    entries = {e["key"]: e for e in cache.ls()["entries"]}
    assert set(entries) == {"k-one", "k-two"}
    assert entries["k-one"]["best_ms"] == 0.5 and entries["k-one"]["tuned_at"] == "2026-12-02T00:00:00Z"
    # A failed winner (ms null -> inf) falls back to the best finite time, as `tmagemm cache ls` prints it.
    assert math.isinf(entries["k-two"]["timings"]["skinny_x"]) and entries["k-two"]["best_ms"] == 0.25

    path = cache_dir / "export.json"
    text = cache.export(path)
    assert json.loads(path.read_text()) == json.loads(text)
    assert [e["key"] for e in json.loads(text)["entries"]] == ["k-one", "k-two"]

    assert cache.clear(kernels=False, tuning=True)["entries"] == 2
    assert cache.ls()["entries"] == []
    assert cache.import_(path) == 2  # a path works as well as the text


def test_malformed_import_changes_nothing(cache_dir):
    cache.import_(json.dumps(DOC))
    bad = dict(DOC, version=2)
    with pytest.raises(tmagemm.InvalidArgumentError):
        cache.import_(json.dumps(bad))
    with pytest.raises(ValueError):
        cache.import_('{"version": 1, "entries": [{"key": "x"}]}')
    assert len(cache.ls()["entries"]) == 2


def test_kernel_files_are_counted_and_removed(cache_dir):
    kdir = cache_dir / "kernels"
    kdir.mkdir()
    (kdir / "aaaa.cubin").write_bytes(b"x" * 100)
    (kdir / "bbbb.cubin").write_bytes(b"y" * 28)
    (kdir / "cccc.cubin.tmp.1.2.3").write_bytes(b"z")  # a writer's temporary file is not a cubin
    info = cache.ls()
    assert info["kernel_dir"] == str(kdir) and info["cubins"] == 2 and info["cubin_bytes"] == 128
    result = cache.clear(kernels=True, tuning=False)
    assert result["cubins"] == 2 and result["cubin_bytes"] == 128
    assert sorted(p.name for p in kdir.iterdir()) == ["cccc.cubin.tmp.1.2.3"]


def test_stats_are_this_process_counters():
    # No GPU needed: the counters exist from the start, and reset sets the call counters to 0.
    s = cache.stats()
    for key in ("memo_hits", "bucket_hits", "db_hits", "db_misses", "tuned", "cached_only_misses", "heuristic",
                "out_of_memory_retries", "tunings_out_of_memory", "rank_tunings", "modules_loaded", "modules_kept", "modules_unloaded"):
        assert isinstance(s[key], int) and s[key] >= 0, key
    assert s["modules_kept"] <= s["modules_loaded"]
    cache.stats(reset=True)
    after = cache.stats()
    assert all(after[k] == 0 for k in ("memo_hits", "bucket_hits", "db_hits", "db_misses", "tuned", "cached_only_misses",
                                       "heuristic", "out_of_memory_retries", "tunings_out_of_memory",
                                       "rank_tunings"))


def test_preload_refuses_a_bad_model_before_any_gpu_work(cache_dir):
    # No GPU needed: the model file is read and checked first (a missing file, a bad field: the field and the rule).
    with pytest.raises(tmagemm.Error) as missing:
        cache.preload(cache_dir / "none.json")
    assert "cannot read the model file" in str(missing.value)
    bad = cache_dir / "bad.json"
    bad.write_text('{"m": [1, 64], "weights": [{"n": 0, "k": 4096}]}')
    with pytest.raises(tmagemm.Error) as field:
        cache.preload(bad)
    assert "weights[0].n" in str(field.value)


def test_a_refused_cache_dir_is_refused_here_too(cache_dir):
    # The library refuses a cache dir its group or every user may write (jit::cache_dir_refusal); so does
    # tmagemm.cache, with the reason, and nothing in it is listed, exported, imported or removed.
    kdir = cache_dir / "kernels"
    kdir.mkdir()
    (kdir / "aaaa.cubin").write_bytes(b"x" * 10)
    cache_dir.chmod(0o777)
    try:
        for call in (cache.ls, cache.clear, cache.export, lambda: cache.import_(json.dumps(DOC))):
            with pytest.raises(tmagemm.InvalidArgumentError, match="cache dir refused: .* is writable by every user"):
                call()
        assert (kdir / "aaaa.cubin").exists()
        assert not (cache_dir / "tuning.sqlite").exists()
    finally:
        cache_dir.chmod(0o700)
    assert cache.ls()["cubins"] == 1  # private again: used
