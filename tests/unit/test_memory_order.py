"""Memory order: the alias analysis of a block's loads and stores (tkc.passes.alias), the
fences tile-memory-order places, and sm90-verify-barriers' checks of their lowering, each broken
by hand in generated IR."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr

from tkc.diagnostics import TkError
from tkc.dialects import sm90, tile
from tkc.driver import compile_module
from tkc.frontend import parse_tk
from tkc.passes.alias import may_follow_and_overlap
from tkc.passes.sm90_verify_barriers import Sm90VerifyBarriersPass

KERNELS = Path(__file__).resolve().parents[1] / "gpu/kernels"


def kernel_of(body: str, args: str = "X: gl<f32>[M, N], Y: gl<f32>[M, N]") -> tile.KernelOp:
    source = f"kernel k({args}) {{\n    grid (M / 64) as (i)\n{body}\n}}\n"
    module = parse_tk(source, "k.tk")
    return next(op for op in module.walk() if isinstance(op, tile.KernelOp))


def overlaps(body: str) -> bool:
    """Whether the body's last load may read what its first store wrote."""
    kernel = kernel_of(body)
    store = next(op for op in kernel.walk() if isinstance(op, tile.StoreOp))
    load = [op for op in kernel.walk() if isinstance(op, tile.LoadOp)][-1]
    return may_follow_and_overlap(store, load)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # same tile, later in the block
        ("store X[i, 0] = zero<f32>[64, 64]\nstore Y[i, 0] = load X[i, 0] : rt<f32>[64, 64]", True),
        # another column of tiles
        ("store X[i, 0] = zero<f32>[64, 64]\nstore Y[i, 0] = load X[i, 1] : rt<f32>[64, 64]", False),
        # a wider tile that covers the loaded one
        ("store X[i, 0] = zero<f32>[64, 128]\nstore Y[i, 0] = load X[i, 1] : rt<f32>[64, 64]", True),
        ("store X[i, 0] = zero<f32>[64, 128]\nstore Y[i, 0] = load X[i, 2] : rt<f32>[64, 64]", False),
        # another argument: distinct memory (the runtime refuses overlapping arguments)
        ("store Y[i, 0] = zero<f32>[64, 64]\nstore Y[i, 1] = load X[i, 0] : rt<f32>[64, 64]", False),
        # the load comes first: no store runs before it
        ("let x = load X[i, 0] : rt<f32>[64, 64]\nstore X[i, 0] = x", False),
        # in-place update of tile k in iteration k: disjoint across iterations
        ("for k in 0 .. N / 64 {\nlet x = load X[i, k] : rt<f32>[64, 64]\nstore X[i, k] = x\n}", False),
        # iteration k reads tile k, which iteration k - 1 wrote
        ("for k in 0 .. N / 64 {\nlet x = load X[i, k] : rt<f32>[64, 64]\nstore X[i, k + 1] = x\n}", True),
        # iteration k reads tile k + 1, which no earlier iteration wrote
        ("for k in 0 .. N / 64 {\nlet x = load X[i, k + 1] : rt<f32>[64, 64]\nstore X[i, k] = x\n}", False),
        # a loop that re-reads what an earlier loop stored
        ("for c in 0 .. 4 {\nstore X[i, c] = zero<f32>[64, 64]\n}\n"
         "for c in 0 .. 4 {\nstore Y[i, c] = load X[i, c] : rt<f32>[64, 64]\n}", True),
        # an outer loop's later iteration reads row q + 1, an inner loop wrote row q: disjoint
        ("for q in 0 .. 4 {\nfor c in 0 .. 4 {\nlet x = load X[q + 1, c] : rt<f32>[64, 64]\n"
         "store X[q, c] = x\n}\n}", False),
        # a value computed inside the storing loop may be anything
        ("for c in 0 .. 4 {\nstore X[i, c * c] = zero<f32>[64, 64]\n}\nstore Y[i, 0] = load X[i, 3] : rt<f32>[64, 64]", True),
    ],
)
def test_alias_analysis(body: str, expected: bool) -> None:
    assert overlaps(body) is expected


def test_deep_index_chains_are_linear() -> None:
    chain = "\n".join(f"let a{n + 1} = a{n} + a{n}" for n in range(60))
    kernel = kernel_of(f"let a0 = i\n{chain}\nstore X[a60, 0] = zero<f32>[64, 64]\n"
                       f"store Y[i, 0] = load X[a60, 0] : rt<f32>[64, 64]")
    store = next(op for op in kernel.walk() if isinstance(op, tile.StoreOp))
    load = next(op for op in kernel.walk() if isinstance(op, tile.LoadOp))
    assert may_follow_and_overlap(store, load)


def lowered(name: str) -> ModuleOp:
    path = KERNELS / f"{name}.tk"
    module = parse_tk(path.read_text(), str(path))
    return compile_module(module, "sm90")


