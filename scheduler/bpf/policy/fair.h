/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fair order: within a queue (the fair queue, or one deadline container's), tasks run in
 * weighted virtual time, vtime += runtime / share (fdl_vtime_delta), where the share is the
 * task's part of its queue: its part of the machine through the cgroup tree over its queue's
 * (fdl_task_share_in_queue_of). Each queue keeps its own clock, vtime_now (the latest
 * vtime one of its members started with); vtimes are compared only within one queue.
 */
#ifndef __FDL_POLICY_FAIR_H
#define __FDL_POLICY_FAIR_H

#include "cgroup.h"
#include "interactive.h"

/*
 * A task new to queue `queue` (clock e) starts at its clock: at a wake-up (fdl_fair_place_at), or
 * when its queue changed while it ran (fdl_charge).
 */
static __always_inline void fdl_fair_join(struct fdl_task *t, u64 queue, struct fdl_entity *e)
{
	if (t->vqueue == queue)
		return;
	t->vqueue = queue;
	t->vtime = e->vtime_now;
}

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
	fdl_fair_join(t, queue, e);
	t->vtime = fdl_vtime_floor(t->vtime, e->vtime_now, fdl_vtime_delta(fdl_wake_credit_ns(t), share));
}

/*
 * The share the credit is at: the task's own in its own cgroup's queue, else its cgroup's; with
 * its cgroup (cgref, record cg) and the root's weight sum at hand.
 */
static __always_inline u64 fdl_place_share_of(struct fdl_task *t, u64 queue, u64 cgref,
					      struct fdl_cgroup *cg, s64 root_wsum)
{
	return cgref == queue ? fdl_task_share_of(t, cgref, cg, root_wsum) :
			       fdl_task_cgroup_share_of(t, cgref, cg, root_wsum);
}

/*
 * The task's share of its queue (fixed point), what its vtime counts at, with its cgroup (cgref,
 * record cg), its container (top, id queue; NULL: the root's own queue, whose share is the
 * machine's) and the root's weight sum at hand. Task vtimes count CPU time at the task's share of
 * its queue, not of the machine:
 *
 *	vtime += runtime * share(queue) / share(task)
 *
 * A queue's share of the machine moves with everything runnable beside it (a shell's forks in
 * the root cgroup make the root's weight sum several times larger for a moment). Counted at their
 * machine share, the members of a queue that ran at such a moment were charged several times
 * their CPU time and the ones waiting were not, so the order among them followed who happened to
 * run when, not what each had had. Within its queue, a task's share moves only with the queue's
 * own members. (The root's own queue is the root's: its tasks' shares still move with the
 * first-level cgroups beside them, whose weights share the root's sum.)
 *
 * Computed as the product of its parts from its cgroup up to the container's members
 * (fdl_member_share_within): the levels above the container are in both shares and cancel out.
 * For a task in the container's own cgroup that is one division, its weight among the cgroup's
 * runnable members; the ratio of the two shares of the machine was two walks to the root and two
 * divisions more (the share arithmetic was an eighth of the instructions per task started).
 */
static __always_inline u64 fdl_task_share_in_queue_of(struct fdl_task *t, u64 queue, u64 cgref,
						      struct fdl_cgroup *cg, struct fdl_cgroup *top,
						      s64 root_wsum)
{
	if (!top || !cg)
		return fdl_task_share_of(t, cgref, cg, root_wsum);
	if (cgref == queue)
		return fdl_share_of(FDL_SHARE_ONE, t->weight, cg->wsum);
	return fdl_member_share_within(cgref, t->weight, queue);
}

/*
 * The share a waking task's credit is at within its queue (fdl_place_share_of, as a part of the
 * queue's share): its own in its container's own cgroup, else its cgroup's as
 * a whole, taken as fdl_task_share_in_queue_of takes it.
 */
static __always_inline u64 fdl_place_share_in_queue_of(struct fdl_task *t, u64 queue, u64 cgref,
						       struct fdl_cgroup *cg, struct fdl_cgroup *top,
						       s64 root_wsum)
{
	if (!top || !cg)
		return fdl_place_share_of(t, queue, cgref, cg, root_wsum);
	if (cgref == queue)
		return fdl_share_of(FDL_SHARE_ONE, t->weight, cg->wsum);
	return fdl_member_share_within(cg->parent_cgref, cg->contrib ?: cg->weight, queue);
}

/* fdl_fair_place_at in queue `queue`, of container top (NULL: the root's own queue). */
static __always_inline void fdl_fair_place(struct fdl_task *t, u64 queue, struct fdl_cgroup *top)
{
	u64 cgref = fdl_task_cgref(t);
	s64 root_wsum = fdl_root_wsum();

	fdl_fair_place_at(t, queue, fdl_queue_clock(top),
			  fdl_place_share_in_queue_of(t, queue, cgref, env_cgroup(cgref), top, root_wsum));
}

/*
 * The vtime to queue the task with (in container top's queue; NULL: the root's own): no further
 * than the starvation window past its queue's clock. The clock advances about as many ns per ns
 * as the CPUs the queue gets, its share of the nr_cpus when every queue gets its share, so this
 * is about starvation_ns of waiting.
 */
static __always_inline u64 fdl_fair_queue_vtime(struct fdl_task *t, struct fdl_cgroup *top)
{
	u64 window = tun.starvation_ns * (tun.nr_cpus ?: 1), vtime;

	if (top)
		window = fdl_max((window * fdl_cgroup_share(top)) >> FDL_SHARE_SHIFT, tun.slice_ns);
	vtime = fdl_vtime_cap(t->vtime, fdl_queue_clock(top)->vtime_now, window);

	if (vtime != t->vtime)
		stat_inc(nr_starvation_clamps);
	return vtime;
}

