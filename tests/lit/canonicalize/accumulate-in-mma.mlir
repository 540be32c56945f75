// RUN: tkc-opt %s -p canonicalize | filecheck %s
// x + mma(a, b) (either order) becomes mma(a, b, x) where the product has no other use, the
// transpose flags kept; a product used twice stays a product and an add.

// CHECK-LABEL: tile.kernel @sums
// CHECK:      %[[ACC:.*]] = tile.mma %a, %b, %acc : !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
// CHECK-NEXT: %[[T:.*]] = tile.mma %a, %b, %[[ACC]] transpose_b : !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
// CHECK-NEXT: %shared = tile.mma %a, %b : !tile.st<64x64xbf16>, !tile.st<64x64xbf16> -> !tile.rt<64x64xf32>
// CHECK-NEXT: %twice = tile.binary add %[[T]], %shared
// CHECK-NEXT: %last = tile.binary add %twice, %shared

builtin.module {
  tile.kernel @sums(%A: !tile.gl<[M, K], bf16>, %C: !tile.gl<[M, K], f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    tile.grid(%c1) as ["g"]
    %a = tile.load %A[%c0, %c0] : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16>
    %b = tile.load %A[%c1, %c0] : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16>
    %acc = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    %p = tile.mma %a, %b : !tile.st<64x64xbf16>, !tile.st<64x64xbf16> -> !tile.rt<64x64xf32>
    %s = tile.binary add %acc, %p : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %q = tile.mma %a, %b transpose_b : !tile.st<64x64xbf16>, !tile.st<64x64xbf16> -> !tile.rt<64x64xf32>
    %t = tile.binary add %q, %s : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %shared = tile.mma %a, %b : !tile.st<64x64xbf16>, !tile.st<64x64xbf16> -> !tile.rt<64x64xf32>
    %twice = tile.binary add %t, %shared : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %last = tile.binary add %twice, %shared : !tile.rt<64x64xf32>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %last, %C[%c0, %c0] : !tile.rt<64x64xf32>, !tile.gl<[M, K], f32>
    tile.return
  }
}
