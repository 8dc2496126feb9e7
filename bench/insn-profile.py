#!/usr/bin/env python3
"""Reads bench/insn-profile.sh's console log (BPFSYM, BPFPROG and KSYMS lines) and the plugin's
block counts ("vaddr n_insns executions"), and prints per BPF program its runs and the guest
instructions and translated blocks executed in its own code per run, and both per task started
over all BPF code, then the kernel functions that executed most.

    python3 bench/insn-profile.py [--lines [--prog NAME]] CONSOLE_LOG BLOCKS [--top N]
    python3 bench/insn-profile.py CONSOLE_LOG BLOCKS --base BASE_LOG BASE_BLOCKS [--top N]

--base (a shorter run of the same scheduler, e.g. bench/insn-profile.sh secs=6 beside secs=18): the
steady state instead, all kernel code and the BPF programs per task started between the two runs,
so that the boot, the load and the scenario's set-up cancel out (see steady()).

A program's own code excludes what it calls in the kernel (helpers, kfuncs: those are in the
kernel's table, summed over the whole boot) and its BPF subprograms and timer callbacks, listed
beside it under their own names (a subprogram has no run count of its own).

--lines (the guest printed JITLINES, the JIT code's line records from jit_lines.c, and the plugin
ran with offsets=1): then the BPF source lines that executed most, each instruction counted at the
line whose JIT code it is in (inlined functions at their own lines), per task started (runs of the
program named *_running). --prog NAME: only the lines of the programs whose symbol ends in
_NAME (fdl_running: one callback's own code; its subprograms are programs of their own).
"""
import os
import argparse
import base64
import bisect
import collections
import gzip
import json


