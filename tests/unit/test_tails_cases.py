"""tests/gpu/test_tails_gpu.py without a GPU: each of its launches compiles, and the runtime takes its
arguments (plan_launch on stand-ins for CUDA torch tensors), so a shape the runtime would refuse is
found here rather than on the GPU; the launches it must refuse are refused with the message it checks."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from tkc.diagnostics import TkError
from tkc.runtime import plan_launch


def _gpu_cases() -> ModuleType:
    path = Path(__file__).parents[1] / "gpu" / "test_tails_gpu.py"
    spec = importlib.util.spec_from_file_location("tails_gpu_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _gpu_cases()
TORCH_DTYPES = {"bf16": ("bfloat16", 2), "f32": ("float32", 4)}


class TorchDtype:
    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


class Tensor:
    """What the runtime reads of a contiguous CUDA torch tensor (it knows one by its type's module)."""

    __module__ = "torch"

    def __init__(self, shape: tuple[int, ...], dtype: str, ptr: int):
        name, self.itemsize = TORCH_DTYPES[dtype]
        self.shape, self.dtype, self.ptr = shape, TorchDtype(name), ptr
        self.device = SimpleNamespace(type="cuda", index=0)

    def element_size(self) -> int:
        return self.itemsize

    def stride(self) -> tuple[int, ...]:
        return tuple(math.prod(self.shape[i + 1:]) for i in range(len(self.shape)))

    def data_ptr(self) -> int:
        return self.ptr


def stand_ins(args: list[tuple[str, tuple[int, ...], str]]) -> tuple[Tensor, ...]:
    """One per argument, each in memory of its own (1 << 36 bytes apart, 16-byte aligned)."""
    return tuple(Tensor(shape, dtype, (i + 1) << 36) for i, (_, shape, dtype) in enumerate(args))


CONFIGS = sorted({(example, kernel, tuple(sorted(params.items()))) for _, (example, kernel, params), _ in CASES.every_case()},
                 key=str)
"""(example, kernel, params as sorted pairs): each compile the GPU cases make."""


@pytest.mark.parametrize("example, kernel, params", CONFIGS, ids=lambda v: CASES._ids(dict(v) if isinstance(v, tuple) else v))
def test_every_tails_case_compiles_and_fits_the_runtime(example: str, kernel: str | None,
                                                       params: tuple[tuple[str, object], ...]) -> None:
    compiled = CASES._compile(example, kernel, **dict(params))
    assert f".entry {compiled.abi.entry}(" in compiled.ptx
    abi = compiled.abi
    assert abi.divisibility == (), f"{example} counts tiles rounding down: {abi.divisibility}"
    for case_id, config, args in CASES.every_case():
        if config != (example, kernel, dict(params)):
            continue
        assert [a.name for a in abi.args] == [name for name, _, _ in args], case_id
        plan_launch(abi, stand_ins(args), {}, num_sms=132)


@pytest.mark.parametrize("kernel, shape, argument, dim", CASES.REFUSED, ids=CASES._ids)
def test_refused_tails_cases_are_refused(kernel: str, shape: tuple[int, int, int], argument: str, dim: str) -> None:
    abi = CASES._compile(kernel, kernel).abi
    with pytest.raises(TkError) as refused:
        plan_launch(abi, stand_ins(CASES.gemm_args(kernel, *shape)), {}, num_sms=132)
    assert refused.value.message == CASES.refusal(argument, dim, dict(zip("MNK", shape))[dim])
