// A minimal warp-specialised kernel with a 2-stage TMA ring and a correct barrier protocol.
// The tests of sm90-verify-barriers break it with sed, one rule at a time.
builtin.module {
  sm90.kernel @ring threads 256 : i32 smem 34816 : i32 min_ctas 1 : i32 abi <args [A: bf16[M, K]], params [tmap_A = tensormap A box [64, 64] swizzle 128, dim_K = dim K], grid [1, 1, 1]> {
    %base = sm90.smem_base
    sm90.single_thread "block" {
      %fulls = sm90.mbarrier_group %base offset 0 : !sm90.mbarriers<2>
      %empties = sm90.mbarrier_group %base offset 16 : !sm90.mbarriers<2>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %f0 = sm90.mbarrier_at %fulls[%c0] : !sm90.mbarriers<2>
      sm90.mbarrier_init %f0, 1 : i32
      %f1 = sm90.mbarrier_at %fulls[%c1] : !sm90.mbarriers<2>
      sm90.mbarrier_init %f1, 1 : i32
      %e0 = sm90.mbarrier_at %empties[%c0] : !sm90.mbarriers<2>
      sm90.mbarrier_init %e0, 128 : i32
      %e1 = sm90.mbarrier_at %empties[%c1] : !sm90.mbarriers<2>
      sm90.mbarrier_init %e1, 128 : i32
      sm90.fence_barrier_init
    }
    sm90.sync_block
    sm90.roles consumers 1 : i32 registers(40 : i32, 232 : i32) producer {
      sm90.single_thread "warpgroup" {
        %pbase = sm90.smem_base
        %fulls = sm90.mbarrier_group %pbase offset 0 : !sm90.mbarriers<2>
        %empties = sm90.mbarrier_group %pbase offset 16 : !sm90.mbarriers<2>
        %k = sm90.dim "dim_K"
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c1024 = arith.constant 1024 : index
        %stage_bytes = arith.constant 16384 : index
        scf.for %it = %c0 to %k step %c1 {
          %s = arith.remui %it, %c2 : index
          %lap = arith.divui %it, %c2 : index
          %phase = arith.andi %lap, %c1 : index
          %flipped = arith.xori %phase, %c1 : index
          %full, %empty = sm90.mbarrier_at %fulls, %empties[%s] : !sm90.mbarriers<2>
          sm90.mbarrier_wait %empty, %flipped
          sm90.mbarrier_arrive %full expect_tx 16384 : i32
          %tmap = sm90.tensormap "tmap_A"
          %ring = arith.addi %pbase, %c1024 : index
          %offset = arith.muli %s, %stage_bytes : index
          %dst = arith.addi %ring, %offset : index
          sm90.tma_load %tmap[%c0, %it] -> %dst bar %full bytes 16384 : i32
        }
      }
    } consumer {
    ^bb0(%consumer: index):
      %cbase = sm90.smem_base
      %fulls = sm90.mbarrier_group %cbase offset 0 : !sm90.mbarriers<2>
      %empties = sm90.mbarrier_group %cbase offset 16 : !sm90.mbarriers<2>
      %k = sm90.dim "dim_K"
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      scf.for %it = %c0 to %k step %c1 {
        %s = arith.remui %it, %c2 : index
        %lap = arith.divui %it, %c2 : index
        %phase = arith.andi %lap, %c1 : index
        %full, %empty = sm90.mbarrier_at %fulls, %empties[%s] : !sm90.mbarriers<2>
        sm90.mbarrier_wait %full, %phase
        sm90.mbarrier_arrive %empty
      }
    }
  }
}
