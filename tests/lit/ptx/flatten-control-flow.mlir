// ptx-flatten-control-flow on hand-written structured ptx IR. An if/else with result registers,
// a negated if without else and named labels, a rotated for loop whose yield swaps its carried
// registers (a parallel copy), and a spin loop; labels are numbered per prefix in text order.
// The structured form prints and parses back; -t ptx refuses it until it is flattened.
// RUN: tkc-opt %s | tkc-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: tkc-opt %s -p ptx-flatten-control-flow | filecheck %s
// RUN: tkc-opt %s -p ptx-flatten-control-flow -t ptx | filecheck %s --check-prefix=PTX
// RUN: not tkc-opt %s -t ptx 2>&1 | filecheck %s --check-prefix=UNFLAT

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k {params = [#ptx.param<"n", u32>], maxntid = array<i64: 128, 1, 1>} {
    %tid = ptx.sreg {reg = "tid.x"} : b32
    %n = ptx.ld_param {param = "n", ty = u32} : b32
    %p = ptx.setp(%tid) {cmp = eq, ty = u32, imm = 0 : i64} : pred
    %r = ptx.reg : b32
    ptx.if %p writes(%r) {
      %one = ptx.mov {ty = u32, imm = 1 : i64} : b32
      ptx.yield %one
    } else {
      ptx.yield %n
    }
    ptx.if %p negated labels("OTHERS", "JOINED") {
      ptx.bar_sync {imm = 1 : i64, count = 96 : i64}
      ptx.yield
    }
    %iv = ptx.reg : b32
    ptx.assign(%iv) {imm = 0 : i64}
    %a = ptx.reg : b32
    %b = ptx.reg : b32
    ptx.assign(%a, %tid)
    ptx.assign(%b, %r)
    ptx.for %iv < %n step 1 carried(%a, %b) {
      ptx.yield %b, %a
    }
    %addr = ptx.smem_base : b32
    ptx.loop "WAIT" {
      %done = ptx.mbar_try_wait(%addr) {imm = 0 : i64} : pred
      ptx.repeat_if %done negated
    }
    ptx.ret
  }
}

// ROUNDTRIP:      ptx.if %{{.*}} writes(%{{.*}}) {
// ROUNDTRIP:      } else {
// ROUNDTRIP:      ptx.if %{{.*}} negated labels("OTHERS", "JOINED") {
// ROUNDTRIP:      ptx.for %{{.*}} < %{{.*}} step 1 carried(%{{.*}}, %{{.*}}) {
// ROUNDTRIP:      ptx.loop "WAIT" {
// ROUNDTRIP:        ptx.repeat_if %{{.*}} negated

// CHECK-NOT:  ptx.if
// CHECK-NOT:  ptx.for
// CHECK-NOT:  ptx.loop
// CHECK:      %[[P:.*]] = ptx.setp(%{{.*}}) {cmp = eq, ty = u32, imm = 0 : i64} : pred
// CHECK-NEXT: %[[R:.*]] = ptx.reg : b32
// CHECK-NEXT: ptx.bra(%[[P]]) {target = "ELSE_0", negate}
// CHECK-NEXT: %[[ONE:.*]] = ptx.mov {ty = u32, imm = 1 : i64} : b32
// CHECK-NEXT: ptx.assign(%[[R]], %[[ONE]])
// CHECK-NEXT: ptx.bra {target = "ENDIF_0"}
// CHECK-NEXT: ptx.label {label = "ELSE_0"}
// CHECK-NEXT: ptx.assign(%[[R]], %{{.*}})
// CHECK-NEXT: ptx.label {label = "ENDIF_0"}
// CHECK-NEXT: ptx.bra(%[[P]]) {target = "JOINED_0"}
// CHECK-NEXT: ptx.bar_sync
// CHECK-NEXT: ptx.label {label = "JOINED_0"}

// PTX:      @!%p0 bra ELSE_0;
// PTX-NEXT:     mov.u32 [[ONE:%r[0-9]+]], 1;
// PTX-NEXT:     mov.b32 [[R:%r[0-9]+]], [[ONE]];
// PTX-NEXT:     bra.uni ENDIF_0;
// PTX-NEXT: ELSE_0:
// PTX-NEXT:     mov.b32 [[R]], [[N:%r[0-9]+]];
// PTX-NEXT: ENDIF_0:
// PTX-NEXT:     @%p0 bra JOINED_0;
// PTX-NEXT:     bar.sync 1, 96;
// PTX-NEXT: JOINED_0:
// The for loop is a guarded do-while; the swap saves the registers it overwrites first.
// PTX:          mov.b32 [[A:%r[0-9]+]], %r0;
// PTX-NEXT:     mov.b32 [[B:%r[0-9]+]], [[R]];
// PTX-NEXT:     setp.lt.s32 [[G:%p[0-9]+]], [[IV:%r[0-9]+]], [[N]];
// PTX-NEXT:     @![[G]] bra ENDLOOP_0;
// PTX-NEXT: LOOP_0:
// PTX-NEXT:     mov.b32 [[SAVED_B:%r[0-9]+]], [[B]];
// PTX-NEXT:     mov.b32 [[SAVED_A:%r[0-9]+]], [[A]];
// PTX-NEXT:     mov.b32 [[A]], [[SAVED_B]];
// PTX-NEXT:     mov.b32 [[B]], [[SAVED_A]];
// PTX-NEXT:     add.u32 [[NEXT:%r[0-9]+]], [[IV]], 1;
// PTX-NEXT:     mov.b32 [[IV]], [[NEXT]];
// PTX-NEXT:     setp.lt.s32 [[C:%p[0-9]+]], [[IV]], [[N]];
// PTX-NEXT:     @[[C]] bra LOOP_0;
// PTX-NEXT: ENDLOOP_0:
// PTX-NEXT:     mov.u32 [[ADDR:%r[0-9]+]], smem;
// PTX-NEXT: WAIT_0:
// PTX-NEXT:     mbarrier.try_wait.parity.shared::cta.b64 [[W:%p[0-9]+]], [[[ADDR]]], 0;
// PTX-NEXT:     @![[W]] bra WAIT_0;
// PTX-NEXT:     ret;

// UNFLAT: error: ptx.if is structured control flow, which PTX text lacks; flatten it first (-p ptx-flatten-control-flow)
