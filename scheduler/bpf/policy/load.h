/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Load tracking and the balancer's moves (issue 13; reference §3, §5). PELT (fdl_math.h) per
 * task and per CPU, summed by domain when read:
 *
 * - a task's own sums (load_avg = weight x runnable), which the balancer uses to choose one:
 *   brought up to date only where its runnable state changes (ops.runnable, ops.quiescent) and
 *   where the balancer's candidate is recorded (fdl_load_running). Its runnable sum over a
 *   stretch in one state is the same in one step as in several; its util is not kept (nothing
 *   reads it: a domain's util is its CPUs'). Updated at every start and stop as well, it was a
 *   quarter of the load tracking's instructions per task started;
 * - a CPU's sums over the weights and count of the tasks runnable on it and over its busy time
 *   (struct fdl_cpu_load). A task counts on the CPU it woke for and moves with the CPU it runs
 *   on. Every callback about a task holds the run-queue lock of the task's CPU, which is the CPU
 *   whose sums it writes, as the kernel's cfs_rq: no lock of ours, no line shared by a domain. A
 *   task taken to another CPU (a dispatch from a queue) leaves its old CPU's sums through that
 *   CPU's removed_* counters (atomics), folded in at the old CPU's next update.
 *
 * The balancer (scheduler/src/load_balance.rs) reads them once a period (fdl_read_loads, which
 * sums each domain's CPUs), with the tasks each CPU ran in the period as candidates, and asks for
 * moves (fdl_set_moves): a task asked to move is queued in its new domain at its next enqueue
 * (fdl_lb_cpu), and its wake-up looks for an idle CPU there first.
 */
#ifndef __FDL_POLICY_LOAD_H
#define __FDL_POLICY_LOAD_H

#include "state.h"

/*
 * A CPU's sums (NULL for no CPU). The address is taken after the test, behind a barrier: computed
 * before it (clang's choice where a caller passed the result on untested), the verifier refused
 * the arithmetic on a pointer that may be NULL.
 */
static __always_inline struct fdl_cpu_load *fdl_cpu_load(s32 cpu)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	if (!cc)
		return NULL;
	barrier_var(cc);
	return &cc->load;
}

/* Take what other CPUs removed out of cl's counts (a copy's, or under its CPU's lock). */
static __always_inline void fdl_cpu_load_fold(struct fdl_cpu_load *cl, u64 rw, u64 rn)
{
	cl->weight_sum -= fdl_min(cl->weight_sum, rw);
	cl->nr_runnable -= fdl_min(cl->nr_runnable, rn);
}

/*
 * Bring a CPU's sums to now (under its run-queue lock): what other CPUs removed first, then the
 * stretch since its last update with the weights, tasks and busy state it held. The averages
 * (divisions) are left to the reader, fdl_read_loads.
 */
static __always_inline void fdl_cpu_load_sync(struct fdl_cpu_load *cl, u64 now)
{
	u64 rw = cl->removed_weight, rn = cl->removed_nr;

	if (rw || rn) {
		__sync_fetch_and_sub(&cl->removed_weight, rw);
		__sync_fetch_and_sub(&cl->removed_nr, rn);
		fdl_cpu_load_fold(cl, rw, rn);
	}
	fdl_pelt_accumulate(&cl->pelt, now, cl->weight_sum, cl->nr_runnable, cl->running);
}

/*
 * Take t out of the sums of the CPU it counts on. On cpu itself (whose lock is held; here: its
 * sums if the caller has them, else NULL) directly; on another through that CPU's removed
 * counters.
 */
static __always_inline void fdl_load_leave(struct fdl_task *t, s32 cpu, struct fdl_cpu_load *here,
					   u64 now)
{
	s32 at = (s32)t->load_cpu - 1;
	struct fdl_cpu_load *cl;

	if (!t->load_cpu)
		return;
	t->load_cpu = 0;
	cl = here;
	if (at != cpu || !cl)
		cl = fdl_cpu_load(at);
	if (!cl)
		return;
	if (at == cpu) {
		fdl_cpu_load_sync(cl, now);
		fdl_cpu_load_fold(cl, t->load_weight, 1);
	} else {
		__sync_fetch_and_add(&cl->removed_weight, t->load_weight);
		__sync_fetch_and_add(&cl->removed_nr, 1);
	}
}

