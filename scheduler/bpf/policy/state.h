/* SPDX-License-Identifier: GPL-2.0 */
/*
 * All of the policy's shared state: one struct fdl_state (`fdl`), the tunables (`tun`), and the
 * per-task record. The BPF program defines `fdl` in .bss and `tun` in read-only data; the native
 * tests define both themselves.
 */
#ifndef __FDL_POLICY_STATE_H
#define __FDL_POLICY_STATE_H

#include "../intf.h"
#include "../fdl_math.h"
#include "../env.h"

/*
 * A count of queued tasks, over all domains and per domain, on cache lines of its own (every
 * enqueue and start writes one): a machine of up to 12 domains has all of a queue's counts on
 * its first line.
 */
struct fdl_queued {
	s64 nr;
	u64 hidden_at;	/* a full scan found work this count did not show, then (0: not) */
	u32 hidden_dom;	/* in which domain's DSQ */
	/*
	 * With several domains: a bound at or below every waiter's key, for the queue's clock
	 * (fdl_queue_head_bound), good for head_lb_uses more starts of the queue's tasks (0: none).
	 */
	s32 head_lb_uses;
	u64 head_lb;
	/* Of nr, those queued in each domain (fdl_queued_doms); kept only with several domains. */
	struct fdl_dom_counts dom;
} __attribute__((aligned(64)));

