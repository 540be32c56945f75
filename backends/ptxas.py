"""ptxas and cuobjdump: PTX text -> cubin with its `-v` resource report, cubin -> SASS.

The tools come from the `nvidia-cuda-nvcc` / `nvidia-cuda-cuobjdump` wheels (`nvidia/cu13/bin/`;
`cuobjdump -sass` also needs `nvdisasm` from `nvidia-cuda-nvdisasm` there), else from PATH.
A ptxas error is a compiler bug, not a user error: it raises `PtxasError` with ptxas's message
and the PTX lines it names.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

PERF_INFO_CODES = {
    "C7508": "setmaxnreg ignored",
    "C7512": "wgmmas serialised for want of registers",
    "C7513": "wgmmas serialised: other instructions write their registers while they are in flight",
    "C7517": "a wgmma wait injected",
    "C7519": "a wgmma arrive injected",
}
"""ptxas infos that mean lost performance, and what each means."""


class ToolNotFound(RuntimeError):
    pass


class PtxasError(RuntimeError):
    """ptxas rejected PTX that tkc generated; `log` is ptxas's full output."""

    def __init__(self, log: str, ptx: str):
        self.log = log
        lines = ptx.splitlines()
        quoted = []
        for n in sorted({int(m) for m in re.findall(r"line (\d+)", log)})[:5]:
            if 0 < n <= len(lines):
                quoted.append(f"  {n}: {lines[n - 1].strip()}")
        detail = "\n".join(["ptxas rejected the generated PTX (a compiler bug):", log.strip(), *quoted])
        super().__init__(detail)


@cache
def find_tool(name: str) -> Path:
    """`name` from the CUDA wheels' bin directory, else from PATH."""
    try:
        import nvidia

        for root in nvidia.__path__:
            path = Path(root) / "cu13" / "bin" / name
            if path.is_file():
                return path
    except ImportError:
        pass
    if found := shutil.which(name):
        return Path(found)
    raise ToolNotFound(f"{name} not found: pip install nvidia-cuda-nvcc nvidia-cuda-cuobjdump "
                       f"nvidia-cuda-nvdisasm (or put the CUDA toolkit's bin/ on PATH)")


@dataclass
class FunctionReport:
    """What `ptxas -v` says about one entry."""

    registers: int = 0
    barriers: int = 0
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    shared_bytes: int = 0


@dataclass
class PtxasReport:
    functions: dict[str, FunctionReport] = field(default_factory=dict)
    infos: list[str] = field(default_factory=list)
    """Info codes such as C7508, in order of appearance (with repeats)."""
    warnings: list[str] = field(default_factory=list)
    log: str = ""

    def _max(self, attr: str) -> int:
        return max((getattr(f, attr) for f in self.functions.values()), default=0)

    @property
    def registers(self) -> int:
        return self._max("registers")

    @property
    def spill_stores(self) -> int:
        return self._max("spill_stores")

    @property
    def spill_loads(self) -> int:
        return self._max("spill_loads")

    @property
    def stack_frame(self) -> int:
        return self._max("stack_frame")

    @property
    def shared_bytes(self) -> int:
        return self._max("shared_bytes")

    @property
    def perf_infos(self) -> list[str]:
        """The info codes that mean lost performance (see PERF_INFO_CODES)."""
        return [c for c in self.infos if c in PERF_INFO_CODES]

    @property
    def clean(self) -> bool:
        """No spills, no stack, no warnings and none of the performance infos."""
        return not (self.spill_stores or self.spill_loads or self.stack_frame or self.warnings or self.perf_infos)


def parse_report(log: str) -> PtxasReport:
    report = PtxasReport(log=log)
    current: FunctionReport | None = None
    for line in log.splitlines():
        if m := re.search(r"Function properties for (\S+)", line) or re.search(
                r"Compiling entry function '([^']+)'", line):
            current = report.functions.setdefault(m.group(1), FunctionReport())
        if code := re.search(r"\((C\d{4})\)", line):
            report.infos.append(code.group(1))
        if "warning" in line.lower():
            report.warnings.append(line.strip())
        if current is None:
            continue
        if m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            current.stack_frame, current.spill_stores, current.spill_loads = map(int, m.groups())
        if m := re.search(r"Used (\d+) registers", line):
            current.registers = int(m.group(1))
        if m := re.search(r"used (\d+) barriers", line):
            current.barriers = int(m.group(1))
        if m := re.search(r"(\d+) bytes smem", line):
            current.shared_bytes = int(m.group(1))
    return report


@dataclass
class Cubin:
    data: bytes
    report: PtxasReport
    arch: str


def assemble(ptx: str, arch: str = "sm_90a", extra_args: tuple[str, ...] = ()) -> Cubin:
    """Assemble PTX with `ptxas -arch=ARCH -v`; raises PtxasError when ptxas fails."""
    with tempfile.TemporaryDirectory(prefix="tkc-ptxas-") as tmp:
        src, out = os.path.join(tmp, "kernel.ptx"), os.path.join(tmp, "kernel.cubin")
        Path(src).write_text(ptx)
        proc = subprocess.run([str(find_tool("ptxas")), f"-arch={arch}", "-v", *extra_args, src, "-o", out],
                              capture_output=True, text=True)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise PtxasError(log, ptx)
        return Cubin(Path(out).read_bytes(), parse_report(log), arch)


def sass(cubin: Cubin | bytes) -> str:
    """The SASS listing of a cubin (`cuobjdump -sass`)."""
    data = cubin.data if isinstance(cubin, Cubin) else cubin
    # cuobjdump disassembles through nvdisasm, which it looks up on PATH
    tool_dirs = {str(find_tool("cuobjdump").parent), str(find_tool("nvdisasm").parent)}
    with tempfile.TemporaryDirectory(prefix="tkc-sass-") as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        Path(path).write_bytes(data)
        env = {**os.environ, "PATH": os.pathsep.join([*sorted(tool_dirs), os.environ.get("PATH", "")])}
        proc = subprocess.run([str(find_tool("cuobjdump")), "-sass", path], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"cuobjdump -sass failed: {proc.stderr.strip()}")
        return proc.stdout
