/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF hot path and the Rust control plane both know. bindgen turns this file into Rust
 * (bpf_intf.rs); nothing here is declared a second time on either side.
 *
 * Time units are in the names: `_ns` is wall-clock nanoseconds, `dl` is virtual deadline time
 * (vdt, nanoseconds moved back by misses: see policy/deadline.h), `vtime` is weighted virtual
 * time (fair order, see policy/fair.h). The three clocks never mix.
 */
#ifndef __FDL_INTF_H
#define __FDL_INTF_H

#ifndef __VMLINUX_H__
/* Outside BPF (bindgen, native unit tests) the kernel's integer names come from here. */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
#endif

enum fdl_consts {
	/*
	 * Cgroups tracked at once (the records' array; the loader sizes it from --max-cgroups, at
	 * most this); cgroups beyond it are scheduled as their nearest tracked ancestor.
	 */
	FDL_MAX_CGROUPS		= 65536,
	FDL_DFL_CGROUPS		= 8192,
	/*
	 * A cgroup's reference in the policy (a `cgref`): its record's slot in the cgroups array in
	 * bits 0 to FDL_CGREF_SLOT_BITS - 1, and above them the slot's generation, bumped each time
	 * the slot is given to another cgroup, so that a reference kept past its cgroup's exit finds
	 * no record (env_cgroup). References stay below 2^FDL_DOM_SHIFT (see FDL_CGREF_GEN_MASK).
	 */
	FDL_CGREF_SLOT_BITS	= 20,
	FDL_CGREF_SLOT_MASK	= (1 << FDL_CGREF_SLOT_BITS) - 1,
	/* Deepest cgroup level whose weight is honoured; deeper levels share their ancestor's. */
	FDL_MAX_DEPTH		= 16,
	/*
	 * The weight of a cgroup with cpu.idle = 1 (ops.cgroup_set_idle): the least cpu.weight. The
	 * kernel's is WEIGHT_IDLEPRIO, 3 of the 1024 of a nice-0 task, about cpu.weight 0.3: below
	 * the integer weights here, so an idle cgroup beside one at cpu.weight 100 gets 1/101 of the
	 * CPU it would get under EEVDF with 0.3/100.3.
	 */
	FDL_IDLE_WEIGHT		= 1,
	/* cpu.weight's default (CGROUP_WEIGHT_DFL): what a cgroup weighs once cpu.idle is 0 again. */
	FDL_CGROUP_WEIGHT_DFL	= 100,
	/*
	 * First-level cgroups with a queue of their own, which the dispatcher scans (deadline
	 * containers and fair cgroups alike); tasks of further first-level cgroups share the fair
	 * queue of the root cgroup's own tasks.
	 */
	FDL_MAX_CONTAINERS	= 64,
	/* CPUs the per-CPU tables are sized for. */
	FDL_MAX_CPUS		= 512,
	/*
	 * Queue domains (one per last-level cache): every queue is split into one DSQ per domain,
	 * whose id carries the domain in bits FDL_DOM_SHIFT and up (cgroup references stay below them).
	 */
	FDL_MAX_DOMS		= 64,
	FDL_DOM_SHIFT		= 48,
	/* cpu.weight of a cgroup by default, and p->scx.weight of a nice-0 task. */
	FDL_WEIGHT_DFL		= 100,
	/*
	 * Run-queue latency histogram (wake-up or queueing to running): bucket 0 counts waits
	 * under 1 us, bucket i waits in [2^(i-1), 2^i) us, the last bucket everything longer.
	 */
	FDL_LAT_BUCKETS		= 24,
};

/*
 * The generations a slot runs through before they repeat (2^28): the bits between the slot and
 * the domain bits, so that references stay below 2^FDL_DOM_SHIFT.
 */
#define FDL_CGREF_GEN_MASK	((1ULL << (FDL_DOM_SHIFT - FDL_CGREF_SLOT_BITS)) - 1)
/* A free slot's cgref: its last reference with this bit (0: never used). */
#define FDL_CGREF_FREE		(1ULL << 63)
/* The root cgroup's reference: slot 1, generation 0 (slot 0 is never used: 0 means none). */
#define FDL_ROOT_CGREF		1

