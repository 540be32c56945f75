"""Causal linear attention (identity feature map, no normalisation): tkc's chunk-parallel pair
(examples/linear_attention_chunked.tk) and its one-kernel form (examples/linear_attention.tk)
against fla-core's `chunk_linear_attn` (normalize=False, scale=1), in one process.

    python benchmarks/linear_attention.py [--runs 30] [--d 64,128] [--shapes 8x16x2048,2x16x16384] [--bc 128] [--bv 16,32]

bf16, shapes B x H x N. tkc takes [B, H, N, D]; fla-core its own [B, N, H, D] layout (each given
contiguous inputs in its layout). Times: the median of back-to-back batches between CUDA events
(timing.median_ms) and triton's do_bench, per call; the pair is timed as one call of both kernels.
`tkc_over_fla` is fla's time over tkc's (above 1: tkc is faster). Outputs are checked against
fla-core's first. Writes benchmarks/results/linear_attention-<date>.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

import tkc
from timing import times, write_record

ROOT = Path(__file__).resolve().parents[1] / "examples"


def bench(b: int, h: int, n: int, d: int, runs: int, bc: int, bv: int) -> dict[str, object]:
    from fla.ops.linear_attn import chunk_linear_attn

    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) / d**0.5 for _ in range(3))
    chunks = -(-n // bc)
    states = torch.empty(b, h, chunks, d, d, device="cuda", dtype=torch.bfloat16)
    o_pair, o_one = torch.empty_like(q), torch.empty_like(q)
    la_states = tkc.compile(ROOT / "linear_attention_chunked.tk", kernel="la_states", D=d, BC=bc, BV=bv)
    la_output = tkc.compile(ROOT / "linear_attention_chunked.tk", kernel="la_output", D=d, BC=bc)
    one = tkc.compile(ROOT / "linear_attention.tk", kernel="linear_attn", D=d)
    qf, kf, vf = (t.transpose(1, 2).contiguous() for t in (q, k, v))

    def pair() -> None:
        la_states(k, v, states)
        la_output(q, k, v, states, o_pair)

    fns = {
        "tkc": pair,
        "tkc_one_kernel": lambda: one(q, k, v, o_one),
        "fla": lambda: chunk_linear_attn(qf, kf, vf, scale=1.0, normalize=False)[0],
    }
    want = fns["fla"]().transpose(1, 2).float()
    pair()
    fns["tkc_one_kernel"]()
    row: dict[str, object] = {"B": b, "H": h, "N": n, "D": d, "BC": bc, "BV": bv}
    for name, got in (("tkc", o_pair), ("tkc_one_kernel", o_one)):
        row[f"{name}_rel_err"] = rel = ((got.float() - want).norm() / want.norm()).item()
        if not rel < 1e-2:
            raise SystemExit(f"{name} B={b} H={h} N={n} D={d} is wrong: relative error {rel}")
    row.update(times(fns, runs, over="fla"))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--shapes", default="8x16x2048,2x16x16384")
    parser.add_argument("--bc", default="128", help="chunk sizes of the pair")
    parser.add_argument("--bv", default="16,32", help="state columns per block of la_states")
    args = parser.parse_args()
    rows = []
    for d in map(int, args.d.split(",")):
        for shape in args.shapes.split(","):
            b, h, n = map(int, shape.split("x"))
            for bc, bv in ((bc, bv) for bc in map(int, args.bc.split(",")) for bv in map(int, args.bv.split(","))):
                row = bench(b, h, n, d, args.runs, bc, bv)
                rows.append(row)
                print(f"B={b} H={h} N={n:<6} D={d:<4} BC={bc:<4} BV={bv:<3} tkc pair {row['tkc_ms']:.3f} ms ({row['tkc_ms_do_bench']:.3f})  "
                      f"one kernel {row['tkc_one_kernel_ms']:.3f} ({row['tkc_one_kernel_ms_do_bench']:.3f})  "
                      f"fla {row['fla_ms']:.3f} ({row['fla_ms_do_bench']:.3f})  "
                      f"tkc/fla {row['tkc_over_fla']:.2f}x ({row['tkc_over_fla_do_bench']:.2f}x)  "
                      f"one kernel/fla {row['tkc_one_kernel_over_fla']:.2f}x", flush=True)
    write_record("linear_attention", {"benchmark": "causal linear attention bf16", "runs": args.runs, "rows": rows})


if __name__ == "__main__":
    main()
