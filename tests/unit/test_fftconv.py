"""examples/fftconv.tk on the CPU: its matrix algebra and the interpreter against numpy's FFT
convolution, and the compile that needs tile-rematerialize (kept in registers over the loop,
its twiddles and filter spectrum would need more registers than a consumer gets)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import fftconv_ref  # noqa: E402


def _inputs(b: int, h: int, n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(0)
    u = rng.standard_normal((b, h, n)).astype(np.float16)
    k = (rng.standard_normal((h, n)) * np.exp(-np.arange(n) / (n / 8)) / 10).astype(np.float32)
    inputs = {"U": u.reshape(b, h, n // 64, 64), **fftconv_ref.constants()}
    inputs["KR"], inputs["KI"] = fftconv_ref.spectrum(k)
    return inputs, fftconv_ref.conv(u.astype(np.float64), k.astype(np.float64))


def test_the_interpreter_computes_the_convolution() -> None:
    import tkc
    from tkc.frontend import parse_tk

    path = EXAMPLES / "fftconv.tk"
    inputs, want = _inputs(1, 2, 640)
    algebra = fftconv_ref.reference(inputs, {})["Y"].reshape(want.shape)
    assert np.linalg.norm(algebra - want) / np.linalg.norm(want) < 1e-3
    got = tkc.interpret(parse_tk(path.read_text(), str(path)), "fftconv", inputs, {})["Y"]
    assert np.linalg.norm(np.asarray(got, np.float64).reshape(want.shape) - want) / np.linalg.norm(want) < 1e-2


def test_twiddles_are_read_again_in_the_loop() -> None:
    import tkc

    kernel = tkc.compile(EXAMPLES / "fftconv.tk")
    assert kernel.ir("tile-rematerialize").count("rematerialized") >= 8
    assert "the demand of" in kernel.report()
