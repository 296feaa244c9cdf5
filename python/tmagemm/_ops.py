"""The eager ops on torch tensors: tmagemm.mm, addmm, scaled_mm, bmm, grouped_mm, and explain/tune on the same arguments.

A call describes each tensor to tmagemm._C as (data_ptr, dtype code, device, sizes, strides) — any strides the
C++ API takes, no copy — allocates `out` with torch's caching allocator when none is given, and runs on torch's
current stream of the tensors' device. Validation is the C++ library's (every rule, before any launch); the checks
here are only what building those descriptions needs (a CUDA torch.Tensor of a dtype tmagemm knows).

Calls that torch must see — under torch.compile tracing, on tensor subclasses (fake, functional), or when autograd
records — go through the torch.library ops instead (_library.py), which end up in the same functions."""

from __future__ import annotations

import torch

from . import _C
from ._errors import Error, InvalidArgumentError
from ._options import Options, desc as _options_desc

_DTYPES = {torch.float16: 0, torch.bfloat16: 1, torch.float32: 2, torch.float8_e4m3fn: 3, torch.float8_e5m2: 4,
           torch.int32: 5}
_PLAIN = frozenset((torch.Tensor, torch.nn.Parameter))
_is_compiling = torch.compiler.is_compiling
_ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid")

try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # what Inductor's generated code calls: no Stream object
except AttributeError:  # pragma: no cover - older torch

    def _raw_stream(device: int) -> int:
        return torch.cuda.current_stream(device).cuda_stream


