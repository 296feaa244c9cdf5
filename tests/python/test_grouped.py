"""tmagemm.grouped_mm (python/tmagemm/_ops.py, the MoE forward) against torch._grouped_mm and a per-group float64
reference on the same inputs: random uneven group sizes with empty groups; a CUDA graph captured once and replayed
with new offsets; the stream-K configs (TMAGEMM_GROUPED_STREAM_K=1); the autograd formula against torch's; the op
traced by torch.compile and its backward on meta tensors (CPU tests); bad input named."""

import pytest
import torch

import tmagemm
from conftest import gpu, poisoned, randn, rel_err


def ends_of(sizes):
    return torch.tensor(sizes, dtype=torch.int64).cumsum(0).to(torch.int32)


def uneven_sizes(groups, total, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.rand(groups, generator=g) + 0.05
    if groups > 2:
        w[1] = 0  # an empty group
    sizes = (w / w.sum() * total).floor().to(torch.int64)
    sizes[-1] += total - sizes.sum()
    return sizes.tolist()


def per_group_reference(a, b, ends):
    ref = torch.empty(a.shape[0], b.shape[2], dtype=torch.float64, device=a.device)
    start = 0
    for g, end in enumerate(ends.tolist()):
        ref[start:end] = a[start:end].double() @ b[g].double()
        start = end
    return ref


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(*shape, device="meta", dtype=dtype)


def test_compile_traces_grouped_mm_on_meta():
    graphs = []

    def capture(gm, inputs):
        graphs.append(gm)
        return gm.forward

    f = torch.compile(lambda a, b, offs: tmagemm.grouped_mm(a, b, offs), fullgraph=True, backend=capture)
    out = f(meta(100, 64), meta(4, 64, 32), meta(4, dtype=torch.int32))
    assert out.shape == (100, 32)
    assert "tmagemm.grouped_mm" in graphs[0].code


def test_autograd_graph_of_grouped_mm():
    # The backward on meta tensors: a's gradient through tmagemm.grouped_mm on b's transposed view, b's through
    # torch._grouped_mm's 2-D x 2-D form; the shapes of both.
    a = meta(100, 64).requires_grad_()
    b = meta(4, 64, 32).requires_grad_()
    out = tmagemm.grouped_mm(a, b, meta(4, dtype=torch.int32))
    assert out.requires_grad and out.grad_fn is not None
    ga, gb = torch.autograd.grad(out, (a, b), torch.ones_like(out))
    assert ga.shape == a.shape and gb.shape == b.shape and gb.dtype == b.dtype


def test_grouped_mm_rules():
    with pytest.raises(ValueError, match="offs is required"):
        tmagemm.grouped_mm(meta(100, 64), meta(4, 64, 32))
    with pytest.raises(ValueError, match="K or G differs"):
        tmagemm.grouped_mm(meta(100, 64), meta(4, 64, 32), meta(5, dtype=torch.int32))


@gpu
@pytest.mark.parametrize("groups, total, n, k", [(8, 4096, 1024, 512), (64, 2000, 256, 512), (4, 300, 128, 64)])
@pytest.mark.parametrize("b_kmajor", [True, False])
def test_grouped_mm_against_torch(groups, total, n, k, b_kmajor):
    a = randn(total, k, scale=k ** -0.5, seed=300)
    w = randn(groups, n, k, seed=301) if b_kmajor else randn(groups, k, n, seed=301)
    b = w.transpose(-2, -1) if b_kmajor else w  # (G, K, N); K-major as torch's kernel takes it
    ends = ends_of(uneven_sizes(groups, total, seed=302)).cuda()
    got = tmagemm.grouped_mm(a, b, ends, out=poisoned(total, n))
    ref = per_group_reference(a, b, ends)
    assert rel_err(got, ref) <= 1e-2
    if b_kmajor:
        expected = torch._grouped_mm(a, b, ends, out_dtype=torch.bfloat16)
        torch.testing.assert_close(got, expected, atol=1e-1, rtol=1e-1)


@gpu
def test_grouped_mm_graph_replay_with_new_offsets():
    groups, total, n, k = 8, 2048, 512, 256
    a, b = randn(total, k, scale=k ** -0.5, seed=310), randn(groups, k, n, seed=311)
    ends = ends_of(uneven_sizes(groups, total, seed=312)).cuda()
    tmagemm.grouped_mm(a, b, ends)  # tuned before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tmagemm.grouped_mm(a, b, ends)
    for seed in (313, 314, 315):
        ends.copy_(ends_of(uneven_sizes(groups, total, seed=seed)))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel_err(out, per_group_reference(a, b, ends)) <= 1e-2


@gpu
@pytest.mark.parametrize("config", ["persistent_tma_128x256x64_s4_c2_g8_tmastore_sk",
                                    "persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk"])
def test_grouped_mm_stream_k_against_torch(config, monkeypatch):
    # Stream-K over the grouped schedule's tiles (TMAGEMM_GROUPED_STREAM_K=1, read at each call): the config alone
    # (a regex leaving no other choice), a wave and a part of its tiles, against torch._grouped_mm on the same inputs.
    monkeypatch.setenv("TMAGEMM_GROUPED_STREAM_K", "1")
    groups, total, n, k = 8, 2500, 2048, 1000
    a = randn(total, k, scale=k ** -0.5, seed=330)
    b = randn(groups, n, k, seed=331).transpose(-2, -1)  # (G, K, N), K-major
    ends = ends_of(uneven_sizes(groups, total, seed=332)).cuda()
    only = tmagemm.Options(tuning="heuristic", choice_regex=f"^{config}$")
    got = tmagemm.grouped_mm(a, b, ends, out=poisoned(total, n), options=only)
    assert rel_err(got, per_group_reference(a, b, ends)) <= 1e-2
    expected = torch._grouped_mm(a, b, ends, out_dtype=torch.bfloat16)
    torch.testing.assert_close(got, expected, atol=1e-1, rtol=1e-1)


@gpu
@pytest.mark.parametrize("b_kmajor", [True, False])
def test_grouped_mm_autograd_against_torch(b_kmajor):
    # Gradients of a and b against torch._grouped_mm's autograd on the same inputs and output gradient, with an empty
    # group (its b gradient is zero) and group sizes no tile divides; and against a per-group float64 reference.
    groups, total, n, k = 6, 1000, 384, 256
    a = randn(total, k, scale=k ** -0.5, seed=340).requires_grad_()
    w = randn(groups, n, k, seed=341) if b_kmajor else randn(groups, k, n, seed=341)
    w.requires_grad_()
    b = w.transpose(-2, -1) if b_kmajor else w
    ends = ends_of(uneven_sizes(groups, total, seed=342)).cuda()
    grad = randn(total, n, scale=n ** -0.5, seed=343)
    ga, gw = torch.autograd.grad(tmagemm.grouped_mm(a, b, ends), (a, w), grad)
    ra, rw = torch.autograd.grad(torch._grouped_mm(a, b, ends, out_dtype=torch.bfloat16), (a, w), grad)
    torch.testing.assert_close(ga, ra, atol=1e-1, rtol=1e-1)
    torch.testing.assert_close(gw, rw, atol=1e-2, rtol=1e-1)  # b's gradients are ~0.05: a tighter atol
    # float64: a's gradient per group against b[g]^T, b's per group a_g^T @ grad_g (zero for the empty group 1)
    start, ref_w = 0, torch.zeros(groups, k, n, dtype=torch.float64, device="cuda")
    for g, end in enumerate(ends.tolist()):
        ref_w[g] = a[start:end].detach().double().T @ grad[start:end].double()
        start = end
    ref_a = per_group_reference(grad, b.detach().transpose(-2, -1), ends)
    gb = gw.transpose(-2, -1) if b_kmajor else gw
    assert rel_err(ga, ref_a) <= 1e-2 and rel_err(gb, ref_w) <= 1e-2
    assert gb[1].abs().max().item() == 0.0


@gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_grouped_mm_autograd_offsets_outside_torchs_rule(dtype):
    # b's gradient with an offset past total_M and a decreasing one (outside torch's rule): clamped and made
    # non-decreasing on the device before torch._grouped_mm reads them (bf16; unclamped, torch's kernel reads past a
    # and trips a device-side assert), or the per-group products read them (f16, which torch's kernel does not
    # take). Against float64 per-group gradients of those ends.
    groups, total, n, k = 5, 700, 256, 256
    a = randn(total, k, dtype=dtype, scale=k ** -0.5, seed=350).requires_grad_()
    b = randn(groups, k, n, dtype=dtype, seed=351).requires_grad_()
    ends = torch.tensor([100, 100, 400, 300, 900], dtype=torch.int32, device="cuda")
    grad = randn(total, n, dtype=dtype, scale=n ** -0.5, seed=352)
    ga, gb = torch.autograd.grad(tmagemm.grouped_mm(a, b, ends), (a, b), grad)
    starts, stops = [0, 100, 100, 400, 400], [100, 100, 400, 400, 700]  # the running maximum of the clamped ends
    ref_b = torch.zeros(groups, k, n, dtype=torch.float64, device="cuda")
    for g in range(groups):
        ref_b[g] = a[starts[g]:stops[g]].detach().double().T @ grad[starts[g]:stops[g]].double()
    assert gb.dtype == dtype and rel_err(gb, ref_b) <= 1e-2
    assert gb[1].abs().max().item() == 0.0 and gb[3].abs().max().item() == 0.0
    # a's gradient through tmagemm.grouped_mm reads the ends as the forward does (clamped to total_M; group 4 then
    # starts at the decreasing end 300 and overlaps group 2, outside torch's rule): rows 0..300 are group 0's and 2's
    ref_a = per_group_reference(grad[:300], b.detach().transpose(-2, -1), torch.tensor([100, 100, 300], device="cuda"))
    assert rel_err(ga[:300], ref_a) <= 1e-2


@gpu
def test_grouped_mm_3d_is_bmm():
    a, b = randn(4, 64, 128, seed=320), randn(4, 128, 96, seed=321)
    torch.testing.assert_close(tmagemm.grouped_mm(a, b), torch.bmm(a, b), atol=1e-1, rtol=1e-1)