/*
 * Where a CPU took queued work from, with several queue domains (counted per CPU in
 * fdl_cpu_stats, summed by domain by the loader).
 */
enum fdl_dom_take {
	FDL_DOM_OWN		= 0,	/* its own domain's DSQ */
	FDL_DOM_STEAL		= 1,	/* another domain's: its own had none of that queue's work */
	FDL_DOM_ORDER		= 2,	/* another domain's, whose head was a slice of vtime ahead */
	FDL_NR_DOM_TAKE		= 3,
};

/*
 * What fair work (cgroups without deadline_rr) keeps whatever the guarantees ask (--fair-protection),
 * besides its floor (fair_floor_permille).
 */
enum fdl_fair_protect {
	/*
	 * Its share at the deadline containers' cpu.weight: while it is runnable, guarantees that ask
	 * more than that share leaves are scaled into the rest (fdl_budget_scale).
	 */
	FDL_FAIR_PROTECT_WEIGHTED	= 0,
	/* Only what the granted guarantees leave: guarantees are never scaled. */
	FDL_FAIR_PROTECT_FLOOR		= 1,
};

/* How a task reached a CPU: the dispatch paths, counted per CPU in fdl_cpu_stats. */
enum fdl_dispatch_path {
	FDL_DISPATCH_IDLE	= 0,	/* select_cpu: straight to an idle CPU's local queue */
	FDL_DISPATCH_PREV	= 1,	/* dispatch: the previous task keeps its CPU */
	FDL_DISPATCH_DEADLINE	= 2,	/* dispatch: from a deadline container's queue */
	FDL_DISPATCH_FAIR	= 3,	/* dispatch: from the fair queue */
	FDL_NR_DISPATCH		= 4,
};

/*
 * Dispatch queues (user DSQ ids). A container's queue has its cgroup id as id; ours sit far
 * above any cgroup id. A queue is one DSQ per domain (fdl_dom_dsq): domain 0's DSQ id is the
 * queue's id itself.
 */
/* Runnable fair tasks (cgroups without deadline_rr), in weighted virtual time order. */
#define FDL_DSQ_FAIR		0x1000000000000000ULL
/* Test-only: where --test-stall-pid sends its victim. Never consumed. */
#define FDL_DSQ_STALL		0x1000000000000001ULL
/*
 * Tasks of throttled cgroups (cpu.max), in arrival order: never consumed; a cgroup's refill
 * moves them back to their own queues (policy/bandwidth.h).
 */
#define FDL_DSQ_HOLD		0x1000000000000002ULL

/*
 * A start of a deadline entity's work that came after its deadline (fdl_entity_count): how late,
 * its task (pid: the thread's id in the host's namespace, as /proc there names it; 0: a pick of
 * the fair container, no task), how long that task had waited, and whether it was a wake-up's
 * start (1) or a resumption (0). Which task was late, and whether the wait or the container's debt
 * made it so, is what a reader of the worst lateness asks next.
 */
struct fdl_late_start {
	u64 late_ns;
	u64 wait_ns;
	u32 pid;
	u32 woke;
};

/*
 * A deadline entity of the draining-buckets model: a deadline container, or all fair work taken
 * together (the fair container). Its bucket deadline dl fills as it runs; its members run in
 * vtime order among themselves.
 */
