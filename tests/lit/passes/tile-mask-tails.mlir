// tile-mask-tails on hand-written tile IR. A row softmax over column tiles of a ragged N: the
// loaded x holds 0 past N, so row_max needs -inf there; one mask, under an scf.if that only the
// partial last tile takes, with the limit N - j * 64 computed once, where j is defined. It serves
// every use of x: exp2(x - row_max(x)) then holds 0 past N, which row_sum needs, so the sum needs
// no mask of its own. A max with -1 can turn the NaN of a row with no valid element into a
// number, so after one the sum needs its own mask. The GEMM-like loop needs none (zeros times
// zeros over a ragged K); its store writes the rows and columns of A and B, which end where C
// does. A second run changes nothing.
// RUN: tkc-opt %s -p tile-mask-tails | filecheck %s
// RUN: tkc-opt %s -p tile-mask-tails -o %t.once.mlir && tkc-opt %t.once.mlir -p tile-mask-tails | diff %t.once.mlir -
// A store of a tile loaded further along (its padding begins before the destination's end)
// cannot be proven to write no padding: N must then be whole tiles, which the kernel records for
// the runtime.
// RUN: tkc-opt %S/Inputs/shifted-store.mlir -p tile-mask-tails | filecheck %s --check-prefix=WHOLE
// Pinned to whole tiles (`@whole_tiles`, here the pass option), the softmax gets no masks: N must
// be whole tiles instead, for the reason the first mask would have had.
// RUN: tkc-opt %s -p 'tile-mask-tails{whole_tiles=true}' | filecheck %s --check-prefix=PINNED

builtin.module {
  tile.kernel @softmax_sums(%X: !tile.gl<[M, N], f32>, %S: !tile.gl<[M], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rv<64xf32>
    %total = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (!tile.rv<64xf32>) {
      %xs = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      %m = tile.reduce max row %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %d = tile.broadcast sub row %x, %m : !tile.rt<64x64xf32>, !tile.rv<64xf32>
      %p = tile.unary exp2 %d : !tile.rt<64x64xf32>
      %s = tile.reduce sum row %p : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %next = tile.binary add %acc, %s : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      scf.yield %next : !tile.rv<64xf32>
    }
    tile.store %total, %S[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
    tile.return
  }
  tile.kernel @clamped_sums(%X: !tile.gl<[M, N], f32>, %S: !tile.gl<[M], f32>) {
    %M = tile.dim %X[0] : !tile.gl<[M, N], f32>
    %N = tile.dim %X[1] : !tile.gl<[M, N], f32>
    %c64 = arith.constant 64 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    tile.grid(%rows) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %lowest = arith.constant -1.000000e+00 : f32
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rv<64xf32>
    %total = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (!tile.rv<64xf32>) {
      %xs = tile.load %X[%i, %j] : !tile.gl<[M, N], f32> -> !tile.st<64x64xf32>
      %x = tile.to_reg %xs : !tile.st<64x64xf32> -> !tile.rt<64x64xf32>
      %m = tile.reduce max row %x : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %d = tile.broadcast sub row %x, %m : !tile.rt<64x64xf32>, !tile.rv<64xf32>
      %c = tile.binary max %d, %lowest : !tile.rt<64x64xf32>, f32 -> !tile.rt<64x64xf32>
      %s = tile.reduce sum row %c : !tile.rt<64x64xf32> -> !tile.rv<64xf32>
      %next = tile.binary add %acc, %s : !tile.rv<64xf32>, !tile.rv<64xf32> -> !tile.rv<64xf32>
      scf.yield %next : !tile.rv<64xf32>
    }
    tile.store %total, %S[%i] : !tile.rv<64xf32>, !tile.gl<[M], f32>
    tile.return
  }
  tile.kernel @gemm(%A: !tile.gl<[M, K], bf16>, %B: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], f32>) {
    %M = tile.dim %A[0] : !tile.gl<[M, K], bf16>
    %K = tile.dim %A[1] : !tile.gl<[M, K], bf16>
    %N = tile.dim %B[1] : !tile.gl<[K, N], bf16>
    %c64 = arith.constant 64 : index
    %rows = arith.ceildivui %M, %c64 : index
    %cols = arith.ceildivui %N, %c64 : index
    %steps = arith.ceildivui %K, %c64 : index
    tile.grid(%rows, %cols) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    %acc = scf.for %k = %c0 to %steps step %c1 iter_args(%a_acc = %zero) -> (!tile.rt<64x64xf32>) {
      %a = tile.load %A[%i, %k] : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16>
      %b = tile.load %B[%k, %j] : !tile.gl<[K, N], bf16> -> !tile.st<64x64xbf16>
      %next = tile.mma %a, %b, %a_acc : !tile.st<64x64xbf16>, !tile.st<64x64xbf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      scf.yield %next : !tile.rt<64x64xf32>
    }
    tile.store %acc, %C[%i, %j] : !tile.rt<64x64xf32>, !tile.gl<[M, N], f32>
    tile.return
  }
}