/* Count t on cpu (whose lock is held; cl: its sums, synced to now). */
static __always_inline void fdl_load_join(struct fdl_task *t, struct fdl_cpu_load *cl, s32 cpu)
{
	cl->weight_sum += t->load_weight;
	cl->nr_runnable++;
	t->load_cpu = cpu + 1;
}

/* t stops being runnable (it sleeps or leaves) on cpu: it was runnable up to now. */
static __always_inline void fdl_load_quiescent(struct fdl_task *t, s32 cpu, u64 now)
{
	fdl_pelt_accumulate(&t->pelt, now, 1, 1, 0);
	fdl_load_leave(t, cpu, NULL, now);
}

/* t became runnable, on cpu: its sums only decayed while it slept. */
static __always_inline void fdl_load_runnable(struct fdl_task *t, s32 cpu, u64 now)
{
	struct fdl_cpu_load *cl = fdl_cpu_load(cpu);

	/* Still counted somewhere (not seen to sleep): not twice. */
	fdl_load_leave(t, cpu, cl, now);
	fdl_pelt_accumulate(&t->pelt, now, 0, 0, 0);
	t->load_weight = t->weight;
	if (!cl)
		return;
	fdl_cpu_load_sync(cl, now);
	fdl_load_join(t, cl, cpu);
}

/*
 * t (pid) starts on cpu, of domain dom. If it counted on another CPU (or none) it moves here; the
 * first time in a balancer period it is recorded as one of this CPU's candidates; a move the
 * balancer asked for that reached its domain is done and counted. A task already counted here
 * (woken for this CPU) changes none of its sums: no update. The CPU's busy state changes where it
 * leaves or enters idle (fdl_load_idle), not at every switch: brought to now at every start and
 * stop, the CPU's sums were 290 BPF instructions per task started beside hackbench at 8 vCPUs in
 * four domains (bench/insn-profile.sh --lines --cpus 8 --numa 2 antagonist=1, c0457d5).
 */
static __always_inline void fdl_load_running(struct fdl_task *t, s32 pid, s32 cpu, u32 dom,
					     u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);
	struct fdl_cpu_load *cl;
	u64 gen = fdl.lb.gen, slot;

	if (!cc)
		return;
	barrier_var(cc);
	cl = &cc->load;
	if (t->load_cpu != (u32)cpu + 1) {
		fdl_load_leave(t, cpu, cl, now);
		fdl_cpu_load_sync(cl, now);
		fdl_load_join(t, cl, cpu);
	}
	/* Busy from before the scheduler attached, with no idle exit seen yet. */
	if (!cl->running) {
		fdl_cpu_load_sync(cl, now);
		cl->running = 1;
	}
	if (cl->lb_gen != gen) {	/* the first of a new period here: the old candidates go */
		cl->lb_gen = gen;
		cl->nr_active = 0;
	}
	if (t->lb_rec_gen != gen + 1) {
		/* Its load as the balancer sees it: runnable since its last update. */
		fdl_pelt_accumulate(&t->pelt, now, 1, 1, 0);
		fdl_pelt_avg(&t->pelt, t->weight);
		slot = cl->nr_active++ & (FDL_LB_ACTIVE - 1);
		cl->active[slot].pid = pid;
		cl->active[slot].weight = t->weight;
		cl->active[slot].load_avg = t->pelt.load_avg;
		/*
		 * Its deadline pressure: the deadline_rr it starts under (ops.running recorded what
		 * the CPU runs, fdl_cpu_set), 0 where it runs as fair work.
		 */
		cl->active[slot].deadline_rr_ns = cc->queue != FDL_DSQ_FAIR ? cc->rr_ns : 0;
		t->lb_rec_gen = gen + 1;
	}
	/* Arrived; else it is queued there again next time, until the balancer's next period. */
	if (t->lb_dom == dom + 1) {
		cl->nr_moved_in++;
		t->lb_dom = 0;
	}
}

