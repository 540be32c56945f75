// convert-tile-to-sm90 on hand-written planned tile IR with 96-row register tiles over two
// consumers: 96 rows are computed as 128 (plan.padded_rows), 64 per consumer, the second's last
// 32 rows padding. Q, read as the product's A, has a 128-row buffer that its 96-row TMA box fills
// 12288 bytes of; each consumer stages its 64 rows, and stores them as a 64-row box (the first)
// or a 32-row one (the second: its other rows are padding), two tensor maps picked by the
// consumer index; the row maxima store no more than 96 - row0 rows; the column sums mask the
// rows from 96 - row0 on with the sum's identity before they reduce.
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90 | filecheck %s
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers,convert-sm90-to-ptx | filecheck %s --check-prefix=PTX

builtin.module {
  tile.kernel @padded(%Q: !tile.gl<[M, 64], bf16>, %K: !tile.gl<[64, 64], bf16>, %S: !tile.gl<[M, 64], f32>, %R: !tile.gl<[M], f32>, %C: !tile.gl<[64], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<2, "hand-written">, threads = #tile.decision<384, "hand-written">, persistent = #tile.decision<0, "hand-written">, smem_bytes = #tile.decision<36864, "hand-written">, group_m = #tile.decision<1, "hand-written">, ctas_per_sm = #tile.decision<1, "hand-written">, producer_registers = #tile.decision<40, "hand-written">, consumer_registers = #tile.decision<232, "hand-written">>, col_scratch_offset = 33792 : i64, params = {BM = 96 : i64}} {
    %M = tile.dim %Q[0] : !tile.gl<[M, 64], bf16>
    %c96 = arith.constant 96 : index
    %blocks = arith.divui %M, %c96 : index
    tile.grid(%blocks) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %q = tile.load %Q[%i, %c0] {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 1024 : i64} : !tile.gl<[M, 64], bf16> -> !tile.st<96x64xbf16, swizzle 128>
    %k = tile.load %K[%c0, %c0] {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 17408 : i64} : !tile.gl<[64, 64], bf16> -> !tile.st<64x64xbf16, swizzle 128>
    %s = tile.mma %q, %k transpose_b : !tile.st<96x64xbf16, swizzle 128>, !tile.st<64x64xbf16, swizzle 128> -> !tile.rt<96x64xf32>
    tile.store %s, %S[%i, %c0] {staging = #tile.decision<32, "hand-written">, smem_offset = 25600 : i64} : !tile.rt<96x64xf32>, !tile.gl<[M, 64], f32>
    %m = tile.reduce max row %s : !tile.rt<96x64xf32> -> !tile.rv<96xf32>
    tile.store %m, %R[%i] : !tile.rv<96xf32>, !tile.gl<[M], f32>
    %c = tile.reduce sum col %s : !tile.rt<96x64xf32> -> !tile.rv<64xf32, col>
    tile.store %c, %C[%c0] : !tile.rv<64xf32, col>, !tile.gl<[64], f32>
    tile.return
  }
}
// CHECK:      params [tmap_Q_0 = tensormap Q box [64, 96] swizzle 128, tmap_K_1 = tensormap K box [64, 64] swizzle 128, tmap_S_2 = tensormap S box [8, 64] swizzle 32, tmap_S_3 = tensormap S box [8, 32] swizzle 32
// CHECK:      sm90.tma_load {{.*}} bytes 12288 : i32
// CHECK:      } consumer {
// CHECK:        %[[ROW0:[0-9]+]] = arith.muli %[[CONSUMER:[0-9]+]], %{{[0-9]+}} : index
// CHECK:        sm90.wgmma %{{[0-9]+}}[%[[ROW0]]], %{{[0-9]+}} transpose_b : !sm90.smem<128x64xbf16, swizzle 128>, !sm90.smem<64x64xbf16, swizzle 128> -> !sm90.frag<64x64xf32>
// CHECK:        sm90.store_fragment %{{[0-9]+}}[cols 0 : i32], %{{[0-9]+}}[%{{[0-9]+}}] : !sm90.frag<64x64xf32>, !sm90.smem<64x8xf32, swizzle 32>
// CHECK:        sm90.single_thread "warpgroup" {
// CHECK-NEXT:     %[[LAST:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:     %[[FIRST:[0-9]+]] = arith.cmpi ne, %[[CONSUMER]], %[[LAST]] : index
// CHECK-NEXT:     scf.if %[[FIRST]] {
// CHECK-NEXT:       sm90.tensormap "tmap_S_2"
// CHECK:            sm90.tma_store
// CHECK:          %[[SECOND:[0-9]+]] = arith.cmpi eq, %[[CONSUMER]], %[[LAST]] : index
// CHECK-NEXT:     scf.if %[[SECOND]] {
// CHECK-NEXT:       sm90.tensormap "tmap_S_3"
// CHECK:            sm90.tma_store
// CHECK:        %[[MAX:[0-9]+]] = sm90.row_reduce max %{{[0-9]+}} : !sm90.frag<64x64xf32> -> !sm90.frag<64xf32>
// CHECK:        %[[LEFT:[0-9]+]] = arith.subi %{{[0-9]+}}, %[[ROW0]] : index
// CHECK-NEXT:   %[[TILE:[0-9]+]] = arith.constant 96 : index
// CHECK-NEXT:   %[[MINE:[0-9]+]] = arith.subi %[[TILE]], %[[ROW0]] : index
// CHECK-NEXT:   %[[LIMIT:[0-9]+]] = arith.minsi %[[LEFT]], %[[MINE]] : index
// CHECK-NEXT:   sm90.store_vector_global %[[MAX]], %{{[0-9]+}}[%{{[0-9]+}}] limit %[[LIMIT]]
// CHECK:        %[[ROWS:[0-9]+]] = arith.subi %{{[0-9]+}}, %[[ROW0]] : index
// CHECK-NEXT:   %[[COLS:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:   %[[MASKED:[0-9]+]] = sm90.bounds_mask %{{[0-9]+}}[%[[ROWS]], %[[COLS]]] fill 0.000000e+00 : f32 : !sm90.frag<64x64xf32>
// CHECK-NEXT:   sm90.col_reduce sum %[[MASKED]]

// The staged chunk holds the consumer's 64 rows (the padding ones too): no guard on its writes.
// PTX:     ptx.entry
// PTX-NOT: ptx.setp(%{{[0-9]+}}) {cmp = lt, ty = u32, imm = 96 : i64}
