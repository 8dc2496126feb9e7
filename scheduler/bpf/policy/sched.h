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

static __always_inline void fdl_count_dispatch(u32 path)
{
	struct fdl_cpu_stats *s = env_stats();

	if (s && path < FDL_NR_DISPATCH)
		s->nr_dispatched[path]++;
}

/*
 * Charge the running task for the CPU time since it was last charged: its vtime at its current
 * share, its cgroup's usage, and its deadline entity's bucket. Called on every tick as well as at
 * stop and dispatch, so each stretch is charged at the share and bandwidth that held during it.
 */
static __always_inline void fdl_charge(struct fdl_task *t, s32 cpu)
{
	u64 now = env_now(), delta = now - t->started_at, queue, bw;
	struct fdl_entity *e;
	struct fdl_cgroup *cg;
	struct fdl_cpu *cc;

	t->started_at = now;
	queue = fdl_task_queue(t, &e);
	fdl_fair_started(t, queue, e);
	t->vtime += fdl_vtime_delta(delta, fdl_task_share(t));
	cg = env_cgroup(fdl_task_cgid(t));
	if (cg)
		__sync_fetch_and_add(&cg->usage_ns, delta);
	bw = fdl_entity_bw(queue);
	fdl_entity_fill(e, delta, bw);
	cc = env_cpu(cpu);
	if (cc)
		fdl_cpu_set(cc, queue, e->dl, now, bw, e->deadline_rr_ns);
}

/*
 * The task became runnable (woken, created, moved in), however it will reach a CPU: count it in
 * its cgroups (a deadline container that thereby wakes starts a new bucket), in the fair
 * container, and place it in its queue's vtime order.
 */
static __always_inline void fdl_on_runnable(struct fdl_task *t, u32 weight)
{
	u64 now = env_now(), vdt = fdl_vdt(now), queue, cgid;
	struct fdl_entity *e;

	t->weight = weight;
	if (!t->acct_cgid) {
		cgid = env_cgroup(t->cgid) ? t->cgid : FDL_ROOT_CGID;
		t->acct_cgid = cgid;
		t->acct_weight = weight;
		fdl_cgroup_propagate(cgid, weight, 1, vdt);
		stat_inc(nr_became_runnable);
	}
	queue = fdl_task_queue(t, &e);
	if (queue == FDL_DSQ_FAIR && !t->fair_counted) {
		t->fair_counted = 1;
		if (__sync_fetch_and_add(&fdl.fair.nr_runnable, 1) == 0)
			fdl_entity_wake(&fdl.fair, vdt);
	}
	fdl_fair_place(t, queue, e);
}

/* The task is no longer runnable (slept, exited, left scx): uncount it. */
static __always_inline void fdl_on_quiescent(struct fdl_task *t)
{
	if (t->acct_cgid) {
		fdl_cgroup_propagate(t->acct_cgid, -(s64)t->acct_weight, -1, 0);
		t->acct_cgid = 0;
		stat_inc(nr_stopped_runnable);
	}
	if (t->fair_counted) {
		t->fair_counted = 0;
		__sync_fetch_and_sub(&fdl.fair.nr_runnable, 1);
	}
}

/*
 * The task must wait for a CPU. An idle CPU is woken for it; otherwise, if a busy CPU runs work
 * with a later deadline and enough slack, the task preempts it; otherwise it joins its queue, and
 * if a CPU runs later work with too little slack to preempt now, a timer preempts it before the
 * task's deadline.
 */
