// Native unit tests of scheduler/bpf/fdl_math.h: the same header the BPF program includes,
// compiled as ordinary C. Build and run: tests/native/run.sh
#include <stdio.h>
#include <string.h>

#include "fdl_math.h"

static int passed, failed;

#define CHECK_EQ(what, got, want)                                                            \
	do {                                                                                 \
		unsigned long long g_ = (got), w_ = (want);                                  \
		if (g_ == w_) {                                                              \
			passed++;                                                            \
		} else {                                                                     \
			failed++;                                                            \
			printf("FAIL %s: got %llu, want %llu (%s:%d)\n", what, g_, w_,      \
			       __FILE__, __LINE__);                                          \
		}                                                                            \
	} while (0)

static void test_share_of(void)
{
	const unsigned long long one = FDL_SHARE_ONE;

	CHECK_EQ("two equal siblings split evenly", fdl_share_of(one, 100, 200), one / 2);
	CHECK_EQ("weight 200 of 300 gets two thirds", fdl_share_of(one, 200, 300), one * 2 / 3);
	/* A (100) { A1 (300), A2 (100) } beside B (100): A1 = 1/2 * 3/4 = 0.375 */
	CHECK_EQ("nested A1 gets 0.375",
		 fdl_share_of(fdl_share_of(one, 100, 200), 300, 400), one * 3 / 8);
	CHECK_EQ("nested A2 gets 0.125",
		 fdl_share_of(fdl_share_of(one, 100, 200), 100, 400), one / 8);
	CHECK_EQ("a lone member keeps its parent's share", fdl_share_of(one / 4, 50, 50), one / 4);
	CHECK_EQ("sum not yet updated (0) counts the member alone", fdl_share_of(one, 100, 0), one);
	CHECK_EQ("negative sum mid-update counts the member alone", fdl_share_of(one, 100, -5), one);
	CHECK_EQ("sum below the member's weight counts it alone", fdl_share_of(one, 100, 60), one);
	CHECK_EQ("a share never reaches 0", fdl_share_of(1, 1, 10000), 1);
	CHECK_EQ("weight 0 keeps the parent's share", fdl_share_of(one, 0, 0), one);
}

static void test_vtime_delta(void)
{
	const unsigned long long one = FDL_SHARE_ONE;

	CHECK_EQ("the whole machine: vtime is wall time", fdl_vtime_delta(3000000, one), 3000000);
	CHECK_EQ("a quarter share: four times faster", fdl_vtime_delta(3000000, one / 4), 12000000);
	CHECK_EQ("half the weight, twice the vtime for the same run",
		 fdl_vtime_delta(1000000, fdl_share_of(one, 50, 200)),
		 2 * fdl_vtime_delta(1000000, fdl_share_of(one, 100, 200)));
	CHECK_EQ("share 0 is treated as the smallest share", fdl_vtime_delta(5, 0), 5ULL << 20);
	CHECK_EQ("a huge delta saturates instead of wrapping",
		 fdl_vtime_delta(FDL_U64_MAX / 2, 1), FDL_U64_MAX);
	CHECK_EQ("a large delta at a full share is exact",
		 fdl_vtime_delta(1ULL << 50, one), 1ULL << 50);
	CHECK_EQ("remainders are kept: 7 ns at a third", fdl_vtime_delta(7, one / 3),
		 (7ULL << 20) / (one / 3));
	/*
	 * The one-division form (delta below 2^44) against the two-part quotient and remainder it
	 * replaces, on either side of that bound and at shares from the smallest to the machine.
	 */
	{
		static const unsigned long long deltas[] = {
			1, 7, 999, 3000000, 123456789, (1ULL << 44) - 1, 1ULL << 44, (1ULL << 44) + 12345,
		};
		static const unsigned long long shares[] = { 1, 3, 1000, one / 3, one - 1, one, 3 * one + 7 };
		int bad = 0;

		for (unsigned i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++)
			for (unsigned j = 0; j < sizeof(shares) / sizeof(shares[0]); j++) {
				unsigned long long d = deltas[i], s = shares[j], q = d / s, r = d % s;
				unsigned long long want = q > (FDL_U64_MAX >> 20) ? FDL_U64_MAX :
							  (q << 20) + ((r << 20) / s);

				bad += fdl_vtime_delta(d, s) != want;
			}
		CHECK_EQ("one division where the shifted delta fits: the same as quotient and remainder",
			 bad, 0);
	}
}

static void test_time_order(void)
{
	CHECK_EQ("1 before 2", fdl_time_before(1, 2), 1);
	CHECK_EQ("2 not before 1", fdl_time_before(2, 1), 0);
	CHECK_EQ("equal is not before", fdl_time_before(5, 5), 0);
	CHECK_EQ("order holds across the u64 wrap", fdl_time_before(FDL_U64_MAX - 10, 5), 1);
	CHECK_EQ("and the other way round", fdl_time_before(5, FDL_U64_MAX - 10), 0);
}