struct fdl_entity {
	u64 dl;			/* bucket deadline, in vdt */
	u64 deadline_rr_ns;	/* round-robin latency; 0: not a deadline container */
	u64 deadline_wakeup_ns;	/* latency right after it wakes; 0: deadline_rr_ns */
	u64 spread_gen;		/* the last deadline-spread halving applied to dl */
	u64 vtime_now;		/* its members' clock: the latest vtime one started with */
	s64 nr_runnable;	/* fair container: runnable fair tasks */
	/*
	 * A deadline container: times its work started on a CPU after waiting (a wake-up or a
	 * requeue), however it got the CPU (idle CPU, its deadline, the fair order, preemption), and
	 * how many of those starts came after its deadline, by how much at worst. The fair
	 * container: picks from the fair queue, and those after its deadline.
	 */
	u64 nr_misses;
	u64 nr_picks;
	/*
	 * The worst lateness since scx_fdl started, and its start (struct fdl_late_start). Written
	 * without a lock: two CPUs that find a new worst at the same moment may leave one's lateness
	 * beside the other's task (a report, not a decision).
	 */
	struct fdl_late_start max_late;
	/*
	 * A deadline container: of those starts, the first after a task became runnable (its
	 * wake-up's start, not a resumption after a preemption or a slice's end), and how many of
	 * them came after its deadline. Issue 10's rule counts misses per wake-up; the starts above
	 * also hold the resumptions of work that bursts past its guarantee, which EDF on two CPUs
	 * delays behind another container's earlier deadline by design.
	 */
	u64 nr_wake_starts;
	u64 nr_wake_misses;
	/*
	 * The misses by lateness, in fdl_lat_bucket()'s log2 microsecond buckets: a reader that
	 * differences two reads knows the worst lateness of the time between them (max_lateness_ns
	 * only knows the worst since scx_fdl started).
	 */
	u64 late_hist[FDL_LAT_BUCKETS];
	u64 late_sum_ns;	/* the misses' lateness summed */
	/*
	 * The worst lateness of the measurement window, and its start (as max_late): a window is
	 * fdl_state.late_window, begun by `scx_fdl dump --new-window` (fdl_new_window) for a time or
	 * until the next one, so that a benchmark reads the worst of its own measurement exactly: not
	 * the worst since scx_fdl started (its workload's start-up and exit included) nor a bucket's
	 * bound. win_gen: the window these figures are of (figures of an older window mean none in
	 * this one); the first miss of a window resets them.
	 */
	u64 win_gen;
	struct fdl_late_start win_late;
	/*
	 * A deadline container's granted guarantee as a budget (policy/deadline.h): CPU time earned
	 * at budget_rate (CPUs, fixed point FDL_SHARE_ONE; 0: no guarantee) since budget_at, spent by
	 * its work however it got the CPU, held within one guarantee window either way. While it is
	 * positive the container runs within its guarantee, ahead of all work that does not.
	 */
	s64 budget_ns;
	u64 budget_at;
	u64 budget_rate;
};

/*
 * A cgroup's CPU limit (cpu.max, cpu.max.burst) and its pool (policy/bandwidth.h): per period the
 * pool gains quota_ns, capped at quota_ns + burst_ns; the subtree's CPU time drains it; while it
 * is empty (runtime_ns <= 0) the subtree is throttled. The statistics use cpu.stat's names.
 */
struct fdl_bw {
	u64 quota_ns;		/* CPU time per period; 0: no limit */
	u64 period_ns;
	u64 burst_ns;		/* cpu.max.burst: unused quota a period may carry over */
	u64 buffer_ns;		/* the configuration's burst_buffer (may exceed the quota) */
	s64 runtime_ns;		/* left in the current period; an overrun is carried as debt */
	u64 period_start;	/* start of the current period, ns */
	u64 used_ns;		/* CPU time used in the current period */
	s64 pool_ns;		/* the pool the current period started with */
	u64 throttled_at;	/* when it was last throttled; 0: not throttled */
	u64 nr_periods;		/* periods counted as the kernel does (fdl_bw_counted_periods) */
	u64 last_active;	/* the last closed period had use */
	u64 nr_throttled;	/* periods in which it was throttled */
	/* time throttled, summed over the run queues it waits on (fdl_bw_throttled_time) */
	u64 throttled_ns;
	s64 nr_held;		/* tasks held now with this limit as their blocker */
	u64 held_at;		/* when nr_held last changed (throttled_ns is summed up to there) */
	u64 nr_bursts;		/* periods in which it used more than its quota */
	u64 burst_time_ns;	/* CPU time used beyond the quota in those periods */
};

/*
 * Per-cgroup state, in slot (cgref & FDL_CGREF_SLOT_MASK) of the `cgroups` array; the
 * `cgroup_refs` hash finds a kernel cgroup id's reference (off the hot path: cgroup callbacks,
 * the control plane). A cgroup is active while it has a runnable task in its subtree; only
 * active cgroups take a part of their parent's share.
 */
