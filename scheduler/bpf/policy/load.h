/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Load tracking and the balancer's moves (issue 13; reference §3, §5). PELT (fdl_math.h) per
 * task, per queue domain and per CPU:
 *
 * - a task's own sums (load_avg = weight x runnable), which the balancer uses to choose one;
 * - a domain's sums over the weights and count of the tasks runnable in it: a task counts in the
 *   domain of the CPU it woke for, and moves with it when it starts on a CPU of another domain;
 *   wakers of any CPU write them, so under the domain's lock;
 * - a CPU's busy time (util), written by that CPU only.
 *
 * The balancer (scheduler/src/load_balance.rs) reads them once a period (fdl_read_loads), with the
 * tasks each domain ran in that period as its candidates, and asks for moves (fdl_set_moves): a
 * task asked to move is queued in its new domain at its next enqueue (fdl_lb_cpu), and its wake-up
 * looks for an idle CPU there first.
 */
#ifndef __FDL_POLICY_LOAD_H
#define __FDL_POLICY_LOAD_H

#include "state.h"

/*
 * Bring a domain's sums to now with the weights and tasks it held since (under its lock). The
 * averages (divisions) are left to whoever reads them: fdl_read_loads.
 */
static __always_inline void fdl_dom_pelt(struct fdl_dom_load *dl, u64 now)
{
	fdl_pelt_accumulate(&dl->pelt, now, dl->weight_sum, dl->nr_runnable, 0);
}

/* Count task t in domain dom (add), or no longer. */
static __always_inline void fdl_dom_account(struct fdl_task *t, u32 dom, bool add, u64 now)
{
	struct fdl_dom_ctx *dc = env_dom_ctx(dom);

	if (!dc)
		return;
	env_dom_lock(dc);
	fdl_dom_pelt(&dc->load, now);
	if (add) {
		dc->load.weight_sum += t->load_weight;
		dc->load.nr_runnable++;
	} else {
		dc->load.weight_sum -= fdl_min(dc->load.weight_sum, t->load_weight);
		dc->load.nr_runnable -= dc->load.nr_runnable ? 1 : 0;
	}
	env_dom_unlock(dc);
}

/* t stops being runnable (it sleeps or leaves): it waited or was runnable up to now. */
static __always_inline void fdl_load_quiescent(struct fdl_task *t, u64 now)
{
	fdl_pelt_accumulate(&t->pelt, now, 1, 1, 0);
	if (!t->load_dom)
		return;
	fdl_dom_account(t, t->load_dom - 1, false, now);
	t->load_dom = 0;
}

/* t became runnable, for a CPU of domain dom: its sums only decayed while it slept. */
static __always_inline void fdl_load_runnable(struct fdl_task *t, u32 dom, u64 now)
{
	if (t->load_dom)	/* still counted somewhere (not seen to sleep): not twice */
		fdl_load_quiescent(t, now);
	fdl_pelt_accumulate(&t->pelt, now, 0, 0, 0);
	t->load_weight = t->weight;
	fdl_dom_account(t, dom, true, now);
	t->load_dom = dom + 1;
}

/*
 * t (pid) starts on cpu, of domain dom. It waited up to now, and the CPU was idle since its last
 * task stopped. If it counted in another domain it moves here; the first time in a balancer
 * period it is recorded as one of this domain's candidates; a move the balancer asked for that
 * reached its domain is done and counted.
 */
static __always_inline void fdl_load_running(struct fdl_task *t, s32 pid, s32 cpu, u32 dom,
					     u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);
	struct fdl_dom_ctx *dc;
	u64 gen = fdl.lb.gen, slot;
	bool join, record;

	fdl_pelt_accumulate(&t->pelt, now, 1, 1, 0);
	if (cc) {
		fdl_pelt_accumulate(&cc->util, now, 0, 0, 0);
		cc->util_running = 1;
	}
	join = t->load_dom != dom + 1;
	record = t->lb_rec_gen != gen + 1;
	if (!join && !record && !t->lb_dom)
		return;
	if (record)	/* its load as the balancer sees it: once per period */
		fdl_pelt_avg(&t->pelt, t->weight);
	if (join && t->load_dom)
		fdl_dom_account(t, t->load_dom - 1, false, now);
	dc = env_dom_ctx(dom);
	if (!dc)
		return;
	env_dom_lock(dc);
	if (join) {
		fdl_dom_pelt(&dc->load, now);
		dc->load.weight_sum += t->load_weight;
		dc->load.nr_runnable++;
	}
	if (dc->load.lb_gen != gen) {	/* the first of a new period: the old candidates go */
		dc->load.lb_gen = gen;
		dc->load.nr_active = 0;
	}
	if (record) {
		slot = dc->load.nr_active++ & (FDL_LB_ACTIVE - 1);
		dc->load.active[slot].pid = pid;
		dc->load.active[slot].weight = t->weight;
		dc->load.active[slot].load_avg = t->pelt.load_avg;
	}
	if (t->lb_dom == dom + 1)
		dc->load.nr_moved_in++;
	env_dom_unlock(dc);
	t->load_dom = dom + 1;
	t->lb_rec_gen = gen + 1;
	/* Arrived; else it is queued there again next time, until the balancer's next period. */
	if (t->lb_dom == dom + 1)
		t->lb_dom = 0;
}

/*
 * t stops running on cpu. No update at a tick: a task that runs on is brought up to date when
 * it stops or sleeps, the CPU's util by the reader (util_running).
 */
static __always_inline void fdl_load_stopping(struct fdl_task *t, s32 cpu, u64 now)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	fdl_pelt_accumulate(&t->pelt, now, 1, 1, 1);
	if (cc) {
		fdl_pelt_accumulate(&cc->util, now, 1, 1, 1);
		cc->util_running = 0;
	}
}

/*
 * The domain the balancer asked t (pid) to move to, plus one (0: none). The moves are looked at
 * once per balancer period.
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
	fdl_for(i, 0, FDL_LB_MAX_MOVES) {
		if (i >= n)
			break;
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
