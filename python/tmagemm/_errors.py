"""The exceptions tmagemm raises: one class per C++ tmagemm::ErrorCode, each also a subclass of the built-in
exception a Python user expects (ValueError for bad input, NotImplementedError for what this build or op does not
handle, RuntimeError otherwise; torch.OutOfMemoryError where device memory ran out). The message is the C++ library's,
naming the argument and the rule."""

import torch


class Error(Exception):
    """Any error of tmagemm. `code` is the C++ ErrorCode's name."""

    code = "error"


class InvalidArgumentError(Error, ValueError):
    """The input breaks a rule (shape, dtype, stride, device, option); nothing was launched or written."""

    code = "invalid_argument"


class UnsupportedError(Error, NotImplementedError):
    """Valid input that this build, op or device does not handle."""

    code = "unsupported"


class CudaError(Error, RuntimeError):
    """A CUDA runtime or driver call failed (including: no CUDA device)."""

    code = "cuda_error"


class CompileError(Error, RuntimeError):
    """NVRTC failed to compile a kernel; the message carries the compiler log."""

    code = "compile_error"


class NoValidChoiceError(Error, RuntimeError):
    """Every backend declined the problem; the message lists each one's reason."""

    code = "no_valid_choice"


class OutOfMemoryError(CudaError, torch.OutOfMemoryError):
    """Device memory ran out for every choice that could run the call (each one's workspace, module or cuBLASLt's
    own); nothing was written to out, and the call may succeed once memory is freed. Also a torch.OutOfMemoryError,
    as torch's own ops raise."""

    code = "out_of_memory"


for _cls in (Error, InvalidArgumentError, UnsupportedError, CudaError, CompileError, NoValidChoiceError,
             OutOfMemoryError):
    _cls.__module__ = "tmagemm"
