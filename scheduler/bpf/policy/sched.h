/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scheduling events, composed from the tiers: what main.bpf.c's callbacks do, written against
 * env.h only, so that the native tests drive exactly this code.
 *
 * Order of work: earliest deadline first between the deadline entities that have queued work (each
 * deadline container, and all fair work as the fair container); within the chosen entity, the
 * task with the lowest vtime. The running task competes with the queues at every decision.
 */
#ifndef __FDL_POLICY_SCHED_H
#define __FDL_POLICY_SCHED_H

#include "fair.h"
#include "preempt.h"
#include "bandwidth.h"
#include "load.h"

static __always_inline void fdl_count_dispatch(u32 path)
{
	struct fdl_cpu_stats *s = env_stats();

	if (s && path < FDL_NR_DISPATCH)
		s->nr_dispatched[path]++;
}

/*
 * A nested container's (top's) work is its first-level ancestor's too: that ancestor's own queue
 * is served in the fair order only for what the subtree has not used. Under --fair-protection
 * floor, not its work within its guarantee: granted off the top of the machine (fair work keeps
 * what the grants leave), it is no part of the ancestor's fair share. Charged there, a pod
 * guaranteed 1 CPU under kubepods.slice (whose fair share was 0.5) kept kubepods.slice at the
 * starvation window's edge, moving with the fair clock, and its sibling pod, in kubepods.slice's
 * own queue, got 0.000 CPU in 5 s (bench/guest/nested-guarantee.sh, 2026-11-29). By default
 * (weighted) a guarantee is scaled into its weight share, which is its ancestors': charged there,
 * the ancestor gets its cpu.weight's share as a whole, as under EEVDF. Called for nested
 * containers only (fdl_charge). A global function: inlined into fdl_charge, the budget's reckoning
 * added 7k instructions to the verification of each program that charges (fdl_tick 28.7k ->
 * 35.3k; with this function 25.3k).
 */
FDL_GLOBAL int fdl_charge_first(struct fdl_cgroup *top, u64 delta, u64 now)
{
	struct fdl_cgroup *first;

	if (!top || (tun.fair_protect == FDL_FAIR_PROTECT_FLOOR && fdl_entity_within(&top->ent, now)))
		return 0;
	first = env_cgroup(top->top_cgref);
	if (!first || !first->has_dsq)
		return 0;
	__sync_fetch_and_add(&first->cvtime, fdl_vtime_delta(delta, fdl_cgroup_cv_share(first)));
	return 1;
}

/*
 * Charge the running task for the CPU time since it was last charged (exec: its CPU time as the
 * kernel counts it, env_task_exec): its vtime at its current share, its cgroup's usage, its
 * first-level cgroup's place in the fair order, and the bucket of the deadline entity it runs
 * under. Called on every tick as well as at stop and dispatch, so each stretch is charged at the
 * share and bandwidth that held during it. The CPU's record of what it runs is brought up to date
 * too, except when the task leaves the CPU (stays 0): by then a waking task may already have
 * claimed the CPU (fdl_on_enqueue), and its claim must stand.
 * The CPU limits above the task are charged too: 1 if one of them is now out of runtime. `now`
 * is the caller's (a clock read per call: scx_bpf_now is a kfunc). A global function: inlined
 * into fdl_prev_keeps, its paths multiplied the dispatcher's verification.
 *
 * The time charged is the kernel's, the CPU time cpu.stat counts, not the scheduler's clock
 * between its callbacks: a context switch's cost (the dispatch that chose the next task, among
 * others) is the kernel's charge to the task that follows, after ops.running read the clock. By
 * the clock, a container the timers switched often ran past its guarantee by what it was not
 * charged, and fair work lost that much of what the guarantees leave it (tests/vm/
 * fair-protection.sh under floor, 2026-12-04: the containers 0.7 and 0.8 % above their grants by
 * cpu.stat while exactly at them by the scheduler's count; fair work 0.204 CPU of its 0.242, 0.188
 * in a CI run on a noisy host, where the 4 ms container got 0.962 CPU of its 0.879).
 */
FDL_GLOBAL int fdl_charge(struct fdl_task *t, s32 cpu, int stays, u64 now, u64 exec)
{
	u64 delta, queue, bw, share, cgref;
	struct fdl_cgroup *cg, *top;
	s64 root_wsum = fdl_root_wsum();
	struct fdl_entity *e;
	struct fdl_cpu *cc;

	if (!t)
		return 0;
	delta = exec > t->exec_at ? exec - t->exec_at : 0;
	cgref = fdl_task_cgref(t);
	cg = env_cgroup(cgref);
	t->exec_at = exec;
	t->burst_ns += delta;
	queue = fdl_task_queue_of(t, cgref, cg, &top, &e, now);
	/*
	 * Its queue changed while it ran (its cgroup became a container): its vtime is counted in
	 * the new queue's clock from now. Left in the old one's, it was compared with the new queue's
	 * tasks across two clocks, and a pod's busy loop kept its CPU while the pod's other one, queued
	 * behind it, ran 25 ms in 15 s (bench/guest/nested-guarantee.sh, 2026-11-29).
	 */
	fdl_fair_join(t, queue, fdl_queue_clock(top));
	fdl_fair_started(t, queue, top, 0);
	share = fdl_task_share_in_queue_of(t, queue, cgref, cg, top, root_wsum);
	t->vtime += fdl_vtime_delta(delta, share);
	if (cg) {
		__sync_fetch_and_add(&cg->usage_ns, delta);
		fdl_sum_charge(cgref, cg, delta, 0);
	}
	/*
	 * All work moves its cgroup on in cgroup virtual time, a deadline container's too, however
	 * it got the CPU: the fair order then serves that container only up to its fair share.
	 */
	if (top)
		__sync_fetch_and_add(&top->cvtime, fdl_vtime_delta(delta, fdl_cgroup_cv_share(top)));
	else
		__sync_fetch_and_add(&fdl.root_cvtime,
				     fdl_vtime_delta(delta, fdl_cv_share_of(t->weight)));
	/*
	 * Taken by the fair order (or served as fair work beyond its guarantee: fdl_entity_orders),
	 * a deadline container's work fills both buckets: the fair
	 * container's, whose turn it took, and its own, against which its use is measured however it
	 * got the CPU (or its deadline would go stale while the fair order serves it, and its next
	 * pick by deadline would count as a long miss).
	 */
	if (top && e != &top->ent && top->ent.deadline_rr_ns)
		fdl_entity_fill(&top->ent, delta, fdl_entity_bw_of(top, &top->ent, root_wsum));
	bw = fdl_entity_bw_of(top, e, root_wsum);
	fdl_entity_fill(e, delta, bw);
	/*
	 * Its first-level ancestor's part (fdl_charge_first) after the fills: reckoning the budget
	 * starts a fresh bucket where the container is back within its guarantee, which a fill after
	 * it would spoil.
	 */
	if (top && top->level > 1)	/* the common case, a first-level one, without the call */
		fdl_charge_first(top, delta, now);
	/* Its container's guarantee is spent by all of its work, however it got the CPU. */
	if (top && top->ent.budget_rate)
		__sync_fetch_and_sub(&top->ent.budget_ns, (s64)delta);
	/* Fair work's budget (fdl_fair_set_rate) by fair work only, not a container in its turn. */
	else if (e == &fdl.fair && !t->via_fair && fdl.fair.budget_rate)
		__sync_fetch_and_sub(&fdl.fair.budget_ns, (s64)delta);
	if (stays && (cc = env_cpu(cpu)))
		fdl_cpu_set(cc, fdl_entity_id(e, queue), queue, e->dl, now, bw, e->deadline_rr_ns,
			    fdl_entity_budget_left(e, now));
	return fdl.counters.nr_limited && fdl_bw_charge(cgref, delta, now);
}

/*
 * A held task's blocker refills at `at`: make sure the hold timer fires by then. fdl.hold_next is
 * the earliest time it is armed for (0: not armed); only the CPU that lowers it arms the timer.
 * Call after the task is in the hold queue: the timer's pass then sees it.
 */
static __always_inline void fdl_hold_until(u64 at, u64 now)
{
	u64 cur;
	int i;

	env_mb();
	fdl_for(i, 0, 4) {
		cur = fdl.hold_next;
		if (cur && cur <= at)
			return;
		if (__sync_bool_compare_and_swap(&fdl.hold_next, cur, at)) {
			env_arm_hold(at > now ? at - now : 0);
			return;
		}
	}
}

/*
 * May the task start without passing the queues (select_cpu's idle CPU, enqueue's victim)? Not
 * while a CPU limit above it is out of runtime: it must be held. Returns the cgroup whose limit
 * blocks it (fdl_bw_held takes it when the task is held), 0 if none.
 */
static __always_inline u64 fdl_bw_blocked(struct fdl_task *t, u64 now, u64 *release_at)
{
	return fdl.counters.nr_limited ? fdl_bw_blocker(fdl_task_cgref(t), now, release_at) : 0;
}

/*
 * The task goes to the hold queue, blocked by cgroup `blocker`'s limit: while held it leaves its
 * cgroups' sums (their wsum and active counts), as the kernel's throttled cfs_rq leaves its
 * parent's load, and fdl_task_unhold counts it again. Counted while held, a throttled cgroup kept
 * its weight in its parent's sum: a deadline container beside it in a pod took its share of the
 * machine as if the throttled sibling could run, 0.63 CPU where the pod's limit left it 0.9, and
 * 0.38 beside a sibling three times as heavy (test_throttled_cgroup_leaves_its_parents_weights).
 *
 * Another CPU holds it (its dispatcher: main.bpf.c's move_unblocked_dom) or releases it (the hold
 * timer) while its own CPU may take it out of the scheduler (fdl_on_quiescent: a property change
 * requeues a held task too). The flag therefore lives in acct_cgref, changed only by
 * compare-and-swap here and by an exchange there, so that exactly one of them takes the weight out. A container whose
 * last task is released wakes as from sleep (fdl_cgroup_propagate): its deadline is clamped to
 * the wake-up's, so time spent throttled is not counted late against it, and it gets the fair
 * order's wake credit, as an unthrottled group in EEVDF keeps its (bounded) lag.
 */
static __always_inline void fdl_task_hold(struct fdl_task *t, u64 blocker, u64 now)
{
	u64 c = t->acct_cgref;

	fdl_bw_held(t, blocker, now);
	if (c && !(c & FDL_ACCT_HELD) &&
	    __sync_bool_compare_and_swap(&t->acct_cgref, c, c | FDL_ACCT_HELD))
		fdl_cgroup_propagate(c, -(s64)t->acct_weight, -1, 0);
}

/* The task is no longer held (released, or queued again unblocked): counted in its cgroups again. */
static __always_inline void fdl_task_unhold(struct fdl_task *t, u64 now)
{
	u64 c = t->acct_cgref;

	fdl_bw_unheld(t, now);
	if ((c & FDL_ACCT_HELD) &&
	    __sync_bool_compare_and_swap(&t->acct_cgref, c, c & ~FDL_ACCT_HELD))
		fdl_cgroup_propagate(c & ~FDL_ACCT_HELD, t->acct_weight, 1, fdl_vdt(now));
}

/*
 * The hold timer looks at a held task: if no limit above it blocks it any longer, true, with the
 * queue and vtime to put it back with, and the slot to count it in (fdl_queued_add, before the
 * move, once its domain is known); else false and when to look again.
 */
static __always_inline bool fdl_bw_release_task(struct fdl_task *t, u64 now, u64 *queue,
						u64 *vtime, u32 *slot, u64 *at)
{
	struct fdl_cgroup *top;
	struct fdl_entity *e;
	u64 blocker = fdl_bw_blocked(t, now, at);

	if (blocker) {
		fdl_task_hold(t, blocker, now);	/* still held, perhaps by another limit now */
		return false;
	}
	fdl_task_unhold(t, now);
	*queue = fdl_task_queue(t, &top, &e, now);
	if (t->vqueue != *queue)
		fdl_fair_place(t, *queue, top);
	*vtime = fdl_fair_queue_vtime(t, top);
	*slot = fdl_queued_slot_of(top);
	return true;
}