static void test_floor_and_cap(void)
{
	const unsigned long long now = 1000000000ULL, lag = 3000000ULL, window = 2000000000ULL;

	CHECK_EQ("a long sleeper keeps only lag of credit", fdl_vtime_floor(0, now, lag), now - lag);
	CHECK_EQ("a recent sleeper keeps its vtime", fdl_vtime_floor(now - 1000, now, lag),
		 now - 1000);
	CHECK_EQ("a task ahead of now keeps its vtime (no jumping the queue)",
		 fdl_vtime_floor(now + 5, now, lag), now + 5);
	CHECK_EQ("floor across the wrap", fdl_vtime_floor(FDL_U64_MAX - 100, 50, 10), 40);
	CHECK_EQ("a task far ahead is capped at now + window",
		 fdl_vtime_cap(now + 10 * window, now, window), now + window);
	CHECK_EQ("a task within the window is untouched", fdl_vtime_cap(now + 7, now, window),
		 now + 7);
	/* now + window wraps to 99; 300 lies beyond it */
	CHECK_EQ("cap across the wrap", fdl_vtime_cap(300, FDL_U64_MAX - 100, 200), 99);
}

static void test_deadlines(void)
{
	const unsigned long long one = FDL_SHARE_ONE, vdt = 5000000000ULL;

	/* fill: one CPU of bandwidth, 970 us of running moves dl by 1024 us */
	CHECK_EQ("fill at one CPU", fdl_dl_fill(vdt, 970000, one), vdt + 1024000);
	CHECK_EQ("fill at half a CPU is twice as fast", fdl_dl_fill(0, 970000, one / 2), 2048000);
	CHECK_EQ("fill at two CPUs is half as fast", fdl_dl_fill(0, 970000, 2 * one), 512000);
	CHECK_EQ("bandwidth in CPUs", fdl_bandwidth_cpus(one / 4, 8), 2 * one);

	/* wake-up: clamp(dl, vdt + gdl, vdt + rr) */
	CHECK_EQ("an idle container's old deadline earns no credit",
		 fdl_dl_wakeup(vdt - 1000000000ULL, vdt, 100000, 200000), vdt + 100000);
	CHECK_EQ("a deadline inside the window is kept",
		 fdl_dl_wakeup(vdt + 150000, vdt, 100000, 200000), vdt + 150000);
	CHECK_EQ("an over-consumer is pulled back to vdt + rr",
		 fdl_dl_wakeup(vdt + 9000000, vdt, 100000, 200000), vdt + 200000);
	CHECK_EQ("no deadline_wakeup: gdl = rr", fdl_dl_wakeup(0, vdt, 0, 200000), vdt + 200000);
	CHECK_EQ("deadline_wakeup above rr acts as rr", fdl_dl_wakeup(0, vdt, 900000, 200000),
		 vdt + 200000);
	CHECK_EQ("wake-up clamp across the u64 wrap",
		 fdl_dl_wakeup(FDL_U64_MAX - 5, FDL_U64_MAX - 10, 100, 200), FDL_U64_MAX - 10 + 100);

	/* cap: min(dl, vdt + rr) */
	CHECK_EQ("cap pulls a far deadline in", fdl_dl_cap(vdt + 5000000, vdt, 1000000), vdt + 1000000);
	CHECK_EQ("cap keeps an early (late) deadline", fdl_dl_cap(vdt - 7, vdt, 1000000), vdt - 7);
	CHECK_EQ("floor lifts a deadline more than rr behind", fdl_dl_floor(vdt - 9000000, vdt, 5000000),
		 vdt - 5000000);
	CHECK_EQ("floor keeps a deadline less than rr behind", fdl_dl_floor(vdt - 7, vdt, 5000000), vdt - 7);
	CHECK_EQ("floor keeps a future deadline", fdl_dl_floor(vdt + 7, vdt, 5000000), vdt + 7);

	/* miss: vdt_lag += vdt - min_dl + max(rr / 4, 50 us) */
	CHECK_EQ("miss step with a 5 ms rr", fdl_miss_lag_step(vdt, vdt - 300000, 5000000),
		 300000 + 1250000);
	CHECK_EQ("miss step never below 50 us", fdl_miss_lag_step(vdt, vdt - 10, 100000), 10 + 50000);
	CHECK_EQ("after the step the missed deadline is rr/4 ahead of vdt",
		 fdl_time_before(vdt - fdl_miss_lag_step(vdt, vdt - 300000, 5000000), vdt - 300000), 1);
}

