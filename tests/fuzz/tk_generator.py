"""A grammar- and type-directed generator of `.tk` programs, for fuzzing the whole compiler.

`generate(rng)` writes one file (usually one kernel, sometimes two) from a seeded
`random.Random`. The programs are meant to be valid: every expression is built for a type (a
register or shared tile of a dtype and shape, a row or column vector, an index, f32 or bool
scalar), names are declared before use and never shadowed, loads and stores fit their tensors,
and the statements follow the shapes real kernels have (loads at kernel level, in loops at any
depth and under ifs, vars carried through loops and ifs, an epilogue of stores, now and then
an index read from an i32 table that trip counts use). Within that the
choices are random and reach every construct of docs/language.md: kernels with parameters
(integers, bools, floats, defaults computed from earlier ones), `gl` arguments of rank 1-4 with
symbolic and fixed dimensions, grids of 1-3 axes, loads to st/rt/sv/rv of tile sizes from 16 to
256 (48, 96 and 192 included) at tile or element coordinates (`elem(x)`, a range of a
fixed length, a range to an end read at run time), nested loops, ifs and selects, vars of every kind, every builtin
(the four mmas, the element-wise functions, reductions, broadcasts, masks, conversions, fills)
and every annotation. A fraction deliberately steps outside what the GPU backend supports
(element-wise math on bf16, odd tile sizes, over-large tiles), so that the
compiler's rejections are exercised too.

`python tests/fuzz/tk_generator.py SEED` prints the program of a seed.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field

from harness import Case

ROW_WEIGHTS = {64: 30, 128: 30, 256: 3, 192: 3, 16: 4, 32: 3, 48: 2, 96: 2, 80: 1, 144: 1}
"""Rows of the register tiles: one count per kernel (the GPU backend splits rows over warpgroups;
under 64 rows, without an mma, it holds them in the band layout, which 16, 32 and 48 exercise)."""
COL_WEIGHTS = {64: 30, 128: 18, 32: 10, 16: 6, 256: 3, 48: 3, 96: 4, 192: 2, 80: 0.5, 160: 0.5, 272: 0.3, 320: 0.3}
MMA_DTYPES = {"bf16": 70, "f16": 20, "fp8e4m3": 10}
UNARY = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "relu")
REDUCE_FNS = ("max", "min", "sum")
BROADCAST_FNS = ("add", "sub", "mul", "div")
FILLS = ("zero", "one", "neg_infty", "pos_infty")
FLOATS = ("0.5", "2.0", "1.0", "0.125", "3.0", "1e-5", "-1.5", "0.0", "2.5e3", "1e30")
"""Float literals; 0.0 and 1e30 are rare edge cases (division by zero, overflow to inf)."""
SYMBOLIC_DIMS = ("M", "N", "K", "L", "S", "T")
BATCH_DIMS = ("B", "H", "G")
ARG_NAMES = ("A", "C", "E", "F", "O", "P", "Q", "U", "V", "W", "X", "Y", "Z", "R")
GRID_NAMES = ("i", "j", "z")
LOOP_NAMES = ("k", "c", "t", "u", "w", "kv")


@dataclass(frozen=True)
class Ty:
    """A .tk type: kind is rt/st (tiles), rv/sv (vectors) or index/f32/bool (scalars)."""

    kind: str
    dtype: str = ""
    shape: tuple[int, ...] = ()
    axis: str = ""
    """For vectors: "row" (one value per row of a tile) or "col"."""

    @property
    def is_tile(self) -> bool:
        return self.kind in ("rt", "st")

    @property
    def is_vec(self) -> bool:
        return self.kind in ("rv", "sv")


@dataclass
class Arg:
    name: str
    dtype: str
    dims: list[str]
    """The dimensions as written: a symbolic name, a parameter or a number."""
    fixed: list[int | None]
    """The value of each fixed dimension, None for a symbolic one."""
    output: bool

    def fits(self, shape: tuple[int, ...]) -> bool:
        if len(self.dims) < len(shape):
            return False
        return all(f is None or f % s == 0 for f, s in zip(reversed(self.fixed), reversed(shape)))

    def declaration(self) -> str:
        return f"{self.name}: gl<{self.dtype}>[{', '.join(self.dims)}]"


@dataclass
class Binding:
    ty: Ty
    mutable: bool


def weighted(rng: random.Random, table: dict) -> object:
    keys = list(table)
    return rng.choices(keys, weights=[table[k] for k in keys])[0]


class KernelWriter:
    """Writes one kernel: `write()` returns its text; `params`, `args` and `defines` describe it."""

    def __init__(self, rng: random.Random, name: str, override_rows: bool = False):
        self.rng = rng
        self.name = name
        self.rows = int(weighted(rng, ROW_WEIGHTS))
        self.defines: list[str] = []
        """-D overrides the program is written for: BM's default differs, the code uses the override."""
        if override_rows:
            self.defines.append(f"BM={self.rows}")
        self.params: list[tuple[str, str]] = []
        self.param_values: dict[str, int | bool | float] = {}
        self.args: list[Arg] = []
        self.dims_needed: list[str] = []
        self.scopes: list[dict[str, Binding]] = [{}]
        self.lines: list[str] = []
        self.indent = 1
        self.counter = 0
        self.loads_ok = True
        self.grid_names: list[str] = []
        self.loop_names: list[str] = []
        self.table_names: list[str] = []
        """Indices read from an i32 tensor at kernel level (table_stmt)."""
        self.cols = self._choose_cols()
        self._declare_params()

    # ------------------------------------------------------------------ names and sizes

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def _choose_cols(self) -> list[int]:
        cols = {int(weighted(self.rng, COL_WEIGHTS)) for _ in range(self.rng.randint(1, 3))}
        return sorted(cols)

    def _declare_params(self) -> None:
        names = iter(("BN", "BK", "BD", "BC", "D", "E2"))
        default = str(int(weighted(self.rng, ROW_WEIGHTS))) if self.defines else str(self.rows)
        self.add_param("BM", default, self.rows)
        for c in self.cols:
            if c == self.rows and self.chance(0.5):
                continue
            if self.chance(0.75):
                name = next(names)
                default = str(c)
                for other, value in list(self.param_values.items()):
                    if other == "BM" and self.defines:
                        continue  # BM's default is not the value the code is written for
                    if isinstance(value, int) and not isinstance(value, bool) and self.chance(0.3):
                        if value * 2 == c:
                            default = f"2 * {other}"
                        elif value == c * 2:
                            default = f"{other} / 2"
                self.add_param(name, default, c)
        if self.chance(0.35):
            causal = self.chance(0.5)
            self.add_param("CAUSAL", "true" if causal else "false", causal)
        if self.chance(0.25):
            self.add_param("EPS", self.rng.choice(("1e-5", "0.001", "1.0e-6")), 1e-5)
        if self.chance(0.2):
            self.add_param("SCALE", self.rng.choice(("0.125", "1.0 / 8", "2.0")), 0.125)
        if self.chance(0.15):
            self.add_param("STEPS", str(self.rng.randint(1, 5)), 2)

    def add_param(self, name: str, default: str, value: int | bool | float) -> None:
        self.params.append((name, default))
        self.param_values[name] = value

    def int_params(self) -> list[str]:
        return [n for n, v in self.param_values.items() if type(v) is int]

    def size(self, n: int) -> str:
        """How to write the tile size `n`: a parameter of that value or the number."""
        named = [p for p in self.int_params() if self.param_values[p] == n and p != "STEPS"]
        if named and self.chance(0.8):
            return self.rng.choice(named)
        for p in named or self.int_params():
            v = self.param_values[p]
            if v * 2 == n and self.chance(0.3):
                return f"2 * {p}"
            if v == n * 2 and self.chance(0.3):
                return f"{p} / 2"
        return str(n)

    # ------------------------------------------------------------------ scopes

    def visible(self) -> dict[str, Binding]:
        merged: dict[str, Binding] = {}
        for scope in self.scopes:
            merged.update(scope)
        return merged

    def declare(self, name: str, ty: Ty, mutable: bool = False) -> None:
        self.scopes[-1][name] = Binding(ty, mutable)

    def names_of(self, pred) -> list[str]:
        return [n for n, b in self.visible().items() if pred(b.ty)]

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    # ------------------------------------------------------------------ arguments

    def arg_for(self, shape: tuple[int, ...], dtype: str, output: bool) -> Arg:
        reuse = [a for a in self.args if a.dtype == dtype and a.output == output and a.fits(shape)]
        if reuse and self.chance(0.6 if not output else 0.25):
            return self.rng.choice(reuse)
        dims: list[str] = []
        fixed: list[int | None] = []
        for _ in range(self.rng.choice((0, 0, 0, 1, 1, 2)) if len(shape) < 4 else 0):
            if self.chance(0.7):
                dims.append(self.batch_dim())
                fixed.append(None)
            else:
                n = self.rng.randint(1, 8)
                dims.append(str(n))
                fixed.append(n)
        for s in shape:
            if self.chance(0.7):
                dims.append(self.symbolic_dim())
                fixed.append(None)
            else:
                m = self.rng.choice((1, 1, 2, 4, 8))
                dims.append(self.size(s) if m == 1 else f"{m} * {self.size(s)}" if self.chance(0.5) else str(m * s))
                fixed.append(m * s)
        taken = {a.name for a in self.args}
        name = next((n for n in ARG_NAMES if n not in taken), f"T{len(self.args)}")
        arg = Arg(name, dtype, dims, fixed, output)
        self.args.append(arg)
        return arg

    def symbolic_dim(self) -> str:
        used = [d for a in self.args for d in a.dims if d in SYMBOLIC_DIMS] + self.dims_needed
        if used and self.chance(0.6):
            return self.rng.choice(used)
        return self.rng.choice(SYMBOLIC_DIMS)

    def batch_dim(self) -> str:
        return self.rng.choice(BATCH_DIMS)

    def coords(self, arg: Arg, shape: tuple[int, ...], kind: str = "") -> str:
        out = []
        first = len(arg.dims) - len(shape)
        for axis in range(len(arg.dims)):
            if axis < first:
                out.append(self.rng.choice([*self.grid_names, "0", *self.loop_names[:1]]))
                continue
            # element coordinates: any start along a tile's rows; along the innermost dim only
            # a register vector's (a tile's box starts on 16 bytes there, checked at run time)
            innermost = axis == len(arg.dims) - 1
            if (not innermost or kind == "rv") and self.chance(0.12):
                out.append(self.element_coord(arg, axis, shape[axis - first]))
            else:
                out.append(self.coord_expr())
        return ", ".join(out)

    def element_coord(self, arg: Arg, axis: int, extent: int) -> str:
        """`elem(start)`, `elem(start, start + c)` (a range of a fixed length: one gathered row, a
        group shorter or longer than the tile) or `elem(start, end)` with an end read at run
        time or computed, the start a tile index scaled, shifted (before 0 too) or not."""
        base = self.coord_expr()
        start = self.rng.choice((f"{base} * {self.size(extent)}", f"{base} * {self.size(extent)} + 3",
                                 f"{base} * {self.size(extent)} - 3", f"{base} * 4", base))
        form = self.rng.random()
        if form < 0.45:
            return f"elem({start})"
        if form < 0.75:
            length = self.rng.choice((1, 1, 4, 5, extent, extent + 7))
            return f"elem({start}, {start} + {length})"
        dim = arg.dims[axis]
        ends = [f"min({dim}, {start} + {self.rng.choice((extent, 2 * extent, 5))})", dim]
        if self.table_names:
            ends.append(self.rng.choice(self.table_names))
        return f"elem({start}, {self.rng.choice(ends)})"

    def coord_expr(self) -> str:
        options = [*self.grid_names, *self.loop_names, *self.loop_names]
        if self.chance(0.15) or not options:
            return self.rng.choice(("0", "1", "2"))
        base = self.rng.choice(options)
        if self.chance(0.15):
            return self.rng.choice((f"{base} + 1", f"2 * {base}", f"{base} / 2", f"{base} % 4"))
        return base

    # ------------------------------------------------------------------ scalar expressions

    def index_expr(self, depth: int = 2) -> str:
        atoms = [*self.grid_names, *self.loop_names, *self.names_of(lambda t: t.kind == "index")]
        r = self.rng.random()
        if depth <= 0 or r < 0.45:
            if atoms and self.chance(0.7):
                return self.rng.choice(atoms)
            if self.chance(0.5):
                return str(self.rng.choice((0, 1, 2, 3, 16, 64)))
            if self.int_params() and self.chance(0.5):
                return self.rng.choice(self.int_params())
            dim = self.symbolic_dim()
            self.need_dim(dim)
            return dim
        if r < 0.85:
            op = self.rng.choice(("+", "-", "*", "/", "%", "+", "*"))
            rhs = self.index_expr(depth - 1) if op not in "/%" else str(self.rng.choice((1, 2, 3, 4, 16)))
            return f"({self.index_expr(depth - 1)} {op} {rhs})"
        return f"{self.rng.choice(('min', 'max'))}({self.index_expr(depth - 1)}, {self.index_expr(depth - 1)})"

    def need_dim(self, dim: str) -> None:
        if dim not in self.dims_needed:
            self.dims_needed.append(dim)

    def f32_expr(self, depth: int = 2) -> str:
        atoms = self.names_of(lambda t: t.kind == "f32")
        floats = [n for n, v in self.param_values.items() if type(v) is float]
        r = self.rng.random()
        if depth <= 0 or r < 0.4:
            choices = [self.rng.choice(FLOATS[:7]), self.rng.choice(("log2e", "ln2", "0.5"))]
            if atoms:
                choices += [self.rng.choice(atoms)] * 2
            if floats:
                choices.append(self.rng.choice(floats))
            if self.grid_names or self.loop_names:
                choices.append(f"f32({self.index_expr(1)})")
            return self.rng.choice(choices)
        if r < 0.75:
            op = self.rng.choice(("+", "-", "*", "/"))
            rhs = self.f32_expr(depth - 1) if op != "/" else self.rng.choice(("2.0", "3.0", "0.5"))
            return f"({self.f32_expr(depth - 1)} {op} {rhs})"
        if r < 0.8 and self.rows:
            fn = self.rng.choice(("sum", "max", "min"))
            dtype = self.rng.choice(("f32", "f32", "f32", "bf16"))  # a narrow vector reduces in f32
            return f"{fn}({self.vec(dtype, self.rows, 'row', depth - 1)})"
        if r < 0.9:
            fn = self.rng.choice(("exp", "exp2", "abs", "relu", "sqrt"))
            inner = self.f32_expr(depth - 1)
            return f"{fn}({'abs(' + inner + ')' if fn == 'sqrt' else inner})"
        return f"({self.bool_expr(1)} ? {self.f32_expr(depth - 1)} : {self.f32_expr(depth - 1)})"

    def bool_expr(self, depth: int = 2) -> str:
        atoms = self.names_of(lambda t: t.kind == "bool")
        bools = [n for n, v in self.param_values.items() if type(v) is bool]
        r = self.rng.random()
        if depth <= 0 or r < 0.55:
            choices = [f"{self.index_expr(1)} {self.rng.choice(('<', '<=', '>', '>=', '==', '!='))} {self.index_expr(1)}"]
            if atoms:
                choices.append(self.rng.choice(atoms))
            if bools:
                choices.append(self.rng.choice(bools))
            if self.chance(0.1):
                choices.append(self.rng.choice(("true", "false")))
            if self.chance(0.1):
                choices.append(f"{self.f32_expr(1)} < {self.f32_expr(1)}")
            return self.rng.choice(choices)
        if r < 0.9:
            return f"({self.bool_expr(depth - 1)} {self.rng.choice(('and', 'or'))} {self.bool_expr(depth - 1)})"
        return f"not {self.bool_expr(depth - 1)}"

    def runtime_cond(self) -> str:
        """A condition that usually depends on block ids or loop counters (an scf.if)."""
        bools = [n for n, v in self.param_values.items() if type(v) is bool]
        if bools and self.loop_names and self.grid_names and self.chance(0.3):
            k, i = self.loop_names[-1], self.grid_names[0]
            return f"{bools[0]} and ({k} + 1) * {self.size(self.cols[0])} > {i} * {self.size(self.rows)}"
        return self.bool_expr(2)

    def scalar_operand(self) -> str:
        if self.chance(0.6):
            return self.rng.choice(FLOATS[:7] if self.chance(0.97) else FLOATS)
        return self.f32_expr(1)

    # ------------------------------------------------------------------ tile expressions

    def tile(self, dtype: str, rows: int, cols: int, depth: int = 2) -> str:
        """An expression of a tile of `dtype` and shape [rows, cols] (in registers, or shared)."""
        if dtype != "f32":
            return self.low_tile(dtype, rows, cols, depth)
        names = self.names_of(
            lambda t: t.is_tile and t.dtype == "f32" and t.shape == (rows, cols))
        options: dict[str, float] = {"fill": 0.6}
        if names:
            options["name"] = 6
        if self.loads_ok:
            options["load"] = 2.5
        if depth > 0:
            options.update(convert=0.8, unary=1.5, binary=2, scalar=2, minmax=0.7, broadcast=2, mask=0.8,
                           neg=0.3, select=0.4, position=0.5, where=0.7, cumsum=0.4)
            if rows == self.rows:
                options["mma"] = 3
        choice = weighted(self.rng, options)
        d = depth - 1
        if choice == "name":
            return self.rng.choice(names)
        if choice == "fill":
            return f"{self.rng.choice(FILLS)}<f32>[{self.size(rows)}, {self.size(cols)}]"
        if choice == "load":
            if self.chance(0.4):
                return self.load("rt", "f32", (rows, cols))
            return f"f32({self.load('rt', self.convertible(), (rows, cols))})"
        if choice == "convert":
            return f"f32({self.low_tile(self.convertible(), rows, cols, d)})"
        if choice == "unary":
            fn = self.rng.choice(UNARY)
            return f"{fn}({self.tile('f32', rows, cols, d)})"
        if choice == "binary":
            op = self.rng.choice(("+", "-", "*", "/"))
            return f"({self.tile('f32', rows, cols, d)} {op} {self.tile('f32', rows, cols, d)})"
        if choice == "scalar":
            op = self.rng.choice(("+", "-", "*", "/"))
            if self.chance(0.2):
                return f"({self.scalar_operand()} {op} {self.tile('f32', rows, cols, d)})"
            return f"({self.tile('f32', rows, cols, d)} {op} {self.scalar_operand()})"
        if choice == "minmax":
            fn = self.rng.choice(("max", "min"))
            other = self.tile("f32", rows, cols, d) if self.chance(0.8) else self.scalar_operand()
            return f"{fn}({self.tile('f32', rows, cols, d)}, {other})"
        if choice == "broadcast":
            axis = self.rng.choice(("row", "col"))
            length = rows if axis == "row" else cols
            fn = self.rng.choice(BROADCAST_FNS)
            return f"{fn}_{axis}({self.tile('f32', rows, cols, d)}, {self.vec('f32', length, axis, d)})"
        if choice == "mask":
            return self.mask(rows, cols, d)
        if choice == "cumsum":
            axis = self.rng.choice(('row', 'col'))
            if self.chance(0.3):  # a bf16 scan, summed in f32 and rounded back
                return f"f32({axis}_cumsum({self.tile('bf16', rows, cols, d)}))"
            return f"{axis}_cumsum({self.tile('f32', rows, cols, d)})"
        if choice == "neg":
            return f"{self.rng.choice(('-', '-', '+'))}{self.tile('f32', rows, cols, d)}"
        if choice == "position":
            fn = self.rng.choice(("row_index", "col_index"))
            shape = f"{self.rng.choice(FILLS)}<f32>[{self.size(rows)}, {self.size(cols)}]"
            if self.chance(0.3):
                return f"{fn}({shape})"
            return f"{fn}({shape}, {self.index_expr(1)} * {self.size(rows if fn == 'row_index' else cols)})"
        if choice == "where":
            branches = [self.tile("f32", rows, cols, d) if self.chance(0.7) else self.scalar_operand() for _ in range(2)]
            return f"where({self.condition(rows, cols, d)}, {branches[0]}, {branches[1]})"
        if choice == "select":
            saved, self.loads_ok = self.loads_ok, self.chance(0.05) and self.loads_ok
            try:
                return f"({self.runtime_cond()} ? {self.tile('f32', rows, cols, d)} : {self.tile('f32', rows, cols, d)})"
            finally:
                self.loads_ok = saved
        return self.mma(cols, d)

    def condition(self, rows: int, cols: int, depth: int) -> str:
        """A 0/1 tile: a comparison of tiles (or a tile and a scalar), and/or/not of such."""
        op = self.rng.choice(("<", "<=", ">", ">=", "==", "!="))
        other = self.tile("f32", rows, cols, depth) if self.chance(0.6) else self.scalar_operand()
        compare = f"({self.tile('f32', rows, cols, depth)} {op} {other})"
        form = self.rng.randrange(4)
        if form == 0 or depth <= 0:
            return compare
        if form == 1:
            return f"(not {compare})"
        return f"({compare} {self.rng.choice(('and', 'or'))} {self.condition(rows, cols, depth - 1)})"

    def convertible(self) -> str:
        """A dtype register tiles convert from and to (fp8 ones are rare: the backend rejects them)."""
        return self.rng.choice(("bf16", "bf16", "f16")) if self.chance(0.97) else "fp8e4m3"

    def mask(self, rows: int, cols: int, depth: int) -> str:
        inner = self.tile("f32", rows, cols, depth)
        fill = self.rng.choice(("0.0", "-inf", "neg_infty", "-2.0", "zero", "pos_infty", "1e30"))
        form = self.rng.randrange(4)
        if form == 0:
            return f"causal_mask({inner})"
        if form == 1:
            return f"causal_mask({inner}, {fill})"
        offsets = f"{self.index_expr(1)} * {self.size(rows)}, {self.index_expr(1)} * {self.size(cols)}"
        if self.chance(0.3):
            offsets = f"{self.index_expr(1)}, {self.index_expr(1)}"
        if form == 2:
            return f"causal_mask({inner}, {offsets})"
        return f"causal_mask({inner}, {offsets}, {fill})"

    def mma(self, cols: int, depth: int, acc: str | None = None) -> str:
        """An f32 [rows, cols] product: a is [rows, K] (or stored [K, rows]), b [K, cols] (or [cols, K]).

        `acc` is the accumulator's text; without it one is made up about half of the time."""
        dtype = str(weighted(self.rng, MMA_DTYPES))
        variant = self.rng.choice(("mma_AB", "mma_ABt", "mma_AtB", "mma_AtBt"))
        k = self.rng.choice([*self.cols, self.rows]) if self.chance(0.9) else int(weighted(self.rng, COL_WEIGHTS))
        if dtype == "fp8e4m3" and self.chance(0.9):
            variant = "mma_ABt"  # fp8 wgmma reads both operands K-major
            k = max(k, 32)  # and rows of 32 bytes at least
        if not self.loads_ok and self.chance(0.95):
            # no shared tiles to be had here: both operands come from registers, of the kernel's rows
            variant, k, dtype = "mma_AB", self.rows, dtype if dtype != "fp8e4m3" else "bf16"
        a_shape = (k, self.rows) if variant in ("mma_AtB", "mma_AtBt") else (self.rows, k)
        b_shape = (cols, k) if variant in ("mma_ABt", "mma_AtBt") else (k, cols)
        a = self.operand(dtype, a_shape, depth)
        b = self.operand(dtype, b_shape, depth)
        if acc is None and self.chance(0.55):
            acc = self.tile("f32", self.rows, cols, depth)
        return f"{variant}({a}, {b}, {acc})" if acc is not None else f"{variant}({a}, {b})"

    def operand(self, dtype: str, shape: tuple[int, int], depth: int) -> str:
        """An mma operand: a shared tile (loaded, or a let) or a register tile of the kernel's rows."""
        names = self.names_of(lambda t: t.is_tile and t.dtype == dtype and t.shape == shape)
        options: dict[str, float] = {}
        if names:
            options["name"] = 5
        if self.loads_ok:
            options["load"] = 4
        if shape[0] == self.rows and depth >= 0:
            options["convert"] = 1.5 if dtype != "fp8e4m3" else 0.1
        if not options:
            options["convert"] = 1
        choice = weighted(self.rng, options)
        if choice == "name":
            return self.rng.choice(names)
        if choice == "load":
            return self.load("st", dtype, shape)
        return f"{dtype}({self.tile('f32', shape[0], shape[1], max(depth, 0))})"

    def low_tile(self, dtype: str, rows: int, cols: int, depth: int) -> str:
        """A bf16/f16/fp8 tile: loaded, named, or converted from f32 (math on them is rare: rejected)."""
        names = self.names_of(lambda t: t.is_tile and t.dtype == dtype and t.shape == (rows, cols))
        options: dict[str, float] = {"convert": 2}
        if names:
            options["name"] = 4
        if self.loads_ok:
            options["load"] = 3
        if depth > 0:
            options["math"] = 0.1
        choice = weighted(self.rng, options)
        if choice == "name":
            return self.rng.choice(names)
        if choice == "load":
            return self.load(self.rng.choice(("rt", "st")), dtype, (rows, cols))
        if choice == "math":
            return f"({self.low_tile(dtype, rows, cols, depth - 1)} * 2.0)"
        return f"{dtype}({self.tile('f32', rows, cols, max(depth - 1, 0))})"

    def load(self, kind: str, dtype: str, shape: tuple[int, ...]) -> str:
        arg = self.arg_for(shape, dtype, output=False)
        dims = ", ".join(self.size(s) for s in shape)
        return f"load {arg.name}[{self.coords(arg, shape, kind)}] : {kind}<{dtype}>[{dims}]"

    def vec(self, dtype: str, length: int, axis: str, depth: int = 2) -> str:
        """A vector expression of `length` values, used as a row (or column) vector."""
        if dtype != "f32":
            names = self.names_of(lambda t: t.is_vec and t.dtype == dtype and t.shape == (length,))
            if names and self.chance(0.5):
                return self.rng.choice(names)
            if self.loads_ok and (self.chance(0.6) or axis == "row"):
                return self.load(self.rng.choice(("rv", "sv")), dtype, (length,))
            return f"{dtype}({self.vec('f32', length, axis, depth - 1)})"
        names = self.names_of(
            lambda t: t.is_vec and t.dtype == "f32" and t.shape == (length,) and t.axis in (axis, ""))
        options: dict[str, float] = {"fill": 0.7}
        if names:
            options["name"] = 6
        if self.loads_ok:
            options["load"] = 1.2
        if depth > 0:
            options.update(reduce=3, unary=1, binary=1.5, scalar=1, minmax=0.8, cumsum=0.4, position=0.3,
                           where=0.4, convert=0.3 if axis == "col" else 0.02)
        choice = weighted(self.rng, options)
        d = depth - 1
        if choice == "name":
            return self.rng.choice(names)
        if choice == "fill":
            return f"{self.rng.choice(FILLS)}<f32>[{self.size(length)}]"
        if choice == "load":
            if self.chance(0.5) or axis == "row" and self.chance(0.95):
                return self.load(self.rng.choice(("rv", "sv")), "f32", (length,))
            return f"f32({self.load(self.rng.choice(('rv', 'sv')), 'bf16', (length,))})"
        if choice == "reduce":
            fn = self.rng.choice(REDUCE_FNS)
            if axis == "row":
                if length != self.rows:
                    return f"zero<f32>[{self.size(length)}]"
                return f"row_{fn}({self.tile('f32', self.rows, self.rng.choice(self.cols), d)})"
            return f"col_{fn}({self.tile('f32', self.rows, length, d)})"
        if choice == "unary":
            return f"{self.rng.choice(UNARY)}({self.vec('f32', length, axis, d)})"
        if choice == "binary":
            op = self.rng.choice(("+", "-", "*", "/"))
            return f"({self.vec('f32', length, axis, d)} {op} {self.vec('f32', length, axis, d)})"
        if choice == "scalar":
            return f"({self.vec('f32', length, axis, d)} {self.rng.choice(('*', '+', '-'))} {self.scalar_operand()})"
        if choice == "minmax":
            return f"{self.rng.choice(('max', 'min'))}({self.vec('f32', length, axis, d)}, {self.vec('f32', length, axis, d)})"
        if choice == "where":
            compare = self.rng.choice(("<", ">", ">=", "!="))
            condition = f"({self.vec('f32', length, axis, d)} {compare} {self.scalar_operand()})"
            branches = [self.vec("f32", length, axis, d) if self.chance(0.7) else self.scalar_operand() for _ in range(2)]
            return f"where({condition}, {branches[0]}, {branches[1]})"
        if choice == "cumsum":
            if self.chance(0.3):
                return f"f32(cumsum({self.vec('bf16', length, axis, d)}))"
            return f"cumsum({self.vec('f32', length, axis, d)})"
        if choice == "position":
            fn = self.rng.choice(("row_index", "col_index"))
            shape = self.vec("f32", length, axis, d) if self.chance(0.5) else f"zero<f32>[{self.size(length)}]"
            return f"{fn}({shape}, {self.index_expr(1)} * {self.size(length)})"
        return f"f32({self.vec('bf16', length, axis, d)})"

    def col_vec(self, length: int) -> str:
        """A column vector that the backend can tell is one: it comes from a column reduction."""
        text = f"col_{self.rng.choice(REDUCE_FNS)}({self.tile('f32', self.rows, length, 1)})"
        if self.chance(0.3):
            text = f"({text} {self.rng.choice(('+', '*', '-'))} {self.vec('f32', length, 'col', 1)})"
        return text

    def expr_of(self, ty: Ty, depth: int = 2) -> str:
        if ty.is_tile:
            return self.tile(ty.dtype, ty.shape[0], ty.shape[1], depth)
        if ty.is_vec:
            return self.vec(ty.dtype, ty.shape[0], ty.axis or "row", depth)
        return {"index": self.index_expr, "f32": self.f32_expr, "bool": self.bool_expr}[ty.kind](depth)

    # ------------------------------------------------------------------ statements

    def register_tile_ty(self) -> Ty:
        return Ty("rt", "f32", (self.rows, self.rng.choice(self.cols)))

    def random_ty(self) -> Ty:
        r = self.rng.random()
        if r < 0.55:
            return self.register_tile_ty()
        if r < 0.75:
            axis = "row" if self.chance(0.7) else "col"
            length = self.rows if axis == "row" else self.rng.choice(self.cols)
            return Ty("rv", "f32", (length,), axis)
        if r < 0.85:
            return Ty("rt", str(weighted(self.rng, MMA_DTYPES)), (self.rows, self.rng.choice(self.cols)))
        return Ty(self.rng.choice(("index", "f32", "bool")))

    def let_stmt(self, ty: Ty | None = None) -> None:
        ty = ty or self.random_ty()
        name = self.fresh("x")
        if ty.is_tile and self.loads_ok and self.chance(0.35):
            # a named load, the form @swizzle applies to
            kind = self.rng.choice(("st", "st", "rt"))
            dtype = ty.dtype if self.chance(0.5) else str(weighted(self.rng, MMA_DTYPES))
            shape = (self.rng.choice([*self.cols, self.rows]), self.rng.choice([*self.cols, self.rows]))
            if self.chance(0.5):
                shape = (self.rows, shape[1])
            if kind == "st" and self.chance(0.2):
                self.emit(f"@swizzle({self.rng.choice((128, 64, 32, 0, 128))})")
            self.emit(f"let {name} = {self.load(kind, dtype, shape)}")
            self.declare(name, Ty(kind, dtype, shape))
            return
        self.emit(f"let {name} = {self.col_vec(ty.shape[0]) if ty.axis == 'col' else self.expr_of(ty)}")
        self.declare(name, ty if not ty.is_tile else Ty("rt", ty.dtype, ty.shape))

    def var_stmt(self, ty: Ty | None = None) -> str:
        ty = ty or self.random_ty()
        if ty.is_tile:
            ty = Ty("rt", "f32", ty.shape) if self.chance(0.85) else Ty("rt", ty.dtype, ty.shape)
        name = self.fresh("v")
        init = {"index": lambda: self.rng.choice(("0", "1", self.index_expr(1))),
                "f32": lambda: self.rng.choice(("0.0", "1.0", self.f32_expr(1))),
                "bool": lambda: self.rng.choice(("false", "true", self.bool_expr(1)))}
        if ty.kind in init:
            text = init[ty.kind]()
        elif ty.is_tile and ty.dtype == "f32" and self.chance(0.6):
            text = f"{self.rng.choice(('zero', 'zero', 'neg_infty', 'one'))}<f32>[{self.size(ty.shape[0])}, {self.size(ty.shape[1])}]"
        elif ty.is_vec and self.chance(0.6):
            text = f"{self.rng.choice(('zero', 'neg_infty', 'pos_infty'))}<f32>[{self.size(ty.shape[0])}]"
        elif ty.axis == "col":
            text = self.col_vec(ty.shape[0])
        else:
            text = self.expr_of(ty, 1)
            shared = self.visible().get(text, Binding(ty, False)).ty.kind in ("st", "sv")
            if (ty.is_tile or ty.is_vec) and (text.startswith("load ") or shared):
                text = f"{ty.dtype}({text})"  # a var holds registers: move a shared tile there
        self.emit(f"var {name} = {text}")
        self.declare(name, ty, mutable=True)
        return name

    def update(self, name: str) -> None:
        """Assign the var `name` an expression of its type, usually one that reads it."""
        ty = self.visible()[name].ty
        if ty.is_tile and ty.dtype == "f32":
            r = self.rng.random()
            rows, cols = ty.shape
            if r < 0.4 and rows == self.rows:
                # accumulate into the var itself, the shape of every GEMM loop
                acc = name if self.chance(0.8) else f"mul_row({name}, {self.vec('f32', rows, 'row', 1)})"
                self.emit(f"{name} = {self.mma(cols, 1, acc if self.chance(0.85) else None)}")
            elif r < 0.6:
                self.emit(f"{name} {self.rng.choice(('+=', '-=', '*=', '/='))} {self.tile('f32', rows, cols, 1)}")
            elif r < 0.7:
                self.emit(f"{name} {self.rng.choice(('*=', '+='))} {self.scalar_operand()}")
            else:
                self.emit(f"{name} = {self.tile('f32', rows, cols, 2)}")
        elif ty.is_vec and ty.dtype == "f32":
            length, axis = ty.shape[0], ty.axis or "row"
            r = self.rng.random()
            if r < 0.35 and axis == "row" and length == self.rows:
                fn = self.rng.choice(("max", "min"))
                self.emit(f"{name} = {fn}({name}, row_{fn}({self.tile('f32', self.rows, self.rng.choice(self.cols), 1)}))")
            elif axis == "col":
                fn = self.rng.choice(("max", "min", "+"))
                reduced = self.col_vec(length)
                self.emit(f"{name} = {fn}({name}, {reduced})" if fn != "+" else f"{name} += {reduced}")
            elif r < 0.55:
                self.emit(f"{name} += {self.vec('f32', length, axis, 2)}")
            else:
                self.emit(f"{name} = {self.vec('f32', length, axis, 2)}")
        elif ty.kind == "index":
            self.emit(self.rng.choice((f"{name} += 1", f"{name} = {name} + {self.index_expr(1)}",
                                       f"{name} = {self.index_expr(2)}")))
        elif ty.kind == "f32":
            self.emit(self.rng.choice((f"{name} += {self.f32_expr(1)}", f"{name} = {self.f32_expr(2)}",
                                       f"{name} *= 0.5")))
        elif ty.kind == "bool":
            self.emit(f"{name} = {self.rng.choice((f'{name} or ', f'{name} and ', ''))}{self.bool_expr(1)}")
        else:
            self.emit(f"{name} = {self.expr_of(ty, 1)}")

    def mutable_names(self) -> list[str]:
        return [n for n, b in self.visible().items() if b.mutable]

    def updates(self, count: int) -> None:
        names = self.mutable_names()
        for _ in range(count):
            if names:
                self.update(self.rng.choice(names))

    def store_stmt(self, ty: Ty | None = None, value: str | None = None) -> None:
        """Store a tile or vector to an output tensor (converting to its dtype), or add it there
        (store_add, which takes f32 and bf16 tensors)."""
        if ty is None:
            stored = [(n, b.ty) for n, b in self.visible().items() if (b.ty.is_tile or b.ty.is_vec)]
            if stored and self.chance(0.8):
                value, ty = self.rng.choice(stored)
            else:
                ty = self.register_tile_ty() if self.chance(0.8) else Ty("rv", "f32", (self.rows,), "row")
        out_dtype = ty.dtype if ty.dtype != "fp8e4m3" or self.chance(0.3) else "bf16"
        if ty.dtype == "f32" and self.chance(0.5) and (ty.is_tile or self.chance(0.05)):
            out_dtype = self.rng.choice(("bf16", "bf16", "f16"))
        if value is None and ty.axis == "col":
            value = self.col_vec(ty.shape[0])
        elif value is None:
            value = self.expr_of(Ty(ty.kind, "f32", ty.shape, ty.axis) if ty.dtype == "f32" else ty, 2)
        if out_dtype != ty.dtype:
            value = f"{out_dtype}({value})"
        shape = ty.shape
        arg = self.arg_for(shape, out_dtype, output=True)
        verb = "store_add" if out_dtype in ("f32", "bf16") and self.chance(0.15) else "store"
        self.emit(f"{verb} {arg.name}[{self.coords(arg, shape)}] = {value}")

    def if_stmt(self, allow_loads: bool = False) -> None:
        saved = self.loads_ok
        self.loads_ok = self.loads_ok and allow_loads
        cond = self.runtime_cond() if self.chance(0.85) else self.rng.choice(
            [n for n, v in self.param_values.items() if type(v) is bool] or ["true"])
        self.emit(f"if {cond} {{")
        self.block(self.branch_body)
        if self.chance(0.4):
            if self.chance(0.3):
                self.lines[-1] += f" else if {self.runtime_cond()} {{"
                self.block(self.branch_body)
            if self.chance(0.7):
                self.lines[-1] += " else {"
                self.block(self.branch_body)
        self.loads_ok = saved

    def branch_body(self) -> None:
        for _ in range(self.rng.randint(1, 2)):
            r = self.rng.random()
            if r < 0.6 and self.mutable_names():
                self.updates(1)
            elif r < 0.8:
                self.let_stmt()
            else:
                self.store_stmt()

    def block(self, body) -> None:
        """Run `body` one level deeper, in a new scope, and close the brace."""
        self.indent += 1
        self.scopes.append({})
        try:
            body()
        finally:
            self.scopes.pop()
            self.indent -= 1
        self.emit("}")

    def loop_header(self, top_level: bool) -> str:
        taken = set(self.loop_names) | set(self.visible())
        name = next((n for n in LOOP_NAMES if n not in taken), self.fresh("k"))
        dim = self.symbolic_dim()
        self.need_dim(dim)
        size = self.size(self.rng.choice(self.cols))
        r = self.rng.random()
        if self.table_names and self.chance(0.4):
            hi = f"{self.rng.choice(self.table_names)} + {self.rng.randint(1, 4)}"
        elif r < 0.55:
            hi = f"{dim} / {size}"
        elif r < 0.7 and self.grid_names:
            hi = f"({self.grid_names[0]} + 1) * {self.size(self.rows)} / {size}"
        elif r < 0.8:
            hi = str(self.rng.randint(1, 8))
        elif r < 0.9:
            hi = f"min({dim} / {size}, {self.rng.randint(1, 16)})"
        else:
            hi = self.index_expr(2)
        lo = "0" if self.chance(0.85) else self.rng.choice(("1", self.index_expr(1)))
        if top_level and self.chance(0.25):
            self.emit(f"@stages({self.rng.choice((1, 2, 3, 4, 2, 3, 6, 8))})")
        if self.chance(0.04):
            self.emit(f"@overlap({self.rng.choice((0, 1))})")
        self.emit(f"for {name} in {lo} .. {hi} {{")
        return name

    def for_stmt(self, top_level: bool) -> None:
        name = self.loop_header(top_level)
        saved = self.loads_ok
        self.loads_ok = top_level or (saved and self.chance(0.3))

        def body() -> None:
            self.loop_names.append(name)
            try:
                self.loop_body(top_level)
            finally:
                self.loop_names.pop()

        self.block(body)
        self.loads_ok = saved

    def loop_body(self, top_level: bool) -> None:
        if self.loads_ok:
            for _ in range(self.rng.randint(0, 3)):
                self.let_stmt(Ty("rt", self.rng.choice(("f32", "bf16")), (self.rows, self.rng.choice(self.cols))))
        if self.chance(0.2):
            self.var_stmt()
        self.updates(self.rng.randint(1, 3))
        if self.chance(0.25):
            self.if_stmt(allow_loads=self.chance(0.3))
        if self.chance(0.15) and self.indent < 5:
            self.for_stmt(top_level=False)
        if self.chance(0.2):
            self.store_stmt()
        if not self.mutable_names() or self.chance(0.3):
            self.updates(1)

    # ------------------------------------------------------------------ the kernel

    def grid_stmt(self) -> None:
        axes = self.rng.choices((1, 2, 3), weights=(4, 4, 2))[0]
        names = list(GRID_NAMES[:axes])
        extents = []
        for axis in range(axes):
            if axis == 0 or self.chance(0.5):
                dim = self.rng.choice(SYMBOLIC_DIMS)
                size = self.size(self.rows if axis == 0 else self.rng.choice(self.cols))
                r = self.rng.random()
                if r < 0.75:
                    extent = f"{dim} / {size}"
                elif r < 0.9:
                    extent = f"({dim} + {size} - 1) / {size}"
                else:
                    extent = f"min({dim} / {size}, {self.rng.randint(1, 64)})"
            elif self.chance(0.7):
                dim = self.batch_dim()
                extent = dim if self.chance(0.8) else f"2 * {dim}"
            else:
                dim, extent = None, str(self.rng.randint(1, 8))
            if dim is not None:
                self.need_dim(dim)
            extents.append(extent)
        self.emit(f"grid ({', '.join(extents)}) as ({', '.join(names)})")
        self.grid_names = names
        if self.chance(0.2):
            self.require_stmt()

    def require_stmt(self) -> None:
        """A condition on the dims: a multiple (which removes masks), a bound, or both."""
        dim = self.rng.choice(SYMBOLIC_DIMS)
        self.need_dim(dim)
        multiple = f"{dim} % {self.size(self.rng.choice(self.cols))} == 0"
        bound = f"{dim} {self.rng.choice(('>=', '<', '!='))} {self.rng.randint(0, 4096)}"
        self.emit("require " + self.rng.choice((multiple, bound, f"{multiple} and {bound}", f"not ({bound}) or {multiple}")))

    def kernel_annotations(self) -> list[str]:
        out = []
        if self.chance(0.12):
            fits = [n for n in (1, 2, 3, 4) if self.rows % (64 * n) == 0]
            out.append(f"@consumers({self.rng.choice(fits) if fits and self.chance(0.9) else self.rng.randint(1, 4)})")
        if self.chance(0.08):
            out.append(f"@registers({self.rng.choice(((40, 232), (24, 240), (56, 224), (32, 160), (40, 256)))[0]}, "
                       f"{self.rng.choice((232, 240, 224, 160, 256))})")
        if self.chance(0.12):
            out.append("@persistent")
            if self.chance(0.15):
                out.append(f"@cluster({self.rng.choice((2, 2, 4))})")
        elif self.chance(0.01):
            out.append(f"@cluster({self.rng.choice((2, 4))})")
        if self.chance(0.06):
            out.append(f"@heavy_first({self.rng.choice((0, 1))})")
        if self.chance(0.05):
            out.append(f"@stream_k({self.rng.choice((0, 1))})")
        if self.chance(0.2):
            out.append("@schedule_wgmma(1)")  # off by default: the generated kernels exercise it here
        self.rng.shuffle(out)
        return out

    def table_stmt(self) -> None:
        """A scalar read from an i32 tensor at a grid index wrapped into it (a tile table, as
        varlen attention and gathers read one): an index that trip counts (`loop_header`) and
        other index expressions then use. The harness fills i32 tensors with zeros."""
        dim = self.symbolic_dim()
        axis = self.rng.choice(self.grid_names)
        taken = {a.name for a in self.args}
        arg_name = next((n for n in ARG_NAMES if n not in taken), f"T{len(self.args)}")
        columns = self.rng.choice((0, 2, 3))
        dims, fixed = ([dim, str(columns)], [None, columns]) if columns else ([dim], [None])
        self.args.append(Arg(arg_name, "i32", dims, fixed, False))
        for _ in range(self.rng.randint(1, max(1, columns))):
            name = self.fresh("n")
            column = f", {self.rng.randrange(columns)}" if columns else ""
            self.emit(f"let {name} = load {arg_name}[{axis} % {dim}{column}] : i32")
            self.declare(name, Ty("index"))
            self.table_names.append(name)

    def write(self) -> str:
        annotations = self.kernel_annotations()
        self.grid_stmt()
        if self.grid_names and self.chance(0.12):
            self.table_stmt()
        for _ in range(self.rng.randint(0, 2)):
            self.let_stmt()
        for _ in range(self.rng.choices((0, 1, 2, 3), weights=(1, 4, 3, 2))[0]):
            self.var_stmt()
        for _ in range(self.rng.choices((0, 1, 2), weights=(2, 6, 2))[0]):
            self.for_stmt(top_level=True)
        if self.chance(0.2):
            self.if_stmt(allow_loads=self.chance(0.3))
        if self.chance(0.3):
            self.let_stmt()
        stored = self.mutable_names()
        self.rng.shuffle(stored)
        for name in stored[: self.rng.randint(1, 2)]:
            ty = self.visible()[name].ty
            if ty.is_tile or ty.is_vec:
                self.store_stmt(ty, name if self.chance(0.7) else None)
        if not any(line.strip().startswith("store") for line in self.lines):
            self.store_stmt()
        self.cover_dims()
        self.vary_layout()
        params = ", ".join(f"{n} = {d}" for n, d in self.params)
        args = ", ".join(a.declaration() for a in self.args)
        head = [*annotations, f"kernel {self.name}<{params}>({args}) {{"]
        return "\n".join([*head, *self.lines, "}"]) + "\n"

    def vary_layout(self) -> None:
        """Now and then a `;` after a statement or a comment at the end of a line: the lexer's share."""
        for n, line in enumerate(self.lines):
            text = line.strip()
            if text.endswith(("{", "}")) or text.startswith("@"):
                continue
            if self.chance(0.04):
                self.lines[n] += ";"
            if self.chance(0.03):
                self.lines[n] += "  // " + self.rng.choice(("acc", "note: x < y", "{ }", "@stages(2)", ""))

    def cover_dims(self) -> None:
        """Symbolic dims the code names but no argument has get one more (unused) argument."""
        have = {d for a in self.args for d in a.dims}
        missing = [d for d in self.dims_needed if d not in have]
        if missing:
            taken = {a.name for a in self.args}
            name = next((n for n in ARG_NAMES if n not in taken), f"T{len(self.args)}")
            self.args.append(Arg(name, "f32", missing[:5], [None] * len(missing[:5]), False))
            for start in range(5, len(missing), 5):
                self.args.append(Arg(f"{name}{start}", "f32", missing[start:start + 5], [None] * 5, False))


