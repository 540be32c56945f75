"""Compiled kernels as PyTorch custom operators (`torch.library`), so they run under
`torch.compile` and inside CUDA graphs like any aten op.

    import tkc, tkc.torch_ops
    gemm = tkc.torch_ops.custom_op(tkc.compile("examples/gemm.tk", kernel="gemm"))
    c = gemm(a, b)                        # allocates C, launches on the current stream, returns C
    torch.compile(lambda a, b: gemm(a, b) + 1, fullgraph=True)(a, b)

The operator `tkc::NAME` (NAME: the kernel's name and its cache key, so two parameter sets of
one kernel are two operators) takes the arguments the kernel reads, in declaration order, and
returns the ones it only writes, allocated by `outputs(kernel, *inputs)` with the dims the inputs
bind. An argument the kernel both reads (loads, or adds to with `store_add`) and writes is an input the operator mutates
(`Tensor(a!)` in its schema). Its fake implementation allocates the same outputs on the fake
device, which is all `torch.compile` needs to trace through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tkc.dtypes import BY_NAME
from tkc.dialects.tile import KernelOp, read_tensors

if TYPE_CHECKING:
    from collections.abc import Callable

    from xdsl.ir import SSAValue

    from tkc.abi import ArgSpec
    from tkc.api import CompiledKernel

_LIBRARIES: dict[str, Any] = {}
"""The torch.library fragments defined so far, by operator name (torch keeps a definition for
the life of the process, so defining one twice is an error: reuse it)."""


class OperatorError(ValueError):
    """The kernel cannot be an operator as asked (an output whose size no input gives)."""


@dataclass(frozen=True)
class Signature:
    """How the kernel's arguments map onto the operator's."""

    inputs: tuple[ArgSpec, ...]
    """Arguments the kernel reads (and maybe writes), in declaration order."""
    mutated: tuple[str, ...]
    """Inputs the kernel also writes."""
    outputs: tuple[ArgSpec, ...]
    """Arguments the kernel only writes: the operator allocates and returns them."""


def signature(kernel: CompiledKernel) -> Signature:
    abi = kernel.abi
    names = {arg.name for arg in abi.args}
    tile_kernel = next(op for op in kernel.module.body.block.ops if isinstance(op, KernelOp))
    arg_names: dict[SSAValue, str] = dict(zip(tile_kernel.body.block.args, tile_kernel.arg_names))
    read = {arg_names[tensor] for tensor in read_tensors(tile_kernel)}
    written = set(abi.written) & names
    inputs = tuple(arg for arg in abi.args if arg.name in read or arg.name not in written)
    outputs = tuple(arg for arg in abi.args if arg.name in written and arg.name not in read)
    bound = {d for arg in inputs for d in arg.dims if isinstance(d, str)}
    for arg in outputs:
        unbound = [d for d in arg.dims if isinstance(d, str) and d not in bound]
        if unbound:
            raise OperatorError(f"the output {arg.name} has the dim {unbound[0]}, which no input of "
                                f"{abi.entry} has: the operator could not size it")
    return Signature(inputs, tuple(a.name for a in inputs if a.name in written), outputs)


def _dims(sig: Signature, inputs: tuple[Any, ...]) -> dict[str, Any]:
    """Each symbolic dim's size, from the inputs' shapes (SymInts under torch.compile)."""
    sizes: dict[str, Any] = {}
    for spec, tensor in zip(sig.inputs, inputs):
        if tensor.dim() != len(spec.dims):
            raise OperatorError(f"{spec.name} has {len(spec.dims)} dims, got a tensor of shape {tuple(tensor.shape)}")
        for dim, size in zip(spec.dims, tensor.shape):
            if isinstance(dim, str):
                sizes.setdefault(dim, size)
    return sizes


def _allocate(sig: Signature, inputs: tuple[Any, ...]) -> list[Any]:
    import torch

    sizes = _dims(sig, inputs)
    first = inputs[0]
    return [
        first.new_empty([d if isinstance(d, int) else sizes[d] for d in spec.dims], dtype=getattr(torch, BY_NAME[spec.dtype].torch))
        for spec in sig.outputs
    ]


def outputs(kernel: CompiledKernel, *inputs: Any) -> list[Any]:
    """Uninitialised tensors for the arguments `kernel` only writes, sized by `inputs` (the
    arguments it reads, in declaration order) and on their device."""
    sig = signature(kernel)
    if len(inputs) != len(sig.inputs):
        raise OperatorError(f"{kernel.abi.entry} reads {len(sig.inputs)} arguments "
                            f"({', '.join(a.name for a in sig.inputs)}), got {len(inputs)}")
    return _allocate(sig, inputs)


def custom_op(kernel: CompiledKernel, name: str | None = None) -> Callable[..., Any]:
    """Register `kernel` as the operator `tkc::NAME` and return it (`torch.ops.tkc.NAME`)."""
    try:
        import torch
    except ModuleNotFoundError:
        raise OperatorError("torch operators need PyTorch (pip install 'tkc[torch]')") from None

    sig = signature(kernel)
    name = name or f"{kernel.abi.entry}_{kernel.cache_key[:12]}"
    if name not in _LIBRARIES:
        params = ", ".join(f"Tensor{'(a!)' if a.name in sig.mutated else ''} {a.name}" for a in sig.inputs)
        results = {0: "()", 1: "Tensor"}.get(len(sig.outputs), f"({', '.join('Tensor' for _ in sig.outputs)})")
        library = torch.library.Library("tkc", "FRAGMENT")
        library.define(f"{name}({params}) -> {results}")
        order = [arg.name for arg in kernel.abi.args]

        def launch(*inputs: Any) -> Any:
            made = _allocate(sig, inputs)
            by_name = dict(zip((a.name for a in sig.inputs), inputs)) | dict(zip((a.name for a in sig.outputs), made))
            kernel(*(by_name[arg] for arg in order))
            return _result(made)

        def fake(*inputs: Any) -> Any:
            return _result(_allocate(sig, inputs))

        library.impl(name, launch, "CUDA")
        torch.library.register_fake(f"tkc::{name}", fake, lib=library)
        _LIBRARIES[name] = library
    return getattr(torch.ops.tkc, name)


def _result(made: list[Any]) -> Any:
    return None if not made else made[0] if len(made) == 1 else tuple(made)