struct fdl_state {
	/* Virtual deadline time is now - vdt_lag; a miss grows vdt_lag (compare-and-swap). */
	u64 vdt_lag;
	/* Deadline-spread halvings so far, and the vdt the latest one halved around. */
	u64 spread_gen;
	u64 spread_vdt;
	/*
	 * All fair work as one deadline entity (deadline_rr = tun.fair_deadline_ns); its vtime_now
	 * is the clock of FDL_DSQ_FAIR, the queue of the root cgroup's own tasks.
	 */
	struct fdl_entity fair;
	/*
	 * Fair cgroups are served in cgroup virtual time: cvtime_now is its clock (the least cvtime
	 * of a fair queue with work, never moving back), root_cvtime the root's own tasks' cvtime.
	 */
	u64 cvtime_now;
	u64 root_cvtime;
	/* When fdl_fair_clock_refresh last ran (the root's own tasks refresh at most once a slice). */
	u64 cvtime_refreshed_at;
	/*
	 * From the dispatcher's last scan of the deadline containers: their root weight (boosted
	 * and at cpu.weight) while active, the smallest deadline_rr, and the fair container's
	 * bandwidth (fdl_fair_bw, 0: no scan yet) at the root's weight sum as it was then: charges
	 * fill the fair bucket at it, where computed at every charge and start it was two divisions
	 * and a multiplication three times per task started. Written only on change.
	 */
	s64 dl_wsum;
	s64 dl_unboosted_wsum;
	u64 min_rr_ns;
	u64 fair_bw;
	s64 fair_bw_root_wsum;
	/*
	 * Fair work's protected bandwidth (fdl_fair_protected, 0: no scan yet), the rate of its
	 * budget and what the guarantees are scaled to leave it, with the weights it was computed
	 * from: the active fair weight, and the deadline containers' it is reckoned against (every
	 * first-level guaranteed container's, from the last full scan: guaranteed_wsum).
	 */
	u64 fair_prot;
	s64 fair_prot_wsum;
	s64 fair_prot_fair_wsum;
	s64 guaranteed_wsum;
	/*
	 * Every deadline container's granted guarantee (budget_rate, at any depth) together, from the
	 * last full scan (--fair-protection floor).
	 */
	u64 guaranteed_rate;
	/*
	 * The guarantees' scale (fdl_budget_scale; 0: none): below one while the active guarantees
	 * ask more than fair work's protected bandwidth leaves. From the dispatcher's last scan.
	 */
	u64 budget_scale;
	/*
	 * The root cgroup's wsum (fdl_cgroup.wsum), kept here and not in its record: read several
	 * times per task started (fdl_root_wsum), without a lookup (about 90 BPF instructions per
	 * task started in bench/insn-profile.sh's wake shape).
	 */
	s64 root_wsum;
	/*
	 * Bumped whenever a nested cgroup becomes a container: every cgroup's cached container
	 * (cont_cgref) is then looked up again.
	 */
	u64 cont_gen;
	/*
	 * Summed cgroups (fdl_cgroup.summed), and a generation bumped whenever one is added or goes:
	 * every cgroup's cached nearest summed cgroup (sum_cgref) is then looked up again.
	 */
	u64 nr_summed;
	u64 sum_gen;
	/*
	 * Of the tasks counted in the queues' counts (fair_queued, queued: below), those some CPUs
	 * may not take (env_task_pinned): written only for them, read at every start
	 * (fdl_queued_took_first).
	 */
	s64 nr_queued_pinned;
	/*
	 * The measurement window of the worst lateness (fdl_entity.win_*; fdl_new_window, from
	 * `scx_fdl dump --new-window`); 0 until one is begun: the window is then since the start.
	 * late_window_end: when it ends, by env_now() (0: at the next one).
	 */
	u64 late_window;
	u64 late_window_end;
	/* When a scan last looked at every container's queue (fdl_full_scan_due), ns. */
	u64 full_scan_at;
	/* Full scans so far: each asks the kernel about one domain's DSQs, in turn. */
	u32 nr_full_scans;
	/* The last stray (fdl_scan_queued): its queue, count, the kernel's count, when; for dumps. */
	u64 stray_q;
	s64 stray_counted;
	s64 stray_queued;
	u64 stray_at;
	u32 nr_slots;		/* slots in use or used before: the scan's bound */
	u32 cgroup_next;	/* the cgroups array's slot a new cgroup's search starts at */
	/* When the hold timer (policy/bandwidth.h) fires next, ns; 0: not armed. */
	u64 hold_next;
	/*
	 * The interactive classifier's moving threshold (policy/interactive.h): the average of the
	 * tasks' averages of voluntary switches, milli per second, as their windows close.
	 */
	u64 nvcsw_thresh;
	/*
	 * The load balancer's moves for this period (policy/load.h; fdl_set_moves writes them), and
	 * the period's generation: a task looks at the moves once per generation.
	 */
	struct {
		u64 gen;
		u32 nr_moves;
		u32 __pad;
		struct fdl_lb_move moves[FDL_LB_MAX_MOVES];
	} lb;
	struct fdl_counters counters;
	/*
	 * The queues' counts last: their array is 20 KB, and the small fields that followed it were
	 * on the state's sixth page, so a callback that read one of them and a clock above touched
	 * a page more. Under the emulator each page a callback touches after a switch of page tables
	 * costs a software TLB refill (about 120 ns in ops.running: four reads in distinct pages
	 * against four in one, bench/cost.sh); moving them here measured ops.running 2473 and 2436 ns
	 * against 2545 and 2478 in one boot, within the spread (docs/benchmarks.md, 2026-12-04).
	 */
	/* The containers (cgroups with a queue, DSQ id = cgroup id), for the dispatcher; 0: free. */
	u64 containers[FDL_MAX_CONTAINERS];
	/*
	 * Bit i: containers[i] is active (a task in its subtree is counted runnable;
	 * fdl_cont_mark). The dispatcher looks only at these (fdl_scan_queues).
	 */
	u64 active_mask;
	/*
	 * The tasks waiting in each container's queue (by slot, as containers[]) and in the root's
	 * fair queue, over all its domains (fdl_queued_add): what the dispatcher's scan asks instead
	 * of the kernel.
	 */
	struct fdl_queued fair_queued;
	struct fdl_queued queued[FDL_MAX_CONTAINERS];
};

/* fdl_task.acct_cgref's flag: held by a CPU limit, its weight out of its cgroups' sums. */
#define FDL_ACCT_HELD	(1ULL << 63)

