"""Causal linear attention (examples/linear_attention.tk) on the GPU against its numpy reference:
exercises tile.to_shared (bf16(state) as a wgmma B operand written by every consumer), the
transposed-A wgmma of mma_AtB(k, v, state), the causal mask with fill 0.0, and with D = 128 and
BC = 64 register tiles of two heights (the 128-row state split over two consumers, the 64-row
chunk tiles replicated in both)."""

import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"
CASES = [  # (B, H, N, BC, D): one and two consumer warpgroups (BC = D = 128), 2 to 16 chunks
    (1, 2, 128, 64, 64),
    (2, 3, 512, 64, 64),
    (1, 2, 256, 128, 128),
    (2, 2, 1024, 128, 128),
    # D = 128 with 64-row chunks: the 128-row state split over two consumers, the chunk's tiles replicated
    (1, 2, 256, 64, 128),
    (2, 2, 1024, 64, 128),
    (1, 1, 200, 64, 128),  # a partial last chunk
]


def _reference() -> Callable[..., dict[str, np.ndarray]]:
    """examples/linear_attention_ref.reference."""
    spec = importlib.util.spec_from_file_location("linear_attention_ref", EXAMPLES / "linear_attention_ref.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference


@pytest.mark.parametrize("case", CASES, ids=lambda c: "B{}H{}N{}BC{}D{}".format(*c))
def test_linear_attention_matches_reference(case: tuple[int, int, int, int, int]) -> None:
    import torch

    import tkc

    b, h, n, bc, d = case
    kernel = tkc.compile(EXAMPLES / "linear_attention.tk", kernel="linear_attn", BC=bc, D=d)
    torch.manual_seed(n + d)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.full((b, h, n, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(q, k, v, o)
    torch.cuda.synchronize()
    inputs = {name: t.float().cpu().numpy() for name, t in (("Q", q), ("K", k), ("V", v))}
    expected = _reference()(inputs, {"BC": bc, "D": d})["O"]
    out = o.float().cpu().numpy()
    assert not np.isnan(out).any(), "unwritten or NaN outputs"
    rel = np.linalg.norm(out - expected) / np.linalg.norm(expected)
    assert rel < 1e-2, f"O relative error {rel:.3g}"