def _desc(t, op: str, name: str):
    if not isinstance(t, torch.Tensor):
        raise InvalidArgumentError(f"{op}: {name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.is_cuda:
        raise InvalidArgumentError(f"{op}: {name} is on device {t.device}; tmagemm takes CUDA tensors")
    code = _DTYPES.get(t.dtype)
    if code is None:
        raise InvalidArgumentError(
            f"{op}: {name} has dtype {t.dtype}; tmagemm takes bfloat16, float16, float32, float8_e4m3fn, float8_e5m2 "
            "(and int32 offsets)"
        )
    return (t.data_ptr(), code, t.get_device(), t.shape, t.stride())


def _out(out, shape, dtype, like, op: str):
    if out is None:
        return torch.empty(shape, dtype=dtype, device=like.device)
    if not isinstance(out, torch.Tensor):
        raise InvalidArgumentError(f"{op}: out must be a torch.Tensor or None, got {type(out).__name__}")
    return out


def _activation(activation) -> str:
    if activation is None:
        return "none"
    if activation not in _ACTIVATIONS:
        raise InvalidArgumentError(
            f"addmm: activation must be None or one of {', '.join(_ACTIVATIONS)}; got {activation!r}"
        )
    return activation


def _traced(*tensors) -> bool:
    """True when torch must see the call: compiling, a tensor subclass (fake, functional, ...), a meta tensor, or
    autograd recording."""
    if torch.compiler.is_compiling():
        return True
    grad = torch.is_grad_enabled()
    for t in tensors:
        if t is None:
            continue
        if type(t) not in _PLAIN:
            return isinstance(t, torch.Tensor)  # not a tensor at all: let _desc name it
        if t.is_meta or (grad and t.requires_grad):
            return True
    return False


# ---- argument preparation shared by the ops and explain/tune: (the _C arguments, out) ----


def _mm_args(a, b, out_dtype, out, options, op="mm"):
    da, db = _desc(a, op, "a"), _desc(b, op, "b")
    shape = (a.shape[0], b.shape[1]) if a.dim() == 2 and b.dim() == 2 else (0, 0)
    out = _out(out, shape, out_dtype or a.dtype, a, op)
    return (da, db, _desc(out, op, "out"), _options_desc(options), _raw_stream(da[2])), out


def _bmm_args(a, b, out_dtype, out, options, op="bmm"):
    da, db = _desc(a, op, "a"), _desc(b, op, "b")
    shape = (a.shape[0], a.shape[1], b.shape[2]) if a.dim() == 3 and b.dim() == 3 else (0, 0, 0)
    out = _out(out, shape, out_dtype or a.dtype, a, op)
    return (da, db, _desc(out, op, "out"), _options_desc(options), _raw_stream(da[2])), out


def _grouped_mm_args(a, b, offs, out_dtype, out, options, op="grouped_mm"):
    da, db, doffs = _desc(a, op, "a"), _desc(b, op, "b"), _desc(offs, op, "offs")
    shape = (a.shape[0], b.shape[2]) if a.dim() == 2 and b.dim() == 3 else (0, 0)
    out = _out(out, shape, out_dtype or a.dtype, a, op)
    return (da, db, doffs, _desc(out, op, "out"), _options_desc(options), _raw_stream(da[2])), out


def _addmm_args(bias, a, b, beta, alpha, activation, out_dtype, out, options, op="addmm"):
    # A 0-dim bias (one value for every element, as torch.addmm broadcasts it) as its (1,) view: the C++ API takes
    # tensors of rank 1 to 3 and broadcasts a one-element bias.
    if isinstance(bias, torch.Tensor) and bias.dim() == 0:
        bias = bias.reshape(1)
    dc, da, db = _desc(bias, op, "bias"), _desc(a, op, "a"), _desc(b, op, "b")
    act = _activation(activation)
    shape = (a.shape[0], b.shape[1]) if a.dim() == 2 and b.dim() == 2 else (0, 0)
    out = _out(out, shape, out_dtype or a.dtype, a, op)
    args = (dc, da, db, _desc(out, op, "out"), float(beta), float(alpha), act, _options_desc(options))
    return args + (_raw_stream(da[2]),), out


def _scaled_mm_args(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, out, options, op="scaled_mm"):
    da, db = _desc(a, op, "a"), _desc(b, op, "b")
    # A tensorwise scale as torch._scaled_mm takes it: one element, most often a 0-dim tensor, or (1,); the C++ API
    # takes it as (1, 1) (its scales have rank 2), here a view of the same element.
    scale_a, scale_b = (s.reshape(1, 1) if isinstance(s, torch.Tensor) and s.dim() < 2 and s.numel() == 1 else s
                        for s in (scale_a, scale_b))
    dsa, dsb = _desc(scale_a, op, "scale_a"), _desc(scale_b, op, "scale_b")
    dbias = None if bias is None else _desc(bias, op, "bias")
    if out is None and out_dtype is None:
        raise InvalidArgumentError(f"{op}: out_dtype is required (bfloat16, float16 or float32) when out is None")
    shape = (a.shape[0], b.shape[1]) if a.dim() == 2 and b.dim() == 2 else (0, 0)
    out = _out(out, shape, out_dtype, a, op)
    if out_dtype is not None and out.dtype != out_dtype:
        raise InvalidArgumentError(f"{op}: out has dtype {out.dtype} but out_dtype is {out_dtype}")
    args = (da, db, dsa, dsb, dbias, _desc(out, op, "out"), bool(use_fast_accum), _options_desc(options))
    return args + (_raw_stream(da[2]),), out


# ---- the eager ops ----


def mm(a, b, *, out_dtype=None, out=None, options: Options | None = None):
    """out(M,N) = a(M,K) @ b(K,N), as torch.mm: bfloat16 or float16 in; out a's dtype, or out_dtype (bfloat16,
    float16, float32). Any strides; out, when given, must have the exact shape and dtype."""
    # The common call (two plain CUDA tensors of a known dtype, rank 2, nothing for autograd, not compiling; a weight
    # may be a Parameter, as under torch.no_grad()) takes the shortest path: every check it skips here is made by the
    # C++ validation, or leads to the general path.
    if (type(a) in _PLAIN and type(b) in _PLAIN and out is None and a.is_cuda and b.is_cuda and not _is_compiling()
            and not ((a.requires_grad or b.requires_grad) and torch.is_grad_enabled())):
        ca, cb = _DTYPES.get(a.dtype), _DTYPES.get(b.dtype)
        sa, sb = a.shape, b.shape
        if ca is not None and cb is not None and len(sa) == 2 and len(sb) == 2:
            out = a.new_empty((sa[0], sb[1])) if out_dtype is None else a.new_empty((sa[0], sb[1]), dtype=out_dtype)
            co = _DTYPES.get(out.dtype)
            if co is not None:
                device = a.get_device()
                _C.mm((a.data_ptr(), ca, device, sa, a.stride()), (b.data_ptr(), cb, b.get_device(), sb, b.stride()),
                      (out.data_ptr(), co, device, out.shape, out.stride()), _options_desc(options),
                      _raw_stream(device))
                return out
            out = None
    if _traced(a, b, out):
        from . import _library

        return _library.mm(a, b, out_dtype, out, options)
    args, out = _mm_args(a, b, out_dtype, out, options)
    _C.mm(*args)
    return out


def bmm(a, b, *, out_dtype=None, out=None, options: Options | None = None):
    """out(B,M,N) = a(B,M,K) @ b(B,K,N), as torch.bmm; a batch stride of 0 broadcasts that operand."""
    if _traced(a, b, out):
        from . import _library

        return _library.bmm(a, b, out_dtype, out, options)
    args, out = _bmm_args(a, b, out_dtype, out, options)
    _C.bmm(*args)
    return out


def grouped_mm(a, b, offs=None, *, out_dtype=None, out=None, options: Options | None = None):
    """torch._grouped_mm for 16-bit inputs. 2-D x 3-D (the MoE forward): a (total_M, K), b (G, K, N), offs (G) int32
    on the device, the cumulative end row of each group (groups may be empty); out (total_M, N). The offsets are read
    on the device: no synchronisation, so a captured call replays with new offsets. 3-D x 3-D (offs None) is bmm."""
    if offs is None:
        if isinstance(a, torch.Tensor) and a.dim() == 3:
            return bmm(a, b, out_dtype=out_dtype, out=out, options=options)
        raise InvalidArgumentError("grouped_mm: offs is required for a 2-D a (a (total_M, K), b (G, K, N))")
    if _traced(a, b, offs, out):
        from . import _library

        return _library.grouped_mm(a, b, offs, out_dtype, out, options)
    args, out = _grouped_mm_args(a, b, offs, out_dtype, out, options)
    _C.grouped_mm(*args)
    return out


def addmm(bias, a, b, *, beta=1.0, alpha=1.0, activation=None, out_dtype=None, out=None,
          options: Options | None = None):
    """out = act(beta * bias + alpha * (a @ b)), as torch.addmm (activation None) and torch._addmm_activation
    (activation 'relu', or 'gelu_tanh' for use_gelu=True); also 'gelu' (erf), 'silu', 'sigmoid'. bias broadcasts as
    (N), (1,N), (M,1) or (M,N), or one element (0-dim, (1) or (1,1)); out may be bias itself (in place)."""
    # The common call (plain CUDA tensors of known dtypes, a and b of rank 2, a bias of rank 1 or 2, nothing for
    # autograd, not compiling; weights may be Parameters, as under torch.no_grad()) takes the shortest path, as mm's:
    # every check it skips is made by the C++ validation, or leads to the general path below.
    if (out is None and type(a) in _PLAIN and type(b) in _PLAIN and type(bias) in _PLAIN and a.is_cuda and b.is_cuda
            and bias.is_cuda and not _is_compiling()
            and not ((a.requires_grad or b.requires_grad or bias.requires_grad) and torch.is_grad_enabled())):
        ca, cb, cc = _DTYPES.get(a.dtype), _DTYPES.get(b.dtype), _DTYPES.get(bias.dtype)
        sa, sb, sc = a.shape, b.shape, bias.shape
        act = "none" if activation is None else activation
        if (ca is not None and cb is not None and cc is not None and len(sa) == 2 and len(sb) == 2
                and 1 <= len(sc) <= 2 and act in _ACTIVATIONS):
            out = a.new_empty((sa[0], sb[1])) if out_dtype is None else a.new_empty((sa[0], sb[1]), dtype=out_dtype)
            co = _DTYPES.get(out.dtype)
            if co is not None:
                device = a.get_device()
                _C.addmm((bias.data_ptr(), cc, bias.get_device(), sc, bias.stride()),
                         (a.data_ptr(), ca, device, sa, a.stride()), (b.data_ptr(), cb, b.get_device(), sb, b.stride()),
                         (out.data_ptr(), co, device, out.shape, out.stride()), float(beta), float(alpha), act,
                         _options_desc(options), _raw_stream(device))
                return out
            out = None
    if _traced(bias, a, b, out):
        from . import _library

        return _library.addmm(bias, a, b, beta, alpha, activation, out_dtype, out, options)
    args, out = _addmm_args(bias, a, b, beta, alpha, activation, out_dtype, out, options)
    _C.addmm(*args)
    return out


def scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=None, use_fast_accum=False, out=None,
              options: Options | None = None):
    """out = (a @ b) * scale_a * scale_b (+ bias), as torch._scaled_mm: a (M,K) row-major and b (K,N) column-major
    float8 (e4m3fn or e5m2), float32 scales tensorwise (one element each: 0-dim, (1,) or (1,1), as torch takes them)
    or rowwise ((M,1) and (1,N)); out_dtype bfloat16, float16 or float32 (required unless out is given)."""
    if _traced(a, b, scale_a, scale_b, bias, out):
        from . import _library

        return _library.scaled_mm(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, out, options)
    args, out = _scaled_mm_args(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, out, options)
    _C.scaled_mm(*args)
    return out


