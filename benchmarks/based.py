"""Based linear attention (Taylor feature map, feature dim 16, value dim 64, causal, normalised):
examples/based.tk (the parallel form, as fla-core's parallel_based computes it) and
examples/based_chunked.tk (the recurrent form, chunk by chunk, as ThunderKittens' Based kernel
computes it) against fla-core's parallel_based, in one process.

    python benchmarks/based.py [--runs 30] [--shapes 16x16x2048,16x16x16384] [-D NAME=VALUE ...]

bf16, shapes B x H x N. tkc takes [B, H, N, D], fla-core [B, N, H, D] (contiguous inputs for
each). TFLOP/s count the tensor-core work of the causal parallel form, B·H·N²·(16 + 64) (the
lower triangle of Q K^T and of W V), for every implementation, so they compare as speeds;
`tk_tflops` counts ThunderKittens' 70,434 FLOP per token and head at value dim 64 (its figure:
217 TFLOP/s at B16 H16 N16384 on an H100). `-D` pins a parameter or annotation of the chunked
kernel (BV, @ctas_per_sm, ...), recorded under `params`. Times: median of back-to-back batches (timing.median_ms) and
triton's do_bench; `tkc_over_fla` is fla's time over tkc's. The output is checked against fla's
first. Writes benchmarks/results/based-<date>.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import sys

import torch

import tkc
from tkc.frontend import parse_define
from timing import times, write_record

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
import based_chunked_ref  # noqa: E402

TK_FLOP_PER_TOKEN = 70434
"""ThunderKittens' count of Based's work per token and head at value dim 64 (its benchmark)."""


def bench(b: int, h: int, n: int, runs: int, params: dict[str, int | bool | float]) -> dict[str, object]:
    from fla.ops.based import parallel_based

    torch.manual_seed(0)
    q, k = (torch.randn(b, h, n, 16, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    v = torch.randn(b, h, n, 64, device="cuda", dtype=torch.bfloat16)
    o = torch.empty_like(v)
    o_chunked = torch.empty_like(v)
    kernel = tkc.compile(EXAMPLES / "based.tk", kernel="based")
    chunked = tkc.compile(EXAMPLES / "based_chunked.tk", kernel="based_chunked", **params)
    e1, e2 = (torch.from_numpy(e).to("cuda", torch.bfloat16) for e in based_chunked_ref.feature_maps())
    qf, kf, vf = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    fns = {"tkc": lambda: kernel(q, k, v, o), "tkc_chunked": lambda: chunked(q, k, v, e1, e2, o_chunked),
           "fla": lambda: parallel_based(qf, kf, vf)}
    want = fns["fla"]().transpose(1, 2).float()
    fns["tkc"]()
    fns["tkc_chunked"]()
    row: dict[str, object] = {"B": b, "H": h, "N": n}
    for name, out in (("tkc", o), ("tkc_chunked", o_chunked)):
        row[f"{name}_rel_err"] = rel = ((out.float() - want).norm() / want.norm()).item()
        if not rel < 1e-2:
            raise SystemExit(f"{name} Based B={b} H={h} N={n} is wrong: relative error {rel}")
    flop = b * h * n * n * (16 + 64)
    row.update(times(fns, runs, over="fla"))
    for name in fns:
        row[f"{name}_tflops"] = flop / row[f"{name}_ms"] / 1e9
        row[f"{name}_tk_tflops"] = b * h * n * TK_FLOP_PER_TOKEN / row[f"{name}_ms"] / 1e9
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--shapes", default="16x16x2048,16x16x16384")
    parser.add_argument("-D", dest="define", action="append", default=[],
                        help="compile-time parameter NAME=VALUE, or @ANNOTATION=VALUE, of the chunked kernel")
    args = parser.parse_args()
    params = dict(parse_define(item) for item in args.define)
    rows = []
    for shape in args.shapes.split(","):
        b, h, n = map(int, shape.split("x"))
        row = bench(b, h, n, args.runs, params)
        rows.append(row)
        print(f"B={b} H={h} N={n:<6} tkc {row['tkc_ms']:.3f} ms ({row['tkc_ms_do_bench']:.3f}), chunked "
              f"{row['tkc_chunked_ms']:.3f} ({row['tkc_chunked_ms_do_bench']:.3f}, {row['tkc_chunked_tk_tflops']:.0f} "
              f"TFLOP/s by ThunderKittens' count)  fla {row['fla_ms']:.3f} ({row['fla_ms_do_bench']:.3f})  "
              f"tkc/fla {row['tkc_over_fla']:.2f}x ({row['tkc_over_fla_do_bench']:.2f}x), chunked/fla "
              f"{row['tkc_chunked_over_fla']:.2f}x ({row['tkc_chunked_over_fla_do_bench']:.2f}x)", flush=True)
    write_record("based", {"benchmark": "Based linear attention (parallel and chunked forms) bf16", "params": params,
                           "runs": args.runs, "rows": rows})


if __name__ == "__main__":
    main()
