// Every ptx op prints, parses back and prints to the same text, in custom and generic form,
// and both forms print the same PTX.
// RUN: tkc-opt %s -o %t.custom
// RUN: tkc-opt %t.custom | diff %t.custom -
// RUN: tkc-opt %s --print-op-generic -o %t.generic
// RUN: tkc-opt %t.generic | diff %t.custom -
// RUN: tkc-opt %s -t ptx -o %t.ptx
// RUN: tkc-opt %t.generic -t ptx | diff %t.ptx -
// RUN: filecheck %s < %t.ptx

ptx.module {version = "8.0", target = "sm_90a", address_size = 64 : i64} {
  ptx.entry @every_op {params = [#ptx.param<"T", tensormap>, #ptx.param<"out", u64>, #ptx.param<"n", u32>], maxntid = array<i64: 128, 1, 1>, minnctapersm = 1 : i64, maxnreg = 168 : i64, reqnctapercluster = array<i64: 1, 1, 1>} {
    %0 = ptx.sreg {reg = "tid.x"} : b32
    %1 = ptx.sreg {reg = "laneid"} : b32
    %2 = ptx.sreg {reg = "ctaid.x"} : b32
    %3 = ptx.sreg {reg = "ctaid.y"} : b32
    %4 = ptx.sreg {reg = "ctaid.z"} : b32
    %5 = ptx.sreg {reg = "nctaid.x"} : b32
    %6 = ptx.sreg {reg = "cluster_ctarank"} : b32
    %7 = ptx.sreg {reg = "clock64"} : b64
    %8 = ptx.param_addr {param = "T"} : b64
    %9 = ptx.cvta(%8) {space = param} : b64
    %10 = ptx.ld_param {param = "out", ty = u64} : b64
    %11 = ptx.cvta(%10) {space = global, to} : b64
    %12 = ptx.ld_param {param = "n", ty = u32} : b32
    %13 = ptx.smem_base : b32
    ptx.prefetch_tensormap(%9)
    %14 = ptx.add(%0, %12) {ty = u32} : b32
    %15 = ptx.sub(%14) {ty = s32, imm = 3 : i64} : b32
    %16 = ptx.mul(%15, %2) {ty = u32, mods = lo} : b32
    %17 = ptx.mul(%16) {ty = u32, mods = wide, imm = 8 : i64} : b64
    %18 = ptx.mul(%16, %3) {ty = u32, mods = hi} : b32
    %19 = ptx.mad(%16, %18, %4) {ty = u32, mods = lo} : b32
    %20 = ptx.mov {ty = u32, imm = 4 : i64} : b32
    %21 = ptx.mad(%19, %20, %17) {ty = u32, mods = wide} : b64
    %22 = ptx.div(%19, %5) {ty = u32} : b32
    %23 = ptx.rem(%22) {ty = u32, imm = 7 : i64} : b32
    %24 = ptx.and(%23) {ty = b32, imm = 4294966272 : i64} : b32
    %25 = ptx.or(%24, %6) {ty = b32} : b32
    %26 = ptx.xor(%25, %1) {ty = b32} : b32
    %27 = ptx.not(%26) {ty = b32} : b32
    %28 = ptx.shl(%27) {ty = b32, imm = 2 : i64} : b32
    %29 = ptx.shr(%28, %1) {ty = s32} : b32
    %30 = ptx.min(%29) {ty = u32, imm = 100 : i64} : b32
    %31 = ptx.max(%30, %12) {ty = s32} : b32
    %32 = ptx.neg(%31) {ty = s32} : b32
    %33 = ptx.abs(%32) {ty = s32} : b32
    %34 = ptx.popc(%33) {ty = b32} : b32
    %35 = ptx.cvt(%34) {dst = u64, src = u32} : b64
    %36 = ptx.add(%35, %7) {ty = u64} : b64
    %37 = ptx.and(%36) {ty = b64, imm = 4611686293305360384 : i64} : b64
    %38 = ptx.shr(%37, %34) {ty = u64} : b64
    %39 = ptx.cvt(%38) {dst = u32, src = u64} : b32
    %40 = ptx.cvt(%39) {dst = f32, src = u32, mods = rn} : f32
    %41 = ptx.mov {ty = f32, imm = 4286578688 : i64} : f32
    %42 = ptx.add(%40, %41) {ty = f32} : f32
    %43 = ptx.mov {ty = f32, imm = 1056964608 : i64} : f32
    %44 = ptx.fma(%40, %43, %42) {ty = f32, mods = rn} : f32
    %45 = ptx.sub(%44) {ty = f32, imm = 1065353216 : i64} : f32
    %46 = ptx.mul(%45, %44) {ty = f32} : f32
    %47 = ptx.div(%46) {ty = f32, mods = rn, imm = 1077936128 : i64} : f32
    %48 = ptx.div(%47) {ty = f32, mods = approx, imm = 1077936128 : i64} : f32
    %49 = ptx.min(%48) {ty = f32, imm = 1073741824 : i64} : f32
    %50 = ptx.max(%49) {ty = f32, imm = 3221225472 : i64} : f32
    %51 = ptx.abs(%50) {ty = f32} : f32
    %52 = ptx.neg(%51) {ty = f32} : f32
    %53 = ptx.rcp(%52) {ty = f32, mods = approx.ftz} : f32
    %54 = ptx.sqrt(%52) {ty = f32, mods = approx.ftz} : f32
    %55 = ptx.add(%53, %54) {ty = f32} : f32
    %56 = ptx.rsqrt(%55) {ty = f32, mods = approx.ftz} : f32
    %57 = ptx.ex2(%55) {ty = f32, mods = approx.ftz} : f32
    %58 = ptx.add(%56, %57) {ty = f32} : f32
    %59 = ptx.lg2(%58) {ty = f32, mods = approx.ftz} : f32
    %60 = ptx.tanh(%58) {ty = f32, mods = approx} : f32
    %61 = ptx.add(%59, %60) {ty = f32} : f32
    %62 = ptx.cvt(%61) {dst = bf16, src = f32, mods = rn} : b16
    %63 = ptx.cvt(%62) {dst = f32, src = bf16} : f32
    %64 = ptx.cvt(%63) {dst = f16, src = f32, mods = rn} : b16
    %65 = ptx.cvt(%64) {dst = f32, src = f16} : f32
    %66 = ptx.add(%61, %65) {ty = f32} : f32
    %67 = ptx.cvt(%63, %66) {dst = bf16x2, src = f32, mods = rn} : b32
    %68 = ptx.cvt(%63, %66) {dst = e4m3x2, src = f32, mods = rn.satfinite} : b16
    %69 = ptx.cvt(%66) {dst = s32, src = f32, mods = rzi} : b32
    %70 = ptx.pack(%62, %64) : b32
    %71, %72 = ptx.unpack(%70) : b16, b16
    %73 = ptx.pack(%67, %39) : b64
    %74, %75 = ptx.unpack(%73) : b32, b32
    %76 = ptx.setp(%69) {cmp = lt, ty = s32, imm = 0 : i64} : pred
    %77 = ptx.setp(%66, %41) {cmp = ge, ty = f32} : pred
    %78 = ptx.and(%76, %77) {ty = pred} : pred
    %79 = ptx.not(%78) {ty = pred} : pred
    %80 = ptx.or(%79, %77) {ty = pred} : pred
    %81 = ptx.mov {ty = u32, imm = 5 : i64} : b32
    %82 = ptx.selp(%39, %81, %80) {ty = u32} : b32
    %83 = ptx.mov {ty = f32, imm = 0 : i64} : f32
    %84 = ptx.selp(%66, %83, %77) {ty = f32} : f32
    %85 = ptx.shl(%0) {ty = b32, imm = 4 : i64} : b32
    %86 = ptx.add(%13, %85) {ty = u32} : b32
    %87, %88, %89, %90 = ptx.ld(%86) {space = shared, ty = b32, offset = 16 : i64} : b32, b32, b32, b32
    ptx.st(%86, %87, %88, %89, %90) {space = shared, ty = b32, offset = 16 : i64}
    %91 = ptx.ld(%86) {space = shared, ty = f32, offset = 0 : i64} : f32
    %92 = ptx.add(%91, %84) {ty = f32} : f32
    ptx.st(%86, %92) {space = shared, ty = f32, offset = 4 : i64}
    %93 = ptx.xor(%71, %72) {ty = b16} : b16
    ptx.st(%86, %93) {space = shared, ty = b16, offset = 8 : i64}
    ptx.st(%86, %68) {space = shared, ty = b16, offset = 10 : i64}
    %94 = ptx.mul(%0) {ty = u32, mods = wide, imm = 16 : i64} : b64
    %95 = ptx.add(%11, %94) {ty = u64} : b64
    %96, %97 = ptx.ld(%95) {space = global, ty = f32, offset = 0 : i64} : f32, f32
    %98 = ptx.ld(%95) {space = global, ty = u32, offset = -4 : i64, mods = nc} : b32
    ptx.st(%95, %96, %97) {space = global, ty = f32, offset = 8 : i64}
    ptx.st(%95, %82, %98, %74, %75) {space = global, ty = u32, offset = 0 : i64}
    %99 = ptx.shfl(%84) {mode = bfly, clamp = 31 : i64, membermask = 4294967295 : i64, imm = 1 : i64} : f32
    %100 = ptx.shfl(%99, %1) {mode = idx, clamp = 31 : i64, membermask = 4294967295 : i64} : f32
    %101 = ptx.shfl(%100) {mode = down, clamp = 31 : i64, membermask = 4294967295 : i64, imm = 4 : i64} : f32
    %102 = ptx.shfl(%101) {mode = up, clamp = 0 : i64, membermask = 4294967295 : i64, imm = 2 : i64} : f32
    %103, %104, %105, %106 = ptx.ldmatrix(%86) : b32, b32, b32, b32
    ptx.stmatrix(%86, %103, %104, %105, %106)
    %107, %108, %109, %110 = ptx.ldmatrix(%86) {trans} : b32, b32, b32, b32
    ptx.stmatrix(%86, %107, %108) {trans}
    ptx.st(%95, %102) {space = global, ty = f32, offset = 0 : i64}
    %111 = ptx.add(%13) {ty = u32, imm = 65536 : i64} : b32
    %112 = ptx.elect {membermask = 4294967295 : i64} : pred
    ptx.bra(%112) {target = "ENDIF_0", negate}
    ptx.mbar_init(%111) {count = 1 : i64}
    ptx.fence {kind = "mbarrier_init.release.cluster"}
    ptx.fence {kind = "proxy.async.shared::cta"}
    ptx.label {label = "ENDIF_0"}
    ptx.bar_sync {imm = 0 : i64}
    ptx.bar_sync {count = 128 : i64, imm = 1 : i64}
    ptx.bar_arrive {count = 128 : i64, imm = 2 : i64}
    %113 = ptx.shr(%0) {ty = u32, imm = 7 : i64} : b32
    %114 = ptx.add(%113) {ty = u32, imm = 1 : i64} : b32
    ptx.bar_sync(%114) {count = 128 : i64}
    %115 = ptx.shr(%0) {ty = u32, imm = 7 : i64} : b32
    %116 = ptx.add(%115) {ty = u32, imm = 3 : i64} : b32
    ptx.bar_arrive(%116) {count = 128 : i64}
    ptx.fence {kind = "acq_rel.cta"}
    ptx.mbar_arrive_expect_tx(%111) {bytes = 8192 : i64}
    ptx.mbar_expect_tx(%111) {bytes = 128 : i64}
    ptx.mbar_arrive(%111)
    ptx.mbar_arrive(%111) {count = 2 : i64}
    %117 = ptx.and(%82) {ty = b32, imm = 1 : i64} : b32
    ptx.label {label = "WAIT_0"}
    %118 = ptx.mbar_try_wait(%111, %117) : pred
    ptx.bra(%118) {target = "WAIT_0", negate}
    ptx.label {label = "WAIT_1"}
    %119 = ptx.mbar_try_wait(%111) {imm = 1 : i64} : pred
    ptx.bra(%119) {target = "WAIT_1", negate}
    %120 = ptx.mov {ty = u32, imm = 0 : i64} : b32
    %121 = ptx.mov {ty = u32, imm = 1 : i64} : b32
    %122 = ptx.mov {ty = u32, imm = 2 : i64} : b32
    %123 = ptx.mov {ty = u32, imm = 3 : i64} : b32
    %124 = ptx.mov {ty = u32, imm = 4 : i64} : b32
    ptx.tma_load(%13, %9, %111, {%120})
    ptx.tma_load(%13, %9, %111, {%120, %121})
    ptx.tma_load(%13, %9, %111, {%120, %121, %122})
    ptx.tma_load(%13, %9, %111, {%120, %121, %122, %123})
    ptx.tma_load(%13, %9, %111, {%120, %121, %122, %123, %124})
    ptx.fence {kind = "proxy.async.shared::cta"}
    ptx.tma_store(%9, %13, %120)
    ptx.tma_store(%9, %13, %120, %121)
    ptx.tma_store(%9, %13, %120, %121, %122, %123, %124)
    ptx.tma_store(%9, %13, %120, %121) {reduce = add}
    ptx.bulk_commit
    ptx.bulk_wait {n = 1 : i64, read}
    ptx.bulk_wait {n = 0 : i64}
    ptx.mbar_inval(%111)
    %125 = ptx.reg : f32
    %126 = ptx.reg : f32
    %127 = ptx.reg : f32
    %128 = ptx.reg : f32
    %129 = ptx.reg : f32
    %130 = ptx.reg : f32
    %131 = ptx.reg : f32
    %132 = ptx.reg : f32
    %133 = ptx.shr(%13) {ty = u32, imm = 4 : i64} : b32
    %134 = ptx.and(%133) {ty = b32, imm = 16383 : i64} : b32
    %135 = ptx.cvt(%134) {dst = u64, src = u32} : b64
    %136 = ptx.or(%135) {ty = b64, imm = 4611686293305360384 : i64} : b64
    %137 = ptx.setp(%0, %0) {cmp = ne, ty = u32} : pred
    ptx.wgmma_fence
    ptx.wgmma({%125, %126, %127, %128, %129, %130, %131, %132}, {%136}, %136, %137) {n = 16 : i64, dtype = bf16, scale_a = 1 : i64, scale_b = 1 : i64, trans_a = 0 : i64, trans_b = 0 : i64}
    ptx.wgmma({%125, %126, %127, %128, %129, %130, %131, %132}, {%136}, %136) {n = 16 : i64, dtype = f16, scale_a = -1 : i64, scale_b = 1 : i64, trans_a = 1 : i64, trans_b = 1 : i64, scale_d = 1 : i64}
    ptx.wgmma({%125, %126, %127, %128, %129, %130, %131, %132}, {%67, %67, %67, %67}, %136) {n = 16 : i64, dtype = bf16, scale_a = 1 : i64, scale_b = 1 : i64, trans_a = 0 : i64, trans_b = 1 : i64, scale_d = 1 : i64}
    ptx.wgmma({%125, %126, %127, %128, %129, %130, %131, %132}, {%136}, %136) {n = 16 : i64, dtype = e4m3, scale_a = 1 : i64, scale_b = -1 : i64, trans_a = 0 : i64, trans_b = 0 : i64, scale_d = 1 : i64}
    ptx.wgmma({%125, %126, %127, %128, %129, %130, %131, %132}, {%67, %67, %67, %67}, %136) {n = 16 : i64, dtype = e5m2, scale_a = 1 : i64, scale_b = 1 : i64, trans_a = 0 : i64, trans_b = 0 : i64, scale_d = 1 : i64}
    ptx.wgmma_commit
    ptx.wgmma_wait {n = 0 : i64}
    %138 = ptx.add(%125, %126) {ty = f32} : f32
    ptx.assign(%125, %138)
    %139 = ptx.add(%125, %127) {ty = f32} : f32
    ptx.assign(%125, %139)
    %140 = ptx.add(%125, %128) {ty = f32} : f32
    ptx.assign(%125, %140)
    %141 = ptx.add(%125, %129) {ty = f32} : f32
    ptx.assign(%125, %141)
    %142 = ptx.add(%125, %130) {ty = f32} : f32
    ptx.assign(%125, %142)
    %143 = ptx.add(%125, %131) {ty = f32} : f32
    ptx.assign(%125, %143)
    %144 = ptx.add(%125, %132) {ty = f32} : f32
    ptx.assign(%125, %144)
    ptx.st(%95, %125) {space = global, ty = f32, offset = 0 : i64}
    ptx.assign(%82) {imm = 0 : i64}
    ptx.assign(%84) {imm = 1065353216 : i64}
    ptx.assign(%80, %77)
    %145 = ptx.mov(%84) {ty = b32} : b32
    %146 = ptx.selp(%82, %145, %80) {ty = u32} : b32
    ptx.st(%95, %146) {space = global, ty = u32, offset = 0 : i64}
    ptx.ret
  }
}

// CHECK:      .version 8.0
// CHECK-NEXT: .target sm_90a
// CHECK-NEXT: .address_size 64
// CHECK:      .extern .shared .align 1024 .b8 smem[];
// CHECK:      .visible .entry every_op(
// CHECK-NEXT:     .param .align 64 .b8 T[128],
// CHECK-NEXT:     .param .u64 out,
// CHECK-NEXT:     .param .u32 n
// CHECK-NEXT: )
// CHECK-NEXT: .maxntid 128, 1, 1
// CHECK-NEXT: .minnctapersm 1
// CHECK-NEXT: .maxnreg 168
// CHECK-NEXT: .reqnctapercluster 1, 1, 1
// CHECK-NEXT: {
// CHECK-NEXT:     .reg .pred %p<{{[0-9]+}}>;
// CHECK-NEXT:     .reg .b16 %rs<{{[0-9]+}}>;
// CHECK-NEXT:     .reg .b32 %r<{{[0-9]+}}>;
// CHECK-NEXT:     .reg .b64 %rd<{{[0-9]+}}>;
// CHECK-NEXT:     .reg .f32 %f<{{[0-9]+}}>;
// CHECK-NEXT:     mov.u32 %r0, %tid.x;
// CHECK:          mov.u64 %rd0, %clock64;
// CHECK-NEXT:     mov.b64 %rd1, T;
// CHECK-NEXT:     cvta.param.u64 %rd2, %rd1;
// CHECK-NEXT:     ld.param.u64 %rd3, [out];
// CHECK-NEXT:     cvta.to.global.u64 %rd4, %rd3;
// CHECK:          mul.wide.u32 %rd{{[0-9]+}}, %r{{[0-9]+}}, 8;
// CHECK:          mad.wide.u32 %rd{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %rd{{[0-9]+}};
// CHECK:          and.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 0x4000004000010000;
// CHECK:          mov.f32 %f{{[0-9]+}}, 0fFF800000;
// CHECK:          mov.f32 %f{{[0-9]+}}, 0f3F000000;
// CHECK-NEXT:     fma.rn.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK:          cvt.rn.bf16x2.f32 %r{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK-NEXT:     cvt.rn.satfinite.e4m3x2.f32 %rs{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// CHECK:          ld.shared.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}+16];
// CHECK:          ld.global.nc.u32 %r{{[0-9]+}}, [%rd{{[0-9]+}}+-4];
// CHECK:          shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 1, 0x1f, 0xffffffff;
// CHECK:          elect.sync _|[[E:%p[0-9]+]], 0xffffffff;
// CHECK-NEXT:     @![[E]] bra [[END:ENDIF_[0-9]+]];
// CHECK-NEXT:     mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 1;
// CHECK:      [[END]]:
// CHECK:      [[WAIT:WAIT_[0-9]+]]:
// CHECK-NEXT:     mbarrier.try_wait.parity.shared::cta.b64 [[P:%p[0-9]+]], [%r{{[0-9]+}}], %r{{[0-9]+}};
// CHECK-NEXT:     @![[P]] bra [[WAIT]];
// CHECK:          cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd2, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// CHECK:          wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%f{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 0, 0;
// CHECK-NEXT:     wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%f{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, -1, 1, 1, 1;
// CHECK-NEXT:     wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%f{{.*}}}, {%r{{.*}}}, %rd{{[0-9]+}}, 1, 1, 1, 1;
// CHECK-NEXT:     wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {%f{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, 1, -1;
// CHECK-NEXT:     wgmma.mma_async.sync.aligned.m64n16k32.f32.e5m2.e5m2 {%f{{.*}}}, {%r{{.*}}}, %rd{{[0-9]+}}, 1, 1, 1;
// CHECK:          ret;
// CHECK-NEXT: }
