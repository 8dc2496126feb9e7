#!/usr/bin/env python3
"""Where scx_fdl's start goes: the console log of bench/guest/load-trace.sh, per start, the time
in each bpf(2) command, each program's load (BPF_PROG_LOAD: the verifier and the JIT) by name,
and the time outside bpf(2) (scx_fdl's own work and its other system calls).

The programs are named by order: libbpf loads them in the order of the skeleton, which is the
order of scx_fdl's "instructions verified" line; the loads before them are libbpf's and
scx_utils' feature probes.

Usage: python3 bench/load-trace.py LOG
"""
import re
import sys

CMDS = {0: "MAP_CREATE", 1: "MAP_LOOKUP_ELEM", 2: "MAP_UPDATE_ELEM", 5: "PROG_LOAD",
        15: "OBJ_GET_INFO_BY_FD", 18: "BTF_LOAD", 28: "LINK_CREATE"}
EVENT = re.compile(r"-(\d+)\s+\[\d+\].*?\s(\d+\.\d+): sys_(bpf|openat)(.*)")


def parse(block):
    """(scx_fdl's "loaded in" line, [(name, instructions verified, load seconds)] of its
    programs, [load seconds] of the feature probes before them, {command: [calls, seconds]},
    the traced span in seconds, the seconds in bpf(2))."""
    loaded = next((l for l in block if "loaded in" in l), "")
    progs = re.findall(r"(\w+) (\d+)(?:,|$)", loaded.split("instructions verified:", 1)[-1])
    open_calls, loads, by_cmd = {}, [], {}
    first = last = None
    for line in block:
        m = EVENT.search(line)
        if not m:
            continue
        tid, t, call, rest = m.group(1), float(m.group(2)), m.group(3), m.group(4)
        first = t if first is None else first
        last = t
        if call != "bpf":
            continue
        if rest.startswith("("):
            open_calls[tid] = (t, int(re.search(r"cmd: (\d+)", rest).group(1)))
        elif tid in open_calls:
            start, cmd = open_calls.pop(tid)
            name = CMDS.get(cmd, str(cmd))
            entry = by_cmd.setdefault(name, [0, 0.0])
            entry[0] += 1
            entry[1] += t - start
            if cmd == 5:
                loads.append(t - start)
    named = list(zip([p for p, _ in progs], [int(n) for _, n in progs], loads[-len(progs):]))
    probes = loads[: len(loads) - len(progs)] if progs else loads
    in_bpf = sum(v[1] for v in by_cmd.values())
    return loaded, named, probes, by_cmd, (last - first) if first is not None else 0.0, in_bpf


def main():
    text = open(sys.argv[1], errors="replace").read().split("\n")
    blocks, cur = [], None
    for line in text:
        if line.startswith("LOAD-TRACE-BEGIN"):
            cur = []
        elif line.startswith("LOAD-TRACE-END"):
            blocks.append(cur)
            cur = None
        elif cur is not None:
            cur.append(line)
    if not blocks:
        sys.exit("no LOAD-TRACE blocks in " + sys.argv[1])
    for i, block in enumerate(blocks, 1):
        loaded, named, probes, by_cmd, span, in_bpf = parse(block)
        m = re.search(r"loaded in ([\d.]+) s", loaded)
        print(f"start {i}: scx_fdl's load {m.group(1) if m else '?'} s; traced span {span:.2f} s, "
              f"{in_bpf:.2f} s in bpf(2), {span - in_bpf:.2f} s outside it")
        for cmd, (n, secs) in sorted(by_cmd.items(), key=lambda kv: -kv[1][1]):
            print(f"  {cmd:20s} {n:4d} calls {secs:7.3f} s")
        print(f"  feature probes: {len(probes)} loads, {sum(probes):.3f} s")
        total_insns = sum(n for _, n, _ in named) or 1
        total_secs = sum(s for _, _, s in named) or 1e-9
        print(f"  {'program':26s} {'verified':>9s} {'share':>6s} {'load s':>7s} {'share':>6s} {'us/insn':>8s}")
        for name, insns, secs in sorted(named, key=lambda x: -x[2]):
            print(f"  {name:26s} {insns:9d} {insns / total_insns:6.1%} {secs:7.3f} "
                  f"{secs / total_secs:6.1%} {1e6 * secs / max(insns, 1):8.1f}")
        print(f"  {'all programs':26s} {total_insns:9d} {'':6s} {total_secs:7.3f}")


if __name__ == "__main__":
    main()
