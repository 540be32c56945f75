"""Kernels compiled as they are against the same kernels with annotations pinned, in one process:
whether the outputs are the same bits, and both timings (median of back-to-back batches, the two
variants taking turns, and triton's do_bench). The measurement that turns an opt-in decision
(`@schedule_wgmma`, `@fma_exp2`, `@split_ring`, ...) into a default, or not.

    python benchmarks/pin_ab.py --pin @schedule_wgmma=1 [--only attn_bwd_dq,fftconv] [--runs 30]

CASES: the kernels sm90-schedule-wgmma changes (attention's backward, FFTConv, the SSD output,
Hedgehog, linear attention), attention's forward, and softmax and layernorm at BM 16 (`--pin
@retain=1 --only softmax,layernorm`: tile-retain-sweep), at benchmark shapes, on random inputs
(tkc.runner.make_inputs: the timing does not depend on the values). Writes
benchmarks/results/pin_ab-<date>.json, one record per case.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from triton.testing import do_bench

from timing import median_ms, write_record
from tkc.api import CompiledKernel
from tkc.diagnostics import TkError
from tkc.driver import load_module
from tkc.dtypes import BY_NAME
from tkc.frontend import parse_define
from tkc.interpreter import find_kernel
from tkc.runner import kernel_params, make_inputs
from tkc.runtime.run import launch_arrays

ATTENTION = {"B": 8, "H": 16, "HKV": 16, "N": 4096}
CASES: list[tuple[str, str, dict[str, int | bool], dict[str, int]]] = [
    ("examples/attention_bwd.tk", "attn_bwd_dkdv", {"D": 128}, ATTENTION),
    ("examples/attention_bwd.tk", "attn_bwd_dkdv", {"D": 128, "CAUSAL": True}, ATTENTION),
    ("examples/attention_bwd.tk", "attn_bwd_dq", {"D": 128}, ATTENTION),
    ("examples/attention_bwd.tk", "attn_bwd_dq", {"D": 128, "CAUSAL": True}, ATTENTION),
    ("examples/attention_bwd.tk", "attn_bwd_dkdv", {"D": 64}, ATTENTION),
    ("examples/attention_bwd.tk", "attn_bwd_dq", {"D": 64}, ATTENTION),
    ("examples/attention_bwd.tk", "attn_bwd", {"D": 64}, ATTENTION),
    ("examples/fftconv.tk", "fftconv", {}, {"P": 8, "H": 1024, "R": 64}),
    ("examples/ssd.tk", "ssd_output", {}, {"B": 2, "H": 16, "N": 16384, "NC": 256}),
    ("examples/hedgehog.tk", "hh_output", {}, {"B": 2, "H": 16, "N": 4096, "NC": 64}),
    ("examples/linear_attention.tk", "linear_attn", {}, {"B": 2, "H": 16, "N": 16384}),
    ("examples/attention.tk", "attn_fwd", {"D": 128}, ATTENTION),
    ("examples/attention.tk", "attn_fwd", {"D": 128, "CAUSAL": True}, ATTENTION),
    ("examples/attention.tk", "attn_fwd", {"D": 64}, ATTENTION),
    ("examples/attention.tk", "attn_fwd", {"D": 64}, {**ATTENTION, "B": 32, "N": 1024}),
    *[("examples/softmax.tk", "softmax", {}, {"M": m, "N": n})
      for m, n in ((16384, 4096), (8192, 16384), (32768, 1024), (16000, 4000))],
    *[("examples/layernorm.tk", "layernorm", {"BM": 16, "D": 4096, **pins}, {"M": m})
      for m in (16384, 65536) for pins in ({}, {"@ctas_per_sm": 1})],
]


def ab(path: str, name: str, params: dict[str, int | bool], dims: dict[str, int],
       pins: dict[str, int | bool | float], runs: int) -> dict[str, object]:
    base, pinned = CompiledKernel(path, name, params), CompiledKernel(path, name, {**params, **pins})
    kernel = find_kernel(load_module(path, name, params), name)
    arrays = launch_arrays(base.abi, make_inputs(kernel, kernel_params(kernel) | dims, seed=0))

    def on_device() -> list[torch.Tensor]:
        return [torch.from_numpy(np.asarray(a, np.float32)).to("cuda", getattr(torch, BY_NAME[arg.dtype].torch))
                for arg, a in zip(base.abi.args, arrays, strict=True)]

    base_args, pinned_args = on_device(), on_device()
    base(*base_args)
    pinned(*pinned_args)
    same = all(torch.equal(torch.nan_to_num(a.float()), torch.nan_to_num(b.float()))
               for a, b in zip(base_args, pinned_args, strict=True))
    fns = {"base": lambda: base(*base_args), "pinned": lambda: pinned(*pinned_args)}
    batched = median_ms({k: lambda _, fn=fn: fn() for k, fn in fns.items()}, runs, warmup=5)
    bench = {k: do_bench(fn, warmup=25, rep=200) for k, fn in fns.items()}
    return {"kernel": name, "params": params, **dims, "same_bits": same,
            "base_ms": batched["base"], "pinned_ms": batched["pinned"], "speedup": batched["base"] / batched["pinned"],
            "base_ms_do_bench": bench["base"], "pinned_ms_do_bench": bench["pinned"],
            "speedup_do_bench": bench["base"] / bench["pinned"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pin", action="append", required=True, help="@NAME=VALUE or PARAM=VALUE, for every case")
    parser.add_argument("--only", help="comma-separated kernel names (default: every case)")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    pins = dict(parse_define(item) for item in args.pin)
    only = set(args.only.split(",")) if args.only else None
    rows = []
    for path, name, params, dims in CASES:
        if only is not None and name not in only:
            continue
        try:
            row = ab(path, name, params, dims, pins, args.runs)
        except TkError as e:  # a pin this kernel refuses (@cluster on a causal loop, ...): said, not timed
            print(f"{name:<14} {str(params):<28} refused: {str(e).splitlines()[0]}", flush=True)
            continue
        rows.append(row)
        us = {key: float(row[key]) * 1e3 for key in ("base_ms", "pinned_ms", "base_ms_do_bench", "pinned_ms_do_bench")}
        print(f"{name:<14} {str(params):<28} same bits {row['same_bits']!s:<5}  batched {us['base_ms']:8.1f} -> "
              f"{us['pinned_ms']:8.1f} us ({row['speedup']:.3f}x)  do_bench {us['base_ms_do_bench']:8.1f} -> "
              f"{us['pinned_ms_do_bench']:8.1f} us ({row['speedup_do_bench']:.3f}x)", flush=True)
    write_record("pin_ab", {"benchmark": "kernels against themselves with pins", "pins": pins, "runs": args.runs,
                            "rows": rows})


if __name__ == "__main__":
    main()
