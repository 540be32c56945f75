// tile-memory-order puts a tile.fence before each access that may touch what an earlier store of
// the block wrote, and says on every load of a stored tensor how it is ordered.
// RUN: tkc-opt %s -p tile-memory-order --split-input-file | filecheck %s

// Store, then load the same tile: a fence between them. The first load runs before any store.
builtin.module {
  tile.kernel @same_tile(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %a = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %ra = tile.to_reg %a : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %ra, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    %b = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %rb = tile.to_reg %b : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %rb, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
// CHECK-LABEL: @same_tile
// CHECK:      %a = tile.load %X[%i, %c0] {memory_order = #tile.decision<0, "no store that may run before it overlaps it
// CHECK:      tile.store %ra, %X[%i, %c0]
// CHECK-NEXT: tile.fence "the load of X at line [[# @LINE - 9]] may touch what the store at line [[# @LINE - 10]] wrote"
// CHECK-NEXT: %b = tile.load %X[%i, %c0] {memory_order = #tile.decision<1, "after the stores at line [[# @LINE - 11]]: the tile.fence at line [[# @LINE - 10]] orders them">}
// CHECK-NOT:  tile.fence

// -----

// An in-place update of tile (i, k) in each iteration k: iterations touch different tiles, so no
// fence. The tile one column right (k + 1) was stored one iteration earlier: fenced, once per
// iteration, before the iteration's loads.
builtin.module {
  tile.kernel @loops(%X: !tile.gl<[M, N], f32>, %Z: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %k = %c0 to %c4 step %c1 {
      %x = tile.load %X[%i, %k] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %rx = tile.to_reg %x : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      tile.store %rx, %X[%i, %k] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    }
    scf.for %k = %c0 to %c4 step %c1 {
      %z = tile.load %Z[%i, %k] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %rz = tile.to_reg %z : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      %k1 = arith.addi %k, %c1 : index
      tile.store %rz, %Z[%i, %k1] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    }
    tile.return
  }
}
// CHECK-LABEL: @loops
// CHECK:      scf.for %k = %c0 to %c4 step %c1 {
// CHECK-NEXT:   %x = tile.load %X[%i, %k] {memory_order = #tile.decision<0,
// CHECK:      scf.for %k_1 = %c0 to %c4 step %c1 {
// CHECK-NEXT:   tile.fence "the load of Z at line [[# @LINE - 12]] may touch what the store at line [[# @LINE - 9]] wrote"
// CHECK-NEXT:   %z = tile.load %Z[%i, %k_1] {memory_order = #tile.decision<1,

// -----

// A loop that re-reads what an earlier loop stored waits once, before it starts; a store over an
// earlier store's tile waits for it too (write after write).
builtin.module {
  tile.kernel @sweeps(%H: !tile.gl<[M, N], bf16>, %Y: !tile.gl<[M, N], bf16>) {
    %m = tile.dim %H[0] : !tile.gl<[M, N], bf16>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %h = tile.fill 1.0 : f32 : !tile.rt<64x64xbf16>
    scf.for %c = %c0 to %c4 step %c1 {
      tile.store %h, %H[%i, %c] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    }
    scf.for %c = %c0 to %c4 step %c1 {
      %x = tile.load %H[%i, %c] : !tile.gl<[M, N], bf16> -> !tile.st<64x64xbf16>
      %rx = tile.to_reg %x : !tile.st<64x64xbf16> -> !tile.rt<64x64xbf16>
      tile.store %rx, %Y[%i, %c] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    }
    tile.store %h, %Y[%i, %c0] : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }
}
// CHECK-LABEL: @sweeps
// CHECK:      tile.fence "the load of H at line [[# @LINE - 9]] may touch what the store at line [[# @LINE - 12]] wrote"
// CHECK-NEXT: scf.for %c_1 = %c0 to %c4 step %c1 {
// CHECK-NEXT:   %x = tile.load %H[%i, %c_1] {memory_order = #tile.decision<1,
// CHECK:      tile.fence "the store of Y at line [[# @LINE - 8]] may touch what the store at line [[# @LINE - 10]] wrote"
// CHECK-NEXT: tile.store %h, %Y[%i, %c0]
