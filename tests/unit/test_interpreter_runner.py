"""`tkc run`: checksums, --check against an `X_ref.py`, no usable GPU as a user error, and --bisect
naming a deliberately broken pass injected into the tile pipeline."""

from __future__ import annotations

import argparse
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from interpreter_support import attention, gemm
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

import tkc.driver
import tkc.runner
import tkc.runtime
from tkc.diagnostics import TkError
from tkc.dialects import tile
from tkc.pipeline import StageUnavailable
from tkc.runner import bisect, make_inputs, run_command, snapshots

GEMM_REF = """
import numpy as np

def reference(inputs, params):
    assert params["BM"] == 128 and params["M"] == 256
    return {"C": inputs["A"].astype(np.float64) @ inputs["B"]}
"""


@dataclass(frozen=True)
class BreakSub(ModulePass):
    """A miscompile on purpose: every `tile.binary sub` becomes `add`."""

    name = "test-break-sub"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for each in op.walk():
            if isinstance(each, tile.BinaryOp) and each.fn.data == tile.BinaryFn.SUB:
                each.fn = tile.BinaryFnAttr(tile.BinaryFn.ADD)


def args(file: Path, **overrides) -> argparse.Namespace:
    defaults = dict(
        file=str(file), kernel=None, params={}, size={"M": 256, "N": 128, "K": 192},
        interpret=True, check=False, bisect=False, seed=0,
    )
    return argparse.Namespace(**(defaults | overrides))


@pytest.fixture
def gemm_file(tmp_path: Path) -> Path:
    path = tmp_path / "gemm.mlir"
    path.write_text(str(gemm()))
    return path


def test_run_prints_checksums(gemm_file: Path) -> None:
    out = io.StringIO()
    assert run_command(args(gemm_file), out) == 0
    assert out.getvalue().splitlines()[1].startswith("C: bfloat16 [256, 128]  sum ")
    again = io.StringIO()
    run_command(args(gemm_file), again)
    assert again.getvalue() == out.getvalue()  # seeded


def test_check_fails_a_few_wrong_rows_the_norm_would_hide() -> None:
    """One wrong row of 100000 moves the norm-wise error by 3e-3, under its tolerance; the element
    criterion (a tenth of the largest |ref|) still fails it."""
    reference = {"Y": np.random.default_rng(0).standard_normal((100000, 8))}
    wrong = {"Y": reference["Y"].copy()}
    wrong["Y"][5] += 1.0
    out = io.StringIO()
    assert not tkc.runner.check(wrong, reference, out)
    assert "of the largest |ref|)  rel error 3.1" in out.getvalue()
    assert tkc.runner.check({"Y": reference["Y"] * 1.001}, reference, io.StringIO())

def test_check_against_the_reference(gemm_file: Path) -> None:
    gemm_file.with_name("gemm_ref.py").write_text(GEMM_REF)
    out = io.StringIO()
    assert run_command(args(gemm_file, check=True), out) == 0
    assert "C: max abs error" in out.getvalue() and out.getvalue().rstrip().endswith("PASS")

    gemm_file.with_name("gemm_ref.py").write_text(GEMM_REF.replace("@ inputs[\"B\"]", "@ inputs['B'] * 1.1"))
    out = io.StringIO()
    assert run_command(args(gemm_file, check=True), out) == 1
    assert "FAIL" in out.getvalue()


@pytest.mark.parametrize("reference,message", [
    ('def reference(inputs, params):\n    return {"C": inputs["Q"]}\n',
     r"reference\(\) of gemm_ref.py raised KeyError: 'Q'\n  at .*gemm_ref.py:2"),
    ("import no_such_module\n", r"loading gemm_ref.py raised ModuleNotFoundError: .*\n  at .*gemm_ref.py:1"),
    ("def reference(inputs, params):\n    return {\n", r"loading gemm_ref.py raised SyntaxError: .*\n  at .*gemm_ref.py:2"),
    ("def reference(inputs, params):\n    return inputs['A']\n", "the reference returns a ndarray; it returns a dict"),
])
def test_a_mistake_in_the_reference_is_the_users(gemm_file: Path, reference: str, message: str) -> None:
    """An exception from X_ref.py is a user error naming the line it came from (exit 1), not an
    internal compiler error."""
    gemm_file.with_name("gemm_ref.py").write_text(reference)
    with pytest.raises(TkError, match=message):
        run_command(args(gemm_file, check=True), io.StringIO())


