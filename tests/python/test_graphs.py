"""torch.compile and CUDA graphs on the GPU (python/tmagemm/_library.py): a compiled model (Inductor, fullgraph)
that calls tmagemm gives torch's answer; a captured tuned call replays correctly on new input values; an untuned
problem inside a capture runs the heuristic choice (no tuning inside a capture) and replays correctly. GPU tests."""

import torch

import tmagemm
from conftest import gpu, randn, rel_err


class Mlp(torch.nn.Module):
    def __init__(self, k, h, n):
        super().__init__()
        self.w1 = torch.nn.Parameter(randn(k, h, scale=k ** -0.5, seed=70), requires_grad=False)
        self.b1 = torch.nn.Parameter(randn(h, seed=71), requires_grad=False)
        self.w2 = torch.nn.Parameter(randn(h, n, scale=h ** -0.5, seed=72), requires_grad=False)

    def forward(self, x):
        y = tmagemm.addmm(self.b1, x, self.w1, activation="gelu_tanh")
        return tmagemm.mm(y, self.w2) * 2 + 1


def reference(model, x):
    y = torch.nn.functional.gelu(model.b1.double() + x.double() @ model.w1.double(), approximate="tanh")
    return (y.to(torch.bfloat16).double() @ model.w2.double()) * 2 + 1


@gpu
def test_compile_fullgraph_inductor():
    model = Mlp(512, 1024, 256)
    x = randn(256, 512, seed=73)
    compiled = torch.compile(model, fullgraph=True)
    got = compiled(x)
    assert rel_err(got, reference(model, x)) <= 1e-2
    torch.testing.assert_close(got, model(x), atol=1e-1, rtol=1e-1)


@gpu
def test_compile_reduce_overhead_cudagraphs():
    model = Mlp(256, 512, 128)
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    for seed in (80, 81, 82):
        x = randn(128, 256, seed=seed)
        got = compiled(x).clone()
        assert rel_err(got, reference(model, x)) <= 1e-2


def capture(fn):
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # warm-up outside the capture, as torch's docs ask
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


@gpu
def test_graph_replay_of_a_tuned_call():
    a, b = randn(1024, 512, seed=90), randn(512, 768, seed=91)
    tmagemm.tune("mm", a, b)
    graph, out = capture(lambda: tmagemm.mm(a, b))
    for seed in (92, 93):
        a.copy_(randn(1024, 512, seed=seed))
        b.copy_(randn(512, 768, seed=seed + 10))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel_err(out, a.double() @ b.double()) <= 1e-2


@gpu
def test_graph_capture_of_an_untuned_call_runs_the_heuristic_choice():
    # A shape no other test uses: untuned here. The capture must not tune (it would synchronise and allocate);
    # the heuristic choice runs and is captured, and the tuning DB learns nothing.
    a, b = randn(1000, 333, seed=94), randn(333, 1112, seed=95)
    bias = randn(1112, seed=96)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tmagemm.addmm(bias, a, b, activation="relu", options=tmagemm.Options(tuning="benchmark"))
    a.copy_(randn(1000, 333, seed=97))
    graph.replay()
    torch.cuda.synchronize()
    ref = torch.relu(bias.double() + a.double() @ b.double())
    assert rel_err(out, ref) <= 1e-2
    assert not any("1000" in e["key"] and "1112" in e["key"] and "333" in e["key"]
                   for e in tmagemm.cache.ls()["entries"])
