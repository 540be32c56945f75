// sm90 -> ptx of typed mbarriers: a group is no code; mbarrier_at of a constant stage is one add
// of offset + 8 * stage to the group's base, of a computed stage one mul by 8 shared by all its
// groups and an add of each group's offset; a peer-CTA arrive maps the barrier's address.
// RUN: tkc-opt %s -p convert-sm90-to-ptx | filecheck %s

builtin.module {
  sm90.kernel @k threads 384 : i32 smem 2048 : i32 min_ctas 1 : i32 cluster 2 : i32 abi <args [A: f32[K]], params [dim_K = dim K], grid [2, 1, 1]> {
    %base = sm90.smem_base
    %full = sm90.mbarrier_group %base offset 16 : !sm90.mbarriers<3>
    %empty = sm90.mbarrier_group %base offset 40 : !sm90.mbarriers<3>
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %last = sm90.mbarrier_at %empty[%c2] : !sm90.mbarriers<3>
    sm90.mbarrier_init %last, 8 : i32
    %k = sm90.dim "dim_K"
    %stage = arith.remui %k, %c3 : index
    %f, %e = sm90.mbarrier_at %full, %empty[%stage] : !sm90.mbarriers<3>
    sm90.mbarrier_arrive %f expect_tx 1024 : i32
    %rank = sm90.cluster_rank
    sm90.mbarrier_arrive %e in cta %rank
  }
}

// CHECK:      %[[BASE:.*]] = ptx.and(%{{.*}}) {ty = b32, imm = 4294966272 : i64} : b32
// CHECK-NEXT: %[[LAST:.*]] = ptx.add(%[[BASE]]) {ty = u32, imm = 56 : i64} : b32
// CHECK-NEXT: ptx.mbar_init(%[[LAST]]) {count = 8 : i64}
// CHECK-NEXT: %[[K:.*]] = ptx.ld_param {param = "dim_K", ty = u32} : b32
// The stage k % 3 without a rem (ptxas would expand one by an immediate into a reciprocal):
// CHECK-NEXT: %[[HIGH:.*]] = ptx.mul(%[[K]]) {ty = u32, mods = hi, imm = 1431655766 : i64} : b32
// CHECK-NEXT: %[[DIFF:.*]] = ptx.sub(%[[K]], %[[HIGH]]) {ty = u32} : b32
// CHECK-NEXT: %[[HALF:.*]] = ptx.shr(%[[DIFF]]) {ty = u32, imm = 1 : i64} : b32
// CHECK-NEXT: %[[SUM:.*]] = ptx.add(%[[HIGH]], %[[HALF]]) {ty = u32} : b32
// CHECK-NEXT: %[[LAP:.*]] = ptx.shr(%[[SUM]]) {ty = u32, imm = 1 : i64} : b32
// CHECK-NEXT: %[[LAPS:.*]] = ptx.mul(%[[LAP]]) {ty = u32, mods = lo, imm = 3 : i64} : b32
// CHECK-NEXT: %[[STAGE:.*]] = ptx.sub(%[[K]], %[[LAPS]]) {ty = u32} : b32
// CHECK-NEXT: %[[STRIDE:.*]] = ptx.mul(%[[STAGE]]) {ty = u32, mods = lo, imm = 8 : i64} : b32
// CHECK-NEXT: %[[FULL0:.*]] = ptx.add(%[[BASE]]) {ty = u32, imm = 16 : i64} : b32
// CHECK-NEXT: %[[FULL:.*]] = ptx.add(%[[FULL0]], %[[STRIDE]]) {ty = u32} : b32
// CHECK-NEXT: %[[EMPTY0:.*]] = ptx.add(%[[BASE]]) {ty = u32, imm = 40 : i64} : b32
// CHECK-NEXT: %[[EMPTY:.*]] = ptx.add(%[[EMPTY0]], %[[STRIDE]]) {ty = u32} : b32
// CHECK-NEXT: ptx.mbar_arrive_expect_tx(%[[FULL]]) {bytes = 1024 : i64}
// CHECK-NEXT: %[[RANK:.*]] = ptx.sreg {reg = "cluster_ctarank"} : b32
// CHECK-NEXT: %[[PEER:.*]] = ptx.mapa(%[[EMPTY]], %[[RANK]]) : b32
// CHECK-NEXT: ptx.mbar_arrive(%[[PEER]]) {cluster}
