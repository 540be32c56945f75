// `tkc run --interpret --check` on the examples against their X_ref.py; a missing reference
// is a user error. (This file holds only RUN lines: the programs are the examples.)
// RUN: tkc run %examples/gemm.tk --interpret --check --size M=256,N=512,K=192 | filecheck %s --check-prefix=GEMM
// RUN: tkc run %examples/attention.tk -D CAUSAL=true -D D=64 --interpret --check --size N=384 | filecheck %s --check-prefix=CAUSAL
// RUN: tkc run %examples/mlp.tk --interpret --check --size M=128,D=128,H=512,N=128 | filecheck %s --check-prefix=MLP
// RUN: cp %examples/gemm.tk %t.tk
// RUN: sh -c 'tkc run %t.tk --interpret --check 2>&1; echo "exit $?"' | filecheck %s --check-prefix=NOREF

// GEMM: gemm: M=256 K=192 N=512  seed 0
// GEMM-NEXT: C: bfloat16 [256, 512]
// GEMM-NEXT: C: max abs error {{.*}} rel error {{.*}} PASS
// GEMM-NEXT: PASS

// CAUSAL: attn_fwd: B=2 H=2 N=384 HKV=2  seed 0
// CAUSAL: O: max abs error {{.*}} PASS
// CAUSAL: LSE: max abs error {{.*}} PASS
// CAUSAL-NEXT: PASS

// MLP: mlp: M=128 D=128 H=512 N=128  seed 0
// MLP: Y: max abs error {{.*}} PASS
// MLP-NEXT: PASS

// NOREF: {{.*}}.tk: error: --check needs a reference: {{.*}}_ref.py does not exist (it defines reference(inputs, params))
// NOREF-NEXT: exit 1