/*
 * The task became runnable (woken, created, moved in), however it will reach a CPU: count it in
 * its cgroups (a deadline container that thereby wakes starts a new bucket), in the fair
 * container, and place it in its queue's vtime order. Woken from sleep (not created or moved in):
 * a voluntary switch, counted by the interactive classifier.
 */
static __always_inline void fdl_on_runnable(struct fdl_task *t, u32 weight, bool woken)
{
	u64 now = env_now(), vdt = fdl_vdt(now), queue, cgref;
	struct fdl_cgroup *top, *cg;
	bool rewake = false;
	struct fdl_entity *e;
	s64 root_wsum;

	t->weight = weight;
	if (woken)
		fdl_nvcsw_woken(t, now);
	t->via_fair = 0;
	t->burst_ns = 0;
	t->started = 0;
	if (!t->acct_cgref) {
		cgref = env_cgroup(t->cgref) ? t->cgref : FDL_ROOT_CGREF;
		t->acct_cgref = cgref;
		t->acct_weight = weight;
		/* Counted whether or not woken from sleep: propagate first. */
		rewake = !fdl_cgroup_propagate(cgref, weight, 1, vdt) && woken;
		stat_inc(nr_became_runnable);
	}
	cgref = fdl_task_cgref(t);
	cg = env_cgroup(cgref);
	root_wsum = fdl_root_wsum();
	queue = fdl_task_queue_of(t, cgref, cg, &top, &e, now);
	/*
	 * A further task of an active container woke: one more credit from its reserve (not a
	 * task created or moved in, nor the requeue of a property change).
	 */
	if (rewake && top)
		fdl_container_rewake(top);
	if (e == &fdl.fair && !t->fair_counted) {
		t->fair_counted = 1;
		if (__sync_fetch_and_add(&fdl.fair.nr_runnable, 1) == 0)
			fdl_entity_wake(&fdl.fair, vdt);
	}
	/*
	 * The root's own tasks wake as one cgroup, at a fair clock at most a slice stale: they have
	 * no activation of their own (fdl_cgroup_propagate's refresh), and a kworker wakes too often
	 * for a walk of the active containers each time. At a clock left where it was while a cgroup
	 * ran alone, two busy loops of the root's took both CPUs from it for as long as it had had
	 * them (test_root_tasks_wake_at_a_fresh_clock).
	 */
	if (!top) {
		if (!fdl_time_before(now, fdl.cvtime_refreshed_at + tun.slice_ns))
			fdl_fair_clock_refresh(now);
		fdl_cgroup_wake(&fdl.root_cvtime, fdl_cv_share_of(t->weight));
	}
	fdl_fair_place_at(t, queue, fdl_queue_clock(top),
			  fdl_place_share_in_queue_of(t, queue, cgref, cg, top, root_wsum));
}

/* The task is no longer runnable (slept, exited, left scx): uncount it. */
static __always_inline void fdl_on_quiescent(struct fdl_task *t)
{
	u64 c;

	fdl_queued_del(t);
	fdl_bw_unheld(t, env_now());
	/* An exchange: a CPU holding or releasing it meanwhile finds 0 and leaves the sums alone. */
	if ((c = __sync_lock_test_and_set(&t->acct_cgref, 0))) {
		if (!(c & FDL_ACCT_HELD))	/* held, its weight left the sums already */
			fdl_cgroup_propagate(c, -(s64)t->acct_weight, -1, 0);
		stat_inc(nr_stopped_runnable);
	}
	if (t->fair_counted) {
		t->fair_counted = 0;
		__sync_fetch_and_sub(&fdl.fair.nr_runnable, 1);
	}
}

/*
 * Has container top used no more than its fair share: is its cgroup virtual time at most
 * wakeup_lag_ns of CPU time at its fair share past the fair clock? (About the credit a waking
 * cgroup gets.) A global function: its walk up the tree is verified once, not on every path of
 * the callers.
 */
FDL_GLOBAL int fdl_near_front(struct fdl_cgroup *top)
{
	u64 front;

	if (!top)
		return 0;
	front = fdl.cvtime_now + fdl_vtime_delta(tun.wakeup_lag_ns, fdl_cgroup_cv_share(top));
	return !fdl_time_before(front, top->cvtime);
}

/*
 * May a deadline container (order key `key`) compete by its deadline? Within its guarantee (the
 * first tier) it always may; beyond it (a tier back), only within its bandwidth and while it has
 * used no more than its fair share (fdl_near_front); otherwise only the fair order serves it. Its
 * deadline bandwidth is its share among the cgroups active at each moment, so it could take more
 * than its fair share over time by running while the others sleep: in overload (the matrix's
 * spin10 cell) the 4 ms container took 0.65 CPU of its 0.5 while the cgroup without parameters
 * got 0.41 (simulation) and waited 260 ms at p99 (VM). The test beyond the guarantee is a global
 * function (fdl_near_front's walk verified once), called only there: most calls are within.
 */
FDL_GLOBAL int fdl_may_compete_beyond(u64 cgref, u64 key, u64 vdt)
{
	struct fdl_cgroup *top;

	if (fdl_key_overrun(key, vdt) || !(top = env_cgroup(cgref)))
		return 0;
	return fdl_near_front(top);
}

static __always_inline bool fdl_may_compete(u64 cgref, u64 key, u64 vdt)
{
	return fdl_key_within(key, vdt) || fdl_may_compete_beyond(cgref, key, vdt);
}

/*
 * Does a task of deadline entity e (of first-level cgroup top), whose key is *dl, claim a CPU as
 * fair work instead? Yes when e is a deadline container that stands near the front of the fair
 * order (its cgroup virtual time at most wakeup_lag_ns of CPU time at its fair share past the
 * fair clock: about the credit a waking cgroup gets, so a container that uses no more than its
 * fair share qualifies and one that used more does not) and the fair container's deadline is the
 * earlier; *dl is then that deadline. The dispatcher's scan makes the same choice for queued
 * work; this is the same choice for work that wakes (to preempt by) and work that starts on an
 * idle CPU (to be preempted by). Without it a loose deadline made its container everyone's victim: preempted by
 * fair work and by every tighter deadline, preempting no one, worse off than with no deadline.
 */
static __always_inline bool fdl_fair_claim(struct fdl_cgroup *top, struct fdl_entity *e, u64 vdt,
					   u64 *dl)
{
	u64 fair_dl;

	if (!top || e == &fdl.fair)
		return false;
	/* The deadlines first: the cheaper test (fdl_near_front is a call), false more often. */
	fair_dl = fdl_fair_order(vdt);
	if (!fdl_time_before(fair_dl, *dl) || !fdl_near_front(top))
		return false;
	*dl = fair_dl;
	return true;
}

/*
 * select_cpu put the task straight on an idle CPU's local queue. Until it starts there, the CPU's
 * record still shows the work that ran last, with its bucket filled by all the time since: to a
 * waker it looked like a CPU busy with plenty of slack, and the waker queued behind the task (two
 * workers woken together: the second waited out the first's whole spin). Claim the record for
 * the task's entity at once, at vdt, so that nobody preempts a CPU that is only starting its work;
 * fdl_on_running writes the real deadline.
 */
static __always_inline void fdl_idle_pick(struct fdl_task *t, struct fdl_cpu *cc, u64 now)
{
	u64 queue;
	struct fdl_cgroup *top;
	struct fdl_entity *e;

	queue = fdl_task_queue(t, &top, &e, now);
	fdl_cpu_set(cc, fdl_entity_id(e, queue), queue, fdl_vdt(now), now, fdl_entity_bw(top, e),
		    e->deadline_rr_ns, fdl_entity_budget_left(e, now));
	fdl_cpu_burst(cc, now, 0, 0, 0);
	cc->has_next = 0;
	cc->picked = 0;
	cc->fair_pick = 0;
	cc->pick_q = 0;
}

/* fdl_idle_pick for CPU cpu. */
static __always_inline void fdl_on_idle_pick(struct fdl_task *t, s32 cpu, u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	if (cc)
		fdl_idle_pick(t, cc, now);
}

/*
 * How long a CPU leaves the queues to a task select_cpu put on its local queue that has not
 * arrived yet (fdl_local_pending), and how long a CPU woken for queued work counts as taken by
 * it (fdl_idle_free): far longer than a wake-up interrupt takes (a few us; about 0.1 ms on the
 * emulated VM), so that a task or kick the kernel sent elsewhere after all holds nothing up for
 * long.
 */
#define FDL_LOCAL_WAIT_NS	(1000 * 1000ULL)

/* Wake cpu (preempt: end its slice) for work that waits in the queues. */
static __always_inline void fdl_kick_for_queued(s32 cpu, bool preempt, u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	if (cc)
		cc->claimed_at = now ?: 1;
	env_kick(cpu, preempt);
}

/*
 * May select_cpu put a waking task on idle CPU cpu's local queue, where only cpu takes it? Not
 * if cpu was woken for queued work that it has not started yet: its idle bit stays set until it
 * leaves idle, after its dispatcher chose that work, and a task bound to it then waits behind that
 * work while another CPU may idle (trace of 2026-11-27, 33.100747: a worker claimed CPU 0, kicked
 * for the other worker 0.15 ms before, and waited out that one's 3 ms spin; CPU 1 idled
 * meanwhile). Nor if select_cpu gave it a task that has not started yet (fdl_on_select_idle):
 * woken before that task reached its local queue, its dispatcher found nothing there, and it went
 * idle again with its idle bit set, which the next waker's select_cpu took as well (trace of
 * 2026-11-28, 11.717520: a message thread's two workers both bound to CPU 0, the second waited
 * out the first's 3 ms spin while CPU 1 idled: four of the first five of the 15 workers' waits
 * over 2 ms with a CPU idle over 0.5 ms of it in that trace, bench/start-trace.py). Such a task
 * goes through ops.enqueue, on that CPU, which then looks at the queues (a task queued on an idle
 * CPU reschedules it): it waits in its queue for whichever CPU looks first. Not freed by a
 * dispatch that found nothing: the kick or the task may still be on its way (woken as a victim
 * while busy, the CPU looked before the work was queued, went idle, and the kick came after).
 * Its idle bit is claimed by select_cpu: not given to another task.
 */
static __always_inline bool fdl_idle_free(s32 cpu, u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	return !cc || !cc->claimed_at || !fdl_time_before(now, cc->claimed_at + FDL_LOCAL_WAIT_NS);
}

/*
 * select_cpu put the task on idle CPU cpu's local queue (fdl_on_idle_pick), where it arrives when
 * the wake-up is done, on that CPU (ttwu's wake list: an interrupt). Until then the CPU is
 * promised to it (fdl_local_pending).
 */
static __always_inline void fdl_on_select_idle(struct fdl_task *t, s32 cpu, u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	if (!cc)
		return;
	fdl_idle_pick(t, cc, now);
	cc->local_since = cc->claimed_at = now ?: 1;
}

/*
 * Does cpu's dispatcher leave the queues alone because a task is on its way to its local queue?
 * The local queue goes first, but only once the task is in it: a CPU woken meanwhile for queued
 * work (a waker's kick, the idle CPU it claimed still had its bit set) took that work, and the
 * task select_cpu gave it waited behind it, bound to that CPU, while another CPU idled (trace of
 * 2026-11-27, 26.674245: a fdl worker waited out a 3 ms spin beside an idle CPU; 29 of the 31 fdl
 * wake-ups that waited over 2.5 ms in that trace had this shape). Left in the queue, the other
 * work goes to the next CPU that looks. Once per promise: a CPU kicked again takes queued work.
 */
