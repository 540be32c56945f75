// tile-vector-layout on hand-written tile IR: the vectors a column broadcast reads (w, and the
// values it is computed from: the loaded and converted v) and a column reduction makes (sums,
// carried through the loop as acc/next/total, from the fill zero) become `!tile.rv<N, col>`;
// a row reduction's vector stays a row vector. The kernel records how many it retyped; a
// second run changes nothing.
// RUN: tkc-opt %s -p tile-vector-layout | filecheck %s
// RUN: tkc-opt %s -p tile-vector-layout -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-vector-layout | diff %t.once.mlir -
// canonicalize after it keeps the layouts: max(x * 2) becomes max(x) * 2, a column vector still.
// RUN: tkc-opt %S/Inputs/scaled-column-sum.mlir -p tile-vector-layout,canonicalize | filecheck %s --check-prefix=CANON
// A vector broadcast both over columns and over rows keeps the layout of its first broadcast (a
// tie: one move either way) and is transposed once, right after its definition, for the
// broadcasts that read it the other way, whichever layout comes first (v: column, w: row); a
// second run adds no transpose. A fill read both ways is no such vector: each use gets its own
// fill, in its own layout, and nothing is transposed.
// A vector whose cumsum and sum the lowering computes in the column layout is a column vector
// when that needs fewer moves (cs: one transpose for its row broadcast, not three); a row
// reduction's vector stays a row vector and its cumsum moves (r).
// RUN: tkc-opt %S/Inputs/vector-scans.mlir -p tile-vector-layout | filecheck %s --check-prefix=SCANS
// RUN: tkc-opt %S/Inputs/vector-both-ways.mlir -p tile-vector-layout | filecheck %s --check-prefix=BOTH
// RUN: tkc-opt %S/Inputs/vector-both-ways.mlir -p tile-vector-layout,tile-vector-layout | filecheck %s --check-prefix=BOTH
// RUN: tkc-opt %S/Inputs/vector-shared-fill.mlir -p tile-vector-layout | filecheck %s --check-prefix=FILL
// Two reductions that make one vector (a var) in both layouts: the second is transposed to the first's layout.
// RUN: tkc-opt %S/Inputs/vector-two-reductions.mlir -p tile-vector-layout | filecheck %s --check-prefix=TWO

