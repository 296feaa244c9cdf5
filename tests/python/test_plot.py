"""tmagemm.plot on the committed bench results: one PNG per suite file, ratios and units as in the JSON, bad input
named in the message. Runs without a GPU (CPU test)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tmagemm import plot

RESULTS = Path(os.environ.get("TMAGEMM_RESULTS", Path(__file__).resolve().parents[2] / "bench" / "results"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def result(name: str) -> Path:
    path = RESULTS / name
    assert path.exists(), f"{path} is a committed bench result"
    return path


@pytest.mark.parametrize(
    "name, unit",
    [
        ("nvidia-h200-2026-12-02-fp8.json", "TFLOP/s"),
        ("nvidia-h200-2026-12-01-decode.json", "TB/s"),
        ("nvidia-h200-2026-12-02-misaligned.json", "TFLOP/s"),
        ("nvidia-h200-2026-12-01-addmm.json", "TFLOP/s"),
        # python -m tmagemm.bench's files (tmagemm against torch): the same fields, baseline = a torch op.
        ("nvidia-h100-80gb-hbm3-2026-12-06-llm-torch.json", "TFLOP/s"),
        ("nvidia-h100-80gb-hbm3-2026-12-06-decode-torch-flush_read.json", "TB/s"),
    ],
)
def test_draws_one_png_per_suite_with_the_json_ratios(tmp_path, name, unit):
    path = result(name)
    rows = json.loads(path.read_text())
    bars, got_unit = plot.load_bars(path)
    assert got_unit == unit
    assert len(bars) == len(rows)
    for bar, row in zip(bars, rows):
        if row["status"] == "ok":
            assert bar.ratio == pytest.approx(row["ratio"])
            key = "tmagemm_tbps" if unit == "TB/s" else "tmagemm_tflops"
            assert bar.ours == pytest.approx(row[key])
            assert str(row["M"]) in bar.label
    # The title's geomean is the bench's: recompute it from the rows.
    ratios = [r["ratio"] for r in rows if r["status"] == "ok" and r["ratio"]]
    expected = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    assert plot.geomean([b.ratio for b in bars if b.ratio is not None]) == pytest.approx(expected)
    png = plot.plot(path, tmp_path)
    assert png == tmp_path / (path.stem + ".png")
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 10_000  # a drawn chart, not an empty canvas


def test_the_baseline_is_named_from_the_rows():
    assert plot.baseline_label(result("nvidia-h100-80gb-hbm3-2026-12-06-grouped-torch.json")) == "torch"
    assert plot.baseline_label(result("nvidia-h200-2026-12-06-grouped-s49.json")) == "cuBLASLt"
    assert plot.baseline_label(result("nvidia-h200-2026-12-02-fp8.json")) == "cuBLASLt"


def test_suite_names_from_the_bench_file_names():
    assert plot.suite_name(Path("nvidia-h200-2026-12-02-fp8.json")) == "fp8"
    assert plot.suite_name(Path("nvidia-h200-2026-11-30-decode-skinny_only-flush_read.json")) == "decode-skinny_only-flush_read"
    assert plot.suite_name(Path("mine.json")) == "mine"


def test_rows_of_one_shape_get_distinct_labels(tmp_path):
    # Two rows of 4096x14336x4096 (B ld N + 1, out ld N + 3): told apart by the bench's note, else by a number.
    path = result("nvidia-h200-2026-12-02-misaligned.json")
    bars, _ = plot.load_bars(path)
    labels = [b.label for b in bars]
    assert len(set(labels)) == len(labels)
    same = [l for l in labels if l.startswith("4096x14336x4096 (")]
    assert len(same) == 2
    doc = json.loads(path.read_text())
    rows = doc["rows"] if isinstance(doc, dict) else doc
    for row in rows:
        row.pop("note", None)
    bare = tmp_path / path.name
    bare.write_text(json.dumps(doc))
    labels = [b.label for b in plot.load_bars(bare)[0]]
    assert "4096x14336x4096 (1)" in labels and "4096x14336x4096 (2)" in labels


def test_rows_that_did_not_run_are_gaps(tmp_path):
    rows = json.loads(result("nvidia-h200-2026-12-01-addmm.json").read_text())[:3]
    rows[1]["status"] = "error"
    rows[1]["error"] = "cuBLASLt: no algorithm"
    path = tmp_path / "x-2026-01-01-addmm.json"
    path.write_text(json.dumps(rows))
    bars, _ = plot.load_bars(path)
    assert bars[1].ratio is None and bars[1].ours is None
    assert "error: cuBLASLt: no algorithm" in bars[1].note
    assert plot.plot(path).read_bytes().startswith(PNG_MAGIC)


def test_bad_input_is_named(tmp_path, capsys):
    not_list = tmp_path / "a.json"
    not_list.write_text('{"rows": []}')
    with pytest.raises(ValueError, match="a JSON list of rows"):
        plot.load_bars(not_list)
    missing = tmp_path / "b.json"
    missing.write_text('[{"M": 1, "N": 2}]')
    with pytest.raises(ValueError, match="row 0 lacks K, tmagemm_tflops, baseline_tflops, status"):
        plot.load_bars(missing)
    assert plot.main([str(not_list), str(tmp_path / "absent.json")]) == 1
    err = capsys.readouterr().err
    assert "a.json: a bench result is a JSON list" in err
    assert "absent.json: not a readable bench result" in err


def test_command_line(tmp_path):
    path = result("nvidia-h200-2026-12-02-misaligned.json")
    paths = [str(Path(plot.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    done = subprocess.run([sys.executable, "-m", "tmagemm.plot", str(path), "--out", str(tmp_path)], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / (path.stem + ".png"))
