#!/usr/bin/python3
"""The determinism matrix: builds Maroon's battery (tools/determinism) in several configurations
(compilers, optimisation levels, 32-bit x86, AArch64 and RISC-V under qemu-user), runs it under
every SIMD target, thread count and caller floating-point state chosen below, prints a table of
digests (configurations x workloads) and exits 1 if any digest differs.

    /usr/bin/python3 tools/determinism/matrix.py          # the whole matrix; writes docs/determinism.md
    /usr/bin/python3 tools/determinism/matrix.py --ci     # the fast subset CI runs

Builds go to build-dm/<config> (library + battery only). Missing Debian packages are installed
with apt-get (sudo when not root); a configuration whose packages cannot be installed is reported
as not run (an error under --ci).

--ci builds only the AArch64 configuration itself: it runs the battery that tools/test.sh's
earlier stages built, ./build's (tools/build.sh: gcc 12, CMake's Release, -O3) and build-asan's
(tools/ci_safety.sh: clang 19 at -O1 with ASan and UBSan, Highway's baseline target only), so CI
compiles the library twice less (about 480 CPU seconds) and shows that a sanitized build gives
the same bits. Run those two scripts first.
"""
import argparse
import datetime
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "tools", "determinism")
BUILD_ROOT = os.path.join(ROOT, "build-dm")
DOC = os.path.join(ROOT, "docs", "determinism.md")

OPS = ["unary", "binary", "compare", "ternary", "const", "reduce", "movement", "fused", "index"]
CLASSES = ([f"ops:{c}" for c in OPS] + [f"ops-small:{c}" for c in OPS] +
           ["mlp:train", "mlp:infer", "cnn:train", "cnn:infer", "char:train", "onnx:infer", "onnx:fused"])
MLP_STEPS, CNN_STEPS, CNN_BATCH = 50, 10, 2
# An emulated run's wall-clock limit is --timeout times this: qemu-user runs the battery 10-30x
# slower than the host, and on a loaded machine its wall time is several times its CPU time
# (i686's CNN run under qemu-i386: minutes of CPU).
QEMU_TIMEOUT_FACTOR = 4
CHAR_STEPS = 3  # the character GPT's steps: tests/data/char_gpt_digest.txt's run

OPT = {"O0": "-O0", "O2": "-O2 -DNDEBUG", "O3n": "-O3 -march=native -DNDEBUG"}
OPT_LABEL = {"O0": "-O0", "O2": "-O2", "O3n": "-O3 -march=native"}
COMPILERS = {  # name: (c++ driver, apt package)
    "gcc12": ("g++-12", "g++-12"),
    "clang14": ("clang++-14", "clang-14"),
    "clang19": ("clang++-19", "clang-19"),
}
CROSS = {  # arch: (toolchain file, multiarch triple, apt packages, dpkg architecture, runner)
    "i686": ("i686.cmake", "i386-linux-gnu", ["g++-i686-linux-gnu", "libhwy-dev:i386", "qemu-user"], "i386", []),
    "aarch64": ("aarch64.cmake", "aarch64-linux-gnu",
                ["g++-aarch64-linux-gnu", "libhwy-dev:arm64", "qemu-user"], "arm64",
                ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]),
    "riscv64": ("riscv64.cmake", "riscv64-linux-gnu", ["g++-riscv64-linux-gnu", "qemu-user"], None,
                ["qemu-riscv64", "-L", "/usr/riscv64-linux-gnu"]),
}


# Build directories that another script configures and builds (--ci reuses them): name: (directory,
# the script that makes it, compiler id and major version it must have, description, environment).
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
                 "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
REUSED = {
    "gcc12-Release": ("build", "bash tools/build.sh", ("GNU", "12"),
                      "gcc12 CMake Release (-O3 -DNDEBUG), x86-64: ./build of tools/build.sh", {}),
    "clang19-asan": ("build-asan", "bash tools/ci_safety.sh", ("Clang", "19"),
                     "clang19 -O1 ASan+UBSan (-fno-sanitize-recover=all, libFuzzer coverage), Highway's "
                     "baseline target only, x86-64: build-asan of tools/ci_safety.sh", SANITIZER_ENV),
}


class Build:
    def __init__(self, name, arch, compiler, opt):
        self.name, self.arch, self.compiler, self.opt = name, arch, compiler, opt
        self.dir = os.path.join(BUILD_ROOT, name)
        self.reused = REUSED.get(name)
        if self.reused:
            self.dir = os.path.join(ROOT, self.reused[0])
        self.env = self.reused[4] if self.reused else {}
        self.exe = os.path.join(self.dir, "tools", "determinism", "maroon-battery")
        self.error = None  # why it could not be built or run
        self.seconds = 0.0
        self.simd = []  # the SIMD targets the battery lists here (--list-simd), weakest first
        self.simd_at = {}  # the same per emulated CPU (qemu -cpu), read once each: targets_for

    def describe(self):
        if self.reused:
            return self.reused[3]
        if self.arch == "x86_64":
            return f"{self.compiler} {OPT_LABEL[self.opt]}, x86-64"
        how = {"i686": "32-bit x86 (SSE2 math), native or, where the kernel runs no 32-bit programs, under qemu-i386", "aarch64": "AArch64 under qemu-user",
               "riscv64": "RISC-V 64 under qemu-user"}[self.arch]
        return f"{self.compiler} {OPT_LABEL[self.opt]}, {how}"

    def packages(self):
        pk = ["cmake", "ninja-build"]
        if self.reused:  # the script that makes it installs what it needs
            return pk
        if self.arch == "x86_64":
            return pk + ["libhwy-dev", COMPILERS[self.compiler][1]]
        return pk + ["libhwy-dev"] + CROSS[self.arch][2]


