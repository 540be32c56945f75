// sm90 -> ptx: roles with setmaxnreg, single-thread regions, an scf.for ring loop with an
// mbarrier wait, constants as immediates, the ABI kept on the module.
// RUN: tkc-opt %s -p convert-sm90-to-ptx | filecheck %s
// RUN: tkc-opt %s -p convert-sm90-to-ptx,ptx-flatten-control-flow -t ptx | filecheck %s --check-prefix=PTX

builtin.module {
  sm90.kernel @k threads 384 : i32 smem 2048 : i32 min_ctas 1 : i32 abi <args [A: f32[K]], params [dim_K = dim K], grid [1, 1, 1]> {
    %base = sm90.smem_base
    %bars = sm90.mbarrier_group %base offset 0 : !sm90.mbarriers<1>
    %first = arith.constant 0 : index
    %bar = sm90.mbarrier_at %bars[%first] : !sm90.mbarriers<1>
    sm90.single_thread "block" {
      sm90.mbarrier_init %bar, 1
      sm90.fence_barrier_init
    }
    sm90.sync_block
    %k = sm90.dim "dim_K"
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %n = arith.ceildivui %k, %c64 : index
    sm90.roles consumers 2 registers(40, 232) producer {
      sm90.single_thread "warpgroup" {
        sm90.mbarrier_arrive %bar expect_tx 1024 : i32
      }
    } consumer {
    ^bb0(%c: index):
      scf.for %it = %c0 to %n step %c1 {
        %phase = arith.andi %it, %c1 : index
        sm90.mbarrier_wait %bar, %phase
        %id = arith.addi %c, %c1 : index
        sm90.named_barrier %id, 128 : i32
      }
    }
  }
}

// CHECK:      ptx.module {{{.*}}tkc.abi = "{\22entry\22: \22k\22
// CHECK:        ptx.entry @k {params = [#ptx.param<"dim_K", u32>], maxntid = array<i64: 384, 1, 1>, minnctapersm = 1 : i64}
// CHECK:          %[[SMEM:.*]] = ptx.smem_base : b32
// CHECK-NEXT:     %[[UP:.*]] = ptx.add(%[[SMEM]]) {ty = u32, imm = 1023 : i64} : b32
// CHECK-NEXT:     %[[BASE:.*]] = ptx.and(%[[UP]]) {ty = b32, imm = 4294966272 : i64} : b32
// CHECK-NEXT:     %[[BAR:.*]] = ptx.add(%[[BASE]]) {ty = u32, imm = 0 : i64} : b32
// CHECK:          ptx.mbar_init(%[[BAR]]) {count = 1 : i64}
// CHECK-NEXT:     ptx.fence {kind = "mbarrier_init.release.cluster"}
// CHECK-NEXT:     ptx.fence {kind = "proxy.async.shared::cta"}
// CHECK:          ptx.bar_sync {imm = 0 : i64}
// CHECK:          ptx.setmaxnreg {action = dec, n = 40 : i64}
// CHECK:          ptx.elect {membermask = 4294967295 : i64} : pred
// CHECK:          ptx.mbar_arrive_expect_tx(%[[BAR]]) {bytes = 1024 : i64}
// CHECK:          ptx.setmaxnreg {action = inc, n = 232 : i64}
// CHECK:          ptx.mbar_try_wait

// PTX:      .visible .entry k(
// PTX-NEXT:     .param .u32 dim_K
// PTX-NEXT: )
// PTX-NEXT: .maxntid 384, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX:          ld.param.u32 [[K:%r[0-9]+]], [dim_K];
// PTX-NEXT:     add.u32 [[T:%r[0-9]+]], [[K]], 63;
// PTX-NEXT:     shr.u32 {{%r[0-9]+}}, [[T]], 6;
// PTX:          shr.u32 [[WG:%r[0-9]+]], {{%r[0-9]+}}, 7;
// PTX-NEXT:     setp.ne.u32 [[P:%p[0-9]+]], [[WG]], 0;
// PTX-NEXT:     @[[P]] bra CONSUMER_0;
// PTX-NEXT:     setmaxnreg.dec.sync.aligned.u32 40;
// PTX:          elect.sync _|[[E:%p[0-9]+]], 0xffffffff;
// PTX:          bra.uni ENDROLES_0;
// PTX-NEXT: CONSUMER_0:
// PTX-NEXT:     setmaxnreg.inc.sync.aligned.u32 232;
// PTX-NEXT:     sub.u32 [[C:%r[0-9]+]], [[WG]], 1;
// PTX:      LOOP_0:
// PTX:          and.b32 [[PH:%r[0-9]+]], {{%r[0-9]+}}, 1;
// PTX-NEXT: WAIT_0:
// PTX-NEXT:     mbarrier.try_wait.parity.shared::cta.b64 [[W:%p[0-9]+]], [{{%r[0-9]+}}], [[PH]];
// PTX-NEXT:     @![[W]] bra WAIT_0;
// PTX-NEXT:     add.u32 [[ID:%r[0-9]+]], [[C]], 1;
// PTX-NEXT:     bar.sync [[ID]], 128;
// PTX:          @{{%p[0-9]+}} bra LOOP_0;
// PTX-NEXT: ENDLOOP_0:
// PTX-NEXT: ENDROLES_0:
// PTX-NEXT:     ret;
