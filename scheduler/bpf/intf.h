/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF hot path and the Rust control plane both know. bindgen turns this file into Rust
 * (bpf_intf.rs); nothing here is declared a second time on either side.
 */
#ifndef __FDL_INTF_H
#define __FDL_INTF_H

#ifndef __VMLINUX_H__
/* Outside BPF (bindgen, native unit tests) the kernel's integer names come from here. */
typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
#endif

enum fdl_consts {
	/* Cgroups tracked at once; cgroups beyond it are scheduled as their nearest tracked ancestor. */
	FDL_MAX_CGROUPS		= 65536,
	/* Deepest cgroup level whose weight is honoured; deeper levels share their ancestor's. */
	FDL_MAX_DEPTH		= 16,
	/* cpu.weight of a cgroup by default, and p->scx.weight of a nice-0 task. */
	FDL_WEIGHT_DFL		= 100,
	/*
	 * Run-queue latency histogram (wake-up or queueing to running): bucket 0 counts waits
	 * under 1 us, bucket i waits in [2^(i-1), 2^i) us, the last bucket everything longer.
	 */
	FDL_LAT_BUCKETS		= 24,
};

/* How a task reached a CPU: the dispatch paths, counted per CPU in fdl_cpu_stats. */
enum fdl_dispatch_path {
	FDL_DISPATCH_IDLE	= 0,	/* select_cpu: straight to an idle CPU's local queue */
	FDL_DISPATCH_PREV	= 1,	/* dispatch: the previous task keeps its CPU */
	FDL_DISPATCH_DEADLINE	= 2,	/* dispatch: from the deadline queue */
	FDL_DISPATCH_FAIR	= 3,	/* dispatch: from the fair queue */
	FDL_NR_DISPATCH		= 4,
};

/* Dispatch queues (user DSQ ids). */
enum fdl_dsq {
	/* Runnable tasks in weighted virtual time order. */
	FDL_DSQ_FAIR		= 0,
	/* Test-only: where --test-stall-pid sends its victim. Never consumed. */
	FDL_DSQ_STALL		= 1,
	/* Runnable tasks of deadline containers, in deadline order. */
	FDL_DSQ_DEADLINE	= 2,
};

/*
 * FDL parameters of a first-level cgroup (a "deadline container"), written by the control plane
 * into the `params` map (key: cgroup id), read by the BPF side. A cgroup without an entry is fair.
 */
struct fdl_params {
	u64 deadline_rr_ns;	/* round-robin latency; 0: fair */
	u64 deadline_wakeup_ns;	/* latency right after a wake-up; 0: deadline_rr_ns */
	u64 generation;	/* changes with every write: the container starts a new bucket */
};

/*
 * Per-cgroup state, keyed by cgroup id in the `cgroups` map. A cgroup is active while it has a
 * runnable task in its subtree; only active cgroups take a part of their parent's share.
 */
struct fdl_cgroup {
	u64 parent_cgid;	/* 0 for the root */
	u32 level;		/* depth below the root cgroup */
	u32 weight;		/* effective weight: boost_weight if set, else cpu_weight */
	u32 cpu_weight;		/* cpu.weight, 1..10000 */
	u32 boost_weight;	/* set by the guaranteed_shares control loop; 0: none */
	u32 __pad;
	s64 wsum;		/* weights of runnable own tasks + contributions of active children */
	s64 nr_active;		/* runnable own tasks + active children */
	s64 contrib;		/* weight this cgroup adds to its parent's wsum (0 while inactive) */
	u64 usage_ns;		/* CPU time used by this cgroup's own tasks under scx_fdl */
	u64 wait_ns;		/* time its own tasks spent runnable but not running */
	u64 top_cgid;		/* its first-level ancestor (itself at level 1; 0 for the root) */
	u64 dl;			/* deadline container: bucket deadline, in vdt */
	u64 dl_gen;		/* deadline container: the fdl_params.generation dl was started under */
	u64 nr_misses;		/* deadline container: dispatches past the deadline */
	u64 max_lateness_ns;	/* deadline container: worst lateness seen */
	u64 runq_lat[FDL_LAT_BUCKETS];	/* own tasks' run-queue latencies, by fdl_lat_bucket() */
};

/*
 * Argument of the fdl_set_boost syscall program: the control plane's effective weight for a
 * cgroup that has a bandwidth guarantee (0: back to its cpu.weight).
 */
struct fdl_boost_args {
	u64 cgid;
	u32 weight;
	s32 ret;		/* out: 0, or -ENOENT if the cgroup is not tracked */
};

/*
 * Scheduler-wide event counters of one CPU (the `cpu_stats` per-CPU array): each CPU counts its
 * own events without atomics; the loader sums them. Monotonic, never reset.
 */
struct fdl_cpu_stats {
	u64 nr_dispatched[FDL_NR_DISPATCH];	/* by enum fdl_dispatch_path */
	u64 nr_deadline_enqueued;	/* tasks queued on FDL_DSQ_DEADLINE */
	u64 nr_fair_enqueued;	/* tasks queued on FDL_DSQ_FAIR */
	u64 nr_idle_kicks;	/* idle CPUs kicked to pick up queued work */
	u64 nr_preempt_kicks;	/* CPUs kicked so that an earlier deadline runs */
	u64 nr_starvation_clamps;	/* enqueues whose vtime the starvation bound pulled in */
	u64 nr_migrations;	/* tasks that started running on another CPU than last time */
	u64 nr_became_runnable;	/* runnable tasks: became_runnable - stopped_runnable, summed */
	u64 nr_stopped_runnable;	/* over all CPUs (a task may start and stop on different ones) */
};

/* Rare scheduler-wide events (bss), read by the loader. */
struct fdl_counters {
	u64 nr_cgroups_untracked;	/* cgroups that did not fit in the cgroups map */
	u64 nr_fair_misses;	/* the fair container's deadline passed before it ran */
	u64 fair_max_lateness_ns;	/* its worst lateness */
};

#endif /* __FDL_INTF_H */
