"""Checking arguments against a KernelABI, planning a launch, and launching.

Everything up to `plan_launch` is pure Python over `ArrayInfo`s, so each check runs (and is
tested) without a GPU: a call that does not fit the ABI raises `TkError` naming the argument
before any driver call. `Kernel.__call__` then does the driver work: device checks the driver
alone can answer, numpy staging, tensor maps (cached), the `void**` params and `cuLaunchKernelEx`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tkc.abi import (
    DIM_LIMIT,
    ArgSpec,
    DimParam,
    KernelABI,
    PointerParam,
    ScratchParam,
    TensorMapParam,
    evaluate,
    divisibility_refusal,
    names_in,
    requirement_refusal,
    row_major,
)
from tkc.diagnostics import TkError
from tkc.dtypes import BY_NAME
from tkc.runtime.arrays import ArrayInfo, adapt
from tkc.runtime.device import CudaError, Device, check, device, driver, get_function, load_module
from tkc.runtime.tensormap import TensorMapSpec, encode, spec_for

ALIGN = 16  # TMA: global address and every byte stride a multiple of 16
GRID_LIMITS = (2**31 - 1, 65535, 65535)
TMAP_CACHE_SIZE = 1024


@dataclass(frozen=True)
class Binding:
    """The arguments by ABI name (in ABI order) and the value of every symbolic dim."""

    arrays: dict[str, ArrayInfo]
    dims: dict[str, int]


@dataclass(frozen=True)
class ParamSlot:
    """One kernel parameter: `value` is a TensorMapSpec, a device address or a dim value.

    A pointer (or tensor map address) is None for a numpy argument not yet on the device, a
    scratch slot's until the launch gives it its stream's buffer of `scratch_bytes` zero bytes.
    """

    name: str
    kind: str
    nbytes: int
    value: TensorMapSpec | int | None
    scratch_bytes: int = 0


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem_bytes: int
    dims: dict[str, int]
    params: tuple[ParamSlot, ...]


def arrange(abi: KernelABI, args: tuple[Any, ...], named: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by the ABI's names, positional ones first; TkError where they do not
    name each argument exactly once."""
    names = [a.name for a in abi.args]
    signature = f"{abi.entry}({', '.join(names)})"
    if len(args) > len(names):
        raise TkError(f"{signature} takes {len(names)} arguments, {len(args)} were given")
    given = dict(zip(names, args))
    for name, value in named.items():
        if name not in names:
            raise TkError(f"unknown argument {name!r}: the kernel is {signature}")
        if name in given:
            raise TkError(f"argument {name} is given twice (by position and by name)")
        given[name] = value
    missing = [n for n in names if n not in given]
    if missing:
        raise TkError(f"missing argument {', '.join(missing)}: the kernel is {signature}")
    return {name: given[name] for name in names}