static void test_rfc_rules(void)
{
	const unsigned long long one = FDL_SHARE_ONE, v = 7000000000ULL;

	/* halving: dl = v + (dl - v) / 2 */
	CHECK_EQ("the spread is halved around v", fdl_dl_halve_spread(v + 8000000, v), v + 4000000);
	CHECK_EQ("a deadline at or before v stays", fdl_dl_halve_spread(v - 5, v), v - 5);

	/* run time until a target deadline: the inverse of the fill */
	CHECK_EQ("run time at one CPU: 1024 us of deadline is 970 us of running",
		 fdl_dl_run_time(v, v + 1024000, one), 970000);
	CHECK_EQ("twice the bandwidth, twice the run time",
		 fdl_dl_run_time(v, v + 1024000, 2 * one), 1940000);
	CHECK_EQ("already there: 0", fdl_dl_run_time(v + 10, v, one), 0);
	CHECK_EQ("fill then run time round-trips (to rounding, a few ns)",
		 3000000 - fdl_dl_run_time(v, fdl_dl_fill(v, 3000000, one / 3), one / 3) <= 4, 1);
	/* run time until the capped key, min(dl, vdt + rr), reaches a target */
	CHECK_EQ("a bucket below the cap: the bucket decides",
		 fdl_key_run_time(v, one, 4000000, v, v + 1024000), 970000);
	CHECK_EQ("a bucket 10 ms past the cap (4 ms): vdt + rr reaches a target 6 ms ahead in 2 ms",
		 fdl_key_run_time(v + 10000000, one, 4000000, v, v + 6000000), 2000000);
	CHECK_EQ("past the cap, a target before vdt + rr: no time",
		 fdl_key_run_time(v + 10000000, one, 4000000, v, v + 3000000), 0);
	CHECK_EQ("the later of the two: the bucket needs 3.88 ms, the cap 1 ms",
		 fdl_key_run_time(v + 1000000, one, 4000000, v, v + 5096000), 3880000);

	/* slack rule: victim slack > 1.46 x task slack */
	CHECK_EQ("20 ms of slack may be preempted for 4 ms", fdl_slack_allows(v + 20000000, v + 4000000, v), 1);
	CHECK_EQ("5 ms of slack may not be preempted for 4 ms", fdl_slack_allows(v + 5000000, v + 4000000, v), 0);
	CHECK_EQ("5.9 ms may be, for 4 ms", fdl_slack_allows(v + 5900000, v + 4000000, v), 1);
	CHECK_EQ("a late victim is never preempted by slack", fdl_slack_allows(v - 1, v - 100, v), 0);
	CHECK_EQ("a late task preempts anything with slack", fdl_slack_allows(v + 1, v - 100, v), 1);
	CHECK_EQ("slack: the time left within the tier", fdl_key_slack(fdl_tier_key(v + 3000000, 0), v), 3000000);
	CHECK_EQ("slack of a late key: none", fdl_key_slack(v - 1, v), 0);
	/* Lazy preemption: wait for work 200 us from its usual sleep, within 500 us and a quarter of the slack. */
	CHECK_EQ("work 200 us from its sleep, 2 ms of slack: waited for", fdl_lazy_wait(300000, 100000, 500000, 2000000), 1);
	CHECK_EQ("... but not with 500 us of slack (a quarter: 125 us)", fdl_lazy_wait(300000, 100000, 500000, 500000), 0);
	CHECK_EQ("... nor beyond the bound", fdl_lazy_wait(3000000, 100000, 500000, 20000000), 0);
	CHECK_EQ("no burst known (a busy loop): never", fdl_lazy_wait(0, 0, 500000, 20000000), 0);
	CHECK_EQ("past its usual burst: never", fdl_lazy_wait(300000, 300000, 500000, 20000000), 0);
	CHECK_EQ("a late waker (no slack): never", fdl_lazy_wait(300000, 299000, 500000, 0), 0);

	/* fair bandwidth with its floor */
	CHECK_EQ("no deadline work: fair has the machine", fdl_fair_bw(300, 0, 0, 50, 2), 2 * one);
	CHECK_EQ("equal weights: fair has half", fdl_fair_bw(200, 100, 100, 50, 2), one);
	CHECK_EQ("boosts cannot squeeze fair below its unboosted share",
		 fdl_fair_bw(100 + 2000, 2000, 200, 50, 2), fdl_fair_bw(300, 200, 200, 50, 2));
	CHECK_EQ("and never below the floor", fdl_fair_bw(1 + 100000, 100000, 100000, 50, 2),
		 2 * (one * 50 / 1000));
	CHECK_EQ("no fair weight active: the floor", fdl_fair_bw(100, 100, 100, 50, 2),
		 2 * (one * 50 / 1000));
	/* fair work's protected bandwidth: beside the containers it is reckoned against, at their weight */
	CHECK_EQ("protected: 300 beside 200 is 3/5 of 2 CPUs", fdl_fair_protected(300, 200, 50, 2),
		 fdl_fair_bw(500, 200, 200, 50, 2));
	CHECK_EQ("protected, no guarantee to reckon with: the machine", fdl_fair_protected(300, 0, 50, 2),
		 2 * one);
	CHECK_EQ("protected, never below the floor", fdl_fair_protected(1, 100000, 50, 2),
		 2 * (one * 50 / 1000));
	CHECK_EQ("protected, no fair weight active: the floor", fdl_fair_protected(0, 200, 50, 2),
		 2 * (one * 50 / 1000));

	/* key: within rr of vdt its deadline, beyond it after everything within */
	CHECK_EQ("within bandwidth: the deadline", fdl_dl_key(v + 3000000, v, 5000000), v + 3000000);
	CHECK_EQ("a late deadline stays", fdl_dl_key(v - 10, v, 5000000), v - 10);
	CHECK_EQ("a burst past rr: capped at vdt + rr", fdl_dl_key(v + 9000000, v, 5000000),
		 v + 5000000);
	CHECK_EQ("sustained overrun: after all within", fdl_dl_key(v + 60000000, v, 5000000),
		 v + 5000000 + FDL_OVER_NS);
	CHECK_EQ("a 20 ms entity within bandwidth goes before a 5 ms one that overran",
		 fdl_time_before(fdl_dl_key(v + 19000000, v, 20000000),
				 fdl_dl_key(v + 60000000, v, 5000000)), 1);

	/* which order keys overran their bandwidth (fdl_order_key: within, second tier, overrun) */
	CHECK_EQ("an overrun key is one", fdl_key_overrun(fdl_order_key(v + 60000000, v, 5000000, 0), v), 1);
	CHECK_EQ("a second-tier key within bandwidth is not",
		 fdl_key_overrun(fdl_order_key(v + 9000000, v, 5000000, 0), v), 0);
	CHECK_EQ("a first-tier key is not", fdl_key_overrun(fdl_order_key(v + 60000000, v, 5000000, 1), v), 0);
	CHECK_EQ("a late key is not", fdl_key_overrun(fdl_order_key(v - 1000, v, 5000000, 0), v), 0);

	/* mul_div */
	CHECK_EQ("mul_div exact", fdl_mul_div(1000000007ULL, 3, 7), 428571431ULL);
	CHECK_EQ("mul_div saturates", fdl_mul_div(1ULL << 62, 1ULL << 10, 1), FDL_U64_MAX);

	/* ilog2 (branch-free): 0 and 1, every power of two, and its neighbours, against a loop */
	{
		unsigned long long x;
		int i, d, bad = 0;

		for (i = 0; i < 64; i++) {
			for (d = -1; d <= 1; d++) {
				unsigned int want = 0;

				x = (1ULL << i) + (unsigned long long)(long long)d;
				for (unsigned long long y = x; y >>= 1;)
					want++;
				bad += fdl_ilog2(x) != want;
			}
		}
		bad += fdl_ilog2(0) != 0 || fdl_ilog2(~0ULL) != 63;
		CHECK_EQ("ilog2 of 0, 2^i - 1, 2^i and 2^i + 1 for every i, and of 2^64 - 1", bad, 0);
	}
	/* lowest set bit: every bit alone, and with every higher bit set too, against a loop */
	{
		int i, j, bad = 0;

		for (i = 0; i < 64; i++) {
			unsigned long long above = ~0ULL << i, x = 1ULL << i;

			for (j = 0; j < 64 && !((x >> j) & 1); j++)
				;
			bad += fdl_lowest_bit(x) != (unsigned int)j || fdl_lowest_bit(above) != (unsigned int)i;
		}
		bad += fdl_lowest_bit(0) != 0;
		CHECK_EQ("lowest set bit of 2^i and of ~0 << i for every i, and of 0", bad, 0);
	}
}

