"""Inputs and reference for fftconv.tk. `fft_shape(n)` picks the FFT of ROWS x COLS points a
sequence of n takes causally, `constants(rows, cols)` builds the DFT matrices and twiddles,
`spectrum(k, rows, cols)` a filter's FFT in the kernel's layout, `pairs(u, cols)` the view of u
[B, H, N] the kernel takes, `conv(u, k)` the causal convolution the kernel computes (numpy's FFT),
and `reference(inputs, params)` the kernel's own matrix algebra for whatever matrices it is given
(`tkc run --check`)."""

from __future__ import annotations

import numpy as np

FFT_SHAPES = ((64, 32), (64, 64), (128, 64))
"""The FFTs the example takes, ROWS x COLS points (t = n1 + COLS * n2 at [n2, n1]), smallest first:
64-row tiles fill a wgmma's rows, so 2048 points are 64 x 32 rather than 32 x 64."""


def fft_shape(n: int) -> tuple[int, int]:
    """The smallest FFT of at least 2n points (the causal convolution of n needs no wrap-around)."""
    for rows, cols in FFT_SHAPES:
        if rows * cols >= 2 * n:
            return rows, cols
    raise ValueError(f"sequences of {n} need an FFT of {2 * n} points; the example takes at most {rows * cols}")


def _dft(n: int) -> np.ndarray:
    j = np.arange(n)
    return np.exp(-2j * np.pi * np.outer(j, j) / n)


def constants(rows: int = 128, cols: int = 64) -> dict[str, np.ndarray]:
    """FR, FC and the twiddles T[k2, n1] = exp(-2 pi i n1 k2 / (rows cols)), as f16 (re, im) pairs."""
    twiddles = np.exp(-2j * np.pi * np.outer(np.arange(rows), np.arange(cols)) / (rows * cols))
    out = {}
    for name, z in (("FR", _dft(rows)), ("FC", _dft(cols)), ("T", twiddles)):
        out[name + "R"], out[name + "I"] = z.real.astype(np.float16), z.imag.astype(np.float16)
    return out


def spectrum(k: np.ndarray, rows: int = 128, cols: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """The filters k [H, N] as their FFT of rows x cols points, element k2 + rows k1 at [k2, k1]."""
    f = np.fft.fft(np.asarray(k, np.float64), n=rows * cols, axis=-1).reshape(k.shape[0], cols, rows).swapaxes(-1, -2)
    return np.ascontiguousarray(f.real, np.float16), np.ascontiguousarray(f.imag, np.float16)


def pairs(u: np.ndarray, cols: int) -> np.ndarray:
    """u [B, H, N] (B even, N a multiple of cols) as the kernel's [B/2, 2, H, N/cols, cols]."""
    b, h, n = u.shape
    return u.reshape(b // 2, 2, h, n // cols, cols)


def conv(u: np.ndarray, k: np.ndarray) -> np.ndarray:
    """y[b, h, t] = sum over s <= t of u[b, h, s] k[h, t - s]."""
    n = u.shape[-1]
    return np.fft.irfft(np.fft.rfft(u, n=2 * n) * np.fft.rfft(k, n=2 * n), n=2 * n)[..., :n]


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    c = {name: np.asarray(value, np.float64) for name, value in inputs.items()}
    fr, fc = c["FRR"] + 1j * c["FRI"], c["FCR"] + 1j * c["FCI"]
    t, k = c["TR"] + 1j * c["TI"], c["KR"] + 1j * c["KI"]
    rows, cols = fr.shape[0], fc.shape[0]
    p, _, h, r, _ = c["U"].shape
    kept = min(r, rows)  # the kernel reads and writes one tile of rows: rows past it stay unwritten
    x = np.zeros((p, h, rows, cols), complex)
    x[:, :, :kept] = c["U"][:, 0, :, :kept] + 1j * c["U"][:, 1, :, :kept]
    d = (fr @ x * t) @ fc * k[None]
    z = np.conj(fr) @ ((d @ np.conj(fc)) * np.conj(t)) / (rows * cols)
    y = np.full((p, 2, h, r, cols), np.nan)
    y[:, 0, :, :kept], y[:, 1, :, :kept] = z.real[:, :, :kept], z.imag[:, :, :kept]
    return {"Y": y}
