"""Shared pieces of the Python tests: the GPU marker (GPU tests skip with the reason where there is no usable
Hopper GPU, so the CPU tests still run in CI), seeded inputs and the accuracy checks."""

import math

import pytest
import torch


def _gpu_reason():
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False): GPU test skipped"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        return f"needs an sm_90 GPU (Hopper), found compute capability {major}.{minor}: GPU test skipped"
    return None


GPU_REASON = _gpu_reason()
gpu = pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")


def randn(*shape, dtype=torch.bfloat16, scale=1.0, seed=0, device="cuda"):
    """Seeded normal values (never all zeros), made in float32 and rounded once to dtype."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(device=device, dtype=dtype)


def poisoned(*shape, dtype=torch.bfloat16):
    """An output buffer full of NaN, so that an unwritten element fails every check."""
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


def rel_err(ours: torch.Tensor, ref: torch.Tensor) -> float:
    """Relative Frobenius-norm error against a higher-precision reference (NaN counts as a failure)."""
    ours64, ref64 = ours.double(), ref.double()
    denom = ref64.norm().item()
    err = (ours64 - ref64).norm().item() / (denom if denom > 0 else 1.0)
    return err if math.isfinite(err) else math.inf
