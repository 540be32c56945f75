// tile-sweep-order on hand-written tile IR. @two_sweeps: the second loop loads the tiles of X the
// first read, in the same walk, and stores only Y[i, j] (one tile per iteration): it walks
// backwards, its counter read as (lb + ub - 1) - r; a third sweep over X then walks forwards again,
// starting where the second ended. @order_shows: a loop that stores X[i, j + 1] and loads X[i, j]
// (the next iteration reads what this one wrote) stays forwards, and says why; a loop with other
// bounds than the loop before it is left alone. @hand_edited: a loop whose `sweep` claims a
// reversal its body does not start with has an unknown walk, so the loop after it is left alone
// (it was an internal error). @under_if: a re-read under an `if` counts too. A second run changes
// nothing.
// RUN: tkc-opt %s -p tile-sweep-order | filecheck %s
// RUN: tkc-opt %s -p tile-sweep-order -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-sweep-order | diff %t.once.mlir -

builtin.module {
  tile.kernel @two_sweeps(%X: !tile.gl<[M, N], bf16>, %Y: !tile.gl<[M, N], bf16>) {
    %N = tile.dim %X[1] : !tile.gl<[M, N], bf16>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    tile.grid(%c1) as ["i"]
    %i = tile.block_id 0
    %z = tile.fill 0.000000e+00 : f32 : !tile.rv<64xf32>
    %s = scf.for %j = %c0 to %N step %c1 iter_args(%acc = %z) -> (!tile.rv<64xf32>) {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      %reg = tile.to_reg %t : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
      %f = tile.convert %reg : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf32>
      %row = tile.reduce sum row %f : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %next = tile.binary add %acc, %row : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      scf.yield %next : !tile.rv<64xf32>
    }
    scf.for %j = %c0 to %N step %c1 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      %reg = tile.to_reg %t : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
      %f = tile.convert %reg : !tile.rt<64x64xbf16> -> !tile.rt<64x64xf32>
      %d = tile.broadcast div row %f, %s : !tile.rt<64x64xf32>, !tile.rv<64xf32>
      %b = tile.convert %d : !tile.rt<64x64xf32> -> !tile.rt<64x64xbf16>
      tile.store %b, %Y[%i, %j] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
      scf.yield
    }
    scf.for %j = %c0 to %N step %c1 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      %reg = tile.to_reg %t : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
      tile.store %reg, %Y[%i, %j] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
      scf.yield
    }
    tile.return
  }
// CHECK-LABEL: tile.kernel @two_sweeps
// CHECK:       scf.for %j = %c0 to %N step %c1 iter_args
// CHECK-NOT:   sweep
// CHECK:       [[SPAN:%.*]] = arith.addi %c0, %N : index
// CHECK-NEXT:  [[LAST:%.*]] = arith.subi [[SPAN]], %c1 : index
// CHECK-NEXT:  scf.for %r = %c0 to %N step %c1 {
// CHECK-NEXT:    [[J:%.*]] = arith.subi [[LAST]], %r : index
// CHECK-NEXT:    tile.load %X[%i, [[J]]]
// CHECK:         tile.store {{.*}}, %Y[%i, [[J]]]
// CHECK:       } {sweep = #tile.decision<1, "re-reads the tiles of X the loop at {{line [0-9]+}} touched: backwards, the tiles it read last first, while L2 still holds them">}
// CHECK-NEXT:  scf.for %j{{.*}} = %c0 to %N step %c1 {
// CHECK:       } {sweep = #tile.decision<0, "re-reads the tiles of X the loop at {{line [0-9]+}} touched; that loop walks backwards, so this one forwards starts where it ended">}

  tile.kernel @order_shows(%X: !tile.gl<[M, N], bf16>) {
    %N = tile.dim %X[1] : !tile.gl<[M, N], bf16>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    tile.grid(%c1) as ["i"]
    %i = tile.block_id 0
    scf.for %j = %c0 to %N step %c1 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      scf.yield
    }
    scf.for %j = %c0 to %N step %c1 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      %reg = tile.to_reg %t : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
      %next = arith.addi %j, %c1 : index
      tile.store %reg, %X[%i, %next] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
      scf.yield
    }
    scf.for %j = %c0 to %N step %c2 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      scf.yield
    }
    tile.return
  }
// CHECK-LABEL: tile.kernel @order_shows
// CHECK:       tile.store {{.*}}, %X[%i, %next]
// CHECK-NEXT:  } {sweep = #tile.decision<0, "re-reads the tiles of X the loop at {{line [0-9]+}} touched, but stays forwards: its iterations may touch the same elements of X (the store at {{line [0-9]+}} and the load at {{line [0-9]+}})">}
// CHECK-NEXT:  scf.for %j{{.*}} = %c0 to %N step %c2 {
// CHECK-NOT:   sweep
// CHECK:       tile.return

  tile.kernel @hand_edited(%X: !tile.gl<[M, N], bf16>) {
    %N = tile.dim %X[1] : !tile.gl<[M, N], bf16>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    tile.grid(%c1) as ["i"]
    %i = tile.block_id 0
    scf.for %j = %c0 to %N step %c1 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      scf.yield
    } {sweep = #tile.decision<1, "edited by hand">}
    scf.for %j = %c0 to %N step %c1 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      scf.yield
    }
    tile.return
  }
// CHECK-LABEL: tile.kernel @hand_edited
// CHECK:       } {sweep = #tile.decision<1, "edited by hand">}
// CHECK-NEXT:  scf.for
// CHECK-NOT:   sweep
// CHECK:       tile.return

  tile.kernel @under_if(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    tile.grid(%c1) as ["i"]
    %i = tile.block_id 0
    scf.for %j = %c0 to %N step %c1 {
      %t = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      scf.yield
    }
    scf.for %j = %c0 to %N step %c1 {
      %odd = arith.cmpi sgt, %j, %c0 : index
      scf.if %odd {
        %t = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
        %reg = tile.to_reg %t : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
        tile.store %reg, %Y[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
        scf.yield
      }
      scf.yield
    }
    tile.return
  }
// CHECK-LABEL: tile.kernel @under_if
// CHECK:       scf.for %r
// CHECK:       } {sweep = #tile.decision<1, "re-reads the tiles of X
}