class Run:
    """One battery execution: a build, a SIMD target ("best" = the best this CPU has), threads,
    the caller's FP state, the backend, the workloads, and for qemu the emulated CPU."""

    def __init__(self, build, simd="best", threads=1, fp="default", backend="cpu", cnn=True,
                 models=True, qemu_cpu=None, small=False, char=None):
        self.build, self.simd, self.threads, self.fp, self.backend = build, simd, threads, fp, backend
        # The character GPT runs wherever the MNIST models do, unless asked for or off explicitly.
        self.char = (models and backend == "cpu") if char is None else char
        self.cnn, self.models, self.qemu_cpu, self.small = cnn, models, qemu_cpu, small
        self.lines, self.header, self.seconds, self.error, self.isa = {}, "", 0.0, None, ""
        # Why the run was not run (a SIMD target this CPU, emulator or build lacks; a build whose
        # packages are missing; an interrupted matrix): not a failure, and never a pass.
        self.not_run = None
        self.cpu_seconds = 0.0  # user + system time of the battery (and its qemu), all threads

    def label(self):
        parts = [self.build.name]
        if self.backend == "ref":
            parts.append("ref-executor")
        else:
            parts.append(self.isa or self.simd)
            parts.append(f"t{self.threads}")
        if self.qemu_cpu:
            parts.append(f"qemu-cpu={self.qemu_cpu}")
        if self.small:
            parts.append("small")
        if self.fp != "default":
            parts.append(self.fp)
        return " ".join(parts)