struct fdl_cgroup {
	/*
	 * Its own reference while tracked (env_cgroup finds the record only by it); a free slot's
	 * is the last one with FDL_CGREF_FREE, or 0 if the slot was never used. First: a slot's
	 * reset on exit clears everything after it.
	 */
	u64 cgref;
	u64 cgid;		/* the kernel's cgroup id (cgroup.kn->id, the directory's inode) */
	u64 parent_cgref;	/* 0 for the root */
	u32 level;		/* depth below the root cgroup */
	u32 weight;		/* effective weight: boost_weight if set, else FDL_IDLE_WEIGHT if idle,
				 * else cpu_weight */
	u32 cpu_weight;		/* cpu.weight, 1..10000 */
	u32 boost_weight;	/* set by the guaranteed_shares control loop; 0: none */
	s64 wsum;		/* weights of runnable own tasks + contributions of active children
				 * (the root's is fdl_state.root_wsum: this one stays 0) */
	s64 nr_active;		/* runnable own tasks + active children */
	s64 nr_running;		/* of a container: tasks of its queue on a CPU now (fdl_run_count) */
	s64 contrib;		/* weight this cgroup adds to its parent's wsum (0 while inactive) */
	/* Of its own tasks, and of removed descendants' (folded in at their cgroup_exit): */
	u64 usage_ns;		/* CPU time used under scx_fdl */
	u64 wait_ns;		/* time spent runnable but not running */
	u64 top_cgref;		/* its first-level ancestor (itself at level 1; 0 for the root) */
	/*
	 * A container: its queue (DSQ id = cgroup id) and dispatcher slot exist. Every first-level
	 * cgroup is one (while slots last), and a nested cgroup from its first deadlines on.
	 */
	u32 has_dsq;
	/*
	 * Summed: it has a guarantee, and the control plane reads its subtree's use from sub_usage_ns
	 * and sub_wait_ns (fdl_sum_charge) instead of walking the subtree.
	 */
	u32 summed;
	/* A container's index in fdl.containers + 1 (0: none): its bit in fdl.active_mask. */
	u32 cont_slot;
	u32 idle;		/* cpu.idle = 1: it weighs FDL_IDLE_WEIGHT (ops.cgroup_set_idle) */
	/* The container its tasks queue in (itself or its nearest, 0: the root's), cached: */
	u64 cont_cgref;
	u64 cont_gen;		/* fdl.cont_gen + 1 when cont_cgref was found (0: never) */
	u64 cvtime;		/* container: cgroup virtual time, its order in the fair order */
	struct fdl_entity ent;	/* container: its queue's clock; a deadline container if deadline_rr */
	u64 runq_lat[FDL_LAT_BUCKETS];	/* run-queue latencies, by fdl_lat_bucket() (same tasks) */
	struct fdl_bw bw;	/* its CPU limit; binds its whole subtree */
	/* Its nearest summed cgroup (itself or an ancestor; 0: none), cached like cont_cgref: */
	u64 sum_cgref;
	u64 sum_gen;		/* fdl.sum_gen + 1 when sum_cgref was found (0: never) */
	/*
	 * Summed: the CPU time used and waited by its subtree since it became summed, less what
	 * runs inside summed descendants (their sums are their own; the control plane adds them),
	 * with removed or unsummed descendants' folded in. Never goes down while it is summed.
	 */
	u64 sub_usage_ns;
	u64 sub_wait_ns;
	/*
	 * Container: wake credit it earned asleep beyond the one wakeup_lag_ns it woke with, held
	 * for its further tasks that wake while it is active (fdl_container_wake), in cgroup
	 * virtual time.
	 */
	u64 cv_reserve;
};

