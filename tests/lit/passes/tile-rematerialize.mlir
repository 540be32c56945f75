// tile-rematerialize on hand-written tile IR: the register copy %t of a shared tile loaded before
// the loop (read and converted once, used twice in the body) is read again before each use in the
// loop, with the reason; %once, used once where it is defined, stays; a second run changes nothing.
// RUN: tkc-opt %s -p tile-rematerialize | filecheck %s
// RUN: tkc-opt %s -p tile-rematerialize -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-rematerialize | diff %t.once.mlir -

builtin.module {
  tile.kernel @twiddle(%X: !tile.gl<[M, 64], f32>, %T: !tile.gl<[64, 64], f16>, %Y: !tile.gl<[M, 64], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, 64], f32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %n = arith.divui %M, %c64 : index
    tile.grid(%c1) as ["g"]
    %ts = tile.load %T[%c0, %c0] : !tile.gl<[64, 64], f16> -> !tile.st<64x64xf16>
    %th = tile.to_reg %ts : !tile.st<64x64xf16> -> !tile.rt<64x64xf16>
    %t = tile.convert %th : !tile.rt<64x64xf16> -> !tile.rt<64x64xf32>
    %once = tile.to_reg %ts : !tile.st<64x64xf16> -> !tile.rt<64x64xf16>
    %wide = tile.convert %once : !tile.rt<64x64xf16> -> !tile.rt<64x64xf32>
    tile.store %wide, %Y[%c0, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, 64], f32>
    scf.for %i = %c0 to %n step %c1 {
      %x = tile.load %X[%i, %c0] : !tile.gl<[M, 64], f32> -> !tile.st<64x64xf32>
      %xr = tile.to_reg %x : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      %a = tile.binary mul %xr, %t : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      %b = tile.binary add %a, %t : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      tile.store %b, %Y[%i, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, 64], f32>
      scf.yield
    }
    tile.return
  }
}

// CHECK:      %ts = tile.load %T
// CHECK-NEXT: %once = tile.to_reg %ts : !tile.st<64x64xf16> -> !tile.rt<64x64xf16>
// CHECK-NEXT: %wide = tile.convert %once
// CHECK:      scf.for
// CHECK:        %xr = tile.to_reg %x
// CHECK-NEXT:   %{{.*}} = tile.to_reg %ts {rematerialized = "used inside a loop or an if (by tile.binary), so kept in registers it would live across the whole of it; re-read from shared memory at each use"}
// CHECK-NEXT:   %[[T1:.*]] = tile.convert
// CHECK-NEXT:   %a = tile.binary mul %xr, %[[T1]]
// CHECK-NEXT:   %{{.*}} = tile.to_reg %ts {rematerialized
// CHECK-NEXT:   %[[T2:.*]] = tile.convert
// CHECK-NEXT:   %b = tile.binary add %a, %[[T2]]
