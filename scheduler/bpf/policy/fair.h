/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fair order: within a queue (the fair queue, or one deadline container's), tasks run in
 * weighted virtual time, vtime += runtime / share (fdl_vtime_delta), where the share is the
 * task's part of the machine through the cgroup tree (fdl_task_share_of). Each queue keeps its own
 * clock, vtime_now (the latest vtime one of its members started with); vtimes are compared only
 * within one queue.
 */
#ifndef __FDL_POLICY_FAIR_H
#define __FDL_POLICY_FAIR_H

#include "cgroup.h"
#include "interactive.h"

/*
 * The task becomes runnable in queue `queue` (entity e): a task new to that queue starts at its
 * clock; one that slept keeps at most wakeup_lag_ns of CPU time of credit. Where cgroups share
 * the queue (pods in their parent's), it is counted at the task's cgroup's share, not its own:
 * the credit is the cgroup's as a whole, shared by its tasks. At its own share, each of a
 * cgroup's n tasks had n times the credit in vtime of a task alone in a sibling cgroup, and forty
 * hackbench tasks always woke ahead of one interactive task (VM: its p99 6.1 ms against EEVDF's
 * 1.7). Among the tasks of the queue's own cgroup, each task's own share bounds its credit.
 */
static __always_inline void fdl_fair_place_at(struct fdl_task *t, u64 queue, struct fdl_entity *e,
					      u64 share)
{
	if (t->vqueue != queue) {
		t->vqueue = queue;
		t->vtime = e->vtime_now;
	}
	t->vtime = fdl_vtime_floor(t->vtime, e->vtime_now, fdl_vtime_delta(fdl_wake_credit_ns(t), share));
}

/*
 * The share the credit is at: the task's own in its own cgroup's queue, else its cgroup's; with
 * its cgroup (cgid, record cg) and the root's weight sum at hand.
 */
static __always_inline u64 fdl_place_share_of(struct fdl_task *t, u64 queue, u64 cgid,
					      struct fdl_cgroup *cg, s64 root_wsum)
{
	return cgid == queue ? fdl_task_share_of(t, cgid, cg, root_wsum) :
			       fdl_task_cgroup_share_of(t, cgid, cg, root_wsum);
}

static __always_inline void fdl_fair_place(struct fdl_task *t, u64 queue, struct fdl_entity *e)
{
	u64 cgid = fdl_task_cgid(t);

	fdl_fair_place_at(t, queue, e, fdl_place_share_of(t, queue, cgid, env_cgroup(cgid),
							  fdl_root_wsum()));
}

/*
 * The vtime to queue the task with: no further than the starvation window past its queue's clock.
 * The clock advances about nr_cpus ns per ns when the runnable shares sum to one, so this is about
 * starvation_ns of waiting.
 */
static __always_inline u64 fdl_fair_queue_vtime(struct fdl_task *t, struct fdl_entity *e)
{
	u64 vtime = fdl_vtime_cap(t->vtime, e->vtime_now, tun.starvation_ns * (tun.nr_cpus ?: 1));

	if (vtime != t->vtime)
		stat_inc(nr_starvation_clamps);
	return vtime;
}

/*
 * The task starts running, or is charged while it runs: its queue's clock moves up to it, but
 * never past the first task waiting in the queue (as CFS's min_vruntime: the least of the running
 * task's and the queue's first). At charges too, or a queue whose tasks keep their CPUs would keep
 * its clock where they started, and a task waking there would bring back credit for all that
 * time. Never past the first waiter, or one task of a tiny share (one of forty hackbench tasks in
 * a pod beside a pod with one probe) drags the clock far ahead with every tick it runs, and every
 * task that wakes is placed behind everything already waiting: measured, a probe in such a pod
 * waited 150 ms at p50 where EEVDF waits 1 ms.
 */
static __always_inline void fdl_fair_started(struct fdl_task *t, u64 queue, struct fdl_entity *e)
{
	u64 v = t->vtime, head;

	/* The clock already at or past the task: nothing to move (and no DSQ to peek, a lookup). */
	if (t->vqueue != queue || !fdl_time_before(e->vtime_now, v))
		return;
	if (env_min_head_vtime(queue, &head) && fdl_time_before(head, v))
		v = head;
	if (fdl_time_before(e->vtime_now, v))
		e->vtime_now = v;
}

#endif /* __FDL_POLICY_FAIR_H */
