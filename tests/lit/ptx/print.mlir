// A hand-written ptx module prints as PTX (`tkc-opt -t ptx`, or `python -m tkc.backends.ptx_printer`).
// RUN: tkc-opt %s -t ptx | filecheck %s
// RUN: python -m tkc.backends.ptx_printer %s | filecheck %s

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @k_ws {params = [#ptx.param<"p", u64>], maxntid = array<i64: 384, 1, 1>, minnctapersm = 1 : i64} {
    %tid = ptx.sreg {reg = "tid.x"} : b32
    %wg = ptx.shr(%tid) {ty = u32, imm = 7 : i64} : b32
    %c = ptx.setp(%wg) {cmp = ne, ty = u32, imm = 0 : i64} : pred
    ptx.bra(%c) {target = "CONSUMER"}
    ptx.setmaxnreg {action = dec, n = 40 : i64}
    %e = ptx.elect : pred
    ptx.bra(%e) {target = "DONE", negate}
    %x = ptx.mov {ty = f32, imm = 3212836864 : i64} : f32
    ptx.assign(%x) {imm = 0 : i64}
    ptx.bra {target = "DONE"}
    ptx.label {label = "CONSUMER"}
    ptx.setmaxnreg {action = inc, n = 232 : i64}
    ptx.label {label = "DONE"}
    ptx.ret
  }
}

// CHECK:      .visible .entry k_ws(
// CHECK-NEXT:     .param .u64 p
// CHECK-NEXT: )
// CHECK-NEXT: .maxntid 384, 1, 1
// CHECK-NEXT: .minnctapersm 1
// CHECK-NEXT: {
// CHECK-NEXT:     .reg .pred %p<2>;
// CHECK-NEXT:     .reg .b32 %r<2>;
// CHECK-NEXT:     .reg .f32 %f<1>;
// CHECK-NEXT:     mov.u32 %r0, %tid.x;
// CHECK-NEXT:     shr.u32 %r1, %r0, 7;
// CHECK-NEXT:     setp.ne.u32 %p0, %r1, 0;
// CHECK-NEXT:     @%p0 bra CONSUMER;
// CHECK-NEXT:     setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-NEXT:     elect.sync _|%p1, 0xffffffff;
// CHECK-NEXT:     @!%p1 bra DONE;
// CHECK-NEXT:     mov.f32 %f0, 0fBF800000;
// CHECK-NEXT:     mov.f32 %f0, 0f00000000;
// CHECK-NEXT:     bra.uni DONE;
// CHECK-NEXT: CONSUMER:
// CHECK-NEXT:     setmaxnreg.inc.sync.aligned.u32 232;
// CHECK-NEXT: DONE:
// CHECK-NEXT:     ret;
// CHECK-NEXT: }
