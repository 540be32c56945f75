"""Where attention backward's time goes: each tkc backward kernel timed alone (timing.median_ms),
with the TFLOP/s of the matmuls it does, for tile-size variants of the dK/dV kernel.

    python benchmarks/attention_bwd_parts.py [--n 4096] [--d 64,128] [--bq 32,64]

H = 16, B = 32768 // N, bf16, causal and not. dK/dV does 4 of the backward's 5 matmul units
(2·B·H·N²·D FLOPs each, halved for causal), dQ 3 (it recomputes S and dP).
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import torch

import tkc
from timing import median_ms

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "attention_bwd.tk"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--n", default="4096")
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--bq", default="32,64")
    args = parser.parse_args()
    for n, d, causal in itertools.product(map(int, args.n.split(",")), map(int, args.d.split(",")), (False, True)):
        b, h = 32768 // n, 16
        q, k, v, o, d_o = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(5))
        lse = torch.randn(b, h, n, device="cuda") + 5
        delta = torch.randn(b, h, n, device="cuda")
        out = [torch.empty_like(q) for _ in range(3)]
        unit = 2.0 * b * h * n * n * d / (2 if causal else 1)
        fns, flops = {}, {}
        delta_kernel = tkc.compile(EXAMPLE, kernel="attn_bwd_delta", D=d)
        fns["delta"], flops["delta"] = (lambda _: delta_kernel(o, d_o, delta)), 0.0
        for bq in map(int, args.bq.split(",")):
            try:
                kernel = tkc.compile(EXAMPLE, kernel="attn_bwd_dkdv", D=d, BQ=bq, CAUSAL=causal)
            except tkc.TkError as e:
                print(f"D={d} BQ={bq}: {str(e).splitlines()[0]}")
                continue
            fns[f"dkdv BQ={bq}"] = lambda _, kernel=kernel: kernel(q, k, v, d_o, lse, delta, out[1], out[2])
            flops[f"dkdv BQ={bq}"] = 4 * unit
        dq_kernel = tkc.compile(EXAMPLE, kernel="attn_bwd_dq", D=d, CAUSAL=causal)
        fns["dq"], flops["dq"] = (lambda _: dq_kernel(q, k, v, d_o, lse, delta, out[0])), 3 * unit
        times = median_ms(fns, args.runs, warmup=3)
        cells = "  ".join(f"{name} {ms:.3f} ms" + (f" {flops[name] / ms / 1e9:.0f} TF/s" if flops[name] else "")
                          for name, ms in times.items())
        print(f"N={n} D={d} {'causal' if causal else 'full  '}  {cells}", flush=True)


if __name__ == "__main__":
    main()
