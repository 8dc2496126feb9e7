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

/*
 * Fair Deadline: the draining-buckets model. Deadlines live in virtual deadline time,
 * vdt = now - vdt_lag; a deadline container's bucket deadline dl advances as it runs.
 */

/* A container may fill its bucket at 970/1024 of its bandwidth before it falls behind. */
#define FDL_FILL_NUM		1024ULL
#define FDL_FILL_DEN		970ULL
/* Smallest step of vdt_lag on a deadline miss. */
#define FDL_MISS_MIN_NS		50000ULL

/* Bandwidth in CPUs, fixed point: FDL_SHARE_ONE is one whole CPU. */
static inline u64 fdl_bandwidth_cpus(u64 machine_share, u32 nr_cpus)
{
	return machine_share * nr_cpus;
}

/*
 * Running fills the bucket:
 *
 *	dl += delta_ns * 1024/970 / bandwidth      (bandwidth in CPUs)
 *
 * so a container using exactly 970/1024 of its bandwidth keeps pace with vdt.
 */
static inline u64 fdl_dl_fill(u64 dl, u64 delta_ns, u64 bw_cpus)
{
	return dl + fdl_vtime_delta(delta_ns * FDL_FILL_NUM / FDL_FILL_DEN, bw_cpus);
}

/*
 * A container wakes (becomes runnable from empty): sleeping earns no credit, and the latency
 * promise holds:
 *
 *	dl = clamp(dl, vdt + gdl, vdt + deadline_rr),  gdl = deadline_wakeup ?: deadline_rr
 */
static inline u64 fdl_dl_wakeup(u64 dl, u64 vdt, u64 wakeup_ns, u64 rr_ns)
{
	u64 gdl = wakeup_ns && wakeup_ns < rr_ns ? wakeup_ns : rr_ns;

	if (fdl_time_before(dl, vdt + gdl))
		return vdt + gdl;
	if (fdl_time_before(vdt + rr_ns, dl))
		return vdt + rr_ns;
	return dl;
}

/* A busy container is never further than its deadline_rr ahead: dl = min(dl, vdt + rr). */
static inline u64 fdl_dl_cap(u64 dl, u64 vdt, u64 rr_ns)
{
	return fdl_time_before(vdt + rr_ns, dl) ? vdt + rr_ns : dl;
}

/*
 * A deadline miss (vdt passed the earliest deadline min_dl): instead of letting everybody fall
 * further behind, move virtual deadline time back, so the lateness is spread over all deadline
 * work and nobody is starved:
 *
 *	vdt_lag += vdt - min_dl + max(min_rr / 4, 50 us)
 */
static inline u64 fdl_miss_lag_step(u64 vdt, u64 min_dl, u64 min_rr_ns)
{
	u64 margin = min_rr_ns / 4 > FDL_MISS_MIN_NS ? min_rr_ns / 4 : FDL_MISS_MIN_NS;

	return vdt - min_dl + margin;
}

/* floor(log2(v)) for v > 0, in five steps without loops (0 for v == 0). */
static inline u32 fdl_ilog2(u64 v)
{
	u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

/*
 * Run-queue latency histogram bucket of a wait of wait_ns (log2 of microseconds):
 *
 *	bucket = 0                          if wait < 1 us
 *	         floor(log2(wait in us)) + 1  capped at FDL_LAT_BUCKETS - 1
 *
 * so bucket i < FDL_LAT_BUCKETS - 1 holds waits below 2^i us.
 */
static inline u32 fdl_lat_bucket(u64 wait_ns)
{
	u64 us = wait_ns / 1000;
	u32 b;

	if (!us)
		return 0;
	b = fdl_ilog2(us) + 1;
	return b < FDL_LAT_BUCKETS - 1 ? b : FDL_LAT_BUCKETS - 1;
}

#endif /* __FDL_MATH_H */
