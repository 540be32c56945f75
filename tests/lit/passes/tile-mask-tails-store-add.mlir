// tile-mask-tails on store_add (tile.store reduce add), which adds no padding exactly as a store
// writes none: TMA clips a box at the tensor's end, so a value whose padding ends where the
// destination does (or past it) needs nothing; one whose padding begins before the destination's
// end needs whole tiles of the dim.
// RUN: tkc-opt %s -p tile-mask-tails --split-input-file | filecheck %s

builtin.module {
  tile.kernel @aligned(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    tile.grid(%rows, %cols) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %xs = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store reduce add %x, %Y[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
// CHECK-LABEL: tile.kernel @aligned
// CHECK-NOT:   whole_tiles
// CHECK-NOT:   tile.bounds_mask
// CHECK:       tile.store reduce add %x, %Y[%i, %j]

// -----

// Y[i, j] += X[i, j + 1]: X's tile ends (N - 64 (j + 1)) before Y's does, so its padding would
// be added to columns of Y.
builtin.module {
  tile.kernel @shifted(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    %cols_1 = arith.subi %cols, %c1 : index
    tile.grid(%rows, %cols_1) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %j1 = arith.addi %j, %c1 : index
    %xs = tile.load %X[%i, %j1] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store reduce add %x, %Y[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
// CHECK-LABEL: tile.kernel @shifted
// CHECK-SAME:  whole_tiles = {N = #tile.decision<64, "the store_add of Y at {{.*}} must not add padding, and the columns of its value need not end where Y does">}
// CHECK-NOT:   tile.bounds_mask

// -----

// Y[i, j + 1] += X[i, j]: X's tile ends (N - 64 j) 64 columns past Y's (N - 64 (j + 1)), where TMA
// clips the add: its padding is never added, and N may be any size.
builtin.module {
  tile.kernel @shifted_back(%X: !tile.gl<[M, N], f32>, %Y: !tile.gl<[M, N], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    %cols_1 = arith.subi %cols, %c1 : index
    tile.grid(%rows, %cols_1) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %xs = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
    %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
    %j1 = arith.addi %j, %c1 : index
    tile.store reduce add %x, %Y[%i, %j1] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}
// CHECK-LABEL: tile.kernel @shifted_back
// CHECK-NOT:   whole_tiles
// CHECK-NOT:   tile.bounds_mask
// CHECK:       tile.store reduce add %x, %Y[%i, %j1]
