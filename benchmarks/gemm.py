"""GEMM throughput: tkc against cuBLAS (torch.matmul) and a Triton GEMM, in one process.

    python benchmarks/gemm.py [--shapes 4096x4096x4096,... | --ragged | --sweep] [--tune [--space NAME=V,...]]
                              [--runs 100] [-D NAME=VALUE ...]

bf16 inputs drawn from a normal distribution, f32 accumulation, bf16 output; every result is
checked against cuBLAS before timing. Times are per launch, the median of `--runs` samples after
warm-up, each a back-to-back batch of launches between CUDA events (timing.median_ms), the three
implementations taking turns batch by batch, rotating between input sets so the inputs are not
served from L2; again from replays of CUDA graphs of those launches (timing.graph_ms, the
`_graph` fields), which keep the host's launch path off the clock where a GEMM is shorter than
it (1000 x 1000 x 1000); and with triton's do_bench (the `_do_bench` fields: L2 flushed before
each call, so each launch starts cold and alone, as one GEMM in a model's step does). Prints a table and writes JSON to benchmarks/results/gemm-<date>.json.

`--ragged` times shapes that are no multiple of the tiles (RAGGED; the record is
gemm-ragged-<date>.json). K and N are innermost dims (A is M x K, B is K x N, C is M x N), and TMA
needs 16-byte rows, a multiple of 8 bf16 elements: 8191 x 8191 x 8191 is timed as M = 8191 with
N = K = 8184 (8192 - 8). The Triton GEMM masks its loads and stores where the shape needs it.

`--sweep` times the projection shapes of 7B-70B models (SWEEP: M from 1024 to 8192 against N x K
of PROJECTIONS, and 3072^3). `--tune` compiles each shape with what `tkc.autotune` chose for it
(over `--space NAME=V1,V2,...`, repeatable, `@stages=plan,8` for the ring depth; default: the
tuner's space), which the record's `config` field holds; the record is gemm[-ragged|-sweep]-tuned.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

import tkc
from tkc.frontend import parse_define, parse_space_item
from tkc.tune import spell
from plot import plot
from timing import graph_ms, median_ms, write_record

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (4096, 14336, 4096)]
RAGGED = [(4000, 4000, 4000), (3000, 5000, 2000), (8191, 8184, 8184), (1000, 1000, 1000)]
PROJECTIONS = [(4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (6144, 5120), (3072, 3072), (5120, 13824)]
"""N x K of the projections of 7B-70B models."""
SWEEP = [(m, n, k) for m in (1024, 2048, 4096, 8192) for n, k in PROJECTIONS] + [(3072, 3072, 3072)]
TRITON_TILE = (128, 256, 64)  # BM, BN, BK


@triton.jit
def _triton_gemm(a, b, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                 MASK: tl.constexpr):
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
        if MASK:  # a constexpr: whole-tile shapes compile without the masks
            x = tl.load(a + offs_m[:, None] * k + (kk + offs_k)[None, :],
                        mask=(offs_m[:, None] < m) & ((kk + offs_k)[None, :] < k), other=0.0)
            y = tl.load(b + (kk + offs_k)[:, None] * n + offs_n[None, :],
                        mask=((kk + offs_k)[:, None] < k) & (offs_n[None, :] < n), other=0.0)
        else:
            x = tl.load(a + offs_m[:, None] * k + (kk + offs_k)[None, :])
            y = tl.load(b + (kk + offs_k)[:, None] * n + offs_n[None, :])
        acc = tl.dot(x, y, acc)
    if MASK:
        tl.store(c + offs_m[:, None] * n + offs_n[None, :], acc.to(tl.bfloat16),
                 mask=(offs_m[:, None] < m) & (offs_n[None, :] < n))
    else:
        tl.store(c + offs_m[:, None] * n + offs_n[None, :], acc.to(tl.bfloat16))


def triton_gemm(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    m, k = a.shape
    n = b.shape[1]
    bm, bn, bk = TRITON_TILE
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    mask = bool(m % bm or n % bn or k % bk)
    _triton_gemm[grid](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, GROUP=8, MASK=mask, num_warps=8, num_stages=3)


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
    def do_bench_ms(fns: dict[str, Callable[[int], object]], runs: int, sets: int) -> dict[str, float]:
        return {name: do_bench(lambda fn=fn: fn(0), warmup=25, rep=200) for name, fn in fns.items()}

    for suffix, timer in (("", median_ms), ("_graph", graph_ms), ("_do_bench", do_bench_ms)):
        for name, ms in timer(timed, runs, sets).items():
            results[f"{name}_tflops{suffix}"] = flop / ms / 1e9
        for base in ("cublas", "triton"):
            results[f"tkc_over_{base}{suffix}"] = results[f"tkc_tflops{suffix}"] / results[f"{base}_tflops{suffix}"]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shape_set = parser.add_mutually_exclusive_group()
    shape_set.add_argument("--shapes", help="comma-separated MxNxK")
    shape_set.add_argument("--ragged", action="store_true", help="the shapes that are no multiple of the tiles (RAGGED)")
    shape_set.add_argument("--sweep", action="store_true", help="the projection shapes of 7B-70B models (SWEEP)")
    parser.add_argument("--tune", action="store_true", help="compile each shape with the autotuner's choice")
    parser.add_argument("--space", action="append", default=[], help="with --tune: NAME=V1,V2,... to try (repeatable)")
    parser.add_argument("--plot", action="store_true", help="also draw the record as a PNG beside it")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("-D", dest="define", action="append", default=[],
                        help="compile-time parameter NAME=VALUE, or @ANNOTATION=VALUE")
    args = parser.parse_args()
    if args.shapes:
        shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    else:
        shapes = RAGGED if args.ragged else SWEEP if args.sweep else SHAPES
    params = dict(parse_define(d) for d in args.define)
    space = dict(parse_space_item(item) for item in args.space) or None
    source = ROOT / "examples" / "gemm.tk"
    kernel = tkc.compile(source, kernel="gemm", **params)
    rows = []
    for m, n, k in shapes:
        config = {}
        if args.tune:
            tuned = tkc.autotune(source, "gemm", sizes={"M": m, "N": n, "K": k}, space=space, params=params).best
            assert tuned is not None, f"every configuration was pruned at {m}x{n}x{k}"
            config = tuned.config
            kernel = tkc.compile(source, kernel="gemm", **config)
        result = {"M": m, "N": n, "K": k, "config": spell(config), **bench_shape(kernel, m, n, k, args.runs)}
        rows.append(result)
        print(
            f"{m:>5}x{n:<5}x{k:<5}  tkc {result['tkc_tflops']:6.1f}  cuBLAS {result['cublas_tflops']:6.1f}  "
            f"Triton {result['triton_tflops']:6.1f} TFLOP/s   tkc/cuBLAS {result['tkc_over_cublas']:.3f}  "
            f"tkc/Triton {result['tkc_over_triton']:.3f}   graphs: tkc {result['tkc_tflops_graph']:6.1f}  "
            f"cuBLAS {result['cublas_tflops_graph']:6.1f}  tkc/cuBLAS {result['tkc_over_cublas_graph']:.3f}   "
            f"do_bench: tkc/cuBLAS {result['tkc_over_cublas_do_bench']:.3f}"
            + (f"   {result['config']}" if args.tune else ""),
            flush=True,
        )
    kind = "gemm" + ("-ragged" if args.ragged else "-sweep" if args.sweep else "") + ("-tuned" if args.tune else "")
    record = write_record(
        kind,
        {
            "benchmark": "gemm bf16" + (", shapes no multiple of the tiles" if args.ragged else "")
            + (", each shape with the autotuner's choice (config)" if args.tune else ""),
            "params": params,
            "space": space,
            "runs": args.runs,
            "rows": rows,
        },
    )
    if args.plot:
        plot(record)


if __name__ == "__main__":
    main()
