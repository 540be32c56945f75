// convert-sm90-to-ptx keeps the control flow structured: roles become a negated ptx.if on the
// warpgroup index (producer first), single_thread nested ptx.ifs, scf.for a ptx.for over
// registers declared and set before it (the constant init gets a mov where it is needed),
// scf.if a ptx.if that writes a declared register, an mbarrier wait a ptx.loop.
// RUN: tkc-opt %s -p convert-sm90-to-ptx | filecheck %s

builtin.module {
  sm90.kernel @k threads 384 : i32 smem 2048 : i32 min_ctas 1 : i32 abi <args [A: f32[K]], params [dim_K = dim K], grid [1, 1, 1]> {
    %base = sm90.smem_base
    %k = sm90.dim "dim_K"
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c7 = arith.constant 7 : index
    %bars = sm90.mbarrier_group %base offset 0 : !sm90.mbarriers<1>
    %bar = sm90.mbarrier_at %bars[%c0] : !sm90.mbarriers<1>
    sm90.roles consumers 2 registers(40, 232) producer {
      sm90.single_thread "warpgroup" {
        sm90.mbarrier_arrive %bar expect_tx 1024 : i32
      }
    } consumer {
    ^bb0(%c: index):
      %sum = scf.for %it = %c0 to %k step %c1 iter_args(%acc = %c7) -> (index) {
        %phase = arith.andi %it, %c1 : index
        sm90.mbarrier_wait %bar, %phase
        %odd = arith.cmpi ne, %phase, %c0 : index
        %next = scf.if %odd -> (index) {
          %bumped = arith.addi %acc, %c : index
          scf.yield %bumped : index
        } else {
          scf.yield %acc : index
        }
        scf.yield %next : index
      }
      sm90.named_barrier %sum, 128 : i32
    }
  }
}

// CHECK:      %[[BASE:.*]] = ptx.and(%{{.*}}) {ty = b32, imm = 4294966272 : i64} : b32
// CHECK-NEXT: %[[K:.*]] = ptx.ld_param {param = "dim_K", ty = u32} : b32
// CHECK-NEXT: %[[BAR:.*]] = ptx.add(%[[BASE]]) {ty = u32, imm = 0 : i64} : b32
// CHECK-NEXT: %[[TID:.*]] = ptx.sreg {reg = "tid.x"} : b32
// CHECK-NEXT: %[[WG:.*]] = ptx.shr(%[[TID]]) {ty = u32, imm = 7 : i64} : b32
// CHECK-NEXT: %[[CONSUMER:.*]] = ptx.setp(%[[WG]]) {cmp = ne, ty = u32, imm = 0 : i64} : pred
// CHECK-NEXT: ptx.if %[[CONSUMER]] negated labels("CONSUMER", "ENDROLES") {
// CHECK-NEXT:   ptx.setmaxnreg {action = dec, n = 40 : i64}
// CHECK:        %[[FIRST_WARP:.*]] = ptx.setp(%{{.*}}) {cmp = lt, ty = u32, imm = 32 : i64} : pred
// CHECK-NEXT:   ptx.if %[[FIRST_WARP]] {
// CHECK-NEXT:     %[[ELECTED:.*]] = ptx.elect
// CHECK-NEXT:     ptx.if %[[ELECTED]] {
// CHECK-NEXT:       ptx.mbar_arrive_expect_tx(%[[BAR]]) {bytes = 1024 : i64}
// CHECK-NEXT:       ptx.yield
// CHECK-NEXT:     }
// CHECK-NEXT:     ptx.yield
// CHECK-NEXT:   }
// CHECK-NEXT:   ptx.yield
// CHECK-NEXT: } else {
// CHECK-NEXT:   ptx.setmaxnreg {action = inc, n = 232 : i64}
// CHECK-NEXT:   %[[C:.*]] = ptx.sub(%[[WG]]) {ty = u32, imm = 1 : i64} : b32
// CHECK-NEXT:   %[[IV:.*]] = ptx.reg : b32
// CHECK-NEXT:   ptx.assign(%[[IV]]) {imm = 0 : i64}
// CHECK-NEXT:   %[[ACC:.*]] = ptx.reg : b32
// CHECK-NEXT:   %[[SEVEN:.*]] = ptx.mov {ty = u32, imm = 7 : i64} : b32
// CHECK-NEXT:   ptx.assign(%[[ACC]], %[[SEVEN]])
// CHECK-NEXT:   ptx.for %[[IV]] < %[[K]] step 1 carried(%[[ACC]]) {
// CHECK-NEXT:     %[[PHASE:.*]] = ptx.and(%[[IV]]) {ty = b32, imm = 1 : i64} : b32
// CHECK-NEXT:     ptx.loop "WAIT" {
// CHECK-NEXT:       %[[DONE:.*]] = ptx.mbar_try_wait(%[[BAR]], %[[PHASE]]) : pred
// CHECK-NEXT:       ptx.repeat_if %[[DONE]] negated
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[ODD:.*]] = ptx.setp(%[[PHASE]]) {cmp = ne, ty = u32, imm = 0 : i64} : pred
// CHECK-NEXT:     %[[NEXT:.*]] = ptx.reg : b32
// CHECK-NEXT:     ptx.if %[[ODD]] writes(%[[NEXT]]) {
// CHECK-NEXT:       %[[BUMPED:.*]] = ptx.add(%[[ACC]], %[[C]]) {ty = u32} : b32
// CHECK-NEXT:       ptx.yield %[[BUMPED]]
// CHECK-NEXT:     } else {
// CHECK-NEXT:       ptx.yield %[[ACC]]
// CHECK-NEXT:     }
// CHECK-NEXT:     ptx.yield %[[NEXT]]
// CHECK-NEXT:   }
// The loop's result is its carried register.
// CHECK-NEXT:   ptx.bar_sync(%[[ACC]]) {count = 128 : i64}
// CHECK-NEXT:   ptx.yield
// CHECK-NEXT: }
// CHECK-NEXT: ptx.ret
