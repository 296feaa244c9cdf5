"""Every op of the package against torch on the same inputs (python/tmagemm/_ops.py): tmagemm.mm vs torch.mm,
addmm vs torch.addmm and torch._addmm_activation (its gradients vs torch's autograd), scaled_mm vs torch._scaled_mm,
bmm vs torch.bmm; with torch's tolerances (test_matmul_cuda's test_cublas_addmm for 16-bit: atol = rtol = 1e-1; test_scaled_matmul_cuda's
test_scaled_mm_vs_emulated for FP8: 7e-2 for 16-bit out, 3e-3 for float32) and a relative-norm error against a
float64 reference. Outputs are poisoned with NaN before the call; inputs are seeded random normals. GPU tests."""

import pytest
import torch

import tmagemm
from conftest import gpu, poisoned, randn, rel_err

TOL16 = dict(atol=1e-1, rtol=1e-1)
BOUND = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 2e-3}


def layout(t: torch.Tensor, col_major: bool) -> torch.Tensor:
    """The same values, stored column-major when asked (a transposed view of a contiguous copy)."""
    return t.t().contiguous().t() if col_major else t


def ref_mm(a, b):
    return a.double() @ b.double()


@gpu
@pytest.mark.parametrize("m, n, k", [(256, 256, 256), (1000, 1000, 1000), (64, 4096, 4096), (4095, 4097, 384),
                                     (1, 512, 512), (300, 200, 0)])
