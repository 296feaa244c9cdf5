"""The torch.library ops torch.ops.tmagemm.{mm, mm_out, bmm, bmm_out, grouped_mm, grouped_mm_out, addmm, addmm_out,
scaled_mm, scaled_mm_out},
with fake (meta) implementations, so that torch.compile(fullgraph=True) traces models that call tmagemm and
Inductor keeps them as extern calls; mm and bmm carry an autograd formula (through tmagemm itself), grouped_mm one
through tmagemm for a's gradient and torch._grouped_mm for b's, addmm one through tmagemm's mm (and, for gelu and
silu, the pre-activation computed again).

Options travel as Options.to_string(), a constant of the graph. The real implementations are _ops.py's eager
functions; the fake ones check what the output's shape depends on and leave every other rule to the real call."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from . import _ops
from ._errors import InvalidArgumentError
from . import _options
from ._options import Options


def _opts(text: str) -> Options:
    return Options.from_string(text)


def _check(cond: bool, message: str):
    if not cond:
        raise InvalidArgumentError(message)


def _mm_shape(a: Tensor, b: Tensor, op: str):
    _check(a.dim() == 2 and b.dim() == 2, f"{op}: a and b must have rank 2, got {a.dim()} and {b.dim()}")
    _check(a.shape[1] == b.shape[0], f"{op}: a is {tuple(a.shape)} and b is {tuple(b.shape)}; K differs")
    return (a.shape[0], b.shape[1])


def _bmm_shape(a: Tensor, b: Tensor, op: str):
    _check(a.dim() == 3 and b.dim() == 3, f"{op}: a and b must have rank 3, got {a.dim()} and {b.dim()}")
    _check(a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1],
           f"{op}: a is {tuple(a.shape)} and b is {tuple(b.shape)}; batch or K differs")
    return (a.shape[0], a.shape[1], b.shape[2])


# ---- mm and bmm: one pattern (op, op_out, fake shapes, autograd through the op itself) ----


def _matmul_ops(name: str, prepare, run, shape):
    @torch.library.custom_op(f"tmagemm::{name}", mutates_args=())
    def op(a: Tensor, b: Tensor, out_dtype: Optional[torch.dtype] = None, options: str = "") -> Tensor:
        args, out = prepare(a, b, out_dtype, None, _opts(options))
        run(*args)
        return out

    @op.register_fake
    def _(a, b, out_dtype=None, options=""):
        return a.new_empty(shape(a, b, name), dtype=out_dtype or a.dtype)

    @torch.library.custom_op(f"tmagemm::{name}_out", mutates_args=("out",))
    def op_out(a: Tensor, b: Tensor, out: Tensor, options: str = "") -> None:
        args, _ = prepare(a, b, None, out, _opts(options))
        run(*args)

    @op_out.register_fake
    def _(a, b, out, options=""):
        shape(a, b, name)

    def setup(ctx, inputs, output):
        a, b, _, options = inputs
        ctx.save_for_backward(a, b)
        ctx.options = options

    def backward(ctx, grad):  # d(a @ b) = grad @ b^T and a^T @ grad, by the same op on transposed views
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = op(grad.to(b.dtype), b.mT, a.dtype, ctx.options)
        if ctx.needs_input_grad[1]:
            gb = op(a.mT, grad.to(a.dtype), b.dtype, ctx.options)
        return ga, gb, None, None

    op.register_autograd(backward, setup_context=setup)

    def call(a, b, out_dtype, out, options):
        text = _options.text(options)
        if out is None:
            return op(a, b, out_dtype, text)
        op_out(a, b, out, text)
        return out

    return call


mm = _matmul_ops("mm", _ops._mm_args, lambda *args: _ops._C.mm(*args), _mm_shape)
bmm = _matmul_ops("bmm", _ops._bmm_args, lambda *args: _ops._C.bmm(*args), _bmm_shape)


# ---- grouped_mm (2-D x 3-D) ----


@torch.library.custom_op("tmagemm::grouped_mm", mutates_args=())
def _grouped_mm(a: Tensor, b: Tensor, offs: Tensor, out_dtype: Optional[torch.dtype] = None,
                options: str = "") -> Tensor:
    args, out = _ops._grouped_mm_args(a, b, offs, out_dtype, None, _opts(options))
    _ops._C.grouped_mm(*args)
    return out


def _grouped_shape(a, b, offs):
    _check(a.dim() == 2 and b.dim() == 3 and offs.dim() == 1,
           f"grouped_mm: a, b, offs must have rank 2, 3, 1, got {a.dim()}, {b.dim()}, {offs.dim()}")
    _check(a.shape[1] == b.shape[1] and offs.shape[0] == b.shape[0],
           f"grouped_mm: a is {tuple(a.shape)}, b is {tuple(b.shape)}, offs is {tuple(offs.shape)}; K or G differs")
    return (a.shape[0], b.shape[2])


@_grouped_mm.register_fake
def _(a, b, offs, out_dtype=None, options=""):
    return a.new_empty(_grouped_shape(a, b, offs), dtype=out_dtype or a.dtype)


@torch.library.custom_op("tmagemm::grouped_mm_out", mutates_args=("out",))
def _grouped_mm_out(a: Tensor, b: Tensor, offs: Tensor, out: Tensor, options: str = "") -> None:
    args, _ = _ops._grouped_mm_args(a, b, offs, None, out, _opts(options))
    _ops._C.grouped_mm(*args)


@_grouped_mm_out.register_fake
def _(a, b, offs, out, options=""):
    _grouped_shape(a, b, offs)


def _grouped_setup(ctx, inputs, output):
    a, b, offs, _, options = inputs
    ctx.save_for_backward(a, b, offs)
    ctx.options = options


def _grouped_backward(ctx, grad):
    # out[rows of g] = a[rows of g] @ b[g], so a's gradient is the same grouping against b[g]^T (this op, on b's
    # transposed view), and b[g]'s is a[rows of g]^T @ grad[rows of g]: a product grouped along its K (the tokens),
    # torch._grouped_mm's 2-D x 2-D form, which tmagemm has no kernel for; torch computes it, as torch's own formula for
    # _grouped_mm does (an empty group's gradient is zero). Like torch's, a's rows past offs[G-1] (outside torch's
    # rule, offs[G-1] = total_M) get no gradient written.
    a, b, offs = ctx.saved_tensors
    grad = grad.contiguous()  # e.g. the expanded gradient of a sum (strides 0)
    ga = gb = None
    if ctx.needs_input_grad[0]:
        ga = _grouped_mm(grad.to(b.dtype), b.mT, offs, a.dtype, ctx.options)
    if ctx.needs_input_grad[1]:
        # torch's kernel reads offsets as given (one past total_M reads past a and grad; a decreasing one trips a
        # device-side assert): the ends it gets are clamped to [0, total_M] and made non-decreasing on the device
        # (torch's rule holds them unchanged; tmagemm's forward leaves overlapping groups to offsets outside it).
        ends = torch.cummax(offs.clamp(0, a.shape[0]), 0).values.to(torch.int32)
        g = grad.to(a.dtype)
        if a.dtype == torch.bfloat16 and a.shape[1] % 8 == 0 and g.shape[1] % 8 == 0:
            gb = torch._grouped_mm(_rows16(a).mT, _rows16(g), ends, out_dtype=b.dtype)
        else:
            gb = _grouped_weight_grad_by_group(a, g, ends, b)
    return ga, gb, None, None, None


def _rows16(t):
    # t (rows, cols) as torch._grouped_mm takes it: row-major with 16-byte row pitch and base (cols a multiple of 8
    # 16-bit elements; a fresh allocation is aligned), else a row-major copy. The base is judged by the storage
    # offset, which fake tensors have too.
    if t.stride() == (t.shape[1], 1) and t.storage_offset() % 8 == 0:
        return t
    return torch.empty(t.shape, dtype=t.dtype, device=t.device).copy_(t)


def _grouped_weight_grad_by_group(a, grad, ends, b):
    # Where torch._grouped_mm cannot take the product (it takes bf16 with 16-byte row pitches only): one torch.mm per
    # group, the (clamped, non-decreasing) ends read on the host: a synchronisation, so neither inside a CUDA graph
    # capture nor under torch.compile (a data-dependent loop); eager only.
    gb = torch.zeros(b.shape, dtype=b.dtype, device=b.device)
    start = 0
    for g, end in enumerate(ends.tolist()):
        if end > start:
            gb[g] = torch.mm(a[start:end].mT, grad[start:end]).to(b.dtype)
        start = end
    return gb


_grouped_mm.register_autograd(_grouped_backward, setup_context=_grouped_setup)


def grouped_mm(a, b, offs, out_dtype, out, options):
    text = _options.text(options)
    if out is None:
        return torch.ops.tmagemm.grouped_mm(a, b, offs, out_dtype, text)
    torch.ops.tmagemm.grouped_mm_out(a, b, offs, out, text)
    return out


# ---- addmm ----


@torch.library.custom_op("tmagemm::addmm", mutates_args=())
def _addmm(bias: Tensor, a: Tensor, b: Tensor, beta: float = 1.0, alpha: float = 1.0, activation: str = "none",
           out_dtype: Optional[torch.dtype] = None, options: str = "") -> Tensor:
    args, out = _ops._addmm_args(bias, a, b, beta, alpha, activation, out_dtype, None, _opts(options))
    _ops._C.addmm(*args)
    return out


@_addmm.register_fake
def _(bias, a, b, beta=1.0, alpha=1.0, activation="none", out_dtype=None, options=""):
    return a.new_empty(_mm_shape(a, b, "addmm"), dtype=out_dtype or a.dtype)


_ADDMM_FROM_OUTPUT = ("relu", "sigmoid")  # the derivative from the output, as torch's own
_ADDMM_RECOMPUTED = ("gelu", "gelu_tanh", "silu")  # from the pre-activation computed again


def _addmm_setup(ctx, inputs, output):
    # Only what the backward reads is saved, so that an in-place op on the output (h.relu_(), h += x) or on the bias
    # fails only where it would change a gradient, as with torch.addmm.
    bias, a, b, beta, alpha, activation, _, options = inputs
    recompute = activation in _ADDMM_RECOMPUTED
    ctx.save_for_backward(a, b, bias if recompute else None, output if activation in _ADDMM_FROM_OUTPUT else None)
    ctx.bias_shape, ctx.bias_dtype, ctx.out_dtype = bias.shape, bias.dtype, output.dtype
    ctx.beta, ctx.alpha, ctx.activation, ctx.options = beta, alpha, activation, options


def _addmm_backward(ctx, grad):
    # out = act(z), z = beta * bias + alpha * (a @ b). The activation's derivative from the output where torch's own
    # takes it from there (relu, sigmoid), else from z computed again (one more GEMM: the fused forward keeps no z);
    # then a's and b's gradients through tmagemm's mm on transposed views, the bias's summed over the rows or columns
    # it was broadcast along (in fp32).
    a, b, bias, out = ctx.saved_tensors
    act, grad = ctx.activation, grad.contiguous()
    if act == "relu":
        gz = torch.ops.aten.threshold_backward(grad, out, 0)
    elif act == "sigmoid":
        gz = torch.ops.aten.sigmoid_backward(grad, out)
    elif act in _ADDMM_RECOMPUTED:
        z = _addmm(bias, a, b, ctx.beta, ctx.alpha, "none", ctx.out_dtype, ctx.options)
        if act == "silu":
            gz = torch.ops.aten.silu_backward(grad, z)
        else:
            gz = torch.ops.aten.gelu_backward(grad, z, approximate="tanh" if act == "gelu_tanh" else "none")
    else:
        gz = grad
    gbias = ga = gb = None
    if ctx.needs_input_grad[0]:
        gbias = (gz.float().sum_to_size(ctx.bias_shape) * ctx.beta).to(ctx.bias_dtype)
    gab = gz.to(a.dtype) if ctx.alpha == 1.0 else (gz.float() * ctx.alpha).to(a.dtype)
    if ctx.needs_input_grad[1]:
        ga = torch.ops.tmagemm.mm(gab, b.mT, a.dtype, ctx.options)
    if ctx.needs_input_grad[2]:
        gb = torch.ops.tmagemm.mm(a.mT, gab, b.dtype, ctx.options)
    return gbias, ga, gb, None, None, None, None, None


_addmm.register_autograd(_addmm_backward, setup_context=_addmm_setup)


@torch.library.custom_op("tmagemm::addmm_out", mutates_args=("out",))
def _addmm_out(bias: Tensor, a: Tensor, b: Tensor, out: Tensor, beta: float = 1.0, alpha: float = 1.0,
               activation: str = "none", options: str = "") -> None:
    args, _ = _ops._addmm_args(bias, a, b, beta, alpha, activation, None, out, _opts(options))
    _ops._C.addmm(*args)


@_addmm_out.register_fake
def _(bias, a, b, out, beta=1.0, alpha=1.0, activation="none", options=""):
    _mm_shape(a, b, "addmm")


def addmm(bias, a, b, beta, alpha, activation, out_dtype, out, options):
    text = _options.text(options)
    act = _ops._activation(activation)
    if out is None:
        return torch.ops.tmagemm.addmm(bias, a, b, float(beta), float(alpha), act, out_dtype, text)
    torch.ops.tmagemm.addmm_out(bias, a, b, out, float(beta), float(alpha), act, text)
    return out


# ---- scaled_mm ----


@torch.library.custom_op("tmagemm::scaled_mm", mutates_args=())
def _scaled_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Optional[Tensor] = None,
               out_dtype: Optional[torch.dtype] = None, use_fast_accum: bool = False, options: str = "") -> Tensor:
    args, out = _ops._scaled_mm_args(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, None, _opts(options))
    _ops._C.scaled_mm(*args)
    return out


@_scaled_mm.register_fake
def _(a, b, scale_a, scale_b, bias=None, out_dtype=None, use_fast_accum=False, options=""):
    _check(out_dtype is not None, "scaled_mm: out_dtype is required (bfloat16, float16 or float32) when out is None")
    return a.new_empty(_mm_shape(a, b, "scaled_mm"), dtype=out_dtype)


@torch.library.custom_op("tmagemm::scaled_mm_out", mutates_args=("out",))
def _scaled_mm_out(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, out: Tensor,
                   bias: Optional[Tensor] = None, use_fast_accum: bool = False, options: str = "") -> None:
    args, _ = _ops._scaled_mm_args(a, b, scale_a, scale_b, bias, None, use_fast_accum, out, _opts(options))
    _ops._C.scaled_mm(*args)


@_scaled_mm_out.register_fake
def _(a, b, scale_a, scale_b, out, bias=None, use_fast_accum=False, options=""):
    _mm_shape(a, b, "scaled_mm")


def scaled_mm(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, out, options):
    text = _options.text(options)
    if out is None:
        return torch.ops.tmagemm.scaled_mm(a, b, scale_a, scale_b, bias, out_dtype, bool(use_fast_accum), text)
    if out_dtype is not None and out.dtype != out_dtype:
        raise InvalidArgumentError(f"scaled_mm: out has dtype {out.dtype} but out_dtype is {out_dtype}")
    torch.ops.tmagemm.scaled_mm_out(a, b, scale_a, scale_b, out, bias, bool(use_fast_accum), text)
    return out
