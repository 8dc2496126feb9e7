#!/usr/bin/env python3
"""Reads bench/insn-profile.sh's console log (BPFSYM, BPFPROG and KSYMS lines) and the plugin's
block counts ("vaddr n_insns executions"), and prints per BPF program its runs and the guest
instructions executed in its own code per run, then the kernel functions that executed most.

    python3 bench/insn-profile.py CONSOLE_LOG BLOCKS [--top N]

A program's own code excludes what it calls in the kernel (helpers, kfuncs: those are in the
kernel's table, summed over the whole boot) and its BPF subprograms and timer callbacks, listed
beside it under their own names (a subprogram has no run count of its own).
"""
import argparse
import base64
import bisect
import collections
import gzip
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("blocks")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    bpf_syms, progs, ksyms_b64 = [], [], []
    for line in open(a.log, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("BPFSYM "):
            addr, _, name = line.split()[1:4]
            bpf_syms.append((int(addr, 16), name))
        elif line.startswith("BPFPROG "):
            progs.extend(json.loads(line[len("BPFPROG "):]))
        elif line.startswith("KSYMS "):
            ksyms_b64.append(line[len("KSYMS "):])
    if not bpf_syms or not ksyms_b64:
        raise SystemExit(f"{a.log}: no BPFSYM or KSYMS lines (did the guest run with profile=1?)")
    syms = [(addr, name, True) for addr, name in bpf_syms]
    for line in gzip.decompress(base64.b64decode("".join(ksyms_b64))).decode().splitlines():
        addr, _, name = line.split()[:3]
        syms.append((int(addr, 16), name, False))
    syms.sort()
    starts = [s[0] for s in syms]
    insns = collections.Counter()
    for line in open(a.blocks):
        vaddr, n, execs = line.split()
        i = bisect.bisect_right(starts, int(vaddr, 16)) - 1
        if i >= 0:
            insns[i] += int(n) * int(execs)
    # bpf_prog_<tag>_<name>: a program's run count by its tag.
    runs = {p["tag"]: p.get("run_cnt", 0) for p in progs if "tag" in p}
    print("BPF code (own instructions, without the kernel functions it calls)")
    print(f"{'symbol':48} {'runs':>9} {'instructions':>14} {'per run':>9}")
    rows = [(syms[i][1], n) for i, n in insns.items() if syms[i][2]]
    for name, n in sorted(rows, key=lambda r: -r[1]):
        parts = name.split("_", 3)
        tag = parts[2] if len(parts) > 3 and parts[0] == "bpf" else ""
        r = runs.get(tag, 0)
        per = f"{n / r:9.0f}" if r else f"{'-':>9}"
        print(f"{name[:48]:48} {r:9d} {n:14d} {per}")
    print()
    print(f"Kernel functions, top {a.top} by instructions over the whole boot")
    rows = [(syms[i][1], n) for i, n in insns.items() if not syms[i][2]]
    for name, n in sorted(rows, key=lambda r: -r[1])[:a.top]:
        print(f"{name[:48]:48} {n:14d}")


if __name__ == "__main__":
    main()
