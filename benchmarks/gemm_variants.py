"""Compare variants of examples/gemm.tk against cuBLAS, in one process.

    python benchmarks/gemm_variants.py [--shapes 8192x8192x8192] [--runs 50] [--once] VARIANT ...

A VARIANT is compile-time parameters and annotations prepended to the kernel, separated by
spaces: "" (the plan's choice), "@cluster(2)", "BN=192", "BN=160 @stream_k(1)". Each prints
its TFLOP/s and ratio to cuBLAS from batched launches (timing.median_ms) and, unless --no-graphs,
from CUDA-graph replays (timing.graph_ms). --once launches each implementation once after one
warm-up launch (for ncu) instead of timing.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch

import tkc
from tkc.frontend import parse_define
from timing import graph_ms, median_ms

ROOT = Path(__file__).resolve().parents[1]


def compile_variant(variant: str) -> tkc.CompiledKernel:
    words = variant.split()
    params = dict(parse_define(word) for word in words if "=" in word and not word.startswith("@"))
    annotations = " ".join(word for word in words if word.startswith("@"))
    source = (ROOT / "examples" / "gemm.tk").read_text().replace("kernel gemm", f"{annotations}\nkernel gemm", 1)
    path = Path(tempfile.mkdtemp()) / "gemm.tk"
    path.write_text(source)
    return tkc.compile(path, kernel="gemm", **params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--shapes", default="8192x8192x8192,4096x4096x4096")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--once", action="store_true")
    parser.add_argument("--no-graphs", action="store_true", help="time batched launches only")
    args = parser.parse_args()
    kernels = {variant or "plan": compile_variant(variant) for variant in args.variants}
    for m, n, k in (tuple(map(int, s.split("x"))) for s in args.shapes.split(",")):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ b.float()
        fns = {"cublas": lambda i, a=a, b=b, c=c: torch.matmul(a, b, out=c)}
        for name, kernel in kernels.items():
            kernel(a, b, c)
            torch.cuda.synchronize()
            rel = ((c.float() - ref).norm() / ref.norm()).item()
            print(f"{m}x{n}x{k} {name}: rel err {rel:.2e}")
            fns[name] = lambda i, kernel=kernel, a=a, b=b, c=c: kernel(a, b, c)
        if args.once:
            for fn in fns.values():
                fn(0)
            torch.cuda.synchronize()
            continue
        times = median_ms(fns, args.runs)
        graphs = {} if args.no_graphs else graph_ms(fns, args.runs)
        for name, ms in times.items():
            graph = f"   graphs {2.0 * m * n * k / graphs[name] / 1e9:6.1f} TFLOP/s  /cuBLAS {graphs['cublas'] / graphs[name]:.3f}" if graphs else ""
            print(f"{m}x{n}x{k} {name:>24}: {2.0 * m * n * k / ms / 1e9:6.1f} TFLOP/s  /cuBLAS {times['cublas'] / ms:.3f}{graph}")


if __name__ == "__main__":
    main()