static __always_inline bool fdl_local_pending(struct fdl_cpu *cc, u64 now)
{
	u64 since = cc->local_since;

	if (!since)
		return false;
	cc->local_since = 0;
	return fdl_time_before(now, since + FDL_LOCAL_WAIT_NS);
}

/*
 * The task must wait for a CPU. An idle CPU is woken for it; otherwise, if a busy CPU runs work
 * with a later deadline and enough slack, the task preempts it; otherwise it joins its queue, and
 * if a CPU runs later work with too little slack to preempt now, a timer preempts it before the
 * task's deadline.
 */
static __always_inline void fdl_on_enqueue(struct task_struct *p, struct fdl_task *t, u64 flags)
{
	u64 now = env_now(), vdt = fdl_vdt(now), queue, entity, own, dl, vtime, fair_pick = 0;
	struct fdl_entity *e;
	struct fdl_cgroup *top;
	struct fdl_cpu *cc;
	s32 cpu, later = -1, victim = -1, cross = -1, sibling = -1, kick = -1;
	u64 cross_ns = 0, blocker, lend;
	s64 left;
	bool fair_victim = false, compete, preempt = false, bound;
	u32 dom;

	t->enqueued_at = now;
	t->via_fair = 0;	/* it waits under its own deadline entity */
	if ((blocker = fdl_bw_blocked(t, now, &dl))) {
		/* A limit above it is out of runtime: it waits for the refill, in the hold queue. */
		env_hold(p, tun.slice_ns, flags);
		fdl_task_hold(t, blocker, now);
		fdl_hold_until(dl, now);
		stat_inc(nr_held);
		return;
	}
	/* Queued again, no longer blocked, while held (a property change requeues it): counted again. */
	fdl_task_unhold(t, now);
	/*
	 * SCX_ENQ_LAST (SCX_OPS_ENQ_LAST, so that a throttled task does not keep its CPU): the
	 * dispatcher found nothing else for this CPU. The task competes as any other, and the CPU,
	 * on its way to idle, is kicked so that its dispatcher looks again.
	 */
	if (flags & FDL_ENQ_LAST)
		env_kick_self();
	queue = fdl_task_queue(t, &top, &e, now);
	if (t->vqueue != queue)	/* its queue changed while it was runnable */
		fdl_fair_place(t, queue, top);
	entity = own = fdl_entity_id(e, queue);
	/* Its guarantee's budget read once, for its order and for a CPU it claims below. */
	left = fdl_entity_budget_left(e, now);
	dl = fdl_entity_order_within(e, vdt, left > 0);
	vtime = fdl_fair_queue_vtime(t, top);
	if (fdl_fair_claim(top, e, vdt, &dl)) {
		e = &fdl.fair;
		entity = FDL_DSQ_FAIR;
		fair_pick = queue;
		left = 0;	/* fair work: no guarantee's budget (fdl_entity_budget_left) */
	}

	cpu = env_pick_idle(p);
	/*
	 * Not within its deadline's rights (fdl_may_compete) nor claiming as fair work, it takes no
	 * other entity's CPU; a CPU of its own queue's CPU-bound work it may (fdl_note_sibling).
	 */
	compete = fair_pick || e == &fdl.fair || fdl_may_compete(queue, dl, vdt);
	if (cpu < 0 && (compete || (tun.sibling_preempt_ns && (flags & FDL_ENQ_WAKEUP)))) {
		cpu = fdl_choose_victim(p, t, entity, own, queue, dl, now, flags, compete, &later,
					&cross, &cross_ns, &sibling);
		if (cpu >= 0 && (cc = env_cpu(cpu))) {
			/* Fair work taken by fair work (fdl_note_fair), not by a deadline. */
			fair_victim = cc->queue == FDL_DSQ_FAIR && entity == FDL_DSQ_FAIR;
			/* Work of the fair order taken by a deadline: a loan (fdl_loan_due). */
			lend = cc->queue == FDL_DSQ_FAIR && entity != FDL_DSQ_FAIR ? cc->cont : 0;
			bound = lend && fdl_cpu_bound(cc, now);
			/*
			 * Not to CPU-bound work taken for a waker that may not use every CPU
			 * (fdl_choose_among took it as work of the second tier): the loan would
			 * give it the CPU back before the waker ran, by its first-tier key.
			 */
			if (bound && env_task_pinned(p))
				lend = 0;
			/* Claim the CPU at our deadline, so that the next waker picks another one. */
			fdl_cpu_set(cc, entity, queue, e->dl, now, fdl_entity_bw(top, e), e->deadline_rr_ns,
				    left);
			fdl_cpu_burst(cc, now, 0, 0, 0);
			cc->has_next = 0;
			cc->picked = 0;
			if (lend) {
				cc->lent_q = lend;
				cc->lent_at = now;
				cc->lent_by = entity;
				cc->lent_bound = bound;
			}
			victim = cpu;
		}
		cpu = -1;
	}
	/*
	 * Its own queue's CPU-bound work is behind it (fdl_note_sibling): that work's slice ends now,
	 * and the CPU's dispatcher finds the waker first in their queue. Claimed, so that the next
	 * waker looks elsewhere.
	 */
	if (victim < 0 && sibling >= 0 && (cc = env_cpu(sibling)))
		fdl_cpu_burst(cc, now, 0, 0, 0);
	else
		sibling = -1;
	/*
	 * In the domain of the CPU it was placed for (kicked now, or timed to be preempted below):
	 * that CPU's dispatcher looks there first; else in the domain the balancer moves it to.
	 * Counted first (fdl_queued_add).
	 */
	dom = env_insert_dom(p, victim >= 0 ? victim : sibling >= 0 ? sibling : cpu >= 0 ? cpu :
			     later >= 0 ? later : cross >= 0 ? cross :
			     tun.load_tracking ? fdl_lb_cpu(p, t, p->pid) : -1);
	fdl_queued_add(t, fdl_queued_slot_of(top), dom, vtime, env_task_pinned(p));
	env_insert_vtime(p, queue, tun.slice_ns, vtime, flags, dom);
	if (own == FDL_DSQ_FAIR)
		stat_inc(nr_fair_enqueued);
	else
		stat_inc(nr_deadline_enqueued);
	if (victim >= 0) {
		/*
		 * The task waits in its queue, not in the victim's local queue: the victim's dispatcher
		 * takes the earliest work when its slice ends, and any CPU that dispatches first takes
		 * it sooner. Bound to the victim, it waited for that one CPU (a CPU slow to answer the
		 * kick, on 8 emulated CPUs: p99 62-75 ms against 40-53 ms for the same probe without
		 * parameters, tests/vm/topology.sh).
		 */
		kick = victim;
		preempt = true;
		if (fair_victim)
			stat_inc(nr_fair_preempts);
		else
			stat_inc(nr_preempt_kicks);
	} else if (sibling >= 0) {
		kick = sibling;
		preempt = true;
		stat_inc(nr_sibling_preempts);
	} else if (cpu >= 0) {
		/* As for select_cpu's idle pick: the CPU is no longer a victim with lots of slack. */
		fdl_on_idle_pick(t, cpu, now);
		kick = cpu;
		stat_inc(nr_idle_kicks);
	} else if (later >= 0 && (cc = env_cpu(later))) {
		fdl_preempt_at(cc, later, now + fdl_timer_delay(dl, now), now);
	} else if (cross >= 0 && (cc = env_cpu(cross))) {
		/* A CPU's work comes after it within a slice (fdl_note_crossing): hand over there. */
		fdl_preempt_at(cc, cross, now + fdl_max(cross_ns, tun.min_slice_ns), now);
		stat_inc(nr_crossing_timers);
	}
	/*
	 * Queued and no CPU woken for it: look for an idle CPU again. A CPU whose dispatcher had
	 * just found the queues empty may have set its idle bit since the first look; its kick is
	 * delivered after the insert is in place. Not a full interlock with fdl_on_idle: an insert
	 * from ops.enqueue lands when the callback returns (a direct dispatch), so a CPU that sets
	 * its bit after this look and checks the queues (fdl_on_idle) before that return sees
	 * neither; the window is this function's tail. Closing it needs a deferred idle kick
	 * (SCX_KICK_IDLE) of the CPUs going idle, whoever they are (left open, 2026-11-27).
	 */
	if (kick < 0 && (cpu = env_pick_idle(p)) >= 0) {
		fdl_on_idle_pick(t, cpu, now);
		kick = cpu;
		stat_inc(nr_idle_rechecks);
	}
	if (kick >= 0)
		fdl_kick_for_queued(kick, preempt, now);
}

#define FDL_NONE	2	/* fdl_scan.best_fair / next_fair: no candidate */

/* Make queue q (fair: the fair container's) at dl the scan's best; the best so far runs second. */
static __always_inline void fdl_scan_lead(struct fdl_scan *sc, u64 q, u32 fair, u64 dl)
{
	sc->next_q = sc->best_q;
	sc->next_dl = sc->best_dl;
	sc->next_fair = sc->best_fair;
	sc->best_q = q;
	sc->best_dl = dl;
	sc->best_fair = fair;
}

/* Offer the scan a candidate: queue q of a deadline entity (fair: the fair container) at dl. */
static __always_inline void fdl_consider(struct fdl_scan *sc, u64 q, u32 fair, u64 dl)
{
	if (sc->best_fair == FDL_NONE || fdl_time_before(dl, sc->best_dl)) {
		fdl_scan_lead(sc, q, fair, dl);
	} else if (sc->next_fair == FDL_NONE || fdl_time_before(dl, sc->next_dl)) {
		sc->next_q = q;
		sc->next_dl = dl;
		sc->next_fair = fair;
	}
}

/*
 * Offer the scan a fair queue with its cgroup virtual time *cvtime. A cgroup virtual time beyond
 * the starvation window is brought back to its edge, where it stays: the fair clock is the least
 * cgroup virtual time with work, so a key capped afresh at every scan (clock + window) moved with
 * the clock, stayed ahead of every cgroup served, and its queue was never served (seen: a pod
 * whose cgroup virtual time had run 38 s ahead stalled until the watchdog ejected scx_fdl). At a
 * fixed edge, the others pass it within the window.
 */
static __always_inline void fdl_consider_fair(struct fdl_scan *sc, u64 q, u64 *cvtime, u32 dl)
{
	u64 cv = *cvtime, key = fdl_fair_key_in(cv, sc->fair_window);

	if (key != cv)
		__sync_val_compare_and_swap(cvtime, cv, key);
	if (!sc->fair_found || fdl_time_before(key, sc->fair_key)) {
		sc->fair_found = 1;
		sc->fair_q = q;
		sc->fair_key = key;
		sc->fair_dl = dl;
	}
}

/*
 * The slot queue q (a container's cgroup id, or FDL_DSQ_FAIR) is counted in (fdl_queued_add); 0
 * if it is not counted (its cgroup went, or has no slot).
 */
static __always_inline u32 fdl_queue_slot(u64 q)
{
	struct fdl_cgroup *cg;

	if (q == FDL_DSQ_FAIR)
		return FDL_QUEUED_FAIR;
	cg = env_cgroup(q);
	return cg ? fdl_queued_slot_of(cg) : 0;
}

/*
 * The domains of queue q that may hold work, by the counts (fdl_queued_doms): the only ones its
 * takes and peeks ask the kernel about.
 */
static __always_inline struct fdl_dom_counts *fdl_queue_doms(u64 q)
{
	if (env_nr_doms() <= 1)
		return NULL;
	return fdl_queued_doms(fdl_queue_slot(q));
}

/* Does queue q hold work, by the counts? */
static __always_inline bool fdl_queue_waiting(u64 q)
{
	u32 s = fdl_queue_slot(q);

	if (!s)
		return env_queued_any(q, NULL) > 0;	/* not counted: ask the kernel */
	return *fdl_queued_nr(s) > 0;
}