def bind(abi: KernelABI, args: tuple[Any, ...], named: dict[str, Any]) -> Binding:
    """Match the call's arguments to the ABI and check them; TkError on the first misfit."""
    given = arrange(abi, args, named)

    arrays: dict[str, ArrayInfo] = {}
    dims: dict[str, int] = {}
    where: dict[str, str] = {}  # dim name -> which argument and axis bound it
    for spec in abi.args:
        obj = given[spec.name]
        try:
            info = adapt(obj)
        except ValueError as e:
            raise TkError(f"argument {spec.name}: {e}") from e
        if info is None:
            raise TkError(
                f"argument {spec.name}: a {type(obj).__name__} is not an array; pass a torch "
                "tensor, a CuPy array, a numpy array, or anything with __cuda_array_interface__ "
                "or __dlpack__"
            )
        _check_device(spec.name, info)
        if info.read_only and spec.name in abi.written:
            raise TkError(f"argument {spec.name}: the kernel writes it, but the {info.source} array is read-only")
        if info.dtype != spec.dtype:
            hint = ""
            if info.source == "cuda_array_interface" and BY_NAME[spec.dtype].array_interface is None:
                hint = " (__cuda_array_interface__ cannot express it: pass a torch or DLPack array)"
            raise TkError(
                f"argument {spec.name}: expected dtype {spec.dtype}, got {info.dtype_desc}{hint}"
            )
        if len(info.shape) != len(spec.dims):
            raise TkError(
                f"argument {spec.name}: expected rank {len(spec.dims)} "
                f"[{', '.join(map(str, spec.dims))}], got shape {list(info.shape)}"
            )
        for axis, (want, got) in enumerate(zip(spec.dims, info.shape)):
            if got < 1:
                raise TkError(f"argument {spec.name}: dim {axis} is empty (shape {list(info.shape)})")
            if isinstance(want, int):
                if got != want:
                    raise TkError(f"argument {spec.name}: dim {axis} must be {want}, got {got}")
            elif want in dims:
                if dims[want] != got:
                    raise TkError(
                        f"argument {spec.name}: dim {want} is {got} here (dim {axis}) but "
                        f"{dims[want]} in {where[want]}"
                    )
            else:
                dims[want] = got
                where[want] = f"{spec.name} (dim {axis})"
        arrays[spec.name] = info

    if (refusal := requirement_refusal(abi, dims, where) or divisibility_refusal(abi, dims, where)) is not None:
        raise TkError(refusal)
    for dim, value in dims.items():
        if value >= DIM_LIMIT:
            raise TkError(f"{dim} = {value} (from {where[dim]}) does not fit in 31 bits "
                          "(a kernel's index arithmetic is 32-bit signed)")
    mapped = {p.arg for p in abi.params if isinstance(p, TensorMapParam)}
    addressed = {p.arg for p in abi.params if isinstance(p, PointerParam)}
    for spec in abi.args:
        info = arrays[spec.name]
        itemsize = BY_NAME[spec.dtype].bytes
        if spec.name in addressed and (count := math.prod(info.shape)) >= 1 << 31:
            raise TkError(f"argument {spec.name} has {count} elements: the kernel addresses it element by element "
                          "(vectors, scalars or table entries), with 32-bit signed offsets, so it takes fewer than 2^31")
        if info.location == "cuda":  # numpy arguments are staged into fresh, packed buffers
            _check_aligned(spec.name, info)
            if spec.name in addressed:
                _check_contiguous(spec.name, info, itemsize)
        if spec.name in mapped:  # a packed copy has the same rows: staging does not help
            _check_tma_strides(spec, info.shape, device_strides(info, itemsize), itemsize)
    _check_no_overlap(abi, arrays)
    return Binding(arrays, dims)


def device_strides(info: ArrayInfo, itemsize: int) -> tuple[int, ...]:
    """The byte strides the kernel sees: a numpy argument's packed copy's, else the array's own."""
    return info.strides if info.location == "cuda" else row_major(info.shape, itemsize)


def _check_no_overlap(abi: KernelABI, arrays: dict[str, ArrayInfo]) -> None:
    """The compiler orders loads after stores per argument: an argument the kernel writes must
    not share memory with another one (the same tensor passed twice, or overlapping views), nor
    address one byte as two of its own elements. A view's bytes are taken as one span, from the
    lowest byte it addresses to the highest (the gaps of a strided view count: conservative).
    Host (numpy) arrays alike: each is staged in a buffer of its own and copied back, so
    overlapping ones would come back in whichever order the copies ran."""
    spans = {
        spec.name: (info.location, *_span(info, BY_NAME[spec.dtype].bytes))
        for spec in abi.args
        if (info := arrays[spec.name]).location in ("cuda", "host")
    }
    for written in abi.written:
        if written not in spans:
            continue
        spec = next(a for a in abi.args if a.name == written)
        _check_distinct_elements(spec, arrays[written], BY_NAME[spec.dtype].bytes)
        where, start, end = spans[written]
        for other, (other_where, lo, hi) in spans.items():
            if other != written and other_where == where and lo < end and start < hi:
                raise TkError(
                    f"arguments {written} and {other} overlap in memory, and the kernel writes {written}: "
                    "pass distinct tensors (tkc orders a block's loads after its stores only within one argument)"
                )