static __always_inline void fdl_on_enqueue(struct task_struct *p, struct fdl_task *t, u64 flags)
{
	u64 now = env_now(), queue, dl, vtime;
	struct fdl_entity *e;
	struct fdl_cpu *cc;
	s32 cpu, later = -1;

	t->enqueued_at = now;
	queue = fdl_task_queue(t, &e);
	if (t->vqueue != queue)	/* its queue changed while it was runnable */
		fdl_fair_place(t, queue, e);
	dl = fdl_entity_dl(e, fdl_vdt(now));
	vtime = fdl_fair_queue_vtime(t, e);

	cpu = env_pick_idle(p);
	if (cpu < 0) {
		cpu = fdl_choose_victim(p, t, queue, dl, now, &later);
		if (cpu >= 0 && (cc = env_cpu(cpu))) {
			/* Claim the CPU at our deadline, so that the next waker picks another one. */
			fdl_cpu_set(cc, queue, dl, now, fdl_entity_bw(queue), e->deadline_rr_ns);
			cc->has_next = 0;
			env_insert_local_on(p, cpu, tun.slice_ns, flags | FDL_ENQ_PREEMPT);
			fdl_entity_picked(e, dl, now);
			fdl_count_dispatch(FDL_DISPATCH_PREEMPT);
			stat_inc(nr_preempt_kicks);
			return;
		}
	}
	env_insert_vtime(p, queue, tun.slice_ns, vtime, flags);
	if (queue == FDL_DSQ_FAIR)
		stat_inc(nr_fair_enqueued);
	else
		stat_inc(nr_deadline_enqueued);
	if (cpu >= 0) {
		env_kick(cpu, false);
		stat_inc(nr_idle_kicks);
	} else if (later >= 0) {
		env_arm_timer(later, fdl_timer_delay(dl, now));
	}
}

/* Keep the better of two candidates in (bq, be, bdl), the runner-up in (nq, ne, ndl). */
#define fdl_consider(q, e, d)							\
	do {									\
		if (!be || fdl_time_before(d, bdl)) {				\
			nq = bq; ne = be; ndl = bdl;				\
			bq = q; be = e; bdl = d;				\
		} else if (!ne || fdl_time_before(d, ndl)) {			\
			nq = q; ne = e; ndl = d;				\
		}								\
	} while (0)

/*
 * A CPU needs work. Scan the deadline containers (refreshing the figures the fair container's
 * bandwidth is computed from), take the earliest deadline among the queues, and let the previous
 * task, if still runnable (pt != NULL), keep the CPU while it is still first: a different queue
 * must have an earlier deadline, its own queue a lower vtime.
 */
static __always_inline void fdl_on_dispatch(s32 cpu, struct task_struct *prev, struct fdl_task *pt)
{
	u64 now = env_now(), vdt = fdl_vdt(now), min_rr = tun.fair_deadline_ns;
	u64 bq = 0, nq = 0, bdl = 0, ndl = 0, cgid, d, pq, pdl, hv, cdl;
	struct fdl_entity *be = NULL, *ne = NULL, *e, *pe;
	s64 dl_wsum = 0, dl_unboosted = 0;
	struct fdl_cgroup *cg;
	struct fdl_cpu *cc;
	u32 i, n = fdl.nr_slots;
	bool keep, has;

	fdl_for(i, 0, FDL_MAX_CONTAINERS) {
		if (i >= n)
			break;
		cgid = fdl.containers[i];
		if (!cgid || !(cg = env_cgroup(cgid)))
			continue;
		e = &cg->ent;
		if (e->deadline_rr_ns && cg->contrib > 0) {
			dl_wsum += cg->contrib;
			dl_unboosted += cg->cpu_weight;
			min_rr = fdl_min(min_rr, e->deadline_rr_ns);
		}
		if (env_nr_queued(cgid) <= 0)
			continue;
		if (!e->deadline_rr_ns)	/* parameters removed: its queue drains as fair work */
			e = &fdl.fair;
		d = fdl_entity_dl(e, vdt);
		fdl_consider(cgid, e, d);
	}
	if (fdl.dl_wsum != dl_wsum)
		fdl.dl_wsum = dl_wsum;
	if (fdl.dl_unboosted_wsum != dl_unboosted)
		fdl.dl_unboosted_wsum = dl_unboosted;
	if (fdl.min_rr_ns != min_rr)
		fdl.min_rr_ns = min_rr;
	if (env_nr_queued(FDL_DSQ_FAIR) > 0) {
		d = fdl_entity_dl(&fdl.fair, vdt);
		fdl_consider(FDL_DSQ_FAIR, &fdl.fair, d);
	}

	cc = env_cpu(cpu);
	if (pt) {
		fdl_charge(pt, cpu);
		pq = fdl_task_queue(pt, &pe);
		pdl = fdl_entity_dl(pe, vdt);
		if (!be)
			keep = true;
		else if (bq == pq)
			keep = !(env_head_vtime(bq, &hv) && fdl_time_before(hv, pt->vtime));
		else
			keep = !fdl_time_before(bdl, pdl);
		if (keep) {
			/* Its competitor: the best other queue. */
			has = bq == pq ? ne != NULL : be != NULL;
			cdl = bq == pq ? ndl : bdl;
			env_set_slice(prev, fdl_slice(pdl, fdl_entity_bw(pq), cdl, has));
			if (cc) {
				cc->next_dl = cdl;
				cc->has_next = has;
			}
			fdl_count_dispatch(FDL_DISPATCH_PREV);
			return;
		}
	}

	if (be && env_move_to_local(bq)) {
		fdl_entity_picked(be, bdl, now);
		fdl_count_dispatch(bq == FDL_DSQ_FAIR ? FDL_DISPATCH_FAIR : FDL_DISPATCH_DEADLINE);
		if (cc) {
			cc->next_dl = ndl;
			cc->has_next = ne != NULL;
		}
		return;
	}
	/* The best queue emptied under us (another CPU took its task): the runner-up. */
	if (ne && env_move_to_local(nq)) {
		fdl_entity_picked(ne, ndl, now);
		fdl_count_dispatch(nq == FDL_DSQ_FAIR ? FDL_DISPATCH_FAIR : FDL_DISPATCH_DEADLINE);
		if (cc)
			cc->has_next = 0;
	}
}

