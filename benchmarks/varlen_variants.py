"""Where varlen attention loses to dense attention: the same kernel with its tile table read in
one level (the table holds each block's query row, sequence start and end: no dependent load of
cu_seqlens) against the two-level table of examples/attention_varlen.tk, and dense attention at
whole tiles, one process, bf16, H = 16, 8 sequences of 517-4096 tokens.

    python benchmarks/varlen_variants.py [--runs 20]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

import tkc
from timing import median_ms

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from attention_varlen_ref import tile_table  # noqa: E402

EXAMPLE = (ROOT / "examples" / "attention_varlen.tk").read_text()
ONE_LEVEL = EXAMPLE.replace("CU: gl<i32>[B1], Tiles: gl<i32>[NT, 2]", "Tiles: gl<i32>[NT, 3]").replace(
    """    let b = load Tiles[t, 0] : i32
    let qi = load Tiles[t, 1] : i32
    let start = load CU[b] : i32
    let end = load CU[b + 1] : i32""",
    """    let start = load Tiles[t, 1] : i32
    let end = load Tiles[t, 2] : i32
    let qi = (load Tiles[t, 0] : i32 - start) / BQ""")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    path = Path(tempfile.mkdtemp()) / "one_level.tk"
    path.write_text(ONE_LEVEL)
    for d in (64, 128):
        for causal in (False, True):
            h = 16
            lengths = rng.integers(517, 4097, 8)
            cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
            t = int(cu[-1])
            q, k, v = (torch.randn(h, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            o1, o2 = torch.empty_like(q), torch.empty_like(q)
            table = tile_table(cu, causal=causal)
            rows = np.stack([cu[table[:, 0]] + table[:, 1] * 128, cu[table[:, 0]], cu[table[:, 0] + 1]], 1)
            two = tkc.compile(ROOT / "examples" / "attention_varlen.tk", kernel="attn_varlen", D=d, CAUSAL=causal)
            one = tkc.compile(path, kernel="attn_varlen", D=d, CAUSAL=causal)
            cu_dev, tiles2 = torch.from_numpy(cu).cuda(), torch.from_numpy(table).cuda()
            tiles3 = torch.from_numpy(rows.astype(np.int32)).cuda()
            two(q, k, v, o1, cu_dev, tiles2)
            one(q, k, v, o2, tiles3)
            torch.cuda.synchronize()
            assert torch.equal(o1, o2), "the one-level table computes something else"
            n = 2304
            b = t // n
            dense = tkc.compile(ROOT / "examples" / "attention.tk", kernel="attn_fwd", D=d, CAUSAL=causal)
            dq, dk, dv = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            do, dl = torch.empty_like(dq), torch.empty(b, h, n, device="cuda", dtype=torch.float32)
            ms = median_ms({"two_level": lambda _: two(q, k, v, o1, cu_dev, tiles2),
                            "one_level": lambda _: one(q, k, v, o2, tiles3),
                            "dense": lambda _: dense(dq, dk, dv, do, dl)}, args.runs, warmup=3)
            scale = 0.5 if causal else 1.0
            flop = 4.0 * h * d * float(np.sum(lengths.astype(np.float64) ** 2)) * scale
            dense_flop = 4.0 * b * h * n * n * d * scale
            print(f"D={d} {'causal' if causal else 'full  '}  two-level {flop / ms['two_level'] / 1e9:6.1f}  "
                  f"one-level {flop / ms['one_level'] / 1e9:6.1f}  dense(N={n}) {dense_flop / ms['dense'] / 1e9:6.1f} "
                  f"TFLOP/s", flush=True)


if __name__ == "__main__":
    main()
