"""Scenario files: what runs where, read from TOML and checked completely before anything runs.

Every error names the file, the line (when the key can be found) and the field, and says what is
wrong, e.g. `fdl-vm.toml:14: [cgroup.fdl] deadline_wakeup: "5 ms" is not a duration (...)`.
"""

import re
import tomllib
from dataclasses import dataclass, field

WORKLOAD_KINDS = ("probe", "hackbench", "stress-ng", "hogs")
TOP_KEYS = {"description", "vcpus", "numa", "mem_mb", "duration", "warmup", "settle", "repeat", "variants",
            "start_timeout", "fdl_params", "cgroups_after_start", "cgroup", "workload"}
# How scx_fdl gets the FDL parameters: its --config file, or `scx_fdl set` once it is enabled.
FDL_PARAMS = ("config", "set")
# scx_fdl reads cgroups created after it started within a second; the guest waits this long for it.
RESCAN_WAIT_S = 2
CGROUP_KEYS = {"cpu_weight", "weight_without_fdl", "deadline_rr", "deadline_wakeup", "guaranteed_shares"}
WORKLOAD_KEYS = {
    "probe": {"kind", "cgroup", "name", "variants", "cpus", "message_threads", "workers", "sleep", "jitter",
              "spin"},
    "hackbench": {"kind", "cgroup", "name", "variants", "cpus", "args"},
    "stress-ng": {"kind", "cgroup", "name", "variants", "cpus", "args"},
    "hogs": {"kind", "cgroup", "name", "variants", "cpus", "count"},
}
# A workload's CPUs (`cpus`, taskset's list: "1", "0,2", "0-3"): its threads may run there only,
# as a pod's under the kubelet's static CPU manager (cpuset.cpus) or a process that set its own
# affinity. Both reach the scheduler the same way: the task's allowed CPUs.
CPU_LIST_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
# Names end up in cgroup paths, shell words and file names in the guest: keep them plain.
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
VARIANT_RE = re.compile(r"^[a-z][a-z0-9_]*$")
ARGS_RE = re.compile(r"^[A-Za-z0-9 ._=,:+-]*$")
DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|m)\s*$")
# What scx_fdl's config and `set` accept (scheduler/src/config.rs parse_duration): a whole number and a unit.
FDL_DURATION_RE = re.compile(r"^\d+(ns|us|ms|s)$")
UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000}


class ScenarioError(Exception):
    pass


@dataclass
class Cgroup:
    name: str
    cpu_weight: int = 100
    # cpu.weight under schedulers that do not read FDL parameters (EEVDF and the peers): the
    # nearest thing they understand to guaranteed_shares. Defaults to cpu_weight.
    weight_without_fdl: int = 100
    deadline_rr: str | None = None
    deadline_wakeup: str | None = None
    guaranteed_shares: int | None = None

    def has_fdl(self):
        return self.deadline_rr is not None or self.guaranteed_shares is not None


@dataclass
class Workload:
    kind: str
    cgroup: str
    name: str
    variants: list
    message_threads: int = 2
    workers: int = 16
    sleep_us: int = 30_000
    jitter_us: int = 0
    spin_us: int = 30_000
    args: str = ""
    count: int = 1
    # Its allowed CPUs (taskset -c), or "" for all of them.
    cpus: str = ""


@dataclass
class Scenario:
    path: str
    name: str
    description: str
    vcpus: int
    mem_mb: int
    duration_s: int
    warmup_s: int
    settle_s: int
    repeat: int
    start_timeout_s: int
    variants: list
    # NUMA nodes of the VM (vm/run.sh --numa: two sockets, each its own LLC, per node).
    numa: int = 1
    fdl_params: str = "config"
    cgroups_after_start: bool = False
    cgroups: dict = field(default_factory=dict)
    workloads: list = field(default_factory=list)

    def workloads_in(self, variant):
        return [w for w in self.workloads if variant in w.variants]

    def fdl_cgroups(self):
        return [c for c in self.cgroups.values() if c.has_fdl()]

    def fdl_set_args(self):
        """[(cgroup, ["key=value", ...])]: the `scx_fdl set` of every cgroup with FDL parameters,
        only the keys it has, durations spelled as in the config."""
        out = []
        for c in self.fdl_cgroups():
            kv = [f"{k}={getattr(c, k)}" for k in ("deadline_rr", "deadline_wakeup", "guaranteed_shares")
                  if getattr(c, k) is not None]
            out.append((c.name, kv))
        return out

    def fdl_config(self):
        """scx_fdl's --config TOML for the cgroups that carry FDL parameters."""
        out = []
        for c in self.cgroups.values():
            if not c.has_fdl():
                continue
            out.append(f"[cgroup.{c.name}]")
            if c.deadline_rr is not None:
                out.append(f'deadline_rr = "{c.deadline_rr}"')
            if c.deadline_wakeup is not None:
                out.append(f'deadline_wakeup = "{c.deadline_wakeup}"')
            if c.guaranteed_shares is not None:
                out.append(f"guaranteed_shares = {c.guaranteed_shares}")
            out.append("")
        return "\n".join(out)


