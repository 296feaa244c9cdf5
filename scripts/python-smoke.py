"""One call of the installed package (CI's and the README's check of `pip install .`): imports tmagemm, prints where
it came from, then on a GPU runs tmagemm.mm on 256^3 bf16 and compares it with torch.mm; without one, checks that a
call on CPU tensors raises tmagemm's ValueError. Exits 0 when that holds."""

import sys

import torch

import tmagemm

print(f"tmagemm {tmagemm.__version__} from {tmagemm.__file__}; torch {torch.__version__}")
if torch.cuda.is_available():
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    out, ref = tmagemm.mm(a, b), torch.mm(a.double(), b.double())
    err = ((out.double() - ref).norm() / ref.norm()).item()
    print(f"tmagemm.mm 256^3 on {torch.cuda.get_device_name()}: relative error {err:.2e}")
    sys.exit(0 if err < 1e-2 else 1)
try:
    tmagemm.mm(torch.randn(4, 4), torch.randn(4, 4))
except ValueError as e:
    print(f"no CUDA device; a call on CPU tensors raises ValueError as it should: {e}")
    sys.exit(0)
print("a call on CPU tensors did not raise")
sys.exit(1)