/* Per-task state (task local storage in BPF). */
struct fdl_task {
	u64 vtime;		/* weighted virtual time, on the clock of the queue `vqueue` */
	u64 vqueue;		/* the queue whose clock vtime is on */
	u64 cgref;		/* the cgroup the task belongs to */
	/*
	 * The cgroup whose wsum holds it while runnable (0: none), with FDL_ACCT_HELD while it is held
	 * and out of the sums (fdl_task_hold): one word, so that a CPU holding or releasing it and its
	 * own quiescent never both (or neither) take it out.
	 */
	u64 acct_cgref;
	u32 acct_weight;	/* the weight added there */
	u32 weight;		/* its own weight (p->scx.weight: nice folded in) */
	u64 exec_at;		/* its CPU time as the kernel counts it (env_task_exec) when it last
			   started running or was last charged */
	u64 enqueued_at;	/* when it was last queued (0: not waiting) */
	u64 slice_start;	/* when it last got a CPU (ops.running): its slice runs from there */
	u32 fair_counted;	/* counted in fdl.fair.nr_runnable */
	s32 last_cpu;		/* CPU it last ran on, plus one (0: never ran) */
	u32 via_fair;		/* a deadline container's task that runs by the fair order */
	u32 queued_slot;	/* counted in a queue's fdl_queued (fdl_queued_add); 0: not */
	u32 queued_dom;		/* and in which of its domains */
	u32 queued_pinned;	/* and counted in fdl.nr_queued_pinned: some CPUs may not take it */
	u64 queued_key;		/* its key (DSQ vtime) in that queue */
	u64 held_by;		/* held (throttled): the cgroup whose limit blocks it; 0: not held */
	u64 run_cont;		/* the container it is counted running in (fdl_run_count); 0: none */
	u64 burst_ns;		/* CPU time it ran since it last woke (ops.runnable) */
	u64 avg_burst_ns;	/* its usual burst: burst_ns where it slept, averaged (fdl_ewma; 0: none yet) */
	u32 started;		/* it ran since it last became runnable (ops.runnable) */
	u32 __pad_started;
	/* The interactive classifier (policy/interactive.h): */
	u64 nvcsw_at;		/* when its current window began (0: none yet) */
	u32 nvcsw;		/* voluntary switches (wake-ups) in the current window */
	u32 avg_nvcsw;		/* their average, milli per second, over closed windows */
	u32 nvcsw_windows;	/* 1 once a window has closed */
	u32 interactive;	/* woke with the interactive credit */
	u32 __pad_interactive;
	/* Load tracking and balancing (policy/load.h): */
	struct fdl_pelt pelt;	/* its own PELT (load_avg: weight x runnable) */
	u32 load_cpu;		/* the CPU whose sums hold it while runnable, plus one (0: none) */
	u32 load_weight;	/* the weight added there */
	u32 lb_dom;		/* the domain the balancer moves it to, plus one (0: none) */
	u32 __pad_lb;
	u64 lb_seen_gen;	/* the balancer period whose moves it looked at */
	u64 lb_rec_gen;		/* the balancer period it was recorded a candidate in, plus one */
};

#ifdef FDL_NATIVE
extern struct fdl_state fdl;
extern struct fdl_tunables tun;
#endif

/*
 * How many tasks wait in a queue, counted by the policy rather than asked of the kernel: the
 * dispatcher's scan looks at every active queue at every dispatch, and each ask is a kfunc with a
 * hash lookup of the DSQ per queue domain (at 8 vCPUs in four LLCs, env_queued_any ran 715 BPF
 * instructions per task started beside hackbench and the kernel's find_user_dsq 1877; at 2 vCPUs
 * 49 and 433: bench/insn-profile.sh). A task is counted before it is inserted into its queue (the
 * insert from ops.enqueue lands when the callback returns) and uncounted once it has left it: it
 * starts (ops.running), stops being runnable (ops.quiescent: a sleep, or a dequeue for a change of
 * its properties or cgroup, before which it is queued again and counted again), or goes to the
 * hold queue. So a count is never below what its queue holds; it is above it while a task taken
 * by a CPU's dispatcher has not started there yet (a take that finds nothing: an empty dispatch),
 * and, for the few instructions between ops.quiescent and the kernel's removal, below it for a
 * task that is leaving. The full scan (one CPU's, every FDL_FULL_SCAN_NS) asks the kernel about
 * every queue counted empty; work found there is taken, and counted (nr_scan_strays, which the VM
 * tests require to be 0) if the next full scan finds such work there again.
 *
 * The slot a task counts in: its container's slot in fdl.containers plus one, or FDL_QUEUED_FAIR
 * for the root's fair queue; 0: not counted.
 */
#define FDL_QUEUED_FAIR	(FDL_MAX_CONTAINERS + 1)

static __always_inline struct fdl_queued *fdl_queued_of(u32 s)
{
	if (s == FDL_QUEUED_FAIR)
		return &fdl.fair_queued;
	return &fdl.queued[(s - 1) & (FDL_MAX_CONTAINERS - 1)];
}

static __always_inline s64 *fdl_queued_nr(u32 s)
{
	return &fdl_queued_of(s)->nr;
}

