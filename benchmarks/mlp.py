"""Fused two-layer MLP throughput: tkc's examples/mlp.tk (Y = relu(X @ W1) @ W2 in one kernel, the
hidden activations never leaving the chip) against torch doing the same in three launches
(two matmuls, relu between, the hidden tensor round-tripping through global memory).

    python benchmarks/mlp.py [--runs 50] [--shapes 4096x1024x4096x1024,...] [--plot]

bf16 in and out, f32 accumulation; the hidden activations are rounded to bf16 before the
second product in both. A shape is MxDxHxN (X: M x D, W1: D x H, W2: H x N). TFLOP/s count
2·M·H·(D + N), the per-launch median of `--runs` samples after warm-up, each a back-to-back
batch of launches between CUDA events (timing.median_ms), the two taking turns; tkc's output is
checked against torch's first. Prints a table and writes JSON to benchmarks/results/mlp-<date>.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

import tkc
from plot import plot
from timing import median_ms, write_record

ROOT = Path(__file__).resolve().parents[1]
SHAPES = "4096x1024x4096x1024,8192x2048x8192x2048,16384x1024x512x1024,2048x4096x16384x4096"


def bench(m: int, d: int, h: int, n: int, runs: int) -> dict[str, object]:
    kernel = tkc.compile(ROOT / "examples" / "mlp.tk", kernel="mlp")
    x = torch.randn(m, d, device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(d, h, device="cuda", dtype=torch.bfloat16) / d**0.5
    w2 = torch.randn(h, n, device="cuda", dtype=torch.bfloat16) / h**0.5
    y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)

    def torch_mlp() -> torch.Tensor:
        return torch.relu(x @ w1) @ w2

    kernel(x, w1, w2, y)
    torch.cuda.synchronize()
    reference = torch_mlp().float()
    rel = ((y.float() - reference).norm() / reference.norm()).item()
    if not rel < 1e-2:
        raise SystemExit(f"tkc mlp {m}x{d}x{h}x{n} is wrong: relative error {rel}")
    result: dict[str, object] = {"M": m, "D": d, "H": h, "N": n, "tkc_rel_err": rel}
    flop = 2.0 * m * h * (d + n)
    timed = {"tkc": lambda: kernel(x, w1, w2, y), "torch": torch_mlp}
    for name, ms in median_ms({name: lambda _, fn=fn: fn() for name, fn in timed.items()}, runs, warmup=5).items():
        result[f"{name}_tflops"] = flop / ms / 1e9
    result["tkc_over_torch"] = result["tkc_tflops"] / result["torch_tflops"]  # type: ignore[operator]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plot", action="store_true", help="also draw the record as a PNG beside it")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--shapes", default=SHAPES)
    args = parser.parse_args()
    rows = []
    for shape in args.shapes.split(","):
        m, d, h, n = map(int, shape.split("x"))
        row = bench(m, d, h, n, args.runs)
        rows.append(row)
        print(f"M={m:<6} D={d:<5} H={h:<6} N={n:<5}  tkc {row['tkc_tflops']:6.1f}  torch {row['torch_tflops']:6.1f} "
              f"TFLOP/s   tkc/torch {row['tkc_over_torch']:.3f}", flush=True)
    record = write_record("mlp", {"benchmark": "fused two-layer MLP bf16", "runs": args.runs, "rows": rows})
    if args.plot:
        plot(record)


if __name__ == "__main__":
    main()
