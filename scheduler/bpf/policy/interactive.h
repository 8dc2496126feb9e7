/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The best-effort tier's interactive classifier (seed 004, scx_bpfland; reference section 6),
 * inside each queue: which of a queue's tasks go ahead of the others. Off while
 * tun.interactive_ns is 0.
 *
 * A task's voluntary context switches are its wake-ups from sleep (ops.runnable with
 * SCX_ENQ_WAKEUP: a task that blocks is woken by whoever it waited for). They are counted over
 * windows of tun.interactive_window_ns; at the end of each window the task's rate, capped at
 * tun.interactive_max_rate per second, enters its average (fdl_ewma: 3/4 old + 1/4 new; the
 * first window's rate is taken as it is), and its average enters the moving threshold the same
 * way. A task is interactive from a wake-up on, unless its average is 0 or below the threshold;
 * one that has not closed a window yet is (an explicit wake-up counts, as in scx_bpfland). Work
 * that runs without sleeping closes its windows at its stops with a rate of 0 and turns batch.
 * With the cap, every task that sleeps at least max_rate times a second ranks alike: the
 * threshold, an average of capped averages, sits at or below the cap, so they are interactive,
 * and a task is batch only where it sleeps less often than the tasks around it.
 *
 * What it changes: an interactive task wakes with tun.interactive_ns more wake credit than batch
 * work (fdl_fair_place: its vtime no further behind its queue's clock than wakeup_lag_ns +
 * interactive_ns of CPU time at its share), so it goes ahead of the batch work waiting in its
 * queue, as scx_bpfland's priority queue goes before its regular queue, and a request longer than
 * a slice keeps its place after the slice. The credit is CPU time it is charged for like any
 * other: batch work of its queue waits behind one interactive task for at most about
 * wakeup_lag_ns + interactive_ns of its CPU time (scx_bpfland's starvation threshold), and a
 * task that asks more than its share spends its credit and runs at its share. The order between
 * cgroups is cgroup virtual time, which no task's credit moves; where cgroups share a queue (pods
 * in their parent's), the credit is counted at the cgroup's share, as the wake credit is.
 */
#ifndef __FDL_POLICY_INTERACTIVE_H
#define __FDL_POLICY_INTERACTIVE_H

#include "state.h"

/*
 * Close the task's window if it is over: its rate into its average, its average into the
 * threshold. A task whose average fell to 0 or below the threshold is batch from now on. The
 * threshold is one word written by every CPU without a lock: a moving average, where a lost
 * update is one sample fewer.
 */
static __always_inline void fdl_nvcsw_close(struct fdl_task *t, u64 now)
{
	u64 d, rate, thresh;

	if (!tun.interactive_ns)
		return;
	if (!t->nvcsw_at) {
		t->nvcsw_at = now;
		return;
	}
	d = now - t->nvcsw_at;
	if (d < tun.interactive_window_ns)
		return;
	rate = fdl_min(fdl_rate_milli(t->nvcsw, d), (u64)tun.interactive_max_rate * 1000);
	t->avg_nvcsw = t->nvcsw_windows ? fdl_ewma(t->avg_nvcsw, rate) : rate;
	t->nvcsw_windows = 1;
	t->nvcsw = 0;
	t->nvcsw_at = now;
	thresh = fdl_ewma(fdl.nvcsw_thresh, t->avg_nvcsw);
	fdl.nvcsw_thresh = thresh;
	if (!t->avg_nvcsw || t->avg_nvcsw < thresh)
		t->interactive = 0;
}

/* The task woke from sleep: count the switch, and classify it. */
static __always_inline void fdl_nvcsw_woken(struct fdl_task *t, u64 now)
{
	if (!tun.interactive_ns)
		return;
	t->nvcsw++;
	fdl_nvcsw_close(t, now);
	t->interactive = !t->nvcsw_windows ||
			 (t->avg_nvcsw && t->avg_nvcsw >= fdl.nvcsw_thresh);
	if (t->interactive)
		stat_inc(nr_interactive_wakeups);
}

/* CPU time of wake credit the task keeps: interactive work interactive_ns more. */
static __always_inline u64 fdl_wake_credit_ns(struct fdl_task *t)
{
	return tun.wakeup_lag_ns + (t->interactive ? tun.interactive_ns : 0);
}

#endif /* __FDL_POLICY_INTERACTIVE_H */
