/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy arithmetic of scx_fdl, stated once. Pure functions on integers: the BPF program
 * includes this file, and so do the native unit tests (tests/native/), compiled as ordinary C.
 */
#ifndef __FDL_MATH_H
#define __FDL_MATH_H

#include "intf.h"

/* A share of the whole machine (all CPUs) in fixed point: FDL_SHARE_ONE is everything. */
#define FDL_SHARE_SHIFT		20
#define FDL_SHARE_ONE		(1ULL << FDL_SHARE_SHIFT)
#define FDL_U64_MAX		(~0ULL)

/* Wrap-safe ordering of virtual times: true if a is before b. */
static inline int fdl_time_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/*
 * Hierarchical share, one level down:
 *
 *	share(child) = share(parent) * w(child) / sum(w of the parent's active members)
 *
 * applied from the root (share 1) to the task, as the fair class divides a group's part of the
 * CPU among its runnable entities. Never 0, so that every runnable task keeps advancing.
 */
static inline u64 fdl_share_of(u64 parent_share, u64 weight, s64 wsum)
{
	u64 share;

	if (wsum <= 0 || (u64)wsum < weight)	/* mid-update: count the member alone */
		wsum = weight;
	if (!wsum)
		return parent_share ? parent_share : 1;
	share = parent_share * weight / (u64)wsum;
	return share ? share : 1;
}

/*
 * Weighted virtual time for running delta_ns at a given share of the machine:
 *
 *	dv = delta_ns * FDL_SHARE_ONE / share
 *
 * the kernel's vruntime += delta * NICE_0_LOAD / weight, with the weight normalised so that all
 * runnable work sums to FDL_SHARE_ONE. Also converts a CPU-time bound into a vtime span. Computed
 * without overflowing for any delta; saturates at FDL_U64_MAX.
 */
static inline u64 fdl_vtime_delta(u64 delta_ns, u64 share)
{
	u64 q, r;

	if (!share)
		share = 1;
	q = delta_ns / share;
	r = delta_ns % share;
	if (q > (FDL_U64_MAX >> FDL_SHARE_SHIFT))
		return FDL_U64_MAX;
	return (q << FDL_SHARE_SHIFT) + ((r << FDL_SHARE_SHIFT) / share);
}

/*
 * Wake-up placement, the floor: a task that slept keeps at most `lag` of vtime credit behind the
 * queue's now, so a long sleeper cannot monopolise a CPU when it wakes, and sleeping earns nothing
 * beyond it. Applied on wake-up only: a task preempted while running keeps its place. Wrap-safe.
 */
static inline u64 fdl_vtime_floor(u64 vtime, u64 vnow, u64 lag)
{
	return fdl_time_before(vtime, vnow - lag) ? vnow - lag : vtime;
}

/*
 * The starvation cap: a task charged far ahead of everyone (a tiny share) is queued no further
 * than `window` past the queue's now, so it runs again within a bounded time and no runnable task
 * waits long enough to trip the sched_ext watchdog. Applied on every enqueue. Wrap-safe.
 */
static inline u64 fdl_vtime_cap(u64 vtime, u64 vnow, u64 window)
{
	return fdl_time_before(vnow + window, vtime) ? vnow + window : vtime;
}

#endif /* __FDL_MATH_H */
