"""Adapting the user's arrays: what a kernel argument is, read without touching the GPU.

Accepted, in this order of preference:
  torch tensors        read directly (torch's `__cuda_array_interface__` refuses bf16);
  `__cuda_array_interface__` (CuPy, Numba, ...): f16 and f32 (the protocol has no bf16/fp8);
  numpy arrays         host memory: the runtime copies them to the device and back;
  `__dlpack__`         (JAX, ...) read from the DLPack capsule with ctypes.
torch is never imported here: a tensor is recognised by its type's module.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tkc.abi import row_major
from tkc.dtypes import DTYPES, DType

_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13


@dataclass
class ArrayInfo:
    """One argument as the runtime sees it: layout in bytes, where it lives, what it is."""

    dtype: str | None
    """tkc dtype name (bf16, f16, f32, fp8e4m3); None when the array's type has none."""
    dtype_desc: str
    """The array's own name for its dtype, for messages."""
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    """In bytes."""
    ptr: int
    location: str
    """`cuda` (device memory), `host` (numpy: copied in and out), or `cpu` (other host memory)."""
    device_index: int | None
    """The CUDA device ordinal, None when only the driver can tell (`__cuda_array_interface__`)."""
    source: str
    """torch, cuda_array_interface, numpy or dlpack."""
    obj: Any
    """The user's object (numpy: copied back into; DLPack: the capsule, kept alive)."""
    stream: int | None = None
    """The stream the producer last used the array on (`__cuda_array_interface__` v3): the
    launch must wait for it."""
    read_only: bool = False
    """The producer marks it read-only (a numpy array not writeable, `__cuda_array_interface__`'s
    readonly flag): the kernel may not write it."""


def _tkc_dtype(matches: Callable[[DType], bool]) -> str | None:
    """The tkc name of the dtype that `matches` the array's own description of its dtype."""
    return next((d.name for d in DTYPES if matches(d)), None)


def adapt(obj: Any) -> ArrayInfo | None:
    """The ArrayInfo of a user array, or None when `obj` is not an array tkc can read."""
    if _is_torch_tensor(obj):
        return _from_torch(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj)
    if isinstance(obj, np.ndarray):
        return _from_numpy(obj)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj)
    return None


def _is_torch_tensor(obj: Any) -> bool:
    return any(c.__module__ == "torch" and c.__name__ == "Tensor" for c in type(obj).__mro__)


def _from_torch(t: Any) -> ArrayInfo:
    layout = str(getattr(t, "layout", "torch.strided"))
    if layout != "torch.strided":  # sparse and other layouts have no strides (t.stride() raises)
        raise ValueError(
            f"a torch tensor of layout {layout.removeprefix('torch.')} has no dense rows a kernel can address; "
            "pass a dense tensor (.to_dense())")
    es = t.element_size()
    dev = t.device
    return ArrayInfo(
        dtype=_tkc_dtype(lambda d: str(t.dtype) == f"torch.{d.torch}"),
        dtype_desc=str(t.dtype).removeprefix("torch."),
        shape=tuple(t.shape),
        strides=tuple(s * es for s in t.stride()),
        ptr=t.data_ptr(),
        location="cuda" if dev.type == "cuda" else "cpu",
        device_index=dev.index if dev.type == "cuda" else None,
        source="torch",
        obj=t,
    )


def _from_cai(obj: Any) -> ArrayInfo:
    cai = obj.__cuda_array_interface__
    typestr = cai["typestr"]
    shape = tuple(int(d) for d in cai["shape"])
    es = int(typestr[2:]) if typestr[2:].isdigit() else 0
    strides = cai.get("strides")
    if cai.get("mask") is not None:
        raise ValueError("masked arrays (__cuda_array_interface__ 'mask') are not supported")
    return ArrayInfo(
        dtype=_tkc_dtype(lambda d: d.array_interface == typestr),
        dtype_desc=typestr,
        shape=shape,
        strides=tuple(int(s) for s in strides) if strides is not None else row_major(shape, es),
        ptr=int(cai["data"][0]),
        location="cuda",
        device_index=None,
        source="cuda_array_interface",
        obj=obj,
        stream=cai.get("stream"),
        read_only=bool(cai["data"][1]),
    )


def _from_numpy(a: np.ndarray) -> ArrayInfo:
    native = a.dtype.isnative  # the bytes go to the device as they are: a swapped order has no tkc dtype
    return ArrayInfo(
        dtype=_tkc_dtype(lambda d: d.numpy == a.dtype.name) if native else None,
        dtype_desc=a.dtype.name if native else f"{a.dtype.name} in non-native byte order ({a.dtype.str})",
        shape=tuple(a.shape),
        strides=tuple(a.strides),
        ptr=a.ctypes.data,
        location="host",
        device_index=None,
        source="numpy",
        obj=a,
        read_only=not a.flags.writeable,
    )


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    # The first member of DLManagedTensor (the unversioned capsule "dltensor").
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


def _from_dlpack(obj: Any) -> ArrayInfo:
    # The capsule is read, not consumed: its destructor releases the producer's tensor, and it
    # stays referenced from ArrayInfo.obj until the launch is over.
    capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    t = ctypes.cast(get(capsule, b"dltensor"), ctypes.POINTER(_DLTensor)).contents
    dt = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
    es = t.dtype.bits * t.dtype.lanes // 8
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = (
        tuple(t.strides[i] * es for i in range(t.ndim)) if t.strides else row_major(shape, es)
    )
    on_gpu = t.device.device_type in (_DL_CUDA, _DL_CUDA_MANAGED)
    return ArrayInfo(
        dtype=_tkc_dtype(lambda d: d.dlpack == dt),
        dtype_desc=f"dlpack(code={dt[0]}, bits={dt[1]}, lanes={dt[2]})",
        shape=shape,
        strides=strides,
        ptr=(t.data or 0) + t.byte_offset,
        location="cuda" if on_gpu else "cpu",
        device_index=t.device.device_id if on_gpu else None,
        source="dlpack",
        obj=capsule,
    )