@pytest.mark.parametrize("lay", ["rr", "rc", "cr", "cc"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_mm_against_torch(m, n, k, lay, dtype):
    a = layout(randn(m, k, dtype=dtype, scale=k ** -0.5 if k else 1.0, seed=1), lay[0] == "c")
    b = layout(randn(k, n, dtype=dtype, seed=2), lay[1] == "c")
    out = poisoned(m, n, dtype=dtype)
    got = tmagemm.mm(a, b, out=out)
    assert got is out
    expected = torch.mm(a, b)
    torch.testing.assert_close(got, expected, **TOL16)
    assert rel_err(got, ref_mm(a, b)) <= BOUND[dtype]
    assert torch.equal(tmagemm.mm(a, b), got) or rel_err(tmagemm.mm(a, b), got) < BOUND[dtype]


@gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_mm_out_dtype_float32_and_views(dtype):
    base = randn(600, 700, dtype=dtype, seed=3)
    a = base[100:400, 3:515]            # offset base, ld 700: the pad path or the fallback takes it
    b = randn(1024, 300, dtype=dtype, seed=4)[::2]  # every other row: ld 600, no copy
    got = tmagemm.mm(a, b, out_dtype=torch.float32)
    assert got.dtype == torch.float32 and got.shape == (300, 300)
    torch.testing.assert_close(got, torch.mm(a.float(), b.float()), atol=1e-2, rtol=1e-2)
    assert rel_err(got, ref_mm(a, b)) <= 1e-4


@gpu
@pytest.mark.parametrize("m, n, k", [(512, 384, 256), (64, 2048, 1024), (1000, 1000, 1000)])
@pytest.mark.parametrize("bias_shape", ["n", "1n", "m1", "mn", "0-dim", "1", "11"])
def test_addmm_against_torch(m, n, k, bias_shape):
    # Every bias torch.addmm broadcasts: a vector, a row or a column, the full matrix, and one element (0-dim, (1,)
    # or (1,1): one value added to every element).
    a = randn(m, k, scale=k ** -0.5, seed=5)
    b = randn(k, n, seed=6)
    shape = {"n": (n,), "1n": (1, n), "m1": (m, 1), "mn": (m, n), "0-dim": (1,), "1": (1,), "11": (1, 1)}[bias_shape]
    bias = randn(*shape, seed=7)
    if bias_shape == "0-dim":
        bias = bias.reshape(())
    for beta, alpha in ((1.0, 1.0), (0.5, 2.0), (0.0, 1.0)):
        got = tmagemm.addmm(bias, a, b, beta=beta, alpha=alpha, out=poisoned(m, n))
        expected = torch.addmm(bias, a, b, beta=beta, alpha=alpha)
        torch.testing.assert_close(got, expected, **TOL16)
        ref = beta * bias.double() + alpha * ref_mm(a, b) if beta else alpha * ref_mm(a, b)
        assert rel_err(got, ref) <= 1e-2


@gpu
@pytest.mark.parametrize("use_gelu, activation", [(False, "relu"), (True, "gelu_tanh")])
@pytest.mark.parametrize("m, n, k", [(512, 384, 256), (32, 4096, 4096)])
def test_addmm_activation_against_torch(use_gelu, activation, m, n, k):
    a = randn(m, k, scale=k ** -0.5, seed=8)
    b = layout(randn(k, n, seed=9), True)
    bias = randn(n, seed=10)
    got = tmagemm.addmm(bias, a, b, activation=activation)
    expected = torch._addmm_activation(bias, a, b, use_gelu=use_gelu)
    torch.testing.assert_close(got, expected, **TOL16)
    pre = bias.double() + ref_mm(a, b)
    ref = torch.relu(pre) if activation == "relu" else torch.nn.functional.gelu(pre, approximate="tanh")
    assert rel_err(got, ref) <= 1e-2


@gpu
@pytest.mark.parametrize("bias_shape", ["n", "1n", "m1", "mn"])
def test_addmm_common_call_of_parameters_under_no_grad(bias_shape):
    # The common call (out None, no autograd) takes addmm's short path: nn.Parameter weights under torch.no_grad(),
    # out_dtype and an activation, against torch on the same inputs; then the general path's errors still come.
    m, n, k = 192, 320, 256
    a = randn(m, k, scale=k ** -0.5, seed=70)
    b = torch.nn.Parameter(randn(k, n, seed=71))
    shape = {"n": (n,), "1n": (1, n), "m1": (m, 1), "mn": (m, n)}[bias_shape]
    bias = torch.nn.Parameter(randn(*shape, seed=72))
    with torch.no_grad():
        got = tmagemm.addmm(bias, a, b, beta=0.5, alpha=2.0)
        torch.testing.assert_close(got, torch.addmm(bias, a, b, beta=0.5, alpha=2.0), **TOL16)
        got32 = tmagemm.addmm(bias, a, b, activation="relu", out_dtype=torch.float32)
        assert got32.dtype == torch.float32 and got32.shape == (m, n)
        ref = torch.relu(bias.double() + ref_mm(a, b))
        assert rel_err(got32, ref) <= 1e-4
        with pytest.raises(tmagemm.InvalidArgumentError, match="activation"):
            tmagemm.addmm(bias, a, b, activation="tanh")
        with pytest.raises(tmagemm.InvalidArgumentError, match="bias"):
            tmagemm.addmm(randn(2, n, seed=73), a, b)


@gpu
def test_addmm_in_place_on_bias():
    a, b = randn(256, 128, scale=128 ** -0.5, seed=11), randn(128, 192, seed=12)
    c = randn(256, 192, seed=13)
    expected = torch.addmm(c, a, b, beta=0.5)
    got = tmagemm.addmm(c, a, b, beta=0.5, out=c)
    assert got is c
    torch.testing.assert_close(c, expected, **TOL16)


def fp8_inputs(m, n, k, dtype=torch.float8_e4m3fn, rowwise=False, seed=20):
    a = randn(m, k, dtype=torch.float32, seed=seed)
    b = randn(k, n, dtype=torch.float32, seed=seed + 1)
    fmax = torch.finfo(dtype).max
    if rowwise:
        sa = a.abs().amax(dim=1, keepdim=True) / fmax
        sb = b.abs().amax(dim=0, keepdim=True) / fmax
    else:
        sa = (a.abs().amax() / fmax).reshape(1, 1)
        sb = (b.abs().amax() / fmax).reshape(1, 1)
    a8 = (a / sa).to(dtype)
    b8 = (b / sb).to(dtype).t().contiguous().t()  # column-major, as torch._scaled_mm needs
    return a8, b8, sa.float().contiguous(), sb.float().contiguous()


@gpu
@pytest.mark.parametrize("m, n, k", [(256, 512, 1024), (64, 4096, 4096), (3000, 5008, 1024), (16, 1024, 512)])
@pytest.mark.parametrize("rowwise", [False, True])
@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_scaled_mm_against_torch(m, n, k, rowwise, fast, out_dtype):
    a8, b8, sa, sb = fp8_inputs(m, n, k, rowwise=rowwise)
    got = tmagemm.scaled_mm(a8, b8, sa, sb, out_dtype=out_dtype, use_fast_accum=fast,
                            out=poisoned(m, n, dtype=out_dtype))
    expected = torch._scaled_mm(a8, b8, sa, sb, out_dtype=out_dtype, use_fast_accum=fast)
    ref = (a8.double() * sa.double()) @ (b8.double() * sb.double())
    ours, theirs = rel_err(got, ref), rel_err(expected, ref)
    if fast:
        # Fast accumulation rounds inside the wgmma accumulator: two kernels that order K differently disagree by
        # more than torch's tolerances (set for exact accumulation). Each is held to the float64 reference instead:
        # tmagemm's error at most twice torch's own (or 2e-3, the fast-accumulation floor at these K).
        assert ours <= max(2 * theirs, 2e-3), f"tmagemm {ours:.2e}, torch {theirs:.2e}"
    else:
        tol = dict(atol=7e-2, rtol=7e-2) if out_dtype != torch.float32 else dict(atol=3e-3, rtol=3e-3)
        # torch's test compares at the fp8 scale of the output: divide both by the same amax-derived scale.
        scale = expected.float().abs().amax().clamp(min=1e-12) / torch.finfo(torch.float8_e4m3fn).max
        torch.testing.assert_close(got.float() / scale, expected.float() / scale, **tol)
    assert ours <= (1e-2 if out_dtype != torch.float32 else 5e-3), f"tmagemm {ours:.2e}, torch {theirs:.2e}"


@gpu
def test_scaled_mm_takes_0_dim_tensorwise_scales():
    # torch._scaled_mm's usual tensorwise scales are 0-dim tensors (or (1,)); the same call gives the same output as
    # with the (1, 1) scales, and torch's.
    a8, b8, sa, sb = fp8_inputs(192, 256, 320)
    sa0, sb0 = sa.reshape(()), sb.reshape(())
    got = tmagemm.scaled_mm(a8, b8, sa0, sb0, out_dtype=torch.bfloat16, out=poisoned(192, 256))
    same = tmagemm.scaled_mm(a8, b8, sa, sb, out_dtype=torch.bfloat16)
    assert torch.equal(got, same)
    assert torch.equal(tmagemm.scaled_mm(a8, b8, sa.reshape(1), sb0, out_dtype=torch.bfloat16), same)
    expected = torch._scaled_mm(a8, b8, sa0, sb0, out_dtype=torch.bfloat16)
    torch.testing.assert_close(got, expected, atol=7e-2, rtol=7e-2)
    assert torch.equal(torch.ops.tmagemm.scaled_mm(a8, b8, sa0, sb0, None, torch.bfloat16, False, ""), same)


@gpu
def test_scaled_mm_bias():
    a8, b8, sa, sb = fp8_inputs(128, 256, 512)
    bias = randn(256, seed=30)
    got = tmagemm.scaled_mm(a8, b8, sa, sb, bias=bias, out_dtype=torch.bfloat16)
    expected = torch._scaled_mm(a8, b8, sa, sb, bias=bias, out_dtype=torch.bfloat16)
    torch.testing.assert_close(got, expected, atol=7e-2, rtol=7e-2)


@gpu
@pytest.mark.parametrize("batch, m, n, k", [(4, 256, 256, 256), (3, 100, 200, 300), (1, 64, 128, 256)])
@pytest.mark.parametrize("lay", ["rr", "cc"])
def test_bmm_against_torch(batch, m, n, k, lay):
    a = randn(batch, m, k, scale=k ** -0.5, seed=40)
    b = randn(batch, k, n, seed=41)
    if lay[0] == "c":
        a = a.mT.contiguous().mT
    if lay[1] == "c":
        b = b.mT.contiguous().mT
    got = tmagemm.bmm(a, b, out=poisoned(batch, m, n))
    torch.testing.assert_close(got, torch.bmm(a, b), **TOL16)
    assert rel_err(got, a.double() @ b.double()) <= 1e-2


@gpu
def test_bmm_broadcast_weight():
    a = randn(6, 128, 256, scale=256 ** -0.5, seed=42)
    w = randn(256, 64, seed=43).expand(6, 256, 64)  # batch stride 0
    got = tmagemm.bmm(a, w)
    torch.testing.assert_close(got, torch.bmm(a, w), **TOL16)


@gpu
@pytest.mark.parametrize("batched", [False, True])
def test_autograd_against_torch(batched):
    shape_a, shape_b = ((3, 128, 96), (3, 96, 64)) if batched else ((128, 96), (96, 64))
    a = randn(*shape_a, seed=44).requires_grad_()
    b = randn(*shape_b, seed=45).requires_grad_()
    grad = randn(*(shape_a[:-1] + shape_b[-1:]), seed=46)
    out = tmagemm.bmm(a, b) if batched else tmagemm.mm(a, b)
    ga, gb = torch.autograd.grad(out, (a, b), grad)
    ra, rb = torch.autograd.grad(torch.matmul(a, b), (a, b), grad)
    torch.testing.assert_close(ga, ra, **TOL16)
    torch.testing.assert_close(gb, rb, **TOL16)


@gpu
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu", "sigmoid"])
@pytest.mark.parametrize("bias_shape", [(384,), (1, 384), (200, 1), (200, 384), ()])
def test_addmm_autograd_against_torch(activation, bias_shape):
    # The gradients of bias, a and b against torch's autograd of the unfused ops (torch.addmm, then the activation) on
    # the same inputs and output gradient, and against float64 ones. Heuristic choices: 24 epilogues, none tuned.
    F = torch.nn.functional
    acts = {None: lambda z: z, "relu": torch.relu, "gelu": F.gelu, "silu": F.silu, "sigmoid": torch.sigmoid,
            "gelu_tanh": lambda z: F.gelu(z, approximate="tanh")}
    alpha = 1.0 if activation is None else 2.0  # alpha 1: the gradient of a and b unscaled
    bias = randn(*bias_shape, seed=60) if bias_shape else randn(1, seed=60).reshape(())
    bias.requires_grad_()
    a = randn(200, 320, scale=320 ** -0.5, seed=61).requires_grad_()
    b = randn(320, 384, seed=62).requires_grad_()
    grad = randn(200, 384, seed=63)
    fixed = tmagemm.Options(tuning="heuristic")
    got = torch.autograd.grad(tmagemm.addmm(bias, a, b, beta=0.5, alpha=alpha, activation=activation, options=fixed),
                              (bias, a, b), grad)
    expected = torch.autograd.grad(acts[activation](torch.addmm(bias, a, b, beta=0.5, alpha=alpha)), (bias, a, b),
                                   grad)
    leaves = [t.detach().double().requires_grad_() for t in (bias, a, b)]
    ref = torch.autograd.grad(acts[activation](0.5 * leaves[0] + alpha * (leaves[1] @ leaves[2])), leaves,
                              grad.double())
    for g, e, r in zip(got, expected, ref):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g, e, atol=2e-1, rtol=1e-1)
        assert rel_err(g, r) <= 2e-2


@gpu
def test_explain_and_tune():
    a, b = randn(512, 256, seed=50), randn(256, 384, seed=51)
    report = tmagemm.explain("mm", a, b)
    names = [c.name for c in report.choices]
    assert any(c.applicable for c in report.choices) and len(names) == len(set(names))
    assert "cublaslt" in str(report)
    winner = tmagemm.tune(tmagemm.mm, a, b)
    assert winner.selected and winner.applicable and winner.tuned_ms is not None and winner.tuned_ms > 0
    keys = [e["key"] for e in tmagemm.cache.ls()["entries"]]
    assert any("512" in k and "384" in k for k in keys), keys


@gpu
def test_errors_on_the_gpu_path():
    a, b = randn(64, 32), randn(64, 32)
    with pytest.raises(tmagemm.InvalidArgumentError, match="mm"):
        tmagemm.mm(a, b)
    with pytest.raises(ValueError, match="out"):
        tmagemm.mm(randn(64, 32), randn(32, 16), out=poisoned(64, 17))
    e5 = torch.zeros(16, 16, device="cuda").to(torch.float8_e5m2)
    s = torch.ones(1, 1, device="cuda")
    with pytest.raises(ValueError, match="e5m2"):
        tmagemm.scaled_mm(e5, e5.t().contiguous().t(), s, s, out_dtype=torch.bfloat16)
    only_none = tmagemm.Options(persistent_tma=False, fallback=False, cublaslt=False, skinny=False, pad_tma=False)
    with pytest.raises(tmagemm.NoValidChoiceError) as info:
        tmagemm.mm(randn(64, 32), randn(32, 16), options=only_none)
    assert isinstance(info.value, RuntimeError)


@gpu
def test_current_stream_is_used():
    b = randn(2048, 2048, seed=61)
    a = randn(2048, 2048, seed=60)
    new = randn(2048, 2048, seed=62)
    tmagemm.mm(a, b)  # tuned on the default stream
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # the side stream is busy for ~25 ms, then a gets its new values
        a.copy_(new)
        out = tmagemm.mm(a, b)  # must run after the copy: on s, not on another stream
    s.synchronize()
    assert rel_err(out, new.double() @ b.double()) <= 1e-2
