"""Register A operands computed before a loop keep their registers through it, in the SASS.

ptxas before CUDA 13.3 gave such registers to other values inside the loop once the wgmma had
read them (register_b_ragged.tk: wrong results on an H100, only in the variant whose loop has a
branch). The conversion copies the operands in the loop with `shfl.sync.idx`; here the cubin
from the installed ptxas is disassembled and each copy's source, loop-invariant by construction,
must not be written anywhere in the loop.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from tkc.api import CompiledKernel
from tkc.backends import ptxas

KERNELS = Path(__file__).resolve().parents[1] / "gpu"
CASES = [("kernels/register_b_ragged.tk", "register_b_ragged"),
         ("walkthrough/attn/attn_rope_fused.tk", "attn_rope_fused")]

Instruction = tuple[str, str, str]
"""(label or "", opcode, operands) of one SASS line."""


def _have(tool: str) -> bool:
    try:
        ptxas.find_tool(tool)
    except ptxas.ToolNotFound:
        return False
    return True


def _sass(ptx: str) -> list[Instruction]:
    cubin = ptxas.assemble(ptx)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin.data)
        text = subprocess.run([str(ptxas.find_tool("nvdisasm")), "-c", str(path)], capture_output=True,
                              text=True, check=True).stdout
    lines: list[Instruction] = []
    for line in text.splitlines():
        if label := re.match(r"\s*(\.L_x_\d+):", line):
            lines.append((label.group(1), "", ""))
        elif op := re.match(r"\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Za-z0-9_.]+)\s*(.*?)\s*;", line):
            lines.append(("", op.group(1), op.group(2)))
    return lines


def _mma_loops(sass: list[Instruction]) -> list[list[Instruction]]:
    """The bodies of the innermost loops with wgmmas in them (backward branches; not spin-waits
    moved past an EXIT, not a persistent kernel's tile loop around the KV loop)."""
    where = {label: i for i, (label, _, _) in enumerate(sass) if label}
    spans = []
    for i, (_, opcode, operands) in enumerate(sass):
        target = re.search(r"\((\.L_x_\d+)\)", operands) if opcode.startswith("BRA") else None
        if target and where.get(target.group(1), i) < i:
            body = sass[where[target.group(1)]:i + 1]
            if any(op.startswith("HGMMA") for _, op, _ in body) and not any(op.startswith("EXIT") for _, op, _ in body):
                spans.append((where[target.group(1)], i))
    return [sass[a:b + 1] for a, b in spans if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in spans)]


def _written(opcode: str, operands: str) -> int | None:
    """The general register an instruction writes first, if any."""
    if opcode.split(".")[0] in {"ST", "STS", "STG", "BRA", "BAR", "HGMMA", "ISETP", "FSETP", "SYNCS", "RED", "ATOM"}:
        return None
    reg = re.match(r"(?:U?P\w+, )?R(\d+)\b", operands)
    return int(reg.group(1)) if reg else None


@pytest.mark.skipif(not (_have("ptxas") and _have("nvdisasm")), reason="ptxas and nvdisasm not installed")
@pytest.mark.parametrize("path,kernel", CASES)
def test_copied_register_a_operands_survive_the_loop(path: str, kernel: str) -> None:
    compiled = CompiledKernel(str(KERNELS / path), kernel, {})
    for variant in (compiled, compiled.whole_tiles):
        assert variant is not None
        copies = 0
        for body in _mma_loops(_sass(variant.ptx)):
            sources = {int(m.group(1)) for _, op, operands in body if op.startswith("SHFL.IDX")
                       and (m := re.match(r"(?:U?P\w+, )?R\d+, R(\d+),", operands))}
            overwritten = sorted(r for r in sources if any(_written(op, args) == r for _, op, args in body))
            assert not overwritten, f"{kernel}: the loop overwrites R{overwritten} its wgmma copies from"
            copies += len(sources)
        assert copies == 16, f"{kernel}: {copies} register A copies in its loops, expected 16"
