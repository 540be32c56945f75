"""examples/fftconv.tk on the GPU against numpy's FFT convolution, at each FFT the example takes
(2048, 4096 and 8192 points) and sequence lengths from one row to the longest each FFT takes
causally, with the output's padding rows left untouched; and the 8192-point FFT at N = 4096 with
its two stores in one staging region (the plan's shared_staging, which that shape needs) against
a region each at 2048 points."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("b, h, n, pins", [
    (2, 1, 64, {}), (2, 3, 1000 // 64 * 64, {}), (4, 4, 4096, {}),  # 128 x 64 points
    (2, 3, 1024 + 64, {}), (4, 2, 2048, {}),  # 64 x 64
    (2, 3, 32, {}), (6, 2, 1024, {}),  # 64 x 32
    (4, 2, 2048, {"@shared_staging": 1, "@stages": 1, "@ctas_per_sm": 2, "@persistent": 0}),
])
def test_fftconv_matches_numpy(b: int, h: int, n: int, pins: dict[str, int]) -> None:
    import torch

    import tkc

    sys.path.insert(0, str(EXAMPLES))
    import fftconv_ref

    rows, cols = fftconv_ref.fft_shape(n)
    rng = np.random.default_rng(n)
    u = rng.standard_normal((b, h, n)).astype(np.float16)
    k = (rng.standard_normal((h, n)) * np.exp(-np.arange(n) / (n / 8)) / 10).astype(np.float32)
    inputs = {"U": fftconv_ref.pairs(u, cols), **fftconv_ref.constants(rows, cols)}
    inputs["KR"], inputs["KI"] = fftconv_ref.spectrum(k, rows, cols)
    kernel = tkc.compile(EXAMPLES / "fftconv.tk", kernel="fftconv", ROWS=rows, COLS=cols, **pins)
    args = [torch.from_numpy(inputs[name]).cuda() for name in ("U", "FRR", "FRI", "FCR", "FCI", "TR", "TI", "KR", "KI")]
    y = torch.full(inputs["U"].shape, float("nan"), device="cuda", dtype=torch.float16)
    kernel(*args, y)
    torch.cuda.synchronize()
    got = y.float().cpu().numpy().reshape(b, h, n)
    want = fftconv_ref.conv(u.astype(np.float64), k.astype(np.float64))
    assert not np.isnan(got).any(), "the kernel left outputs unwritten"
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-2
