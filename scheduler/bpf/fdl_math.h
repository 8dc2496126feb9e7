/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy arithmetic of scx_fdl, stated once. Pure functions on integers: the BPF program
 * includes this file, and so do the native unit tests (tests/native/), compiled as ordinary C.
 * Each formula is written in plain mathematics above its fixed-point code.
 */
#ifndef __FDL_MATH_H
#define __FDL_MATH_H

#include "intf.h"

#ifndef __always_inline	/* natively (BPF has it from its headers) */
#define __always_inline inline __attribute__((always_inline))
#endif

/* A share of the whole machine (all CPUs) in fixed point: FDL_SHARE_ONE is everything. */
#define FDL_SHARE_SHIFT		20
#define FDL_SHARE_ONE		(1ULL << FDL_SHARE_SHIFT)
#define FDL_U64_MAX		(~0ULL)

/* Wrap-safe ordering of times on one clock: true if a is before b. */
static inline int fdl_time_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/*
 * The time from `at` to `now`, 0 if `at` is not before `now`. For a time another CPU wrote: each
 * CPU's clock (scx_bpf_now: its run queue's clock, read when the queue was last locked) can stand
 * behind a time another CPU wrote a moment ago, and the plain difference then wraps to about
 * 2^64 (a CPU whose record started 1 us "after" the waker's clock read had its key filled by
 * 1.9e16 ns, a task's wait counted in the histogram's last bucket).
 */
static inline u64 fdl_since(u64 now, u64 at)
{
	return fdl_time_before(at, now) ? now - at : 0;
}

static inline u64 fdl_min(u64 a, u64 b)
{
	return a < b ? a : b;
}

static inline u64 fdl_max(u64 a, u64 b)
{
	return a > b ? a : b;
}

/*
 * The index of v's lowest set bit (v != 0; 0 for v == 0): v & -v is that bit alone; multiplied by
 * the de Bruijn sequence 0x03f79d71b4cb0a89 (every 6-bit window of it distinct), its top six bits
 * name the position, which the table maps back. One multiply and a table read (the dispatcher's
 * walk over the active containers calls it per container: with the six shift steps fdl_ilog2 took
 * before, 90 of the 4074 instructions per task started in bench/insn-profile.sh's wake shape).
 */
static const u8 fdl_bit_pos[64] = {
	0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4,
	62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
	46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6,
};

/* The position of the single bit set in v (a power of two; 0 for v == 0): fdl_lowest_bit's table. */
static inline u32 fdl_bit_of(u64 v)
{
	return fdl_bit_pos[((v * 0x03f79d71b4cb0a89ULL) >> 58) & 63];
}

static inline u32 fdl_lowest_bit(u64 v)
{
	return fdl_bit_of(v & -v);
}

/*
 * floor(log2(v)) for v > 0 (0 for v == 0), without branches: shifted down onto itself
 * (v |= v >> 1, 2, 4, ..., 32), v has every bit below its highest set; v - (v >> 1) is then the
 * highest alone, whose position fdl_bit_of reads (the six steps that tested one half at a time
 * ran twice the instructions: the wait's histogram bucket is taken at every start). With a branch
 * per step, the verifier walked a path per outcome: it then knew the result exactly, so
 * fdl_mul_div's test on two of them split into 64 x 64 paths that never merged, at every call site
 * (fdl_choose_among: 0.3M instructions verified, most of them here).
 */
static inline u32 fdl_ilog2(u64 v)
{
	v |= v >> 1;
	v |= v >> 2;
	v |= v >> 4;
	v |= v >> 8;
	v |= v >> 16;
	v |= v >> 32;
	return fdl_bit_of(v - (v >> 1));
}

/*
 * a * b / d without overflowing while a * b fits in 2^64 * d:
 *
 *	a * b / d = (a / d) * b + (a % d) * b / d
 *
 * Saturates at FDL_U64_MAX (conservatively: when log2(a / d) + log2(b) >= 63; a division test
 * would make clang emit a 128-bit multiply, which BPF lacks). The second term needs
 * (d - 1) * b < 2^64.
 */
