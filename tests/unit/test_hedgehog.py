"""examples/hedgehog.tk on the CPU: its chunked reference against the quadratic definition of
Hedgehog attention (every query against every key, each weight picked by a mask), and the two
kernels, interpreted one after the other, against that definition."""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import hedgehog_ref  # noqa: E402


def quadratic(q: np.ndarray, k: np.ndarray, v: np.ndarray, wq: np.ndarray, wk: np.ndarray,
              bc: int, alpha: float, beta: float) -> np.ndarray:
    """Hedgehog as one weight per (query, key): beta exp(s - m) for the keys of the query's chunk
    and the one before (m: the largest such s), alpha phi(q) . phi(k) for the older keys."""
    n, d = q.shape[-2:]
    rows = np.arange(n)
    causal = rows[None, :] <= rows[:, None]
    window = causal & (rows[None, :] // bc >= rows[:, None] // bc - 1)
    scores = np.where(window, q @ np.swapaxes(k, -1, -2) / np.sqrt(d), -np.inf)
    weights = beta * np.exp(scores - scores.max(-1, keepdims=True))
    phi_q, phi_k = hedgehog_ref.features(q, wq), hedgehog_ref.features(k, wk)
    weights += np.where(causal & ~window, alpha * phi_q @ np.swapaxes(phi_k, -1, -2), 0)
    return weights @ v / (weights.sum(-1, keepdims=True) + 1e-6)


def _inputs(b: int, h: int, n: int, d: int, f: int, seed: int = 0) -> dict[str, np.ndarray]:
    """bf16-representable inputs (as the kernels read them) in float64."""
    rng = np.random.default_rng(seed)
    shapes = {"Q": (b, h, n, d), "K": (b, h, n, d), "V": (b, h, n, d), "WQ": (h, d, f // 2), "WK": (h, d, f // 2)}
    return {name: rng.standard_normal(shape).astype(ml_dtypes.bfloat16).astype(np.float64) / (4 if name[0] == "W" else 1)
            for name, shape in shapes.items()}


@pytest.mark.parametrize("n, bc, alpha, beta", [(64, 16, 1.0, 1.0), (100, 16, 0.5, 2.0), (200, 32, 3.0, 0.25)])
def test_chunked_reference_is_the_quadratic_definition(n: int, bc: int, alpha: float, beta: float) -> None:
    x = _inputs(2, 3, n, 32, 16)
    args = (x["Q"], x["K"], x["V"], x["WQ"], x["WK"], bc, alpha, beta)
    want = quadratic(*args)
    np.testing.assert_allclose(hedgehog_ref.hedgehog(*args), want, rtol=1e-9, atol=1e-12)


def test_the_two_kernels_compute_hedgehog() -> None:
    """hh_states then hh_output on its S and Z, at a ragged length (the last chunk 8 rows of 64)."""
    import tkc
    from tkc.frontend import parse_tk

    path = EXAMPLES / "hedgehog.tk"
    params: dict[str, int | float] = {"D": 64, "F": 64, "ALPHA": 0.5, "BETA": 2.0}
    b, h, n = 1, 2, 200
    x = _inputs(b, h, n, 64, 64, seed=1)
    sizes = {"B": b, "H": h, "N": n, "NC": 4}
    module = parse_tk(path.read_text(), str(path), params)
    ins: dict[str, np.ndarray] = {name: a.astype(np.float32) for name, a in x.items()}
    states = tkc.interpret(module, "hh_states", {"K": ins["K"], "V": ins["V"], "WK": ins["WK"]}, sizes)
    given = {name: np.asarray(states[name], np.float32) for name in ("S", "Z")}
    out = tkc.interpret(module, "hh_output", {n_: ins[n_] for n_ in ("Q", "K", "V", "WQ")} | given, sizes)["O"]
    want = quadratic(x["Q"], x["K"], x["V"], x["WQ"], x["WK"], 64, 0.5, 2.0)
    got = np.asarray(out, np.float64)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-2
