"""The error contract (python/tmagemm/_errors.py and the translator of python/src/module.cpp): each C++ ErrorCode
arrives as its tmagemm.Error subclass, which is also ValueError / NotImplementedError / RuntimeError, with the C++
message. CPU tests: validation runs before any GPU work, so the C++ rules are reachable without a GPU; one GPU test
(device memory running out, injected)."""

import os
import subprocess
import sys

import pytest
import torch

import tmagemm
from conftest import gpu
from tmagemm import _C


def desc(sizes, strides=None, dtype=1, ptr=0x10000, device=0):
    if strides is None:
        strides = tuple(sizes[1:]) + (1,) if len(sizes) == 2 else (1,)
    return (ptr, dtype, device, tuple(sizes), tuple(strides))


def test_classes_match_python_expectations():
    assert issubclass(tmagemm.InvalidArgumentError, ValueError)
    assert issubclass(tmagemm.UnsupportedError, NotImplementedError)
    for cls in (tmagemm.CudaError, tmagemm.CompileError, tmagemm.NoValidChoiceError):
        assert issubclass(cls, RuntimeError)
    for cls in (tmagemm.InvalidArgumentError, tmagemm.UnsupportedError, tmagemm.CudaError):
        assert issubclass(cls, tmagemm.Error)
    # Device memory running out: a CudaError that torch code catches as its own out-of-memory error.
    assert issubclass(tmagemm.OutOfMemoryError, tmagemm.CudaError)
    assert issubclass(tmagemm.OutOfMemoryError, torch.OutOfMemoryError)
    assert tmagemm.OutOfMemoryError.code == "out_of_memory"


def test_cpp_invalid_argument_is_value_error_with_cpp_message():
    # K differs: the C++ shape rule, raised before any pointer is looked at.
    with pytest.raises(tmagemm.InvalidArgumentError) as info:
        _C.mm(desc((64, 32)), desc((16, 8)), desc((64, 8)), None, 0)
    assert isinstance(info.value, ValueError)
    assert "mm:" in str(info.value) and "a" in str(info.value)


def test_cpp_rank_rule():
    with pytest.raises(ValueError, match="rank"):
        _C.mm(desc((2, 64, 32), (2048, 32, 1)), desc((32, 8)), desc((64, 8)), None, 0)


def test_descriptor_dims_rule():
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        _C.mm(desc((1, 2, 3, 4), (24, 12, 4, 1)), desc((32, 8)), desc((64, 8)), None, 0)


def test_bad_environment_variable_is_named(monkeypatch):
    monkeypatch.setenv("TMAGEMM_TUNING", "sometimes")
    with pytest.raises(ValueError, match="TMAGEMM_TUNING"):
        _C.mm(desc((64, 32)), desc((32, 8)), desc((64, 8)), None, 0)


def meta(*shape):
    return torch.empty(*shape, device="meta", dtype=torch.bfloat16)


def test_bad_activation_is_named():
    with pytest.raises(ValueError, match="activation"):
        tmagemm.addmm(meta(8), meta(4, 8), meta(8, 8), activation="tanh")


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: tmagemm.mm(torch.randn(4, 4), torch.randn(4, 4)), "a is on device cpu"),
        (lambda: tmagemm.mm("a", "b"), "a must be a torch.Tensor"),
        (lambda: tmagemm.bmm(torch.randn(2, 4, 4), torch.randn(2, 4, 4)), "bmm: a is on device cpu"),
        (lambda: tmagemm.explain("conv", torch.randn(4, 4)), "op must be one of"),
        (lambda: tmagemm.mm(meta(4, 4), meta(4, 4), options="fast"), "options must be a tmagemm.Options"),
        (lambda: tmagemm.mm(meta(4, 8), meta(4, 8)), "K differs"),
        (lambda: tmagemm.scaled_mm(meta(16, 32), meta(32, 16), meta(1), meta(1)), "out_dtype is required"),
    ],
)
def test_python_side_rules(call, words):
    with pytest.raises(tmagemm.InvalidArgumentError, match=words):
        call()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the no-device path is not taken")
def test_no_device_is_a_cuda_error():
    # Valid descriptions of device memory that does not exist: the pointer check needs a device and says so.
    with pytest.raises(tmagemm.CudaError, match="no CUDA device") as info:
        _C.mm(desc((64, 32)), desc((32, 8)), desc((64, 8)), None, 0)
    assert isinstance(info.value, RuntimeError)


_OUT_OF_MEMORY_CHILD = """
import torch, tmagemm
a = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16)
b = torch.randn(128, 192, device="cuda", dtype=torch.bfloat16)
out = torch.full((256, 192), float("nan"), device="cuda", dtype=torch.bfloat16)
try:
    tmagemm.mm(a, b, out=out, options=tmagemm.Options(tuning="heuristic"))
    print("no error")
except torch.OutOfMemoryError as e:
    assert isinstance(e, tmagemm.OutOfMemoryError) and isinstance(e, tmagemm.CudaError), type(e)
    assert "injected out-of-memory failure" in str(e), str(e)
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "out was written on the error path"
    print("OK")
"""


@gpu
def test_out_of_memory_is_torch_out_of_memory_error():
    # Device memory running out for every choice (injected: TMAGEMM_FAULT_INJECT is read once per process, so a
    # child process) reaches Python as tmagemm.OutOfMemoryError, which torch code catches as torch.OutOfMemoryError;
    # out is left alone.
    env = {**os.environ, "TMAGEMM_FAULT_INJECT": "oom=."}
    done = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY_CHILD], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stdout + done.stderr