def test_sizes_name_the_kernels_dims_and_fit_in_memory(gemm_file: Path) -> None:
    with pytest.raises(TkError, match="--size names Q, which gemm has no symbolic dim of; its dims are M, K, N"):
        run_command(args(gemm_file, size={"Q": 3}), io.StringIO())
    with pytest.raises(TkError, match="tkc run handles at most"):
        run_command(args(gemm_file, size={"M": 10**14}), io.StringIO())


def test_check_without_a_reference_is_a_user_error(gemm_file: Path) -> None:
    with pytest.raises(TkError, match="gemm_ref.py does not exist"):
        run_command(args(gemm_file, check=True), io.StringIO())


def test_dims_without_a_size_get_two_tiles(gemm_file: Path) -> None:
    out = io.StringIO()
    run_command(args(gemm_file, size={"M": 384}), out)
    header, note, c = out.getvalue().splitlines()[:3]
    assert header == "gemm: M=384 K=128 N=256  seed 0"
    assert note == "note: --size gave no K, N; tkc run took K=128, N=256 (two tiles, or 2)"
    assert c.startswith("C: bfloat16 [384, 256]")


def test_no_usable_gpu_is_the_machines_gap_not_a_user_error(gemm_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_device(**kwargs):
        raise tkc.runtime.DeviceError("no CUDA driver")

    monkeypatch.setattr(tkc.runner, "run_on_gpu", no_device)
    with pytest.raises(StageUnavailable, match="cannot run on the GPU: no CUDA driver .*--interpret"):
        run_command(args(gemm_file, interpret=False), io.StringIO())


def test_outputs_are_poisoned() -> None:
    kernel = next(op for op in attention(64).walk() if isinstance(op, tile.KernelOp))
    inputs = make_inputs(kernel, {"B": 1, "H": 1, "N": 128}, seed=1)
    assert np.isnan(inputs["O"]).all() and np.isnan(inputs["LSE"]).all()
    assert not np.isnan(inputs["Q"]).any()


def test_bisect_names_the_broken_pass() -> None:
    module = attention(64, causal=True)
    kernel = next(op for op in module.walk() if isinstance(op, tile.KernelOp))
    inputs = make_inputs(kernel, {"B": 1, "H": 2, "N": 256}, seed=2)
    stages, crashed = snapshots(module, [CommonSubexpressionElimination(), BreakSub(), CommonSubexpressionElimination()])
    assert crashed is None
    out = io.StringIO()
    result = bisect(stages, None, inputs, {}, out)
    assert result.culprit == "test-break-sub"
    assert result.errors[0] == ("cse", 0.0)
    assert "first pass whose outputs differ: test-break-sub" in out.getvalue()


def test_bisect_through_the_driver_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tkc run --bisect` with the broken pass slipped into the driver's real tile pipeline."""
    instantiate = tkc.driver.instantiate
    monkeypatch.setattr(tkc.driver, "instantiate", lambda names: (*instantiate(names), BreakSub()))
    path = tmp_path / "attn.mlir"
    path.write_text(str(attention(64)))
    out = io.StringIO()
    assert run_command(args(path, bisect=True, size={"B": 1, "H": 1, "N": 256}), out) == 1
    assert "first pass whose outputs differ: test-break-sub" in out.getvalue()
    assert re.search(r"^  O: rel change [0-9.e+-]+, largest at \[0, 0, \d+, \d+\]: \S+ -> \S+$", out.getvalue(), re.M)
    assert "canonicalize" in out.getvalue()  # the real passes ran first and changed nothing


@dataclass(frozen=True)
class Crash(ModulePass):
    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("boom")


def test_bisect_names_a_crashing_pass() -> None:
    module = gemm()
    kernel = next(op for op in module.walk() if isinstance(op, tile.KernelOp))
    inputs = make_inputs(kernel, {"M": 128, "N": 128, "K": 64}, seed=3)
    stages, crashed = snapshots(module, [CommonSubexpressionElimination(), Crash(), CommonSubexpressionElimination()])
    assert [name for name, _ in stages] == ["input", "cse"]
    assert crashed is not None and crashed[0] == "test-crash"
    assert crashed[1].startswith("RuntimeError: boom (at ") and "test_interpreter_runner.py" in crashed[1]
    out = io.StringIO()
    assert bisect(stages, None, inputs, {}, out, crashed).culprit == "test-crash"
    assert "test-crash               failed: RuntimeError: boom" in out.getvalue()


def test_bisect_of_a_correct_pipeline_finds_nothing(tmp_path: Path) -> None:
    path = tmp_path / "attn.mlir"
    path.write_text(str(attention(64, causal=True)))
    out = io.StringIO()
    assert run_command(args(path, bisect=True, size={"B": 1, "H": 1, "N": 256}), out) == 0
    assert "no pass changes the outputs" in out.getvalue()


GATHER_TK = """
kernel gather<B = 64>(X: gl<f32>[M, N], Rows: gl<i32>[G], Y: gl<f32>[G, N]) {
    grid (G) as (g)
    let r = load Rows[g] : i32
    store Y[elem(g, g + 1), 0] = load X[elem(r, r + 1), 0] : rt<f32>[16, B]
}
"""
GATHER_REF = """
import numpy as np

def inputs(params, rng):
    return {"Rows": rng.integers(0, params["M"], params["G"])}

def reference(inputs, params):
    assert inputs["Rows"].any(), "the table is the one inputs() made"
    return {"Y": inputs["X"][inputs["Rows"]]}
"""


def test_a_reference_that_makes_inputs_replaces_the_random_ones(tmp_path: Path) -> None:
    """`inputs(params, rng)` in NAME_ref.py: a gather by a table of rows checks against numpy
    (with the zeros tkc run otherwise gives an i32 table, every row would be row 0)."""
    (tmp_path / "gather.tk").write_text(GATHER_TK)
    (tmp_path / "gather_ref.py").write_text(GATHER_REF)
    out = io.StringIO()
    assert run_command(args(tmp_path / "gather.tk", size={"M": 100, "N": 64, "G": 30}, check=True), out) == 0
    assert "inputs Rows from inputs() of gather_ref.py" in out.getvalue() and "PASS" in out.getvalue()


@pytest.mark.parametrize("made,error", [
    ("{'Q': 0}", "returns 'Q', which is no argument of gather (its arguments: X, Rows, Y)"),
    ("{'Rows': np.zeros(3)}", "returns Rows of shape [3]; the sizes give it [30]"),
    ("{'Rows': np.full(30, 0.5)}", "returns Rows with values that are not integers"),
])
def test_inputs_that_do_not_fit_the_kernel_are_user_errors(tmp_path: Path, made: str, error: str) -> None:
    (tmp_path / "gather.tk").write_text(GATHER_TK)
    (tmp_path / "gather_ref.py").write_text(f"import numpy as np\n\ndef inputs(params, rng):\n    return {made}\n")
    with pytest.raises(TkError, match=re.escape(error)):
        run_command(args(tmp_path / "gather.tk", size={"M": 100, "N": 64, "G": 30}), io.StringIO())


TWO_KERNELS_TK = GATHER_TK + """
kernel scatter<B = 64>(X: gl<f32>[G, N], Cols: gl<i32>[G], Y: gl<f32>[M, N]) {
    grid (G) as (g)
    let c = load Cols[g] : i32
    store Y[elem(c, c + 1), 0] = load X[elem(g, g + 1), 0] : rt<f32>[16, B]
}
"""
TWO_KERNELS_REF = """
import numpy as np

def inputs(params, rng):
    rows = rng.permutation(params["M"])[:params["G"]]
    return {"Rows": rows, "Cols": rows}  # each kernel takes its own table

def reference(inputs, params):
    if params["kernel"] == "gather":
        return {"Y": inputs["X"][inputs["Rows"]]}
    y = np.full((params["M"], params["N"]), np.nan, np.float32)
    y[inputs["Cols"]] = inputs["X"]
    return {"Y": y}
"""


@pytest.mark.parametrize("kernel", ["gather", "scatter"])
def test_one_reference_serves_the_kernels_of_a_file(tmp_path: Path, kernel: str) -> None:
    """inputs() and reference() get the kernel's name as params["kernel"], and a name inputs()
    returns for another kernel of the file is left out rather than refused."""
    (tmp_path / "two.tk").write_text(TWO_KERNELS_TK)
    (tmp_path / "two_ref.py").write_text(TWO_KERNELS_REF)
    out = io.StringIO()
    assert run_command(args(tmp_path / "two.tk", kernel=kernel, size={"M": 100, "N": 64, "G": 30}, check=True), out) == 0
    assert "PASS" in out.getvalue()


COPY_TK = """
kernel copy(X: gl<bf16>[M, N], Y: gl<bf16>[M, N]) {
    grid (ceildiv(M, 64), ceildiv(N, 64)) as (i, j)
    store Y[i, j] = load X[i, j] : rt<bf16>[64, 64]
}
"""


@pytest.mark.parametrize("n,refused", [(64, False), (100, True)])
def test_interpreting_sizes_the_gpu_would_refuse_says_so(tmp_path: Path, n: int, refused: bool) -> None:
    """The interpreter runs any size; where the GPU runtime would refuse the same arguments (100
    bf16 elements are 200-byte rows, no multiple of TMA's 16), tkc run --interpret says so."""
    (tmp_path / "copy.tk").write_text(COPY_TK)
    out = io.StringIO()
    assert run_command(args(tmp_path / "copy.tk", size={"M": 64, "N": n}), out) == 0
    note = "note: on the GPU this run would stop before launching: argument X: dim N = 100 (its innermost)"
    assert (note in out.getvalue()) == refused


def test_a_reference_may_import_one_beside_it(tmp_path: Path) -> None:
    """References of kernels that compute the same share code: X_ref.py imports Y_ref.py."""
    (tmp_path / "gather.tk").write_text(GATHER_TK)
    (tmp_path / "table_ref.py").write_text(GATHER_REF)
    (tmp_path / "gather_ref.py").write_text("from table_ref import inputs, reference\n")
    out = io.StringIO()
    assert run_command(args(tmp_path / "gather.tk", size={"M": 100, "N": 64, "G": 30}, check=True), out) == 0
    assert "PASS" in out.getvalue()


SCATTER_INTO_REF = """
import numpy as np

def inputs(params, rng):
    return {"Cols": rng.permutation(params["M"])[:params["G"]],
            "Y": rng.standard_normal((params["M"], params["N"]))}  # the contents the kernel keeps

def reference(inputs, params):
    y = inputs["Y"].copy()
    y[inputs["Cols"]] = inputs["X"]
    return {"Y": y}
"""


def test_inputs_give_the_contents_an_output_keeps_where_the_kernel_does_not_write(tmp_path: Path) -> None:
    """An output the kernel only writes is NaN unless inputs() gives it contents: then the kernel
    that writes part of it (a scatter into a cache) is checked against a reference that keeps
    them, and a kernel that overwrote them would fail."""
    (tmp_path / "two.tk").write_text(TWO_KERNELS_TK)
    (tmp_path / "two_ref.py").write_text(SCATTER_INTO_REF)
    out = io.StringIO()
    sizes = {"M": 100, "N": 64, "G": 30}
    assert run_command(args(tmp_path / "two.tk", kernel="scatter", size=sizes, check=True), out) == 0
    assert "inputs Cols, Y from inputs() of two_ref.py" in out.getvalue() and "PASS" in out.getvalue()
    (tmp_path / "two_ref.py").write_text(SCATTER_INTO_REF.replace("y = inputs[\"Y\"].copy()", "y = inputs[\"Y\"] * 2"))
    assert run_command(args(tmp_path / "two.tk", kernel="scatter", size=sizes, check=True), io.StringIO()) == 1