def duration_ns(text):
    m = DURATION_RE.match(text) if isinstance(text, str) else None
    if not m:
        return None
    return int(float(m.group(1)) * UNIT_NS[m.group(2)])


class _Reader:
    """Finds the line of a key for error messages: tomllib keeps no positions."""

    def __init__(self, path, text):
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, table, key, index=None):
        """Line (1-based) of `key` in `[table]` (top level if None) or in the `index`-th
        `[[table]]`; else the table's header line; else None."""
        current, seen, header = None, -1, None
        for n, line in enumerate(self.lines, 1):
            s = line.split("#", 1)[0].strip()
            if s.startswith("["):
                current = s.strip("[] ").replace('"', "")
                if s.startswith("[[") and current == table:
                    seen += 1
                if current == table and (index is None or seen == index) and header is None:
                    header = n
                continue
            here = current == table and (index is None or seen == index)
            if here and key and re.match(rf"^{re.escape(key)}\s*=", s):
                return n
        return header

    def error(self, where, msg, table=None, key=None, index=None):
        line = self.line_of(table, key, index)
        loc = f"{self.path}:{line}" if line else self.path
        raise ScenarioError(f"{loc}: {where}: {msg}")


def _int(r, where, value, lo, hi, table=None, key=None, index=None):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        r.error(where, f"{value!r} is not a whole number in {lo}..{hi}", table, key, index)
    return value


def _duration(r, where, value, lo_ns, hi_ns, table=None, key=None, index=None):
    ns = duration_ns(value)
    if ns is None:
        r.error(where, f'{value!r} is not a duration (write e.g. "500us", "5ms", "20s")', table, key, index)
    if not lo_ns <= ns <= hi_ns:
        r.error(where, f"{value} is out of range ({lo_ns / 1e9:g} s to {hi_ns / 1e9:g} s)", table, key, index)
    return ns


def _cpu_list(r, where, value, vcpus, table=None, key=None, index=None):
    """A CPU list as taskset -c takes it, each CPU below vcpus; returned as written."""
    if not isinstance(value, str) or not CPU_LIST_RE.match(value):
        r.error(where, f'{value!r} is not a CPU list (write e.g. "1", "0,2" or "0-3")', table, key, index)
    for part, lo, hi in _cpu_ranges(value):
        if lo > hi:
            r.error(where, f"{part}: a range runs from the lower CPU to the higher", table, key, index)
        if hi >= vcpus:
            r.error(where, f"CPU {hi} does not exist: the VM has {vcpus} vCPUs (0-{vcpus - 1})", table, key, index)
    return value


def _cpu_ranges(value):
    """(part, first CPU, last CPU) of each comma-separated part of a CPU list ("0-1,3")."""
    for part in filter(None, value.split(",")):
        lo, _, hi = part.partition("-")
        yield part, int(lo), int(hi or lo)


def cpu_set(value):
    """The CPUs of a list _cpu_list accepted ("0-1,3" -> {0, 1, 3}); empty for "" (a workload
    without a binding, which may run on every CPU)."""
    return {c for _, lo, hi in _cpu_ranges(value) for c in range(lo, hi + 1)}


def _unknown(r, where, got, allowed, table=None, index=None):
    for k in got:
        if k not in allowed:
            r.error(f"{where}{k}", f"unknown key (known: {', '.join(sorted(allowed))})", table, k, index)


