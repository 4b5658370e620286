"""Point-to-point signals between the threads of a pipelined multicore pass.

numba has no public atomics, so these are LLVM intrinsics: a chunk's thread
publishes "band s done" with a release store, and the thread of the next chunk
waits with acquire loads, so it sees every carry and V word written before the
flag. A waiting thread spins briefly, then yields its core, because on a
machine with more runnable threads than cores the thread it waits for may need
that very core.
"""

from __future__ import annotations

import platform
import sys

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def load_acquire(typingctx, arr, idx):
    """arr[idx] as an atomic acquire load: a flag another thread sets (never hoisted
    out of a spin loop, and later reads see what was written before the flag)."""
    sig = arr.dtype(arr, types.intp)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        return builder.load_atomic(ptr, "acquire", aryty.dtype.bitwidth // 8)

    return sig, codegen


@intrinsic
def store_release(typingctx, arr, idx, value):
    """arr[idx] = value as an atomic release store: everything written before it is
    visible to a thread that reads the flag with :func:`load_acquire`."""
    sig = types.void(arr, types.intp, arr.dtype)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        builder.store_atomic(args[2], ptr, "release", aryty.dtype.bitwidth // 8)
        return context.get_dummy_value()

    return sig, codegen


_MACHINE = platform.machine().lower()


@intrinsic
def spin_pause(typingctx):
    """The CPU's spin-wait hint: PAUSE on x86-64, YIELD on arm64, nothing elsewhere."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        if _MACHINE in ("x86_64", "amd64"):
            fnty = ir.FunctionType(ir.VoidType(), [])
            builder.call(cgutils.get_or_insert_function(builder.module, fnty,
                                                        "llvm.x86.sse2.pause"), [])
        elif _MACHINE in ("arm64", "aarch64"):
            fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(32)])
            builder.call(cgutils.get_or_insert_function(builder.module, fnty,
                                                        "llvm.aarch64.hint"),
                         [ir.Constant(ir.IntType(32), 1)])
        return context.get_dummy_value()

    return sig, codegen


_YIELD = "SwitchToThread" if sys.platform == "win32" else "sched_yield"


@intrinsic
def yield_cpu(typingctx):
    """sched_yield() (SwitchToThread() on Windows): let another runnable thread, maybe
    the one waited for, have this core."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), [])
        builder.call(cgutils.get_or_insert_function(builder.module, fnty, _YIELD), [])
        return context.get_dummy_value()

    return sig, codegen


#: PAUSE spins before a waiting thread starts giving its core away.
_SPINS = 2000


@njit(nogil=True, cache=True, inline="always")
def wait_for(progress, chunk, band, abort):
    """Wait until ``chunk`` has finished ``band`` (or the run is aborted); False on abort."""
    spins = 0
    while load_acquire(progress, chunk) <= band:
        if load_acquire(abort, 0) != 0:
            return False
        if spins < _SPINS:
            spins += 1
            spin_pause()
        else:
            yield_cpu()
    return True


@njit(nogil=True, cache=True, inline="always")
def frontier(progress, nbands, d1):
    """First tile anti-diagonal with an unfinished tile, given the bands each chunk finished."""
    reached = d1
    for c in range(progress.shape[0]):
        if progress[c] < nbands:
            reached = min(reached, progress[c] + c)
    return reached
