"""KernelABI.from_json takes back what to_json wrote and says what is wrong with anything else;
sm90.kernel and ptx.module verify their ABI with it (the runtime launches by it)."""

from __future__ import annotations

import json

import pytest

from tkc.abi import ABIError, ArgSpec, DimParam, KernelABI, PointerParam, ScratchParam, TensorMapParam
from tkc.dialects.sm90 import KernelABIAttr

ABI = KernelABI(
    entry="k",
    args=(ArgSpec("A", "bf16", ("M", 64)), ArgSpec("L", "f32", ("M",))),
    params=(TensorMapParam("tmap_A", "A", (64, 128), 128), PointerParam("ptr_L", "L"), DimParam("dim_M", "M")),
    grid=(("ceildiv", "M", 128), ("min", "num_sms", 4), 1),
    block=384,
    smem_bytes=1024,
    divisibility=(("M", 128),),
    written=("L",),
    multicast=("A",),
    dependent_launch=True,
    requires=((("and", ("ge", "M", 64), ("xor", ("eq", ("sub", "M", ("mul", ("div", "M", 2), 2)), 1), 1)),
               "M >= 64 and not M % 2 == 1 (line 2)"),),
)


def test_the_json_round_trips() -> None:
    assert KernelABI.from_json(ABI.to_json()) == ABI


STREAM_K = KernelABI(
    entry="k",
    args=(ArgSpec("A", "bf16", ("M", "K")), ArgSpec("C", "f32", ("M", 64))),
    params=(TensorMapParam("tmap_A", "A", (64, 128), 128), ScratchParam("scratch", ("mul", "num_sms", 131072))),
    grid=("num_sms", 1, 1),
    block=384,
    smem_bytes=1024,
)


def test_a_scratch_parameter_round_trips() -> None:
    raw = json.loads(STREAM_K.to_json())
    assert raw["params"][1] == {"name": "scratch", "nbytes": ["mul", "num_sms", 131072], "kind": "scratch"}
    assert KernelABI.from_json(STREAM_K.to_json()) == STREAM_K


@pytest.mark.parametrize(
    "nbytes", [["mul", "N", 4], ["pow", "M", 2], ["div", "M", 0], True, None, {}, ["add", "M"]]
)
def test_a_scratch_size_is_a_grid_expression_over_the_dims(nbytes: object) -> None:
    raw = json.loads(STREAM_K.to_json())
    raw["params"][1]["nbytes"] = nbytes
    with pytest.raises(ABIError, match="parameter 'scratch' has the size .*, not an expression over the dims"):
        KernelABI.from_json(json.dumps(raw))


def test_a_scratch_parameter_needs_a_size() -> None:
    raw = json.loads(STREAM_K.to_json())
    del raw["params"][1]["nbytes"]
    with pytest.raises(ABIError, match="missing 'nbytes'"):
        KernelABI.from_json(json.dumps(raw))


def edited(path: tuple[str | int, ...], value: object) -> str:
    raw = json.loads(ABI.to_json())
    target = raw
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(raw)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (ABI.to_json()[:-1], "not JSON"),
        ("[]", "missing 'args'"),
        (edited(("block",), "384"), "'block' must be a JSON int"),
        (edited(("block",), True), "'block' must be a JSON int"),
        (edited(("block",), 0), "a block of 0 threads"),
        (edited(("entry",), KeyError), "missing 'entry'"),
        (edited(("params", 0, "kind"), "texture"), "unknown kind 'texture'"),
        (edited(("params", 0, "box"), [64, 0]), "'box' holds an invalid entry"),
        (edited(("params", 0, "swizzle"), 100), "the swizzle 100"),
        (edited(("params", 1, "arg"), "B"), "names no argument 'B'"),
        (edited(("params", 2, "dim"), "K"), "names no dim 'K'"),
        (edited(("params", 2, "name"), "tmap_A"), "two parameters share a name"),
        (edited(("grid",), [1, 1]), "the grid has 3 extents"),
        (edited(("grid", 0), ["pow", "M", 2]), "'grid' holds an invalid entry"),
        (edited(("grid", 0), ["div", "M", 0]), "'grid' holds an invalid entry"),
        (edited(("grid", 0), "K"), "'grid' holds an invalid entry"),
        (edited(("divisibility",), [["M", 0]]), "'divisibility' holds an invalid entry"),
        (edited(("args", 0, "dims"), ["M", -1]), "'dims' holds an invalid entry"),
        (edited(("written",), [{}]), "'written' holds an invalid entry"),
        (edited(("multicast",), ["B"]), "'multicast' holds an invalid entry"),
        (edited(("dependent_launch",), 1), "'dependent_launch' must be a JSON bool"),
        (edited(("grid", 1), ["min", {}, 4]), "'grid' holds an invalid entry"),
        (edited(("divisibility",), [[["M"], 128]]), "'divisibility' holds an invalid entry"),
        (edited(("grid", 0), ["eq", "M", 1]), "'grid' holds an invalid entry"),
        (edited(("requires", 0, 0), ["pow", "M", 2]), "'requires' holds an invalid entry"),
        (edited(("requires", 0, 0), ["eq", "K", 2]), "'requires' holds an invalid entry"),
        (edited(("requires", 0, 1), 7), "'requires' holds an invalid entry"),
        (edited(("requires", 0), ["M"]), "'requires' holds an invalid entry"),
    ],
)
def test_anything_else_is_an_abi_error(text: str, message: str) -> None:
    with pytest.raises(ABIError, match=message):
        KernelABI.from_json(text)


def test_the_sm90_attribute_holds_the_abi_less_what_its_kernel_states() -> None:
    attr = KernelABIAttr.from_abi(ABI)
    assert attr.abi(ABI.entry, ABI.block, ABI.smem_bytes) == ABI
    assert KernelABI.from_json(attr.abi("k", 384, 1024).to_json()) == ABI


def test_shapes_that_meet_the_divisibility_and_rows_that_are_not_whole_lines() -> None:
    assert ABI.divides([(256, 64), (256,)]) and not ABI.divides([(200, 64), (200,)])
    assert not ABI.divides([(256, 64), (128,)]), "M bound twice to different sizes"
    assert not ABI.divides([(256, 64)]) and not ABI.divides([(256,), (256,)]), "shapes that fit no argument"
    assert not ABI.unaligned_rows([(256, 64), (256,)], ABI.multicast), "64 bf16 are one 128-byte line"
    wide = KernelABI("k", (ArgSpec("B", "bf16", ("K", "N")),), (), (1, 1, 1), 128, 0, multicast=("B",))
    assert wide.unaligned_rows([(64, 8184)], wide.multicast) and not wide.unaligned_rows([(64, 8192)], wide.multicast)
    assert not wide.unaligned_rows([(64, 8184)], ()), "only the named arguments count"
    # a view's rows start where its strides put them: a column slice of whole lines is aligned
    assert not wide.unaligned_rows([(64, 8184)], wide.multicast, [(8192 * 2, 2)])
    assert wide.unaligned_rows([(64, 8192)], wide.multicast, [(8200 * 2, 2)]), "padded rows, not whole lines"
    assert not wide.unaligned_rows([(1, 8184)], wide.multicast, [None]), "one row starts nowhere but at its base"
