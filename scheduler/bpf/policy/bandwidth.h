/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU limits (cpu.max and cpu.max.burst), enforced here because the kernel does not throttle
 * sched_ext tasks. The model is the kernel's CFS bandwidth control (reference §4):
 *
 * - A limited cgroup has a pool (struct fdl_bw). At every period boundary the pool gains the
 *   quota and is capped at quota + burst, so unused quota carries over up to the burst; an overrun
 *   (several CPUs ran the subtree's work when the pool ran dry) stays as debt.
 * - All CPU time of the cgroup's subtree drains the pool, on every CPU; an ancestor's limit binds
 *   its whole subtree, so a task may run only while every limited cgroup from its own up to the
 *   root has a positive pool. The first one that does not is the task's blocker.
 * - A blocked task is held (the FDL_DSQ_HOLD queue, never dispatched) until its blocker's pool is
 *   positive again at a period boundary, when a timer moves it back to its own queue in its vtime
 *   order. A running task's slice is clipped to what the pool has left, and the tick that
 *   follows throttles it, as the kernel's accounting does: its overrun is debt.
 *
 * Boundaries are applied lazily, by the first CPU that looks at the pool after one (a
 * compare-and-swap on period_start chooses it), so an idle limited cgroup costs nothing.
 */
#ifndef __FDL_POLICY_BANDWIDTH_H
#define __FDL_POLICY_BANDWIDTH_H

#include "state.h"

/* The pool's cap: the quota and what may carry over (the larger of cpu.max.burst and the buffer). */
static __always_inline u64 fdl_bw_burst_cap(struct fdl_bw *bw)
{
	return fdl_max(bw->burst_ns, bw->buffer_ns);
}

/*
 * Set a cgroup's limit, from cpu.max (period_us, quota_us; quota "max": none) and cpu.max.burst.
 * A new or changed limit starts a period with a full quota; statistics are kept.
 */
static __always_inline void fdl_bw_set(struct fdl_cgroup *cg, u64 period_us, u64 quota_us,
				       u64 burst_us, u64 now)
{
	struct fdl_bw *bw = &cg->bw;
	u64 quota = fdl_bw_quota_ns(period_us, quota_us), had = bw->quota_ns;

	bw->throttled_at = 0;
	bw->period_ns = quota ? period_us * 1000 : 0;
	bw->burst_ns = quota && burst_us < FDL_BW_QUOTA_MAX_US ? burst_us * 1000 : 0;
	bw->runtime_ns = (s64)quota;
	bw->pool_ns = (s64)quota;
	bw->used_ns = 0;
	bw->period_start = now;
	bw->quota_ns = quota;
	if (quota && !had)
		__sync_fetch_and_add(&fdl.counters.nr_limited, 1);
	else if (!quota && had)
		__sync_fetch_and_sub(&fdl.counters.nr_limited, 1);
}

/* A task must wait for the pool's refill: the cgroup is throttled (counted once per period). */
static __always_inline void fdl_bw_throttle(struct fdl_bw *bw, u64 now)
{
	if (!bw->throttled_at && __sync_bool_compare_and_swap(&bw->throttled_at, 0, now ?: 1))
		__sync_fetch_and_add(&bw->nr_throttled, 1);
}

/*
 * The number of tasks held with this limit as their blocker changes by d at now: the throttled
 * time of the stretch since the last change is summed first (fdl_bw_throttled_time). One CPU sums
 * each stretch (compare-and-swap on held_at); a change that races with it may count its stretch
 * at the other's number of held tasks.
 */
static __always_inline void fdl_bw_held_step(struct fdl_bw *bw, s64 d, u64 now)
{
	u64 at = bw->held_at;
	s64 n = bw->nr_held;

	if (fdl_time_before(at, now) && __sync_val_compare_and_swap(&bw->held_at, at, now) == at &&
	    n > 0)
		__sync_fetch_and_add(&bw->throttled_ns, fdl_bw_throttled_time(now - at, n, tun.nr_cpus));
	__sync_fetch_and_add(&bw->nr_held, d);
}

/*
 * The task is no longer held (released, or it left its queue): its blocker counts it no more.
 * held_by is taken by an exchange, as another CPU may hold or release the task at the same time
 * (its dispatcher, the hold timer; policy/sched.h's fdl_task_hold): one of them uncounts it.
 */
static __always_inline void fdl_bw_unheld(struct fdl_task *t, u64 now)
{
	struct fdl_cgroup *cg;
	u64 by;

	if (!t->held_by || !(by = __sync_lock_test_and_set(&t->held_by, 0)))
		return;
	if ((cg = env_cgroup(by)))
		fdl_bw_held_step(&cg->bw, -1, now);
}

/*
 * The task went to the hold queue, blocked by cgroup `blocker`'s limit. Counted by the one CPU
 * whose compare-and-swap sets held_by.
 */
static __always_inline void fdl_bw_held(struct fdl_task *t, u64 blocker, u64 now)
{
	struct fdl_cgroup *cg;

	fdl_queued_del(t);	/* out of its queue, if it was in one */
	if (t->held_by == blocker)
		return;
	fdl_bw_unheld(t, now);
	if (blocker && (cg = env_cgroup(blocker)) &&
	    __sync_bool_compare_and_swap(&t->held_by, 0, blocker))
		fdl_bw_held_step(&cg->bw, 1, now);
}

/*
 * Apply the period boundaries passed since period_start: close the period that ended (its
 * statistics: periods counted as the kernel counts them, a burst if it drew more than the quota),
 * refill the pool, and end the throttling at the boundary where the pool turned positive (its
 * throttled time is summed as its held tasks are released: fdl_bw_held_step).
 *
 * A global function, verified once per program: inlined into the walks below (fdl_bw_step), each
 * of their FDL_MAX_DEPTH + 1 turns verified it again, some 24k instructions of fdl_bw_left's in
 * every program that clips a slice (bench/guest/load-trace.sh: the load's time follows the
 * instructions verified, about 12 us each under the emulator).
 */
FDL_GLOBAL int fdl_bw_refresh(struct fdl_bw *bw, u64 now)
{
	u64 start, period, quota, n, used, burst;
	u64 at;
	s64 old, new;

	if (!bw)
		return 0;
	start = bw->period_start;
	period = bw->period_ns;
	quota = bw->quota_ns;
	n = fdl_bw_periods(start, now, period);
	if (!n || !quota)
		return 0;
	if (!__sync_bool_compare_and_swap(&bw->period_start, start, start + n * period))
		return 0;	/* another CPU applies these boundaries */
	used = __sync_lock_test_and_set(&bw->used_ns, 0);
	at = bw->throttled_at;
	__sync_fetch_and_add(&bw->nr_periods, fdl_bw_counted_periods(n, used || at, bw->last_active));
	bw->last_active = n == 1 && (used || at);
	burst = fdl_bw_burst(used, bw->pool_ns, quota);
	if (burst) {
		__sync_fetch_and_add(&bw->nr_bursts, 1);
		__sync_fetch_and_add(&bw->burst_time_ns, burst);
	}
	/* Concurrent charges only subtract: retry once if one came in between, then add plainly. */
	old = bw->runtime_ns;
	new = fdl_bw_refill(old, quota, fdl_bw_burst_cap(bw), n);
	if (!__sync_bool_compare_and_swap(&bw->runtime_ns, old, new)) {
		old = bw->runtime_ns;
		new = fdl_bw_refill(old, quota, fdl_bw_burst_cap(bw), n);
		__sync_fetch_and_add(&bw->runtime_ns, new - old);
	}
	bw->pool_ns = new;
	if (at && new > 0)
		__sync_bool_compare_and_swap(&bw->throttled_at, at, 0);
	return 0;
}

/* When a blocked cgroup's pool turns positive: the boundary after which its debt is repaid. */
static __always_inline u64 fdl_bw_release_at(struct fdl_bw *bw)
{
	s64 rt = bw->runtime_ns;
	u64 k = rt <= 0 && bw->quota_ns ? (u64)-rt / bw->quota_ns + 1 : 1;

	return bw->period_start + k * bw->period_ns;
}

/*
 * One step of a walk up the tree from *cgref: the limit of cgroup *cgref, brought up to date at
 * now, or NULL if it has none; *cgref moves to its parent (0 at the root, or when the cgroup is
 * not tracked). The walks below are bounded by FDL_MAX_DEPTH + 1 steps.
 */
static __always_inline struct fdl_bw *fdl_bw_step(u64 *cgref, u64 now)
{
	struct fdl_cgroup *cg = env_cgroup(*cgref);

	if (!cg) {
		*cgref = 0;
		return NULL;
	}
	*cgref = cg->parent_cgref;
	if (!cg->bw.quota_ns)
		return NULL;
	fdl_bw_refresh(&cg->bw, now);
	return &cg->bw;
}

/*
 * Charge delta_ns of CPU time to every limited cgroup from cgref up to the root. Returns 1 if one
 * of them is now out of runtime (the task must stop), else 0. The cgroup counts as throttled only
 * when a task of it is then held (fdl_bw_blocker): work that ends exactly with its quota is not.
 */
FDL_GLOBAL int fdl_bw_charge(u64 cgref, u64 delta_ns, u64 now)
{
	struct fdl_bw *bw;
	int i, blocked = 0;
	s64 old;

	for (i = 0; i < FDL_MAX_DEPTH + 1 && cgref; i++) {
		if (!(bw = fdl_bw_step(&cgref, now)))
			continue;
		__sync_fetch_and_add(&bw->used_ns, delta_ns);
		old = __sync_fetch_and_sub(&bw->runtime_ns, (s64)delta_ns);
		if (old - (s64)delta_ns <= 0)
			blocked = 1;	/* throttled when it next wants to run */
	}
	return blocked;
}

/*
 * The first cgroup from cgref up whose limit blocks its subtree now (its pool is not positive), or
 * 0. *release_at is when that pool turns positive.
 */
FDL_GLOBAL u64 fdl_bw_blocker(u64 cgref, u64 now, u64 *release_at)
{
	struct fdl_bw *bw;
	u64 here;
	int i;

	for (i = 0; i < FDL_MAX_DEPTH + 1 && cgref; i++) {
		here = cgref;
		bw = fdl_bw_step(&cgref, now);
		if (bw && bw->runtime_ns <= 0) {
			fdl_bw_throttle(bw, now);
			if (release_at)
				*release_at = fdl_bw_release_at(bw);
			return here;
		}
	}
	return 0;
}

/* CPU time the tightest limit from cgref up leaves it now (FDL_U64_MAX: no limit above it). */
FDL_GLOBAL u64 fdl_bw_left(u64 cgref, u64 now)
{
	struct fdl_bw *bw;
	u64 left = FDL_U64_MAX;
	s64 rt;
	int i;

	for (i = 0; i < FDL_MAX_DEPTH + 1 && cgref; i++) {
		if (!(bw = fdl_bw_step(&cgref, now)))
			continue;
		rt = bw->runtime_ns;
		left = fdl_min(left, rt > 0 ? (u64)rt : 0);
	}
	return left;
}

/* A slice clipped to what the limits above the task leave it (never below min_slice_ns). */
static __always_inline u64 fdl_bw_clip(u64 cgref, u64 slice, u64 now)
{
	u64 left;

	if (!fdl.counters.nr_limited)
		return slice;
	left = fdl_bw_left(cgref, now);
	return left < slice ? fdl_max(left, tun.min_slice_ns) : slice;
}

#endif /* __FDL_POLICY_BANDWIDTH_H */
