"""Memory-bound kernels as a share of the device's copy bandwidth, next to torch eager and
torch.compile, in one process.

    python benchmarks/memory_bound.py [--runs 30] [--no-compile] [--only layernorm,softmax] [--pin layernorm:BM=16 ...]

Kernels (bf16): residual + LayerNorm (examples/layernorm.tk) at M 16k / 64k, D 1024 / 4096;
row softmax (examples/softmax.tk) at 16k x 4096 and 8k x 16384; rotary (examples/rotary.tk) at
B16 H16 N2048 and B4 H32 N8192, D 128; per-row fp8 quantisation (examples/fp8_quant.tk) at
M 1M, D 128. GB/s count the bytes a kernel must move (each input read once, each output written
once). The copy is `y.copy_(x)` of as many bytes (half read, half written), timed in the same
process; `share_of_copy` is a kernel's GB/s over the copy's (issue target: 0.85). Times: median
of back-to-back batches (timing.median_ms), every implementation taking turns, and triton's
do_bench for tkc. tkc's outputs are checked against torch's first. `--pin KERNEL:NAME=VALUE`
compiles that example with a parameter or annotation set (`layernorm:BM=16`,
`softmax:@stages=2`), recorded under `pins`; `--only` times those kernels alone. Writes
benchmarks/results/memory_bound-<date>.json with one record per row.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch
from triton.testing import do_bench

import tkc
from timing import median_ms, parse_pins, write_record

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
Case = tuple[str, dict[str, int], Callable[..., dict[str, object]]]
PINS: dict[str, dict[str, int | bool | float]] = {}
"""--pin: per kernel, the parameters and annotations it compiles with."""


def _layernorm(m: int, d: int) -> dict[str, object]:
    x, r = (torch.randn(m, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    w, bias = (torch.randn(d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    h, y = torch.empty_like(x), torch.empty_like(x)
    kernel = tkc.compile(EXAMPLES / "layernorm.tk", kernel="layernorm", **{"D": d, **PINS.get("layernorm", {})})

    def eager() -> tuple[torch.Tensor, torch.Tensor]:
        hh = x + r
        return hh, torch.nn.functional.layer_norm(hh.float(), (d,), w.float(), bias.float(), 1e-5).to(x.dtype)

    return {"tkc": lambda: kernel(x, r, w, bias, h, y), "eager": eager, "outputs": (h, y), "bytes": 4 * m * d * 2}


def _softmax(m: int, n: int) -> dict[str, object]:
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    kernel = tkc.compile(EXAMPLES / "softmax.tk", kernel="softmax", **PINS.get("softmax", {}))
    return {"tkc": lambda: kernel(x, y), "eager": lambda: (torch.softmax(x.float(), -1).to(x.dtype),),
            "outputs": (y,), "bytes": 2 * m * n * 2}


def _rotary(b: int, h: int, n: int) -> dict[str, object]:
    d = 128
    x = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
    angle = torch.arange(n, device="cuda")[:, None] / 10000 ** (torch.arange(d // 2, device="cuda") / (d // 2))
    cos, sin = angle.cos().to(torch.bfloat16), angle.sin().to(torch.bfloat16)
    y = torch.empty_like(x)
    kernel = tkc.compile(EXAMPLES / "rotary.tk", kernel="rotary", **PINS.get("rotary", {}))

    def eager() -> tuple[torch.Tensor]:
        x1, x2 = x.float().chunk(2, -1)
        c, s = cos.float(), sin.float()
        return (torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(x.dtype),)

    return {"tkc": lambda: kernel(x, cos, sin, y), "eager": eager, "outputs": (y,),
            "bytes": 2 * x.numel() * 2 + 2 * cos.numel() * 2}


def _fp8_quant(m: int, d: int) -> dict[str, object]:
    x = torch.randn(m, d, device="cuda", dtype=torch.bfloat16)
    q = torch.empty(m, d, device="cuda", dtype=torch.float8_e4m3fn)
    s = torch.empty(m, device="cuda", dtype=torch.float32)
    kernel = tkc.compile(EXAMPLES / "fp8_quant.tk", kernel="fp8_quant", **{"D": d, **PINS.get("fp8_quant", {})})

    def eager() -> tuple[torch.Tensor, torch.Tensor]:
        scale = x.float().abs().amax(1).clamp_min(1e-30) / 448.0
        return (x.float() / scale[:, None]).clamp(-448, 448).to(torch.float8_e4m3fn).float(), scale

    return {"tkc": lambda: kernel(x, q, s), "eager": eager, "outputs": (q, s), "bytes": m * d * 3 + 4 * m}


CASES: list[Case] = [
    *[("layernorm", {"M": m, "D": d}, _layernorm) for m in (16384, 65536) for d in (1024, 4096)],
    *[("softmax", {"M": m, "N": n}, _softmax) for m, n in ((16384, 4096), (8192, 16384))],
    *[("rotary", {"B": b, "H": h, "N": n}, _rotary) for b, h, n in ((16, 16, 2048), (4, 32, 8192))],
    ("fp8_quant", {"M": 1 << 20, "D": 128}, _fp8_quant),
]


def bench(name: str, sizes: dict[str, int], make: Callable[..., dict[str, object]], runs: int,
          compile_torch: bool) -> dict[str, object]:
    case = make(*sizes.values())
    tkc_fn, eager = case["tkc"], case["eager"]
    nbytes = int(case["bytes"])  # type: ignore[call-overload]
    src = torch.empty(nbytes // 4, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    tkc_fn()  # type: ignore[operator]
    want = eager()  # type: ignore[operator]
    row: dict[str, object] = {"kernel": name, **sizes}
    row["tkc_rel_err"] = max(((g.float() - w.float()).norm() / w.float().norm()).item()
                             for g, w in zip(case["outputs"], want, strict=True))  # type: ignore[call-overload]
    if not row["tkc_rel_err"] < 2e-2:
        raise SystemExit(f"tkc {name} {sizes} is wrong: {row}")
    fns = {"tkc": tkc_fn, "eager": eager, "copy": lambda: dst.copy_(src)}
    if compile_torch:
        fns["compiled"] = torch.compile(eager)
    for impl, ms in median_ms({k: lambda _, fn=fn: fn() for k, fn in fns.items()}, runs, warmup=5).items():
        row[f"{impl}_gbs"] = nbytes / ms / 1e6
    row["tkc_gbs_do_bench"] = nbytes / do_bench(tkc_fn, warmup=25, rep=200) / 1e6
    row["share_of_copy"] = row["tkc_gbs"] / row["copy_gbs"]
    row["tkc_over_eager"] = row["tkc_gbs"] / row["eager_gbs"]
    if compile_torch:
        row["tkc_over_compiled"] = row["tkc_gbs"] / row["compiled_gbs"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out (it compiles for minutes)")
    parser.add_argument("--only", help="comma-separated kernels to time (default: all)")
    parser.add_argument("--pin", action="append", default=[], help="KERNEL:NAME=VALUE, a parameter or @annotation of one example")
    args = parser.parse_args()
    kernels = {name for name, _, _ in CASES}
    only = set(args.only.split(",")) if args.only else kernels
    if only - kernels:
        parser.error(f"--only {args.only}: the kernels are {', '.join(sorted(kernels))}")
    PINS.update(parse_pins(args.pin, sorted(kernels), parser))
    rows = []
    for name, sizes, make in CASES:
        if name not in only:
            continue
        row = bench(name, sizes, make, args.runs, not args.no_compile)
        rows.append(row)
        shape = " ".join(f"{k}={v}" for k, v in sizes.items())
        compiled = f"  compile {row['compiled_gbs']:6.0f}" if "compiled_gbs" in row else ""
        print(f"{name:<10} {shape:<22} tkc {row['tkc_gbs']:6.0f} GB/s ({row['tkc_gbs_do_bench']:6.0f})  "
              f"{row['share_of_copy']:.2f} of copy ({row['copy_gbs']:.0f})  eager {row['eager_gbs']:6.0f}{compiled}",
              flush=True)
    write_record("memory_bound", {"benchmark": "memory-bound kernels, bf16", "runs": args.runs, "pins": PINS, "rows": rows})


if __name__ == "__main__":
    main()
