"""Threads calling tmagemm ops at once, each on its own stream (python/src/module.cpp releases the GIL while an op
runs, tuning included): every result is right and each lands on its thread's stream. GPU test."""

import threading

import torch

import tmagemm
from conftest import gpu, randn, rel_err


@gpu
def test_threads_on_different_streams():
    shapes = [(512, 512, 512), (256, 1024, 384), (64, 2048, 1024), (1000, 1000, 1000)]
    inputs = [(randn(m, k, scale=k ** -0.5, seed=100 + i), randn(k, n, seed=200 + i))
              for i, (m, n, k) in enumerate(shapes)]
    errors, results = [], {}

    def work(i):
        try:
            stream = torch.cuda.Stream()
            a, b = inputs[i]
            with torch.cuda.stream(stream):
                outs = [tmagemm.mm(a, b) for _ in range(20)]
                bias = torch.zeros(b.shape[1], device="cuda", dtype=torch.bfloat16)
                outs.append(tmagemm.addmm(bias, a, b, activation="relu"))
            stream.synchronize()
            results[i] = outs
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(shapes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, outs in results.items():
        a, b = inputs[i]
        ref = a.double() @ b.double()
        for out in outs[:-1]:
            assert rel_err(out, ref) <= 1e-2
        assert rel_err(outs[-1], torch.relu(ref)) <= 1e-2
    assert len(results) == len(shapes)
