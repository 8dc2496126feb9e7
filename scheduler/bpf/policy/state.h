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
	/*
	 * From the dispatcher's last scan of the deadline containers: their root weight (boosted
	 * and at cpu.weight) while active, and the smallest deadline_rr. Written only on change.
	 */
	s64 dl_wsum;
	s64 dl_unboosted_wsum;
	u64 min_rr_ns;
	/*
	 * The guarantees' scale (fdl_budget_scale; 0: none): below one while the active guarantees
	 * ask more than fair work's protected bandwidth leaves. From the dispatcher's last scan.
	 */
	u64 budget_scale;
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
	/* The containers (cgroups with a queue, DSQ id = cgroup id), for the dispatcher; 0: free. */
	u64 containers[FDL_MAX_CONTAINERS];
	/*
	 * Bit i: containers[i] is active (a task in its subtree is counted runnable;
	 * fdl_cont_mark). The dispatcher looks only at these (fdl_scan_queues).
	 */
	u64 active_mask;
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
};

/* Per-task state (task local storage in BPF). */
struct fdl_task {
	u64 vtime;		/* weighted virtual time, on the clock of the queue `vqueue` */
	u64 vqueue;		/* the queue whose clock vtime is on */
	u64 cgref;		/* the cgroup the task belongs to */
	u64 acct_cgref;		/* the cgroup whose wsum holds it while runnable (0: none) */
	u32 acct_weight;	/* the weight added there */
	u32 weight;		/* its own weight (p->scx.weight: nice folded in) */
	u64 started_at;		/* when it last started running or was last charged */
	u64 enqueued_at;	/* when it was last queued (0: not waiting) */
	u64 slice_start;	/* when it last got a CPU (ops.running): its slice runs from there */
	u32 fair_counted;	/* counted in fdl.fair.nr_runnable */
	s32 last_cpu;		/* CPU it last ran on, plus one (0: never ran) */
	u32 via_fair;		/* a deadline container's task that runs by the fair order */
	u32 __pad;
	u64 held_by;		/* held (throttled): the cgroup whose limit blocks it; 0: not held */
	u64 burst_ns;		/* CPU time it ran since it last woke (ops.runnable) */
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

#endif /* __FDL_POLICY_STATE_H */
