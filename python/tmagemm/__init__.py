"""tmagemm: persistent TMA + WGMMA GEMM kernels for NVIDIA Hopper GPUs, tuned per problem, for PyTorch users.

    import torch, tmagemm
    out = tmagemm.mm(a, b)                      # like torch.mm, on torch's current stream
    out = tmagemm.addmm(bias, a, b, activation="gelu_tanh")
    out = tmagemm.scaled_mm(a8, b8, sa, sb, out_dtype=torch.bfloat16)
    torch.ops.tmagemm.mm(a, b)                  # the same op, as torch.compile and CUDA graphs see it
    print(tmagemm.explain("mm", a, b))          # every choice the dispatcher considers, and why
    tmagemm.tune("mm", a, b); tmagemm.cache.ls()

Importing needs no GPU. Errors are tmagemm.Error subclasses that are also ValueError (invalid argument),
NotImplementedError (unsupported) or RuntimeError (CUDA, compile, no valid choice), carrying the C++ message.
`python -m tmagemm.plot` draws `tmagemm bench` results.
"""

import pkgutil

# The build tree keeps the extension in <build>/python/tmagemm: let the package span both directories there.
__path__ = pkgutil.extend_path(__path__, __name__)

import torch  # noqa: E402  (torch first: its CUDA libraries are then the ones the extension finds)

from . import _C  # noqa: E402
from ._errors import (  # noqa: E402
    CompileError,
    CudaError,
    Error,
    InvalidArgumentError,
    NoValidChoiceError,
    OutOfMemoryError,
    UnsupportedError,
)

_C._set_error_types(InvalidArgumentError, UnsupportedError, CudaError, CompileError, NoValidChoiceError,
                    OutOfMemoryError)

from . import _library, cache  # noqa: E402,F401  (registers torch.ops.tmagemm.*)
from ._ops import addmm, bmm, explain, grouped_mm, mm, scaled_mm, tune  # noqa: E402
from ._options import Options  # noqa: E402

__version__ = _C.version
ChoiceReport = _C.ChoiceReport
Explanation = _C.Explanation

__all__ = [
    "mm", "addmm", "scaled_mm", "bmm", "grouped_mm", "explain", "tune", "cache", "Options", "Explanation", "ChoiceReport",
    "Error", "InvalidArgumentError", "UnsupportedError", "CudaError", "CompileError", "NoValidChoiceError",
    "OutOfMemoryError",
]