/*
 * What the scan counts as waiting in queue q (slot s: fdl_queued_slot_of): the policy's count
 * (fdl_queued_add), no kfunc. A full scan (full) asks the kernel about a queue counted empty, in
 * one domain (sc->full_dom, each in turn: fdl_scan_queues); work found there is offered (and
 * taken if it is the best), and if the next full scan of that domain finds work there hidden
 * again, it is a stray (nr_scan_strays): counts that hide work for good, not for a moment. A
 * moment there is: the kernel calls ops.quiescent before it takes a task out of its DSQ
 * (dequeue_task_scx: a change of the task's CPUs, priority or cgroup while it waits), and a full
 * scan in between sees the task, uncounted. Counted at once, the VM tests saw one such stray in
 * one run of each of nested and topology (taskset -p on queued loops), with full scans every 4 ms
 * on every CPU; on every dispatch, one in topology's 77 s.
 */
static __always_inline s64 fdl_scan_queued(struct fdl_scan *sc, u32 s, u64 q, bool full)
{
	struct fdl_queued *qd = fdl_queued_of(s);
	s64 n = qd->nr, k = 0;
	u32 d;

	if (!full)	/* the common case first: the count alone */
		return n > 0 ? n : 0;
	d = sc->full_dom;
	if (n <= 0)
		k = env_queued_dom(q, d);
	if (k <= 0 && qd->hidden_at && qd->hidden_dom == d)
		qd->hidden_at = 0;
	if (n > 0)
		return n;
	if (k <= 0)
		return 0;
	if (qd->hidden_at && qd->hidden_dom == d) {
		stat_inc(nr_scan_strays);
		fdl.stray_q = q;
		fdl.stray_counted = n;
		fdl.stray_queued = k;
		fdl.stray_at = env_now();
	} else {
		qd->hidden_at = env_now() ?: 1;
		qd->hidden_dom = d;
	}
	return 1;
}

/*
 * How often a scan looks at every container's queue, inactive ones included, and asks the kernel
 * about the queues counted empty (fdl_scan_container, fdl_scan_queued): one CPU's scan in each
 * such period, machine-wide (fdl_full_scan_due), the first to dispatch after it began. Each CPU's
 * own, every 4 ms, was a kfunc per domain for every queue counted empty: at 8 vCPUs in four LLCs
 * env_queued_any then ran 276 BPF instructions per task started beside hackbench
 * (bench/insn-profile.sh), 9 at 2 vCPUs: a check whose cost grew with the machine. One CPU's
 * every 4 ms, asking every domain, still ran 121 there (c0457d5); each full scan now asks one
 * domain, in turn, so work the counts hide is found within FDL_FULL_SCAN_NS times the domains
 * (16 ms on four LLCs), a stray within twice that.
 */
#define FDL_FULL_SCAN_NS	(4 * 1000 * 1000ULL)

/* Has the period of the full scan that began at `at` (FDL_FULL_SCAN_NS) ended by now? */
static __always_inline bool fdl_full_scan_over(u64 at, u64 now)
{
	return !fdl_time_before(now, at + FDL_FULL_SCAN_NS);
}

/* Is this scan the period's full scan (FDL_FULL_SCAN_NS)? One CPU wins it. */
static __always_inline bool fdl_full_scan_due(u64 now)
{
	u64 at = fdl.full_scan_at;

	return fdl_full_scan_over(at, now) &&
	       __sync_bool_compare_and_swap(&fdl.full_scan_at, at, now);
}

/* The containers' slots below n, as a mask of fdl.active_mask's bits. */
static __always_inline u64 fdl_slots_mask(u32 n)
{
	return n >= FDL_MAX_CONTAINERS ? ~0ULL : (1ULL << n) - 1;
}

/*
 * Offer the scan container cgref's queue (in slot i), if it holds work (fdl_scan_queued). An
 * inactive container has none: a task is counted runnable (ops.runnable, up its cgroups to every
 * container above it, whose bits fdl_cont_mark sets) before it is queued, uncounted
 * (ops.quiescent) after it left its queue, and a cgroup move while it waits takes it out of its
 * queue and queues it again under its new container. So the scan looks at active containers only
 * (fdl.active_mask: no record is read for an idle one; a fleet node has hundreds of containers,
 * most of them idle). Not trusted blindly: every FDL_FULL_SCAN_NS one CPU's scan looks at the
 * inactive ones too, and asks the kernel about every queue counted empty (fdl_scan_queued): a task
 * that did sit there would wait for the next full scan, not forever.
 */
static __always_inline void fdl_scan_container(struct fdl_scan *sc, u64 cgref, struct fdl_cgroup *cg,
					       u32 i, bool full, u64 now, u64 vdt)
{
	struct fdl_entity *e = &cg->ent;
	bool orders, within;
	s64 w;
	u64 key;

	if ((w = fdl_scan_queued(sc, i + 1, cgref, full)) <= 0)
		return;
	sc->nr_queued += w;
	if (sc->skip_mask & (1ULL << (i & 63)))
		return;	/* its work may not run on this CPU (fdl_take_elsewhere) */
	/*
	 * A deadline container that overran its bandwidth competes in the fair order only.
	 * By its deadline it would stand at vdt + deadline_rr, a key that moves with vdt and
	 * never comes due, ahead of every overrun entity with a longer deadline_rr: in
	 * overload the shortest deadline_rr took all it wanted (the matrix's spin10 cell:
	 * the 4 ms container 0.61 CPU of its 0.5 share, the cgroup without parameters 0.36
	 * and a p99 of 260 ms). One whose deadline does not order its work now
	 * (fdl_entity_orders) competes in the fair order only.
	 */
	orders = false;
	if (e->deadline_rr_ns) {
		/* Its budget read once for both (each inlined read is verified on its own). */
		within = fdl_entity_within(e, now);
		orders = fdl_entity_orders_within(e, within);
		if (orders) {
			key = fdl_entity_order_within(e, vdt, within);
			if (fdl_may_compete(cgref, key, vdt))
				fdl_consider(sc, cgref, 0, key);
		}
	}
	fdl_consider_fair(sc, cgref, &cg->cvtime, orders);
}

/* The scan's record with no candidate: where each scan starts (fdl_scan_queues), or its skip. */
static __always_inline void fdl_scan_none(struct fdl_scan *sc)
{
	sc->best_fair = sc->next_fair = FDL_NONE;
	sc->best_q = sc->next_q = sc->best_dl = sc->next_dl = 0;
	sc->fair_found = sc->running_found = 0;
	sc->fair_first = 0;
	sc->nr_queued = 0;
}

/*
 * The fair clock follows the least cgroup virtual time with work queued, never back, and never
 * past a container with a task on a CPU (fdl_run_count), as CFS's min_vruntime counts the running
 * entity. (Not every container with a task runnable: a task held by a CPU limit is runnable, and
 * a limited cgroup, behind the others by what its limit keeps from it, would hold the clock there
 * and push every other cgroup to the starvation window's edge, where their order is lost.) Where
 * the clock followed the queued work only, a cgroup whose tasks all ran at that moment was passed
 * over: a CPU's dispatch after a preemption runs before the preempted task is queued again, and
 * if the only queued work in the fair order was then a guaranteed container's, its cgroup virtual
 * time at the starvation window's edge (it runs ahead of fair work by its guarantee), the clock
 * jumped there, up to the whole window (800 ms of cgroup virtual time on 2 CPUs). The cgroup that
 * had kept running, hackbench's, stayed that far behind and won the fair order until it had
 * caught up, while a cgroup that slept between its bursts woke at the clock and waited: 0.27 CPU
 * for 0.52 of demand beside hackbench's 0.54, its p99 269 ms against EEVDF's 31 ms (matrix cell
 * spin3-sleep20.rr4-20.shares900.config.t4, 2026-11-29). In a rescan past queues this CPU may not
 * run (fdl_take_elsewhere), the least of the others: held at a queue whose only work waited for a
 * busy CPU elsewhere, the clock left the cgroups this CPU served to drift to the starvation
 * window's edge, where their order is lost (native test_cpu_passes_work_bound_elsewhere: three
 * busy loops got 234, 235 and 1531 ms of 2000).
 */
static __always_inline void fdl_fair_clock_to(struct fdl_scan *sc)
{
	u64 key = sc->fair_key;

	if (sc->running_found && fdl_time_before(sc->running_cv, key))
		key = sc->running_cv;
	if (fdl_time_before(fdl.cvtime_now, key))
		fdl.cvtime_now = key;
}

/*
 * Scan the containers' queues into this CPU's fdl_scan: deadline containers with work are
 * candidates at their deadline; of all queues with work, deadline containers' included, the one
 * with the least cgroup virtual time stands for the fair container at its deadline. So a deadline
 * container is served by its deadline or, while it has used less than its fair share, by the fair
 * order, whichever comes first: a deadline never makes a cgroup worse off than none. Also
 * refreshes the figures the fair container's bandwidth and the miss step are computed from.
 */
