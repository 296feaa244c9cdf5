"""tmagemm: persistent TMA + WGMMA GEMM kernels for NVIDIA Hopper GPUs, tuned per problem.

Python side: `python -m tmagemm.plot` draws `tmagemm bench` results (bench/results/*.json) as PNG.
"""

__version__ = "0.1.0"
