// sm90-build-rings on hand-written sm90 IR: a 2-stage ring that the producer acquires and the
// consumers (2 warpgroups) wait for and release, and a one-stage ring the consumers only look at.
// Ring 0's full and empty groups come first (smem+0, smem+16), ring 1's after them; every role
// addresses its own groups from its own smem_base; the inits go first in the init region
// (full: 1 arrival, empty: one lane per consumer warp, 8). Each ring op computes the stage
// it % S, the phase bit (it / S) & 1, the stage's address and both of its barriers, then waits,
// arrives or releases. The result keeps the barrier protocol, and a second run changes nothing.
// RUN: tkc-opt %s -p sm90-build-rings | filecheck %s
// RUN: tkc-opt %s -p sm90-build-rings,sm90-verify-barriers | filecheck %s --check-prefix=VERIFIED
// RUN: tkc-opt %s -p sm90-build-rings > %t.once.mlir && tkc-opt %t.once.mlir -p sm90-build-rings > %t.twice.mlir && diff %t.once.mlir %t.twice.mlir

builtin.module {
  sm90.kernel @ring threads 384 : i32 smem 34816 : i32 min_ctas 1 : i32 abi <args [A: bf16[M, K]], params [tmap_A = tensormap A box [64, 64] swizzle 128, dim_K = dim K], grid [1, 1, 1]> {
    %base = sm90.smem_base
    sm90.single_thread "block" {
      sm90.fence_barrier_init
    }
    sm90.sync_block
    sm90.roles consumers 2 : i32 registers(40 : i32, 232 : i32) producer {
      sm90.single_thread "warpgroup" {
        %pbase = sm90.smem_base
        %ring = sm90.ring 0 at %pbase offset 1024 stages 2 stage_bytes 16384
        %k = sm90.dim "dim_K"
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        scf.for %it = %c0 to %k step %c1 {
          %stage, %full = sm90.ring_acquire %ring[%it] expect_tx 8192
          %tmap = sm90.tensormap "tmap_A"
          sm90.tma_load %tmap[%c0, %it] -> %stage bar %full bytes 8192 : i32
        }
      }
    } consumer {
    ^bb0(%consumer: index):
      %cbase = sm90.smem_base
      %ring = sm90.ring 0 at %cbase offset 1024 stages 2 stage_bytes 16384
      %q = sm90.ring 1 at %cbase offset 33792 stages 1 stage_bytes 1024
      %k = sm90.dim "dim_K"
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %it = %c0 to %k step %c1 {
        %stage = sm90.ring_wait %ring[%it]
        %tile = sm90.smem_view %stage : !sm90.smem<64x64xbf16, swizzle 128>
        sm90.ring_release %ring[%it]
      }
      %q_stage = sm90.ring_stage %q[%c0]
    }
  }
}

// CHECK:      %[[BASE:[0-9a-z_]+]] = sm90.smem_base
// CHECK-NEXT: sm90.single_thread "block" {
// CHECK-NEXT:   %[[F:[0-9a-z_]+]] = sm90.mbarrier_group %[[BASE]] offset 0 : !sm90.mbarriers<2>
// CHECK-NEXT:   %[[E:[0-9a-z_]+]] = sm90.mbarrier_group %[[BASE]] offset 16 : !sm90.mbarriers<2>
// CHECK-NEXT:   %[[S0:[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[F0:[0-9a-z_]+]] = sm90.mbarrier_at %[[F]][%[[S0]]] : !sm90.mbarriers<2>
// CHECK-NEXT:   sm90.mbarrier_init %[[F0]], 1 : i32
// CHECK-NEXT:   %[[S0E:[0-9a-z_]+]] = arith.constant 0 : index
// CHECK-NEXT:   %[[E0:[0-9a-z_]+]] = sm90.mbarrier_at %[[E]][%[[S0E]]] : !sm90.mbarriers<2>
// CHECK-NEXT:   sm90.mbarrier_init %[[E0]], 8 : i32
// CHECK:        sm90.mbarrier_init %{{[0-9a-z_]+}}, 1 : i32
// CHECK:        sm90.mbarrier_init %{{[0-9a-z_]+}}, 8 : i32
// CHECK-NEXT:   %{{[0-9a-z_]+}} = sm90.mbarrier_group %[[BASE]] offset 32 : !sm90.mbarriers<1>
// CHECK-NEXT:   %{{[0-9a-z_]+}} = sm90.mbarrier_group %[[BASE]] offset 40 : !sm90.mbarriers<1>
// CHECK-COUNT-2: sm90.mbarrier_init
// CHECK-NEXT:   sm90.fence_barrier_init
// CHECK-NEXT: }

