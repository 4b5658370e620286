"""Bit operations the compiled kernels of several families share (numba intrinsics)."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic


@intrinsic
def popcount64(typingctx, x):
    """LLVM's ctpop: one POPCNT instruction on x86-64 (numba has no public popcount)."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return sig, codegen