def read_profile(log, blocks_path, keep_blocks=None):
    """One profile: the symbols (address, name, is_bpf) sorted, their start addresses, the guest
    instructions and translated blocks executed per symbol index, the programs' stats (BPFPROG),
    the JIT line records, and the blocks keep_blocks(symbol) asks for (their plugin lines, split)."""
    bpf_syms, progs, ksyms_b64, jit_b64 = [], [], [], []
    for line in open(log, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("BPFSYM "):
            addr, _, name = line.split()[1:4]
            bpf_syms.append((int(addr, 16), name))
        elif line.startswith("BPFPROG "):
            progs.extend(json.loads(line[len("BPFPROG "):]))
        elif line.startswith("KSYMS "):
            ksyms_b64.append(line[len("KSYMS "):])
        elif line.startswith("JITLINES "):
            jit_b64.append(line[len("JITLINES "):])
    if not bpf_syms or not ksyms_b64:
        raise SystemExit(f"{log}: no BPFSYM or KSYMS lines (did the guest run with profile=1?)")
    syms = [(addr, name, True) for addr, name in bpf_syms]
    bpf_addrs = {addr for addr, _ in bpf_syms}
    for line in gzip.decompress(base64.b64decode("".join(ksyms_b64))).decode().splitlines():
        addr, _, name = line.split()[:3]
        # The BPF programs are BPFSYM lines; kallsyms listed while they are loaded has them too.
        if int(addr, 16) not in bpf_addrs and not line.endswith("[bpf]"):
            syms.append((int(addr, 16), name, False))
    syms.sort()
    starts = [s[0] for s in syms]
    insns = collections.Counter()
    execs_of = collections.Counter()  # translated blocks executed, per symbol
    blocks = []
    for line in open(blocks_path):
        vaddr, n, execs = line.split()[:3]
        i = bisect.bisect_right(starts, int(vaddr, 16)) - 1
        if i >= 0:
            insns[i] += int(n) * int(execs)
            execs_of[i] += int(execs)
            if keep_blocks and keep_blocks(syms[i]):
                blocks.append(line.split())
    return syms, starts, insns, execs_of, progs, jit_b64, blocks


def tasks_started(progs):
    """Tasks started: the runs of the program named *_running."""
    return sum(p.get("run_cnt", 0) for p in progs if p.get("name", "").endswith("_running"))


def steady(base, log, blocks_path, top):
    """What the steady state costs per task started, every kernel function and BPF program: the
    counts of this profile less those of a shorter run of the same scheduler (base: its console
    log and block counts), over the tasks started in between. Boot, load and the scenario's
    set-up cancel out, but for work that varies between boots (calibration loops, page clearing,
    console output): those rows are the two boots' difference, not the scheduler's."""
    def by_name(prof):
        syms, _, insns, execs, progs, _, _ = prof
        n, b = collections.Counter(), collections.Counter()
        for i, v in insns.items():
            name = syms[i][1]
            if syms[i][2]:
                parts = name.split("_", 3)
                name = "bpf:" + (parts[3] if len(parts) > 3 else name)
            n[name] += v
            b[name] += execs[i]
        return n, b, tasks_started(progs)
    n0, b0, s0 = by_name(read_profile(*base))
    n1, b1, s1 = by_name(read_profile(log, blocks_path))
    if s1 <= s0:
        raise SystemExit(f"--base: the longer run started {s1} tasks, the base {s0}: nothing to difference")
    d = s1 - s0
    dn = {k: (n1[k] - n0.get(k, 0)) / d for k in set(n1) | set(n0)}
    db = {k: (b1[k] - b0.get(k, 0)) / d for k in set(b1) | set(b0)}
    bpf = [k for k in dn if k.startswith("bpf:")]
    print(f"Steady state: {d} tasks started between the base run ({s0}) and this one ({s1})")
    print(f"per task started, all kernel code: {sum(dn.values()):.0f} instructions, {sum(db.values()):.0f} blocks;"
          f" of them BPF code: {sum(dn[k] for k in bpf):.0f} instructions, {sum(db[k] for k in bpf):.0f} blocks")
    print(f"{'function (bpf: a program of the scheduler)':48} {'insns/start':>12} {'blocks/start':>13}")
    for k in sorted(dn, key=lambda k: -db[k])[:top]:
        print(f"{k[:48]:48} {dn[k]:12.1f} {db[k]:13.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("blocks")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--lines", action="store_true", help="counts per BPF source line")
    ap.add_argument("--prog", help="with --lines: only the programs whose symbol ends in _PROG")
    ap.add_argument("--base", nargs=2, metavar=("LOG", "BLOCKS"),
                    help="a shorter run of the same scheduler: print the steady state's cost per task started instead")
    a = ap.parse_args()
    if a.base:
        steady(a.base, a.log, a.blocks, a.top)
        return
    keep = (lambda sym: sym[2] and (not a.prog or sym[1].endswith("_" + a.prog))) if a.lines else None
    syms, starts, insns, execs_of, progs, jit_b64, blocks = read_profile(a.log, a.blocks, keep)
    # bpf_prog_<tag>_<name>: a program's run count by its tag.
    runs = {p["tag"]: p.get("run_cnt", 0) for p in progs if "tag" in p}
    print("BPF code (own instructions, without the kernel functions it calls; blocks: the emulator's")
    print("translated blocks executed, which its time follows more than the instructions)")
    print(f"{'symbol':48} {'runs':>9} {'instructions':>14} {'per run':>9} {'blocks/run':>10}")
    rows = [(syms[i][1], n, execs_of[i]) for i, n in insns.items() if syms[i][2]]
    for name, n, b in sorted(rows, key=lambda r: -r[1]):
        parts = name.split("_", 3)
        tag = parts[2] if len(parts) > 3 and parts[0] == "bpf" else ""
        r = runs.get(tag, 0)
        per = f"{n / r:9.0f}" if r else f"{'-':>9}"
        bper = f"{b / r:10.1f}" if r else f"{'-':>10}"
        print(f"{name[:48]:48} {r:9d} {n:14d} {per} {bper}")
    started = tasks_started(progs)
    if started:
        print(f"all BPF code: {sum(r[1] for r in rows) / started:.0f} instructions and "
              f"{sum(r[2] for r in rows) / started:.0f} blocks per task started ({started} started)")
    if a.lines:
        by_line = line_counts(jit_b64, blocks, syms, starts)
        total = sum(by_line.values())
        print()
        print(f"BPF source lines{' of ' + a.prog if a.prog else ''}, top {a.top} of {total} instructions"
              f" ({total / started:.0f} per task started, {started} started)" if started else "")
        print(f"{'line':28} {'instructions':>12} {'/started':>9}  source")
        for (f, ln), n in by_line.most_common(a.top):
            per = f"{n / started:9.1f}" if started else f"{'-':>9}"
            print(f"{f + ':' + str(ln):28} {n:12d} {per}  {source_line(f, ln)}")
    print()
    print(f"Kernel functions, top {a.top} by instructions over the whole boot")
    rows = [(syms[i][1], n) for i, n in insns.items() if not syms[i][2]]
    for name, n in sorted(rows, key=lambda r: -r[1])[:a.top]:
        print(f"{name[:48]:48} {n:14d}")


def line_counts(jit_b64, blocks, syms, starts):
    """Instructions per (file, line): each executed instruction of BPF code at the line record
    (address, file, line) at or before its address within the same program."""
    if not jit_b64:
        raise SystemExit("--lines: no JITLINES in the log (jit_lines did not run in the guest)")
    recs = []
    for line in gzip.decompress(base64.b64decode("".join(jit_b64))).decode().splitlines():
        addr, f, ln = line.split()
        recs.append((int(addr, 16), f, int(ln)))
    recs.sort()
    raddr = [r[0] for r in recs]
    out = collections.Counter()
    for b in blocks:
        if len(b) < 4:
            raise SystemExit("--lines: the block counts have no offsets (plugin without offsets=1)")
        base, execs = int(b[0], 16), int(b[2])
        for off in b[3].split(","):
            addr = base + int(off)
            j = bisect.bisect_right(raddr, addr) - 1
            k = bisect.bisect_right(starts, addr) - 1
            # The record must lie in the same symbol (program) as the instruction.
            if j >= 0 and k >= 0 and syms[k][2] and recs[j][0] >= syms[k][0]:
                out[(recs[j][1], recs[j][2])] += execs
            else:
                out[("?", 0)] += execs
    return out


_sources = {}


def source_line(f, ln):
    """Line ln of BPF source file f (base name) from this checkout's scheduler/bpf, stripped."""
    if f not in _sources:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scheduler", "bpf")
        _sources[f] = []
        for d, _, files in os.walk(root):
            if f in files:
                _sources[f] = open(os.path.join(d, f), errors="replace").read().splitlines()
                break
    lines = _sources[f]
    return lines[ln - 1].strip()[:70] if 0 < ln <= len(lines) else ""


if __name__ == "__main__":
    main()
