"""GEMM throughput: tkc against cuBLAS (torch.matmul) and a Triton GEMM, in one process.

    python benchmarks/gemm.py [--shapes 4096x4096x4096,...] [--runs 100] [-D NAME=VALUE ...]

bf16 inputs drawn from a normal distribution, f32 accumulation, bf16 output; every result is
checked against cuBLAS before timing. Times are per launch, the median of `--runs` samples after
warm-up, each a back-to-back batch of launches between CUDA events (timing.median_ms), the three
implementations taking turns batch by batch, rotating between input sets so the inputs are not
served from L2. Prints a table and writes JSON to benchmarks/results/gemm-<date>.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
import triton
import triton.language as tl

import tkc
from plot import plot
from timing import median_ms, write_record

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (4096, 14336, 4096)]


@triton.jit
def _triton_gemm(a, b, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(m, BM), tl.cdiv(n, BN)
    group = pid // (GROUP * tiles_n)
    first = group * GROUP
    rows = tl.minimum(tiles_m - first, GROUP)
    pid_m = first + (pid % (GROUP * tiles_n)) % rows
    pid_n = (pid % (GROUP * tiles_n)) // rows
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(0, k, BK):
        x = tl.load(a + offs_m[:, None] * k + (kk + offs_k)[None, :])
        y = tl.load(b + (kk + offs_k)[:, None] * n + offs_n[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + offs_m[:, None] * n + offs_n[None, :], acc.to(tl.bfloat16))


def triton_gemm(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    m, k = a.shape
    n = b.shape[1]
    grid = (triton.cdiv(m, 128) * triton.cdiv(n, 256),)
    _triton_gemm[grid](a, b, c, m, n, k, BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)


def bench_shape(kernel: tkc.CompiledKernel, m: int, n: int, k: int, runs: int) -> dict[str, float]:
    sets = max(1, min(4, int(2e9 // ((m * k + k * n + m * n) * 2))))
    inputs = [
        (torch.randn(m, k, device="cuda", dtype=torch.bfloat16), torch.randn(k, n, device="cuda", dtype=torch.bfloat16))
        for _ in range(sets)
    ]
    outputs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    a, b = inputs[0]
    ref = a.float() @ b.float()
    results: dict[str, float] = {}
    for name, fn in (("tkc", kernel), ("triton", triton_gemm)):
        check = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        fn(a, b, check)
        torch.cuda.synchronize()
        rel = ((check.float() - ref).norm() / ref.norm()).item()
        results[f"{name}_rel_err"] = rel
        if not rel < 1e-2:
            raise SystemExit(f"{name} GEMM {m}x{n}x{k} is wrong: relative error {rel}")
    flop = 2.0 * m * n * k
    timed = {
        "cublas": lambda i: torch.matmul(*inputs[i], out=outputs[i]),
        "tkc": lambda i: kernel(*inputs[i], outputs[i]),
        "triton": lambda i: triton_gemm(*inputs[i], outputs[i]),
    }
    for name, ms in median_ms(timed, runs, sets).items():
        results[f"{name}_tflops"] = flop / ms / 1e9
    results["tkc_over_cublas"] = results["tkc_tflops"] / results["cublas_tflops"]
    results["tkc_over_triton"] = results["tkc_tflops"] / results["triton_tflops"]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", help="comma-separated MxNxK")
    parser.add_argument("--plot", action="store_true", help="also draw the record as a PNG beside it")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("-D", dest="define", action="append", default=[], help="compile-time parameter NAME=VALUE")
    args = parser.parse_args()
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")] if args.shapes else SHAPES
    params = {name: int(value) for name, value in (d.split("=") for d in args.define)}
    kernel = tkc.compile(ROOT / "examples" / "gemm.tk", kernel="gemm", **params)
    rows = []
    for m, n, k in shapes:
        result = {"M": m, "N": n, "K": k, **bench_shape(kernel, m, n, k, args.runs)}
        rows.append(result)
        print(
            f"{m:>5}x{n:<5}x{k:<5}  tkc {result['tkc_tflops']:6.1f}  cuBLAS {result['cublas_tflops']:6.1f}  "
            f"Triton {result['triton_tflops']:6.1f} TFLOP/s   tkc/cuBLAS {result['tkc_over_cublas']:.3f}  "
            f"tkc/Triton {result['tkc_over_triton']:.3f}",
            flush=True,
        )
    record = write_record(
        "gemm",
        {
            "benchmark": "gemm bf16",
            "params": params,
            "runs": args.runs,
            "rows": rows,
        },
    )
    if args.plot:
        plot(record)


if __name__ == "__main__":
    main()
