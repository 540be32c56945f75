"""The dependency order of tkc's modules (docs/internals.md), checked on their import statements
(at any depth: a lazy import inside a function, or one under TYPE_CHECKING, is a dependency too):

    base ← dialects ← analyses ← passes ← driver ← api/cli        runtime ← api/cli; runtime → base only

A module imports modules of its own layer or below, never above; a pass imports no other pass
(what two passes share is an analysis); nothing the tile passes use imports the sm90 or ptx
dialect; nothing imports the command-line entry points or another module's private names; every
tkc module named in an import exists.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from tkc.passes import TKC_PASS_NAMES, module_name

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = {"tkc": REPO / "tkc", "tkc.dialects": REPO / "dialects", "tkc.passes": REPO / "passes",
                "tkc.backends": REPO / "backends"}
"""Where each package's modules live in the source tree (pyproject.toml's package-dir)."""

LAYERS = ("base", "dialects", "analyses", "passes", "driver", "api/cli")
PASS_MODULES = frozenset(module_name(name) for name in TKC_PASS_NAMES)

EXPLICIT_LAYER = {
    "tkc.abi": "base",
    "tkc.diagnostics": "base",
    "tkc.dtypes": "base",
    "tkc.version": "base",
    "tkc.collector": "base",  # the garbage collector paused while compiling
    "tkc.cache": "base",  # files on disk by key; the frontend keeps its analysed grammar there
    "tkc.pipeline": "base",  # pass and stage names as plain data
    "tkc.timing": "base",
    "tkc.progress": "base",  # the progress line of the tuner and the interpreter's runs  # torch-timed measurements, imported by the tuner and the benchmarks
    "tkc.dialects": "dialects",
    "tkc.interpreter": "analyses",
    "tkc.flops": "analyses",
    "tkc.passes": "passes",  # the registry
    "tkc.backends": "passes",
    "tkc.frontend": "passes",  # like a pass, the frontend and the IR reader only make IR
    "tkc.ir_input": "passes",
    "tkc.driver": "driver",
    "tkc.universe": "driver",
    "tkc": "api/cli",
    "tkc.api": "api/cli",
    "tkc.cli": "api/cli",
    "tkc.opt": "api/cli",
    "tkc.command_line": "api/cli",
    "tkc.runner": "api/cli",
    "tkc.report": "api/cli",
    "tkc.tune": "api/cli",
    "tkc.torch_ops": "api/cli",
    "tkc.frontend.__main__": "api/cli",
}
ENTRY_POINTS = frozenset({"tkc.cli", "tkc.opt", "tkc.frontend.__main__"})


def modules() -> dict[str, Path]:
    found = {}
    for package, directory in PACKAGE_DIRS.items():
        for path in sorted(directory.rglob("*.py")):
            parts = [*package.split("."), *path.relative_to(directory).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            if parts[:2] in (["tkc", "dialects"], ["tkc", "passes"], ["tkc", "backends"]) and package == "tkc":
                continue  # not there in a source tree; they are the other package dirs
            found[".".join(parts)] = path
    return found


MODULES = modules()


def layer(module: str) -> str:
    """The layer of a tkc module (runtime for tkc.runtime.*)."""
    if module == "tkc.runtime" or module.startswith("tkc.runtime."):
        return "runtime"
    if module in EXPLICIT_LAYER:
        return EXPLICIT_LAYER[module]
    if module.startswith("tkc.dialects."):
        return "dialects"
    if module in PASS_MODULES or module.startswith(("tkc.backends.", "tkc.frontend.")):
        return "passes"
    if module.startswith("tkc.passes."):
        return "analyses"  # a module of passes/ that is no registered pass: what passes share
    raise AssertionError(f"{module} has no layer: add it to EXPLICIT_LAYER in {Path(__file__).name}")


def may_import(importer: str, imported: str) -> bool:
    have, need = layer(importer), layer(imported)
    if have == "runtime":
        return need in ("base", "runtime")
    if need == "runtime":
        return have == "api/cli"
    return LAYERS.index(need) <= LAYERS.index(have)


def tkc_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported tkc module, names it takes or reads from it) for every import in the file;
    a module bound to a name (`from tkc.dialects import tile`) counts its `tile.x` uses as names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str, list[str]]] = []
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.split(".")[0] == "tkc"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tkc" and not node.level:
            names = [a.name for a in node.names if f"{node.module}.{a.name}" not in MODULES]
            if names:  # `from tkc import dtypes` takes a module, nothing of the package itself
                found.append((node.lineno, node.module or "", names))
            for a in node.names:
                if f"{node.module}.{a.name}" in MODULES:
                    bound[a.asname or a.name] = f"{node.module}.{a.name}"
                    found.append((node.lineno, f"{node.module}.{a.name}", []))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            found.append((node.lineno, bound[node.value.id], [node.attr]))
    return found


def test_every_module_has_a_layer() -> None:
    assert {m: layer(m) for m in MODULES}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_follow_the_dependency_order(module: str) -> None:
    wrong = []
    for line, imported, names in tkc_imports(MODULES[module]):
        where = f"{MODULES[module].relative_to(REPO)}:{line}: {module} ({layer(module)}) imports {imported}"
        if imported not in MODULES:
            if importlib.util.find_spec(imported) is None:
                wrong.append(f"{where}, which does not exist")
            continue
        if imported == module:
            continue
        if not may_import(module, imported):
            wrong.append(f"{where} ({layer(imported)}), a layer above")
        if module in PASS_MODULES and imported in PASS_MODULES:
            wrong.append(f"{where}, another pass: move what they share into an analysis module")
        if imported in ENTRY_POINTS:
            wrong.append(f"{where}, an entry point: move what they share into tkc.command_line")
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        if private:
            wrong.append(f"{where}'s private {', '.join(private)}")
    assert not wrong, "\n".join(wrong)


def test_tile_passes_depend_on_no_later_dialect() -> None:
    """The tile passes (and every analysis they use) run before sm90 or ptx IR exists."""
    todo = [m for m in PASS_MODULES if m.startswith("tkc.passes.tile_")]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo += [imported for _, imported, _ in tkc_imports(MODULES[module]) if imported in MODULES]
    assert not seen & {"tkc.dialects.sm90", "tkc.dialects.ptx"}


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    source = tmp_path / "plan.py"
    source.write_text("def f():\n    from tkc.passes.convert_tile_to_sm90 import _Emitter\n"
                      "    from tkc.gpu import run_on_gpu\n    from tkc.dialects import tile\n    tile._X\n")
    found = tkc_imports(source)
    assert (2, "tkc.passes.convert_tile_to_sm90", ["_Emitter"]) in found and (3, "tkc.gpu", ["run_on_gpu"]) in found
    assert (5, "tkc.dialects.tile", ["_X"]) in found and importlib.util.find_spec("tkc.gpu") is None
    assert not may_import("tkc.passes.plan", "tkc.passes.convert_tile_to_sm90")
    assert not may_import("tkc.runtime.run", "tkc.api") and not may_import("tkc.dialects.tile", "tkc.interpreter")
    assert may_import("tkc.runner", "tkc.runtime") and may_import("tkc.runtime.launch", "tkc.abi")
