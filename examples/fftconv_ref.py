"""Inputs and reference for fftconv.tk. `constants()` builds the DFT matrices and twiddles,
`spectrum(k)` a filter's 8192-point FFT in the kernel's layout, `conv(u, k)` the causal
convolution the kernel computes (numpy's FFT), and `reference(inputs, params)` the kernel's own
matrix algebra for whatever matrices it is given (`tkc run --check`)."""

from __future__ import annotations

import numpy as np

ROWS, COLS = 128, 64  # the FFT of 8192 = ROWS x COLS points: t = n1 + COLS * n2 at [n2, n1]
SIZE = ROWS * COLS


def _dft(n: int) -> np.ndarray:
    j = np.arange(n)
    return np.exp(-2j * np.pi * np.outer(j, j) / n)


def constants() -> dict[str, np.ndarray]:
    """F128, F64 and the twiddles T[k2, n1] = exp(-2 pi i n1 k2 / 8192), as f16 (re, im) pairs."""
    twiddles = np.exp(-2j * np.pi * np.outer(np.arange(ROWS), np.arange(COLS)) / SIZE)
    out = {}
    for name, z in (("F128", _dft(ROWS)), ("F64", _dft(COLS)), ("T", twiddles)):
        out[name + "R"], out[name + "I"] = z.real.astype(np.float16), z.imag.astype(np.float16)
    return out


def spectrum(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The filters k [H, N] (N <= 4096) as their FFT of 8192 points, element k2 + 128 k1 at [k2, k1]."""
    f = np.fft.fft(np.asarray(k, np.float64), n=SIZE, axis=-1).reshape(k.shape[0], COLS, ROWS).swapaxes(-1, -2)
    return np.ascontiguousarray(f.real, np.float16), np.ascontiguousarray(f.imag, np.float16)


def conv(u: np.ndarray, k: np.ndarray) -> np.ndarray:
    """y[b, h, t] = sum over s <= t of u[b, h, s] k[h, t - s]."""
    n = u.shape[-1]
    return np.fft.irfft(np.fft.rfft(u, n=SIZE) * np.fft.rfft(k, n=SIZE), n=SIZE)[..., :n]


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    c = {name: np.asarray(value, np.float64) for name, value in inputs.items()}
    f128, f64 = c["F128R"] + 1j * c["F128I"], c["F64R"] + 1j * c["F64I"]
    t, k = c["TR"] + 1j * c["TI"], c["KR"] + 1j * c["KI"]
    b, h, r, _ = c["U"].shape
    rows = min(r, ROWS)  # the kernel reads and writes one 128-row tile: rows past it stay unwritten
    x = np.zeros((b, h, ROWS, COLS))
    x[:, :, :rows] = c["U"][:, :, :rows]
    d = (f128 @ x * t) @ f64 * k[None]
    z = np.real(np.conj(f128) @ ((d @ np.conj(f64)) * np.conj(t))) / SIZE
    y = np.full((b, h, r, COLS), np.nan)
    y[:, :, :rows] = z[:, :, :rows]
    return {"Y": y}
