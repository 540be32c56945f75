// convert-tile-to-sm90 (and sm90-build-rings) on hand-written planned tile IR (a 2-stage GEMM, one consumer, one CTA
// per tile): the offsets tile-pipeline recorded are the ones the sm90 IR uses (ring at 1024,
// 16384-byte stages, B at 8192 in a stage, staging at 33792); the producer waits `empty` with
// the flipped parity, expects the stage's bytes and issues both loads; the consumer waits
// `full`, views the stage, keeps one wgmma group in flight and frees the previous stage from
// the second iteration on, the last one after the loop; the store goes through the staging
// chunk and one TMA store.
// convert-tile-to-sm90 itself leaves the barriers to sm90-build-rings: each role makes its
// sm90.ring 0 (1024, 2 x 16384 bytes); the producer acquires stage k where B's load stood, the
// consumer waits for it at A's and releases it.
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90,sm90-build-rings | filecheck %s
// RUN: tkc-opt %s -p tile-warp-specialize,convert-tile-to-sm90 | filecheck %s --check-prefix=RINGS

builtin.module {
  tile.kernel @gemm(%A: !tile.gl<[M, K], bf16>, %B: !tile.gl<[K, N], bf16>, %C: !tile.gl<[M, N], bf16>) attributes {plan = #tile.plan<consumers = #tile.decision<1, "hand-written">, stages = #tile.decision<2, "hand-written">, smem_bytes = #tile.decision<43008, "hand-written">>, params = {}} {
    %M = tile.dim %A[0] : !tile.gl<[M, K], bf16>
    %N = tile.dim %B[1] : !tile.gl<[K, N], bf16>
    %K = tile.dim %A[1] : !tile.gl<[M, K], bf16>
    %c64 = arith.constant 64 : index
    %rows = arith.divui %M, %c64 : index
    %cols = arith.divui %N, %c64 : index
    tile.grid(%rows, %cols) as ["i", "j"]
    %i = tile.block_id 0
    %j = tile.block_id 1
    %zero = tile.fill 0.000000e+00 : f32 : !tile.rt<64x64xf32>
    %c0 = arith.constant 0 : index
    %steps = arith.divui %K, %c64 : index
    %c1 = arith.constant 1 : index
    %acc = scf.for %k = %c0 to %steps step %c1 iter_args(%carried = %zero) -> (!tile.rt<64x64xf32>) {
      %a = tile.load %A[%i, %k] {stage_offset = 0 : i64} : !tile.gl<[M, K], bf16> -> !tile.st<64x64xbf16, swizzle 128>
      %b = tile.load %B[%k, %j] {stage_offset = 8192 : i64} : !tile.gl<[K, N], bf16> -> !tile.st<64x64xbf16, swizzle 128>
      %next = tile.mma %a, %b, %carried : !tile.st<64x64xbf16, swizzle 128>, !tile.st<64x64xbf16, swizzle 128>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      scf.yield %next : !tile.rt<64x64xf32>
    } {ring_offset = 1024 : i64, stage_bytes = 16384 : i64}
    %out = tile.convert %acc : !tile.rt<64x64xf32> -> !tile.rt<64x64xbf16>
    tile.store %out, %C[%i, %j] {smem_offset = 33792 : i64} : !tile.rt<64x64xbf16>, !tile.gl<[M, N], bf16>
    tile.return
  }
}

