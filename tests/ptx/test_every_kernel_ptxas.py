"""Every kernel the project runs on the GPU (each kernel of every example and GPU test kernel,
at its defaults, and the variants a launch may take instead: without tail masks, clustered)
assembles with ptxas for sm_90a with no spills, no stack frame, no warnings and
none of the performance infos (C7508 setmaxnreg ignored, C7512/C7513/C7517/C7519 wgmma
serialised or waits injected): the occupancy plan's
register model must agree with ptxas for every kernel, not only those the sweep varies. Nor does any hold an unsigned div or rem by an
immediate, which ptxas expands into its generic reciprocal sequence (I2F, MUFU.RCP, F2I: a ring
index of 3 or 6 stages paid it in every iteration); the builder strength-reduces them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tkc.api import CompiledKernel
from tkc.backends.ptx_printer import print_ptx
from tkc.backends.ptxas import ToolNotFound, assemble, find_tool
from tkc.dialects import tile
from tkc.driver import compile_module, load_module, make_context

try:
    find_tool("ptxas")
except ToolNotFound:
    pytest.skip("ptxas not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]

FILES = sorted((ROOT / "examples").glob("*.tk")) + sorted((ROOT / "tests" / "gpu" / "kernels").glob("*.tk"))


def kernels() -> list[tuple[Path, str]]:
    found = []
    for path in FILES:
        module = load_module(path, None, {}, make_context())
        found += [(path, k.sym_name.data) for k in module.body.block.ops if isinstance(k, tile.KernelOp)]
    return found


@pytest.mark.parametrize("path,kernel", kernels(), ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_kernel_assembles_clean(path: Path, kernel: str) -> None:
    ctx = make_context()
    module = compile_module(load_module(path, kernel, {}, ctx), "ptx", ctx=ctx)
    ptx = print_ptx(module)
    assert not re.findall(r"^\s*(?:div|rem)\.u32 [^;]*, \d+;", ptx, re.MULTILINE)
    report = assemble(ptx).report
    assert report.clean, report.log


BENCHMARKED = [
    ("attention", "attn_fwd", {"D": 64}),
    ("attention", "attn_fwd", {"D": 64, "CAUSAL": True}),
    ("attention", "attn_fwd", {"CAUSAL": True}),
    ("attention_bwd", "attn_bwd_dkdv", {"D": 64}),
    ("attention_bwd", "attn_bwd_dkdv", {"D": 64, "CAUSAL": True}),
    ("attention_bwd", "attn_bwd_dkdv", {"CAUSAL": True}),
    ("attention_bwd", "attn_bwd_dq", {"D": 64}),
    ("attention_bwd", "attn_bwd_dq", {"D": 64, "CAUSAL": True}),
    ("attention_bwd", "attn_bwd_dq", {"CAUSAL": True}),
    ("attention_bwd", "attn_bwd", {"CAUSAL": True}),
    ("gemm", "gemm", {"BN": 160}),
    ("gemm", "gemm", {"BN": 192}),
    ("gemm", "gemm", {"@stream_k": 1}),
    ("gemm", "gemm", {"BM": 64, "BN": 128}),
]
"""Configurations the benchmarks and the tuner's sweeps run besides the defaults (head dims,
causal masks, GEMM tile widths, stream-K)."""


@pytest.mark.parametrize("example,kernel,params", BENCHMARKED,
                         ids=lambda v: v if isinstance(v, str) else ",".join(f"{k}={x}" for k, x in v.items()))
def test_benchmarked_configuration_assembles_clean(example: str, kernel: str, params: dict[str, object]) -> None:
    ctx = make_context()
    module = compile_module(load_module(ROOT / "examples" / f"{example}.tk", kernel, params, ctx), "ptx", ctx=ctx)
    report = assemble(print_ptx(module)).report
    assert report.clean, report.log


@pytest.mark.parametrize("path,kernel", kernels(), ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_launch_variants_assemble_clean(path: Path, kernel: str) -> None:
    # the whole-tile variant is what a launch on whole tiles runs (the benchmarks' shapes): it
    # spilled once where the masked kernel did not (attn_alibi, 16 bytes, producer at 40 registers)
    compiled = CompiledKernel(str(path), kernel, {})
    for variant in (compiled.whole_tiles, compiled.clustered):
        if variant is not None:
            report = assemble(variant.ptx).report
            assert report.clean, report.log