/*
 * How many starts of a queue's tasks a bound of its waiters' keys found by peeking is used for,
 * with several domains (fdl_queue_head_bound).
 */
#define FDL_HEAD_LB_USES	8

/*
 * A bound at or below the key of every task waiting in queue `queue` (slot s), in *head; false if
 * none waits. With one domain (or a queue not counted), its DSQ's head. With several, the least of
 * their heads is a peek per domain where a task waits (env_min_head_vtime: a DSQ lookup in the
 * kernel each), which grew with the machine: beside hackbench on 8 emulated vCPUs, 57 BPF
 * instructions per task started in 2 LLCs, 117 in 4, 251-271 in 8 (bench/insn-profile.sh --cpus 8
 * --llcs N antagonist=1, 2026-12-04). So the least head found is kept as the queue's bound
 * (qd->head_lb) for the next FDL_HEAD_LB_USES starts of its tasks that need it: a task queued
 * meanwhile with a lower key brings it down to that key (fdl_queued_add); a waiter taken meanwhile
 * leaves it below the least waiter, so the clock may lag by what those starts ran, never pass a
 * waiter. (Unless two CPUs race, one peeking while the other queues a lower key, and the peek's
 * result is written last: the clock may then pass that one waiter, for at most those starts.)
 */
static __always_inline bool fdl_queue_head_bound(u64 queue, u32 s, u64 *head)
{
	struct fdl_queued *qd;

	if (!s || env_nr_doms() <= 1)
		return env_min_head_vtime(queue, head, fdl_queued_doms(s));
	qd = fdl_queued_of(s);
	if (qd->head_lb_uses > 0) {
		qd->head_lb_uses--;
		*head = qd->head_lb;
		return true;
	}
	if (!env_min_head_vtime(queue, head, fdl_queued_doms(s)))
		return false;
	qd->head_lb = *head;
	qd->head_lb_uses = FDL_HEAD_LB_USES;
	return true;
}

/*
 * The task starts running, or is charged while it runs (queue: its queue, of container top): its
 * queue's clock moves up to it, but
 * never past the first task waiting in the queue (as CFS's min_vruntime: the least of the running
 * task's and the queue's first). At charges too, or a queue whose tasks keep their CPUs would keep
 * its clock where they started, and a task waking there would bring back credit for all that
 * time. Never past the first waiter, or one task of a tiny share (one of forty hackbench tasks in
 * a pod beside a pod with one probe) drags the clock far ahead with every tick it runs, and every
 * task that wakes is placed behind everything already waiting: measured, a probe in such a pod
 * waited 150 ms at p50 where EEVDF waits 1 ms. A global function (verified once: inlined in
 * ops.running and fdl_charge, its two ways to bound the clock multiplied their paths).
 */
FDL_GLOBAL int fdl_fair_started(struct fdl_task *t, u64 queue, struct fdl_cgroup *top, u32 took)
{
	struct fdl_entity *e = fdl_queue_clock(top);
	u64 v, head;
	u32 s;

	if (!t)
		return 0;
	v = t->vtime;
	/* The clock already at or past the task: nothing to move (and no DSQ to peek, a lookup). */
	if (t->vqueue != queue || !fdl_time_before(e->vtime_now, v))
		return 0;
	s = fdl_queued_slot_of(top);
	/*
	 * Taken as its queue's first waiter (ops.running: took, the slot it was counted in): the
	 * others wait at or after its key, which bounds the clock without a peek (a DSQ lookup by id
	 * in the kernel, about 325 ns in the 2-vCPU VM: bench/cost.sh with two more per start). Not
	 * past its key: where the starvation window capped it (fdl_fair_queue_vtime), the waiters
	 * behind it may be below its vtime.
	 */
	if (fdl_queued_took_first(took, s)) {
		if (fdl_time_before(t->queued_key, v))
			v = t->queued_key;
	} else if ((!s || *fdl_queued_nr(s) > 0) &&
		   fdl_queue_head_bound(queue, s, &head) && fdl_time_before(head, v)) {
		v = head;
	}
	if (fdl_time_before(e->vtime_now, v))
		e->vtime_now = v;
	return 0;
}

/*
 * How far ahead in vtime another domain's head of queue q must be to go before this domain's
 * (env_move_to_local): one slice of CPU time of a typical member, at its share of the queue,
 * 1 / the queue's runnable members (the root's own queue: a nice-0 task's share of the root), so
 * that vtimes across domains stay within a slice of each other. Compared with a slice of vtime
 * instead (a unit apart: a member of a sixteenth of its queue runs a slice in sixteen slices of
 * vtime), CPUs of 8 emulated ones took across domains for a sixteenth of a slice of difference.
 * With one domain: nothing to compare, 0.
 */
static __always_inline u64 fdl_queue_lead(u64 q)
{
	struct fdl_cgroup *cg;
	s64 n;

	if (env_nr_doms() <= 1)
		return 0;
	if (q == FDL_DSQ_FAIR)
		return fdl_vtime_delta(tun.slice_ns, fdl_share_of(FDL_SHARE_ONE, 100, fdl_root_wsum()));
	if (!(cg = env_cgroup(q)))
		return tun.slice_ns;
	n = cg->nr_active;
	return tun.slice_ns * (n > 1 ? (u64)n : 1);
}

#endif /* __FDL_POLICY_FAIR_H */