// CHECK:      sm90.kernel @gemm threads 256 : i32 smem 43008 : i32 min_ctas 1 : i32 abi
// CHECK-SAME:   grid [(div M 64), (div N 64), 1]
// CHECK:        sm90.single_thread "block" {
// CHECK-COUNT-2:  sm90.mbarrier_init %{{[0-9]+}}, 1 : i32
// CHECK:          sm90.fence_barrier_init
// CHECK:        sm90.sync_block
// CHECK-NEXT:   sm90.roles consumers 1 : i32 registers(0 : i32, 0 : i32) producer {
// CHECK-NEXT:     sm90.single_thread "warpgroup" {
// CHECK:            scf.for %[[K:[0-9]+]] =
// CHECK:              %[[STAGE:[0-9]+]] = arith.remui %{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK:              %[[RING:[0-9]+]] = arith.constant 1024 : index
// CHECK:              arith.constant 16384 : index
// CHECK:              %[[PARITY:[0-9]+]] = arith.xori
// CHECK-NEXT:         sm90.mbarrier_wait %[[EMPTY:[0-9]+]], %[[PARITY]]
// CHECK-NEXT:         sm90.mbarrier_arrive %[[FULL:[0-9]+]] expect_tx 16384 : i32
// CHECK:              sm90.trap
// CHECK:              sm90.tensormap "tmap_A_0"
// CHECK:              sm90.tma_load %{{[0-9]+}}[%{{[0-9]+}}, %{{[0-9]+}}] -> %{{[0-9]+}} bar %[[FULL]] bytes 8192 : i32
// CHECK:              sm90.tensormap "tmap_B_1"
// CHECK:              arith.constant 8192 : index
// CHECK:              sm90.tma_load %{{[0-9]+}}[%{{[0-9]+}}, %{{[0-9]+}}] -> %{{[0-9]+}} bar %[[FULL]] bytes 8192 : i32
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   } consumer {
// CHECK-NEXT:   ^bb0(%[[CONSUMER:[0-9]+]]: index):
// CHECK:          %[[ROW0:[0-9]+]] = arith.muli %[[CONSUMER]], %{{[0-9]+}} : index
// CHECK:          %[[ZERO:[0-9]+]] = sm90.fill 0.000000e+00 : f32 : !sm90.frag<64x64xf32>
// CHECK:          %[[ACC:[0-9]+]] = scf.for {{.*}} iter_args(%[[CARRIED:[0-9]+]] = %[[ZERO]]) -> (!sm90.frag<64x64xf32>) {
// CHECK:            sm90.mbarrier_wait %{{[0-9]+}}, %{{[0-9]+}}
// CHECK:            %[[A:[0-9]+]] = sm90.smem_view %{{[0-9]+}} : !sm90.smem<64x64xbf16, swizzle 128>
// CHECK:            arith.constant 8192 : index
// CHECK:            %[[B:[0-9]+]] = sm90.smem_view %{{[0-9]+}} : !sm90.smem<64x64xbf16, swizzle 128>
// CHECK-NEXT:       %[[MMA:[0-9]+]] = sm90.wgmma %[[A]][%[[ROW0]]], %[[B]], %[[CARRIED]]
// CHECK-NEXT:       %[[DONE:[0-9]+]] = sm90.wgmma_wait %[[MMA]], 1 : i32
// CHECK-NEXT:       %[[LATER:[0-9]+]] = arith.cmpi ugt
// CHECK-NEXT:       scf.if %[[LATER]] {
// CHECK:              sm90.single_thread "warp" {
// CHECK-NEXT:           sm90.mbarrier_arrive
// CHECK:            scf.yield %[[DONE]] : !sm90.frag<64x64xf32>
// CHECK-NEXT:     } {wgmma_in_flight = "one group
// CHECK-NEXT:     %[[LAST:[0-9]+]] = sm90.wgmma_wait %[[ACC]], 0 : i32
// CHECK:          scf.if
// CHECK:            sm90.single_thread "warp" {
// CHECK-NEXT:         sm90.mbarrier_arrive
// CHECK:          %[[OUT:[0-9]+]] = sm90.convert %[[LAST]] : !sm90.frag<64x64xf32> -> !sm90.frag<64x64xbf16>
// CHECK-NEXT:     %[[STAGING:[0-9]+]] = arith.constant 33792 : index
// CHECK:          %[[CHUNK:[0-9]+]] = sm90.smem_view %{{[0-9]+}} : !sm90.smem<64x64xbf16, swizzle 128>
// CHECK-NEXT:     sm90.single_thread "warpgroup" {
// CHECK-NEXT:       sm90.tma_store_wait 0 : i32 read
// CHECK-NEXT:     }
// CHECK-NEXT:     sm90.named_barrier %[[ID:[0-9]+]], 128 : i32
// CHECK-NEXT:     sm90.store_fragment %[[OUT]][cols 0 : i32], %[[CHUNK]]
// CHECK-NEXT:     sm90.fence_proxy_async
// CHECK-NEXT:     sm90.named_barrier %[[ID]], 128 : i32
// CHECK-NEXT:     sm90.single_thread "warpgroup" {
// CHECK-NEXT:       sm90.tensormap "tmap_C_2"
// CHECK:            sm90.tma_store
// CHECK-NEXT:       sm90.tma_store_commit
// CHECK-NEXT:     }

// RINGS:        sm90.single_thread "block" {
// RINGS-NEXT:     sm90.fence_barrier_init
// RINGS-NEXT:   }
// RINGS:        producer {
// RINGS:          %[[PBASE:[0-9]+]] = sm90.smem_base
// RINGS-NEXT:     %[[PRING:[0-9]+]] = sm90.ring 0 at %[[PBASE]] offset 1024 stages 2 stage_bytes 16384
// RINGS:            %[[STAGE:[0-9]+]], %[[FULL:[0-9]+]] = sm90.ring_acquire %[[PRING]][%{{[0-9]+}}] expect_tx 16384
// RINGS:            sm90.tma_load {{.*}} -> %{{[0-9]+}} bar %[[FULL]] bytes 8192 : i32
// RINGS:            sm90.tma_load {{.*}} -> %{{[0-9]+}} bar %[[FULL]] bytes 8192 : i32
// RINGS:        } consumer {
// RINGS:          %[[CBASE:[0-9]+]] = sm90.smem_base
// RINGS-NEXT:     %[[CRING:[0-9]+]] = sm90.ring 0 at %[[CBASE]] offset 1024 stages 2 stage_bytes 16384
// RINGS:            %[[CSTAGE:[0-9]+]] = sm90.ring_wait %[[CRING]][%{{[0-9]+}}]
// RINGS:            sm90.ring_release %[[CRING]][%{{[0-9]+}}]
// RINGS:          sm90.ring_release %[[CRING]][%{{[0-9]+}}]
// RINGS-NOT:      sm90.mbarrier
