// convert-tile-to-sm90 on hand-written planned tile IR with 16-row register tiles: each is one
// 64-row fragment (a wgmma's m64) whose rows past 16 are padding. Q, read as the product's A,
// has a 64-row buffer (panels 64 rows apart) that its 16-row TMA box fills 2048 bytes of; the
// stored tile is staged in 16-row chunks and stored as 16-row boxes; the row maxima store no
// more than 16 rows (min with the tensor's end); the column sums mask the padding rows with
// the sum's identity before they reduce.
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90 | filecheck %s
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers,convert-sm90-to-ptx | filecheck %s --check-prefix=PTX

builtin.module {
  tile.kernel @short(%Q: !tile.gl<[M, 64], bf16>, %K: !tile.gl<[64, 64], bf16>, %S: !tile.gl<[M, 64], f32>, %R: !tile.gl<[M], f32>, %C: !tile.gl<[64], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<1, "hand-written">, threads = #tile.decision<256, "hand-written">, persistent = #tile.decision<0, "hand-written">, smem_bytes = #tile.decision<24576, "hand-written">, group_m = #tile.decision<1, "hand-written">, ctas_per_sm = #tile.decision<1, "hand-written">, replicated_rows = #tile.decision<16, "hand-written">, producer_registers = #tile.decision<40, "hand-written">, consumer_registers = #tile.decision<216, "hand-written">>, col_scratch_offset = 17408 : i64, params = {BM = 16 : i64}} {
    %M = tile.dim %Q[0] : !tile.gl<[M, 64], bf16>
    %c16 = arith.constant 16 : index
    %blocks = arith.divui %M, %c16 : index
    tile.grid(%blocks) as ["i"]
    %i = tile.block_id 0
    %c0 = arith.constant 0 : index
    %q = tile.load %Q[%i, %c0] {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 1024 : i64} : !tile.gl<[M, 64], bf16> -> !tile.st<16x64xbf16, swizzle 128>
    %k = tile.load %K[%c0, %c0] {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 9216 : i64} : !tile.gl<[64, 64], bf16> -> !tile.st<64x64xbf16, swizzle 128>
    %s = tile.mma %q, %k transpose_b : !tile.st<16x64xbf16, swizzle 128>, !tile.st<64x64xbf16, swizzle 128> -> !tile.rt<16x64xf32>
    tile.store %s, %S[%i, %c0] {staging = #tile.decision<32, "hand-written">, smem_offset = 18432 : i64} : !tile.rt<16x64xf32>, !tile.gl<[M, 64], f32>
    %m = tile.reduce max row %s : !tile.rt<16x64xf32> -> !tile.rv<16xf32>
    tile.store %m, %R[%i] : !tile.rv<16xf32>, !tile.gl<[M], f32>
    %c = tile.reduce sum col %s : !tile.rt<16x64xf32> -> !tile.rv<64xf32, col>
    tile.store %c, %C[%c0] : !tile.rv<64xf32, col>, !tile.gl<[64], f32>
    tile.return
  }
}
// CHECK:      params [tmap_Q_0 = tensormap Q box [64, 16] swizzle 128, tmap_K_1 = tensormap K box [64, 64] swizzle 128, tmap_S_2 = tensormap S box [8, 16] swizzle 32
// CHECK:      sm90.tma_load {{.*}} bytes 2048 : i32
// CHECK:      sm90.tma_load {{.*}} bytes 8192 : i32
// CHECK:      } consumer {
// CHECK:        %[[S:[0-9]+]] = sm90.wgmma %{{[0-9]+}}[%{{[0-9]+}}], %{{[0-9]+}} transpose_b : !sm90.smem<64x64xbf16, swizzle 128>, !sm90.smem<64x64xbf16, swizzle 128> -> !sm90.frag<64x64xf32>
// CHECK:        sm90.store_fragment %{{[0-9]+}}[cols 0 : i32], %{{[0-9]+}}[%{{[0-9]+}}] : !sm90.frag<64x64xf32>, !sm90.smem<16x8xf32, swizzle 32>
// CHECK:        %[[MAX:[0-9]+]] = sm90.row_reduce max %{{[0-9]+}} : !sm90.frag<64x64xf32> -> !sm90.frag<64xf32>
// CHECK:          scf.if
// CHECK-NEXT:       arith.addi
// CHECK-NEXT:     %[[LEFT:[0-9]+]] = arith.subi
// CHECK-NEXT:     %[[ROWS:[0-9]+]] = arith.constant 16 : index
// CHECK-NEXT:     %[[LIMIT:[0-9]+]] = arith.minsi %[[LEFT]], %[[ROWS]] : index
// CHECK-NEXT:     sm90.store_vector_global %[[MAX]], %{{[0-9]+}}[%{{[0-9]+}}] limit %[[LIMIT]]
// CHECK:        %[[TILE_ROWS:[0-9]+]] = arith.constant 16 : index
// CHECK-NEXT:   %[[COLS:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:   %[[MASKED:[0-9]+]] = sm90.bounds_mask %{{[0-9]+}}[%[[TILE_ROWS]], %[[COLS]]] fill 0.000000e+00 : f32 : !sm90.frag<64x64xf32>
// CHECK-NEXT:   sm90.col_reduce sum %[[MASKED]]

// The staged chunk is written by the warps whose rows are the tile's: row < 16.
// PTX:      %[[TILE:[0-9]+]] = ptx.setp(%{{[0-9]+}}) {cmp = lt, ty = u32, imm = 16 : i64} : pred
// PTX-NEXT: ptx.if %[[TILE]]