builtin.module {
  tile.kernel @norm(%X: !tile.gl<[M, N], f32>, %V: !tile.gl<[N], bf16>, %Y: !tile.gl<[M, N], f32>, %S: !tile.gl<[M], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.divui %M, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %vs = tile.load %V[%c0] : !tile.gl<[N], bf16> -> !tile.sv<64xbf16>
    %vr = tile.to_reg %vs : !tile.sv<64xbf16> -> !tile.rv<64xbf16>
    %v = tile.convert %vr : !tile.rv<64xbf16> -> !tile.rv<64xf32>
    %two = arith.constant 2.000000e+00 : f32
    %w = tile.binary mul %v, %two : !tile.rv<64xf32>, f32 -> !tile.rv<64xf32>
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rv<64xf32>
    %xs = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %total = scf.for %k = %c0 to %c1 step %c1 iter_args(%acc = %zero) -> (!tile.rv<64xf32>) {
      %sums = tile.reduce sum col %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %next = tile.binary add %acc, %sums : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      scf.yield %next : !tile.rv<64xf32>
    }
    %y = tile.broadcast add col %x, %w : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %z = tile.broadcast sub col %y, %total : !tile.rt<64x64xf32>, !tile.rv<64xf32>
    %rowsum = tile.reduce sum row %z : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
    tile.store %z, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.store %rowsum, %S[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
    tile.return
  }
}

// CHECK:      tile.kernel @norm({{.*}}) attributes {column_vectors = #tile.decision<8, "vectors a column broadcast reads
// CHECK:        %vr = tile.to_reg %vs : !tile.sv<64xbf16> -> !tile.rv<64xbf16, col>
// CHECK-NEXT:   %v = tile.convert %vr : !tile.rv<64xbf16, col> -> !tile.rv<64xf32, col>
// CHECK:        %w = tile.binary mul %v, %two : !tile.rv<64xf32, col>, f32 -> !tile.rv<64xf32, col>
// CHECK-NEXT:   %zero = tile.fill 0.000000e+00 : f32 : !tile.rv<64xf32, col>
// CHECK:        %total = scf.for %k = %c0 to %c1 step %c1 iter_args(%acc = %zero) -> (!tile.rv<64xf32, col>) {
// CHECK-NEXT:     %sums = tile.reduce sum col %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32, col>
// CHECK-NEXT:     %next = tile.binary add %acc, %sums : !tile.rv<64xf32, col>, !tile.rv<64xf32, col> -> !tile.rv<64xf32, col>
// CHECK-NEXT:     scf.yield %next : !tile.rv<64xf32, col>
// CHECK:        %y = tile.broadcast add col %x, %w : !tile.rt<64x64xf32>, !tile.rv<64xf32, col>
// CHECK-NEXT:   %z = tile.broadcast sub col %y, %total : !tile.rt<64x64xf32>, !tile.rv<64xf32, col>
// CHECK-NEXT:   %rowsum = tile.reduce sum row %z : !tile.rt<64x64xf32> -> !tile.rv<64xf32>{{$}}
// CHECK:        tile.store %rowsum, %S[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>

// CANON:      %r = tile.reduce max col %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32, col>
// CANON-NEXT: %r_1 = tile.binary mul %r, %two : !tile.rv<64xf32, col>, f32 -> !tile.rv<64xf32, col>
// CANON-NEXT: %y = tile.broadcast sub col %x, %r_1 : !tile.rt<64x64xf32>, !tile.rv<64xf32, col>

// BOTH:      %v = tile.to_reg %vs : !tile.sv<64xf32> -> !tile.rv<64xf32, col>
// BOTH-NEXT: %[[T:.*]] = tile.transpose %v {layout_change = "tile.broadcast col at line 13 reads it first, and tile.broadcast row at line 14 reads it per row"} : !tile.rv<64xf32, col> -> !tile.rv<64xf32>
// BOTH-NEXT: %y = tile.broadcast add col %x, %v : !tile.rt<64x64xf32>, !tile.rv<64xf32, col>
// BOTH-NEXT: %z = tile.broadcast mul row %y, %[[T]] : !tile.rt<64x64xf32>, !tile.rv<64xf32>
// BOTH:      %w = tile.to_reg %ws : !tile.sv<64xf32> -> !tile.rv<64xf32>{{$}}
// BOTH-NEXT: %[[U:.*]] = tile.transpose %w {layout_change = "tile.broadcast row at line 17 reads it first, and tile.broadcast col at line 18 reads it per column"} : !tile.rv<64xf32> -> !tile.rv<64xf32, col>
// BOTH-NEXT: %a = tile.broadcast add row %z, %w : !tile.rt<64x64xf32>, !tile.rv<64xf32>
// BOTH-NEXT: %b = tile.broadcast sub col %a, %[[U]] : !tile.rt<64x64xf32>, !tile.rv<64xf32, col>
// BOTH-NOT:  tile.transpose

// FILL:      %v = tile.fill 1.000000e+00 : f32 : !tile.rv<64xf32>{{$}}
// FILL-NEXT: %[[C:.*]] = tile.fill 1.000000e+00 : f32 : !tile.rv<64xf32, col>
// FILL-NEXT: %y = tile.broadcast add col %x, %[[C]] : !tile.rt<64x64xf32>, !tile.rv<64xf32, col>
// FILL-NEXT: %z = tile.broadcast mul row %y, %v : !tile.rt<64x64xf32>, !tile.rv<64xf32>
// FILL-NOT:  tile.transpose

// TWO:      %r = tile.reduce sum row %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
// TWO:      %c = tile.reduce sum col %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32, col>
// TWO-NEXT: %[[T:.*]] = tile.transpose %c {layout_change = "tile.reduce row at line 12 makes a row vector that tile.reduce col at line 14 meets: its result is moved to the row layout once"} : !tile.rv<64xf32, col> -> !tile.rv<64xf32>
// TWO-NEXT: scf.yield %[[T]] : !tile.rv<64xf32>

// SCANS:      %cs = tile.cumsum %v : !tile.rv<64xf32, col>
// SCANS-NEXT: %[[ROWS:.*]] = tile.transpose %cs {layout_change = "tile.cumsum at line 11 computes it in the column layout, which needs the fewest moves, and tile.broadcast row at line 18 reads it per row"} : !tile.rv<64xf32, col> -> !tile.rv<64xf32>
// SCANS-NEXT: %total = tile.vector_reduce sum %cs : !tile.rv<64xf32, col>
// SCANS:      %r = tile.reduce sum row %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32>{{$}}
// SCANS-NEXT: %rs = tile.cumsum %r : !tile.rv<64xf32>{{$}}
// SCANS:      tile.broadcast add row %{{.*}}, %[[ROWS]] : !tile.rt<64x64xf32>, !tile.rv<64xf32>{{$}}
// SCANS-NEXT: tile.broadcast sub col %{{.*}}, %cs : !tile.rt<64x64xf32>, !tile.rv<64xf32, col>
// SCANS-NEXT: tile.broadcast add row %{{.*}}, %rs : !tile.rt<64x64xf32>, !tile.rv<64xf32>{{$}}
