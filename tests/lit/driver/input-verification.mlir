// IR input is parsed and verified before any pass, at every stage: each mistake is reported at
// the line of its op in this file, with a caret, and exits 1.
// RUN: tkc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: sed '/^\/\/ -----/,$d' %s > %t.first.mlir
// RUN: sh -c 'tkc compile %t.first.mlir --emit=ptx 2>&1; echo "exit $?"' | filecheck %s --check-prefix=EXIT

// A value used above its definition (two lines swapped).
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %g = arith.divui %m, %c64 : index
    %c64 = arith.constant 64 : index
    tile.grid(%g) as ["i"]
    tile.return
  }
}
// CHECK: input-verification.mlir:[[# @LINE - 6]]:5: error: arith.divui uses %c64 before its definition (line [[# @LINE - 5]])
// CHECK-NEXT: {{^}}    %g = arith.divui %m, %c64 : index
// CHECK-NEXT: {{^    \^$}}
// EXIT: first.mlir:11:5: error: arith.divui uses %c64 before its definition (line 12)
// EXIT-NEXT: %g = arith.divui
// EXIT-NEXT: ^
// EXIT-NEXT: exit 1

// -----

// A grid axis the grid does not have.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    %j = tile.block_id 1
    tile.return
  }
}
// CHECK: input-verification.mlir:[[# @LINE - 4]]:5: error: invalid tile.block_id: axis 1 is not an axis of the 1-D grid

// -----

// A type whose own verifier rejects it while it is parsed.
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    tile.grid(%m) as ["i"]
    %x = tile.fill 0.000000e+00 : f32 : !tile.rt<64x40xf32>
    tile.return
  }
}
// CHECK: input-verification.mlir:[[# @LINE - 4]]:5: error: tile.rt dimensions must be positive multiples of 16, got (64, 40)

// -----

// An sm90 kernel whose launch contract is damaged (cut short), and one that names a dim no
// argument has.
builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [dim_N = dim N], grid [1, 1> {
    sm90.sync_block
  }
}
// CHECK: input-verification.mlir:[[# @LINE - 4]]:123: error: ']' expected

// -----

builtin.module {
  sm90.kernel @k threads 256 : i32 smem 0 : i32 min_ctas 1 : i32 abi <args [X: f32[N]], params [dim_M = dim M], grid [1, 1, 1]> {
    sm90.sync_block
  }
}
// CHECK: input-verification.mlir:[[# @LINE - 4]]:3: error: sm90.abi: parameter 'dim_M' names no dim 'M' of the arguments
