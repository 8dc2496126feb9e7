"""Runners: boot the VM (vm/run.sh) or use this host's own sched_ext kernel, run the guest plan,
and hand each result line to a callback as it arrives, so that an interrupted run keeps what it
gathered."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUEST_SCRIPT = os.path.join(ROOT, "bench", "guest", "bench.sh")
CACHE = os.environ.get("FDL_CACHE", os.path.join(ROOT, ".cache"))
PEERS_FILE = os.path.join(ROOT, "bench", "peers.txt")
ALL_SCHEDULERS = ["eevdf", "scx_fdl", "scx_bpfland", "scx_lavd", "scx_flash", "scx_rusty"]


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def host_has_sched_ext():
    return os.path.exists("/sys/kernel/sched_ext/state")


def peers():
    """{name: version} from bench/peers.txt."""
    out = {}
    with open(PEERS_FILE) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if len(words) == 2:
                out[words[0]] = words[1]
    return out


def split_scheduler(name):
    """(scheduler, variant) of a label: "scx_fdl+NAME" is scx_fdl with the options of variant NAME
    (bench/run.sh --fdl-variant), run beside plain scx_fdl in the same boot; variant "" for none."""
    base, _, variant = name.partition("+")
    return base, variant


def resolve_scheduler(name, fdl_builds=None):
    """(binary path or None, status): where the scheduler is, or why it cannot run. fdl_builds:
    {variant: path} of other scx_fdl builds (bench/run.sh --fdl-build)."""
    name, variant = split_scheduler(name)
    if name == "eevdf":
        return None, "ok"
    if name == "scx_fdl" and variant in (fdl_builds or {}):
        b = fdl_builds[variant]
        return (b, "ok") if os.access(b, os.X_OK) else (None, f"not an executable: {b}")
    if name == "scx_fdl":
        b = os.environ.get("FDL_SCHED_BIN", os.path.join(ROOT, "target", "release", "scx_fdl"))
        return (b, "ok") if os.access(b, os.X_OK) else (None, f"not built: {b} missing (cargo build --release)")
    versions = peers()
    if name not in versions:
        return None, f"unknown scheduler (known: {', '.join(ALL_SCHEDULERS)})"
    d = os.path.join(CACHE, "peers", f"{name}-{versions[name]}")
    b = os.path.join(d, "bin", name)
    if os.access(b, os.X_OK):
        return b, "ok"
    failed = os.path.join(d, "FAILED")
    if os.path.exists(failed):
        with open(failed) as f:
            return None, f"build failed: {f.read().strip()} (log {d}/build.log)"
    return None, f"not built: run bench/setup.sh ({name} {versions[name]})"


class Progress:
    """Step counter with an estimate of the time left from the steps seen so far."""

    def __init__(self, total, planned_step_s):
        self.total, self.planned = total, planned_step_s
        self.done, self.start = 0, time.monotonic()
        self.first_step_at = None

    def step(self, desc):
        now = time.monotonic()
        if self.first_step_at is None:
            self.first_step_at = now
        # Steps started so far have all ended but this one: their mean is the best guess.
        per = (now - self.first_step_at) / self.done if self.done else self.planned
        left = (self.total - self.done) * per
        self.done += 1
        log(f"step {self.done}/{self.total}: {desc} | {fmt_secs(now - self.start)} elapsed, "
            f"about {fmt_secs(left)} left")


def guest_words(text):
    """Whether scx_fdl options may go to the guest as they are: it splits a command line on spaces,
    without quotes, globs or shell characters, so only words of letters, digits and _=.,:/+-."""
    return re.fullmatch(r"[A-Za-z0-9 _=.,:/+-]+", text) is not None


def parse_fdl_variants(values, error):
    """{NAME: OPTIONS} from --fdl-variant NAME=OPTIONS arguments (bench/run.sh, bench/matrix.sh): each
    is scx_fdl with those options, run as scheduler scx_fdl+NAME beside plain scx_fdl in the same boot.
    error(message) is called for a malformed or repeated one (argparse's ap.error: it exits)."""
    variants = {}
    for v in values:
        name, eq, opts = v.partition("=")
        if not eq or not re.fullmatch(r"[a-z0-9_-]+", name) or not opts.strip():
            error(f"--fdl-variant {v!r}: want NAME=OPTIONS, NAME of a-z, 0-9, _ and -")
        if not guest_words(opts):
            error(f"--fdl-variant {v!r}: OPTIONS are words of letters, digits and _=.,:/+- "
                  "(the guest splits them on spaces; no quotes or shell characters)")
        if name in variants:
            error(f"--fdl-variant: {name} defined twice")
        variants[name] = opts.strip()
    return variants


def fmt_secs(s):
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def emulator_fault(console):
    """The guest kernel died with an int3 Oops while patching its own text: a known fault of TCG's
    live code patching as sched_ext switches on or off (see README), not a verdict on a scheduler."""
    try:
        with open(console, errors="replace") as f:
            return "Oops: int3" in f.read()
    except OSError:
        return False


def kernel_crash(console):
    """The first line of a guest kernel crash in the console, or None."""
    try:
        with open(console, errors="replace") as f:
            for line in f:
                if "Oops:" in line or "BUG:" in line or "Kernel panic" in line:
                    return line.strip()
    except OSError:
        pass
    return None


def run(sc, plan_text, fdl_config, bins, runner, out_dir, on_record, progress, timeout, console_name="console.log"):
    """Run the plan; call on_record(kind, obj) for each FDL-BENCH* line (FDL-BENCH, -SCHED, -RIG). Returns (rc, info) where
    info holds what the run learnt about the machine (guest kernel, console log path)."""
    work = tempfile.mkdtemp(prefix="fdl-bench-")
    try:
        with open(os.path.join(work, "plan.sh"), "w") as f:
            f.write(plan_text)
        with open(os.path.join(work, "fdl.toml"), "w") as f:
            f.write(fdl_config)
        console = os.path.join(out_dir, console_name)
        env = dict(os.environ)
        if runner == "vm":
            env["FDL_GUEST_FILES"] = f"{work}/plan.sh {work}/fdl.toml"
            env["FDL_EXTRA_BINS"] = " ".join(bins)
            cmd = [os.path.join(ROOT, "vm", "run.sh"), "--cpus", str(sc.vcpus), "--numa", str(sc.numa),
                   "--mem", str(sc.mem_mb),
                   "--timeout", str(timeout), "--log", console, GUEST_SCRIPT]
            cwd = ROOT
        else:
            for src in (GUEST_SCRIPT, os.path.join(ROOT, "tests", "vm", "lib.sh")):
                shutil.copy(src, work)
            path_dirs = []
            for b in bins:
                d = os.path.dirname(os.path.abspath(b))
                if d not in path_dirs:
                    path_dirs.append(d)
            env["PATH"] = ":".join(path_dirs + [env.get("PATH", "/usr/bin:/bin")])
            cmd = ["timeout", "-k", "10", str(timeout), "sh", os.path.join(work, "bench.sh")]
            cwd = work
        info = {"console_log": console}
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=None, text=True,
                                errors="replace", start_new_session=True)
        try:
            with open(console, "a") if runner == "host" else open(os.devnull, "w") as copy:
                for line in proc.stdout:
                    copy.write(line)
                    line = line.rstrip("\n")
                    handle_line(line, on_record, progress, info)
            rc = proc.wait()
        except KeyboardInterrupt:
            log("interrupted: stopping the run; the report keeps the results gathered so far")
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            info["interrupted"] = True
            rc = 130
        return rc, info
    finally:
        shutil.rmtree(work, ignore_errors=True)


def handle_line(line, on_record, progress, info):
    if line.startswith("FDL-GUEST-BEGIN"):
        info.update(dict(w.split("=", 1) for w in line.split()[1:] if "=" in w))
        log(f"guest up: {line[len('FDL-GUEST-BEGIN '):]}")
    elif line.startswith("FDL-BENCH-STEP "):
        f = dict(w.split("=", 1) for w in line.split()[1:])
        progress.step(f"{f['sched']} {f['variant']} repeat {f['repeat']}")
    elif line.startswith("FDL-BENCH-END"):
        info["complete"] = True
    elif line.startswith(("FDL-BENCH-SCHED ", "FDL-BENCH-RIG ", "FDL-BENCH ")):
        kind, _, payload = line.partition(" ")
        try:
            obj = json.loads(payload, strict=False)
        except json.JSONDecodeError:
            # A kernel message can land in the middle of a console line: say so, keep going.
            log(f"a result line arrived garbled and is left out: {line[:160]}")
            info["garbled"] = info.get("garbled", 0) + 1
            return
        on_record(kind, obj)
    elif line.startswith("[guest]"):
        log(line)