static void test_tiers_and_budget(void)
{
	const unsigned long long one = FDL_SHARE_ONE, v = 7000000000ULL, w = 100000000ULL;
	const long long half = (long long)(w / 2);	/* a window at 0.5 CPU: 50 ms */

	/* tiers: within the guarantee before everything else, whatever the deadlines */
	CHECK_EQ("a 20 ms key within its guarantee goes before a 1 ms key beyond one",
		 fdl_time_before(fdl_tier_key(v + 20000000, 1), fdl_tier_key(v + 1000000, 0)), 1);
	CHECK_EQ("within one tier, the earlier deadline first",
		 fdl_time_before(fdl_tier_key(v + 1000000, 0), fdl_tier_key(v + 2000000, 0)), 1);
	CHECK_EQ("an overrun key stays behind its tier",
		 fdl_time_before(fdl_tier_key(fdl_dl_key(v + 60000000, v, 5000000), 0),
				 fdl_tier_key(v + 5000000, 0)), 0);
	/* which tier a key is in, late or not */
	CHECK_EQ("a first-tier key is within", fdl_key_within(fdl_order_key(v + 60000000, v, 5000000, 1), v), 1);
	CHECK_EQ("a late first-tier key is within (93 ms behind vdt)",
		 fdl_key_within(fdl_order_key(v - 93000000, v, 1000000, 1), v), 1);
	CHECK_EQ("a second-tier key is not", fdl_key_within(fdl_order_key(v + 1000000, v, 5000000, 0), v), 0);
	CHECK_EQ("a late second-tier key is not (93 ms behind vdt)",
		 fdl_key_within(fdl_order_key(v - 93000000, v, 1000000, 0), v), 0);
	CHECK_EQ("an overrun key is not", fdl_key_within(fdl_order_key(v + 60000000, v, 5000000, 0), v), 0);
	/* slack within a tier ignores the tier's offset; across tiers, a later tier yields */
	CHECK_EQ("same tier: 5 ms of slack may not be preempted for 4 ms",
		 fdl_slack_allows(fdl_tier_key(v + 5000000, 0), fdl_tier_key(v + 4000000, 0), v), 0);
	CHECK_EQ("same tier: 20 ms may be, for 4 ms",
		 fdl_slack_allows(fdl_tier_key(v + 20000000, 0), fdl_tier_key(v + 4000000, 0), v), 1);
	CHECK_EQ("a later tier yields to a task within its guarantee, even with less slack",
		 fdl_slack_allows(fdl_tier_key(v + 1000000, 0), v + 20000000, v), 1);

	/* budget = clamp(budget + elapsed * g, -g * window, g * window) */
	CHECK_EQ("the cap is a window of the guarantee", fdl_budget_cap(one / 2, w), w / 2);
	CHECK_EQ("earned at the guarantee: 10 ms at 0.5 CPU is 5 ms",
		 fdl_budget_earn(0, 10000000, one / 2, w), 5000000);
	CHECK_EQ("held within a window", fdl_budget_earn(half - 1000, 10000000, one / 2, w), half);
	CHECK_EQ("a debt of more than a window is forgiven down to one",
		 fdl_budget_earn(-10 * half, 0, one / 2, w), (unsigned long long)-half);
	CHECK_EQ("a long sleep saves one window, no more", fdl_budget_earn(-half, ~0ULL >> 2, one / 2, w),
		 half);
	CHECK_EQ("no guarantee, no budget", fdl_budget_earn(0, 10000000, 0, w), 0);
	CHECK_EQ("512 CPUs, 10 s window: no overflow", fdl_budget_cap(512 * one, 10000000000ULL),
		 5120000000000ULL);
}

