"""The torch.library ops (python/tmagemm/_library.py) without a GPU: they are registered, their fake
implementations give torch.compile(fullgraph=True) and torch.export a graph of tmagemm ops on meta tensors, the fake
shape rules raise the library's error, and mm/bmm have an autograd formula. CPU test."""

import pytest
import torch

import tmagemm


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(*shape, device="meta", dtype=dtype)


def test_ops_are_registered():
    for name in ("mm", "mm_out", "bmm", "bmm_out", "grouped_mm", "grouped_mm_out", "addmm", "addmm_out", "scaled_mm",
                 "scaled_mm_out"):
        assert hasattr(torch.ops.tmagemm, name), name


def test_compile_fullgraph_traces_tmagemm_ops():
    graphs = []

    def capture(gm, inputs):
        graphs.append(gm)
        return gm.forward

    def model(x, w1, b1, w2, w8, s):
        h = tmagemm.addmm(b1, x, w1, activation="gelu_tanh")
        h = torch.relu(tmagemm.mm(h, w2, out_dtype=torch.float32))
        y = tmagemm.scaled_mm(x.to(torch.float8_e4m3fn), w8, s, s, out_dtype=torch.bfloat16, use_fast_accum=True)
        return h, y

    compiled = torch.compile(model, fullgraph=True, backend=capture)
    h, y = compiled(meta(64, 32), meta(32, 48), meta(48), meta(48, 16), meta(32, 16, dtype=torch.float8_e4m3fn).t().
                    contiguous().t(), meta(1, 1, dtype=torch.float32))
    assert h.shape == (64, 16) and h.dtype == torch.float32
    assert y.shape == (64, 16) and y.dtype == torch.bfloat16
    code = graphs[0].code
    for op in ("tmagemm.addmm", "tmagemm.mm", "tmagemm.scaled_mm"):
        assert op in code, code


def test_options_travel_as_graph_constants():
    graphs = []

    def capture(gm, inputs):
        graphs.append(gm)
        return gm.forward

    opts = tmagemm.Options(tuning="heuristic", cublaslt=False)
    f = torch.compile(lambda a, b: tmagemm.mm(a, b, options=opts), fullgraph=True, backend=capture)
    f(meta(8, 8), meta(8, 8))
    assert repr(opts.to_string()) in graphs[0].code


def test_export_records_the_op():
    class M(torch.nn.Module):
        def forward(self, a, b, out):
            return tmagemm.bmm(a, b), tmagemm.mm(a[0], b[0], out=out)

    ep = torch.export.export(M(), (meta(4, 8, 16), meta(4, 16, 32), meta(8, 32)))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "tmagemm.bmm.default" in targets, targets


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: tmagemm.mm(meta(4, 8), meta(16, 8)), "K differs"),
        (lambda: tmagemm.bmm(meta(2, 4, 8), meta(3, 8, 8)), "batch or K differs"),
        (lambda: tmagemm.mm(meta(2, 4, 8), meta(8, 8)), "rank 2"),
    ],
)
def test_fake_shape_rules(call, words):
    with pytest.raises(tmagemm.InvalidArgumentError, match=words):
        call()


@pytest.mark.parametrize("activation", [None, "relu", "gelu_tanh", "silu", "sigmoid"])
@pytest.mark.parametrize("bias_shape", [(8,), (1, 8), (16, 1), (16, 8)])
def test_autograd_graph_of_addmm(activation, bias_shape):
    bias = meta(*bias_shape).requires_grad_()
    a = meta(16, 32).requires_grad_()
    b = meta(32, 8).requires_grad_()
    out = tmagemm.addmm(bias, a, b, beta=0.5, alpha=2.0, activation=activation)
    assert out.requires_grad and out.grad_fn is not None
    gbias, ga, gb = torch.autograd.grad(out, (bias, a, b), torch.ones_like(out))
    assert gbias.shape == bias.shape and ga.shape == a.shape and gb.shape == b.shape


def test_addmm_output_may_change_in_place_where_no_gradient_reads_it():
    # As with torch.addmm: without an activation (or with one whose derivative needs no output) the backward keeps no
    # reference to the output, so h.relu_() after the call is fine; with relu it reads the output, and torch refuses.
    bias, a, b = meta(8).requires_grad_(), meta(16, 32).requires_grad_(), meta(32, 8).requires_grad_()
    h = tmagemm.addmm(bias, a, b)
    h.relu_()
    torch.autograd.grad(h, (bias, a, b), torch.ones_like(h))
    h = tmagemm.addmm(bias, a, b, activation="relu")
    h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.autograd.grad(h, (bias, a, b), torch.ones_like(h))


def test_autograd_graph_of_mm():
    a = meta(16, 32).requires_grad_()
    b = meta(32, 8).requires_grad_()
    out = tmagemm.mm(a, b)
    assert out.requires_grad and out.grad_fn is not None
    ga, gb = torch.autograd.grad(out, (a, b), torch.ones_like(out))
    assert ga.shape == a.shape and gb.shape == b.shape
