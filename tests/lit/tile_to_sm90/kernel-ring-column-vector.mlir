// convert-tile-to-sm90 (and sm90-build-rings) on hand-written planned tile IR: kernel-level loads (a one-stage ring
// that turns over once per output tile), a column vector and two consumers. The producer issues
// the stage where its last load (X) stood, the consumers wait for it where the first (V) stood;
// the column vector (typed `col` as tile-vector-layout leaves it) is a fragment every consumer
// loads whole (row 0), each consumer loads its 64 rows of X (row0 = index * 64); the store
// stages in the loads' bytes (staging_reuse), so all consumers meet first (named barrier 3, 256
// threads); the stage is freed at the tile's end.
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings | filecheck %s

builtin.module {
  tile.kernel @scale_cols(%X: !tile.gl<[M, N], bf16>, %V: !tile.gl<[N], bf16>, %Y: !tile.gl<[M, N], bf16>) attributes {plan = #tile.plan<consumers = #tile.decision<2, "hand-written">, smem_bytes = #tile.decision<19456, "hand-written">>, params = {}} {
    %M = tile.dim %X[0] : !tile.gl<[M, N], bf16>
    %N = tile.dim %X[1] : !tile.gl<[M, N], bf16>
    %c128 = arith.constant 128 : index
    %rows = arith.divui %M, %c128 : index
    %c64 = arith.constant 64 : index
    %cols = arith.divui %N, %c64 : index
    tile.grid(%rows, %cols) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %vs = tile.load %V[%j] {smem_offset = 1024 : i64} : !tile.gl<[N], bf16> -> !tile.sv<64xbf16>
    %vr = tile.to_reg %vs : !tile.sv<64xbf16> -> !tile.rv<64xbf16, col>
    %v = tile.convert %vr : !tile.rv<64xbf16, col> -> !tile.rv<64xf32, col>
    %xs = tile.load %X[%i, %j] {smem_offset = 2048 : i64} : !tile.gl<[M, N], bf16> -> !tile.st<128x64xbf16, swizzle 128>
    %xr = tile.to_reg %xs : !tile.st<128x64xbf16, swizzle 128> -> !tile.rt<128x64xbf16>
    %x = tile.convert %xr : !tile.rt<128x64xbf16> -> !tile.rt<128x64xf32>
    %sum = tile.broadcast add col %x, %v : !tile.rt<128x64xf32>, !tile.rv<64xf32, col>
    %out = tile.convert %sum : !tile.rt<128x64xf32> -> !tile.rt<128x64xbf16>
    tile.store %out, %Y[%i, %j] {smem_offset = 1024 : i64, staging_reuse = #tile.decision<1, "hand-written">} : !tile.rt<128x64xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }
}

// CHECK:      sm90.kernel @scale_cols threads 384 : i32 smem 19456 : i32
// CHECK:        sm90.single_thread "block" {
// CHECK:          sm90.mbarrier_init %{{[0-9]+}}, 1 : i32
// CHECK:          sm90.mbarrier_init %{{[0-9]+}}, 8 : i32
// CHECK-NEXT:     sm90.fence_barrier_init
// CHECK-NEXT:   }
// CHECK:        sm90.roles consumers 2 : i32 registers(0 : i32, 0 : i32) producer {
// CHECK:            sm90.mbarrier_wait
// CHECK-NEXT:       sm90.mbarrier_arrive %[[FULL:[0-9]+]] expect_tx 16512 : i32
// CHECK:            sm90.tensormap "tmap_V_0"
// CHECK:            sm90.tma_load {{.*}} bar %[[FULL]] bytes 128 : i32
// CHECK:            sm90.tensormap "tmap_X_1"
// CHECK:            sm90.tma_load {{.*}} bar %[[FULL]] bytes 16384 : i32
// CHECK-NEXT:     }
// CHECK-NEXT:   } consumer {
// CHECK-NEXT:   ^bb0(%[[CONSUMER:[0-9]+]]: index):
// CHECK:          %[[ROWS:[0-9]+]] = arith.constant 64 : index
// CHECK-NEXT:     %[[ROW0:[0-9]+]] = arith.muli %[[CONSUMER]], %[[ROWS]] : index
// CHECK:          sm90.mbarrier_wait
// CHECK:          %[[VS:[0-9]+]] = sm90.smem_view %{{[0-9]+}} : !sm90.smem<64xbf16, swizzle 0>
// CHECK:          %[[XS:[0-9]+]] = sm90.smem_view %{{[0-9]+}} : !sm90.smem<128x64xbf16, swizzle 128>
// CHECK-NEXT:     %[[FIRST:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:     %[[VR:[0-9]+]] = sm90.load_fragment %[[VS]][%[[FIRST]]] : !sm90.smem<64xbf16, swizzle 0> -> !sm90.frag<64xbf16, col>
// CHECK-NEXT:     %[[V:[0-9]+]] = sm90.convert %[[VR]] : !sm90.frag<64xbf16, col> -> !sm90.frag<64xf32, col>
// CHECK-NEXT:     %[[XR:[0-9]+]] = sm90.load_fragment %[[XS]][%[[ROW0]]] : !sm90.smem<128x64xbf16, swizzle 128> -> !sm90.frag<64x64xbf16>
// CHECK-NEXT:     %[[X:[0-9]+]] = sm90.convert %[[XR]] : !sm90.frag<64x64xbf16> -> !sm90.frag<64x64xf32>
// CHECK-NEXT:     sm90.col_broadcast add %[[X]], %[[V]] : !sm90.frag<64x64xf32>, !sm90.frag<64xf32, col>
// CHECK:          %[[ALL:[0-9]+]] = arith.constant 3 : index
// CHECK-NEXT:     sm90.named_barrier %[[ALL]], 256 : i32
// CHECK:          sm90.store_fragment
// CHECK:          sm90.tma_store_wait 0 : i32 read
// CHECK-NEXT:     }
// CHECK:          sm90.single_thread "warp" {
// CHECK-NEXT:       sm90.mbarrier_arrive
// CHECK-NEXT:     }
// CHECK-NEXT:     sm90.single_thread "warpgroup" {
// CHECK-NEXT:       sm90.tma_store_wait 0 : i32 read
// CHECK-NEXT:     }
// CHECK-NEXT:   }
