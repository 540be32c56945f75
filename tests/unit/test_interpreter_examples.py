"""Every example's interpreted result matches its `X_ref.py` (the frontend engineer's numpy
reference), before and after the tile passes, on several sizes and parameter choices."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest

from tkc.interpreter import find_kernel, interpret, symbolic_dims
from tkc.runner import (
    CHECK_TOLERANCE,
    bisect,
    check,
    default_sizes,
    kernel_params,
    load_input_maker,
    load_reference,
    make_inputs,
    snapshots,
    write_only,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

VARIANTS: dict[str, list[dict[str, int]]] = {
    "gemm": [{}, {"M": 256, "N": 512, "K": 192}, {"M": 512, "N": 256, "K": 512}],
    "attention": [
        {"CAUSAL": False, "D": 64},
        {"CAUSAL": True, "D": 64, "N": 512},
        {"CAUSAL": False, "D": 128, "N": 384},
        {"CAUSAL": True, "D": 128},
    ],
    "hedgehog": [{}, {"BV": 32, "CPB": 3, "N": 200, "NC": 4}],  # a ragged last chunk and last block of chunks
    "fftconv": [{}, {"ROWS": 64, "COLS": 32, "R": 24}],  # a 2048-point FFT, rows past R its padding
}
"""Per example: compile-time parameters (those the kernel declares) and dim sizes to run with;
an empty entry means the defaults. Examples not listed run once with the defaults."""


def parse(path: Path, params: dict[str, int], kernel: str | None = None):
    frontend = pytest.importorskip("tkc.frontend")
    if not hasattr(frontend, "parse_tk"):
        pytest.skip("the .tk frontend has not landed yet")
    return frontend.parse_tk(path.read_text(), str(path), params, kernel)


def examples() -> list[Path]:
    return sorted(p for p in EXAMPLES.glob("*.tk") if p.with_name(p.stem + "_ref.py").exists())


NONE_YET = pytest.mark.skip(reason="no examples with a _ref.py yet")


def kernels(path: Path) -> list[str | None]:
    """The kernels of an example to run: None for a file's only kernel, else each by name (the
    reference tells them apart by their inputs)."""
    names = [line.split()[1].split("<")[0].split("(")[0] for line in path.read_text().splitlines()
             if line.startswith("kernel ")]
    return [None] if len(names) == 1 else list(names)


def example_id(path: Path, kernel: str | None) -> str:
    return path.stem if kernel is None else f"{path.stem}:{kernel}"


def cases() -> list:
    return [
        pytest.param(path, kernel, variant,
                     id=f"{example_id(path, kernel)}-" + (",".join(f"{k}={v}" for k, v in variant.items()) or "defaults"))
        for path in examples()
        for kernel in kernels(path)
        for variant in VARIANTS.get(path.stem, [{}])
    ] or [pytest.param(None, None, {}, marks=NONE_YET)]


def split(module, variant: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """The variant's entries that are compile-time parameters of the kernel, and those that are
    its dims (a variant of a file's kernels may set what only another of them declares)."""
    kernel = find_kernel(module, None)
    declared, dims = kernel_params(kernel), symbolic_dims(kernel)
    return {k: v for k, v in variant.items() if k in declared}, {k: v for k, v in variant.items() if k in dims}


def run_example(path: Path, kernel_name: str | None, variant: dict[str, int], with_sizes: bool = True, tiles: int = 2):
    """(module, inputs, sizes, outputs) of the example's kernel with the variant's parameters and
    (unless `with_sizes` is off) its sizes; other dims span `tiles` tiles (default_sizes)."""
    params, sizes = split(parse(path, {}, kernel_name), variant)
    sizes = sizes if with_sizes else {}
    module = parse(path, params, kernel_name)
    kernel = find_kernel(module, None)
    final = kernel_params(kernel)
    sizes = {d: s for d, s in default_sizes(kernel, tiles).items() if d not in final} | sizes
    inputs = make_inputs(kernel, final | sizes, seed=7)
    if (maker := load_input_maker(str(path))) is not None:  # constants the kernel needs (based_chunked's E1, E2)
        inputs |= maker(final | sizes, np.random.default_rng(7))
    return module, inputs, sizes, interpret(module, None, inputs, sizes)


@pytest.mark.parametrize("path, kernel, variant", cases())
def test_example_matches_reference(path: Path, kernel: str | None, variant: dict[str, int]) -> None:
    assert_matches_reference(path, *run_example(path, kernel, variant))


@pytest.mark.parametrize("path, kernel", [pytest.param(p, k, id=example_id(p, k)) for p in examples() for k in kernels(p)]
                         or [pytest.param(None, None, marks=NONE_YET)])
def test_example_with_three_tiles_per_dim(path: Path, kernel: str | None) -> None:
    """Odd block counts on every grid axis (and loops of 3 trips), default parameters."""
    assert_matches_reference(path, *run_example(path, kernel, {}, tiles=3))


def assert_matches_reference(path: Path, module, inputs, sizes, outputs) -> None:
    kernel = find_kernel(module, None)
    poisoned = write_only(kernel)
    expected = load_reference(str(path))(
        {k: v for k, v in inputs.items() if k not in poisoned}, kernel_params(kernel) | sizes
    )
    report = io.StringIO()
    assert check(outputs, expected, report, CHECK_TOLERANCE), report.getvalue()


@pytest.mark.parametrize("path, kernel, variant", cases())
def test_tile_passes_keep_the_example_result(path: Path, kernel: str | None, variant: dict[str, int]) -> None:
    """--bisect on every example: no tile-level pass may crash or change what the kernel computes
    (at the default sizes: the passes do not depend on them, and 7 stages are interpreted)."""
    params, sizes = split(parse(path, {}, kernel), variant)
    if sizes and not params:
        pytest.skip("a variant of sizes only: the default-size run covers it")
    module, inputs, sizes, _ = run_example(path, kernel, variant, with_sizes=False)
    stages, crashed = snapshots(module)
    report = io.StringIO()
    if bisect(stages, None, inputs, sizes, report, crashed).culprit is not None:
        pytest.fail(report.getvalue(), pytrace=False)


@pytest.mark.parametrize(
    "stem, variant, sizes",
    [("gemm", {}, {"M": 512, "N": 512, "K": 512}), ("attention", {"D": 64}, {"B": 1, "H": 4, "HKV": 4, "N": 512})],
)
def test_example_speed(stem: str, variant: dict[str, int], sizes: dict[str, int]) -> None:
    path = EXAMPLES / f"{stem}.tk"
    if not path.exists():
        pytest.skip(f"{path.name} has not landed yet")
    start = time.perf_counter()
    module = parse(path, split(parse(path, {}), variant)[0])
    kernel = find_kernel(module, None)
    inputs = make_inputs(kernel, kernel_params(kernel) | sizes, seed=0)
    outputs = interpret(module, None, inputs, sizes)
    assert time.perf_counter() - start < 10
    assert all(not np.isnan(np.asarray(v, np.float32)).any() for v in outputs.values())
