// tile-memory-order treats tile.store reduce add (store_add) as a write: a later load of what it
// added to, and a later plain store over it, wait for it behind a tile.fence. Two adds to one
// element commute, so an add after an add is left unordered (a loop adding to the same rows in
// every iteration gets no fence); the add says so in its memory_order.
// RUN: tkc-opt %s -p tile-memory-order --split-input-file | filecheck %s

builtin.module {
  tile.kernel @add_then_load(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %a = tile.load %Y[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %ra = tile.to_reg %a : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store reduce add %ra, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.store reduce add %ra, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %b = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %rb = tile.to_reg %b : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %rb, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.store reduce add %rb, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
// CHECK-LABEL: @add_then_load
// CHECK:      tile.store reduce add %ra, %X[%i, %c0] :
// CHECK-NEXT: tile.store reduce add %ra, %X[%i, %c0] {memory_order = #tile.decision<0, "after the store_adds at line 17 only: adds commute, so no fence orders them">}
// CHECK-NEXT: tile.fence "the load of X at line 19 may touch what the store at line 17, line 18 wrote; the store of X at line 21 may touch what the store at line 17, line 18 wrote"
// CHECK-NEXT: %b = tile.load %X[%i, %c0] {memory_order = #tile.decision<1, "after the stores at line 17, line 18: the tile.fence at line 19 orders them">}
// CHECK:      tile.store %rb, %X[%i, %c0]
// CHECK-NEXT: tile.fence "the store_add of X at line 22 may touch what the store at line 21 wrote"
// CHECK-NEXT: tile.store reduce add %rb, %X[%i, %c0]

// -----

// The same rows in every iteration: adds only, no fence.
builtin.module {
  tile.kernel @add_loop(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %k = %c0 to %c4 step %c1 {
      %a = tile.load %Y[%i, %k] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %ra = tile.to_reg %a : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      tile.store reduce add %ra, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    }
    tile.return
  }
}
// CHECK-LABEL: @add_loop
// CHECK-NOT:   tile.fence
// CHECK:       tile.store reduce add %ra, %X[%i, %c0] {memory_order = #tile.decision<0, "after the store_adds at line 51 only: adds commute, so no fence orders them">}
// CHECK-NOT:   tile.fence
