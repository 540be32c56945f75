// tile.to_shared in convert-tile-to-sm90: bf16(state), a register tile, becomes the B operand of
// a wgmma through one shared buffer, at the offset tile-pipeline planned for it (1024: after the
// mbarriers, before the ring). All consumers sync (named barrier consumers + 1, 128 x consumers
// threads) before the write (the previous contents were read) and after every writer's proxy
// fence; then each consumer's wgmma reads the whole tile and is waited on at once.
// RUN: tkc compile %examples/linear_attention.tk --emit=tile | filecheck %s --check-prefix=TILE
// RUN: tkc compile %examples/linear_attention.tk --emit=sm90 | filecheck %s
// RUN: tkc compile %examples/linear_attention.tk -D BC=128 -D D=128 --emit=sm90 | filecheck %s --check-prefix=TWO

// TILE: tile.to_shared {{.*}}smem_offset = 1024 : i64
// TILE: ring_offset = 9216 : i64

// CHECK: sm90.roles
// CHECK: %[[RING:[0-9]+]] = arith.constant 9216 : index
// CHECK: %[[Q:[0-9]+]] = sm90.smem_view %{{[0-9]+}} : !sm90.smem<64x64xbf16, swizzle 128>
// CHECK: %[[STATE:[0-9]+]] = sm90.convert %{{[0-9]+}} : !sm90.frag<64x64xf32> -> !sm90.frag<64x64xbf16>
// CHECK: %[[ACC:[0-9]+]] = sm90.wgmma_wait
// CHECK-NEXT: %[[OFF:[0-9]+]] = arith.constant 1024 : index
// CHECK-NEXT: %[[ADDR:[0-9]+]] = arith.addi %{{[0-9]+}}, %[[OFF]] : index
// CHECK-NEXT: %[[BUF:[0-9]+]] = sm90.smem_view %[[ADDR]] : !sm90.smem<64x64xbf16, swizzle 128>
// CHECK-NEXT: %[[ID:[0-9]+]] = arith.constant 2 : index
// CHECK-NEXT: sm90.named_barrier %[[ID]], 128 : i32
// CHECK-NEXT: sm90.store_fragment %[[STATE]][cols 0 : i32], %[[BUF]][%[[ROW0:[0-9]+]]] : !sm90.frag<64x64xbf16>, !sm90.smem<64x64xbf16, swizzle 128>
// CHECK-NEXT: sm90.fence_proxy_async
// CHECK-NEXT: sm90.named_barrier %[[ID]], 128 : i32
// CHECK-NEXT: %[[O:[0-9]+]] = sm90.wgmma %[[Q]][%[[ROW0]]], %[[BUF]], %[[ACC]] :
// CHECK-NEXT: sm90.wgmma_wait %[[O]], 0

// Two consumers: each stores its 64 rows into the one 128x128 tile and reads all of it.
// TWO: sm90.named_barrier %[[ID:[0-9]+]], 256 : i32
// TWO-NEXT: sm90.store_fragment %{{[0-9]+}}[cols 0 : i32], %[[BUF:[0-9]+]][%{{[0-9]+}}] : !sm90.frag<64x128xbf16>, !sm90.smem<128x128xbf16, swizzle 128>
// TWO-NEXT: sm90.fence_proxy_async
// TWO-NEXT: sm90.named_barrier %[[ID]], 256 : i32
// TWO-NEXT: sm90.wgmma %{{[0-9]+}}[%{{[0-9]+}}], %[[BUF]], %{{[0-9]+}} : {{.*}} -> !sm90.frag<64x128xf32>
