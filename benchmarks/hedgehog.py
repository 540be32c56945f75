"""Hedgehog linear attention (D = F = 128, 64-token chunks): tkc's pair of kernels
(examples/hedgehog.tk: hh_states, then hh_output) against torch eager in the same chunked form and
fla-core's `fused_chunk_linear_attn`, in one process.

    python benchmarks/hedgehog.py [--runs 30] [--shapes 16x16x2048,16x16x4096,16x16x16384] [--output 64x8,128x1]

bf16, shapes B x H x N. Every implementation computes from the same bf16 Q, K, V [B, H, N, 128]
and feature maps WQ, WK [H, 128, 64]. What each covers:
- tkc: all of Hedgehog (both feature maps, the sliding-window softmax, the linear part, the
  normalisation); timed as one call of both kernels. ALPHA = BETA = 1. `--output BVxCPB,...`
  times hh_output with each of those output columns and chunks per block (a row each).
- torch: the same in eager torch, chunk by chunk (f32 from the bf16 inputs); its output is the
  reference the others are checked against (relative error < 1e-2).
- fla: fla-core's fused_chunk_linear_attn (normalize=True, scale=1) on the feature-mapped q, k
  ([B, N, H, F], made beforehand, untimed): plain causal linear attention over all keys, without
  the window and without the feature maps, so a lower bound on the work rather than the same
  function (not checked against torch). Skipped with a note where fla-core is not installed
  (pip install fla-core einops).
TFLOP/s use ThunderKittens' count for Hedgehog: the causal softmax-attention FLOPs
2·B·H·N²·D times the share of (query, key) pairs in the window, plus
B·H·N·(2·64·D + 7·D·F) times the share of older pairs (the pairs counted over the N(N+1)/2 of the
causal triangle). Times: the median of back-to-back batches (timing.median_ms) and triton's
do_bench; `tkc_over_torch`, `tkc_over_fla` are their times over tkc's. Writes
benchmarks/results/hedgehog-<date>.json.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch

import tkc
from timing import times, write_record

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "hedgehog.tk"
BC, D, F = 64, 128, 128


def flops(b: int, h: int, n: int) -> float:
    """ThunderKittens' count (above); window pairs: r + 1 in a row r of chunk 0, 64 + r + 1 later."""
    pairs = n * (n + 1) / 2
    window = sum(r - max(0, (r // BC - 1) * BC) + 1 for r in range(n))
    return 2 * b * h * n * n * D * window / pairs + b * h * n * (2 * 64 * D + 7 * D * F) * (pairs - window) / pairs


def features(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    xw = torch.einsum("bhnd,hdf->bhnf", x, w)
    return torch.cat([xw.softmax(-1), (-xw).softmax(-1)], -1)


def torch_hedgehog(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor,
                   alpha: float = 1.0, beta: float = 1.0) -> torch.Tensor:
    """Eager Hedgehog in 64-token chunks, f32: the window (the chunk and the one before) as a batched
    softmax over 128 keys, the linear part through the states of the chunks before the window."""
    q, k, v, wq, wk = (t.float() for t in (q, k, v, wq, wk))
    b, h, n, d = q.shape
    chunks = -(-n // BC)
    pad = chunks * BC - n
    phi_q, phi_k = alpha * features(q, wq), features(k, wk)
    q, k, v, phi_q, phi_k = (torch.nn.functional.pad(t, (0, 0, 0, pad)).unflatten(2, (chunks, BC))
                             for t in (q, k, v, phi_q, phi_k))
    products = phi_k.transpose(-1, -2) @ v                          # [b, h, chunks, F, D]
    state = torch.cumsum(products, 2) - products                    # the chunks before each
    z = torch.cumsum(phi_k.sum(-2), 2) - phi_k.sum(-2)
    lag = torch.cat([state[:, :, :1], state[:, :, :-1]], 2)         # chunk c reads the state before c - 1
    zlag = torch.cat([z[:, :, :1], z[:, :, :-1]], 2)
    before = torch.cat([torch.zeros_like(k[:, :, :1]), k[:, :, :-1]], 2)
    keys = torch.cat([before, k], 3)                                # [b, h, chunks, 2 BC, D]
    values = torch.cat([torch.cat([torch.zeros_like(v[:, :, :1]), v[:, :, :-1]], 2), v], 3)
    rows = torch.arange(BC, device=q.device)
    cols = torch.arange(2 * BC, device=q.device) - BC
    visible = (cols[None, :] <= rows[:, None]) & ((cols[None, :] >= 0) | (torch.arange(chunks, device=q.device) > 0)[:, None, None])
    scores = (q @ keys.transpose(-1, -2) / d**0.5).masked_fill(~visible, float("-inf"))
    w = beta * (scores - scores.amax(-1, keepdim=True)).exp()
    num = w @ values + phi_q @ lag
    den = w.sum(-1) + (phi_q * zlag[:, :, :, None]).sum(-1) + 1e-6
    return (num / den[..., None]).flatten(2, 3)[:, :, :n]


def bench(b: int, h: int, n: int, runs: int, bv: int, cpb: int) -> dict[str, object]:
    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, n, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    wq, wk = (torch.randn(h, D, F // 2, device="cuda", dtype=torch.bfloat16) / 4 for _ in range(2))
    chunks = -(-n // BC)
    s = torch.empty(b, h, chunks, F, D, device="cuda", dtype=torch.bfloat16)
    z = torch.empty(b, h, chunks, F, device="cuda", dtype=torch.float32)
    o = torch.empty_like(v)
    hh_states = tkc.compile(EXAMPLE, kernel="hh_states")
    hh_output = tkc.compile(EXAMPLE, kernel="hh_output", BV=bv, CPB=cpb)

    def pair() -> None:
        hh_states(k, v, wk, s, z)
        hh_output(q, k, v, wq, s, z, o)

    fns: dict[str, Callable[[], object]] = {"tkc": pair, "torch": lambda: torch_hedgehog(q, k, v, wq, wk)}
    try:
        from fla.ops.linear_attn import fused_chunk_linear_attn
    except ImportError:
        print("fla-core is not installed: no fla baseline (pip install fla-core einops)")
    else:
        phi_q, phi_k = (features(x.float(), w.float()).to(torch.bfloat16).transpose(1, 2).contiguous()
                        for x, w in ((q, wq), (k, wk)))
        vf = v.transpose(1, 2).contiguous()
        fns["fla"] = lambda: fused_chunk_linear_attn(phi_q, phi_k, vf, scale=1.0, normalize=True)
    want = torch_hedgehog(q, k, v, wq, wk)
    pair()
    row: dict[str, object] = {"B": b, "H": h, "N": n, "D": D, "F": F, "BV": bv, "CPB": cpb}
    row["tkc_rel_err"] = rel = ((o.float() - want).norm() / want.norm()).item()
    if not rel < 1e-2:
        raise SystemExit(f"tkc Hedgehog B={b} H={h} N={n} is wrong: relative error {rel}")
    timed = times(fns, runs, over="torch")
    row.update(timed)
    if "fla" in fns:
        row["tkc_over_fla"] = timed["fla_ms"] / timed["tkc_ms"]
        row["tkc_over_fla_do_bench"] = timed["fla_ms_do_bench"] / timed["tkc_ms_do_bench"]
    for name in fns:
        row[f"{name}_tflops"] = flops(b, h, n) / timed[f"{name}_ms"] / 1e9
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--shapes", default="16x16x2048,16x16x4096,16x16x16384")
    parser.add_argument("--output", default="64x8", help="BVxCPB of hh_output: output columns, chunks per block")
    args = parser.parse_args()
    rows = []
    for shape, output in ((s, o) for s in args.shapes.split(",") for o in args.output.split(",")):
        b, h, n = map(int, shape.split("x"))
        bv, cpb = map(int, output.split("x"))
        row = bench(b, h, n, args.runs, bv, cpb)
        rows.append(row)
        fla = (f"  fla {row['fla_ms']:.3f} ({row['fla_ms_do_bench']:.3f})  tkc/fla {row['tkc_over_fla']:.2f}x"
               if "fla_ms" in row else "")
        print(f"B={b} H={h} N={n:<6} BV={bv:<3} CPB={cpb:<2} tkc {row['tkc_ms']:.3f} ms ({row['tkc_ms_do_bench']:.3f}, "
              f"{row['tkc_tflops']:.0f} TFLOP/s)  torch {row['torch_ms']:.3f} ({row['torch_ms_do_bench']:.3f})  "
              f"tkc/torch {row['tkc_over_torch']:.2f}x{fla}", flush=True)
    write_record("hedgehog", {"benchmark": "Hedgehog linear attention bf16, D = F = 128", "runs": args.runs, "rows": rows})


if __name__ == "__main__":
    main()
