"""SASS of a kdiff CUDA kernel for sm_90, made on a machine without a GPU.

    PYTHONPATH=/tmp/sasspkgs:$PWD python scripts/probe/sass.py tier8 [OUT.sass]
    ... sass.py lanes32 | lanes64 | lanes32_levels7 (kdiff --all-k 8's lanes) [OUT.sass]
    ... sass.py tier_global_levels7 | tier8_levels7top2 (--all-k 8's tiers) [OUT.sass]

Needs numba-cuda and nvidia-cuda-nvcc-cu12 (libnvvm, ptxas) on the path, and nvdisasm
(NVDISASM=...; the nvidia-cuda-nvdisasm wheel has one). Compiles the kernel's Python
function to PTX (numba-cuda, cc 9.0), assembles it with ptxas (registers and spills
printed) and prints the instruction counts of the SASS, per opcode.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

from numba import cuda, types

import numba.cuda.dispatcher as _dispatcher

from engine.gpu import register_cap


class _Hopper:  # device functions ask the current device for its compute capability
    compute_capability = (9, 0)


_dispatcher.get_current_device = lambda: _Hopper()

name = sys.argv[1]
u64, i32, i64, u8 = types.uint64, types.int32, types.int64, types.uint8
if name.startswith("tier"):
    from engine.kdiff.cuda_bitparallel import chunk_kernel

    # tier8, tier_global, tier_global_levels7 (every level), tier8_levels7top2 (the top two)
    shape = re.fullmatch(r"tier(\d+|_global)(?:_levels(\d+))?(?:top(\d+))?", name)
    if not shape:
        sys.exit(f"unknown kernel {name}")
    words = 0 if shape[1] == "_global" else int(shape[1])
    disp = chunk_kernel(words, register_cap(128), int(shape[2] or 0), int(shape[3] or 0))
    sig = (u64[::1], u8[::1], i32[::1], i64, i64, i64, i32[::1], i32[::1], i32[::1], i32[::1],
           i64[::1], u64[:, ::1], u64[:, ::1], i32[:, ::1])
    cap = register_cap(128)
elif name.startswith("lanes"):
    from engine import config
    from engine.kdiff.cuda_lanes import lanes_kernel

    word, _, levels = name[5:].partition("_levels")
    word = int(word)
    disp = lanes_kernel(word, config.KDIFF_CUDA_LANES_PER_THREAD[word],
                        config.KDIFF_CUDA_LANES_THREADS_PER_BLOCK, 255, int(levels or 0))
    w = types.uint32 if word == 32 else u64
    sig = (w[:, ::1], u8[::1], i32[::1], i64, i64, i64, i32[::1], i32[::1], i32[::1], i32[::1],
           i64, i32[::1], i64[::1], i32[:, ::1])
    cap = int(os.environ.get("CAP", "255"))
else:
    sys.exit(f"unknown kernel {name}")
ptx, _ = cuda.compile_ptx(disp.py_func, sig, cc=(9, 0), lineinfo=False)
with tempfile.TemporaryDirectory() as tmp:
    src, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
    open(src, "w").write(re.sub(r"^\.version 9\.\d+", ".version 8.8", ptx, flags=re.M))  # ptxas 12.9 reads 8.8
    ptxas = os.environ.get("PTXAS") or next(
        os.path.join(p, "nvidia/cuda_nvcc/bin/ptxas") for p in sys.path
        if os.path.exists(os.path.join(p, "nvidia/cuda_nvcc/bin/ptxas")))
    info = subprocess.run([ptxas, "-arch=sm_90", "-O3", f"-maxrregcount={cap}", "-v", src, "-o", cubin],
                          capture_output=True, text=True)
    print("\n".join(info.stderr.strip().splitlines()[-3:]) if info.stderr else info)
    sass = subprocess.run([os.environ.get("NVDISASM", "nvdisasm"), "-c", "-g", cubin],
                          capture_output=True, text=True)
    if sass.returncode:
        sys.exit(sass.stderr)
    sass = sass.stdout
if len(sys.argv) > 2:
    open(sys.argv[2], "w").write(sass)
ops = collections.Counter()
for line in sass.splitlines():
    m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
    if m:
        ops[m.group(2).split(".")[0]] += 1
print(sum(ops.values()), "instructions:", ", ".join(f"{k} {v}" for k, v in ops.most_common(25)))