// CHECK-LABEL: tile.kernel @softmax_sums
// CHECK-SAME:  tail_masks = #tile.decision<1, "reductions and mmas that would see elements past the end of a tensor, masked under an scf.if that only a partial tile takes">
// CHECK:       scf.for %j =
// CHECK-NEXT:    %[[START:.*]] = arith.muli %j, %[[C64:.*]] : index
// CHECK-NEXT:    %[[LIMIT:.*]] = arith.subi %N, %[[START]] : index
// CHECK-NEXT:    %[[END:.*]] = arith.addi %[[START]], %[[C64]] : index
// CHECK-NEXT:    %[[PAST:.*]] = arith.cmpi ult, %N, %[[END]] : index
// CHECK:         %x = tile.to_reg
// CHECK-NEXT:    %[[XM:.*]] = scf.if %[[PAST]] -> (!tile.rt<64x64xf32>) {
// CHECK-NEXT:      tile.bounds_mask %x[%[[C64]], %[[LIMIT]]] fill 0xff800000 : f32 {tails = "row_max at line {{[0-9]+}} leaves out the columns past the end"}
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %x
// CHECK:         tile.reduce max row %[[XM]]
// CHECK-NEXT:    tile.broadcast sub row %[[XM]], %m
// CHECK-NEXT:    %p = tile.unary exp2
// CHECK-NEXT:    tile.reduce sum row %p
// CHECK-LABEL: tile.kernel @clamped_sums
// CHECK-SAME:  tail_masks = #tile.decision<2,
// CHECK:         tile.bounds_mask %x[{{.*}}] fill 0xff800000
// CHECK:         %c = tile.binary max
// CHECK-NEXT:    %[[CM:.*]] = scf.if
// CHECK-NEXT:      tile.bounds_mask %c[{{.*}}] fill 0.000000e+00 : f32 {tails = "row_sum at line {{[0-9]+}} leaves out the columns past the end"}
// CHECK:         tile.reduce sum row %[[CM]]
// CHECK-LABEL: tile.kernel @gemm
// CHECK-NOT:   tile.bounds_mask
// CHECK-NOT:   whole_tiles
// CHECK:       tile.store %acc, %C[%i, %j]

// WHOLE: tile.kernel @shifted
// WHOLE-SAME: whole_tiles = {N = #tile.decision<64, "the store of Y at {{.*}} must not write padding, and the columns of its value need not end where Y does">}
// WHOLE-NOT: tile.bounds_mask

// PINNED: tile.kernel @softmax_sums
// PINNED-SAME: whole_tiles = {N = #tile.decision<64, "compiled for whole tiles (@whole_tiles): row_max at line {{[0-9]+}} leaves out the columns past the end">}
// PINNED-NOT: tile.bounds_mask
// PINNED-NOT: tail_masks