/* cpu.max arithmetic: the limit's units, period boundaries, the refill with burst and debt. */
static void test_bandwidth(void)
{
	const unsigned long long ms = 1000000ULL;

	CHECK_EQ("cpu.max 20000 100000: 20 ms per period", fdl_bw_quota_ns(100000, 20000), 20 * ms);
	CHECK_EQ("quota max (all ones) is no limit", fdl_bw_quota_ns(100000, ~0ULL), 0);
	CHECK_EQ("quota 0 is no limit", fdl_bw_quota_ns(100000, 0), 0);
	CHECK_EQ("period 0 is no limit", fdl_bw_quota_ns(0, 20000), 0);
	CHECK_EQ("a quota above the period (2 CPUs) is kept", fdl_bw_quota_ns(100000, 200000), 200 * ms);

	CHECK_EQ("no boundary yet", fdl_bw_periods(1000 * ms, 1099 * ms, 100 * ms), 0);
	CHECK_EQ("exactly at the boundary", fdl_bw_periods(1000 * ms, 1100 * ms, 100 * ms), 1);
	CHECK_EQ("three and a half periods", fdl_bw_periods(1000 * ms, 1350 * ms, 100 * ms), 3);
	CHECK_EQ("now before the start (another CPU moved it on)",
		 fdl_bw_periods(1000 * ms, 999 * ms, 100 * ms), 0);
	CHECK_EQ("across the clock's wrap", fdl_bw_periods(~0ULL - 50 * ms, 150 * ms, 100 * ms), 2);
	CHECK_EQ("period 0 never turns", fdl_bw_periods(0, 1000 * ms, 0), 0);

	CHECK_EQ("a used-up pool gets one quota", fdl_bw_refill(0, 20 * ms, 0, 1), 20 * ms);
	CHECK_EQ("unused quota is lost without burst", fdl_bw_refill(15 * ms, 20 * ms, 0, 1), 20 * ms);
	CHECK_EQ("with burst it carries over, up to quota + burst",
		 fdl_bw_refill(15 * ms, 20 * ms, 10 * ms, 1), 30 * ms);
	CHECK_EQ("idle periods fill the pool to quota + burst",
		 fdl_bw_refill(0, 20 * ms, 200 * ms, 5), 100 * ms);
	CHECK_EQ("... and no further", fdl_bw_refill(0, 20 * ms, 200 * ms, 50), 220 * ms);
	CHECK_EQ("debt is repaid first", fdl_bw_refill(-30 * ms, 20 * ms, 0, 1), (unsigned long long)(-10 * (long long)ms));
	CHECK_EQ("debt repaid over two periods", fdl_bw_refill(-30 * ms, 20 * ms, 0, 2), 10 * ms);
	CHECK_EQ("a lowered burst caps the pool at the next boundary",
		 fdl_bw_refill(80 * ms, 20 * ms, 0, 1), 20 * ms);
	CHECK_EQ("no boundary: unchanged", fdl_bw_refill(80 * ms, 20 * ms, 0, 0), 80 * ms);
	CHECK_EQ("a huge number of periods does not overflow",
		 fdl_bw_refill(-5 * ms, 20 * ms, 10 * ms, ~0ULL / 2), 30 * ms);

	CHECK_EQ("an active period counts", fdl_bw_counted_periods(1, 1, 0), 1);
	CHECK_EQ("the first idle period after an active one counts", fdl_bw_counted_periods(1, 0, 1), 1);
	CHECK_EQ("a second idle period does not", fdl_bw_counted_periods(1, 0, 0), 0);
	CHECK_EQ("an active period and the idle ones after: two", fdl_bw_counted_periods(5, 1, 0), 2);
	CHECK_EQ("idle periods after an idle one that followed activity: one",
		 fdl_bw_counted_periods(5, 0, 1), 1);
	CHECK_EQ("no boundary: none", fdl_bw_counted_periods(0, 1, 1), 0);
	CHECK_EQ("within the quota: no burst", fdl_bw_burst(20 * ms, 40 * ms, 20 * ms), 0);
	CHECK_EQ("beyond it, from a pool that carried quota over: the excess",
		 fdl_bw_burst(35 * ms, 40 * ms, 20 * ms), 15 * ms);
	CHECK_EQ("an overrun beyond the pool (debt) is no burst",
		 fdl_bw_burst(23 * ms, 20 * ms, 20 * ms), 0);
	CHECK_EQ("... nor from a pool in debt", fdl_bw_burst(5 * ms, -3 * (long long)ms, 20 * ms), 0);
	CHECK_EQ("drawn from the pool only: min(used, pool) - quota",
		 fdl_bw_burst(50 * ms, 30 * ms, 20 * ms), 10 * ms);
}