def load(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None
    return parse(path, doc, text)


def parse(path, doc, text):
    r = _Reader(path, text)
    name = re.sub(r"\.toml$", "", path.rsplit("/", 1)[-1])
    _unknown(r, "", doc, TOP_KEYS)
    for k in ("cgroup", "workload"):
        if k not in doc:
            r.error(k, f"missing: a scenario needs [{k}...] tables" if k == "cgroup" else
                    "missing: a scenario needs at least one [[workload]]")

    def top_int(key, default, lo, hi):
        return _int(r, key, doc.get(key, default), lo, hi, key=key)

    def top_dur(key, default, lo, hi):
        return _duration(r, key, doc.get(key, default), lo, hi, key=key) // 1_000_000_000

    variants = doc.get("variants", ["default"])
    if not isinstance(variants, list) or not variants or not all(isinstance(v, str) for v in variants):
        r.error("variants", "want a non-empty list of names, e.g. [\"antagonist\", \"quiet\"]", key="variants")
    for v in variants:
        if not VARIANT_RE.match(v):
            r.error("variants", f"{v!r}: a variant name is lower-case letters, digits and _", key="variants")
    if len(set(variants)) != len(variants):
        r.error("variants", "a name appears twice", key="variants")

    sc = Scenario(
        path=path, name=name, description=str(doc.get("description", "")),
        vcpus=top_int("vcpus", 2, 1, 1024), mem_mb=top_int("mem_mb", 1024, 256, 1 << 20),
        duration_s=top_dur("duration", "20s", 1_000_000_000, 3600_000_000_000),
        warmup_s=top_dur("warmup", "3s", 0, 600_000_000_000),
        settle_s=top_dur("settle", "2s", 0, 600_000_000_000),
        repeat=top_int("repeat", 3, 1, 100),
        start_timeout_s=top_dur("start_timeout", "180s", 1_000_000_000, 3600_000_000_000),
        variants=variants,
        numa=top_int("numa", 1, 1, 64),
    )
    if sc.numa > 1 and sc.vcpus % (2 * sc.numa):
        r.error("numa", f"vcpus ({sc.vcpus}) must be a multiple of twice numa ({sc.numa}): two sockets per node",
                key="numa")
    sc.fdl_params = doc.get("fdl_params", "config")
    if sc.fdl_params not in FDL_PARAMS:
        r.error("fdl_params", f"{sc.fdl_params!r}: want \"config\" (scx_fdl --config) or \"set\" "
                "(scx_fdl set once it is enabled)", key="fdl_params")
    sc.cgroups_after_start = doc.get("cgroups_after_start", False)
    if not isinstance(sc.cgroups_after_start, bool):
        r.error("cgroups_after_start", f"{sc.cgroups_after_start!r}: want true or false",
                key="cgroups_after_start")

    cgroups = doc["cgroup"]
    if not isinstance(cgroups, dict) or not cgroups:
        r.error("cgroup", "want tables [cgroup.NAME]", key="cgroup")
    for cname, c in cgroups.items():
        t = f"cgroup.{cname}"
        where = f"[{t}] "
        if not NAME_RE.match(cname):
            r.error(f"[{t}]", "a cgroup name is letters, digits, _ . - (one level, no /)", t)
        if not isinstance(c, dict):
            r.error(f"[{t}]", "want a table", t)
        _unknown(r, where, c, CGROUP_KEYS, t)
        cg = Cgroup(name=cname)
        cg.cpu_weight = _int(r, where + "cpu_weight", c.get("cpu_weight", 100), 1, 10000, t, "cpu_weight")
        cg.weight_without_fdl = _int(r, where + "weight_without_fdl", c.get("weight_without_fdl", cg.cpu_weight),
                                     1, 10000, t, "weight_without_fdl")
        for key in ("deadline_rr", "deadline_wakeup"):
            if key in c:
                _duration(r, where + key, c[key], 50_000, 1_000_000_000, t, key)
                if not FDL_DURATION_RE.match(c[key]):
                    r.error(where + key, f"{c[key]!r} is not how scx_fdl spells a duration: a whole number and "
                            'ns, us, ms or s, no space (e.g. "2500us")', t, key)
                setattr(cg, key, c[key])
        if cg.deadline_wakeup is not None and cg.deadline_rr is None:
            r.error(where + "deadline_wakeup", "set but deadline_rr is not (a wake-up deadline needs deadline_rr)",
                    t, "deadline_wakeup")
        if cg.deadline_wakeup is not None and duration_ns(cg.deadline_wakeup) > duration_ns(cg.deadline_rr):
            r.error(where + "deadline_wakeup", f"{cg.deadline_wakeup} is longer than deadline_rr {cg.deadline_rr}",
                    t, "deadline_wakeup")
        if "guaranteed_shares" in c:
            cg.guaranteed_shares = _int(r, where + "guaranteed_shares", c["guaranteed_shares"], 1, 1 << 20,
                                        t, "guaranteed_shares")
        sc.cgroups[cname] = cg

    workloads = doc["workload"]
    if not isinstance(workloads, list) or not workloads:
        r.error("workload", "want [[workload]] tables", key="workload")
    names = set()
    for i, w in enumerate(workloads):
        t = "workload"
        kind = w.get("kind")
        where = f"[[workload]] #{i + 1} "
        if kind not in WORKLOAD_KINDS:
            r.error(where + "kind", f"{kind!r}: want one of {', '.join(WORKLOAD_KINDS)}", t, "kind", i)
        _unknown(r, where, w, WORKLOAD_KEYS[kind], t, i)
        cg = w.get("cgroup")
        if cg not in sc.cgroups:
            r.error(where + "cgroup", f"{cg!r} is not one of the scenario's [cgroup.*] "
                    f"({', '.join(sc.cgroups)})", t, "cgroup", i)
        wname = w.get("name", cg if kind == "probe" else f"{cg}-{kind}")
        if not isinstance(wname, str) or not NAME_RE.match(wname):
            r.error(where + "name", f"{wname!r}: letters, digits, _ . -", t, "name", i)
        if wname in names:
            r.error(where + "name", f"{wname!r} is used by another workload: give each a distinct name",
                    t, "name" if "name" in w else "cgroup", i)
        names.add(wname)
        wv = w.get("variants", variants)
        if not isinstance(wv, list) or not all(v in variants for v in wv):
            r.error(where + "variants", f"{wv!r}: every name must be one of the scenario's variants {variants}",
                    t, "variants", i)
        wl = Workload(kind=kind, cgroup=cg, name=wname, variants=wv)
        if "cpus" in w:
            wl.cpus = _cpu_list(r, where + "cpus", w["cpus"], sc.vcpus, t, "cpus", i)
        if kind == "probe":
            wl.message_threads = _int(r, where + "message_threads", w.get("message_threads", 2), 1, 1024, t,
                                      "message_threads", i)
            wl.workers = _int(r, where + "workers", w.get("workers", 16), 1, 1024, t, "workers", i)
            wl.sleep_us = _duration(r, where + "sleep", w.get("sleep", "30ms"), 1_000, 10_000_000_000,
                                    t, "sleep", i) // 1000
            wl.spin_us = _duration(r, where + "spin", w.get("spin", "30ms"), 1_000, 10_000_000_000,
                                   t, "spin", i) // 1000
            # Each sleep drawn within jitter either side (fdl-probe --sleep-jitter-us): probes of
            # one shape then do not keep the phase they drew at start for the whole run.
            wl.jitter_us = _duration(r, where + "jitter", w.get("jitter", "0us"), 0, 10_000_000_000,
                                     t, "jitter", i) // 1000
            if wl.jitter_us > wl.sleep_us:
                r.error(where + "jitter", f"{w.get('jitter')} is longer than sleep {w.get('sleep', '30ms')}",
                        t, "jitter", i)
        elif kind in ("hackbench", "stress-ng"):
            args = w.get("args")
            if not isinstance(args, str) or not args.strip():
                r.error(where + "args", f"missing: {kind} needs its command-line arguments", t, "args", i)
            if not ARGS_RE.match(args):
                r.error(where + "args", f"{args!r}: only letters, digits, spaces and . _ = , : + - are passed "
                        "to the guest shell", t, "args", i)
            wl.args = args
        else:
            wl.count = _int(r, where + "count", w.get("count", 1), 1, 4096, t, "count", i)
        sc.workloads.append(wl)
    for v in variants:
        if not sc.workloads_in(v):
            r.error("variants", f"variant {v!r} has no workload", key="variants")
    # Both keys change how scx_fdl gets FDL parameters: without any they would test nothing.
    if not sc.fdl_cgroups():
        if sc.fdl_params != "config":
            r.error("fdl_params", '"set" but no [cgroup.*] has FDL parameters (deadline_rr, '
                    "deadline_wakeup or guaranteed_shares): there is nothing to set", key="fdl_params")
        if sc.cgroups_after_start:
            r.error("cgroups_after_start", "true but no [cgroup.*] has FDL parameters: only those are "
                    "created after the scheduler starts", key="cgroups_after_start")
    return sc
