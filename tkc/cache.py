"""The on-disk cache of compiled kernels, shared by `tkc compile` and `tkc.compile(...)`.

Where: `TKC_CACHE_DIR`, else `$XDG_CACHE_HOME/tkc`, else `~/.cache/tkc`.

An entry is keyed by the kernel's IR as the frontend builds it (`entry_key`), printed with its
locations, plus the compiler fingerprint (tkc's version, a hash of its own source, the xDSL and
lark versions). Every way of spelling the same call (a default given explicitly, `-D BM=128` or
`BM=128`) builds the same IR, so they share one entry. The files of entry KEY are
`KEY.ptx` + `KEY.abi.json` (what a launch needs), `KEY.cubin` (ptxas's output, written when
ptxas is present so a load skips the driver's JIT), and `KEY.tile.mlir` / `KEY.sm90.mlir` /
`KEY.sass` for the other `--emit` stages.

Building the IR needs the frontend and so xDSL, which is most of a compile's start-up. So a
spelling (file name, source bytes, kernel, parameters as given) also maps to its entry through
a small `SPELLING.entry` file: `tkc compile` answers a spelling it has seen from the cache
without loading the compiler at all (this module imports neither xDSL nor lark).

`TKC_ALWAYS_COMPILE=1` ignores what is cached (results are still written). Writes are atomic
(a temporary file renamed into place); a cache that cannot be written only makes tkc slower. Each
file carries the sha256 of its contents (`_SEAL`): one that does not match is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from functools import cache
from importlib.util import find_spec
from pathlib import Path

ARTEFACTS = {"tile": ".tile.mlir", "sm90": ".sm90.mlir", "ptx": ".ptx", "cubin": ".cubin", "sass": ".sass"}
"""The file suffix of each `--emit` stage's output in an entry."""
ABI_SUFFIX = ".abi.json"
ENTRY_SUFFIX = ".entry"

Params = Mapping[str, int | bool | float]


def cache_dir() -> Path:
    """$TKC_CACHE_DIR (`~` expanded), else $XDG_CACHE_HOME/tkc where that is an absolute path (the
    XDG spec has a relative one ignored), else ~/.cache/tkc."""
    if explicit := os.environ.get("TKC_CACHE_DIR"):
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "tkc"


def env_flag(name: str) -> bool:
    """Whether the environment turns the switch `name` on: any value but empty, 0, false, no or off."""
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def always_compile() -> bool:
    """TKC_ALWAYS_COMPILE=1: recompile even when the cache holds the result."""
    return env_flag("TKC_ALWAYS_COMPILE")


def _package_dirs(name: str) -> list[str]:
    """The directories of package `name`, found without importing it (tkc.passes imports xDSL)."""
    spec = find_spec(name)
    return list(spec.submodule_search_locations or []) if spec else []


def _compiler_files() -> Iterator[Path]:
    for package in ("tkc", "tkc.dialects", "tkc.passes", "tkc.backends"):
        for directory in _package_dirs(package):
            yield from sorted(p for p in Path(directory).rglob("*") if p.suffix in (".py", ".lark"))


def _distribution(package: str) -> str:
    """`NAME-VERSION` of an installed package, read from its dist-info directory's name
    (importlib.metadata scans every installed distribution: tens of milliseconds)."""
    for directory in _package_dirs(package):
        site = Path(directory).parent
        for info in sorted(site.glob(f"{package}-*.dist-info")):
            return info.name.removesuffix(".dist-info")
    return f"{package}-unknown"


@cache
def compiler_fingerprint() -> str:
    """tkc's version, a hash of its own source and the versions of xDSL and lark: part of
    every key, so an edited or upgraded compiler never serves a stale kernel."""
    from tkc.version import __version__

    digest = hashlib.sha256(__version__.encode())
    for dependency in ("xdsl", "lark"):
        digest.update(_distribution(dependency).encode())
    for path in _compiler_files():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return f"{__version__}-{digest.hexdigest()[:16]}"


def _hash(fields: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps({**fields, "tkc": compiler_fingerprint()}, sort_keys=True).encode()).hexdigest()


def entry_key(input_ir: str) -> str:
    """The key of the entry compiled from `input_ir`, the frontend's (or an `.mlir` input's)
    module printed with its locations (`tkc.driver.ir_text`)."""
    return _hash({"ir": input_ir})


def spelling_key(path: str, source: bytes | str, kernel: str | None, params: Params) -> str:
    """The key of one way of asking for a compile: the file name as given (it is in the
    locations), the source, the kernel and the parameters with their types (`1` is not `true`)."""
    data = source.encode() if isinstance(source, str) else source
    typed = sorted((name, type(value).__name__, value) for name, value in params.items())
    return _hash({"path": path, "source": hashlib.sha256(data).hexdigest(), "kernel": kernel, "params": typed})


_SEAL = b"tkc-cache sha256="
"""Each cache file starts with a line `tkc-cache sha256=HEX` of the rest: a file cut short, edited
or overwritten by something else reads as a miss (and is compiled and written again), never as
an answer."""


def _sealed(blob: bytes) -> bytes:
    return _SEAL + hashlib.sha256(blob).hexdigest().encode() + b"\n" + blob


def _unsealed(data: bytes) -> bytes | None:
    header, newline, blob = data.partition(b"\n")
    if not newline or header != _SEAL + hashlib.sha256(blob).hexdigest().encode():
        return None
    return blob


def read_bytes(name: str) -> bytes | None:
    """Cache file `name` as written, or None: missing, unreadable, or not what was written."""
    try:
        return _unsealed((cache_dir() / name).read_bytes())
    except OSError:
        return None


def read_text(name: str) -> str | None:
    data = read_bytes(name)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def write(name: str, data: str | bytes) -> None:
    """Write cache file `name` atomically; failures are ignored (the cache is only an aid)."""
    path = cache_dir() / name
    blob = _sealed(data.encode() if isinstance(data, str) else data)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, path)
    except OSError:
        pass


def source_bytes(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def lookup(path: str, kernel: str | None, params: Params, emit: str) -> bytes | None:
    """The cached `emit` output of a compile asked for this way before, or None (a miss, or
    TKC_ALWAYS_COMPILE). Reads no more than three small files; loads nothing of the compiler."""
    source = source_bytes(path)
    if source is None or always_compile():
        return None
    entry = read_text(spelling_key(path, source, kernel, params) + ENTRY_SUFFIX)
    if entry is None or len(entry) != 64:
        return None
    return read_bytes(entry + ARTEFACTS[emit])


def remember(path: str, source: bytes, kernel: str | None, params: Params, entry: str) -> None:
    """Map this spelling of a compile to its entry, unless the file changed meanwhile (then
    `source`, read before the compile, may not be what was compiled)."""
    if source_bytes(path) == source:
        write(spelling_key(path, source, kernel, params) + ENTRY_SUFFIX, entry)


def grammar_cache_file(grammar: str) -> str | None:
    """Where lark caches the analysed `.tk` grammar (it checks its own hash of the grammar,
    options and lark version on load); None when the cache directory cannot be made."""
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(directory / f"grammar-{hashlib.sha256(grammar.encode()).hexdigest()[:16]}.lark")