def violation(module: ModuleOp, message: str) -> None:
    with pytest.raises(TkError) as info:
        Sm90VerifyBarriersPass().apply(Context(), module)
    assert re.search(message, info.value.message), info.value.message


def only(module: ModuleOp, cls: type) -> list:
    return [op for op in module.walk() if isinstance(op, cls)]


@pytest.mark.parametrize("name", ["raw_same_tile", "raw_overlap", "raw_loop", "raw_two_sweeps", "waw"])
def test_generated_store_fences_verify(name: str) -> None:
    Sm90VerifyBarriersPass().apply(Context(), lowered(name))


def test_a_load_after_stores_without_the_wait_is_caught() -> None:
    module = lowered("raw_two_sweeps")
    wait = only(module, sm90.StoreFenceWaitOp)[0]
    wait.detach()
    wait.erase()
    violation(module, "one consumer signal and one producer wait, found 1 and 0")


def test_a_load_of_a_stored_tensor_without_a_decision_is_caught() -> None:
    module = lowered("raw_same_tile")
    for load in only(module, sm90.TmaLoadOp):
        load.attributes.pop("after_stores", None)
        load.attributes.pop("disjoint_from_stores", None)
    violation(module, "a TMA load of X, which the consumers also store, expects after_stores or disjoint_from_stores")


def test_a_signal_before_the_stores_are_written_is_caught() -> None:
    module = lowered("raw_two_sweeps")
    full_wait = next(op for op in only(module, sm90.TmaStoreWaitOp) if op.read is None)
    full_wait.properties["read"] = UnitAttr()
    violation(module, "wait until their TMA stores are written")


def test_the_producer_fences_before_it_loads() -> None:
    module = lowered("raw_same_tile")
    fence = next(op for op in only(module, sm90.FenceProxyAsyncGlobalOp) if op.prev_op is not None
                 and isinstance(op.prev_op, sm90.StoreFenceWaitOp))
    fence.detach()
    fence.erase()
    violation(module, "expected sm90.fence_proxy_async_global right after the producer's store-fence wait")


def test_a_store_between_a_loop_iterations_loads_is_refused() -> None:
    source = """kernel k(X: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (M / 64) as (i)
    for c in 0 .. 4 {
        let y = load Y[i, c] : rt<f32>[64, 64]
        store X[i, c] = y
        store Y[i, c] = load X[i, c] : rt<f32>[64, 64]
    }
}
"""
    module = parse_tk(source, "k.tk")
    with pytest.raises(TkError) as info:
        compile_module(module, "sm90")
    assert "loads a loop iteration's tiles as one TMA stage" in info.value.message
    assert info.value.line == 6


def _tile_dump(kernel_file: str) -> str:
    """The tile IR of a GPU-test kernel after every tile pass, as `tkc compile --emit=tile` writes it."""
    from tkc.driver import ir_text, load_module

    return ir_text(compile_module(load_module(KERNELS / kernel_file), "tile"))


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: re.sub(r"\n *tile\.fence [^\n]*", "", text, count=1),  # the fence removed
        lambda text: text.replace("memory_order = #tile.decision<1", "memory_order = #tile.decision<0", 1),
    ],
    ids=["fence-removed", "decision-edited"],
)
def test_a_dump_whose_memory_order_was_edited_is_refused(edit, tmp_path: Path) -> None:  # noqa: ANN001
    """A dump resumes after tile-memory-order, so its fences are checked against what the pass
    decides before anything is lowered: an edited dump is a diagnostic, not a racy kernel."""
    from tkc.driver import load_module

    text = _tile_dump("raw_same_tile.tk")
    edited = edit(text)
    assert edited != text
    path = tmp_path / "edited.mlir"
    path.write_text(edited)
    with pytest.raises(TkError, match="memory ordering is not what tile-memory-order decides"):
        compile_module(load_module(path), "ptx")
    path.write_text(text)
    compile_module(load_module(path), "ptx")  # the dump as written compiles


def test_a_second_store_after_a_loop_iterations_loads_is_fenced_behind_the_stage() -> None:
    """Two stores to one tile after the iteration's loads: the fence between them stands behind
    the TMA stage (the consumers wait for their TMA stores, the producer for the consumers' pass
    before its next stage), so the kernel compiles; tests/gpu/kernels/store_twice_after_loads.tk
    runs it against the interpreter."""
    source = """kernel k(X: gl<f32>[M, N], S: gl<f32>[M, N]) {
    grid (M / 64) as (i)
    for c in 0 .. 4 {
        let x = load X[i, c] : rt<f32>[64, 64]
        store S[i, c] = x
        store S[i, c] = x * 3.0
    }
}
"""
    module = compile_module(parse_tk(source, "k.tk"), "sm90")
    text = str(module)
    assert text.count("sm90.store_fence_wait") == 1, "the producer waits for the consumers' pass once per iteration"
