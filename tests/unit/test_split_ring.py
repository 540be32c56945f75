"""Split rings (`@split_ring(1)`): an overlapped loop's loads that only the late mma reads (V) and
the others (K) become two rings over the same stage bytes; the pin is refused, with the reason,
where no loop can split, and off it leaves the single ring as it was."""

from pathlib import Path

import pytest
from xdsl.dialects import scf

from tkc.diagnostics import TkError
from tkc.dialects.tile import KernelOp
from tkc.driver import compile_module, load_module, make_context
from tkc.passes.plan import KernelPlan, split_ring_loads
from tkc.passes.tile_to_sm90.shared_memory import read_shared_memory

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _kernel(source: Path, pins: dict[str, int]) -> KernelOp:
    module = load_module(source, None, pins, make_context())
    compile_module(module, "tile")
    return next(op for op in module.walk() if isinstance(op, KernelOp))


def _loops(kernel: KernelOp) -> list[scf.ForOp]:
    return [op for op in kernel.walk() if isinstance(op, scf.ForOp)]


@pytest.mark.parametrize("pins", [{}, {"@persistent": 1}, {"CAUSAL": 1}], ids=["tile", "persistent", "causal"])
def test_attention_splits_k_from_v_where_pinned(pins: dict[str, int]) -> None:
    kernel = _kernel(EXAMPLES / "attention.tk", {"@split_ring": 1, **pins})
    (loop,) = [loop for loop in _loops(kernel) if KernelPlan.splits_ring(loop)]
    parts = split_ring_loads(loop)
    assert not isinstance(parts, str)
    assert [[load.result.name_hint for load in part] for part in parts] == [["k"], ["v"]]
    memory = read_shared_memory(kernel, KernelPlan.of(kernel))
    head, tail = memory.rings_of(loop)
    assert (head.base, head.stage_bytes, head.stages) == (tail.base, tail.stage_bytes, tail.stages)
    assert memory.ring_of(loop) is head and memory.ring_loading(tail.loads[0]) is tail
    assert memory.barriers == 2 * 2 * head.stages + sum(2 * ring.stages for ring in memory.kernel_rings)


def test_the_single_ring_stays_unless_pinned() -> None:
    kernel = _kernel(EXAMPLES / "attention.tk", {})
    (loop,) = _loops(kernel)
    assert "split_ring" not in loop.attributes
    assert len(read_shared_memory(kernel, KernelPlan.of(kernel)).rings_of(loop)) == 1
    kernel = _kernel(EXAMPLES / "attention.tk", {"@split_ring": 0})
    (loop,) = _loops(kernel)
    assert not KernelPlan.splits_ring(loop) and "pinned by @split_ring(0)" in str(loop.attributes["split_ring"])


@pytest.mark.parametrize(("example", "reason"), [
    ("gemm.tk", "the loop is not overlapped"),
    ("attention_varlen.tk", "the late tail reads a tile whose rows past the tensor's end are zeroed"),
])
def test_a_kernel_pin_where_no_loop_can_split_is_an_error_with_the_reason(example: str, reason: str) -> None:
    with pytest.raises(TkError, match=f"@split_ring\\(1\\) finds no loop whose ring can split: {reason}"):
        _kernel(EXAMPLES / example, {"@split_ring": 1})


def test_a_loop_pin_on_a_loop_that_cannot_split_is_an_error_at_the_loop(tmp_path: Path) -> None:
    source = tmp_path / "gemm.tk"
    text = (EXAMPLES / "gemm.tk").read_text()
    source.write_text(text.replace("    for k in", "    @split_ring(1)\n    for k in", 1))
    with pytest.raises(TkError, match="gemm.tk:6:5: .*@split_ring\\(1\\) cannot split this loop's ring: the loop is not overlapped"):
        _kernel(source, {})


def test_the_pin_takes_0_or_1() -> None:
    with pytest.raises(TkError, match="@split_ring takes 0 \\(off\\) or 1"):
        _kernel(EXAMPLES / "attention.tk", {"@split_ring": 2})
