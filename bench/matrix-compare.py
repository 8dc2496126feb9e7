#!/usr/bin/env python3
"""Puts matrix reports side by side: for every cell, load and cgroup, EEVDF's and scx_fdl's p99
(ms) in each report and their ratio, for cells measured on different builds or days.

    python3 bench/matrix-compare.py NAME=DIR/matrix.md NAME=DIR/matrix.md ...
"""
import sys


def p99s(path):
    """{(cell, load, cgroup): (EEVDF p99, scx_fdl p99)} from a matrix.md table (columns: cell,
    load, class, cgroup, deadline_rr, eevdf p50/p99, scx_fdl p50/p99, ...)."""
    out, cell, load = {}, None, None
    for line in open(path):
        if not line.startswith("|") or line.startswith("|---") or "deadline_rr" in line:
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) < 7:
            continue
        if c[0]:
            # A load measured again by --confirm is marked "quiet (1+2)": the same load.
            cell, load = c[0], c[1].split(" (")[0]
        try:
            out[(cell, load, c[3])] = (float(c[5].split("/")[1]), float(c[6].split("/")[1]))
        except (IndexError, ValueError):
            continue
    return out


def main():
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        sys.exit(__doc__)
    runs = [(a.split("=", 1)[0], p99s(a.split("=", 1)[1])) for a in sys.argv[1:]]
    keys = sorted(set().union(*(r.keys() for _, r in runs)))
    print("| cell | load | cgroup | " + " | ".join(f"{n}: EEVDF / scx_fdl p99 (ms)" for n, _ in runs) + " |")
    print("|---|---|---|" + "---|" * len(runs))
    for k in keys:
        cols = [f"{r[k][0]:.1f} / {r[k][1]:.1f} ({r[k][1] / r[k][0]:.2f}x)" if k in r else "-" for _, r in runs]
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()
