"""Variable-length attention (examples/attention_varlen.tk) on the GPU against SDPA run on each
sequence alone: a dozen random lengths (1 to a few hundred, none a multiple of the tile), D = 64
and 128, causal and not. The output is poisoned: rows past the last sequence must stay NaN, and
no sequence may write into its neighbour (a tile reaching past its sequence's end)."""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
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


def test_vectors_at_sequence_offsets_match_the_interpreter() -> None:
    """A per-key bias and a per-query scale loaded at sequence offsets (elem starts along their
    tensor's innermost dim that are no multiple of 16 bytes: realigned loads) against the
    interpreter; rows past the last sequence stay NaN."""
    from tkc.driver import load_module
    from tkc.interpreter import interpret
    from tkc.runner import run_on_gpu

    sys.path.insert(0, str(ROOT / "examples"))
    from attention_varlen_ref import tile_table

    path = ROOT / "tests" / "gpu" / "kernels" / "varlen_vectors.tk"
    rng = np.random.default_rng(5)
    lengths = np.array([1, 17, 64, 65, 130, 3, 250])
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    h, t = 2, int(cu[-1]) + 10  # KB and QS rows of T f32: TMA needs T a multiple of 4
    tiles = tile_table(cu, block_q=64)
    inputs = {name: rng.standard_normal((h, t, 64)).astype(ml_dtypes.bfloat16) for name in ("Q", "K", "V")}
    inputs |= {"O": np.full((h, t, 64), np.nan, ml_dtypes.bfloat16), "CU": cu, "Tiles": tiles,
               "KB": rng.standard_normal((h, t)).astype(np.float32), "QS": rng.standard_normal((h, t)).astype(np.float32)}
    want = np.asarray(interpret(load_module(str(path), None, {}), "varlen_vectors", inputs, {})["O"], np.float32)
    got = np.asarray(run_on_gpu(path=str(path), kernel="varlen_vectors", inputs=inputs, params={})["O"], np.float32)
    assert np.isnan(got[:, cu[-1]:]).all(), "rows past the last sequence were written"
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    rel = np.linalg.norm(got[ok] - want[ok]) / np.linalg.norm(want[ok])
    assert rel < 1e-2, f"relative error {rel:.3g} against the interpreter"
