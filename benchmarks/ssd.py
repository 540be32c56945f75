"""Mamba-2's SSD scan with a scalar decay per token and head (examples/ssd.tk) against fla-core's
chunk_simple_gla (the same recurrence), in one process: `tkc` is ssd_states then ssd_output,
`tkc_split` ssd_chunk_states, ssd_passing, then ssd_output (the chunks' own state terms in
parallel, so only an element-wise scan walks the chunks).

    python benchmarks/ssd.py [--runs 30] [--d 64,128] [--shapes 8x16x2048,2x16x16384] [--bc 128] [--bv 16,32]

bf16 q, k, v; f32 log-decays g in [-0.1, 0) (per token and head); shapes B x H x N, D = head dim =
state dim, chunks of BC. tkc takes [B, H, N, D], fla-core its [B, N, H, D] layout (contiguous
inputs for each). TFLOP/s count the matmuls of the chunked algorithm, B·H·(4·N·BC·D + 4·N·D²)
(within-chunk scores and their product with V, causal half counted whole as the tensor cores do
it; the product with the states and the state updates). Times: median of back-to-back batches
(timing.median_ms) and triton's do_bench. `tkc_over_fla` is fla's time over tkc's. Outputs are
checked against fla-core's first. Writes benchmarks/results/ssd-<date>.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

import tkc
from timing import times, write_record

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ssd.tk"


def bench(b: int, h: int, n: int, d: int, runs: int, bc: int, bv: int) -> dict[str, object]:
    from fla.ops.simple_gla import chunk_simple_gla

    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) / d**0.25 for _ in range(3))
    g = -0.1 * torch.rand(b, h, n, device="cuda", dtype=torch.float32)
    scale = d**-0.5
    states = torch.empty(b, h, -(-n // bc), d, d, device="cuda", dtype=torch.bfloat16)
    terms = torch.empty_like(states)
    o, o_split = torch.empty_like(q), torch.empty_like(q)
    ssd_states = tkc.compile(EXAMPLE, kernel="ssd_states", D=d, BC=bc, BV=bv)
    ssd_chunk_states = tkc.compile(EXAMPLE, kernel="ssd_chunk_states", D=d, BC=bc)
    ssd_passing = tkc.compile(EXAMPLE, kernel="ssd_passing", D=d, BC=bc, BV=bv)
    ssd_output = tkc.compile(EXAMPLE, kernel="ssd_output", D=d, BC=bc, SCALE=scale)
    qf, kf, vf = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    gf = g.transpose(1, 2).contiguous()

    def pair() -> None:
        ssd_states(k, v, g, states)
        ssd_output(q, k, v, g, states, o)

    def split() -> None:
        ssd_chunk_states(k, v, g, terms)
        ssd_passing(terms, g, states)
        ssd_output(q, k, v, g, states, o_split)

    fns = {"tkc": pair, "tkc_split": split, "fla": lambda: chunk_simple_gla(qf, kf, vf, g=gf, scale=scale)[0]}
    want = fns["fla"]().transpose(1, 2).float()
    row: dict[str, object] = {"B": b, "H": h, "N": n, "D": d, "BC": bc, "BV": bv}
    for name, out in (("tkc", o), ("tkc_split", o_split)):
        fns[name]()
        row[f"{name}_rel_err"] = rel = ((out.float() - want).norm() / want.norm()).item()
        if not rel < 1e-2:
            raise SystemExit(f"{name} SSD B={b} H={h} N={n} D={d} is wrong: relative error {rel}")
    flop = b * h * (4.0 * n * bc * d + 4.0 * n * d * d)
    row.update(times(fns, runs, over="fla"))
    for name in fns:
        row[f"{name}_tflops"] = flop / row[f"{name}_ms"] / 1e9
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--shapes", default="8x16x2048,2x16x16384")
    parser.add_argument("--bc", default="128", help="chunk sizes")
    parser.add_argument("--bv", default="16,32", help="state columns per block of ssd_states")
    args = parser.parse_args()
    rows = []
    for d in map(int, args.d.split(",")):
        for shape in args.shapes.split(","):
            b, h, n = map(int, shape.split("x"))
            for bc, bv in ((bc, bv) for bc in map(int, args.bc.split(",")) for bv in map(int, args.bv.split(","))):
                row = bench(b, h, n, d, args.runs, bc, bv)
                rows.append(row)
                print(f"B={b} H={h} N={n:<6} D={d:<4} BC={bc:<4} BV={bv:<3} tkc {row['tkc_ms']:.3f} ms "
                      f"({row['tkc_ms_do_bench']:.3f}, {row['tkc_tflops']:.0f} TFLOP/s)  split {row['tkc_split_ms']:.3f} "
                      f"({row['tkc_split_ms_do_bench']:.3f})  fla {row['fla_ms']:.3f} ({row['fla_ms_do_bench']:.3f})  "
                      f"tkc/fla {row['tkc_over_fla']:.2f}x ({row['tkc_over_fla_do_bench']:.2f}x)  "
                      f"split/fla {row['tkc_split_over_fla']:.2f}x ({row['tkc_split_over_fla_do_bench']:.2f}x)", flush=True)
    write_record("ssd", {"benchmark": "SSD scalar-decay scan bf16", "runs": args.runs, "rows": rows})


if __name__ == "__main__":
    main()