def generate(rng: random.Random, origin: str = "") -> Case:
    """One generated file and its command line: usually one kernel, sometimes two with -k."""
    count = 2 if rng.random() < 0.08 else 1
    names = rng.sample(("gemm", "attn", "fused", "k", "kern", "norm", "main"), count)
    kernel = None
    if count > 1 and rng.random() < 0.85 or count == 1 and rng.random() < 0.2:
        kernel = rng.choice(names)
    # -D BM=...: the kernel compiled (the only one, or the one -k names) is written for the override
    override = rng.random() < 0.1 and (count == 1 or kernel is not None)
    target = kernel or names[0]
    writers = [KernelWriter(rng, name, override and name == target) for name in names]
    source = "\n".join(w.write() for w in writers)
    if rng.random() < 0.3 and origin:
        source = f"// generated: {origin}\n" + source
    defines = list(writers[names.index(target)].defines)
    bools = [n for n, v in writers[names.index(target)].param_values.items() if type(v) is bool]
    if bools and rng.random() < 0.2:
        defines.append(f"{bools[0]}={rng.choice(('true', 'false', '0', '1'))}")
    return Case(source, kernel, tuple(defines), origin)


if __name__ == "__main__":
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    case = generate(random.Random(seed), f"gen:{seed}")
    print(case.source, end="")
    print(f"// tkc compile FILE {' '.join(case.options())}")