static inline u64 fdl_mul_div(u64 a, u64 b, u64 d)
{
	u64 q, r;

	if (!d)
		return FDL_U64_MAX;
	q = a / d;
	r = a % d;
	/* Both below 2^32 (nearly always): the product fits, no logarithms needed. */
	if (q && b && ((q | b) >> 32) && fdl_ilog2(q) + fdl_ilog2(b) >= 63)
		return FDL_U64_MAX;
	return q * b + r * b / d;
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
 * runnable work sums to FDL_SHARE_ONE. Also converts a CPU-time bound into a vtime span, and
 * (with a bandwidth in CPUs for share) fills a deadline bucket. Saturates at FDL_U64_MAX.
 */
static inline u64 fdl_vtime_delta(u64 delta_ns, u64 share)
{
	u64 q, r;

	if (!share)
		share = 1;
	/*
	 * delta_ns below 2^44 (nearly five hours): the shifted numerator fits, and one division gives
	 * the same result as the two-part form below, (q << S) + ((r << S) / share), since
	 * (delta << S) = (q << S) * share + (r << S). A division is a dozen instructions once JIT
	 * compiled with its zero check, and this runs several times per task started.
	 */
	if (!(delta_ns >> (64 - FDL_SHARE_SHIFT)))
		return (delta_ns << FDL_SHARE_SHIFT) / share;
	q = delta_ns / share;
	r = delta_ns % share;
	if (q > (FDL_U64_MAX >> FDL_SHARE_SHIFT))
		return FDL_U64_MAX;
	return (q << FDL_SHARE_SHIFT) + ((r << FDL_SHARE_SHIFT) / share);
}

/*
 * Wake-up placement, the floor: a task that slept keeps at most `lag` of vtime credit behind its
 * queue's clock, so a long sleeper cannot monopolise a CPU when it wakes, and sleeping earns
 * nothing beyond it. Applied on wake-up only: a task preempted while running keeps its place.
 *
 *	vtime = max(vtime, vnow - lag)
 */
static inline u64 fdl_vtime_floor(u64 vtime, u64 vnow, u64 lag)
{
	return fdl_time_before(vtime, vnow - lag) ? vnow - lag : vtime;
}

/*
 * The starvation cap: a task charged far ahead of everyone (a tiny share) is queued no further
 * than `window` past its queue's clock, so it runs again within a bounded time and no runnable
 * task waits long enough to trip the sched_ext watchdog.
 *
 *	vtime = min(vtime, vnow + window)
 */
static inline u64 fdl_vtime_cap(u64 vtime, u64 vnow, u64 window)
{
	return fdl_time_before(vnow + window, vtime) ? vnow + window : vtime;
}

/*
 * The interactive classifier's average (seed 004, scx_bpfland): an exponentially weighted moving
 * average whose new sample weighs a quarter,
 *
 *	avg' = (3 avg + sample) / 4
 *
 * rounded down as a whole, so that samples of 0 bring it to 0 (3/4 avg rounded apart stopped at
 * 1-3). Its arguments are rates far below 2^62.
 */
static inline u64 fdl_ewma(u64 avg, u64 sample)
{
	return (3 * avg + sample) >> 2;
}

/* Beyond any task's voluntary switches in one window (a million per second for ten seconds). */
#define FDL_RATE_MAX_COUNT	10000000ULL

/*
 * Events per second, in thousandths (milli-events per second), of count events in delta_ns:
 *
 *	rate = count * 10^12 / delta_ns
 *
 * count is held below FDL_RATE_MAX_COUNT, so the product stays below 2^64.
 */
static inline u64 fdl_rate_milli(u64 count, u64 delta_ns)
{
	if (!delta_ns)
		return 0;
	if (count > FDL_RATE_MAX_COUNT)
		count = FDL_RATE_MAX_COUNT;
	return count * 1000000000000ULL / delta_ns;
}

/*
 * Fair Deadline: the draining-buckets model of the FDL RFC (reference section 1). Deadlines live
 * in virtual deadline time, vdt = now - vdt_lag; an entity's bucket deadline dl advances as it
 * runs, scaled by its bandwidth, and vdt advances with the clock. An entity that keeps within
 * its bandwidth keeps dl ahead of vdt; one that overruns falls behind the others.
 */

/* An entity may fill its bucket at 970/1024 of its bandwidth before it falls behind. */
#define FDL_FILL_NUM		1024ULL
#define FDL_FILL_DEN		970ULL
/* Smallest step of vdt_lag on a deadline miss. */
#define FDL_MISS_MIN_NS		50000ULL
/* Wake-up CPU choice: a victim's slack must exceed 1.46x the waking task's (1495/1024). */
#define FDL_SLACK_NUM		1495ULL
#define FDL_SLACK_DEN		1024ULL

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
 * so an entity using exactly 970/1024 of its bandwidth keeps pace with vdt.
 */
static inline u64 fdl_dl_fill(u64 dl, u64 delta_ns, u64 bw_cpus)
{
	return dl + fdl_vtime_delta(delta_ns * FDL_FILL_NUM / FDL_FILL_DEN, bw_cpus);
}

/*
 * The inverse: how long an entity at bandwidth bw may run before its deadline reaches target,
 *
 *	t = (target - dl) * bandwidth * 970/1024
 *
 * 0 if it is there already. Sets a slice to end where a competing deadline takes over.
 */
static inline u64 fdl_dl_run_time(u64 dl, u64 target, u64 bw_cpus)
{
	if (!fdl_time_before(dl, target))
		return 0;
	return fdl_mul_div(target - dl, bw_cpus, FDL_SHARE_ONE) * FDL_FILL_DEN / FDL_FILL_NUM;
}

/*
 * How long work may run before its key (fdl_dl_cap: min(dl, vdt + rr)) reaches target, when
 * running fills dl at bandwidth bw and vdt advances with the clock: the key is the smaller of the
 * two, so it reaches target when both have,
 *
 *	t = max(fdl_dl_run_time(dl, target, bw), target - (vdt + rr))
 *
 * Without the second term, work whose bucket ran ahead of vdt + rr (a container within its
 * guarantee whose members run on several CPUs at once) got the shortest slice while its key stood
 * well before its competitor's, and was sent back to the dispatcher for nothing.
 */
static inline u64 fdl_key_run_time(u64 dl, u64 bw_cpus, u64 rr_ns, u64 vdt, u64 target)
{
	u64 t = fdl_dl_run_time(dl, target, bw_cpus);

	if (fdl_time_before(vdt + rr_ns, target))
		t = fdl_max(t, target - (vdt + rr_ns));
	return t;
}

/*
 * An entity wakes (becomes runnable from empty), or its parameters were just written: sleeping
 * earns no credit, and the latency promise holds:
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

/*
 * What an entity competes with. Its bucket dl minus vdt is how far it ran ahead of its
 * bandwidth. A burst takes it up to about deadline_rr ahead, and a wake-up starts it anew;
 * running more than FDL_OVER_MARGIN_NS further ahead takes sustained use beyond its bandwidth.
 * Such an entity competes at vdt + rr but after every entity within its bandwidth:
 *
 *	key = min(dl, vdt + rr)                 if dl <= vdt + rr + margin
 *	      vdt + rr + FDL_OVER_NS            otherwise (FDL_OVER_NS: far below the wrap)
 *
 * So a container within its guarantee is not kept waiting for long by one that overran (an
 * overloaded fair container included); among those that overran the earliest deadline goes
 * first, and all of them get what the others leave.
 */
#define FDL_OVER_NS		(1ULL << 40)
#define FDL_OVER_MARGIN_NS	50000000ULL
/* How far a bucket may run ahead of vdt + rr: bounds how long an entity that overran takes to
 * count as within its bandwidth again (dl = min(dl, vdt + rr + FDL_MAX_DEBT_NS)). */
#define FDL_MAX_DEBT_NS		100000000ULL

/* Is an order key (fdl_order_key) one of an entity that overran its bandwidth? */
static inline int fdl_key_overrun(u64 key, u64 vdt)
{
	return key - vdt >= FDL_OVER_NS && key - vdt < (FDL_OVER_NS << 2);
}

static inline u64 fdl_dl_key(u64 dl, u64 vdt, u64 rr_ns)
{
	if (fdl_time_before(vdt + rr_ns + FDL_OVER_MARGIN_NS, dl))
		return vdt + rr_ns + FDL_OVER_NS;
	return fdl_time_before(vdt + rr_ns, dl) ? vdt + rr_ns : dl;
}

/*
 * Tiers: a deadline container within its guarantee (budget left, fdl_budget_earn) is served
 * ahead of all other work, earliest deadline first; everything else (fair work, and containers
 * that used their guarantee up) competes after it, by the same keys. The order compares keys
 * only, so a key carries its tier as an offset far above any deadline:
 *
 *	order key = key                     within the guarantee
 *	            key + FDL_TIER_NS       otherwise
 *
 * FDL_TIER_NS (2^38 ns, 275 s) is above any deadline_rr plus debt, and FDL_OVER_NS is four
 * tiers, so an overrun key stays behind every key of its tier. Slack (fdl_slack_allows) and
 * timer delays look at the offset within the tier only (FDL_TIER_MASK).
 */
#define FDL_TIER_SHIFT		38
#define FDL_TIER_NS		(1ULL << FDL_TIER_SHIFT)
#define FDL_TIER_MASK		(FDL_TIER_NS - 1)

static inline u64 fdl_tier_key(u64 key, int within)
{
	return within ? key : key + FDL_TIER_NS;
}

/*
 * Is order key `key` one of the first tier at vdt? A key within the guarantee is at most
 * deadline_rr ahead of vdt but may be any time behind it (late work); a key a tier back is
 * FDL_TIER_NS ahead less its own lateness. Half a tier (137 s) apart, as a signed distance:
 *
 *	within  <=>  (s64)(key - vdt) < FDL_TIER_NS / 2
 *
 * (Compared unsigned, key - vdt < FDL_TIER_NS, a late key within the guarantee wrapped and read
 * as a tier back: the latest work within its guarantee lost its deadline's rights, and a 1 ms
 * container waited 93 ms for the fair order to pick it.)
 */
static inline int fdl_key_within(u64 key, u64 vdt)
{
	return (s64)(key - vdt) < (s64)(FDL_TIER_NS >> 1);
}

/*
 * A guarantee of g CPUs (fixed point) as a budget of CPU time: earned at g, spent by running,
 * held within one window of the guarantee either way, so that a container that used more than
 * its guarantee for long owes at most a window, and one that slept saves at most a window:
 *
 *	budget = clamp(budget + elapsed * g, -g * window, g * window)
 */
static inline u64 fdl_budget_cap(u64 rate, u64 window_ns)
{
	/* Plain products: rate is at most FDL_MAX_CPUS CPUs (2^29), a window at most 2^34 ns. */
	return (window_ns * rate) >> FDL_SHARE_SHIFT;
}

/* What elapsed_ns earns at g, at most two windows of it (more moves no budget further): elapsed * g. */
static inline u64 fdl_budget_earned(u64 elapsed_ns, u64 rate, u64 window_ns)
{
	if (elapsed_ns > 2 * window_ns)
		elapsed_ns = 2 * window_ns;
	return (elapsed_ns * rate) >> FDL_SHARE_SHIFT;
}

/*
 * The least a stretch of time must earn before it is taken (fdl_entity_budget): each stretch
 * taken drops the fraction of a nanosecond its product leaves. Taken at every look, every 100 ns
 * on a machine whose CPUs look that often, a guarantee of 0.05 CPU earned 80 % of its rate and
 * one of 100 shares 92 %; a stretch of at least 1024 ns earned loses under 0.1 %.
 */
#define FDL_EARN_MIN_NS		1024

/* The budget with `earned` (fdl_budget_earned) added, held within a window either way. */
static inline s64 fdl_budget_add(s64 budget, u64 earned, u64 rate, u64 window_ns)
{
	s64 cap = (s64)fdl_budget_cap(rate, window_ns);

	budget += (s64)earned;
	if (budget > cap)
		return cap;
	return budget < -cap ? -cap : budget;
}

static inline s64 fdl_budget_earn(s64 budget, u64 elapsed_ns, u64 rate, u64 window_ns)
{
	return fdl_budget_add(budget, fdl_budget_earned(elapsed_ns, rate, window_ns), rate, window_ns);
}

/*
 * The fair container's deadline is never more than its own deadline_rr behind:
 *
 *	dl = max(dl, vdt - rr)
 *
 * Fair work makes no promise; its deadline only places it among the containers. When the
 * guarantees take more than the machine leaves it, it is late for as long as that lasts; without
 * this floor its claim would grow without bound and, once the containers leave it room, shut
 * them out for as long. A container's miss moves vdt instead (fdl_miss_lag_step).
 */
static inline u64 fdl_dl_floor(u64 dl, u64 vdt, u64 rr_ns)
{
	return fdl_time_before(dl, vdt - rr_ns) ? vdt - rr_ns : dl;
}

/* A busy entity's deadline is never further than its deadline_rr ahead: min(dl, vdt + rr). */
static inline u64 fdl_dl_cap(u64 dl, u64 vdt, u64 rr_ns)
{
	return fdl_time_before(vdt + rr_ns, dl) ? vdt + rr_ns : dl;
}

/*
 * The order key of work with bucket dl: within its guarantee its deadline, never further than
 * deadline_rr ahead (the budget, not the bucket, says whether it used more than it is owed);
 * otherwise its key (fdl_dl_key) a tier back.
 */
static inline u64 fdl_order_key(u64 dl, u64 vdt, u64 rr_ns, int within)
{
	return within ? fdl_dl_cap(dl, vdt, rr_ns) : fdl_tier_key(fdl_dl_key(dl, vdt, rr_ns), 0);
}

/*
 * A deadline miss (vdt passed the earliest deadline min_dl): instead of letting everybody fall
 * further behind, move virtual deadline time back so that it stands just before min_dl, with a
 * margin of a quarter of the shortest deadline_rr:
 *
 *	vdt_lag += vdt - min_dl + max(min_rr / 4, 50 us)
 */
static inline u64 fdl_miss_lag_step(u64 vdt, u64 min_dl, u64 min_rr_ns)
{
	u64 margin = fdl_max(min_rr_ns / 4, FDL_MISS_MIN_NS);

	return vdt - min_dl + margin;
}

/*
 * ...and halve the spread of the deadlines around the new vdt v, so that an entity whose bucket
 * ran far ahead (it overran) does not stay behind the others for long once the machine is
 * overcommitted:
 *
 *	dl = v + (dl - v) / 2     for dl after v; a deadline at or before v stays
 */
static inline u64 fdl_dl_halve_spread_n(u64 dl, u64 v, u64 n);

static inline u64 fdl_dl_halve_spread(u64 dl, u64 v)
{
	return fdl_dl_halve_spread_n(dl, v, 1);
}

/*
 * n halvings at once, for an entity that missed n of them (each around the vdt of its own miss;
 * caught up around the latest's):
 *
 *	dl = v + (dl - v) / 2^n
 */
static inline u64 fdl_dl_halve_spread_n(u64 dl, u64 v, u64 n)
{
	return fdl_time_before(v, dl) ? v + ((dl - v) >> (n < 63 ? n : 63)) : dl;
}

/*
 * Wake-up CPU choice (the RFC's slack rule): a CPU running work with deadline victim_dl may be
 * preempted for a task with deadline task_dl only if its slack is more than 1.46 times the
 * task's, where slack is the time left to the deadline:
 *
 *	(victim_dl - vdt) > 1.46 * max(task_dl - vdt, 0)
 *
 * so that work almost as urgent as the task is not preempted for it.
 */
static inline int fdl_slack_allows(u64 victim_dl, u64 task_dl, u64 vdt)
{
	u64 task_slack = fdl_time_before(vdt, task_dl) ? task_dl - vdt : 0, victim_slack;

	if (!fdl_time_before(vdt, victim_dl))
		return 0;
	victim_slack = victim_dl - vdt;
	/* Work of a later tier (fdl_tier_key) may always be preempted; within a tier, its offset
	 * is no slack. */
	if (victim_slack >> FDL_TIER_SHIFT > task_slack >> FDL_TIER_SHIFT)
		return 1;
	return fdl_mul_div(victim_slack & FDL_TIER_MASK, FDL_SLACK_DEN, 1) >
	       fdl_mul_div(task_slack & FDL_TIER_MASK, FDL_SLACK_NUM, 1);
}

/*
 * The slack of order key dl at vdt: the time left to it within its tier, 0 for a key not after vdt
 * (what the deadline timer's delay and the lazy wait below are reckoned from):
 *
 *	slack = (dl - vdt) mod FDL_TIER_NS    for dl after vdt; else 0
 */
static inline u64 fdl_key_slack(u64 dl, u64 vdt)
{
	return fdl_time_before(vdt, dl) ? (dl - vdt) & FDL_TIER_MASK : 0;
}

/*
 * Lazy wake-up preemption (preempt.h's fdl_cpu_ends_soon): a waker whose deadline is slack away
 * (time left, within its tier) lets a busy CPU's work finish where that work, which usually runs
 * avg between wake-ups and has run ran since it woke, will sleep within the bound and within a
 * quarter of the waker's slack:
 *
 *	wait  <=>  avg > 0  and  ran < avg  and  avg - ran <= min(bound, slack / 4)
 *
 * (the quarter: the waker gives up at most that much of its slack to the wait; a deadline timer
 * half-way to its deadline stands behind it anyway). avg = 0 is work with no burst known yet, or
 * a busy loop that never slept: never waited for.
 */
static inline int fdl_lazy_wait(u64 avg, u64 ran, u64 bound, u64 slack)
{
	u64 left;

	if (!avg || ran >= avg)
		return 0;
	left = avg - ran;
	return left <= bound && left <= slack / 4;
}

/*
 * The fair container's bandwidth. Fair work holds the root weight that the active deadline
 * containers do not, F = W_root - W_deadline; its share is F / W_root. Boosted guarantees must
 * not squeeze it below its floor, the larger of its unboosted share (the deadline containers at
 * their cpu.weight, W_deadline_unboosted) and floor_permille of the machine:
 *
 *	share = max(F / W_root, F / (F + W_deadline_unboosted), floor_permille / 1000)
 *	bandwidth = share * nr_cpus
 *
 * With no fair weight active (F <= 0) the floor alone.
 */
static inline u64 fdl_fair_bw(s64 root_wsum, s64 dl_wsum, s64 dl_unboosted_wsum,
			      u32 floor_permille, u32 nr_cpus)
{
	s64 fair = root_wsum - dl_wsum;
	u64 share = FDL_SHARE_ONE * floor_permille / 1000;

	if (fair > 0) {
		share = fdl_max(share, fdl_share_of(FDL_SHARE_ONE, fair, root_wsum));
		if (dl_unboosted_wsum >= 0)
			share = fdl_max(share, fdl_share_of(FDL_SHARE_ONE, fair,
							    fair + dl_unboosted_wsum));
	}
	if (!share)
		share = 1;
	return fdl_bandwidth_cpus(fdl_min(share, FDL_SHARE_ONE), nr_cpus);
}

/*
 * Fair work's protected bandwidth: its share beside the deadline containers it is reckoned against
 * (W_protected, at their cpu.weight), never below floor_permille of the machine:
 *
 *	share = max(F / (F + W_protected), floor_permille / 1000),  F = the active fair weight
 *	bandwidth = share * nr_cpus
 *
 * fdl_fair_bw without its first term, the share at the weights active now: a guarantee is a budget
 * earned while its container sleeps, so the capacity it is owed is not fair work's meanwhile.
 */
static inline u64 fdl_fair_protected(s64 fair_wsum, s64 protected_wsum, u32 floor_permille,
				     u32 nr_cpus)
{
	s64 w = protected_wsum > 0 ? protected_wsum : 0;

	return fdl_fair_bw(fair_wsum + w, w, w, floor_permille, nr_cpus);
}

/*
 * Fair work's protected bandwidth under --fair-protection floor: what the deadline containers'
 * granted guarantees (at any depth, running or sleeping) leave of the machine, never below the
 * floor:
 *
 *	bandwidth = max(nr_cpus - granted, floor_permille / 1000 * nr_cpus)
 *
 * The control plane grants them at most nr_cpus less the floor together, so they always fit.
 */
static inline u64 fdl_fair_left(u64 granted, u32 floor_permille, u32 nr_cpus)
{
	u64 machine = (u64)nr_cpus << FDL_SHARE_SHIFT;
	u64 floor = fdl_bandwidth_cpus(FDL_SHARE_ONE * floor_permille / 1000, nr_cpus);

	return fdl_max(machine > granted ? machine - granted : 0, floor);
}

/*
 * The guarantees' scale (fixed point, FDL_SHARE_ONE: as granted) when the active guarantees ask
 * more than fair work leaves: the budgets of all guaranteed containers are earned at
 *
 *	rate * capacity / rate_sum,   capacity = nr_cpus - fair_cpus
 *
 * where rate_sum is their granted rates together and fair_cpus fair work's protected bandwidth
 * (fdl_fair_protected, 0 while no fair work is runnable). 0 means no scaling: they fit.
 */
static inline u64 fdl_budget_scale(u64 rate_sum, u64 fair_cpus, u32 nr_cpus)
{
	u64 machine = (u64)nr_cpus << FDL_SHARE_SHIFT;
	u64 capacity = machine > fair_cpus ? machine - fair_cpus : 0;

	if (rate_sum <= capacity)
		return 0;
	return fdl_max(fdl_mul_div(FDL_SHARE_ONE, capacity, rate_sum), 1);
}

/* A granted rate at a scale from fdl_budget_scale. */
static inline u64 fdl_budget_scaled(u64 rate, u64 scale)
{
	return scale ? (rate * scale) >> FDL_SHARE_SHIFT : rate;
}

/*
 * CPU limits (cpu.max), as the kernel's CFS bandwidth control (reference §4). A limit arrives in
 * microseconds; quota "max" arrives as all ones (anything of 2^44 us, half a year, or more is taken
 * for it) and is no limit, as is a zero quota or period.
 */
#define FDL_BW_QUOTA_MAX_US	(1ULL << 44)

static inline u64 fdl_bw_quota_ns(u64 period_us, u64 quota_us)
{
	if (!period_us || !quota_us || quota_us >= FDL_BW_QUOTA_MAX_US ||
	    period_us >= FDL_BW_QUOTA_MAX_US)
		return 0;
	return quota_us * 1000;
}

/* Whole periods from period_start to now (0 if now is not after it; wrap-safe). */
static inline u64 fdl_bw_periods(u64 period_start, u64 now, u64 period_ns)
{
	if (!period_ns || !fdl_time_before(period_start, now))
		return 0;
	return (now - period_start) / period_ns;
}

/*
 * The pool after `periods` period boundaries: each adds the quota, and the pool never holds more
 * than quota + burst, so unused quota carries over up to the burst (an overrun stays as debt).
 *
 *	runtime' = min(runtime + periods * quota, quota + burst)
 */
static inline s64 fdl_bw_refill(s64 runtime, u64 quota_ns, u64 burst_ns, u64 periods)
{
	s64 cap = (s64)(quota_ns + burst_ns);
	u64 gap;

	if (!periods || !quota_ns)
		return runtime;
	if (runtime >= cap)
		return cap;
	/* Enough periods to fill the pool: full (and no overflow however many there were). */
	gap = (u64)(cap - runtime);
	if (periods > gap / quota_ns)
		return cap;
	return runtime + (s64)(periods * quota_ns);
}

/*
 * Periods counted in nr_periods when `periods` boundaries pass at once, as the kernel counts them:
 * its period timer runs from the first use of the pool and stops after a period without any, so
 * every period of activity counts, and the first idle period after one.
 *
 *	active:      the period that closes first had use (or throttling)
 *	last_active: the period before it had
 */
static inline u64 fdl_bw_counted_periods(u64 periods, int active, int last_active)
{
	if (!periods)
		return 0;
	if (active)
		return 1 + (periods > 1);
	return last_active ? 1 : 0;
}

/*
 * A burst (cpu.stat's nr_bursts, burst_usec): a period that drew more than one quota from its
 * pool, which it can only by carrying over unused quota. pool is what the period started with;
 * what it used beyond that (an overrun of the last tick, repaid as debt) is not drawn from the
 * pool and is no burst.
 *
 *	burst = max(0, min(used, pool) - quota)
 */
static inline u64 fdl_bw_burst(u64 used_ns, s64 pool_ns, u64 quota_ns)
{
	u64 drawn = pool_ns > 0 ? fdl_min(used_ns, (u64)pool_ns) : 0;

	return drawn > quota_ns ? drawn - quota_ns : 0;
}

/*
 * Throttled time (cpu.stat's throttled_usec) as the kernel counts it: it throttles the cgroup's run
 * queue on each CPU and sums their throttled times, so a cgroup waiting on two CPUs is throttled
 * for twice the wall-clock time. Here held tasks wait off every CPU: each stands for one run queue,
 * and there are at most nr_cpus of those. Over a stretch of stretch_ns with nr_held tasks held:
 *
 *	throttled += stretch * min(nr_held, nr_cpus)
 */
static inline u64 fdl_bw_throttled_time(u64 stretch_ns, s64 nr_held, u32 nr_cpus)
{
	if (nr_held <= 0)
		return 0;
	return stretch_ns * fdl_min((u64)nr_held, nr_cpus ? nr_cpus : 1);
}

/*
 * A uniform draw r of 32 bits scaled to [0, n) without a division (Lemire's multiply-shift):
 *
 *	floor(r * n / 2^32)
 *
 * (r % n took a division on every wake-up that looked for a victim.)
 */
static inline u32 fdl_scale_random(u32 r, u32 n)
{
	return (u32)(((u64)r * n) >> 32);
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

/*
 * PELT, per-entity load tracking (kernel/sched/pelt.c), for the load balancer. Time is counted in
 * periods of 1024 us (ns >> 10 gives the "us" unit); what happened p periods ago weighs y^p, with
 *
 *	y^32 = 1/2,   sum over p >= 0 of 1024 * y^p = LOAD_AVG_MAX = 47742 (in this fixed point)
 *
 * An entity's sums add, for each period, the part of it (0..1024) during which it was runnable
 * (times a load: a weight or a count) or running; its averages are the sums over their maximum:
 *
 *	load_avg     = factor * load_sum / divider          (factor: a task's weight; 1 for a domain)
 *	runnable_avg = runnable_sum / divider               (scaled by FDL_PELT_SCALE)
 *	util_avg     = util_sum / divider                   (scaled by FDL_PELT_SCALE)
 *	divider      = LOAD_AVG_MAX - 1024 + period_contrib
 *
 * A blocked entity accumulates nothing: its sums only decay, by y^p when next updated.
 */
#define FDL_PELT_PERIOD		1024	/* us (2^10 ns units) in one period */
#define FDL_PELT_HALFLIFE	32	/* periods: y^32 = 1/2 */
#define FDL_PELT_SCALE		(1ULL << FDL_PELT_SHIFT)	/* SCHED_CAPACITY_SCALE (the shift: intf.h) */
#define FDL_LOAD_AVG_MAX	47742	/* the most a sum of 1024-us contributions reaches */

/* y^n * (2^32 - 1), n = 0..31: floor((2^32 - 1) * 2^(-n/32)). */
static const u32 fdl_pelt_y_inv[FDL_PELT_HALFLIFE] = {
	0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
	0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
	0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
	0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
};

/*
 * val * y^n: halved once per 32 periods, then times y^(n mod 32) in 32-bit fixed point
 * (val * m >> 32 in two 32x32 halves: BPF has no 128-bit product). Gone after 63 half-lives.
 */
static __always_inline u64 fdl_pelt_decay(u64 val, u64 n)
{
	u64 m;

	if (n > FDL_PELT_HALFLIFE * 63)
		return 0;
	val >>= n / FDL_PELT_HALFLIFE;
	m = fdl_pelt_y_inv[n % FDL_PELT_HALFLIFE];
	return (val >> 32) * m + (((val & 0xffffffffULL) * m) >> 32);
}

/*
 * The contribution of a stretch that crosses p > 0 period boundaries: d1 us that close the
 * period it began in (decayed p periods), p - 1 whole periods, and d3 us of the current one:
 *
 *	c = d1 * y^p + 1024 * sum_{k=1}^{p-1} y^k + d3
 *	  = d1 * y^p + (LOAD_AVG_MAX - LOAD_AVG_MAX * y^p - 1024) + d3
 */
static __always_inline u64 fdl_pelt_segments(u64 p, u64 d1, u64 d3)
{
	return fdl_pelt_decay(d1, p) +
	       (FDL_LOAD_AVG_MAX - fdl_pelt_decay(FDL_LOAD_AVG_MAX, p) - FDL_PELT_PERIOD) + d3;
}

/*
 * Bring an entity's sums to now_ns; over the stretch since its last update it held load (its
 * weight sum, or 1), runnable (a count) and running (0 or 1). The averages are the reader's
 * (fdl_pelt_avg): divisions stay off the hot path.
 */
static __always_inline void fdl_pelt_accumulate(struct fdl_pelt *sa, u64 now_ns, u64 load, u64 runnable,
				      u64 running)
{
	u64 delta, periods, contrib;

	if (!sa->last_update_ns || now_ns < sa->last_update_ns) {
		sa->last_update_ns = now_ns;	/* the first update, or a clock that went back */
		return;
	}
	delta = (now_ns - sa->last_update_ns) >> 10;
	if (!delta)
		return;
	sa->last_update_ns += delta << 10;
	delta += sa->period_contrib;
	periods = delta / FDL_PELT_PERIOD;
	contrib = delta;
	if (periods) {
		/*
		 * A sum of 0 stays 0 (a task's util, which is not kept), and a stretch that held
		 * nothing adds nothing (a task's sleep, at its wake-up): neither is computed.
		 */
		sa->load_sum = fdl_pelt_decay(sa->load_sum, periods);
		sa->runnable_sum = fdl_pelt_decay(sa->runnable_sum, periods);
		if (sa->util_sum)
			sa->util_sum = fdl_pelt_decay(sa->util_sum, periods);
		delta %= FDL_PELT_PERIOD;
		if (load || runnable || running)
			contrib = fdl_pelt_segments(periods, FDL_PELT_PERIOD - sa->period_contrib,
						    delta);
	}
	sa->period_contrib = delta;
	if (load)
		sa->load_sum += load * contrib;
	if (runnable)
		sa->runnable_sum += (runnable * contrib) << FDL_PELT_SHIFT;
	if (running)
		sa->util_sum += contrib << FDL_PELT_SHIFT;
}

/* The averages from the sums (above); factor scales load_avg (a task's weight, else 1). */
static __always_inline void fdl_pelt_avg(struct fdl_pelt *sa, u64 factor)
{
	u64 divider = FDL_LOAD_AVG_MAX - FDL_PELT_PERIOD + sa->period_contrib;

	sa->load_avg = factor * sa->load_sum / divider;
	sa->runnable_avg = sa->runnable_sum / divider;
	sa->util_avg = sa->util_sum / divider;
}

#endif /* __FDL_MATH_H */