FDL_GLOBAL int fdl_scan_queues(u64 now, u64 vdt)
{
	struct fdl_scan *sc = env_scan();
	struct fdl_cgroup *cg;
	struct fdl_entity *e;
	u32 i, k, n = fdl.nr_slots;
	u64 cgref, fair_cpus, scale, mask;
	s64 root_wsum, w, prot_wsum, fair_w;
	bool full, guaranteed;

	if (!sc)
		return -1;
	/* Every container once in FDL_FULL_SCAN_NS (fdl_scan_container), else the active ones. */
	mask = fdl.active_mask;
	full = fdl_full_scan_due(now);
	if (full) {
		mask = fdl_slots_mask(n);
		sc->full_dom = fdl.nr_full_scans++ % env_nr_doms();
	}
	fdl_scan_none(sc);
	sc->fair_window = fdl_fair_window();	/* once per scan, not per queue offered */
	sc->dl_wsum = sc->dl_unboosted_wsum = sc->prot_wsum = sc->guaranteed_wsum = 0;
	sc->rate_sum = sc->guaranteed_rate = 0;
	sc->min_rr_ns = tun.fair_deadline_ns;
	/*
	 * bpf_for, not a plain loop: walked turn by turn, this loop's body doubled the dispatcher's
	 * verification (fdl_dispatch 144061 -> 285757 instructions, past tests/vm/attach.sh's
	 * budget of 200k) for about 55 instructions per task started.
	 */
	fdl_for(k, 0, FDL_MAX_CONTAINERS) {
		if (!mask)
			break;
		i = fdl_mask_pop(&mask);
		if (i >= n)
			break;
		cgref = fdl.containers[i];
		if (!cgref || !(cg = env_cgroup(cgref)))
			continue;
		e = &cg->ent;
		/* The fair clock stays at or behind every container with a task on a CPU. */
		if (cg->nr_running > 0 &&
		    (!sc->running_found || fdl_time_before(cg->cvtime, sc->running_cv))) {
			sc->running_found = 1;
			sc->running_cv = cg->cvtime;
		}
		/* A first-level guarantee counts against fair work's protected share, running or not. */
		guaranteed = e->deadline_rr_ns && e->budget_rate && cg->level <= 1;
		if (full && guaranteed)
			sc->guaranteed_wsum += fdl_cgroup_base_weight(cg);
		/*
		 * Every deadline container's grant, at any depth (a Kubernetes pod's too): deadline
		 * containers never nest, so none is counted within another (--fair-protection floor).
		 */
		if (full && e->deadline_rr_ns && e->budget_rate)
			sc->guaranteed_rate += e->budget_rate;
		if (e->deadline_rr_ns && cg->contrib > 0) {
			if (cg->level > 1) {
				/* Nested: the root weight its share stands for (its boost is within its parent). */
				root_wsum = fdl_root_wsum();	/* may dip below 0 mid-update (fdl_share_of) */
				w = (s64)((fdl_cgroup_share(cg) * (u64)(root_wsum > 0 ? root_wsum : 1)) >>
					  FDL_SHARE_SHIFT);
				sc->dl_wsum += w;
				sc->dl_unboosted_wsum += w;
			} else {
				sc->dl_wsum += cg->contrib;
				w = fdl_cgroup_base_weight(cg);
				sc->dl_unboosted_wsum += w;
			}
			if (!guaranteed)
				sc->prot_wsum += w;
			sc->min_rr_ns = fdl_min(sc->min_rr_ns, e->deadline_rr_ns);
			sc->rate_sum += e->budget_rate;
		}
		fdl_scan_container(sc, cgref, cg, i, full, now, vdt);
	}
	root_wsum = fdl_root_wsum();
	/* The fair bandwidth from the sums, computed again only where one of them changed. */
	if (fdl.dl_wsum != sc->dl_wsum || fdl.dl_unboosted_wsum != sc->dl_unboosted_wsum ||
	    fdl.fair_bw_root_wsum != root_wsum || !fdl.fair_bw) {
		fdl.dl_wsum = sc->dl_wsum;
		fdl.dl_unboosted_wsum = sc->dl_unboosted_wsum;
		fdl.fair_bw_root_wsum = root_wsum;
		fdl.fair_bw = fdl_fair_bw(root_wsum, sc->dl_wsum, sc->dl_unboosted_wsum,
					  tun.fair_floor_permille, tun.nr_cpus);
	}
	if (fdl.min_rr_ns != sc->min_rr_ns)
		fdl.min_rr_ns = sc->min_rr_ns;
	/*
	 * Fair work keeps its protected bandwidth whatever the guarantees ask: while it is runnable
	 * and the active guarantees ask more than it leaves, their budgets are scaled into the rest.
	 * That bandwidth is its share beside every first-level guarantee at its cpu.weight, whether
	 * that container runs now or sleeps between bursts (its budget is earned meanwhile: counted
	 * only while it ran, fair work's share rose to the whole machine whenever the guaranteed
	 * containers slept, its budget never ran out beside hackbench, and a 4 ms container's message
	 * thread waited out hackbench's slices, 2-7 ms, in 2 % of its wake-ups: trace of 2026-11-29).
	 * Full scans count those containers (fdl.guaranteed_wsum); every scan, the active others.
	 */
	if (full && fdl.guaranteed_wsum != sc->guaranteed_wsum)
		fdl.guaranteed_wsum = sc->guaranteed_wsum;
	if (full && fdl.guaranteed_rate != sc->guaranteed_rate)
		fdl.guaranteed_rate = sc->guaranteed_rate;
	scale = fair_cpus = 0;
	fair_w = root_wsum - sc->dl_wsum;
	/*
	 * No active guarantee: nothing to scale, and the protected bandwidth is not needed (where no
	 * cgroup has a guarantee, no scan computes it). Computed again only where its weights changed.
	 * Under --fair-protection floor, fair work keeps what the granted guarantees leave, and they
	 * are never scaled: the control plane grants them within the machine less the floor.
	 */
	if (sc->rate_sum && tun.fair_protect == FDL_FAIR_PROTECT_FLOOR) {
		fair_cpus = fair_w > 0 ? fdl_fair_left(fdl.guaranteed_rate, tun.fair_floor_permille,
						       tun.nr_cpus) : 0;
	} else if (sc->rate_sum) {
		prot_wsum = sc->prot_wsum + fdl.guaranteed_wsum;
		if (fair_w > 0 && (fdl.fair_prot_wsum != prot_wsum ||
				   fdl.fair_prot_fair_wsum != fair_w || !fdl.fair_prot)) {
			fdl.fair_prot_wsum = prot_wsum;
			fdl.fair_prot_fair_wsum = fair_w;
			fdl.fair_prot = fdl_fair_protected(fair_w, prot_wsum,
							   tun.fair_floor_permille, tun.nr_cpus);
		}
		fair_cpus = fair_w > 0 ? fdl.fair_prot : 0;
		scale = fdl_budget_scale(sc->rate_sum, fair_cpus, tun.nr_cpus);
	}
	if (fdl.budget_scale != scale)
		fdl.budget_scale = scale;
	fdl_fair_set_rate(fair_cpus, now);
	if ((w = fdl_scan_queued(sc, FDL_QUEUED_FAIR, FDL_DSQ_FAIR, full)) > 0) {
		sc->nr_queued += w;
		if (!sc->skip_root)
			fdl_consider_fair(sc, FDL_DSQ_FAIR, &fdl.root_cvtime, 0);
	}
	if (sc->fair_found) {
		fdl_fair_clock_to(sc);
		/*
		 * Only deadline containers stand in the fair order (no fair task is runnable, so the
		 * fair container never woke): they compete there with a fresh bucket, not the stale
		 * one of fair work that ran long ago.
		 */
		if (!fdl.fair.nr_runnable)
			fdl_entity_wake(&fdl.fair, vdt);
		fdl_consider(sc, sc->fair_q, 1, fdl_fair_order(vdt));
	}
	return 0;
}

/* The deadline entity a scan candidate stands for (NULL: none, or its cgroup went away). */
static __always_inline struct fdl_entity *fdl_scan_entity(u64 q, u32 fair)
{
	struct fdl_cgroup *cg;

	if (fair == FDL_NONE)
		return NULL;
	if (fair)
		return &fdl.fair;
	cg = env_cgroup(q);
	return cg ? &cg->ent : NULL;
}

/*
 * Move queue q's first task to this CPU. While some cgroup has a CPU limit, the first one that no
 * limit blocks (env_move_unblocked: the blocked ones it passes go to the hold queue).
 */
static __always_inline bool fdl_move(u64 q)
{
	struct fdl_dom_counts *doms = fdl_queue_doms(q);
	u64 lead = fdl_queue_lead(q);

	return fdl.counters.nr_limited ? env_move_unblocked(q, lead, doms) :
					 env_move_to_local(q, lead, doms);
}

/*
 * What a running task's slice runs against: the competitor's order key, or, for a container
 * within its guarantee whose bucket ran ahead of vdt + rr, its bucket. Such a key moves with vdt
 * until vdt + rr reaches the bucket, and then stays: the running key passes it there, not
 * before. Cut at the key instead, two busy containers with the same deadline_rr (keys tied at
 * vdt + rr) each got the shortest slice, ended by a timer, every --min-slice-us for nothing.
 */
static __always_inline u64 fdl_competitor_key(struct fdl_entity *ce, u64 key, u64 vdt)
{
	if (!ce || ce == &fdl.fair || !fdl_key_within(key, vdt) || !fdl_time_before(key, ce->dl))
		return key;
	return ce->dl;
}

/*
 * fdl_competitor_key for container q's entity (the key as it is if the container went away). A
 * global function: the entity's pointer stays out of the dispatcher's paths.
 */
FDL_GLOBAL u64 fdl_cont_competitor_key(u64 q, u64 key, u64 vdt)
{
	struct fdl_cgroup *cg = env_cgroup(q);

	return cg ? fdl_competitor_key(&cg->ent, key, vdt) : key;
}

/*
 * The dispatcher moved work of entity e (queue q, order key dl) to cpu, with next_dl the
 * competitor it runs against. The CPU keeps what fdl_on_running needs: the competitor, whether
 * the fair order took the work, and the deadline and vdt the start is judged by. A container's
 * pick that comes late moves vdt back (fdl_entity_picked, fdl_miss), so judged by the vdt after
 * that, the start was never late: every late pick by deadline went uncounted (the simulation's
 * 3 ms container waited 7 ms at every wake-up, with no miss counted).
 */
static __always_inline void fdl_took(struct fdl_cpu *cc, struct fdl_entity *e, u64 q, u64 dl,
				     u64 next_dl, bool has_next, u64 now)
{
	if (cc) {
		cc->next_dl = next_dl;
		cc->has_next = has_next;
		cc->picked = 1;
		cc->fair_pick = e == &fdl.fair ? q : 0;
		cc->pick_q = e == &fdl.fair ? 0 : q;
		cc->pick_dl = fdl_entity_promise(e, dl);
		cc->pick_vdt = fdl_vdt(now);
	}
	fdl_entity_picked(e, dl, now);
	fdl_count_dispatch(e == &fdl.fair ? FDL_DISPATCH_FAIR : FDL_DISPATCH_DEADLINE);
}

/*
 * Move the scan's best queue's head to this CPU, or, if another CPU emptied that queue meanwhile,
 * the runner-up's. 0 if both were empty. A global function (verified once, not at each of the
 * dispatcher's call sites).
 */
FDL_GLOBAL int fdl_take(s32 cpu, u64 now)
{
	struct fdl_scan *sc = env_scan();
	struct fdl_cpu *cc = env_cpu(cpu);
	struct fdl_entity *be, *ne;

	if (!sc)
		return 0;
	be = fdl_scan_entity(sc->best_q, sc->best_fair);
	ne = fdl_scan_entity(sc->next_q, sc->next_fair);

	if (be && fdl_move(sc->best_q)) {
		fdl_took(cc, be, sc->best_q, sc->best_dl,
			 fdl_competitor_key(ne, sc->next_dl, fdl_vdt(now)), ne != NULL, now);
		return 1;
	}
	if (ne && fdl_move(sc->next_q)) {
		fdl_took(cc, ne, sc->next_q, sc->next_dl, 0, false, now);
		return 1;
	}
	return 0;
}

/*
 * A preemption is a loan. A deadline container that took this CPU from work of the fair order
 * (fdl_on_enqueue: it had the earlier deadline, with enough slack; within its guarantee, or beyond
 * it near the front of the fair order), done with it, gives it back to that work's queue ahead of
 * the rest of the fair order and of other containers that could not have taken it: those whose
 * deadline, in their tier, is not earlier than fair work's own by the slack rule
 * (fdl_slack_allows, the fair container's deadline_rr, as the RFC's fair container). Without it
 * the tier put the preempted work behind every such container's burst: the cgroup without
 * parameters' worker, preempted by the 4 ms container with 0.1 ms of its 3 ms spin left, then
 * waited out the 20 ms container's two spins as well, 7 ms for 0.1 ms (trace of 2026-11-27
 * 15:52, bench/guest/spin-sched-trace.sh: 42 of 1226 wake-ups off a CPU over 6 ms, 2 of them
 * beside an idle CPU; p99 1.3x EEVDF's in deadline-quiet). Without guarantees the fair order did
 * the same: the 20 ms container's worker, preempted by the 4 ms container's, waited behind both
 * workers of the cgroup without parameters that had queued meanwhile (trace of 2026-12-05 16:07,
 * shares=0: 18 of its 21 wake-ups off a CPU over 6 ms; EEVDF 12 over 6 ms in all). Work queued
 * before, not preempted, still waits behind the first tier: no container within its guarantee
 * waits for fair work that had not started. While a guarantee is active, only while fair work is
 * within its protected bandwidth (fdl_fair_within): beside hackbench, fair work that takes more
 * than it is owed keeps no claim on the CPUs it loses. Called only where the scan found a
 * candidate (fdl_on_dispatch). Returns 1 if this CPU took the lent queue's first task (with the
 * rest of a slice).
 */
