"""examples/fftconv.tk on the GPU against numpy's FFT convolution, at sequence lengths from one
row of 64 to the longest the 8192-point FFT takes causally (4096), with the output's padding
rows left untouched."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("b, h, n", [(1, 1, 64), (2, 3, 1000 // 64 * 64), (2, 4, 4096)])
def test_fftconv_matches_numpy(b: int, h: int, n: int) -> None:
    import torch

    import tkc

    sys.path.insert(0, str(EXAMPLES))
    import fftconv_ref

    rng = np.random.default_rng(n)
    u = rng.standard_normal((b, h, n)).astype(np.float16)
    k = (rng.standard_normal((h, n)) * np.exp(-np.arange(n) / (n / 8)) / 10).astype(np.float32)
    inputs = {"U": u.reshape(b, h, n // 64, 64), **fftconv_ref.constants()}
    inputs["KR"], inputs["KI"] = fftconv_ref.spectrum(k)
    kernel = tkc.compile(EXAMPLES / "fftconv.tk", kernel="fftconv")
    args = [torch.from_numpy(inputs[name]).cuda() for name in ("U", "F128R", "F128I", "F64R", "F64I", "TR", "TI", "KR", "KI")]
    y = torch.full((b, h, n // 64, 64), float("nan"), device="cuda", dtype=torch.float16)
    kernel(*args, y)
    torch.cuda.synchronize()
    got = y.float().cpu().numpy().reshape(b, h, n)
    want = fftconv_ref.conv(u.astype(np.float64), k.astype(np.float64))
    assert not np.isnan(got).any(), "the kernel left outputs unwritten"
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-2
