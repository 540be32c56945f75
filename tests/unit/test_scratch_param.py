"""A kernel's scratch parameter (tkc.abi.ScratchParam): the runtime gives each stream a buffer of
zero bytes, allocated once and reused while it is large enough, here against the fake driver of
test_runtime_fake_driver (whose fresh allocations are not zero, like the GPU's)."""

from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from test_runtime import FakeCuda, fake_torch
from test_runtime_fake_driver import FakeDriver, cu, u64  # noqa: F401 (cu: the fixture)

import tkc.runtime.launch as launch_mod
from tkc.abi import ArgSpec, DimParam, KernelABI, PointerParam, ScratchParam
from tkc.diagnostics import TkError
from tkc.runtime import load, plan_launch

# A block per row of X, each with 64 bytes of flags in the scratch memory.
FLAGS = KernelABI(
    entry="flags",
    args=(ArgSpec("X", "f16", ("R", "W")),),
    params=(PointerParam("x", "X"), ScratchParam("flags", ("mul", "R", 64)), DimParam("w", "W")),
    grid=("R", 1, 1),
    block=128,
    smem_bytes=0,
)


def flags_kernel(cu: FakeDriver, seen: list[int]):
    """The stand-in for `flags`: it finds its scratch bytes zero, raises its flags and lowers them
    again, as a kernel must leave its scratch memory; `seen` gets each launch's scratch address."""

    def run(params: int) -> None:
        scratch = u64(params, 1)
        flags = np.ctypeslib.as_array((ctypes.c_uint8 * (cu.launches[-1].gridDimX * 64)).from_address(scratch))
        assert not flags.any(), "the scratch memory is not zero at the launch"
        flags[:] = 1
        flags[:] = 0
        seen.append(scratch)

    return run


def device_array(cu: FakeDriver, rows: int) -> FakeCuda:
    return FakeCuda((rows, 8), ptr=cu.cuMemAlloc(rows * 8 * 2)[1])


def allocated(cu: FakeDriver, addr: int) -> int:
    """The bytes of the fake allocation at `addr`."""
    return len(cu.memory[addr]) - 256


def test_each_stream_gets_a_zeroed_buffer_that_it_keeps_while_large_enough(cu: FakeDriver) -> None:
    seen: list[int] = []
    cu.kernels["flags"] = flags_kernel(cu, seen)
    k = load(ptx="ptx", abi=FLAGS)
    small, large = device_array(cu, 4), device_array(cu, 8)
    cu.calls.clear()
    k(small, stream=0x5000)
    assert allocated(cu, seen[0]) >= 4 * 64
    assert cu.calls.index("cuMemsetD8Async") < cu.calls.index("cuLaunchKernelEx"), "zeroed before the launch"
    k(small, stream=0x5000)
    assert seen[1] == seen[0] and cu.calls.count("cuMemAlloc") == cu.calls.count("cuMemsetD8Async") == 1
    k(large, stream=0x5000)  # 8 rows: more bytes than the stream's buffer holds
    assert seen[2] != seen[0] and allocated(cu, seen[2]) >= 8 * 64 and cu.calls.count("cuMemAlloc") == 2
    assert seen[0] in cu.memory, "the smaller buffer is kept: launches queued before may still address it"
    k(small, stream=0x6000)
    assert seen[3] not in (seen[0], seen[2]) and cu.calls.count("cuMemAlloc") == 3
    k(small, stream=0x5000)
    assert seen[4] == seen[2] and cu.calls.count("cuMemAlloc") == 3, "the larger buffer serves smaller launches"
    assert [cfg.hStream for cfg in cu.launches] == [0x5000] * 3 + [0x6000, 0x5000]


def test_the_fast_path_reuses_params_only_on_the_stream_of_their_buffer(
    cu: FakeDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = [0xA000]  # torch's current stream
    torch = SimpleNamespace(
        _C=SimpleNamespace(_cuda_getCurrentRawStream=lambda index: current[0]),
        cuda=SimpleNamespace(current_stream=lambda device: SimpleNamespace(cuda_stream=current[0])),
    )
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(launch_mod, "_raw_stream_query", [])
    seen: list[int] = []
    cu.kernels["flags"] = flags_kernel(cu, seen)
    k = load(ptx="ptx", abi=FLAGS)
    x = fake_torch((4, 8), dtype="float16", ptr=cu.cuMemAlloc(4 * 8 * 2)[1])
    x.is_cuda, x.get_device = True, lambda: 0

    def launch(stream: int) -> list[str]:
        current[0] = stream
        cu.calls.clear()
        k(x)
        assert cu.launches[-1].hStream == stream
        return cu.calls

    assert "cuMemAlloc" in launch(0xA000)
    assert launch(0xA000) == ["cuLaunchKernelEx"] and seen[1] == seen[0], "the fast path"
    assert "cuMemAlloc" in launch(0xB000) and seen[2] != seen[0], "the checked path, with a buffer of its own"
    assert launch(0xB000) == ["cuLaunchKernelEx"] and seen[3] == seen[2]
    calls = launch(0xA000)
    assert calls != ["cuLaunchKernelEx"] and "cuMemAlloc" not in calls and seen[4] == seen[0]


def test_a_capture_takes_the_buffer_of_its_stream_and_allocates_none(cu: FakeDriver) -> None:
    seen: list[int] = []
    cu.kernels["flags"] = flags_kernel(cu, seen)
    k = load(ptx="ptx", abi=FLAGS)
    x = device_array(cu, 4)
    cu.calls.clear()
    cu.capturing.add(0x5000)
    with pytest.raises(TkError, match="needs 256 bytes of scratch memory on a stream that is capturing a CUDA graph"):
        k(x, stream=0x5000)
    assert "cuMemAlloc" not in cu.calls and "cuLaunchKernelEx" not in cu.calls
    cu.capturing.clear()
    k(x, stream=0x5000)  # the warm-up launch
    cu.capturing.add(0x5000)
    k(x, stream=0x5000)
    assert seen[0] == seen[1] and cu.calls.count("cuMemAlloc") == 1


def test_a_plan_sizes_the_scratch_memory_and_leaves_its_address_to_the_launch() -> None:
    abi = KernelABI(**{**FLAGS.__dict__, "params": (ScratchParam("s", ("mul", "num_sms", 131072)),)})
    (slot,) = plan_launch(abi, (FakeCuda((4, 8)),), {}, num_sms=132).params
    assert (slot.name, slot.kind, slot.nbytes, slot.value, slot.scratch_bytes) == ("s", "scratch", 8, None, 132 * 131072)
    negative = KernelABI(**{**FLAGS.__dict__, "params": (ScratchParam("s", ("sub", "R", 8)),)})
    with pytest.raises(TkError, match=r"scratch s = \('sub', 'R', 8\) is -4 bytes with R = 4, W = 8"):
        plan_launch(negative, (FakeCuda((4, 8)),), {}, num_sms=132)