def _span(info: ArrayInfo, itemsize: int) -> tuple[int, int]:
    """The bytes [lo, hi) from the lowest to the highest byte the view addresses."""
    reach = [stride * (extent - 1) for stride, extent in zip(info.strides, info.shape)]
    return info.ptr + sum(r for r in reach if r < 0), info.ptr + sum(r for r in reach if r > 0) + itemsize


def _check_distinct_elements(spec: ArgSpec, info: ArrayInfo, itemsize: int) -> None:
    """A written view must give each element bytes of its own: else two stores race for one
    byte. Sufficient (and what every slice, transpose and padding gives): stepping the dims from
    the smallest stride up, each stride clears everything the smaller ones span."""
    spanned = itemsize
    steps = sorted((abs(s), d, a) for a, (s, d) in enumerate(zip(info.strides, info.shape)) if d > 1)
    for stride, extent, axis in steps:
        if stride == 0:
            raise TkError(
                f"argument {spec.name}: {_dim_label(spec, axis)} has stride 0 over {extent} elements (a broadcast "
                f"view), and the kernel writes {spec.name}: its elements would share memory; pass a tensor "
                "with memory of its own (.contiguous())"
            )
        if stride < spanned:
            raise TkError(
                f"argument {spec.name}: {_dim_label(spec, axis)} has stride {stride} bytes, less than the "
                f"{spanned} bytes its smaller strides span, and the kernel writes {spec.name}: its elements "
                "may share memory; pass a tensor with memory of its own (.contiguous())"
            )
        spanned = stride * (extent - 1) + spanned


def _dim_label(spec: ArgSpec, axis: int) -> str:
    dim = spec.dims[axis]
    return f"dim {dim} (dim {axis})" if isinstance(dim, str) else f"dim {axis}"


def _check_device(name: str, info: ArrayInfo) -> None:
    if info.location == "cpu":
        where = f"on torch device {info.obj.device.type!r}" if info.source == "torch" else f"in host memory ({info.source})"
        raise TkError(
            f"argument {name} is {where}; move it to the GPU "
            "or pass a numpy array, which tkc copies to the device and back"
        )
    if info.location == "cuda" and info.device_index not in (None, 0):
        raise TkError(
            f"argument {name} is on cuda:{info.device_index}; tkc launches on cuda:0"
        )


def _check_aligned(name: str, info: ArrayInfo) -> None:
    if info.ptr % ALIGN:
        raise TkError(
            f"argument {name}: address {info.ptr:#x} is not {ALIGN}-byte aligned "
            "(TMA, and the paired stores of vectors written through the address, need a 16-byte aligned "
            "base; a sliced view may be misaligned)"
        )


def _is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    # A dim of extent 1 may carry any stride: it is never stepped over.
    return all(s == p for s, p, d in zip(strides, row_major(shape, itemsize), shape) if d != 1)


def _check_contiguous(name: str, info: ArrayInfo, itemsize: int) -> None:
    """An argument the kernel reaches through its address (a vector's st.global, a scalar's
    ld.global) is indexed as a contiguous row-major array."""
    if not _is_contiguous(info.shape, info.strides, itemsize):
        raise TkError(
            f"argument {name} is not contiguous row-major: strides {list(info.strides)} bytes, "
            f"expected {list(row_major(info.shape, itemsize))} for shape {list(info.shape)}; the kernel "
            f"reads or writes it element by element through its address, which only a contiguous "
            f"tensor gives (use .contiguous())"
        )


