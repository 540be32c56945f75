"""Where `tkc compile` verifies the IR (after every tile and sm90 pass, in the PTX stage only at its
end, tkc.pipeline.STAGE_ENDS; after every pass with --verify-each / TKC_VERIFY_EACH=1) and `tkc-opt` (after every pass): what makes
leaving passes out safe holds, and a pass that breaks the IR is still named."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i1, i32, i64
from xdsl.passes import ModulePass, PassPipeline

from tkc import driver
from tkc.pipeline import CHECK_ONLY_PASSES, PIPELINE, PTX_PASSES, SM90_PASSES, STAGE_ENDS, TILE_PASSES

REPO = Path(__file__).resolve().parents[2]


class Texts(driver.Observer):
    """The IR text around each pass."""

    def __init__(self) -> None:
        self.texts: dict[tuple[str, str], str] = {}

    def before(self, pass_name: str, module: ModuleOp) -> None:
        self.texts["before", pass_name] = driver.ir_text(module)

    def after(self, pass_name: str, module: ModuleOp) -> None:
        self.texts["after", pass_name] = driver.ir_text(module)


@pytest.mark.parametrize("example", ["gemm", "attention", "layernorm"])
def test_check_only_passes_change_nothing(example: str) -> None:
    texts = Texts()
    driver.compile_module(driver.load_module(REPO / f"examples/{example}.tk"), "sm90", texts)
    for name in CHECK_ONLY_PASSES:
        assert texts.texts["after", name] == texts.texts["before", name], name


def test_which_passes_are_verified_later() -> None:
    """Every tile and sm90 pass that changes the IR is verified after it, the PTX stage at its end,
    the check-only passes run on verified IR, the compile's last pass is verified whatever it
    is, and --verify-each verifies all."""
    assert STAGE_ENDS == {TILE_PASSES[-1], "sm90-schedule-wgmma", PTX_PASSES[-1]}
    assert PIPELINE.index("sm90-schedule-wgmma") + 1 == PIPELINE.index("sm90-verify-barriers") == len(TILE_PASSES + SM90_PASSES) - 1
    assert driver.unverified_passes(driver.pipeline_for("ptx")) == {"sm90-verify-barriers", "convert-sm90-to-ptx"}
    assert driver.unverified_passes(driver.pipeline_for("ptx"), verify_each=True) == frozenset()
    assert driver.unverified_passes(["convert-sm90-to-ptx"]) == frozenset()  # the last pass is verified
    assert driver.unverified_passes(["canonicalize", "cse"]) == frozenset()


def test_verify_each_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKC_VERIFY_EACH", "0")
    assert not driver.verify_each_pass()
    monkeypatch.setenv("TKC_VERIFY_EACH", "1")
    assert driver.verify_each_pass()


@dataclass(frozen=True)
class BreakIt(ModulePass):
    """Leaves an arith.addi whose result type is not its operands'."""

    name = "break-it"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        one = arith.ConstantOp(IntegerAttr(1, i32))
        op.body.block.add_ops([one, arith.AddiOp(one, one, result_type=i64)])


@dataclass(frozen=True)
class Nothing(ModulePass):
    name = "nothing"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


def test_ir_verified_later_is_still_blamed_on_the_pass_that_broke_it() -> None:
    callback = driver.PassCallback(driver.Observer(), unverified=frozenset({"break-it"}))
    with pytest.raises(driver.PassVerifyError, match="does not verify after pass nothing or break-it [(]--verify-each"):
        PassPipeline((BreakIt(), Nothing()), callback).apply(Context(), ModuleOp([]))
    callback = driver.PassCallback(driver.Observer())
    with pytest.raises(driver.PassVerifyError, match="does not verify after pass break-it:"):
        PassPipeline((BreakIt(), Nothing()), callback).apply(Context(), ModuleOp([]))


@dataclass(frozen=True)
class UseInsideIf(ModulePass):
    """Uses after an scf.if a value defined inside it (as tile-mask-tails once did)."""

    name = "use-inside-if"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        condition = arith.ConstantOp(IntegerAttr(1, i1))
        inside = arith.ConstantOp(IntegerAttr(1, i32))
        branch = scf.IfOp(condition, [], [inside, scf.YieldOp()])
        op.body.block.add_ops([condition, branch, arith.AddiOp(inside, inside)])


def test_a_value_used_outside_the_block_that_defines_it_is_a_verify_error() -> None:
    callback = driver.PassCallback(driver.Observer())
    with pytest.raises(driver.PassVerifyError, match="after pass use-inside-if: operand 0 of arith.addi is used outside "
                                                     "the region that defines it [(]defined by arith.constant[)]"):
        PassPipeline((UseInsideIf(),), callback).apply(Context(), ModuleOp([]))


def test_tkc_opt_verifies_after_every_pass(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    """IR a pass leaves invalid is an internal error (exit 2) naming the pass; with
    --verify-diagnostics the verifier's message is printed, as xdsl-opt does."""
    from tkc import opt
    from tkc.universe import TKC_UNIVERSE

    monkeypatch.setitem(TKC_UNIVERSE.all_passes, "break-it", lambda: BreakIt)
    empty = tmp_path / "empty.mlir"
    empty.write_text("builtin.module {}\n")
    assert opt.main([str(empty), "-p", "break-it"]) == 2
    assert "does not verify after pass break-it" in capsys.readouterr().err
    assert opt.main([str(empty), "-p", "break-it", "--verify-diagnostics"]) == 0
    assert "expected from variable 'T', but got i64" in capsys.readouterr().out
