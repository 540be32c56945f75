// tile-pipeline hoists a loop-invariant load only when no store in the loop may write what it
// reads: X[i, 0] is stored in the loop and stays; W[i, 0] is stored only at column 1 and is hoisted.
// RUN: tkc-opt %s -p tile-memory-order,tile-swizzle-select,tile-bank-conflicts,tile-occupancy-plan,tile-pipeline | filecheck %s
builtin.module {
  tile.kernel @k(%X: !tile.gl<[M, N], f32>, %W: !tile.gl<[M, N], f32>) {
    %m = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %g = arith.divui %m, %c64 : index
    tile.grid(%g) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %k = %c0 to %c4 step %c1 {
      %x = tile.load %X[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %w = tile.load %W[%i, %c0] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %rx = tile.to_reg %x : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      %rw = tile.to_reg %w : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      %s = tile.binary add %rx, %rw : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      tile.store %s, %X[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
      tile.store %s, %W[%i, %c1] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    }
    tile.return
  }
}
// CHECK:      %w = tile.load %W[%i, %c0] {memory_order = #tile.decision<0,
// CHECK-NEXT: scf.for %k = %c0 to %c4 step %c1 {
// CHECK-NEXT:   tile.fence
// CHECK-NEXT:   %x = tile.load %X[%i, %c0] {memory_order = #tile.decision<1,
// CHECK:      } {pipeline = #tile.decision<
