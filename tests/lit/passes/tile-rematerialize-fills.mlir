// tile-rematerialize on hand-written tile IR: one zero fill (CSE's merge of `zero<f32>[..]` stored
// before the loop and the one a `var` in the loop starts from) is filled again right before its use
// in the loop, with the reason; the store in its own block keeps the original. In @after, the
// fill a loop starts its accumulator from is also read after the loop (CSE merged the two
// `zero<f32>[..]`): that use is filled again, so the estimate does not hold the fill across the
// loop beside the accumulator (a fused cross-entropy was refused for 64 registers it never
// needed); the loop keeps the original. In @positions, a position tile made before a loop and
// compared in it is computed again there (a newcomer's `let rows = row_index(x)` was refused for
// 418 registers). A second run changes nothing.
// RUN: tkc-opt %s -p tile-rematerialize | filecheck %s
// RUN: tkc-opt %s -p tile-rematerialize -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-rematerialize | diff %t.once.mlir -

builtin.module {
  tile.kernel @z(%A: !tile.gl<[M, K], bf16>, %B: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    tile.grid(%c1) as ["i"]
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<128x128xf32>
    tile.store %zero, %C[%c0, %c0] : !tile.rt<128x128xf32>, !tile.gl<[M, N], f32>
    scf.for %c = %c0 to %c2 step %c1 {
      %part = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (!tile.rt<128x128xf32>) {
        %a = tile.load %A[%c0, %k] : !tile.gl<[M, K], bf16> -> !tile.st<128x64xbf16>
        %b = tile.load %B[%k, %c0] : !tile.gl<[K, N], bf16> -> !tile.st<64x128xbf16>
        %next = tile.mma %a, %b, %acc : !tile.st<128x64xbf16>, !tile.st<64x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
        scf.yield %next : !tile.rt<128x128xf32>
      }
      tile.store reduce add %part, %C[%c0, %c0] : !tile.rt<128x128xf32>, !tile.gl<[M, N], f32>
    }
    tile.return
  }
  tile.kernel @after(%A: !tile.gl<[M, K], bf16>, %B: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    tile.grid(%c1) as ["i"]
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<128x128xf32>
    %s = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (!tile.rt<128x128xf32>) {
      %a = tile.load %A[%c0, %k] : !tile.gl<[M, K], bf16> -> !tile.st<128x64xbf16>
      %b = tile.load %B[%k, %c0] : !tile.gl<[K, N], bf16> -> !tile.st<64x128xbf16>
      %next = tile.mma %a, %b, %acc : !tile.st<128x64xbf16>, !tile.st<64x128xbf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
      scf.yield %next : !tile.rt<128x128xf32>
    }
    %sum = tile.binary add %s, %zero : !tile.rt<128x128xf32>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
    tile.store %sum, %C[%c0, %c0] : !tile.rt<128x128xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
  tile.kernel @positions(%C: !tile.gl<[M, N], f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    tile.grid(%c1) as ["i"]
    %rows = tile.position row %c0 : !tile.rt<64x128xf32>
    %init = tile.fill 0.000000e+00 : f32 : !tile.rt<64x128xf32>
    %s = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (!tile.rt<64x128xf32>) {
      %next = tile.binary add %acc, %rows : !tile.rt<64x128xf32>, !tile.rt<64x128xf32> -> !tile.rt<64x128xf32>
      scf.yield %next : !tile.rt<64x128xf32>
    }
    tile.store %s, %C[%c0, %c0] : !tile.rt<64x128xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}

// CHECK:      %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<128x128xf32>
// CHECK-NEXT: tile.store %zero, %C
// CHECK:      scf.for %c =
// CHECK-NEXT:   %[[AGAIN:.*]] = tile.fill 0.000000e+00 : f32 {rematerialized = "used inside a loop or an if (by scf.for), so kept in registers it would live across the whole of it; filled again at each use there"} : !tile.rt<128x128xf32>
// CHECK-NEXT:   %part = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %[[AGAIN]])

// CHECK-LABEL: tile.kernel @after
// CHECK:      %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<128x128xf32>
// CHECK-NEXT: %s = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %zero)
// CHECK:      %[[AFTER:.*]] = tile.fill 0.000000e+00 : f32 {rematerialized = "used after the scf.for at line {{[0-9]+}} (by tile.binary), so kept in registers it would live across the whole of it; filled again at each use there"} : !tile.rt<128x128xf32>
// CHECK-NEXT: %sum = tile.binary add %s, %[[AFTER]]

// CHECK-LABEL: tile.kernel @positions
// CHECK-NOT:  tile.position
// CHECK:      scf.for %k =
// CHECK-NEXT:   %[[ROWS:.*]] = tile.position row %c0 {rematerialized = "used inside a loop or an if (by tile.binary), so kept in registers it would live across the whole of it; computed again at each use there"} : !tile.rt<64x128xf32>
// CHECK-NEXT:   %next = tile.binary add %acc, %[[ROWS]]
