/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Preemption. sched_ext has no wake-up preemption of its own and checks slices only at the tick,
 * so the policy does it: a waking task with an earlier deadline than the work of a busy CPU takes
 * that CPU at once (inserted into its local queue with SCX_ENQ_PREEMPT), running work gets a
 * slice that ends where the next competing deadline takes over, and where a deadline falls inside
 * a tick a per-CPU timer preempts in time.
 */
#ifndef __FDL_POLICY_PREEMPT_H
#define __FDL_POLICY_PREEMPT_H

#include "cgroup.h"

/*
 * Candidates examined for one wake-up: the task's last CPU, one chosen at random and the one
 * after it, so the two are distinct (on two CPUs: both).
 */
#define FDL_VICTIM_CANDIDATES	3

/*
 * Record what a CPU runs from now: work of deadline entity `entity` (fdl_entity_id) whose
 * bucket is at dl, filling at bw, within its guarantee for budget_ns more of running (<= 0: not).
 */
static __always_inline void fdl_cpu_set(struct fdl_cpu *cc, u64 entity, u64 dl, u64 now, u64 bw,
					u64 rr_ns, s64 budget_ns)
{
	cc->queue = entity;
	cc->dl = dl;
	cc->since = now;
	cc->bw = bw;
	cc->rr_ns = rr_ns;
	cc->within_until = budget_ns > 0 ? now + (u64)budget_ns : 0;
}

/*
 * The live order key of a CPU's work (fdl_entity_order): its bucket filled by the time it ran
 * since, in its tier while its budget lasts.
 */
static __always_inline u64 fdl_cpu_dl(struct fdl_cpu *cc, u64 now, u64 vdt)
{
	return fdl_order_key(fdl_dl_fill(cc->dl, now - cc->since, cc->bw), vdt, cc->rr_ns,
			     fdl_time_before(now, cc->within_until));
}

/*
 * A waking task of deadline entity `entity` with deadline dl found no idle CPU: the candidate CPU
 * whose work has the latest deadline, if that is later than dl and has enough slack (the RFC's
 * 1.46x rule, fdl_slack_allows), or -1. CPUs running work of the task's own entity are not
 * candidates (its members take turns by vtime), nor, for a container's task that claims a CPU as
 * fair work, CPUs running its own container's work (own: its entity id unclaimed). *later is set
 * to a candidate with a later deadline but too little slack, or -1: the caller times a preemption
 * for it instead.
 */
static __always_inline s32 fdl_choose_victim(struct task_struct *p, struct fdl_task *t, u64 entity,
					     u64 own, u64 dl, u64 now, s32 *later)
{
	u64 vdt = fdl_vdt(now), cur, best_dl = dl, later_dl = dl;
	u32 nr = tun.nr_cpus ?: 1, r = env_random() % nr;
	s32 cpu, best = -1;
	struct fdl_cpu *cc;
	int k;

	*later = -1;
	fdl_for(k, 0, FDL_VICTIM_CANDIDATES) {
		cpu = k == 0 ? t->last_cpu - 1 : (s32)((r + k - 1) % nr);
		if (cpu < 0 || !env_task_allowed(p, cpu) || !(cc = env_cpu(cpu)))
			continue;
		if (cc->queue == entity || cc->queue == own)
			continue;
		cur = fdl_cpu_dl(cc, now, vdt);
		if (!fdl_time_before(dl, cur))
			continue;
		if (!fdl_slack_allows(cur, dl, vdt)) {
			if (fdl_time_before(later_dl, cur)) {
				later_dl = cur;
				*later = cpu;
			}
			continue;
		}
		if (fdl_time_before(best_dl, cur)) {
			best_dl = cur;
			best = cpu;
		}
	}
	return best;
}

/*
 * The slice of work with deadline dl at bandwidth bw, when the earliest competing deadline was
 * next_dl: it runs until its bucket reaches next_dl, within [min_slice, slice].
 */
static __always_inline u64 fdl_slice(u64 dl, u64 bw, u64 next_dl, bool has_next)
{
	u64 slice = tun.slice_ns;

	if (has_next)
		slice = fdl_min(slice, fdl_dl_run_time(dl, next_dl, bw));
	return fdl_max(slice, tun.min_slice_ns);
}

/*
 * The slice of work with bucket dl at bw and budget_ns left within its guarantee (<= 0: beyond
 * it, in the second tier), competing with order key next_dl: a competitor of the same tier takes
 * over where the buckets meet, one of a later tier never; work within its guarantee stops at the
 * end of its budget, where its tier changes.
 */
static __always_inline u64 fdl_tier_slice(u64 dl, u64 bw, u64 next_dl, bool has_next, s64 budget_ns)
{
	u64 slice;

	if (budget_ns <= 0)
		return fdl_slice(dl, bw, next_dl - FDL_TIER_NS, has_next);
	slice = fdl_slice(dl, bw, next_dl, has_next);
	return fdl_max(fdl_min(slice, (u64)budget_ns), tun.min_slice_ns);
}

/*
 * When to preempt a CPU whose work is later than a waiting deadline dl but has too little slack
 * to be preempted at once: half-way to dl, so the waiting task starts before its deadline even
 * when no tick comes in time.
 */
static __always_inline u64 fdl_timer_delay(u64 dl, u64 now)
{
	u64 vdt = fdl_vdt(now);
	u64 slack = fdl_time_before(vdt, dl) ? (dl - vdt) & FDL_TIER_MASK : 0;

	return fdl_min(fdl_max(slack / 2, tun.min_slice_ns), tun.slice_ns);
}

#endif /* __FDL_POLICY_PREEMPT_H */
