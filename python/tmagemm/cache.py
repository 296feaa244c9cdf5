"""tmagemm.cache: the kernel cache (<cache dir>/kernels/*.cubin) and the tuning database (<cache dir>/tuning.sqlite),
as the `tmagemm cache` command has them. The cache dir follows TMAGEMM_CACHE_DIR (else ~/.cache/tmagemm). No GPU
needed. A cache dir the library refuses (owned by another user, or writable by its group or every user) is refused
here too: every function raises tmagemm.InvalidArgumentError with the reason."""

from __future__ import annotations

import math
from pathlib import Path

from . import _C


def ls() -> dict:
    """{'cache_dir', 'kernel_dir', 'cubins', 'cubin_bytes', 'tuning_db', 'entries': [{key, winner, best_ms,
    timings: {choice: ms}, tuned_at}]} — `tmagemm cache ls` as data. Listing creates no database."""
    kernel_dir, cubins, size = _C.kernel_cache()
    entries = []
    for key, winner, timings, tuned_at in _C.tuning_entries():
        times = dict(timings)
        best = times.get(winner)
        if best is None or not math.isfinite(best):
            finite = [t for t in times.values() if math.isfinite(t)]
            best = min(finite) if finite else None
        entries.append({"key": key, "winner": winner, "best_ms": best, "timings": times, "tuned_at": tuned_at})
    return {
        "cache_dir": _C.cache_dir(),
        "kernel_dir": kernel_dir,
        "cubins": cubins,
        "cubin_bytes": size,
        "tuning_db": _C.tuning_db_path(),
        "entries": entries,
    }


def clear(kernels: bool = True, tuning: bool = True) -> dict:
    """Removes the cached cubins and/or every tuning DB entry: {'cubins': removed, 'cubin_bytes': their size,
    'entries': deleted}. A cubin that cannot be removed raises OSError naming it (the others are removed)."""
    result = {"cubins": 0, "cubin_bytes": 0, "entries": 0}
    if kernels:
        removed, size, failures = _C.clear_kernel_cache()
        result.update(cubins=removed, cubin_bytes=size)
        if failures:
            raise OSError("tmagemm.cache.clear: cannot remove " + "; ".join(failures))
    if tuning:
        result["entries"] = _C.clear_tuning()
    return result


def export(path: str | Path | None = None) -> str:
    """The tuning DB as JSON ({"version":1,"entries":[...]}, the format of `tmagemm cache export`); written to
    `path` too when given."""
    text = _C.export_tuning()
    if path is not None:
        Path(path).write_text(text)
    return text


def import_(source: str | Path) -> int:
    """Adds (or replaces) the entries of an export — a path, or the JSON text itself — and returns how many. A
    malformed document raises tmagemm.InvalidArgumentError and changes nothing."""
    text = str(source)
    if not text.lstrip().startswith("{"):
        text = Path(source).read_text()
    return _C.import_tuning(text)


def stats(reset: bool = False) -> dict:
    """This process's tuner counters and kernel modules (tmagemm::tuning_stats): {'memo_hits', 'bucket_hits',
    'db_hits', 'db_misses', 'tuned', 'cached_only_misses', 'heuristic', 'out_of_memory_retries',
    'tunings_out_of_memory', 'rank_tunings', 'modules_loaded', 'modules_kept', 'modules_unloaded'}. A serving
    process in tuning='cached_only' never tunes: each shape it meets the first time is a database hit or a counted
    miss that runs the heuristic choice. reset=True sets the counters to 0 after reading them."""
    result = dict(_C.tuning_stats())
    if reset:
        _C.reset_tuning_stats()
    return result


def preload(model_path: str | Path, device: int = 0, warm: bool = True) -> dict:
    """Serving start-up (tmagemm::preload_model, README "Deployment"): resolves every shape bucket of the model file's
    weights (the JSON of `tmagemm tune --model`) from the tuning DB in cached_only mode, never tuning, loads the
    winners' kernels and, with warm, runs each kernel the model's rows can meet once on zeroed scratch, so that no
    later call of those rows compiles, reads the DB or loads a kernel. Filters come from the TMAGEMM_* environment.
    Returns {'buckets', 'winners', 'misses', 'warm_runs', 'seconds'}."""
    return dict(_C.preload_model(str(model_path), device, warm))
