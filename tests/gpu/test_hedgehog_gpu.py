"""Hedgehog linear attention (examples/hedgehog.tk: hh_states, then hh_output on its states) on
the GPU against Hedgehog's quadratic definition in torch, in f32: each query weighs the keys of
its chunk and the one before by beta exp(s - m), every older key by alpha phi(q) . phi(k)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from torch import Tensor

pytestmark = pytest.mark.gpu

EXAMPLE = Path(__file__).parents[2] / "examples" / "hedgehog.tk"
CASES = [  # (B, H, N, ALPHA, BETA, BV, CPB of hh_output): ragged last chunks (N = 200, 1000) and blocks, 64 chunks
    (1, 2, 200, 1.0, 1.0, 64, 8),
    (2, 4, 1024, 1.0, 1.0, 64, 8),
    (2, 3, 1000, 0.5, 2.0, 64, 8),
    (1, 2, 4096, 3.0, 0.25, 64, 8),
    (2, 3, 1000, 1.0, 1.0, 128, 1),
    (2, 4, 1024, 0.5, 2.0, 32, 3),
]


def quadratic(q: Tensor, k: Tensor, v: Tensor, wq: Tensor, wk: Tensor, alpha: float, beta: float,
              bc: int = 64) -> Tensor:
    import torch

    def features(x: Tensor, w: Tensor) -> Tensor:
        xw = torch.einsum("bhnd,hdf->bhnf", x, w)
        return torch.cat([xw.softmax(-1), (-xw).softmax(-1)], -1)

    n, d = q.shape[-2:]
    rows = torch.arange(n, device=q.device)
    causal = rows[None, :] <= rows[:, None]
    window = causal & (rows[None, :] // bc >= rows[:, None] // bc - 1)
    scores = (q @ k.transpose(-1, -2) / d**0.5).masked_fill(~window, float("-inf"))
    weights = beta * (scores - scores.amax(-1, keepdim=True)).exp()
    linear = alpha * features(q, wq) @ features(k, wk).transpose(-1, -2)
    weights = weights + linear.masked_fill(~(causal & ~window), 0)
    return weights @ v / (weights.sum(-1, keepdim=True) + 1e-6)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "B{}H{}N{}alpha{}beta{}BV{}CPB{}".format(*c))
def test_hedgehog_matches_torch(case: tuple[int, int, int, float, float, int, int]) -> None:
    import torch

    import tkc

    b, h, n, alpha, beta, bv, cpb = case
    bc, d, f = 64, 128, 128
    chunks = -(-n // bc)
    states = tkc.compile(EXAMPLE, kernel="hh_states")
    output = tkc.compile(EXAMPLE, kernel="hh_output", ALPHA=alpha, BETA=beta, BV=bv, CPB=cpb)
    torch.manual_seed(n)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    wq, wk = (torch.randn(h, d, f // 2, device="cuda", dtype=torch.bfloat16) / 4 for _ in range(2))
    s = torch.full((b, h, chunks, f, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    z = torch.full((b, h, chunks, f), float("nan"), device="cuda", dtype=torch.float32)
    o = torch.full((b, h, n, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    states(k, v, wk, s, z)
    output(q, k, v, wq, s, z, o)
    torch.cuda.synchronize()
    want = quadratic(*(t.float() for t in (q, k, v, wq, wk)), alpha, beta)
    got = o.float()
    assert not got.isnan().any(), "unwritten or NaN outputs"
    rel = ((got - want).norm() / want.norm()).item()
    assert rel < 1e-2, f"O relative error {rel:.3g}"