/*
 * cpu enters idle (idle) or leaves it (ops.update_idle, under the CPU's run-queue lock): its busy
 * state, which its util sum follows, changes here. Busy is "not idle", so the time it runs tasks
 * of other classes (RT, stop) counts too, as the CPU's utilisation does in top. No update at a
 * tick: a CPU's sums are brought to now by the reader; the task's, when it sleeps
 * (fdl_load_quiescent).
 */
static __always_inline void fdl_load_idle(s32 cpu, bool idle, u64 now)
{
	struct fdl_cpu_load *cl = fdl_cpu_load(cpu);

	if (!cl)
		return;
	fdl_cpu_load_sync(cl, now);
	cl->running = !idle;
}

/*
 * A CPU's sums as the reader sees them at now, in *pelt, *weight_sum, *nr_runnable: read without
 * the CPU's lock (a torn read costs one sample, not a decision's safety), removed tasks out, the
 * stretch since its last update in, the averages computed.
 */
static __always_inline void fdl_cpu_load_view(const struct fdl_cpu_load *cl, struct fdl_pelt *pelt,
					      u64 *weight_sum, u64 *nr_runnable, u64 now)
{
	*pelt = cl->pelt;
	*weight_sum = cl->weight_sum - fdl_min(cl->weight_sum, cl->removed_weight);
	*nr_runnable = cl->nr_runnable - fdl_min(cl->nr_runnable, cl->removed_nr);
	fdl_pelt_accumulate(pelt, now, *weight_sum, *nr_runnable, cl->running);
	fdl_pelt_avg(pelt, 1);
}

/*
 * The domain the balancer asked t (pid) to move to, plus one (0: none). The moves are looked at
 * once per balancer period, in a plain loop of at most FDL_LB_MAX_MOVES turns (bpf_for's kfunc
 * per turn was most of this look's instructions).
 */
static __always_inline u32 fdl_lb_target(struct fdl_task *t, s32 pid)
{
	u64 gen = fdl.lb.gen;
	u32 i, n;

	if (t->lb_seen_gen == gen)
		return t->lb_dom;
	t->lb_seen_gen = gen;
	t->lb_dom = 0;
	n = fdl.lb.nr_moves;
	for (i = 0; i < FDL_LB_MAX_MOVES && i < n; i++) {
		if (fdl.lb.moves[i].pid == pid && fdl.lb.moves[i].dom < FDL_MAX_DOMS) {
			t->lb_dom = fdl.lb.moves[i].dom + 1;
			break;
		}
	}
	return t->lb_dom;
}

/*
 * The CPU whose domain t is queued in when the balancer moves it (-1: not moved, or it may not
 * run there): the domain's DSQ is then where its CPUs find it first.
 */
static __always_inline s32 fdl_lb_cpu(struct task_struct *p, struct fdl_task *t, s32 pid)
{
	u32 lb = fdl_lb_target(t, pid);
	s32 cpu;

	if (!lb)
		return -1;
	cpu = tun.dom_cpu[(lb - 1) & (FDL_MAX_DOMS - 1)];
	return env_task_allowed(p, cpu) ? cpu : -1;
}

/* The balancer's moves for a new period (fdl_set_moves): written before the generation moves. */
static __always_inline s32 fdl_lb_set_moves(const struct fdl_lb_move *moves, u32 n)
{
	u32 i;

	if (n > FDL_LB_MAX_MOVES)
		return -E2BIG;
	fdl_for(i, 0, FDL_LB_MAX_MOVES) {
		if (i >= n)
			break;
		if (moves[i].dom >= env_nr_doms())
			return -EINVAL;
	}
	fdl_for(i, 0, FDL_LB_MAX_MOVES) {
		if (i >= n)
			break;
		fdl.lb.moves[i] = moves[i];
	}
	fdl.lb.nr_moves = n;
	env_mb();
	fdl.lb.gen++;
	return 0;
}

#endif /* __FDL_POLICY_LOAD_H */
