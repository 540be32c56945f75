"""Variable-length attention (examples/attention_varlen.tk) on the GPU against SDPA run on each
sequence alone: a dozen random lengths (1 to a few hundred, none a multiple of the tile), D = 64
and 128, causal and not. The output is poisoned: rows past the last sequence must stay NaN, and
no sequence may write into its neighbour (a tile reaching past its sequence's end)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_attention_matches_sdpa_per_sequence(d: int, causal: bool) -> None:
    torch = pytest.importorskip("torch")
    import tkc

    sys.path.insert(0, str(ROOT / "examples"))
    from attention_varlen_ref import tile_table

    rng = np.random.default_rng(d + causal)
    lengths = np.concatenate([[1, 17, 128, 129], rng.integers(1, 400, 8)])
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    h, spare = 3, 37
    t = int(cu[-1]) + spare
    q, k, v = (torch.randn(h, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    kernel = tkc.compile(ROOT / "examples" / "attention_varlen.tk", kernel="attn_varlen", D=d, CAUSAL=causal)
    kernel(q, k, v, o, torch.from_numpy(cu).cuda(), torch.from_numpy(tile_table(cu, causal=causal)).cuda())
    torch.cuda.synchronize()
    assert torch.isnan(o[:, cu[-1]:]).all(), "rows past the last sequence were written"
    for start, end in zip(cu[:-1], cu[1:]):
        want = torch.nn.functional.scaled_dot_product_attention(
            *(x[:, start:end].float()[None] for x in (q, k, v)), is_causal=causal)[0]
        got = o[:, start:end].float()
        assert not torch.isnan(got).any(), f"sequence {start}..{end}: unwritten or NaN rows"
        rel = ((got - want).norm() / want.norm()).item()
        assert rel < 1e-2, f"sequence {start}..{end}: relative error {rel:.3g}"