/*
 * The task starts on cpu: account its wait, move its queue's clock, record what the CPU runs, and
 * give it a slice that ends where the competing deadline seen at dispatch takes over.
 */
static __always_inline void fdl_on_running(struct task_struct *p, struct fdl_task *t, s32 cpu)
{
	u64 now = env_now(), queue, dl, bw, wait;
	struct fdl_entity *e;
	struct fdl_cgroup *cg;
	struct fdl_cpu *cc;
	u32 b;

	t->started_at = now;
	if (t->last_cpu && t->last_cpu != cpu + 1)
		stat_inc(nr_migrations);
	t->last_cpu = cpu + 1;
	if (t->enqueued_at) {
		wait = now - t->enqueued_at;
		cg = env_cgroup(fdl_task_cgid(t));
		if (cg) {
			__sync_fetch_and_add(&cg->wait_ns, wait);
			b = fdl_lat_bucket(wait);
			if (b < FDL_LAT_BUCKETS)
				__sync_fetch_and_add(&cg->runq_lat[b], 1);
		}
		t->enqueued_at = 0;
	}
	queue = fdl_task_queue(t, &e);
	fdl_fair_started(t, queue, e);
	dl = fdl_entity_dl(e, fdl_vdt(now));
	bw = fdl_entity_bw(queue);
	cc = env_cpu(cpu);
	if (cc) {
		fdl_cpu_set(cc, queue, dl, now, bw, e->deadline_rr_ns);
		env_set_slice(p, fdl_slice(dl, bw, cc->next_dl, cc->has_next));
	}
}

/* A tick: charge, and end the slice if the competing deadline seen at dispatch is now earlier. */
static __always_inline void fdl_on_tick(struct task_struct *p, struct fdl_task *t, s32 cpu)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	fdl_charge(t, cpu);
	if (cc && cc->has_next && fdl_time_before(cc->next_dl, cc->dl)) {
		cc->has_next = 0;
		env_set_slice(p, 0);
		stat_inc(nr_tick_preempts);
	}
}

static __always_inline void fdl_on_stopping(struct fdl_task *t, s32 cpu)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	fdl_charge(t, cpu);
	if (cc)
		cc->has_next = 0;
}

/* A task joins scx_fdl: it starts at the fair queue's clock. */
static __always_inline void fdl_on_enable(struct fdl_task *t, u32 weight)
{
	t->weight = weight;
	t->vqueue = FDL_DSQ_FAIR;
	t->vtime = fdl.fair.vtime_now;
}

#endif /* __FDL_POLICY_SCHED_H */
