"""Compile time grows about linearly with the program: each generator below builds one shape of
program the fuzzer found super-linear (exponential index analysis, quadratic register peak,
one canonicalize walk per loop level, CSE merging many equal constants, simulating the bank
conflicts of a tile no budget admits), at a size and at twice that size. Doubling the size may at
most about triple the time, and the larger program compiles within a generous wall-clock bound."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tkc.diagnostics import TkError
from tkc.driver import compile_module, load_module, make_context
from tkc.frontend import parse_tk

WALL_LIMIT_S = 60
"""The larger program of each pair must compile within this (it takes a few seconds)."""
GROWTH = 3.0
"""Doubling the program may cost at most this factor..."""
SLACK_S = 0.5
"""...plus this, for timer noise on the small programs."""
NEST_GROWTH = 4.5
"""Doubling a nest's depth doubles its ops and the depth each is nested at, and every xDSL walk
(verification, region DCE, CSE) costs ops x depth: quadratic at most, where one canonicalize walk
per loop level made it cubic. (The language caps nesting at 100 levels.)"""
GEMM = Path(__file__).resolve().parents[2] / "examples" / "gemm.tk"


def index_chain(depth: int) -> str:
    """A chain of `let a = b + b` index expressions (a DAG of 2^depth paths) as a loop bound."""
    lets = "\n".join(f"    let a{d + 1} = a{d} + a{d}" for d in range(depth))
    return f"""
kernel chain<BM = 64, BN = 64>(A: gl<bf16>[M, N], C: gl<bf16>[M, N]) {{
    grid (M / BM) as (i)
    let a0 = i
{lets}
    var acc = zero<f32>[BM, BN]
    for j in 0 .. a{depth} {{
        acc = acc + f32(load A[i, j] : rt<bf16>[BM, BN])
    }}
    store C[i, 0] = bf16(acc)
}}
"""


def elementwise(ops: int) -> str:
    """`ops` element-wise ops on register tiles, each result used by the next two."""
    lets = "\n".join(f"    let t{n + 1} = t{n} * 1.5 + t{n}" for n in range(ops // 2))
    return f"""
kernel elementwise<BM = 64, BN = 64>(A: gl<f32>[M, N], C: gl<f32>[M, N]) {{
    grid (M / BM, N / BN) as (i, j)
    let t0 = load A[i, j] : rt<f32>[BM, BN]
{lets}
    store C[i, j] = t{ops // 2}
}}
"""


def carried(count: int) -> str:
    """`count` loop-carried f32 vars, each starting from the same constant."""
    decls = "\n".join(f"    var v{n} = 0.0" for n in range(count))
    updates = "\n".join(f"        v{n} = v{n} + x" for n in range(count))
    return f"""
kernel carried<BM = 64>(A: gl<f32>[M], C: gl<f32>[M]) {{
    grid (M / BM) as (i)
{decls}
    var acc = zero<f32>[BM]
    for k in 0 .. 4 {{
        let x = f32(k)
{updates}
        acc = acc + x
    }}
    store C[i] = acc * v0
}}
"""


def loop_nests(depth: int, count: int = 1) -> str:
    """`count` nests of `depth` loops (each with its own constant bounds) around an update of a tile."""
    opens = "".join(f"{'    ' * (d + 1)}for k{d} in 0 .. 2 {{\n" for d in range(depth))
    closes = "".join(f"{'    ' * (d + 1)}}}\n" for d in reversed(range(depth)))
    nest = f"{opens}{'    ' * (depth + 1)}acc = acc * 0.5 + 1.0\n{closes}"
    return f"""
kernel nest<BM = 64, BN = 64>(A: gl<f32>[M, N], C: gl<f32>[M, N]) {{
    grid (M / BM, N / BN) as (i, j)
    var acc = load A[i, j] : rt<f32>[BM, BN]
{nest * count}    store C[i, j] = acc
}}
"""


def deep_nests(count: int) -> str:
    """`count` nests of 90 loops, near the 100 levels of blocks and expressions the language allows."""
    return loop_nests(90, count)


@contextmanager
def wall_limit(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"compiling took over {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def compile_seconds(build: Callable[[], object], emit: str) -> float:
    """CPU seconds of the passes up to `emit` (a refusal counts: it is the answer)."""
    ctx = make_context()
    module = build()
    start = time.process_time()
    with wall_limit(WALL_LIMIT_S):
        try:
            compile_module(module, emit, ctx=ctx)  # type: ignore[arg-type]
        except TkError:
            pass
    return time.process_time() - start


def generated(generator: Callable[[int], str], size: int) -> Callable[[], object]:
    return lambda: parse_tk(generator(size), f"{generator.__name__}.tk", {})


def gemm_tile(bn: int) -> Callable[[], object]:
    return lambda: load_module(GEMM, None, {"BN": bn})


CASES = {
    "index chain depth 20 -> 40": (lambda n: generated(index_chain, n), 20, "ptx", GROWTH),
    "element-wise ops 2500 -> 5000": (lambda n: generated(elementwise, n), 2500, "tile", GROWTH),
    "loop-carried vars 1000 -> 2000": (lambda n: generated(carried, n), 1000, "tile", GROWTH),
    "loop nests of depth 90, 2 -> 4": (lambda n: generated(deep_nests, n), 2, "tile", GROWTH),
    "loop nest depth 12 -> 24": (lambda n: generated(loop_nests, n), 12, "ptx", NEST_GROWTH),
    "loop nest depth 45 -> 90": (lambda n: generated(loop_nests, n), 45, "tile", NEST_GROWTH),
    "gemm BN 32768 -> 65536": (gemm_tile, 32768, "ptx", GROWTH),
}


@pytest.mark.parametrize("case", CASES)
def test_compile_time_grows_linearly(case: str) -> None:
    program, size, emit, growth = CASES[case]
    small = compile_seconds(program(size), emit)
    large = compile_seconds(program(2 * size), emit)
    assert large <= growth * small + SLACK_S, f"{case}: {small:.2f} s, then {large:.2f} s at twice the size"


def test_huge_tile_is_refused_before_any_simulation() -> None:
    """BN = 65536 is wider than one wgmma and overflows the registers: the cheap budget checks
    come before tile-bank-conflicts simulates the 65536-column staging tile (which took minutes)."""
    with wall_limit(WALL_LIMIT_S), pytest.raises(TkError, match="at most 256|registers per thread"):
        compile_module(load_module(GEMM, None, {"BN": 65536}), "ptx")