# ---- explain and tune ----

_PREPARE = {
    "mm": lambda a, b, *, out_dtype=None, out=None, options=None: _mm_args(a, b, out_dtype, out, options, "explain"),
    "bmm": lambda a, b, *, out_dtype=None, out=None, options=None: _bmm_args(a, b, out_dtype, out, options,
                                                                             "explain"),
    "addmm": lambda bias, a, b, *, beta=1.0, alpha=1.0, activation=None, out_dtype=None, out=None, options=None:
    _addmm_args(bias, a, b, beta, alpha, activation, out_dtype, out, options, "explain"),
    "grouped_mm": lambda a, b, offs, *, out_dtype=None, out=None, options=None: _grouped_mm_args(
        a, b, offs, out_dtype, out, options, "explain"),
    "scaled_mm": lambda a, b, scale_a, scale_b, *, bias=None, out_dtype=None, use_fast_accum=False, out=None,
    options=None: _scaled_mm_args(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, out, options, "explain"),
}


def _op_name(op) -> str:
    name = op if isinstance(op, str) else getattr(op, "__name__", None)
    if name not in _PREPARE:
        raise InvalidArgumentError(f"op must be one of {', '.join(_PREPARE)} (or the function); got {op!r}")
    return name


def explain(op, *args, **kwargs) -> "_C.Explanation":
    """Every choice the dispatcher considers for op(*args, **kwargs) ('mm', 'addmm', 'scaled_mm', 'bmm' or the
    function): applicable or not and why, the tuning DB's time, and which one a call runs now. Launches nothing
    (an `out` is allocated when none is given). str() of the result is the table `tmagemm explain` prints."""
    name = _op_name(op)
    cargs, _ = _PREPARE[name](*args, **kwargs)
    return getattr(_C, name)(*cargs, True)


def tune(op, *args, **kwargs) -> "_C.ChoiceReport":
    """Tunes op(*args, **kwargs) now unless the tuning DB already knows it (every applicable choice is compiled,
    checked and timed on scratch inputs; the winner is stored), runs it once, waits for it, and returns the
    selected choice (name, backend, tuned_ms). options.tuning is taken as 'benchmark' whatever it says. Where device
    memory runs out for the tuning, nothing is stored (README "Errors"): tuned_ms is then None."""
    name = _op_name(op)
    options = kwargs.pop("options", None) or Options()
    fields = {f: getattr(options, f) for f in options.__dataclass_fields__}
    fields["tuning"] = "benchmark"
    kwargs["options"] = Options(**fields)
    cargs, _ = _PREPARE[name](*args, **kwargs)
    run = getattr(_C, name)
    run(*cargs)
    torch.cuda.current_stream(cargs[0][2]).synchronize()
    for choice in run(*cargs, True).choices:
        if choice.selected:
            return choice
    raise Error(f"tune: no choice is selected for this {name}")  # pragma: no cover
