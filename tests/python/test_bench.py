"""python -m tmagemm.bench (python/tmagemm/bench.py): the suites as the extension gives them, each op's inputs built
on the suite's layout, strides and routing (on the CPU), the run's refusal without a GPU, and on a GPU a short run
against torch whose JSON says ok."""

import json

import pytest
import torch

import tmagemm
from tmagemm import _C, bench
from conftest import GPU_REASON, gpu


def test_suites_come_from_the_cli_table():
    assert {"square", "llm", "decode", "misaligned", "waves", "fp8", "addmm", "bmm", "grouped"} <= set(_C.suite_names())
    rows = _C.bench_suite("misaligned")
    assert len(rows) == 6
    assert [(r["a_pad"], r["a_offset"]) for r in rows if r["a_offset"]] == [(8, 1)]
    grouped = _C.bench_suite("grouped")
    assert all(sum(r["group_rows"]) == r["m"] and len(r["group_rows"]) == r["batch"] for r in grouped)
    assert _C.bench_suite("48x80x64:rc")[0]["layout"] == "rc"
    with pytest.raises(ValueError, match="nope"):
        _C.bench_suite("nope")


def _row(**kw):
    row = dict(_C.bench_suite("64x96x80")[0])
    row.update(kw)
    return row


def test_mm_operands_follow_layout_pads_and_offset():
    t = bench.operands(_row(layout="cr"), device="cpu")
    assert t["a"].shape == (64, 80) and t["a"].stride() == (1, 64)
    assert t["b"].shape == (80, 96) and t["b"].stride() == (96, 1)
    t = bench.operands(_row(a_pad=8, a_offset=1, b_pad=1, out_pad=3), device="cpu")
    assert t["a"].stride() == (88, 1) and t["a"].storage_offset() == 1
    assert t["b"].stride() == (97, 1)
    assert t["out"].shape == (64, 96) and t["out"].stride() == (99, 1)
    for x in (t["a"], t["b"]):
        assert x.dtype == torch.bfloat16 and bool((x != 0).all())


def test_grouped_bmm_addmm_and_fp8_operands():
    g = bench.operands(_row(op="grouped_mm", batch=3, m=10, layout="rc", group_rows=[4, 0, 6]), device="cpu")
    assert g["b"].shape == (3, 80, 96) and g["b"].stride() == (96 * 80, 1, 80)
    assert g["offs"].dtype == torch.int32 and g["offs"].tolist() == [4, 4, 10]
    b = bench.operands(_row(op="bmm", batch=2, layout="rc"), device="cpu")
    assert b["a"].shape == (2, 64, 80) and b["b"].shape == (2, 80, 96) and b["b"].stride()[1] == 1
    a = bench.operands(_row(op="addmm", epilogue="bias+relu"), device="cpu")
    assert a["bias"].shape == (96,)
    f = bench.operands(_row(op="scaled_mm", dtype="e4m3", layout="rc", epilogue="rowwise+fast"), device="cpu")
    assert f["a"].dtype == torch.float8_e4m3fn and f["b"].stride() == (1, 80)
    assert f["scale_a"].shape == (64, 1) and f["scale_b"].shape == (1, 96)
    assert bool((f["a"].float() != 0).all())
    f = bench.operands(_row(op="scaled_mm", dtype="e4m3", layout="rc", epilogue="tensorwise"), device="cpu")
    assert f["scale_a"].shape == () and f["scale_b"].shape == ()


def test_reference_and_error():
    row = _row(op="addmm", epilogue="bias+gelu_tanh")
    t = bench.operands(row, device="cpu")
    ref = bench.reference(row, t)
    expected = torch.nn.functional.gelu(t["bias"].float() + t["a"].float() @ t["b"].float(), approximate="tanh")
    assert torch.allclose(ref, expected)
    assert bench.rel_err(ref, ref) == 0.0
    assert bench.rel_err(torch.full_like(ref, float("nan")), ref) == float("inf")
    g = _row(op="grouped_mm", batch=3, m=10, layout="rc", group_rows=[4, 0, 6])
    t = bench.operands(g, device="cpu")
    ref = bench.reference(g, t)
    assert torch.allclose(ref[4:], t["a"][4:].float() @ t["b"][2].float())
    assert bench.bytes_moved(g) == 2 * (10 * 80 + 2 * 80 * 96) + 2 * 10 * 96  # the empty expert is not read
    with pytest.raises(ValueError, match="epilogue"):
        bench.reference(_row(op="addmm", epilogue="bias+tanh"), t)


@pytest.mark.skipif(GPU_REASON is None, reason="a GPU is present: the no-GPU path is not taken")
def test_without_a_gpu_it_says_so(capsys, tmp_path):
    assert bench.main(["--suite", "64x96x80", "--out", str(tmp_path)]) == 1
    assert "no CUDA device" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_unknown_suite_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--suite", "nope"])
    assert e.value.code == 2
    assert "unknown suite 'nope'" in capsys.readouterr().err


@gpu
def test_short_run_against_torch(tmp_path, capsys):
    assert bench.main(["--suite", "256x384x200:rc,48x4096x512", "--reps", "3", "--min-ms", "1",
                       "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.iterdir()
    rows = json.loads(path.read_text())
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all(r["ratio"] > 0 and r["rel_err"] < 0.01 and r["choice"] for r in rows)
    assert "geomean ratio tmagemm/torch" in capsys.readouterr().out


@gpu
@pytest.mark.parametrize("op,extra", [("grouped_mm", dict(batch=3, m=200, layout="rc", group_rows=[70, 0, 130])),
                                      ("bmm", dict(batch=3)),
                                      ("addmm", dict(epilogue="bias+gelu_tanh")),
                                      ("scaled_mm", dict(dtype="e4m3", layout="rc", epilogue="rowwise"))])
def test_each_op_against_torch(op, extra):
    row = _row(op=op, m=extra.pop("m", 128), n=256, k=192, **extra)
    r = bench.bench_row(row, bench.Flush("write", "cuda"), reps=3, min_ms=1)
    assert r["status"] == "ok", r
    assert r["rel_err"] < 0.05 and r["baseline_rel_err"] < 0.05
    assert r["baseline"].startswith("torch.") and r["baseline_tflops"] > 0
    assert tmagemm.__version__
