"""examples/fftconv.tk on the CPU: its matrix algebra and the interpreter against numpy's FFT
convolution, and the compile that needs tile-rematerialize (kept in registers over the loop,
its twiddles and filter spectrum would need more registers than a consumer gets)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import fftconv_ref  # noqa: E402


def _inputs(b: int, h: int, n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(0)
    u = rng.standard_normal((b, h, n)).astype(np.float16)
    k = (rng.standard_normal((h, n)) * np.exp(-np.arange(n) / (n / 8)) / 10).astype(np.float32)
    rows, cols = fftconv_ref.fft_shape(n)
    inputs = {"U": fftconv_ref.pairs(u, cols), **fftconv_ref.constants(rows, cols)}
    inputs["KR"], inputs["KI"] = fftconv_ref.spectrum(k, rows, cols)
    return inputs, fftconv_ref.conv(u.astype(np.float64), k.astype(np.float64))


@pytest.mark.parametrize("n", [640, 2048, 4096])
def test_the_matrix_algebra_computes_the_convolution(n: int) -> None:
    """Two sequences per complex FFT (u1 + i u2 -> y1 + i y2) at each FFT the example takes."""
    inputs, want = _inputs(4, 2, n)
    algebra = fftconv_ref.reference(inputs, {})["Y"].reshape(want.shape)
    assert np.linalg.norm(algebra - want) / np.linalg.norm(want) < 1e-3


def test_the_interpreter_computes_the_convolution() -> None:
    import tkc
    from tkc.frontend import parse_tk

    path = EXAMPLES / "fftconv.tk"
    inputs, want = _inputs(2, 2, 640)
    rows, cols = fftconv_ref.fft_shape(640)
    module = parse_tk(path.read_text(), str(path), {"ROWS": rows, "COLS": cols})
    got = tkc.interpret(module, "fftconv", inputs)["Y"]
    assert np.linalg.norm(np.asarray(got, np.float64).reshape(want.shape) - want) / np.linalg.norm(want) < 1e-2


def test_sequences_past_the_largest_fft_are_refused() -> None:
    with pytest.raises(ValueError, match="at most 8192"):
        fftconv_ref.fft_shape(4097)


def test_the_8192_point_fft_shares_one_staging_region() -> None:
    """Its two stores need 16 KB each beside 176 KB of single tiles and a 32 KB stage: only one
    region fits (plan.shared_staging), which the report says."""
    import tkc

    report = tkc.compile(EXAMPLES / "fftconv.tk").report()
    assert "one region for all stores" in report and "a region per store would not fit" in report


def test_twiddles_are_read_again_in_the_loop() -> None:
    import tkc

    kernel = tkc.compile(EXAMPLES / "fftconv.tk")
    assert kernel.ir("tile-rematerialize").count("rematerialized") >= 8
    assert "the demand of" in kernel.report()