FDL_GLOBAL int fdl_loan_due(s32 cpu, u64 now, u64 vdt)
{
	struct fdl_scan *sc = env_scan();
	struct fdl_cpu *cc = env_cpu(cpu);
	u64 q, fair, rival;
	int within;

	if (!sc || !cc || !(q = cc->lent_q))
		return 0;
	if (fdl_time_before(cc->lent_at + FDL_LOAN_NS, now) ||
	    (fdl.fair.budget_rate && !fdl_fair_within(now))) {
		cc->lent_q = 0;	/* lapsed, or fair work is past its protected share */
		return 0;
	}
	/*
	 * Not queued (yet): the dispatch of the preemption itself runs before the preempted task is
	 * queued again (cleared here, the first of two loans was lost), or another CPU took it.
	 */
	if (!fdl_queue_waiting(q))
		return 0;
	/*
	 * A loan is owed to a burst. Work that had run as long as a loan lasts without sleeping when
	 * it lost the CPU (a busy loop, a build job: fdl_cpu_bound) comes after the fair work the
	 * fair order chooses: the loan is void where that is another queue's, one without a deadline
	 * of its own (deadlines are weighed against the loan below). Given to busy loops, the loans
	 * took the CPUs back from the fair work that had woken meanwhile: the RFC's deadlines without
	 * guarantees (1 ms spins every 5 ms) beside four busy loops, the cgroup without parameters'
	 * wake-ups waited up to 29.6 ms behind the loops' loans, p99 18.2 ms against 1.5 ms without
	 * deadlines (test_policy_matrix, 4733 loans in 8 s).
	 */
	if (cc->lent_bound && sc->fair_found && sc->fair_q != q && !sc->fair_dl) {
		cc->lent_q = 0;
		return 0;
	}
	/*
	 * Fair work's key (a tier back; an overrun key: everyone may take its CPUs), against the
	 * scan's best in the best's tier: a container with an earlier deadline by the slack rule
	 * may take the CPU, and the loan waits. So does the rest of the burst that took it: the
	 * borrower itself, within its guarantee, with an earlier deadline, slack or not. The 4 ms
	 * container's burst of four workers (two more than the machine) had its last two wait
	 * behind the loans its first two had made, for the fair workers' last millisecond, whose
	 * deadline was later than theirs but not by the slack rule (VM trace of 2026-12-05,
	 * `workers=4`: 5.3-5.8 ms off a CPU, p99 6.6 ms against deadline_rr + 2 ms). Other
	 * containers keep the slack rule: without it, a loan waited for the RFC's 5 ms container as
	 * well, beside fair work's own 5 ms, and the cgroup without parameters' p99 went from 1.19x
	 * to 1.38x EEVDF's (issue 10's matrix, spin3-sleep20.rfc.shares900.config, quiet).
	 */
	fair = fdl_fair_order(vdt);
	within = fdl_key_within(sc->best_dl, vdt);
	rival = within ? fair - FDL_TIER_NS : fair;
	if (sc->best_fair == 0 && fdl_time_before(sc->best_dl, rival) &&
	    ((within && sc->best_q == cc->lent_by) || fdl_slack_allows(rival, sc->best_dl, vdt)))
		return 0;
	cc->lent_q = 0;
	if (!fdl_move(q))
		return 0;
	fdl_took(cc, &fdl.fair, q, fair, 0, false, now);
	stat_inc(nr_loans_returned);
	return 1;
}

/*
 * Does any active container's queue, or the root's, hold work? (For a CPU going idle:
 * fdl_on_idle; an inactive container has none, fdl_scan_container; the counts of
 * fdl_queued_add, no kfunc.)
 */
FDL_GLOBAL int fdl_any_queued(void)
{
	u64 mask = fdl.active_mask;
	u32 i, k;

	if (*fdl_queued_nr(FDL_QUEUED_FAIR) > 0)
		return 1;
	/*
	 * A plain loop, one turn per active container, walked by the verifier turn by turn (at most
	 * FDL_MAX_CONTAINERS): for so small a body, bpf_for's kfunc per turn cost more than the body.
	 */
	for (k = 0; k < FDL_MAX_CONTAINERS && mask; k++) {
		i = fdl_mask_pop(&mask);
		if (*fdl_queued_nr(i + 1) > 0)
			return 1;
	}
	return 0;
}

/*
 * The previous task t, still runnable, competes with the scan's choice (fdl_scan_queues): it keeps
 * the CPU while it is still first: another entity must have an earlier deadline, another fair
 * cgroup less cgroup virtual time, its own queue a lower vtime. Returns the slice it keeps the CPU
 * with, 0 if it yields. A global function: the dispatcher's verification stays within bounds.
 */
FDL_GLOBAL u64 fdl_prev_keeps(struct fdl_task *t, s32 cpu, u64 now, u64 exec)
{
	u64 vdt = fdl_vdt(now), pq, pdl, hv, cdl, ckey, cq, slice;
	struct fdl_entity *pe;
	struct fdl_cgroup *ptop;
	struct fdl_scan *sc = env_scan();
	struct fdl_cpu *cc = env_cpu(cpu);
	bool keep, has, claims, rights, rest, best_is_p;
	u32 bf, cf;
	s64 left;
	u64 ran, rr, claim_dl;

	if (!t || !sc || !cc)
		return 0;
	if (fdl_charge(t, cpu, 1, now, exec))	/* out of runtime: it goes to the hold queue */
		return 0;
	/*
	 * The scan's candidates as numbers, not as their entities' pointers (fdl_scan_entity): each
	 * pointer's kinds (none, the fair container, a container) multiplied the paths the verifier
	 * walked through the rest (with fdl_charge, fdl_near_front and env_head_vtime as global
	 * functions, fdl_dispatch's verification went from 179k to 36k instructions:
	 * docs/benchmarks/verifier/counts.txt). A candidate whose container went away since the scan
	 * still counts, at the scan's key.
	 */
	bf = sc->best_fair;
	pq = fdl_task_queue(t, &ptop, &pe, now);
	left = fdl_entity_budget_left(pe, now);	/* read once: for its order here, its slice below */
	pdl = fdl_entity_order_within(pe, vdt, left > 0);
	claim_dl = pdl;
	rr = pe->deadline_rr_ns;
	/*
	 * A container without a guarantee only: one with a guarantee competes by its deadline
	 * within it (fdl_may_compete), and past it has had what it was promised (past it, one whose
	 * deadline is looser than fair work's is fair work already: fdl_entity_orders). Claiming past the
	 * budget of a guarantee too (ee17f23) was measured in one matrix run only, whose cells
	 * within their guarantees moved as much between boots on unchanged policy
	 * (docs/benchmarks.md): not settled, so not done.
	 */
	claims = pe != &fdl.fair && !pe->budget_rate && fdl_fair_claim(ptop, pe, vdt, &claim_dl);
	rights = pe == &fdl.fair || fdl_may_compete(pq, pdl, vdt);
	if (claims || !rights) {
		/*
		 * Its container's deadline is now later than the fair order would place it (a burst
		 * past its bandwidth: fdl_fair_claim, as for work that wakes), or beyond its deadline's
		 * rights (fdl_may_compete): it keeps its CPU only as fair work would, and runs on as
		 * fair work.
		 */
		t->via_fair = 1;
		pe = &fdl.fair;
		left = 0;
		pdl = fdl_fair_order(vdt);
		fdl_cpu_set(cc, FDL_DSQ_FAIR, pq, pe->dl, now, fdl_entity_bw(ptop, pe),
			    pe->deadline_rr_ns, 0);
	}
	/*
	 * Claiming as fair work, cut short where its bucket passed fair work's key: fair work is
	 * not preempted by fair work (fdl_choose_among; only CPU-bound work is, fdl_note_fair), so
	 * it keeps the CPU for the rest of the slice it started with, unless a deadline waits, and
	 * for at most its deadline_rr, the round in which its container asked to take turns.
	 * Yielding to the fair order here, a pod with deadlines three levels down (bench/nested.sh)
	 * waited p50 0.62 ms and p99 7.1 ms where the same pod without parameters waited 0.22 and
	 * 3.4: each burst past its bandwidth was cut and queued behind fair work. Not for a
	 * container beyond its deadline's rights (fdl_may_compete); not for a whole slice either:
	 * three overcommitted 1 ms containers then held their CPUs for 3 ms each, 7.5 ms late
	 * (test_overcommit_shares_lateness).
	 */
	/* Is the scan's best its own entity: both the fair container, or the same container? */
	best_is_p = pe == &fdl.fair ? bf == 1 : bf == 0 && sc->best_q == pq;
	ran = now - t->slice_start;
	rest = claims && rights && (bf == FDL_NONE || best_is_p) && ran < tun.slice_ns;
	if (bf == FDL_NONE || rest)
		keep = true;
	else if (sc->fair_first && !best_is_p)
		keep = false;	/* fair work waited its bound on this CPU (fdl_fair_first) */
	else if (sc->best_q == pq)
		keep = !(env_head_vtime(pq, &hv, fdl_queue_lead(pq), fdl_queue_doms(pq)) &&
			 fdl_time_before(hv, t->vtime));
	else if (best_is_p)	/* both fair: the cgroup with less cgroup virtual time */
		keep = !fdl_time_before(sc->fair_key,
					fdl_fair_key(ptop ? ptop->cvtime : fdl.root_cvtime));
	else
		keep = !fdl_time_before(sc->best_dl, pdl);
	if (!keep)
		return 0;
	if (pe == &fdl.fair)
		cc->fair_served_at = now;
	/* Its competitor: the best other deadline entity. */
	cf = best_is_p ? sc->next_fair : bf;
	cq = best_is_p ? sc->next_q : sc->best_q;
	ckey = best_is_p ? sc->next_dl : sc->best_dl;
	has = cf != FDL_NONE;
	cdl = cf == 0 ? fdl_cont_competitor_key(cq, ckey, vdt) : ckey;
	cc->next_dl = cdl;
	cc->has_next = has;
	slice = fdl_tier_slice(fdl_base_slice(), pe->dl, fdl_entity_bw(ptop, pe), pe->deadline_rr_ns,
			       vdt, cdl, has, left);
	if (rest)
		slice = fdl_min(slice, fdl_max(fdl_min(tun.slice_ns - ran, rr), tun.min_slice_ns));
	return fdl_max(slice, 1);
}

/*
 * The dispatcher took nothing although the counts showed work queued (sc->nr_queued): is it work
 * on its way, counted (fdl_queued_add) but not in its queue yet? A task is counted in ops.enqueue
 * before its insert, which the kernel carries out when the callback returns; a CPU whose scan
 * falls in between finds the queue it chose empty. True if the queues the take tried hold nothing
 * in the kernel's DSQs (or another CPU emptied them meanwhile); false if they hold work this CPU
 * may not run (pinned elsewhere). Only the domains counted non-empty are asked (fdl_queue_doms):
 * work on its way is counted in its domain before it is inserted there.
 */
static __always_inline bool fdl_in_flight(struct fdl_scan *sc)
{
	if (sc->best_fair != FDL_NONE && env_queued_any(sc->best_q, fdl_queue_doms(sc->best_q)) > 0)
		return false;
	return sc->next_fair == FDL_NONE ||
	       env_queued_any(sc->next_q, fdl_queue_doms(sc->next_q)) <= 0;
}

/* Leave candidate queue q (fair: fdl_scan.best_fair's kinds) out of this CPU's next scans. */
static __always_inline void fdl_scan_skip(struct fdl_scan *sc, u64 q, u32 fair)
{
	u32 s;

	if (fair == FDL_NONE)
		return;
	s = fdl_queue_slot(q);
	if (s == FDL_QUEUED_FAIR)
		sc->skip_root = 1;
	else if (s)
		sc->skip_mask |= 1ULL << ((s - 1) & 63);
}

/* How many times a CPU scans again past queues whose work it may not run (fdl_take_elsewhere). */
#define FDL_SKIP_RESCANS	3

