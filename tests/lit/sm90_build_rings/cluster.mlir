// sm90-build-rings in a 2-CTA cluster: a release that names the cluster rank frees the stage in
// both CTAs (it was multicast to both), so its empty barriers expect one lane of every consumer
// warp of both CTAs (2 x 2 x 4 = 16), and one lane per warp arrives here and, through the peer's
// rank (rank ^ 1), there. Roles that disagree on a ring are an internal error.
// RUN: tkc-opt %s -p sm90-build-rings | filecheck %s
// In a 4-CTA cluster the empty barriers expect 4 x 2 x 4 = 32 lanes, and each lane arrives here
// and in the three other CTAs (rank ^ 1, ^ 2, ^ 3).
// RUN: sed "s/cluster 2 : i32/cluster 4 : i32/" %s | tkc-opt -p sm90-build-rings | filecheck %s --check-prefix=FOUR
// RUN: sh -c 'sed "s/ring 0 at %%cbase offset 1024 stages 2/ring 0 at %%cbase offset 1024 stages 3/" %s | tkc-opt -p sm90-build-rings 2>&1; echo "exit $?"' | filecheck %s --check-prefix=DISAGREE

builtin.module {
  sm90.kernel @pair threads 384 : i32 smem 34816 : i32 min_ctas 1 : i32 cluster 2 : i32 abi <args [A: bf16[M, K]], params [dim_K = dim K], grid [2, 1, 1]> {
    %base = sm90.smem_base
    sm90.single_thread "block" {
      sm90.fence_barrier_init
    }
    sm90.cluster_sync
    sm90.roles consumers 2 : i32 registers(40 : i32, 232 : i32) producer {
      sm90.single_thread "warpgroup" {
        %pbase = sm90.smem_base
        %ring = sm90.ring 0 at %pbase offset 1024 stages 2 stage_bytes 16384
      }
    } consumer {
    ^bb0(%consumer: index):
      %cbase = sm90.smem_base
      %ring = sm90.ring 0 at %cbase offset 1024 stages 2 stage_bytes 16384
      %rank = sm90.cluster_rank
      %k = sm90.dim "dim_K"
      sm90.ring_release %ring[%k] cluster_rank %rank
    }
    sm90.cluster_sync
  }
}

// CHECK:          sm90.mbarrier_init %{{.*}}, 1 : i32
// CHECK-NEXT:     %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %{{.*}} = sm90.mbarrier_at %{{.*}} : !sm90.mbarriers<2>
// CHECK-NEXT:     sm90.mbarrier_init %{{.*}}, 16 : i32
// CHECK:          %[[RANK:[0-9a-z_]+]] = sm90.cluster_rank
// CHECK:          %{{.*}}, %[[EMPTY:[0-9a-z_]+]] = sm90.mbarrier_at
// CHECK-NEXT:     sm90.single_thread "warp" {
// CHECK-NEXT:       sm90.mbarrier_arrive %[[EMPTY]]
// CHECK-NEXT:       %[[ONE:[0-9a-z_]+]] = arith.constant 1 : index
// CHECK-NEXT:       %[[PEER:[0-9a-z_]+]] = arith.xori %[[RANK]], %[[ONE]] : index
// CHECK-NEXT:       sm90.mbarrier_arrive %[[EMPTY]] in cta %[[PEER]]
// CHECK-NEXT:     }

// FOUR:          sm90.mbarrier_init %{{.*}}, 32 : i32
// FOUR:          sm90.mbarrier_arrive %[[EMPTY:[0-9a-z_]+]]
// FOUR-COUNT-3:  sm90.mbarrier_arrive %[[EMPTY]] in cta
// FOUR-NEXT:     }

// DISAGREE: error: the roles disagree on ring 0: its offset, stages or stage bytes differ
// DISAGREE-NEXT: exit 1
