"""Compare variants of examples/gemm.tk (annotations prepended) against cuBLAS, in one process.

    python benchmarks/gemm_variants.py [--shapes 8192x8192x8192] [--runs 50] [--once] VARIANT ...

A VARIANT is annotations prepended to the kernel, e.g. "" (the plan's choice) or "@cluster(2)".
--once launches each implementation once after one warm-up launch (for ncu) instead of timing.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch

import tkc
from timing import median_ms

ROOT = Path(__file__).resolve().parents[1]


def compile_variant(annotations: str) -> tkc.CompiledKernel:
    source = (ROOT / "examples" / "gemm.tk").read_text().replace("kernel gemm", f"{annotations}\nkernel gemm", 1)
    path = Path(tempfile.mkdtemp()) / "gemm.tk"
    path.write_text(source)
    return tkc.compile(path, kernel="gemm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--shapes", default="8192x8192x8192,4096x4096x4096")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--once", action="store_true")
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
        for name, ms in times.items():
            print(f"{m}x{n}x{k} {name:>24}: {2.0 * m * n * k / ms / 1e9:6.1f} TFLOP/s  /cuBLAS {times['cublas'] / ms:.3f}")


if __name__ == "__main__":
    main()
