"""examples/fp8_quant.tk on the GPU against torch (the scales, the e4m3 codes, the dequantised
values, with ragged M), and gelu's accuracy against its exact form (docs/language.md states the
bound: an absolute error below 2e-6 for every x)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).parents[2]
E4M3_MAX = 448.0
GELU_ABS_TOLERANCE = 2e-6


@pytest.mark.parametrize("m,d", [(4096, 128), (1000, 128), (777, 256)])
def test_quantise_and_dequantise_match_torch(m: int, d: int) -> None:
    torch = pytest.importorskip("torch")
    import tkc

    path = ROOT / "examples" / "fp8_quant.tk"
    quant = tkc.compile(path, kernel="fp8_quant", D=d)
    dequant = tkc.compile(path, kernel="fp8_dequant", D=d)
    # rows over six orders of magnitude (the product is f32: round it to the kernel's bf16)
    x = (torch.randn(m, d, device="cuda") * torch.logspace(-3, 3, m, device="cuda")[:, None]).to(torch.bfloat16)
    x[0] = 0  # an all-zero row quantises to zeros
    q = torch.empty(m, d, device="cuda", dtype=torch.float8_e4m3fn)
    s = torch.full((m,), float("nan"), device="cuda")
    y = torch.empty_like(x)
    quant(x, q, s)
    dequant(q, s, y)
    torch.cuda.synchronize()
    xf = x.float()
    s_ref = xf.abs().amax(dim=1).clamp_min(1e-30) / E4M3_MAX
    torch.testing.assert_close(s, s_ref, rtol=1e-6, atol=0)
    q_ref = (xf / s_ref[:, None]).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    differ = q.view(torch.uint8) != q_ref.view(torch.uint8)
    assert differ.float().mean().item() < 1e-3, "more than ties differ in the e4m3 codes"
    # where a code differs it is the neighbouring one (x * (1/s) and x / s round apart at a tie)
    assert ((q.float() - q_ref.float()).abs() <= q_ref.float().abs() * 0.125 + 2**-9).all()
    assert not q[0].float().any()
    torch.testing.assert_close(y, (q.float() * s[:, None]).to(torch.bfloat16), rtol=0, atol=0)


def test_gelu_is_within_its_stated_error() -> None:
    from tkc.runner import run_on_gpu

    x = np.linspace(-12, 12, 256 * 128, dtype=np.float32).reshape(256, 128)
    x[0, :4] = [0.0, -0.0, 30.0, -30.0]
    out = run_on_gpu(path=str(ROOT / "tests" / "gpu" / "kernels" / "gelu.tk"), kernel="gelu_f32",
                     inputs={"X": x, "Y": np.zeros_like(x)}, params={})
    exact = np.vectorize(lambda v: 0.5 * v * math.erfc(-v / math.sqrt(2.0)))(x.astype(np.float64))
    error = np.abs(np.asarray(out["Y"], np.float64) - exact)
    assert error.max() <= GELU_ABS_TOLERANCE, f"max abs error {error.max():.3g} at x = {x.flat[error.argmax()]}"