/* The guarantees' scale when they ask more than fair work's protected bandwidth leaves. */
static void test_budget_scale(void)
{
	const unsigned long long one = FDL_SHARE_ONE;

	CHECK_EQ("guarantees that fit are not scaled", fdl_budget_scale(one, one, 2), 0);
	CHECK_EQ("exactly fitting: not scaled", fdl_budget_scale(2 * one - one / 3, one / 3, 2), 0);
	/* 0.95 + 0.95 asked, fair work keeps 2/3 CPU: 4/3 left, scale 0.7018 */
	CHECK_EQ("overcommitted: scaled into what fair work leaves",
		 fdl_budget_scale(one * 19 / 10, one * 2 / 3, 2), one * (2 * one - one * 2 / 3) / (one * 19 / 10));
	CHECK_EQ("no fair work runnable: the whole machine", fdl_budget_scale(one * 19 / 10, 0, 2), 0);
	CHECK_EQ("fair work takes all: the smallest scale, never 0 (none)",
		 fdl_budget_scale(one, 2 * one, 2), 1);
	CHECK_EQ("scaled rate", fdl_budget_scaled(one, one / 2), one / 2);
	CHECK_EQ("scale 0 is none", fdl_budget_scaled(one, 0), one);
	/* --fair-protection floor */
	CHECK_EQ("floor: fair work keeps what the granted guarantees leave (2 - 1.76 CPUs)",
		 fdl_fair_left(one * 176 / 100, 50, 2), 2 * one - one * 176 / 100);
	CHECK_EQ("floor: no guarantee, the machine", fdl_fair_left(0, 50, 2), 2 * one);
	CHECK_EQ("floor: never below the floor (5 % of 2 CPUs)", fdl_fair_left(2 * one, 50, 2),
		 fdl_bandwidth_cpus(one * 50 / 1000, 2));
	CHECK_EQ("floor: granted beyond the machine, the floor", fdl_fair_left(3 * one, 50, 2),
		 fdl_bandwidth_cpus(one * 50 / 1000, 2));
}