/*
 * The queues the scan chose hold work, none of which may run on this CPU: tasks pinned to other
 * CPUs, busy ones. Scan again without them (counted still: fdl_on_idle must not wake this CPU
 * for them) and take the next choice, up to FDL_SKIP_RESCANS times; the previous task pt, still
 * runnable (NULL: none), keeps the CPU if it ranks above that choice (fdl_prev_keeps: its slice in
 * sc->keep_slice). Without the rescan a CPU idled beside work it could run: the least cgroup
 * virtual time was the root's queue, whose only task was a kworker bound to the other CPU, which a
 * guaranteed pod's busy loop held by its deadline; the root's queue stayed first (its work did not
 * run, so its cgroup virtual time did not move) and three fair cgroups' busy loops got 0.05 CPU
 * each beside a CPU idle most of the time (bench/guest/nested-guarantee.sh --fair-protection
 * floor, 2026-11-29). And a previous task kept without comparing it with the rescan's choice kept
 * its CPU for good while the fair cgroups beside it waited (native
 * test_cpu_passes_work_bound_elsewhere with busy loops: 0, 0 and 2000 ms of 2000). Returns 1 if
 * it took work, 2 if pt keeps the CPU, 3 if a rescan's choice is work on its way to its queue
 * (fdl_in_flight: the caller looks again as for the first scan's; rescanning past it, the CPU
 * went idle with its scan counted as having seen work it could not take, and fdl_on_idle did not
 * look again: test_cpu_looks_again_for_work_on_its_way_past_bound_work), 0 if none of these. A
 * global function: its scans and takes are verified once.
 */
FDL_GLOBAL int fdl_take_elsewhere(s32 cpu, u64 now, u64 vdt, struct fdl_task *pt, u64 exec)
{
	struct fdl_scan *sc = env_scan();
	u64 slice;
	int i;

	if (!sc)
		return 0;
	fdl_for(i, 0, FDL_SKIP_RESCANS) {
		fdl_scan_skip(sc, sc->best_q, sc->best_fair);
		fdl_scan_skip(sc, sc->next_q, sc->next_fair);
		if (fdl_scan_queues(now, vdt) || sc->best_fair == FDL_NONE)
			return 0;
		if (pt && (slice = fdl_prev_keeps(pt, cpu, now, exec))) {
			sc->keep_slice = slice;
			return 2;
		}
		if (fdl_take(cpu, now)) {
			stat_inc(nr_skip_takes);
			return 1;
		}
		if (fdl_in_flight(sc))
			return 3;
	}
	return 0;
}

/*
 * The task running on cpu (record cc) got a slice shorter than the default: it ends where a
 * competing deadline takes over, most likely inside a tick, which is where sched_ext would end it.
 * A deadline timer ends it in time (fdl_preempt_at).
 *
 * Not where a CPU limit runs out: that slice (fdl_bw_clip) ends at the next tick, as the kernel's
 * bandwidth control stops a task at its next accounting, and the overrun is repaid from the next
 * period (debt). Ended exactly at the quota by the timer, a bursty job whose work is a whole number
 * of quotas missed its last period by its own overhead (60 ms of work every 400 ms under 20 ms per
 * 100 ms: throttled in 3 of 4 periods, nr_throttled / nr_periods 0.74 against the kernel's 0.58).
 */
static __always_inline void fdl_time_slice(struct fdl_cpu *cc, s32 cpu, u64 slice, u64 now)
{
	if (slice < tun.slice_ns && cc) {
		fdl_preempt_at(cc, cpu, now + slice, now);
		stat_inc(nr_slice_timers);
	}
}

/*
 * How many times a CPU looks again for work the counts show and its queues do not hold yet
 * (fdl_in_flight) before it next runs a task: enough for inserts on their way (a few us), not a
 * loop on counts that would be wrong.
 */
#define FDL_INFLIGHT_RETRIES	3

/*
 * An idle-bound CPU's take failed on work in flight (fdl_in_flight). It had set empty_queued, so
 * fdl_on_idle did not look again, and the enqueuer had looked for an idle CPU before this one set
 * its idle bit: the work waited beside the idle CPU until something else woke it (beside hackbench
 * on the 2-vCPU VM, 663 of 1914 empty dispatches in 13 s had seen work queued: bench/idle-trace.py
 * on bench/guest/spin-sched-trace.sh antagonist=1). The CPU looks again once it is idle (a
 * self-kick that lands after this dispatch), at most FDL_INFLIGHT_RETRIES times until it next
 * runs a task. Not for work pinned elsewhere: it would only come back to the same queues.
 */
static __always_inline void fdl_retry_in_flight(struct fdl_cpu *cc)
{
	if (cc->inflight_retries >= FDL_INFLIGHT_RETRIES)
		return;
	cc->inflight_retries++;
	env_kick_self();
	stat_inc(nr_dispatch_inflight);
}

/*
 * The previous task keeps the CPU for slice without an ops.running: its burst goes back into the
 * CPU's record (fdl_note_fair), which a waker's claim may have reset. Not in fdl_charge: there,
 * before the task yields to that waker, it made the CPU look CPU-bound again, and the waker's
 * sibling kicked the CPU from under the waker (VM ui-build: p99 2.1 ms, not 0.9). Its CPU limit
 * may cut it shorter, at the tick (fdl_time_slice).
 */
static __always_inline void fdl_keep_prev(s32 cpu, struct task_struct *prev, struct fdl_task *pt,
					  u64 slice, u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	if (cc)
		fdl_cpu_burst(cc, now, pt->burst_ns, pt->avg_burst_ns, pt->vtime);
	env_set_slice(prev, fdl_bw_clip(fdl_task_cgref(pt), slice, now));
	fdl_time_slice(cc, cpu, slice, now);
	fdl_count_dispatch(FDL_DISPATCH_PREV);
}

/*
 * May this dispatch go without a scan? Only where the scan would find nothing: no queue counted
 * non-empty (fdl_any_queued, the counts the scan reads itself) and no full scan due (the one that
 * asks the kernel about queues counted empty). Then the scan's record says "nothing" (fdl_scan_none)
 * and the figures a scan refreshes (the fair bandwidth, the active guarantees' scale, the smallest
 * deadline_rr) stay as the last scan left them until the next scan with work, or the next full scan,
 * within FDL_FULL_SCAN_NS: they change with the containers that are active, not with the idle
 * moments between their wake-ups. In the wake shape of bench/insn-profile.sh half the dispatches
 * find nothing (a CPU about to idle): the scans' instructions fell from 6.2 to 4.2 million, all of
 * scx_fdl's from 3074 to 2991 per task started.
 */
static __always_inline bool fdl_scan_skippable(u64 now)
{
	return !fdl_full_scan_over(fdl.full_scan_at, now) && !fdl_any_queued();
}

/*
 * Fair work waits on every CPU for at most the starvation bound (--starvation-ms): a CPU that has
 * run no work of the fair order for that long while the scan saw some waiting puts the fair
 * order's choice first, over any deadline and over the previous task (fdl_prev_keeps), for one
 * pick. The fair tier's bandwidth is the machine's, not each CPU's: a task bound to one CPU, where
 * a container within its guarantee of a whole CPU ran a busy loop, waited behind it for as long as
 * the loop ran (native test_nested_guarantee_leaves_the_rest_shared: a kworker 0 ms in 2.5 s; the
 * kernel's watchdog ejects a scheduler that leaves a task runnable 30 s). A deadline loses one
 * slice per bound at most. The check, at every dispatch, is fdl_fair_waited, inline; this global
 * function only puts the fair order first (with the check in here, its call and lookups cost 62
 * BPF instructions per task started beside hackbench: bench/insn-profile.sh antagonist=1).
 */
FDL_GLOBAL int fdl_fair_first(u64 vdt)
{
	struct fdl_scan *sc = env_scan();

	if (!sc)
		return 0;
	if (sc->best_fair != 1)
		fdl_scan_lead(sc, sc->fair_q, 1, fdl_fair_order(vdt));
	sc->fair_first = 1;
	stat_inc(nr_fair_first);
	return 1;
}

/* Has fair work waited the starvation bound on this CPU (record cc), by the scan sc? */
static __always_inline bool fdl_fair_waited(struct fdl_scan *sc, struct fdl_cpu *cc, u64 now)
{
	if (!sc->fair_found || !cc->fair_served_at) {
		cc->fair_served_at = now;
		return false;
	}
	return fdl_time_before(cc->fair_served_at + tun.starvation_ns, now);
}

/*
 * A CPU needs work: take the earliest deadline among the queues (fdl_scan_queues); within the
 * chosen queue, the lowest vtime. The previous task, if still runnable (pt != NULL), keeps the
 * CPU while it is still first (fdl_prev_keeps).
 */
static __always_inline void fdl_on_dispatch(s32 cpu, struct task_struct *prev, struct fdl_task *pt)
{
	u64 now = env_now(), vdt = fdl_vdt(now), slice, at;
	/* The previous task's CPU time, for its charge where it may keep the CPU (fdl_prev_keeps). */
	u64 exec = pt && prev ? env_task_exec(prev) : 0;
	struct fdl_cpu *cc = env_cpu(cpu);
	struct fdl_scan *sc = env_scan();
	bool queued, inflight, scanned, prev_runs;
	int i, took;

	if (cc)
		cc->dispatch_gen++;	/* a timer set before this chose nothing after it (fdl_timer_lapse) */
	if (!pt && cc && fdl_local_pending(cc, now)) {
		/* Not "work it could not take" either: going idle, it must not wake itself for it. */
		cc->empty_queued = 1;
		stat_inc(nr_local_waits);
		return;
	}
	if (!sc)
		return;
	sc->skip_mask = 0;
	sc->skip_root = 0;
	scanned = !fdl_scan_skippable(now);
	if (!scanned)
		fdl_scan_none(sc);
	else if (fdl_scan_queues(now, vdt))
		return;
	else if (cc && fdl_fair_waited(sc, cc, now))
		fdl_fair_first(vdt);
	if (pt && (slice = fdl_prev_keeps(pt, cpu, now, exec))) {
		fdl_keep_prev(cpu, prev, pt, slice, now);
		return;
	}
	/*
	 * A loan only where this CPU has one out, a take only where the scan found a candidate:
	 * most dispatches call neither function. With nothing queued, a loan stays for when there
	 * is (fdl_loan_due is not asked).
	 */
	if (sc && sc->best_fair != FDL_NONE &&
	    ((cc && cc->lent_q && fdl_loan_due(cpu, now, vdt)) || fdl_take(cpu, now)))
		return;
	/*
	 * The queues chosen held only throttled tasks, which went to the hold queue on the way
	 * (env_move_unblocked): scan again, or this CPU would idle beside work in a third queue.
	 */
	if (fdl.counters.nr_limited && scanned) {
		fdl_for(i, 0, 3) {
			if (fdl_scan_queues(now, vdt) || fdl_take(cpu, now))
				return;
		}
	}
	/*
	 * The scan put other work first and none of it could be taken here: on its way to its queue
	 * (fdl_in_flight), taken by another CPU meanwhile, or pinned elsewhere. The previous
	 * task, still runnable and not held by a CPU limit, keeps the CPU: for the shortest slice
	 * if that work is on its way, and the queues are looked at again then; else for a slice as
	 * usual. Let go, it was queued (SCX_ENQ_LAST), the CPU went idle, was kicked and took it
	 * back, or idled beside it: beside hackbench on the 2-vCPU VM, 163 tasks in 13 s left
	 * their CPU for idle still runnable, 49 of them to come straight back (bench/idle-trace.py
	 * on bench/guest/spin-sched-trace.sh antagonist=1).
	 */
	inflight = false;
	prev_runs = pt && !fdl_bw_blocked(pt, now, &at);
	if (sc && sc->nr_queued > 0) {
		inflight = fdl_in_flight(sc);
		/*
		 * Not in flight: the queues the take tried hold work now. Work pinned elsewhere, or
		 * an insert that landed between the take and the look (trace of 2026-11-28,
		 * 15.050059: a worker queued from the other CPU's ops.enqueue, this CPU's take found
		 * its queue empty, the look found the worker there, and this CPU idled 2.3 ms beside
		 * it, its dispatch counted as having seen work it could not take, so that fdl_on_idle
		 * did not look again). Take again: pinned work fails again, at the cost of a take in
		 * that rare case.
		 */
		if (!inflight && sc->best_fair != FDL_NONE && fdl_take(cpu, now))
			return;
		/* Work this CPU may not run: the next choice, or the previous task if it ranks above. */
		if (!inflight && (took = fdl_take_elsewhere(cpu, now, vdt, prev_runs ? pt : NULL, exec))) {
			if (took == 3) {
				inflight = true;	/* the rescan's choice is on its way */
			} else {
				if (took == 2 && pt)	/* pt kept (the test for the verifier) */
					fdl_keep_prev(cpu, prev, pt, sc->keep_slice, now);
				return;
			}
		}
	}
	if (prev_runs) {
		/*
		 * Work on its way: look again soon, as often as an idle CPU would
		 * (FDL_INFLIGHT_RETRIES; counts that stay wrong must not keep it re-dispatching every
		 * min_slice). Else a slice as usual (the work pinned elsewhere is its own CPU's).
		 */
		slice = fdl_base_slice();
		if (inflight && cc && cc->inflight_retries < FDL_INFLIGHT_RETRIES) {
			cc->inflight_retries++;
			slice = tun.min_slice_ns;
		}
		if (cc)
			cc->has_next = 0;	/* no competitor it runs against: it was not taken */
		fdl_keep_prev(cpu, prev, pt, slice, now);
		stat_inc(nr_prev_kept_untaken);
		return;
	}
	stat_inc(nr_dispatch_empty);
	/*
	 * For fdl_on_idle: whether the scan itself saw work it did not take, not whether work is
	 * queued now: work queued since the scan is what fdl_on_idle is for (counted as untakeable,
	 * a worker queued between this scan and this line waited beside the idle CPU: trace of
	 * 2026-11-27, 34.526356). The counter says the same: a second look at every queue here
	 * (fdl_any_queued, a kfunc and a DSQ hash lookup per container) cost 2 of the 50 million
	 * instructions scx_fdl's programs ran in bench/insn-profile.sh's wake shape, for a statistic.
	 */
	queued = sc && sc->nr_queued > 0;
	if (queued)
		stat_inc(nr_dispatch_empty_queued);
	if (cc) {
		cc->empty_queued = queued;
		cc->fair_served_at = now;	/* nothing it could run waits (fdl_fair_first) */
		if (inflight)
			fdl_retry_in_flight(cc);
	}
}