/*
 * The slot of the queue of container top (NULL: the root's fair queue). Every container with a
 * queue has a slot (fdl_slot_add comes first); 0 if top has none, which no queue is counted in.
 */
static __always_inline u32 fdl_queued_slot_of(struct fdl_cgroup *top)
{
	if (!top)
		return FDL_QUEUED_FAIR;
	return top->cont_slot <= FDL_MAX_CONTAINERS ? top->cont_slot : 0;
}

/* The task leaves its queue: it counts there no more. */
static __always_inline void fdl_queued_del(struct fdl_task *t)
{
	struct fdl_queued *qd;
	u32 s = t->queued_slot;

	if (!s)
		return;
	t->queued_slot = 0;
	qd = fdl_queued_of(s);
	if (env_nr_doms() > 1)
		__sync_fetch_and_sub(&qd->dom.nr[env_index(t->queued_dom, FDL_MAX_DOMS - 1)], 1);
	__sync_fetch_and_sub(&qd->nr, 1);
	if (t->queued_pinned) {
		t->queued_pinned = 0;
		__sync_fetch_and_sub(&fdl.nr_queued_pinned, 1);
	}
}

/*
 * The task is about to be inserted into the queue of slot s, in domain dom, with key `key`:
 * count it there, once (a task queued again without having started, as after SCX_ENQ_REENQ,
 * moves its count), and among the tasks some CPUs may not take if it is one (pinned:
 * env_task_pinned).
 */
static __always_inline void fdl_queued_add(struct fdl_task *t, u32 s, u32 dom, u64 key,
					   bool pinned)
{
	struct fdl_queued *qd;

	dom &= FDL_MAX_DOMS - 1;
	t->queued_key = key;
	if (s && env_nr_doms() > 1) {
		/* A key below the clock's bound brings the bound down to it (fdl_queue_head_bound). */
		qd = fdl_queued_of(s);
		if (qd->head_lb_uses > 0 && fdl_time_before(key, qd->head_lb))
			qd->head_lb = key;
	}
	if (t->queued_slot == s && t->queued_dom == dom && t->queued_pinned == pinned)
		return;
	fdl_queued_del(t);
	if (!s)
		return;
	qd = fdl_queued_of(s);
	__sync_fetch_and_add(&qd->nr, 1);
	if (env_nr_doms() > 1)	/* one domain: nr says it all */
		__sync_fetch_and_add(&qd->dom.nr[dom], 1);
	if (pinned) {
		__sync_fetch_and_add(&fdl.nr_queued_pinned, 1);
		t->queued_pinned = 1;
	}
	t->queued_slot = s;
	t->queued_dom = dom;
}

/*
 * The task starting now was its queue's first waiter when its CPU took it (took: the slot it
 * was counted in, read before fdl_queued_del): it was counted in the queue of slot s, there is
 * one domain (one DSQ per queue), and no waiter was passed over for its CPUs (the kernel's take
 * passes over tasks that may not run on the CPU taking: none is queued, nr_queued_pinned). Every
 * other waiter then had a key at or after the task's (t->queued_key).
 */
static __always_inline bool fdl_queued_took_first(u32 took, u32 s)
{
	return took && took == s && env_nr_doms() <= 1 && !fdl.nr_queued_pinned;
}

/*
 * The counts per domain of slot s's queue, for its takes and peeks (env.h): they ask the kernel
 * only about the domains counted non-empty. The counts are never below what a domain holds but
 * for a task that is leaving it (fdl_queued_add), so a take passes only domains with nothing to
 * take; one counted non-empty may still have nothing (a task another CPU took, not started yet).
 * NULL (every domain) if s is not counted (0) or is counted empty: a full scan's take of work the
 * counts do not show (fdl_scan_queued) looks everywhere. Beside hackbench on 8 emulated CPUs in 4
 * LLCs, where the takes and peeks asked each domain's DSQ until one had work, the kernel's DSQ
 * lookups on scx_fdl's behalf fell from 745 to 588 instructions per task started, its peeks from
 * 139 to 99 (bench/insn-profile.sh --cpus 8 --numa 2 antagonist=1).
 */
static __always_inline struct fdl_dom_counts *fdl_queued_doms(u32 s)
{
	struct fdl_queued *qd;

	if (!s || env_nr_doms() <= 1)
		return NULL;
	qd = fdl_queued_of(s);
	return qd->nr > 0 ? &qd->dom : NULL;
}

#endif /* __FDL_POLICY_STATE_H */
