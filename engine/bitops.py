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


# Word operations that keep their operands' width. numba widens uint32 arithmetic to 64
# bits (its integer typing promotes to intp), which halves the lanes of a SIMD loop over
# uint32 words; these emit the LLVM instruction at the operands' own width, so a loop over
# uint32 lanes vectorises 16 to an AVX-512 register. Both operands must have one type.

def _word_binop(emit, boolean=False):
    """``emit(builder, a, b)`` as an intrinsic: of their type, or a boolean (comparisons)."""
    @intrinsic
    def op(typingctx, a, b):
        if not isinstance(a, types.Integer) or a != b:
            return None
        result = types.boolean if boolean else a
        return result(a, b), lambda context, builder, sig, args: emit(builder, *args)
    return op


w_add = _word_binop(lambda b, x, y: b.add(x, y))
w_sub = _word_binop(lambda b, x, y: b.sub(x, y))
w_and = _word_binop(lambda b, x, y: b.and_(x, y))
w_or = _word_binop(lambda b, x, y: b.or_(x, y))
w_xor = _word_binop(lambda b, x, y: b.xor(x, y))
w_shl = _word_binop(lambda b, x, y: b.shl(x, y))
w_shr = _word_binop(lambda b, x, y: b.lshr(x, y))
# unsigned a <= b and a < b at the operands' width
w_le = _word_binop(lambda b, x, y: b.icmp_unsigned("<=", x, y), boolean=True)
w_lt = _word_binop(lambda b, x, y: b.icmp_unsigned("<", x, y), boolean=True)


@intrinsic
def w_not(typingctx, a):
    if not isinstance(a, types.Integer):
        return None
    return a(a), lambda context, builder, sig, args: builder.not_(args[0])
