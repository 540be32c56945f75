"""Based linear attention (Taylor feature map, feature dim 16, value dim 64, causal, normalised):
examples/based.tk against fla-core's parallel_based (the same parallel form), in one process.

    python benchmarks/based.py [--runs 30] [--shapes 16x16x2048,16x16x16384]

bf16, shapes B x H x N. tkc takes [B, H, N, D], fla-core [B, N, H, D] (contiguous inputs for
each). TFLOP/s count the tensor-core work of the causal parallel form, B·H·N²·(16 + 64) (the
lower triangle of Q K^T and of W V). Times: median of back-to-back batches (timing.median_ms) and
triton's do_bench; `tkc_over_fla` is fla's time over tkc's. The output is checked against fla's
first. Writes benchmarks/results/based-<date>.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

import tkc
from timing import times, write_record

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "based.tk"


def bench(b: int, h: int, n: int, runs: int) -> dict[str, object]:
    from fla.ops.based import parallel_based

    torch.manual_seed(0)
    q, k = (torch.randn(b, h, n, 16, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    v = torch.randn(b, h, n, 64, device="cuda", dtype=torch.bfloat16)
    o = torch.empty_like(v)
    kernel = tkc.compile(EXAMPLE, kernel="based")
    qf, kf, vf = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    fns = {"tkc": lambda: kernel(q, k, v, o), "fla": lambda: parallel_based(qf, kf, vf)}
    want = fns["fla"]().transpose(1, 2).float()
    fns["tkc"]()
    row: dict[str, object] = {"B": b, "H": h, "N": n}
    row["tkc_rel_err"] = rel = ((o.float() - want).norm() / want.norm()).item()
    if not rel < 1e-2:
        raise SystemExit(f"tkc Based B={b} H={h} N={n} is wrong: relative error {rel}")
    flop = b * h * n * n * (16 + 64)
    row.update(times(fns, runs, over="fla"))
    for name in fns:
        row[f"{name}_tflops"] = flop / row[f"{name}_ms"] / 1e9
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--shapes", default="16x16x2048,16x16x16384")
    args = parser.parse_args()
    rows = []
    for shape in args.shapes.split(","):
        b, h, n = map(int, shape.split("x"))
        row = bench(b, h, n, args.runs)
        rows.append(row)
        print(f"B={b} H={h} N={n:<6} tkc {row['tkc_ms']:.3f} ms ({row['tkc_ms_do_bench']:.3f}, "
              f"{row['tkc_tflops']:.0f} TFLOP/s)  fla {row['fla_ms']:.3f} ({row['fla_ms_do_bench']:.3f}, "
              f"{row['fla_tflops']:.0f})  tkc/fla {row['tkc_over_fla']:.2f}x ({row['tkc_over_fla_do_bench']:.2f}x)",
              flush=True)
    write_record("based", {"benchmark": "Based linear attention (parallel form) bf16", "runs": args.runs, "rows": rows})


if __name__ == "__main__":
    main()