/*
 * cpu goes idle (ops.update_idle, called after the kernel set the CPU's idle bit). A task queued
 * after its dispatcher found the queues empty, by a CPU that looked for an idle one before this
 * bit was set, would wait until something else woke this CPU: in the VM's quiet 3 ms spin cells a
 * deadline worker waited out another worker's whole spin beside this idle CPU, in about 1 % of
 * its wake-ups (the trace of 2026-11-27: woken at 30.751369, queued at .751498 while CPU 1 went
 * idle at .751500, run at .755166 on the other CPU). With fdl_on_enqueue's second look, most
 * such races are caught (not all: see there). Not where the dispatcher left work it could not take
 * (pinned elsewhere): the CPU would only come back to the same queues, again and again.
 */
static __always_inline void fdl_on_idle(s32 cpu)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	if (!cc || cc->empty_queued || !fdl_any_queued())
		return;
	fdl_kick_for_queued(cpu, false, env_now());
	stat_inc(nr_idle_rechecks);
}

/*
 * Tasks on a CPU per container (queue `queue`, record top; NULL: the root's own queue, not
 * counted), for the fair clock (fdl_fair_clock_to): counted where a task starts, uncounted where it
 * stops, in the container it started in (a task moved meanwhile leaves its old one; a container
 * freed meanwhile, whose reference no longer resolves, is not touched).
 */
static __always_inline void fdl_run_count(struct fdl_task *t, struct fdl_cgroup *top, u64 queue)
{
	if (t->run_cont || !top)
		return;
	__sync_fetch_and_add(&top->nr_running, 1);
	t->run_cont = queue;
}

static __always_inline void fdl_run_uncount(struct fdl_task *t)
{
	struct fdl_cgroup *c;

	if (!t->run_cont)
		return;
	if ((c = env_cgroup(t->run_cont)))
		__sync_fetch_and_sub(&c->nr_running, 1);
	t->run_cont = 0;
}

/*
 * The task starts on cpu: account its wait, move its queue's clock, record what the CPU runs
 * (under which deadline entity: a deadline container's task picked by the fair order runs as fair
 * work), and give it a slice that ends where the competing deadline seen at dispatch takes over.
 * Returns the time it started (the load tracking's too: a clock read is a kfunc).
 */
static __always_inline u64 fdl_on_running(struct task_struct *p, struct fdl_task *t, s32 cpu)
{
	u64 now = env_now(), queue, dl, bw, wait = 0, vdt, slice, clipped, cgref = fdl_task_cgref(t);
	struct fdl_cgroup *cg = env_cgroup(cgref), *top;
	struct fdl_cpu *cc = env_cpu(cpu);
	bool waited = t->enqueued_at;
	/*
	 * Its first start since it became runnable (fdl_on_runnable clears started). Not "no CPU
	 * time charged since": the charge is the kernel's CPU time (fdl_charge), which a start
	 * preempted at once can leave at 0, and the next start counted as a wake-up's again.
	 */
	bool woke = !t->started;
	/* The queue it was taken from, if it waited in one (fdl_queued_took_first). */
	u32 took = t->queued_slot;
	struct fdl_entity *e;
	s64 left = 0;
	u32 b;

	fdl_queued_del(t);	/* it left its queue, if it was in one */
	t->started = 1;
	t->slice_start = now;
	t->exec_at = env_task_exec(p);
	if (cc) {
		fdl_cpu_burst(cc, now, t->burst_ns, t->avg_burst_ns, t->vtime);
		cc->local_since = 0;
		cc->claimed_at = 0;
		cc->inflight_retries = 0;
	}
	if (t->last_cpu && t->last_cpu != cpu + 1)
		stat_inc(nr_migrations);
	t->last_cpu = cpu + 1;
	if (t->enqueued_at) {
		wait = fdl_since(now, t->enqueued_at);	/* the waker's clock may stand ahead */
		if (cg) {
			__sync_fetch_and_add(&cg->wait_ns, wait);
			fdl_sum_charge(cgref, cg, 0, wait);
			b = fdl_lat_bucket(wait);
			if (b < FDL_LAT_BUCKETS)
				__sync_fetch_and_add(&cg->runq_lat[b], 1);
		}
		t->enqueued_at = 0;
	}
	/* Taken from a deadline container's queue by the fair order: it runs as fair work. */
	t->via_fair = 0;
	queue = fdl_task_queue_of(t, cgref, cg, &top, &e, now);
	vdt = fdl_vdt(now);
	if (e != &fdl.fair) {
		/* Its guarantee's budget read once, for its order and for its slice below. */
		left = fdl_entity_budget_left(e, now);
		dl = fdl_entity_order_within(e, vdt, left > 0);
		/*
		 * A container's work starts after a wait: was its deadline kept, whatever the path?
		 * Beyond its guarantee it made no promise (fdl_entity_promise).
		 */
		if (waited && cc && cc->pick_q == queue)	/* picked by its deadline (fdl_took) */
			fdl_entity_count(e, cc->pick_dl, cc->pick_vdt, wait, woke, p->pid);
		else if (waited)
			fdl_entity_count(e, fdl_entity_promise(e, dl), vdt, wait, woke, p->pid);
	} else if (waited && top && top->ent.deadline_rr_ns) {
		/*
		 * Served as fair work (fdl_entity_orders): beyond its guarantee it promised nothing, a
		 * start never late; without a guarantee, against its deadline as its deadline order
		 * would have placed it (fdl_entity_promise), so its misses are still the user's to see.
		 */
		if (top->ent.budget_rate)
			fdl_entity_count(&top->ent, vdt, vdt, wait, woke, p->pid);
		else	/* no guarantee: never within one (fdl_entity_budget_left) */
			fdl_entity_count(&top->ent, fdl_entity_promise(&top->ent,
					 fdl_entity_order_within(&top->ent, vdt, false)), vdt, wait,
					 woke, p->pid);
	}
	if (cc)
		cc->pick_q = 0;
	if (cc && cc->fair_pick) {
		if (cc->fair_pick == queue && e != &fdl.fair) {
			t->via_fair = 1;
			e = &fdl.fair;
		}
		cc->fair_pick = 0;
	} else if (e != &fdl.fair && fdl_fair_claim(top, e, vdt, &dl)) {
		/* Straight onto an idle CPU: it runs as the fair order would have placed it. */
		t->via_fair = 1;
		e = &fdl.fair;
	}
	fdl_fair_started(t, queue, top, took);
	fdl_run_count(t, top, queue);
	fdl_entity_refresh(e, vdt);
	dl = e->dl;
	bw = fdl_entity_bw(top, e);
	if (e == &fdl.fair)	/* run as fair work: no guarantee's budget (fdl_entity_budget_left) */
		left = 0;
	slice = fdl_base_slice();
	if (cc) {
		fdl_cpu_set(cc, fdl_entity_id(e, queue), queue, dl, now, bw, e->deadline_rr_ns, left);
		cc->picked = 0;
		if (e == &fdl.fair)
			cc->fair_served_at = now;
		if (cc->has_next)
			slice = fdl_tier_slice(slice, dl, bw, e->deadline_rr_ns, vdt, cc->next_dl,
					       true, left);
	}
	/* The slice ends where a CPU limit above it runs out of runtime (at a tick: fdl_time_slice). */
	clipped = fdl_bw_clip(cgref, slice, now);
	if (clipped != tun.slice_ns)
		env_set_slice(p, clipped);
	fdl_time_slice(cc, cpu, slice, now);
	return now;
}

/* A tick: charge, and end the slice if the competing deadline seen at dispatch is now earlier. */
static __always_inline void fdl_on_tick(struct task_struct *p, struct fdl_task *t, s32 cpu)
{
	struct fdl_cpu *cc = env_cpu(cpu);
	u64 now = env_now();

	if (fdl_charge(t, cpu, 1, now, env_task_exec(p))) {
		/* A CPU limit above it ran out: it stops now and waits for the refill. */
		env_set_slice(p, 0);
		return;
	}
	if (cc && cc->has_next && fdl_time_before(cc->next_dl, fdl_cpu_dl(cc, now, fdl_vdt(now)))) {
		cc->has_next = 0;
		env_set_slice(p, 0);
		stat_inc(nr_tick_preempts);
	}
}

/*
 * The task leaves the CPU. Its competitor no longer applies, unless the dispatcher has already
 * chosen the next task and its competitor: the kernel calls ops.dispatch before ops.stopping of
 * the task it replaces, and clearing has_next here dropped the competitor of every task that
 * followed a running one (its slice was never cut, nor was it preempted at a tick).
 */
static __always_inline void fdl_on_stopping(struct task_struct *p, struct fdl_task *t, s32 cpu,
					    bool slept)
{
	struct fdl_cpu *cc = env_cpu(cpu);
	u64 now = env_now();

	fdl_charge(t, cpu, 0, now, env_task_exec(p));
	/* Its usual burst (fdl_cpu_ends_soon): the CPU time it ran from its wake-up to this sleep. */
	if (slept)
		t->avg_burst_ns = t->avg_burst_ns ? fdl_ewma(t->avg_burst_ns, t->burst_ns) : t->burst_ns;
	fdl_run_uncount(t);
	fdl_nvcsw_close(t, now);	/* work that runs without sleeping turns batch */
	if (cc && !cc->picked)
		cc->has_next = 0;
	/* No longer CPU-bound work on this CPU (fdl_note_fair): the next task's ops.running says. */
	if (cc) {
		fdl_cpu_burst(cc, now, 0, 0, 0);
		fdl_timer_lapse(cc, slept);
	}
}

/* A task joins scx_fdl: it starts at the fair queue's clock. */
static __always_inline void fdl_on_enable(struct fdl_task *t, u32 weight)
{
	t->weight = weight;
	t->vqueue = FDL_DSQ_FAIR;
	t->vtime = fdl.fair.vtime_now;
}

#endif /* __FDL_POLICY_SCHED_H */