/* fdl_new_window: begins a new measurement window of the worst lateness (fdl_entity.win_*). */
struct fdl_window_args {
	u64 window_ns;		/* how long the window lasts (0: until the next one) */
	u64 window;		/* out: the window begun */
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
 * Argument of the fdl_set_summed syscall program: the control plane sums a guaranteed cgroup's
 * subtree use in BPF (on 1) or no longer (on 0).
 */
struct fdl_summed_args {
	u64 cgid;
	u32 on;
	s32 ret;		/* out: 0, or -ENOENT if the cgroup is not tracked */
};

/*
 * Argument of the fdl_set_params syscall program: a cgroup's deadlines (both 0: it becomes fair
 * work again).
 */
struct fdl_params_args {
	u64 cgid;
	u64 deadline_rr_ns;
	u64 deadline_wakeup_ns;
	u64 budget_rate;	/* its granted guarantee, CPUs in fixed point (1 << 20: one); 0: none */
	s32 ret;		/* out: 0; -ENOENT untracked, -EINVAL the root, -EEXIST inside a
				 * deadline cgroup, -ENOSPC no slot or queue left */
	u32 __pad;
};

/*
 * Argument of the fdl_set_buffer syscall program: a cgroup's burst buffer from the configuration
 * (burst_buffer): unused quota of its cpu.max it may carry over, beyond cpu.max.burst (0: none).
 */
struct fdl_buffer_args {
	u64 cgid;
	u64 buffer_ns;
	s32 ret;		/* out: 0, or -ENOENT if the cgroup is not tracked */
	u32 __pad;
};

/*
 * Scheduler-wide event counters of one CPU (the `cpu_stats` per-CPU array): each CPU counts its
 * own events without atomics; the loader sums them. Monotonic, never reset.
 */
struct fdl_cpu_stats {
	u64 nr_dispatched[FDL_NR_DISPATCH];	/* by enum fdl_dispatch_path */
	u64 nr_deadline_enqueued;	/* tasks queued on a deadline container's queue */
	u64 nr_fair_enqueued;	/* tasks queued on FDL_DSQ_FAIR */
	u64 nr_idle_kicks;	/* idle CPUs kicked to pick up queued work */
	u64 nr_preempt_kicks;	/* CPUs preempted so that an earlier deadline runs */
	u64 nr_starvation_clamps;	/* enqueues whose vtime the starvation bound pulled in */
	u64 nr_migrations;	/* tasks that started running on another CPU than last time */
	u64 nr_became_runnable;	/* runnable tasks: became_runnable - stopped_runnable, summed */
	u64 nr_stopped_runnable;	/* over all CPUs (a task may start and stop on different ones) */
	u64 nr_timer_kicks;	/* CPUs preempted by a deadline timer that fired inside a tick */
	u64 nr_timer_lapsed;	/* deadline timers that fired lapsed (fdl_timer_lapse): no kick */
	u64 nr_slice_timers;	/* deadline timers set to end a slice shorter than the default */
	u64 nr_crossing_timers;	/* deadline timers set where a CPU's earlier work comes after a waiting deadline */
	u64 nr_fair_preempts;	/* kicks of CPUs running CPU-bound fair work, for a fair task that woke */
	u64 nr_sibling_preempts;	/* CPUs taken from CPU-bound work of its own queue by a task that woke */
	u64 nr_tick_preempts;	/* slices ended at a tick because an earlier deadline waited */
	u64 nr_held;		/* tasks held back because a cgroup above them was throttled */
	u64 nr_released;	/* held tasks sent back to their queues by a refill */
	u64 nr_dispatch_empty;	/* dispatches that found nothing to run (the CPU goes idle) */
	u64 nr_dispatch_empty_queued;	/* of those, with a scanned queue still holding work (the scan's view) */
	u64 nr_dispatch_inflight;	/* of those, the work counted not in its queues yet: the CPU looks again (fdl_retry_in_flight) */
	u64 nr_prev_kept_untaken;	/* previous tasks kept: the work put first could not be taken here */
	u64 nr_skip_takes;	/* work taken by a scan past queues whose work may not run here (fdl_take_elsewhere) */
	u64 nr_fair_first;	/* dispatches that put the fair order first: it had waited a starvation bound (fdl_fair_first) */
	u64 nr_scan_strays;	/* queued work a full scan found outside the counts (fdl_scan_queued): 0 */
	u64 nr_dom_take[FDL_NR_DOM_TAKE];	/* by enum fdl_dom_take (several domains only) */
	u64 nr_interactive_wakeups;	/* wake-ups classified interactive (more wake credit than batch work) */
	u64 nr_idle_rechecks;	/* CPUs woken for work queued while they went idle (fdl_on_idle) */
	u64 nr_local_waits;	/* dispatches that left the queues to a task coming to the local queue */
	u64 nr_wake_queued;	/* wake-ups queued, not bound to an idle CPU already claimed (fdl_idle_free) */
	u64 nr_loans_returned;	/* CPUs given back to fair-order work a deadline took them from (fdl_loan_due) */
	u64 nr_preempts_deferred;	/* wake-ups that timed a preemption instead: the work was about to sleep (fdl_cpu_ends_soon) */
};

/* Rare scheduler-wide events, read by the loader. */
struct fdl_counters {
	u64 nr_cgroups_untracked;	/* cgroups that did not fit in the cgroups map */
	u64 nr_lag_steps;	/* deadline misses that moved virtual deadline time back */
	u64 nr_limited;		/* cgroups with a CPU limit (cpu.max) now */
	u64 nr_hold_failures;	/* throttled tasks queued anyway: no release timer could be armed */
};

/*
 * PELT sums and averages of one entity (fdl_math.h, fdl_pelt_*): a task, a queue domain, a CPU.
 * load_avg is in sched_ext weights (100: one nice-0 task always runnable); runnable_avg and
 * util_avg in FDL_PELT_SCALE (1024: always) per runnable task or running CPU.
 */
struct fdl_pelt {
	u64 last_update_ns;	/* the sums hold up to here (0: never updated) */
	u64 load_sum;
	u64 runnable_sum;
	u64 util_sum;
	u64 load_avg;
	u64 runnable_avg;
	u64 util_avg;
	u32 period_contrib;	/* us of the current 1024-us period already in the sums */
	u32 __pad;
};

enum fdl_lb_consts {
	FDL_PELT_SHIFT		= 10,	/* runnable_avg, util_avg: 1 << 10 is one task, one CPU */
	FDL_LB_ACTIVE		= 8,	/* tasks each CPU remembers as candidates to move, per period */
	FDL_LB_DOM_ACTIVE	= 32,	/* candidates fdl_read_loads gives per domain */
	FDL_LB_MAX_MOVES	= 16,	/* moves the balancer asks for at once */
};

/* A task that ran in a domain since the balancer's last period: a candidate to move. */
struct fdl_lb_task {
	s32 pid;
	u32 weight;
	u64 load_avg;		/* its PELT load when recorded */
	u64 deadline_rr_ns;	/* the deadline it started under then (0: as fair work): load_balance.rs */
};

/*
 * One CPU's load (policy/load.h): PELT over the summed weights and count of the tasks runnable on
 * it (a task counts on the CPU it woke for, then on the CPU it runs on) and over its busy time.
 * Written under the CPU's run-queue lock, which every callback about a task on it holds; a task
 * that leaves it for another CPU is taken out through removed_* (atomics), folded in at its next
 * update.
 */
struct fdl_cpu_load {
	struct fdl_pelt pelt;	/* load: weights; runnable: tasks; util: busy */
	u64 weight_sum;		/* weights of the tasks runnable on it now */
	u64 nr_runnable;	/* tasks runnable on it now */
	u64 removed_weight;	/* taken out by other CPUs, not folded in yet */
	u64 removed_nr;
	u32 running;		/* a task runs on it: util accumulates */
	u32 __pad;
	u64 lb_gen;		/* the balancer period its candidates are of */
	u64 nr_active;		/* candidates recorded in that period (the ring holds the last 8) */
	u64 nr_moved_in;	/* tasks the balancer moved to its domain that then ran here */
	struct fdl_lb_task active[FDL_LB_ACTIVE];
};

/* A queue domain's load, summed over its CPUs by fdl_read_loads. */
struct fdl_dom_load {
	struct fdl_pelt pelt;	/* the averages only: load, runnable, util of its CPUs, summed */
	u64 nr_active;		/* candidates below, of the current balancer period */
	u64 nr_moved_in;
	struct fdl_lb_task active[FDL_LB_DOM_ACTIVE];
};

/* fdl_read_loads (BPF_PROG_RUN): every domain's load, brought to now. */
struct fdl_loads_args {
	u64 now_ns;
	u32 nr_doms;
	u32 __pad;
	struct fdl_dom_load doms[FDL_MAX_DOMS];
};

/* One move the balancer asks for: task pid to domain dom, at its next enqueue. */
struct fdl_lb_move {
	s32 pid;
	u32 dom;
};

/* fdl_set_moves (BPF_PROG_RUN): the balancer's moves for this period (they replace the last). */
struct fdl_moves_args {
	u32 nr_moves;
	s32 ret;
	struct fdl_lb_move moves[FDL_LB_MAX_MOVES];
};

/* Tunables, set by the loader before load (read-only data). */
struct fdl_tunables {
	u64 slice_ns;		/* longest time slice */
	u64 min_slice_ns;	/* shortest slice a deadline competition cuts one to */
	u64 wakeup_lag_ns;	/* CPU time of vtime credit a waking task keeps */
	u64 starvation_ns;	/* bound on how long any runnable fair task waits */
	u64 fair_deadline_ns;	/* deadline_rr of the fair container */
	u64 fair_preempt_ns;	/* fair work runs this long before a fair waker may preempt it (0: never) */
	u64 slice_floor_ns;	/* the slice scaled by the waiters never goes below it (0: not scaled) */
	u64 sibling_preempt_ns;	/* work runs this long before a waker of its own queue may take its CPU (0: never) */
	u64 lazy_preempt_ns;	/* work expected to sleep within this long is not preempted at once (0: always is) */
	u64 guarantee_window_ns;	/* a guarantee's budget holds at most this much of it */
	/*
	 * The interactive classifier (policy/interactive.h): interactive work's wake credit beyond
	 * wakeup_lag_ns (0: no classification); the window a task's voluntary switches are counted
	 * over; the cap of a task's average, switches per second.
	 */
	u64 interactive_ns;
	u64 interactive_window_ns;
	u32 interactive_max_rate;
	/*
	 * What fair work is protected against the guarantees (FDL_FAIR_PROTECT_*): its share at the
	 * deadline containers' cpu.weight, or only what the granted guarantees leave.
	 */
	u32 fair_protect;
	u32 fair_floor_permille;	/* fair work's least bandwidth, per mille of the machine */
	/*
	 * The machine's capacity, in online CPUs: shares, bandwidths, slices and the starvation
	 * window are counted in them (a CPU hotplug restarts scx_fdl, which counts again). The
	 * possible CPUs, often many more on a virtual machine (240 possible of 8 online), are only
	 * the range of CPU ids the tables cover (nr_cpu_ids).
	 */
	u32 nr_cpus;
	u32 nr_cpu_ids;		/* possible CPUs: CPU ids run from 0 to nr_cpu_ids - 1 */
	s32 stall_pid;		/* test only: never dispatch this task (0: off) */
	u32 nr_doms;		/* queue domains (LLCs; 1: one queue per container for the machine) */
	u32 load_tracking;	/* PELT per task and CPU, and the balancer's moves (policy/load.h) */
	u32 max_cgroups;	/* slots of the cgroups array (slot 0 unused, slot 1 the root) */
	u32 __pad_cgroups;
	u8 cpu_dom[FDL_MAX_CPUS];	/* each CPU's domain */
	/* For each domain, every domain in the order its idle CPUs look for work: itself, then by distance. */
	u8 dom_order[FDL_MAX_DOMS][FDL_MAX_DOMS];
	s32 dom_node[FDL_MAX_DOMS];	/* each domain's NUMA node (where its DSQs are allocated) */
	u16 dom_cpu[FDL_MAX_DOMS];	/* a CPU of each domain (where a task moved there is queued) */
	u16 online_cpu[FDL_MAX_CPUS];	/* the online CPUs' ids, nr_cpus of them (victim candidates) */
};

#endif /* __FDL_INTF_H */