// The producer: wait `empty` with the flipped phase, expect the bytes on `full`, load onto it.
// CHECK:        %[[PBASE:[0-9a-z_]+]] = sm90.smem_base
// CHECK-NEXT:   %[[PF:[0-9a-z_]+]] = sm90.mbarrier_group %[[PBASE]] offset 0 : !sm90.mbarriers<2>
// CHECK-NEXT:   %[[PE:[0-9a-z_]+]] = sm90.mbarrier_group %[[PBASE]] offset 16 : !sm90.mbarriers<2>
// CHECK-NOT:    sm90.ring
// CHECK:        scf.for %[[IT:[0-9a-z_]+]] =
// CHECK-NEXT:     %[[S:[0-9a-z_]+]] = arith.constant 2 : index
// CHECK-NEXT:     %[[STAGE:[0-9a-z_]+]] = arith.remui %[[IT]], %[[S]] : index
// CHECK-NEXT:     %[[LAP:[0-9a-z_]+]] = arith.divui %[[IT]], %[[S]] : index
// CHECK-NEXT:     %[[ONE:[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:     %[[PHASE:[0-9a-z_]+]] = arith.andi %[[LAP]], %[[ONE]] : index
// CHECK-NEXT:     %[[RING:[0-9a-z_]+]] = arith.constant 1024 : index
// CHECK-NEXT:     %[[START:[0-9a-z_]+]] = arith.addi %[[PBASE]], %[[RING]] : index
// CHECK-NEXT:     %[[BYTES:[0-9a-z_]+]] = arith.constant 16384 : index
// CHECK-NEXT:     %[[OFFSET:[0-9a-z_]+]] = arith.muli %[[STAGE]], %[[BYTES]] : index
// CHECK-NEXT:     %[[ADDR:[0-9a-z_]+]] = arith.addi %[[START]], %[[OFFSET]] : index
// CHECK-NEXT:     %[[FULL:[0-9a-z_]+]], %[[EMPTY:[0-9a-z_]+]] = sm90.mbarrier_at %[[PF]], %[[PE]][%[[STAGE]]] : !sm90.mbarriers<2>
// CHECK-NEXT:     %[[ONE2:[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:     %[[FLIPPED:[0-9a-z_]+]] = arith.xori %[[PHASE]], %[[ONE2]] : index
// CHECK-NEXT:     sm90.mbarrier_wait %[[EMPTY]], %[[FLIPPED]]
// CHECK-NEXT:     sm90.mbarrier_arrive %[[FULL]] expect_tx 8192 : i32
// CHECK-NEXT:     sm90.tensormap "tmap_A"
// CHECK-NEXT:     sm90.tma_load %{{[0-9a-z_]+}}[%{{[0-9a-z_]+}}, %[[IT]]] -> %[[ADDR]] bar %[[FULL]] bytes 8192 : i32

// The consumers: wait `full` with the plain phase; release with one lane per warp.
// CHECK:        %[[CBASE:[0-9a-z_]+]] = sm90.smem_base
// CHECK-NEXT:   %[[CF:[0-9a-z_]+]] = sm90.mbarrier_group %[[CBASE]] offset 0 : !sm90.mbarriers<2>
// CHECK-NEXT:   %[[CE:[0-9a-z_]+]] = sm90.mbarrier_group %[[CBASE]] offset 16 : !sm90.mbarriers<2>
// CHECK-NEXT:   %[[QF:[0-9a-z_]+]] = sm90.mbarrier_group %[[CBASE]] offset 32 : !sm90.mbarriers<1>
// CHECK-NEXT:   %[[QE:[0-9a-z_]+]] = sm90.mbarrier_group %[[CBASE]] offset 40 : !sm90.mbarriers<1>
// CHECK:        scf.for
// CHECK:          %[[CFULL:[0-9a-z_]+]], %[[CEMPTY:[0-9a-z_]+]] = sm90.mbarrier_at %[[CF]], %[[CE]][%[[CSTAGE:[0-9a-z_]+]]] : !sm90.mbarriers<2>
// CHECK-NEXT:     sm90.mbarrier_wait %[[CFULL]], %{{[0-9a-z_]+}}
// CHECK-NEXT:     sm90.smem_view
// CHECK:          sm90.mbarrier_at %[[CF]], %[[CE]]
// CHECK-NEXT:     sm90.single_thread "warp" {
// CHECK-NEXT:       sm90.mbarrier_arrive %{{[0-9a-z_]+}}
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK:        sm90.mbarrier_at %[[QF]], %[[QE]]
// CHECK-NOT:    sm90.mbarrier_wait
// CHECK-NOT:    sm90.ring

// VERIFIED: sm90.kernel @ring