static void test_classifier_math(void)
{
	CHECK_EQ("a new sample weighs a quarter", fdl_ewma(1000, 2000), 1250);
	CHECK_EQ("the average of a steady rate stays", fdl_ewma(4000, 4000), 4000);
	CHECK_EQ("samples of 0 decay it by a quarter each", fdl_ewma(fdl_ewma(1024, 0), 0), 576);
	CHECK_EQ("... down to 0", fdl_ewma(fdl_ewma(fdl_ewma(3, 0), 0), 0), 0);
	CHECK_EQ("100 wake-ups in one second: 100000 milli per second",
		 fdl_rate_milli(100, 1000000000ULL), 100000);
	CHECK_EQ("3 in 250 ms: 12 per second", fdl_rate_milli(3, 250000000ULL), 12000);
	CHECK_EQ("no time: no rate", fdl_rate_milli(5, 0), 0);
	CHECK_EQ("a count beyond the bound is held at it, no wrap",
		 fdl_rate_milli(~0ULL, 1000000000ULL), FDL_RATE_MAX_COUNT * 1000);
}

/* An entity brought to now and read, as policy/load.h's reader does: accumulate, then average. */
static void pelt_update(struct fdl_pelt *sa, u64 now_ns, u64 load, u64 runnable, u64 running,
			u64 factor)
{
	fdl_pelt_accumulate(sa, now_ns, load, runnable, running);
	fdl_pelt_avg(sa, factor);
}

/* PELT against the kernel's constants (reference §3): y^32 = 1/2, LOAD_AVG_MAX = 47742. */
static void test_pelt(void)
{
	const u64 US = 1000, MS = 1000 * US;
	struct fdl_pelt sa;
	u64 m = 0, prev = 1, i, t;

	/* y^32 = 1/2 (to the table's precision), y^64 = 1/4, gone after 63 half-lives. */
	CHECK_EQ("y^32 halves", fdl_pelt_decay(1ULL << 20, 32), (1ULL << 19) - 1);
	CHECK_EQ("y^64 quarters", fdl_pelt_decay(1ULL << 20, 64), (1ULL << 18) - 1);
	CHECK_EQ("y^0 keeps (less one unit)", fdl_pelt_decay(1000, 0), 999);
	CHECK_EQ("decayed away after 63 half-lives", fdl_pelt_decay(~0ULL, 32 * 63 + 1), 0);
	CHECK_EQ("a big value decays without overflow", fdl_pelt_decay(~0ULL, 32) >> 62, 1);
	/* The series max = max * y + 1024 settles at the kernel's LOAD_AVG_MAX. */
	for (i = 0; i < 1000 && m != prev; i++) {
		prev = m;
		m = fdl_pelt_decay(m, 1) + FDL_PELT_PERIOD;
	}
	CHECK_EQ("1024 * sum y^p = LOAD_AVG_MAX", m, FDL_LOAD_AVG_MAX);
	/* A stretch of one whole period that closed one period ago: 1024 * y, nothing between. */
	CHECK_EQ("one period's segments: d1 decayed once",
		 fdl_pelt_segments(1, FDL_PELT_PERIOD, 0), fdl_pelt_decay(FDL_PELT_PERIOD, 1));
	{
		/* y^3 * d1 + 1024 (y + y^2) + d3, the closed form within the fixed point's rounding */
		u64 got = fdl_pelt_segments(3, 100, 7), want = fdl_pelt_decay(100, 3) +
			  fdl_pelt_decay(1024, 1) + fdl_pelt_decay(1024, 2) + 7;

		CHECK_EQ("three periods' segments: d1 y^3 + 1024 (y + y^2) + d3",
			 got + 4 >= want && got <= want + 4, 1);
	}

	/*
	 * Always running for a second: util and runnable near 1024 (a little above it: the closed
	 * form of the segments rounds up, as the kernel's does), load near the weight.
	 */
	memset(&sa, 0, sizeof(sa));
	pelt_update(&sa, 1, 1, 1, 1, 100);
	for (t = 1; t <= 1000; t++)
		pelt_update(&sa, 1 + t * MS, 1, 1, 1, 100);
	CHECK_EQ("always running: util_avg ~ 1024", sa.util_avg >= 1000 && sa.util_avg <= 1030, 1);
	CHECK_EQ("always running: runnable_avg ~ 1024", sa.runnable_avg >= 1000, 1);
	CHECK_EQ("always runnable: load_avg ~ weight", sa.load_avg >= 97 && sa.load_avg <= 100, 1);
	/* Blocked for 32 periods (32 x 1024 x 1024 ns): everything halves. */
	pelt_update(&sa, 1 + 1000 * MS + 32 * 1024 * 1024, 0, 0, 0, 100);
	CHECK_EQ("blocked one half-life: util halves", sa.util_avg >= 490 && sa.util_avg <= 515, 1);
	CHECK_EQ("blocked one half-life: load halves", sa.load_avg >= 47 && sa.load_avg <= 51, 1);
	/* Blocked for a minute: nothing left. */
	pelt_update(&sa, 61000 * MS, 0, 0, 0, 100);
	CHECK_EQ("blocked a minute: util 0", sa.util_avg, 0);
	CHECK_EQ("blocked a minute: load 0", sa.load_avg, 0);

	/* Runs 1 ms, sleeps 3 ms, for two seconds: util near a quarter, whatever the steps. */
	memset(&sa, 0, sizeof(sa));
	pelt_update(&sa, 1, 0, 0, 0, 100);
	for (t = 0; t < 500; t++) {
		pelt_update(&sa, 1 + (4 * t + 1) * MS, 1, 1, 1, 100);
		pelt_update(&sa, 1 + (4 * t + 4) * MS, 0, 0, 0, 100);
	}
	CHECK_EQ("a quarter duty cycle: util ~ 256", sa.util_avg >= 236 && sa.util_avg <= 276, 1);
	CHECK_EQ("a quarter duty cycle: load ~ weight / 4", sa.load_avg >= 22 && sa.load_avg <= 28, 1);

	/* A domain's load sums its tasks' weights: two always runnable tasks of 100 and 300 -> 400. */
	memset(&sa, 0, sizeof(sa));
	pelt_update(&sa, 1, 400, 2, 0, 1);
	for (t = 1; t <= 1000; t++)
		pelt_update(&sa, 1 + t * MS, 400, 2, 0, 1);
	CHECK_EQ("a domain of weights 100 + 300: load ~ 400", sa.load_avg >= 390 && sa.load_avg <= 400, 1);
	CHECK_EQ("two tasks runnable: runnable ~ 2048", sa.runnable_avg >= 2000 && sa.runnable_avg <= 2060, 1);

	/* One update over 100 ms accumulates as a hundred of 1 ms (within rounding). */
	{
		struct fdl_pelt a, b;

		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		pelt_update(&a, MS, 1, 1, 1, 100);
		pelt_update(&b, MS, 1, 1, 1, 100);
		pelt_update(&a, 101 * MS, 1, 1, 1, 100);
		for (t = 2; t <= 101; t++)
			pelt_update(&b, t * MS, 1, 1, 1, 100);
		CHECK_EQ("split updates agree within 0.5 %",
			 a.util_sum * 1000 / b.util_sum >= 995 && a.util_sum * 1000 / b.util_sum <= 1005, 1);
	}
	/* A clock that went back is not a huge stretch. */
	memset(&sa, 0, sizeof(sa));
	pelt_update(&sa, 10 * MS, 1, 1, 1, 100);
	pelt_update(&sa, 5 * MS, 1, 1, 1, 100);
	CHECK_EQ("clock went back: nothing accumulated", sa.util_sum, 0);
}

