// convert-tile-to-sm90 on hand-written planned tile IR with register tiles of two heights: two
// consumers split the 128-row O = S^T V (row0 = index * 64) and replicate the 64-row S
// (replicated_rows = 64: row0 = 0, every consumer computes it whole). What a replicated value
// writes, only the first consumer writes: its row maxima, its staged bf16 store, its rows of the
// tile.to_shared buffer (between the syncs all consumers meet on); its column sums reduce each
// consumer's own copy (`replicated`). The 128-row product reads that buffer whole, as transposed
// A, from the consumer's own 64 rows of the product.
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90 | filecheck %s
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings,sm90-verify-barriers,convert-sm90-to-ptx | filecheck %s --check-prefix=PTX

builtin.module {
  tile.kernel @mixed(%Q: !tile.gl<[N, 64], bf16>, %K: !tile.gl<[N, 64], bf16>, %V: !tile.gl<[N, 64], bf16>, %M: !tile.gl<[N], f32>, %C: !tile.gl<[N], f32>, %P: !tile.gl<[N, N], bf16>, %O: !tile.gl<[N, 64], f32>) attributes {plan = #tile.plan<consumers = #tile.decision<2, "hand-written">, threads = #tile.decision<384, "hand-written">, persistent = #tile.decision<0, "hand-written">, smem_bytes = #tile.decision<79872, "hand-written">, group_m = #tile.decision<1, "hand-written">, ctas_per_sm = #tile.decision<1, "hand-written">, replicated_rows = #tile.decision<64, "hand-written">, producer_registers = #tile.decision<40, "hand-written">, consumer_registers = #tile.decision<232, "hand-written">>, col_scratch_offset = 74752 : i64, params = {BQ = 64 : i64, BKV = 128 : i64, D = 64 : i64}} {
    %N = tile.dim %Q[0] : !tile.gl<[N, 64], bf16>
    %0 = arith.constant 128 : index
    %1 = arith.divui %N, %0 : index
    tile.grid(%1) as ["j"]
    %j = tile.block_id 0
    %2 = arith.constant 0 : index
    %q = tile.load %Q[%j, %2] {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 1024 : i64} : !tile.gl<[N, 64], bf16> -> !tile.st<64x64xbf16, swizzle 128>
    %k = tile.load %K[%j, %2] {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 9216 : i64} : !tile.gl<[N, 64], bf16> -> !tile.st<128x64xbf16, swizzle 128>
    %v = tile.load %V[%j, %2] {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 25600 : i64} : !tile.gl<[N, 64], bf16> -> !tile.st<64x64xbf16, swizzle 128>
    %s = tile.mma %q, %k transpose_b {a_desc = #tile.decision<4611686293305360384, "hand-written">, b_desc = #tile.decision<4611686293305360384, "hand-written">} : !tile.st<64x64xbf16, swizzle 128>, !tile.st<128x64xbf16, swizzle 128> -> !tile.rt<64x128xf32>
    %3 = tile.reduce max row %s : !tile.rt<64x128xf32> -> !tile.rv<64xf32>
    tile.store %3, %M[%j] : !tile.rv<64xf32>, !tile.gl<[N], f32>
    %4 = tile.reduce sum col %s : !tile.rt<64x128xf32> -> !tile.rv<128xf32, col>
    tile.store %4, %C[%j] : !tile.rv<128xf32, col>, !tile.gl<[N], f32>
    %p = tile.convert %s : !tile.rt<64x128xf32> -> !tile.rt<64x128xbf16>
    tile.store %p, %P[%j, %j] {staging = #tile.decision<128, "hand-written">, smem_offset = 50176 : i64} : !tile.rt<64x128xbf16>, !tile.gl<[N, N], bf16>
    %5 = tile.to_shared %p {swizzle = #tile.decision<128, "hand-written">, smem_align = 1024 : i64, smem_offset = 33792 : i64} : !tile.rt<64x128xbf16> -> !tile.st<64x128xbf16, swizzle 128>
    %6 = tile.mma %5, %v transpose_a {b_desc = #tile.decision<4611686293338849280, "hand-written">, a_desc = #tile.decision<4611686293338849280, "hand-written">} : !tile.st<64x128xbf16, swizzle 128>, !tile.st<64x64xbf16, swizzle 128> -> !tile.rt<128x64xf32>
    tile.store %6, %O[%j, %2] {staging = #tile.decision<32, "hand-written">, smem_offset = 66560 : i64} : !tile.rt<128x64xf32>, !tile.gl<[N, 64], f32>
    tile.return
  }
}
// CHECK:      } consumer {
// CHECK-NEXT: ^bb0(%[[CONSUMER:[0-9]+]]: index):
// CHECK:        %[[WHOLE:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[ROWS:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:   %[[ROW0:[0-9]+]] = arith.muli %[[CONSUMER]], %[[ROWS]] : index
// CHECK:        %[[S:[0-9]+]] = sm90.wgmma %{{[0-9]+}}[%[[WHOLE]]], %{{[0-9]+}} transpose_b : {{.*}} -> !sm90.frag<64x128xf32>
// CHECK:        %[[MAX:[0-9]+]] = sm90.row_reduce max %{{[0-9]+}} : !sm90.frag<64x128xf32> -> !sm90.frag<64xf32>
// CHECK:        %[[FIRST:[0-9]+]] = arith.cmpi eq, %[[CONSUMER]], %{{[0-9]+}} : index
// CHECK-NEXT:   scf.if %[[FIRST]] {
// CHECK-NEXT:     arith.addi %{{[0-9]+}}, %[[WHOLE]]
// CHECK-NEXT:     arith.subi %{{[0-9]+}}, %[[WHOLE]]
// CHECK-NEXT:     sm90.store_vector_global %[[MAX]]
// CHECK-NEXT:   }
// CHECK:        sm90.col_reduce sum %{{[0-9]+}} via %{{[0-9]+}}[%[[CONSUMER]] of 2 : i32 replicated] bar
// CHECK:        %[[P:[0-9]+]] = sm90.convert %{{[0-9]+}} : !sm90.frag<64x128xf32> -> !sm90.frag<64x128xbf16>
// CHECK-NEXT:   arith.constant 0 : index
// CHECK-NEXT:   %[[FIRST2:[0-9]+]] = arith.cmpi eq, %[[CONSUMER]], %{{[0-9]+}} : index
// CHECK-NEXT:   scf.if %[[FIRST2]] {
// CHECK:          sm90.store_fragment %[[P]][cols 0 : i32], %{{[0-9]+}}[%{{[0-9]+}}] : !sm90.frag<64x128xbf16>, !sm90.smem<64x64xbf16, swizzle 128>
// CHECK:          sm90.tma_store
// CHECK:          sm90.store_fragment %[[P]][cols 64 : i32]
// CHECK:          sm90.tma_store
// CHECK:        }
// CHECK:        %[[PS:[0-9]+]] = sm90.smem_view %{{[0-9]+}} : !sm90.smem<64x128xbf16, swizzle 128>
// CHECK-NEXT:   %[[ALL:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:   sm90.named_barrier %[[ALL]], 256 : i32
// CHECK:        scf.if
// CHECK-NEXT:     sm90.store_fragment %[[P]][cols 0 : i32], %[[PS]][%[[WHOLE]]] : !sm90.frag<64x128xbf16>, !sm90.smem<64x128xbf16, swizzle 128>
// CHECK-NEXT:     sm90.fence_proxy_async
// CHECK-NEXT:   }
// CHECK-NEXT:   sm90.named_barrier %[[ALL]], 256 : i32
// CHECK-NEXT:   %[[O:[0-9]+]] = sm90.wgmma %[[PS]][%[[ROW0]]], %{{[0-9]+}} transpose_a : {{.*}} -> !sm90.frag<64x64xf32>
// CHECK:        %[[OW:[0-9]+]] = sm90.wgmma_wait %[[O]]
// CHECK-NOT:    scf.if
// CHECK:        sm90.store_fragment %[[OW]][cols 0 : i32], %{{[0-9]+}}[%{{[0-9]+}}] : !sm90.frag<64x64xf32>, !sm90.smem<64x8xf32, swizzle 32>

// The replicated column reduction reads back the 4 scratch rows (512 B each) of its own
// warpgroup (from row 4 x index) only, not the 8 rows of both.
// PTX:      ptx.bar_sync {count = 256 : i64, imm = 3 : i64}
// PTX:      ptx.bar_sync {count = 256 : i64, imm = 3 : i64}
// PTX-NEXT: %[[ROW:[0-9]+]] = ptx.shl(%{{[0-9]+}}) {ty = b32, imm = 2 : i64} : b32
// PTX-NEXT: %[[BYTES:[0-9]+]] = ptx.mov {ty = u32, imm = 512 : i64} : b32
// PTX-NEXT: %[[OWN:[0-9]+]] = ptx.mad(%[[ROW]], %[[BYTES]], %{{[0-9]+}}) {ty = u32, mods = lo} : b32
// PTX-NEXT: ptx.ld(%[[OWN]]) {space = shared, ty = f32, offset = 0 : i64}
// PTX:      ptx.ld(%[[OWN]]) {space = shared, ty = f32, offset = 2016 : i64}
// PTX-NEXT: ptx.add