def _check_tma_strides(spec: ArgSpec, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> None:
    """A tensor map addresses element (i0, ..., in) at base + sum(i_k * stride_k): the innermost
    stride is the element size, every other one a byte stride that must be a multiple of 16
    (and not negative). Any view that keeps to this is mapped as it is (a slice, a transpose of
    outer dims, padded rows). In a contiguous tensor each such stride is a multiple of the
    innermost dim's bytes, so those decide, and the message says so. The rule is TMA's: an
    argument the kernel reaches only through its address (a vector's st.global) takes rows of any
    length."""
    if shape[-1] > 1 and strides[-1] != itemsize:
        raise TkError(
            f"argument {spec.name}: its innermost dim must be dense: its stride is {strides[-1]} bytes, "
            f"not the element size {itemsize}; a tensor map reads rows of consecutive elements "
            "(use .contiguous())"
        )
    bad = [a for a in range(len(shape) - 1) if shape[a] > 1 and (strides[a] < 0 or strides[a] % ALIGN)]
    if not bad:
        return
    if _is_contiguous(shape, strides, itemsize):
        axis = len(shape) - 1
        dim = spec.dims[axis]
        label = dim if isinstance(dim, str) else f"dim {axis}"
        raise TkError(
            f"argument {spec.name}: dim {dim if isinstance(dim, str) else axis} = {shape[-1]} (its innermost) "
            f"times {itemsize} bytes is not a multiple of {ALIGN}: TMA needs {ALIGN}-byte aligned rows, "
            f"so {label} must be a multiple of {ALIGN // math.gcd(ALIGN, itemsize)}"
        )
    raise TkError(
        f"argument {spec.name}: {_dim_label(spec, bad[0])} has stride {strides[bad[0]]} bytes, not a "
        f"non-negative multiple of {ALIGN}: a tensor map steps over every dim but the innermost by "
        f"such a byte stride (use .contiguous())"
    )


def grid_of(abi: KernelABI, dims: dict[str, int], num_sms: int, max_clusters: int | None = None) -> tuple[int, int, int]:
    """The grid, each extent checked to be in 1..the hardware limit. `max_clusters`: the clusters
    of the kernel's size the device runs at once (None: `num_sms`, a bound the grid's own
    `num_sms / cluster` is under)."""
    env = {**dims, "num_sms": num_sms, "max_clusters": num_sms if max_clusters is None else max_clusters}
    grid = []
    for axis, expr, limit in zip("xyz", abi.grid, GRID_LIMITS):
        try:
            extent = evaluate(expr, env)
        except KeyError as e:
            raise ValueError(f"grid {axis} = {expr!r} names an unbound dim {e}") from e
        if not 1 <= extent <= limit:
            bound = ", ".join(f"{k} = {v}" for k, v in dims.items())
            raise TkError(
                f"grid {axis} = {expr!r} is {extent} with {bound}; it must be in 1..{limit}"
            )
        grid.append(extent)
    return grid[0], grid[1], grid[2]


def param_slots(
    abi: KernelABI, binding: Binding, pointers: dict[str, int | None], num_sms: int
) -> tuple[ParamSlot, ...]:
    """The kernel parameters in `abi.params` order; `pointers` are the device addresses."""
    slots = []
    for p in abi.params:
        if isinstance(p, TensorMapParam):
            info = binding.arrays[p.arg]
            itemsize = BY_NAME[info.dtype or ""].bytes
            spec = spec_for(p, info.dtype or "", info.shape, pointers[p.arg], device_strides(info, itemsize))
            slots.append(ParamSlot(p.name, "tensormap", 128, spec))
        elif isinstance(p, PointerParam):
            slots.append(ParamSlot(p.name, "pointer", 8, pointers[p.arg]))
        elif isinstance(p, DimParam):
            if p.dim not in binding.dims:
                raise ValueError(f"param {p.name} reads dim {p.dim}, which no argument binds")
            slots.append(ParamSlot(p.name, "dim", 4, binding.dims[p.dim]))
        elif isinstance(p, ScratchParam):
            slots.append(ParamSlot(p.name, "scratch", 8, None, scratch_bytes(p, binding.dims, num_sms)))
        else:
            raise ValueError(f"unknown kernel parameter {p!r}")
    return tuple(slots)


def scratch_bytes(p: ScratchParam, dims: dict[str, int], num_sms: int) -> int:
    """The bytes of scratch memory `p` asks for with these dims, evaluated like the grid."""
    try:
        nbytes = evaluate(p.nbytes, {**dims, "num_sms": num_sms})
    except KeyError as e:
        raise ValueError(f"param {p.name} = {p.nbytes!r} names an unbound dim {e}") from e
    if nbytes < 0:
        bound = ", ".join(f"{k} = {v}" for k, v in dims.items())
        raise TkError(f"scratch {p.name} = {p.nbytes!r} is {nbytes} bytes with {bound}")
    return nbytes


def plan_launch(
    abi: KernelABI, args: tuple[Any, ...], named: dict[str, Any], num_sms: int, max_clusters: int | None = None
) -> LaunchConfig:
    """The launch the call would make, without a GPU: checks, dims, grid, parameter layout."""
    binding = bind(abi, args, named)
    return _config(abi, binding, num_sms, _device_pointers(binding), max_clusters)


def _device_pointers(binding: Binding) -> dict[str, int | None]:
    return {n: (a.ptr if a.location == "cuda" else None) for n, a in binding.arrays.items()}


def _config(
    abi: KernelABI, binding: Binding, num_sms: int, pointers: dict[str, int | None], max_clusters: int | None = None
) -> LaunchConfig:
    return LaunchConfig(
        grid=grid_of(abi, binding.dims, num_sms, max_clusters),
        block=(abi.block, 1, 1),
        smem_bytes=abi.smem_bytes,
        dims=dict(binding.dims),
        params=param_slots(abi, binding, pointers, num_sms),
    )


class PackedParams:
    """The `void**` kernelParams: one host buffer per parameter and an array of their addresses.

    The driver copies the values at launch, so the buffers need to live only until
    cuLaunchKernelEx returns.
    """

    def __init__(self, values: list[bytes]):
        self.buffers = [np.frombuffer(v, dtype=np.uint8).copy() for v in values]
        self.pointers = np.array([b.ctypes.data for b in self.buffers], dtype=np.uint64)
        self.address = int(self.pointers.ctypes.data)  # read once: numpy's ctypes view costs a microsecond


def slot_bytes(slot: ParamSlot, tensor_map: bytes | None = None) -> bytes:
    """The little-endian bytes a parameter receives (a tensor map's 128 bytes are given)."""
    if slot.kind == "tensormap":
        assert tensor_map is not None and len(tensor_map) == 128
        return tensor_map
    assert isinstance(slot.value, int), f"param {slot.name} has no value"
    return slot.value.to_bytes(slot.nbytes, "little")


def stream_handle(stream: Any, binding: Binding) -> int:
    """The CUstream to launch on: the caller's, else torch's current one, else the legacy 0."""
    if stream is None:
        for info in binding.arrays.values():
            if info.source == "torch" and info.location == "cuda":
                import torch  # the argument is a torch tensor, so torch is there

                return int(torch.cuda.current_stream(info.obj.device).cuda_stream)
        return 0
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol: (version, handle)
        return int(stream.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)  # a cuda.bindings CUstream


class Kernel:
    """A loaded kernel: call it with the arrays of its ABI, by position or by name."""

    def __init__(self, abi: KernelABI, device: Device, module: Any, function: Any):
        self.abi = abi
        self.device = device
        self.module = module
        self.function = function
        self._tensor_maps: OrderedDict[TensorMapSpec, bytes] = OrderedDict()
        self._ready: dict[tuple[Any, ...], tuple[Any, PackedParams, Any]] = {}
        """Launch configs and packed params of earlier checked calls, by torch_signature, each with
        the stream whose scratch buffer the params address (None: the kernel has no scratch)."""
        self._scratch: dict[int, tuple[int, int]] = {}
        """Each stream's scratch buffer (device address, bytes), by stream handle."""
        self._has_scratch = any(isinstance(p, ScratchParam) for p in abi.params)
        self._driver = driver()
        self._success = self._driver.CUresult.CUDA_SUCCESS
        self.max_clusters = (self._resident_clusters()
                             if any("max_clusters" in names_in(e) for e in abi.grid) else None)
        """How many of the kernel's clusters the device runs at once, where its grid asks."""

    def _resident_clusters(self) -> int | None:
        """The occupancy query for the kernel's clusters (its PTX fixes their size); None where the
        driver cannot answer, and the grid keeps `num_sms / cluster`."""
        cu = self._driver
        config = cu.CUlaunchConfig()
        # a grid of whole 4-CTA clusters, the only ones whose grid asks
        config.gridDimX, config.gridDimY, config.gridDimZ = max(4, self.device.num_sms // 4 * 4), 1, 1
        config.blockDimX, config.blockDimY, config.blockDimZ = self.abi.block, 1, 1
        config.sharedMemBytes = self.abi.smem_bytes
        config.numAttrs = 0
        result, clusters = cu.cuOccupancyMaxActiveClusters(self.function, config)
        return int(clusters) if result == self._success and clusters > 0 else None

    def launch_config(self, *arrays: Any, **named: Any) -> LaunchConfig:
        """What `self(*arrays)` would launch (grid, block, smem, params), launching nothing."""
        return plan_launch(self.abi, arrays, named, self.device.num_sms, self.max_clusters)

    def __call__(self, *arrays: Any, stream: Any = None, **named: Any) -> None:
        """Launch on the caller's stream; numpy arguments make the call synchronous."""
        cu = self._driver
        key = torch_signature(arrays) if not named and stream is None else None
        if key is not None and self.launch_ready(key, arrays[0]):
            return
        binding = bind(self.abi, arrays, named)
        self.device.activate()
        for name, info in binding.arrays.items():
            if info.location == "cuda" and info.device_index is None:
                _check_pointer_device(name, info.ptr)
        grid_of(self.abi, binding.dims, self.device.num_sms, self.max_clusters)  # checked before allocating
        handle = stream_handle(stream, binding)
        hstream = _stream(handle)
        for producer in {a.stream for a in binding.arrays.values() if a.stream is not None} - {handle}:
            _wait_for(producer, hstream)
        pointers = _device_pointers(binding)
        staged: dict[str, tuple[np.ndarray, Any]] = {}
        try:
            for name, info in binding.arrays.items():
                if info.location == "host":
                    try:
                        host = np.ascontiguousarray(info.obj)
                    except MemoryError:  # a broadcast view packs into its full size
                        raise TkError(f"argument {name}: its packed copy for the GPU needs "
                                      f"{info.obj.size * info.obj.itemsize} bytes of host memory, more than "
                                      "there is; pass a device array") from None
                    dptr = check("cuMemAlloc", cu.cuMemAlloc(max(host.nbytes, 1)))
                    staged[name] = (host, dptr)
                    pointers[name] = int(dptr)
                    check(
                        "cuMemcpyHtoDAsync",
                        # An address, not the array: ml_dtypes arrays refuse the buffer protocol.
                        cu.cuMemcpyHtoDAsync(dptr, host.ctypes.data, host.nbytes, hstream),
                    )
            config = _config(self.abi, binding, self.device.num_sms, pointers, self.max_clusters)
            cfg, packed = self._launch(config, handle, hstream)
            if key is not None:
                if len(self._ready) >= READY_CACHE_SIZE:
                    self._ready.pop(next(iter(self._ready)))
                self._ready[key] = (cfg, packed, hstream if self._has_scratch else None)
            if staged:
                self._copy_back(binding, staged, hstream)
        finally:
            for _, dptr in staged.values():
                cu.cuMemFree(dptr)  # not checked: a launch fault must not be masked by this

    def launch_ready(self, key: tuple[Any, ...], first: Any) -> bool:
        """Launch as the checked call whose torch_signature was `key` did, on torch's current
        stream of `first`'s device (only the stream can differ); False where no such call is kept,
        or where its params address the scratch buffer of another stream than this one."""
        ready = self._ready.get(key)
        if ready is None:
            return False
        config, packed, scratch_stream = ready
        stream = torch_current_stream(first)
        if scratch_stream is not None and stream is not scratch_stream:  # one CUstream per handle
            return False  # the checked call packs this stream's buffer
        if config.hStream is not stream:  # the setter converts: skip it while the stream stays
            config.hStream = stream
        result = self._driver.cuLaunchKernelEx(config, self.function, packed.address, 0)
        if result[0] != self._success:
            check("cuLaunchKernelEx", result)
        return True

    def _launch(self, config: LaunchConfig, handle: int, hstream: Any) -> tuple[Any, PackedParams]:
        cu = self._driver
        values = []
        for slot in config.params:
            if slot.kind == "scratch":
                slot = replace(slot, value=self._scratch_buffer(slot.scratch_bytes, handle, hstream))
            tmap = self._tensor_map(slot) if slot.kind == "tensormap" else None
            values.append(slot_bytes(slot, tmap))
        packed = PackedParams(values)
        cfg = cu.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = config.grid
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = config.block
        cfg.sharedMemBytes = config.smem_bytes
        cfg.hStream = hstream
        if self.abi.dependent_launch:
            # the kernel waits (griddepcontrol.wait) for the one before it before any global access
            attribute = cu.CUlaunchAttribute()
            attribute.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attribute.value.programmaticStreamSerializationAllowed = 1
            cfg.attrs = [attribute]
            cfg.numAttrs = 1
        else:
            cfg.numAttrs = 0
        check("cuLaunchKernelEx", cu.cuLaunchKernelEx(cfg, self.function, packed.address, 0))
        return cfg, packed

    def _scratch_buffer(self, nbytes: int, handle: int, hstream: Any) -> int:
        """The address of the stream's scratch buffer (abi.ScratchParam), allocated and zeroed in
        stream order, before this launch, the first time the stream needs `nbytes`. A smaller
        buffer it replaces is not freed: launches queued on the stream, params packed for
        `launch_ready` and CUDA graphs may still address it (and leave it zero), and freeing it
        would need a stream synchronize."""
        held = self._scratch.get(handle)
        if held is not None and held[1] >= nbytes:
            return held[0]
        cu = self._driver
        status = check("cuStreamIsCapturing", cu.cuStreamIsCapturing(hstream))
        if status != cu.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE:
            # cuMemAlloc is barred from a capture, and a captured memset would zero the buffer
            # only when the graph runs, not for the launches outside it that reuse the buffer.
            raise TkError(
                f"kernel {self.abi.entry} needs {nbytes} bytes of scratch memory on a stream that is capturing "
                "a CUDA graph, and tkc allocates a stream's scratch buffer outside captures: launch the kernel "
                "once on that stream, at these sizes, before capturing (with torch, warm up on a stream s and "
                "capture with torch.cuda.graph(g, stream=s))"
            )
        dptr = check("cuMemAlloc", cu.cuMemAlloc(max(nbytes, 1)))
        check("cuMemsetD8Async", cu.cuMemsetD8Async(dptr, 0, max(nbytes, 1), hstream))
        self._scratch[handle] = (int(dptr), nbytes)
        return int(dptr)

    def _tensor_map(self, slot: ParamSlot) -> bytes:
        spec = slot.value
        assert isinstance(spec, TensorMapSpec)
        # The spec holds everything the map depends on: address, dims, strides, box, swizzle.
        raw = self._tensor_maps.get(spec)
        if raw is None:
            raw = encode(spec)
            self._tensor_maps[spec] = raw
            if len(self._tensor_maps) > TMAP_CACHE_SIZE:
                self._tensor_maps.popitem(last=False)
        else:
            self._tensor_maps.move_to_end(spec)
        return raw

    def _copy_back(
        self, binding: Binding, staged: dict[str, tuple[np.ndarray, Any]], hstream: Any
    ) -> None:
        """Every writeable numpy argument gets the device's contents back (outputs unknown)."""
        cu = driver()
        back = {n: s for n, s in staged.items() if binding.arrays[n].obj.flags.writeable}
        for host, dptr in back.values():
            check(
                "cuMemcpyDtoHAsync",
                cu.cuMemcpyDtoHAsync(host.ctypes.data, dptr, host.nbytes, hstream),
            )
        check("cuStreamSynchronize", cu.cuStreamSynchronize(hstream))
        for name, (host, _) in back.items():
            user = binding.arrays[name].obj
            if host is not user:  # a non-contiguous array was staged through a packed copy
                user[...] = host


READY_CACHE_SIZE = 64


def torch_signature(arrays: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What a launch on these arguments depends on, when all are CUDA torch tensors: a repeat
    call with an equal signature needs none of the checks again (None: take the checked path)."""
    key = []
    for a in arrays:
        if type(a).__module__ != "torch" or not getattr(a, "is_cuda", False):
            return None
        key.append((a.data_ptr(), a.shape, a.stride(), a.dtype))  # one address space: the pointer names the device
    return tuple(key)


_streams: dict[int, Any] = {}
"""CUstream objects by handle, so a repeat launch builds none."""


def _stream(handle: int) -> Any:
    """The CUstream of `handle`, one object per handle (launch_ready compares them)."""
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = driver().CUstream(handle)
    return stream


_raw_stream_query: list[Any] = []
"""torch's raw current-stream query, looked up once (a list: filled at the first launch on torch)."""


def torch_current_stream(tensor: Any) -> Any:
    """torch's current stream on the tensor's device, as a CUstream. torch's raw-handle query
    (what Triton's launcher calls) costs a fraction of building a torch.cuda.Stream per call."""
    if not _raw_stream_query:
        import torch

        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _raw_stream_query.append(
            raw if raw is not None else lambda index: torch.cuda.current_stream(index).cuda_stream)
    return _stream(_raw_stream_query[0](tensor.get_device()))


def _wait_for(producer: int, hstream: Any) -> None:
    """Order the launch after the work queued so far on the `producer` stream (1 = legacy)."""
    cu = driver()
    flags = cu.CUevent_flags.CU_EVENT_DISABLE_TIMING
    event = check("cuEventCreate", cu.cuEventCreate(flags))
    try:
        check("cuEventRecord", cu.cuEventRecord(event, cu.CUstream(producer)))
        check("cuStreamWaitEvent", cu.cuStreamWaitEvent(hstream, event, 0))
    finally:
        cu.cuEventDestroy(event)  # safe once the wait is queued: it keeps what it needs


def _check_pointer_device(name: str, ptr: int) -> None:
    cu = driver()
    attr = cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    try:
        ordinal = check("cuPointerGetAttribute", cu.cuPointerGetAttribute(attr, ptr))
    except CudaError as e:
        raise TkError(f"argument {name}: address {ptr:#x} is not CUDA device memory") from e
    if int(ordinal) != 0:
        raise TkError(f"argument {name} is on cuda:{int(ordinal)}; tkc launches on cuda:0")


def synchronize(stream: Any = None) -> None:
    """Wait for `stream` (any form `Kernel.__call__` accepts), or for the whole context."""
    cu = driver()
    if stream is None:
        check("cuCtxSynchronize", cu.cuCtxSynchronize())
    else:
        handle = stream_handle(stream, Binding({}, {}))
        check("cuStreamSynchronize", cu.cuStreamSynchronize(cu.CUstream(handle)))


def load(
    ptx: str | None = None, cubin: bytes | None = None, *, abi: KernelABI
) -> Kernel:
    """Load a kernel from PTX text (driver JIT) or a cubin, ready to be called."""
    if (ptx is None) == (cubin is None):
        raise ValueError("load() takes exactly one of ptx= and cubin=")
    dev = device()
    module = load_module(ptx, cubin)
    function = get_function(module, abi.entry, abi.smem_bytes, abi.block)
    return Kernel(abi, dev, module, function)