/* The victim search's draw (fdl_scale_random): within [0, n), every value reached, evenly. */
static void test_scale_random(void)
{
	unsigned int n, r, hits[7] = { 0 }, i, max_ok = 1;

	CHECK_EQ("one CPU: always 0", fdl_scale_random(0xffffffffu, 1), 0);
	CHECK_EQ("the smallest draw gives 0", fdl_scale_random(0, 192), 0);
	CHECK_EQ("the largest draw gives n - 1", fdl_scale_random(0xffffffffu, 192), 191);
	CHECK_EQ("half way gives n / 2", fdl_scale_random(0x80000000u, 8), 4);
	for (n = 1; n <= 256; n++)
		for (r = 0; r < 0xffffffffu - 0x01000193u; r += 0x01000193u)
			if (fdl_scale_random(r, n) >= n)
				max_ok = 0;
	CHECK_EQ("never n or above, n up to 256", max_ok, 1);
	/* 7 CPUs, draws spread over the whole 32 bits: each CPU within 1 % of a seventh. */
	for (i = 0; i < 70000; i++)
		hits[fdl_scale_random(i * 61356u, 7)]++;
	for (i = 0; i < 7; i++)
		CHECK_EQ("7 CPUs drawn evenly", hits[i] > 9900 && hits[i] < 10100, 1);
}

int main(void)
{
	test_scale_random();
	test_pelt();
	test_classifier_math();
	test_budget_scale();
	test_bandwidth();
	test_tiers_and_budget();
	test_share_of();
	test_vtime_delta();
	test_time_order();
	test_floor_and_cap();
	test_deadlines();
	test_rfc_rules();
	printf("fdl_math: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