def log(msg):
    print(msg, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


LIVE = set()  # battery processes running now, killed if the matrix is interrupted


def sh_timed(cmd, env, timeout):
    """Runs cmd to its end or for timeout wall seconds: (exit status or None if timed out, output,
    CPU seconds of the process and its threads). The CPU time, unlike the wall time, does not
    depend on the machine's load (os.wait4's resource usage of this one child)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    LIVE.add(p)
    expired = threading.Event()

    def kill():
        expired.set()
        p.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
        LIVE.discard(p)
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    p.stdout.close()
    return (None if expired.is_set() else p.returncode), out, usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------- packages

def installed(pkg):
    r = sh(["dpkg-query", "-W", "-f=${Status}", pkg])
    return r.returncode == 0 and "install ok installed" in r.stdout


def ensure_packages(builds):
    sudo = [] if os.getuid() == 0 else ["sudo"]
    want = sorted({p for b in builds for p in b.packages()})
    missing = [p for p in want if not installed(p)]
    if not missing:
        return
    foreign = sh(["dpkg", "--print-foreign-architectures"]).stdout.split()
    for p in missing:
        arch = p.split(":")[1] if ":" in p else None
        if arch and arch not in foreign:
            log(f"matrix: dpkg --add-architecture {arch}")
            sh(sudo + ["dpkg", "--add-architecture", arch])
            foreign.append(arch)
    log(f"matrix: apt-get install {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    # A foreign architecture's index may fail to download (a mirror mid-sync): go on and let the
    # install say whether what is needed is there.
    sh(sudo + ["apt-get", "update", "-qq"], env=env)
    r = sh(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, env=env)
    if r.returncode != 0:  # try one by one, so one unavailable package skips only its builds
        for p in missing:
            sh(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", p], env=env)
    for b in builds:
        lack = [p for p in b.packages() if not installed(p)]
        if lack:
            b.error = "packages not installable: " + " ".join(lack)


# ---------------------------------------------------------------- builds

def configure_args(b):
    args = ["cmake", "-S", ROOT, "-B", b.dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=None",
            f"-DCMAKE_CXX_FLAGS={OPT[b.opt]}", "-DMAROON_BUILD_TESTS=OFF", "-DMAROON_BUILD_BENCH=OFF",
            "-DMAROON_BUILD_PYTHON=OFF"]
    if shutil.which("ccache"):  # a rerun (or another checkout, with CCACHE_BASEDIR) compiles nothing again
        args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    if b.arch == "x86_64":
        args.append(f"-DCMAKE_CXX_COMPILER={COMPILERS[b.compiler][0]}")
    else:
        tc, triple = CROSS[b.arch][0], CROSS[b.arch][1]
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={os.path.join(HERE, 'toolchains', tc)}")
        if b.arch == "riscv64":  # no riscv64 libhwy in Debian 12: see toolchains/hwy-static
            args.append(f"-Dhwy_DIR={os.path.join(HERE, 'toolchains', 'hwy-static')}")
        else:
            args.append(f"-Dhwy_DIR=/usr/lib/{triple}/cmake/hwy")
    return args


def cache_compiler(b):
    """(compiler id, major version) a configured build directory uses, from CMake's own record."""
    import glob
    for f in glob.glob(os.path.join(b.dir, "CMakeFiles", "*", "CMakeCXXCompiler.cmake")):
        text = open(f).read()
        cid = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
        ver = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "(\d+)', text)
        if cid and ver:
            return cid.group(1), ver.group(1)
    return None


def build(b, jobs):
    t0 = time.time()
    cmds = [["cmake", "--build", b.dir, "-j", str(jobs), "--target", "maroon-battery"]]
    if b.reused:  # made by another script: only bring its battery up to date, and check it is what the name says
        made_by, want = b.reused[1], b.reused[2]
        if not os.path.isfile(os.path.join(b.dir, "CMakeCache.txt")):
            b.error = f"{b.reused[0]} is not configured: run {made_by} first"
        elif cache_compiler(b) != want:
            b.error = f"{b.reused[0]} is built with {cache_compiler(b)}, not {want}: run {made_by} again"
        cmds = [] if b.error else cmds
    else:
        os.makedirs(b.dir, exist_ok=True)
        cmds.insert(0, configure_args(b))
    for cmd in cmds:
        r = sh(cmd)
        if r.returncode != 0:
            first = next((l.strip() for l in r.stdout.splitlines() if ": error: " in l or "CMake Error" in l), "")
            b.error = f"build failed: {first.replace(ROOT + '/', '')}\n" + r.stdout[-3000:]
            break
    b.seconds = time.time() - t0
    log(f"[build] {b.name:22s} {'FAILED' if b.error else 'ok':6s} {b.seconds:6.0f} s")
    if b.error:
        log(b.error)


def runs_natively(b):
    """Whether this kernel runs the build's programs: an x86-64 kernel without IA-32 emulation
    (some VMs' and containers') refuses 32-bit ones (ENOEXEC); i686 then runs under qemu-i386."""
    if not hasattr(b, "native"):
        try:
            subprocess.run([b.exe, "--list-simd"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            b.native = True
        except OSError:
            b.native = False
    return b.native


def runner(b, qemu_cpu=None):
    if b.arch == "x86_64" or (b.arch == "i686" and runs_natively(b)):
        return []
    if b.arch == "i686":  # -cpu max: the most qemu emulates (qemu 7.2: up to AVX2; Highway 1.0 builds
        # no AVX2/AVX-512 for 32-bit x86, so the battery lists scalar and sse4 there: see targets_for)
        return ["qemu-i386", "-cpu", qemu_cpu or "max", "-L", "/usr/i686-linux-gnu"]
    r = list(CROSS[b.arch][4])
    if qemu_cpu:
        r[1:1] = ["-cpu", qemu_cpu]
    return r


def simd_targets(b, qemu_cpu=None):
    """The MAROON_SIMD names this build accepts here (the battery's --list-simd: the targets the
    build compiled that this CPU, or the emulated one, has); None if the battery does not start."""
    r = sh(runner(b, qemu_cpu) + [b.exe, "--list-simd"])
    return r.stdout.split() if r.returncode == 0 else None


def targets_for(b, qemu_cpu=None):
    """The one rule deciding which SIMD targets a run may force, for every architecture and
    runner (x86-64, i686 native or under qemu-i386, AArch64 under qemu): what the battery itself
    lists when started exactly as the run will be (same build, same emulated CPU)."""
    if qemu_cpu not in b.simd_at:
        b.simd_at[qemu_cpu] = (b.simd if qemu_cpu is None else simd_targets(b, qemu_cpu)) or []
    return b.simd_at[qemu_cpu]


def where(b, qemu_cpu=None):
    """Words for the machine a build's runs execute on, for a not-run reason."""
    wrap = runner(b, qemu_cpu)
    return f"under {' '.join(wrap[:3])}" if wrap else "on this CPU"


# ---------------------------------------------------------------- runs

def execute(run, data_dir, timeout):
    b = run.build
    simd = run.simd
    have = targets_for(b, run.qemu_cpu)
    if run.simd == "best":
        simd = have[-1] if have else "default"
    elif run.backend == "cpu" and simd not in have:
        # Not a failure and not a pass: the run cannot happen here (the battery would ignore
        # MAROON_SIMD and run another target).
        run.not_run = (f"SIMD target {simd} not available {where(b, run.qemu_cpu)}: this build's battery "
                       f"lists {', '.join(have) or 'none'} there (the CPU or emulator lacks it, or the "
                       "build did not compile it)")
        return
    env = dict(os.environ, MAROON_BACKEND=run.backend, MAROON_THREADS=str(run.threads), **b.env)
    env.pop("MAROON_SIMD", None)
    if run.simd != "best" and run.backend == "cpu":
        env["MAROON_SIMD"] = simd
    args = [b.exe, f"--fpstate={run.fp}", "--ops"] + (["--small"] if run.small else [])
    if run.models:
        args += ["--models", f"--mlp-steps={MLP_STEPS}", f"--cnn-steps={CNN_STEPS}", f"--cnn-batch={CNN_BATCH}"]
        if data_dir:
            args.append(f"--data={data_dir}")
        if not run.cnn:
            args.append("--no-cnn")
    if run.char:
        args.append(f"--char={CHAR_STEPS}")
    wrap = runner(b, run.qemu_cpu)
    if wrap:  # emulated: see QEMU_TIMEOUT_FACTOR
        timeout *= QEMU_TIMEOUT_FACTOR
    t0 = time.time()
    rc, out, run.cpu_seconds = sh_timed(wrap + args, env, timeout)
    run.seconds = time.time() - t0
    if rc is None:
        run.error = f"timed out after {timeout} s ({run.cpu_seconds:.0f} CPU s)"
        return
    if rc != 0:
        run.error = f"exit {rc}: {out[-2000:]}"
        return
    for line in out.splitlines():
        if line.startswith("# backend="):
            run.header = line[2:]
        elif line and not line.startswith("#"):
            name, digest = line.split()
            run.lines[name] = digest
    if not run.lines:  # exit 0 and no digest: nothing was checked, which is no pass
        run.error = "the battery printed no digest lines"
        return
    h = dict(kv.split("=", 1) for kv in run.header.split() if "=" in kv)
    run.isa = h.get("isa", "").lower() if run.backend == "cpu" else ""
    # The settings must have taken effect, or the run proves nothing.
    want = {"backend": run.backend, "threads": str(run.threads), "fpstate": run.fp}
    if run.backend == "cpu" and run.simd != "best":
        want["simd"] = simd
    for k, v in want.items():
        if h.get(k) != v:
            run.error = f"asked for {k}={v}, the battery reports {k}={h.get(k)}"


# ---------------------------------------------------------------- the plan

def plan(ci, anchor_main=False):
    builds, runs = {}, []

    def B(arch, compiler, opt):
        name = f"{compiler}-{opt}" if arch == "x86_64" else f"{arch}-{compiler}-{opt}"
        builds.setdefault(name, Build(name, arch, compiler, opt))
        return builds[name]

    if ci:
        # ./build and build-asan, made by tools/test.sh's earlier stages (REUSED above).
        g, c = B("x86_64", "gcc12", "Release"), B("x86_64", "clang19", "asan")
        for simd in ("scalar", "best"):
            for t in (1, 3):
                runs.append(Run(g, simd, t, cnn=(simd == "best" and t == 3)))
        runs += [Run(g, "best", 2, "ftz-daz", cnn=False), Run(g, "best", 2, "round-up", cnn=False),
                 Run(g, "best", 2, models=False, small=True),
                 # Under ASan, the op battery only (13 CPU s; with the MLP, the character GPT and
                 # ONNX 56 CPU s, too much for CI's budget: the safety stage's `maroon train`
                 # smoke run covers MLP training under ASan), and the small one in another FP
                 # state and thread count.
                 Run(c, "best", 2, models=False), Run(c, "best", 3, "round-up", models=False, small=True)]
        a = B("aarch64", "gcc12", "O2")
        # One thread under qemu: the full op battery then takes about 40 s (threads make an
        # emulated run crawl: workers wait on each other on emulated cores).
        runs += [Run(a, "best", 1, qemu_cpu="cortex-a72", models=False, char=True),
                 Run(a, "best", 1, "ftz-daz", qemu_cpu="max", models=False, small=True)]
        return list(builds.values()), runs

    if anchor_main:  # ./build as the first row: the reference for a matrix cut down with --only
        m = B("x86_64", "gcc12", "Release")
        runs += [Run(m, "best", 3), Run(m, "best", 2, models=False, small=True)]
    anchor = B("x86_64", "gcc12", "O2")
    for simd in ("scalar", "sse4", "avx2", "avx512"):
        for t in (1, 2, 3, 8):
            runs.append(Run(anchor, simd, t, cnn=t in (1, 8)))
    runs += [Run(anchor, "best", 2, "ftz-daz"), Run(anchor, "best", 3, "round-up"),
             Run(anchor, "best", 2, models=False, small=True),
             Run(anchor, backend="ref", models=False)]  # the reference executor: ops only (below)
    a = B("aarch64", "gcc12", "O2")
    # The full battery, the MNIST MLP included, on one thread (see --ci); the small one with
    # several threads and FP states.
    runs += [Run(a, "best", 1, qemu_cpu="cortex-a72"), Run(a, "best", 1, qemu_cpu="max", cnn=False),
             Run(a, "best", 3, qemu_cpu="max", small=True, models=False),
             Run(a, "best", 2, qemu_cpu="cortex-a72", small=True, models=False),
             Run(a, "best", 2, "ftz-daz", qemu_cpu="max", small=True, models=False),
             Run(a, "best", 8, "round-up", qemu_cpu="cortex-a72", small=True, models=False)]
    order = [("clang14", "O2"), ("clang19", "O2"), ("gcc12", "O0"), ("clang19", "O3n"), ("gcc12", "O3n"),
             ("clang14", "O0"), ("clang19", "O0"), ("clang14", "O3n")]
    for comp, opt in order[:2]:
        b = B("x86_64", comp, opt)
        runs += [Run(b, "best", 8, cnn=opt != "O0"), Run(b, "scalar", 1, cnn=False),
                 Run(b, "avx2", 3, "ftz-daz", cnn=False), Run(b, "sse4", 2, "round-up", cnn=False)]
    i = B("i686", "gcc12", "O2")
    # As for AArch64: where i686 runs under qemu-i386, the full battery (every op class, the MNIST
    # MLP, the character GPT) on one thread (about 70 CPU s each, scalar or SSE4; the CNN adds
    # about 20 to SSE4's); threads and FP states with the small op battery (3 CPU s each). Rows
    # with 2 or 3 threads and the full battery had not ended after 450 CPU s under qemu. avx2: not
    # run where the battery does not list it (Highway 1.0 compiles no AVX2 for 32-bit x86; see
    # targets_for).
    runs += [Run(i, "scalar", 1, cnn=False), Run(i, "sse4", 1),
             Run(i, "sse4", 2, models=False, small=True), Run(i, "sse4", 3, "ftz-daz", models=False, small=True),
             Run(i, "scalar", 2, "round-up", models=False, small=True),
             Run(i, "avx2", 8, "round-up", models=False, small=True)]
    r = B("riscv64", "gcc12", "O2")
    runs += [Run(r, "best", 1, cnn=False), Run(r, "best", 1, small=True, models=False),
             Run(r, "best", 3, "round-up", small=True, models=False)]
    for comp, opt in order[2:]:
        b = B("x86_64", comp, opt)
        if opt == "O3n":  # -march=native: Highway compiles no target below the native one
            runs += [Run(b, "best", 8), Run(b, "best", 1, cnn=False), Run(b, "best", 3, "ftz-daz", cnn=False),
                     Run(b, "best", 2, "round-up", cnn=False)]
            continue
        runs += [Run(b, "best", 8, cnn=opt != "O0"), Run(b, "scalar", 1, cnn=False),
                 Run(b, "avx2", 3, "ftz-daz", cnn=False), Run(b, "sse4", 2, "round-up", cnn=False)]
    return list(builds.values()), runs


# ---------------------------------------------------------------- report

def outcome(r):
    """"ok" (ran and printed digests), "not run" (could not run here: r.not_run says why) or
    "FAILED" (r.error). Never "ok" without digest lines."""
    if r.error:
        return "FAILED"
    if r.not_run:
        return "not run"
    return "ok" if r.lines else "FAILED"


def why(r):
    text = r.error or r.not_run or "no digest lines"
    return text.splitlines()[0]


def log_run(r):
    o = outcome(r)
    log(f"[run] {r.label():52s} {o if o == 'ok' else o + ': ' + why(r)} "
        f"{r.seconds:.0f} s ({r.cpu_seconds:.0f} CPU s)")


def summarize(runs, ref, bad, ci):
    """Logs the runs that did not pass and the differences; (exit status, summary line). A run
    not run is no failure, except under --ci, whose subset must run whole."""
    ok = [r for r in runs if outcome(r) == "ok"]
    failed = [r for r in runs if outcome(r) == "FAILED"]
    not_run = [r for r in runs if outcome(r) == "not run"]
    for r in not_run:
        log(f"not run: {r.label()}: {why(r)}")
    for r in failed:
        log(f"FAILED: {r.label()}: {why(r)}")
    for x in bad:
        log(f"DIFFERENT: {x}")
    hard = failed + (not_run if ci else [])
    line = (f"matrix: {len(ok)} runs ok, {len(ref)} digest lines, {len(bad)} differences, {len(failed)} failed, "
            f"{len(not_run)} not run")
    return (1 if bad or hard or not ok else 0), line


def compare(runs):
    """Reference digest of each line (the first run that has it) and the mismatches."""
    ref, bad = {}, []
    for r in runs:
        for name, d in r.lines.items():
            if name not in ref:
                ref[name] = (d, r)
            elif ref[name][0] != d:
                bad.append(f"{name}: {r.label()} has {d}, {ref[name][1].label()} has {ref[name][0]}")
    return ref, bad


def table(runs, width=10):
    cols = [c for c in CLASSES if any(c in r.lines for r in runs)]
    head = "| configuration | s | " + " | ".join(cols) + " |"
    out = [head, "|" + "---|" * (len(cols) + 2)]
    for r in runs:
        if outcome(r) != "ok":
            continue
        cells = [r.lines[c][:width] if c in r.lines else "—" for c in cols]
        out.append(f"| {r.label()} | {r.seconds:.0f} | " + " | ".join(cells) + " |")
    return out


def tool_versions(builds):
    seen, out = set(), []
    for b in builds:
        cxx = COMPILERS[b.compiler][0] if b.arch == "x86_64" else CROSS[b.arch][1].replace("i386", "i686") + "-g++"
        if cxx in seen or b.error:
            continue
        seen.add(cxx)
        v = sh([cxx, "--version"]).stdout.splitlines()
        out.append(f"- `{cxx}`: {v[0] if v else '?'}")
    q = sh(["qemu-aarch64", "--version"]).stdout.splitlines()
    if q:
        out.append(f"- qemu-user: {q[0]}")
    return out


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def write_doc(builds, runs, ref, bad, data_desc, command, total):
    ok = [r for r in runs if outcome(r) == "ok"]
    failed = [r for r in runs if outcome(r) == "FAILED"]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L = ["# Determinism matrix", "",
         "Generated by `" + command + "` (tools/determinism/matrix.py); do not edit by hand.", "",
         f"**Latest run: {now}, on {cpu_model()} ({os.cpu_count()} cores), {total / 60:.0f} min. "
         + (f"Result: every digest equal across the {len(ok)} runs that ran" if not bad else
            f"Result: {len(bad)} DIFFERENCES") + (f"; {len(runs) - len(ok)} of the {len(runs)} planned runs did "
                                                 "not run or failed (why: below)" if len(ok) < len(runs) else "")
         + (f", {len(failed)} of them FAILED." if failed else ".") + "**", "",
         "Each run executes `maroon-battery` (tools/determinism/battery.cpp) and prints one SHA-256 per "
         "workload over the raw result bytes (with dtype and shape). The table shows the first 10 hex "
         "digits of each workload class; the full digests are below it. The battery also prints a "
         "digest per op (`ops.EXP2`, `ops.CAST`, ...) and per model part (losses, state, logits); the "
         "matrix compares every one of those lines too, not only the classes shown.", "",
         "## Workloads", "",
         "- `ops:*`: every op of `include/maroon/ops.def` in every dtype it accepts and all four rounding modes, "
         "on inputs from SplitMix64 (integer code) weighted to special values: zeros, subnormals, "
         "infinities, NaNs with payloads, the largest finite values, values near 1, integer minima, "
         "maxima and shift counts. Operands of 3x2731 elements (17 CPU tiles, two tasks, a 1-element last "
         "tile), contiguous, transposed and broadcast. `unary` (incl. CAST to every dtype and BITCAST), "
         "`binary`, `compare`, `ternary` (WHERE, MULACC), `const` (weak C++ literals and CONST, whose "
         "conversion must not follow the caller's FPU), `reduce` (ADD/MUL/MAX over each axis set, "
         "matmuls as MUL+REDUCE ADD, REDUCE_MULACC), `movement` (every movement op and the graph "
         "markers, read directly and feeding a kernel), `fused` (chains the CPU backend fuses), `index` "
         "(GATHER with every index dtype, indices out of range, transposed views and stretched index axes).",
         f"- `mlp:train`: the MNIST MLP (include/maroon/models.h, 784-512-512-10), {MLP_STEPS} Adam steps of "
         "batch 32: every step's loss bits and correct count, every final state tensor, and the library's "
         "safetensors SHA-256 (a separate line). `mlp:infer`: logits and classes of a fresh model "
         "(seed 7) on 256 test images.",
         f"- `cnn:train`: tinygrad's beautiful_mnist CNN, {CNN_STEPS} Adam steps of batch {CNN_BATCH} "
         "(small: the CNN costs seconds per step on the CPU backend); `cnn:infer`: a fresh CNN on 16 "
         "test images.",
         f"- `char:train`: the character GPT of examples/char_gpt.py in C++ (src/models/char_gpt.cpp), both "
         f"variants (GPT-2: LayerNorm, GELU, learned positions; LLaMA: RMSNorm, SiLU gate, rotary), the tiny "
         f"configuration, {CHAR_STEPS} Adam steps of batch 4 on Debian's GPL-3 text, then 16 sampled characters: "
         "each step's loss bits and the sample; the `char.*.digests` lines (loss/sample/weights SHA-256) are "
         "those of tests/data/char_gpt_digest.txt.",
         "- `onnx:infer` (runs with models, in builds with ONNX import: x86_64, not the cross builds): two "
         "models built in code with ONNX's protobuf classes (tools/determinism/onnx_battery.cpp) and run "
         "through maroon::onnx: a CNN (Conv with pads, groups and dilations, BatchNormalization, MaxPool, "
         "AveragePool, Sigmoid, Gemm, Softmax) on 4 images of 3x16x16 and a transformer encoder layer "
         "(LayerNormalization, two-head attention reshaped through Shape/Gather/Concat, Softmax, Erf GELU) "
         "on 2 sequences of 8x16; their output bytes and inference digests are those of "
         "tests/data/onnx_battery_digest.txt (about 0.1 s per run).",
         "- `onnx:fused` (with `onnx:infer`): the same two models run under FusedScope, their Conv, Gemm and "
         "MatMul as REDUCE_MULACC (docs/spec.md §14: FMA register tiles on targets with an FMA instruction, "
         "exact software steps elsewhere); lines `onnx.*.fused`, also in tests/data/onnx_battery_digest.txt.",
         f"- Data: {data_desc}.", "",
         "## Configurations", ""]
    for b in builds:
        n = sum(1 for r in runs if r.build is b and outcome(r) == "ok")
        status = f"not run: {b.error.splitlines()[0]}" if b.error else f"{n} runs, built or brought up to date in {b.seconds:.0f} s"
        L.append(f"- `{b.name}`: {b.describe()}; SIMD targets {', '.join(b.simd) or '—'}; {status}")
    L += ["", "Tools:"] + tool_versions(builds) + ["",
          "Run labels: build, the Highway target the dispatcher used (`isa` in the battery's header; "
          "on x86 forced with MAROON_SIMD; `scalar` is Highway's SCALAR with GCC 12.2 and EMU128 with clang), "
          "threads (MAROON_THREADS), the "
          "emulated CPU for qemu, and the caller's FP state when not the default: `ftz-daz` sets MXCSR "
          "FTZ and DAZ (AArch64: FPCR.FZ and FZ16) and `round-up` sets rounding toward +inf before any "
          "Maroon call; the battery also fails if Maroon leaves that state changed.", "",
          "## Table", ""] + table(runs) + ["", "Full digests (reference: the first run):", ""]
    for c in CLASSES:
        if c in ref:
            L.append(f"- `{c}` `{ref[c][0]}`")
    for name in sorted(ref):
        if name.endswith("safetensors_sha256"):
            L.append(f"- `{name}` `{ref[name][0]}` (sha256sum of the .safetensors file)")
    L += ["", "## Not run, and why", ""]
    notes = [
        "- The reference executor (`MAROON_BACKEND=ref`) runs the op battery only: it is the integer "
        "soft-float oracle, and one MLP step of batch 32 takes over a minute there "
        "(2 MLP steps + 1 CNN step + inference took 157 s).",
        "- CNN training and inference run in 8 of the 16 SIMD x thread runs of gcc12-O2 (threads 1 "
        "and 8), its FP-state runs, the best-target run of the other -O2/-O3 builds, i686's SSE4 run "
        "on one thread and AArch64 NEON under qemu (one thread, about 3 minutes); not at -O0, nor on "
        "SVE2 and riscv64 under qemu.",
        "- i686: Debian's cross g++ (SSE2 arithmetic, no x87) and Highway 1.0.3 for i386, which compiles "
        "no AVX2 or AVX-512 code for 32-bit x86 (its HWY_BROKEN_TARGETS): the battery lists scalar and "
        "sse4 only, so the `avx2 t8 round-up` row is not run, natively or under qemu (qemu-i386 7.2's "
        "`-cpu max` does report AVX2). Which targets a run may force is decided the same way for every "
        "build: what the battery's `--list-simd` prints when started as the run is (same emulator and "
        "`-cpu`); a target it does not list makes the run \"not run\", with the reason, never a failure "
        "or a pass (`matrix.py --self-test`). Where the kernel runs no 32-bit programs (ENOEXEC: no "
        "IA-32 emulation) i686 runs under `qemu-i386 -cpu max`, with AArch64's battery: the full one "
        "(ops, MLP, character GPT; the CNN too on SSE4) on one thread, the small op battery with threads "
        "and FP states. No "
        "`onnx:infer`: the cross builds have no ONNX import (the host's libonnx and libprotobuf are "
        "x86-64 ones; tools/determinism/CMakeLists.txt links it in native builds only).",
        "- Under qemu-user the full battery (every op class and the 50-step MNIST MLP) runs on one "
        "thread: with several threads an emulated run crawls (the pool's workers wait on each other on "
        "emulated cores; the full op battery did not finish in 5 minutes on 2 threads, and takes about "
        "40 s on one). Runs with several threads and FP states use the small op battery, `ops-small:*` "
        "(3x171-element operands), compared with an x86-64 run of the same small battery.",
        "- AArch64: the AArch64 runs use the dispatcher's choice, set by the emulated CPU (Debian's arm64 "
        "Highway build has no scalar target to force): "
        "`-cpu cortex-a72` gives NEON, `-cpu max` SVE2 (the `isa` column of the label).",
        "- riscv64: Debian 12 has no riscv64 libhwy (riscv64 is not a release architecture of "
        "bookworm), so that build compiles Highway's headers (from libhwy-dev) for its static target "
        "only (HWY_SCALAR with GCC 12.2; no RVV), with the few runtime functions the engine calls in "
        "tools/determinism/toolchains/hwy-static; ftz-daz does not apply (RISC-V has no flush-to-zero).",
    ]
    L += notes
    for b in builds:  # one line per build that failed, then runs that failed or were skipped
        if b.error:
            n = sum(1 for r in runs if r.build is b)
            L.append(f"- `{b.name}` ({n} planned runs): {b.error.splitlines()[0]}")
    for r in runs:
        if outcome(r) != "ok" and not r.build.error:
            L.append(f"- `{r.label()}`: {outcome(r)}: {why(r)}")
    if bad:
        L += ["", "## Differences", ""] + [f"- {x}" for x in bad]
    with open(DOC, "w") as f:
        f.write("\n".join(L) + "\n")
    log(f"matrix: wrote {os.path.relpath(DOC, ROOT)}")


def write_partial_doc(runs, ref, bad, data_desc, command, total):
    """A matrix cut down with --only writes its own section of docs/determinism.md (replaced by its
    next run, kept by no other): the rows, seconds and CPU seconds, and per workload class whether
    every row that ran it has the same digest. The full matrix rewrites the file without it."""
    begin, end = f"<!-- partial: {command} -->", f"<!-- end partial: {command} -->"
    ok = [r for r in runs if outcome(r) == "ok"]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = open("/proc/loadavg").read().split()[0]
    L = [begin, f"## Partial run: `{command}`", "",
         f"Written by that command (tools/determinism/matrix.py) at {now}, on {cpu_model()} "
         f"({os.cpu_count()} cores, load average {load} at the end), {total / 60:.0f} min; its next run "
         "replaces this section. Data: " + data_desc + ". "
         + (f"**Every digest equal: {len(ref)} digest lines across the {len(ok)} rows that ran.**" if not bad
            else f"**{len(bad)} DIFFERENCES** (below).") + " Wall seconds depend on the machine's load; CPU "
         "seconds (the battery and its qemu, all threads) much less.", "",
         "| row | outcome | wall s | CPU s | workloads |", "|---|---|---|---|---|"]
    for r in runs:
        classes = ", ".join(c for c in CLASSES if c in r.lines) or "—"
        o = outcome(r) if outcome(r) == "ok" else f"{outcome(r)}: {why(r)}"
        L.append(f"| {r.label()} | {o} | {r.seconds:.0f} | {r.cpu_seconds:.0f} | {classes} |")
    L += ["", "Per workload class (first 16 hex digits of each distinct digest):", ""]
    for c in CLASSES:
        have = [r for r in ok if c in r.lines]
        if not have:
            continue
        digests = sorted({r.lines[c] for r in have})
        verdict = ("DIFFERENT" if len(digests) > 1 else "equal" if len(have) > 1 else "one row only, not compared")
        L.append(f"- `{c}`: {verdict} ({'; '.join(r.label() for r in have)}): "
                 + ", ".join(f"`{d[:16]}`" for d in digests))
    if bad:
        L += ["", "Differences:", ""] + [f"- {x}" for x in bad]
    L.append(end)
    text = open(DOC).read()
    if begin in text and end in text:
        text = text[:text.index(begin)] + "\n".join(L) + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(L) + "\n"
    with open(DOC, "w") as f:
        f.write(text)
    log(f"matrix: wrote the section of {os.path.relpath(DOC, ROOT)} for `{command}`")


# ---------------------------------------------------------------- self-test

# A stand-in battery and qemu for --self-test: the battery lists the targets of the CPU named by
# FAKE_CPU (the stand-in qemu sets it from -cpu) and, like the library, runs its best target when
# MAROON_SIMD names one it lacks; FAKE_IGNORE_SIMD makes it ignore MAROON_SIMD altogether and
# FAKE_SILENT print no digest.
FAKE_BATTERY = """#!/usr/bin/python3
import os, sys
have = {"host": ["scalar", "sse4", "avx2"], "max": ["scalar", "sse4"], "pentium3": ["scalar"]}[
    os.environ.get("FAKE_CPU", "host")]
if sys.argv[1:] == ["--list-simd"]:
    print("\\n".join(have))
    sys.exit(0)
simd = os.environ.get("MAROON_SIMD", have[-1])
if simd not in have or os.environ.get("FAKE_IGNORE_SIMD"):
    simd = have[-1]
fp = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--fpstate=")][0]
print("# backend=%s simd=%s isa=%s threads=%s fpstate=%s fpbits=0" % (
    os.environ["MAROON_BACKEND"], simd, simd, os.environ["MAROON_THREADS"], fp))
if not os.environ.get("FAKE_SILENT"):
    print("ops-small:unary 0123")
"""
FAKE_QEMU = """#!/usr/bin/python3
import os, sys
a = sys.argv[1:]
while a[0].startswith("-"):
    if a[0] == "-cpu":
        os.environ["FAKE_CPU"] = a[1]
    a = a[2:]
os.execv(a[0], a)
"""


def self_test():
    """--self-test (ctest determinism_matrix_not_run_rule, about a second, nothing built): the
    not-run rule on stand-ins. A SIMD target the battery does not list where the run executes
    (x86-64 natively, i686 natively or under qemu-i386, per emulated CPU) must come out "not run"
    with its reason, never "FAILED" and never "ok"; a listed target runs; a battery that runs
    another target than the one asked for, or prints no digest, fails."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="matrix-self-test-")
    for name, text in (("maroon-battery", FAKE_BATTERY), ("qemu-i386", FAKE_QEMU)):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(tmp, name), 0o755)
    os.environ["PATH"] = tmp + os.pathsep + os.environ.get("PATH", "")  # runner()'s qemu-i386
    for k in ("FAKE_CPU", "FAKE_IGNORE_SIMD", "FAKE_SILENT"):
        os.environ.pop(k, None)
    wrong = []

    def make(arch, native):
        b = Build(f"self-test-{arch}", arch, "gcc12", "O2")
        b.exe, b.native = os.path.join(tmp, "maroon-battery"), native
        b.simd = simd_targets(b)
        return b

    def check(what, r, want, reason=None, env=None):
        os.environ.update(env or {})
        try:
            execute(r, "", 60)
        finally:
            for k in env or {}:
                os.environ.pop(k)
        got = outcome(r)
        good = got == want and (reason is None or reason in why(r)) and (want != "not run" or not r.lines)
        log(f"matrix self-test: {'ok   ' if good else 'WRONG'} {what}: {got}" + (f" ({why(r)})" if got != "ok" else ""))
        if not good:
            wrong.append(what)
        return r

    x86, i686_qemu, i686_native = make("x86_64", True), make("i686", False), make("i686", True)
    if i686_qemu.simd != ["scalar", "sse4"] or x86.simd != ["scalar", "sse4", "avx2"]:
        wrong.append(f"--list-simd through the runner: {x86.simd}, {i686_qemu.simd}")
    runs = [
        check("x86-64 avx2 on a CPU that has it", Run(x86, "avx2", 3, "ftz-daz", small=True, models=False), "ok"),
        check("x86-64 avx512 on a CPU without it", Run(x86, "avx512", 2, small=True, models=False),
              "not run", "avx512 not available on this CPU"),
        check("i686 avx2 under qemu-i386 -cpu max", Run(i686_qemu, "avx2", 8, "round-up", small=True, models=False),
              "not run", "avx2 not available under qemu-i386 -cpu max"),
        check("i686 sse4 under qemu-i386 -cpu max", Run(i686_qemu, "sse4", 2, small=True, models=False), "ok"),
        check("i686 sse4 under qemu-i386 -cpu pentium3", Run(i686_qemu, "sse4", 1, qemu_cpu="pentium3", small=True,
                                                             models=False), "not run", "-cpu pentium3"),
        check("i686 avx2 natively on a CPU that has it", Run(i686_native, "avx2", 8, small=True, models=False), "ok"),
        check("a battery that ignores MAROON_SIMD", Run(x86, "sse4", 1, small=True, models=False), "FAILED",
              "asked for simd=sse4", {"FAKE_IGNORE_SIMD": "1"}),
        check("a battery that prints no digest", Run(x86, "scalar", 1, small=True, models=False), "FAILED",
              "no digest", {"FAKE_SILENT": "1"}),
    ]
    shown = "\n".join(table(runs))
    for r in runs:
        if (r.label() in shown) != (outcome(r) == "ok"):
            wrong.append(f"table row of {r.label()}: {'shown' if r.label() in shown else 'missing'}")
    ok_and_not_run = [r for r in runs if outcome(r) != "FAILED"]
    ref, bad = compare(ok_and_not_run)
    for ci, want in ((False, 0), (True, 1)):
        status, line = summarize(ok_and_not_run, ref, bad, ci)
        if status != want or "0 failed, 3 not run" not in line:
            wrong.append(f"summary with ci={ci}: exit {status}, {line!r}")
    shutil.rmtree(tmp)
    if wrong:
        log("matrix self-test: WRONG: " + "; ".join(wrong))
        return 1
    log("matrix self-test: every check passed")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ci", action="store_true", help="the fast subset (two compilers, two SIMD targets, "
                    "two thread counts, FP states, the op battery on AArch64 under qemu-user)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="compile jobs")
    ap.add_argument("--only", help="regex: keep builds whose name matches (with --anchor-main, ./build's "
                    "battery is kept too, as the reference)")
    ap.add_argument("--anchor-main", action="store_true", help="also run ./build's battery (tools/build.sh), "
                    "first: the reference the other rows are compared with, e.g. --only i686 --anchor-main")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/determinism.md (the full matrix "
                    "rewrites it; one cut down with --only writes its own section of it)")
    ap.add_argument("--build-only", action="store_true", help="build the configurations, run nothing")
    ap.add_argument("--timeout", type=int, default=3600, help="wall seconds per battery run (an emulated "
                    f"one gets {QEMU_TIMEOUT_FACTOR} times as many)")
    ap.add_argument("--parallel", type=int, default=1, help="battery runs of a build at once (default 1, so "
                    "that the seconds each run took are those of an idle machine; the digests do not change)")
    ap.add_argument("--self-test", action="store_true", help="check the not-run rule on a stand-in battery "
                    "(about a second; ctest determinism_matrix_not_run_rule) and exit")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    t0 = time.time()

    def stop(signum, frame):  # SIGTERM (and SIGINT, ignored in background jobs) end the matrix early
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    builds, runs = plan(args.ci, args.anchor_main)
    if args.only:
        builds = [b for b in builds if re.search(args.only, b.name) or (args.anchor_main and b.name == "gcc12-Release")]
        runs = [r for r in runs if r.build in builds]
    ensure_packages(builds)
    mnist = os.path.join(ROOT, "data", "mnist")
    files = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
    data_dir = mnist if all(os.path.isfile(os.path.join(mnist, f)) for f in files) else ""
    data_desc = ("MNIST from data/mnist (tools/fetch_mnist.sh), the first images of each split" if data_dir
                 else "synthetic digits drawn by integer code (data/mnist absent)")
    log(f"matrix: {len(builds)} builds, {len(runs)} runs; data: {data_desc}")
    interrupted = False
    try:
        for b in builds:  # each build, then its runs: a cut-short matrix still has whole rows
            if not b.error:
                build(b, args.jobs)
            if not b.error:
                b.simd = simd_targets(b)
                if b.simd is None:
                    b.simd, b.error = [], "the battery does not start (--list-simd failed)"
            if args.build_only:
                continue
            mine = [r for r in runs if r.build is b]
            if b.error:
                for r in mine:
                    why_not = "build not available: " + b.error.splitlines()[0]
                    if b.error.startswith("packages not installable"):
                        r.not_run = why_not
                    else:
                        r.error = why_not
                continue

            def one(r):
                execute(r, data_dir, args.timeout)
                log_run(r)

            pool = ThreadPoolExecutor(max_workers=max(1, args.parallel))
            try:
                for f in [pool.submit(one, r) for r in mine]:
                    f.result()
            except BaseException:  # interrupted: stop the running batteries, start no more
                for p in list(LIVE):
                    p.kill()
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        interrupted = True
        log("matrix: interrupted; reporting what ran")
    if args.build_only:
        return 1 if any(b.error for b in builds) else 0
    for r in runs:
        if not r.lines and not r.error and not r.not_run:
            r.not_run = "the matrix was interrupted"
    ref, bad = compare(runs)
    log("")
    for line in table(runs, 8):
        log(line)
    total = time.time() - t0
    log("")
    status = summarize(runs, ref, bad, args.ci)
    log(f"{status[1]}; {total:.0f} s")
    if not args.ci and not args.no_doc and not args.only:
        write_doc(builds, runs, ref, bad, data_desc,
                  "/usr/bin/python3 tools/determinism/matrix.py", total)
    elif not args.ci and not args.no_doc:  # --only: its own section, not the whole file
        write_partial_doc(runs, ref, bad, data_desc, "/usr/bin/python3 tools/determinism/matrix.py --only "
                          + args.only + (" --anchor-main" if args.anchor_main else ""), total)
    return status[0]


if __name__ == "__main__":
    sys.exit(main())
