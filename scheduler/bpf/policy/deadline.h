/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The deadline tier: the draining-buckets model of the FDL RFC (reference section 1).
 *
 * Every deadline entity (a deadline container, or all fair work as the fair container) has a
 * bucket deadline dl in virtual deadline time, vdt = now - vdt_lag. Running fills the bucket at
 * the entity's bandwidth (fdl_dl_fill); an entity that wakes starts a new bucket between
 * vdt + deadline_wakeup and vdt + deadline_rr, with no credit for its sleep; a busy one is never
 * more than deadline_rr ahead. The dispatcher runs the entity with the earliest deadline.
 *
 * When vdt passes the earliest deadline (a miss: the machine cannot keep every promise), vdt is
 * moved back to just before it and the spread of all deadlines is halved around it, so the
 * lateness is shared by everyone instead of piling on the one that waited. The halving is
 * applied lazily: an entity catches up with the halvings it missed when it is next looked at.
 */
#ifndef __FDL_POLICY_DEADLINE_H
#define __FDL_POLICY_DEADLINE_H

#include "state.h"

static __always_inline u64 fdl_vdt(u64 now)
{
	return now - fdl.vdt_lag;
}

/*
 * Move the entity's bucket from old, the value just read, to dl: as a difference added, not a
 * store, so a fill another CPU added meanwhile (fdl_entity_fill, an atomic add) is kept on top,
 * as if it came after. Stored, the value read before that fill overwrote it: a CPU's tick charged
 * fair work 4 ms while another CPU's wake-up refreshed the fair container's bucket, and the 4 ms
 * were never charged. Nothing is written where nothing changes (most refreshes): no store to a
 * record every CPU reads.
 */
static __always_inline void fdl_entity_move(struct fdl_entity *e, u64 old, u64 dl)
{
	if (dl != old)
		__sync_fetch_and_add(&e->dl, dl - old);
}

/*
 * The entity's bucket brought up to date at vdt, not written back (*old: the value read, for
 * fdl_entity_move): the halvings since it was last looked at, and at most FDL_MAX_DEBT_NS past
 * vdt + rr; the fair container's at most its deadline_rr behind vdt (fdl_dl_floor).
 */
static __always_inline u64 fdl_entity_fresh(struct fdl_entity *e, u64 vdt, u64 *old)
{
	u64 gen = fdl.spread_gen, dl = e->dl;

	*old = dl;
	if (e->spread_gen != gen) {
		/* Every halving it missed (one, when its gen was behind by three, left an entity
		 * whose work all ran, and was not looked at, 60 ms ahead instead of 15). */
		dl = fdl_dl_halve_spread_n(dl, fdl.spread_vdt, gen - e->spread_gen);
		e->spread_gen = gen;
	}
	dl = fdl_dl_cap(dl, vdt, e->deadline_rr_ns + FDL_MAX_DEBT_NS);
	if (e == &fdl.fair)
		dl = fdl_dl_floor(dl, vdt, e->deadline_rr_ns);
	return dl;
}

/* Bring the entity's bucket up to date at vdt (fdl_entity_fresh). */
static __always_inline void fdl_entity_refresh(struct fdl_entity *e, u64 vdt)
{
	u64 old, dl = fdl_entity_fresh(e, vdt, &old);

	fdl_entity_move(e, old, dl);
}

/*
 * New deadlines for a container (both 0: fair work again), written by the control plane at vdt.
 * Its bucket starts anew at once, and is written before the deadlines are: a CPU that sees the new
 * deadline_rr also sees that bucket, never the stale one a fair cgroup carries (nothing keeps a
 * fair cgroup's bucket up to date; read with a deadline, it can make the container look tens of
 * ms late).
 */
static __always_inline void fdl_entity_set_params(struct fdl_entity *e, u64 rr_ns, u64 wakeup_ns,
						  u64 vdt)
{
	if (rr_ns) {
		e->spread_gen = fdl.spread_gen;
		e->dl = fdl_dl_wakeup(vdt, vdt, wakeup_ns, rr_ns);
		env_mb();
	}
	e->deadline_wakeup_ns = wakeup_ns;
	e->deadline_rr_ns = rr_ns;
}

/* What the entity competes with at vdt (fdl_dl_key): its deadline, or after all within bandwidth. */
static __always_inline u64 fdl_entity_key(struct fdl_entity *e, u64 vdt)
{
	fdl_entity_refresh(e, vdt);
	return fdl_dl_key(e->dl, vdt, e->deadline_rr_ns);
}

/*
 * A container's granted guarantee (0: none), written by the control plane. A new or changed
 * guarantee starts with a full budget: the container has used none of it yet.
 */
static __always_inline void fdl_entity_set_budget(struct fdl_entity *e, u64 rate, u64 now)
{
	if (rate == e->budget_rate)
		return;
	e->budget_at = now;
	e->budget_ns = (s64)fdl_budget_cap(rate, tun.guarantee_window_ns);
	env_mb();
	e->budget_rate = rate;
}

/*
 * The entity's budget at now (fdl_budget_earn), earned since it was last brought up to date. One
 * CPU earns each stretch (compare-and-swap on budget_at), once it earns FDL_EARN_MIN_NS or more;
 * earning and spending (fdl_charge) are atomic adds, so a concurrent charge is never lost, only
 * the clamp may be off by it.
 */
static __always_inline s64 fdl_entity_budget(struct fdl_entity *e, u64 now)
{
	/*
	 * Earned at the granted rate, scaled down while the guarantees overcommit (fdl_budget_scale);
	 * fair work's (fdl_fair_set_rate) is what that scaling keeps for it, never scaled.
	 */
	u64 at = e->budget_at, earned, rate = e == &fdl.fair ? e->budget_rate :
				      fdl_budget_scaled(e->budget_rate, fdl.budget_scale);
	s64 b, c;

	if (!rate)
		return 0;
	if (!fdl_time_before(at, now))
		return e->budget_ns;
	earned = fdl_budget_earned(now - at, rate, tun.guarantee_window_ns);
	if (earned >= FDL_EARN_MIN_NS && __sync_val_compare_and_swap(&e->budget_at, at, now) == at) {
		b = e->budget_ns;
		c = fdl_budget_add(b, earned, rate, tun.guarantee_window_ns);
		/*
		 * Back within its guarantee: its deadline promise starts anew, as at a wake-up. Its
		 * bucket did not move while it waited beyond the guarantee for the fair order, so its
		 * first start within would count as late by that whole wait (seen: a 4 ms container
		 * 46 ms late in the matrix's spin1 cell). The new deadline is in place before the
		 * budget turns positive: another CPU that sees the budget sees the deadline that goes
		 * with it (budget first, a start there counted late by its whole wait).
		 */
		if (b <= 0 && c > 0 && e != &fdl.fair) {
			u64 dl = e->dl;

			fdl_entity_move(e, dl, fdl_dl_wakeup(dl, fdl_vdt(now), e->deadline_wakeup_ns,
							     e->deadline_rr_ns));
			env_mb();
		}
		if (c != b)
			__sync_fetch_and_add(&e->budget_ns, c - b);
	}
	return e->budget_ns;
}

/*
 * Fair work's protected bandwidth (fdl_fair_protected: what the containers' guarantees are scaled
 * to leave it) as a budget, at the rate computed while some container's guarantee and fair work
 * are active. It gives fair work no tier of its own: it only says whether fair work uses more
 * than that bandwidth, over the same window as the guarantees (fdl_loan_due, fdl_choose_among).
 * The rate follows the share without resetting the budget, and stays while no guarantee is
 * active (the containers sleep between bursts: reset then, hackbench's budget beside them was
 * full again at every burst, and the 4 ms container could not take its CPUs: p99 3.5 ms, not
 * 1.2-2.4, in deadline-within); the first budget starts full, as a container's does.
 */
static __always_inline void fdl_fair_set_rate(u64 rate, u64 now)
{
	struct fdl_entity *e = &fdl.fair;
	u64 old = e->budget_rate;

	if (!rate || rate == old)	/* kept while no guarantee (or no fair work) is active */
		return;
	if (!old) {
		e->budget_at = now;
		e->budget_ns = (s64)fdl_budget_cap(rate, tun.guarantee_window_ns);
		env_mb();
	} else {
		fdl_entity_budget(e, now);	/* earned at the old rate up to now */
	}
	e->budget_rate = rate;
}

/* Is fair work within its protected bandwidth (fdl_fair_set_rate) at now? */
static __always_inline bool fdl_fair_within(u64 now)
{
	return fdl.fair.budget_rate && fdl_entity_budget(&fdl.fair, now) > 0;
}

/*
 * The running time a deadline container has left within its guarantee at now (0: none; fair work:
 * always 0, its budget places it in no tier).
 */
static __always_inline s64 fdl_entity_budget_left(struct fdl_entity *e, u64 now)
{
	s64 b;

	if (e == &fdl.fair || !e->deadline_rr_ns || !e->budget_rate)
		return 0;
	b = fdl_entity_budget(e, now);
	return b > 0 ? b : 0;
}

/* Is a deadline container within its guarantee at now: budget left? */
static __always_inline bool fdl_entity_within(struct fdl_entity *e, u64 now)
{
	return fdl_entity_budget_left(e, now) > 0;
}

/*
 * Does the container's deadline order its work at now, or is its work fair work? A deadline
 * container's work runs by its deadline, except where the deadline is looser than fair work's
 * (tun.fair_deadline_ns) and the container is not within a guarantee (it used its guarantee up,
 * or has none). There, as a key, the deadline only made the container wait longer than a cgroup
 * without parameters: in the tier behind the guarantees its 20 ms stood behind fair work's 5 ms
 * at every tie, and its running work was everyone's preemption victim (quiet spin1 cell, shares
 * 300, 2026-12-03: 144 of 211 waits over 2.5 ms in the 20 ms container against 49 in the cgroup
 * without parameters; under EEVDF 67 and 83; without a guarantee, issue 10's matrix of 7d221c2:
 * the 20 ms container's p99 1.06-1.39x the cgroup without parameters' in its three quiet cells
 * with shares 0). Such a container is served as the cgroup it would be without a deadline; its
 * starts are still counted against the deadline where it has no guarantee (fdl_on_running). One
 * whose deadline is not looser than fair work's keeps it beyond or without a guarantee, in the
 * tier behind the guarantees, as the RFC's deadline tree put it. (At fair work's own 5 ms, the
 * RFC cells' loose container, its deadline kept it level with the cgroup without parameters or
 * ahead: p99 0.87-1.03x that cgroup's in four runs of two boots, 1.02-1.59x served as fair work.)
 */
static __always_inline bool fdl_entity_orders(struct fdl_entity *e, u64 now)
{
	if (!e->deadline_rr_ns)
		return false;
	return e->deadline_rr_ns <= tun.fair_deadline_ns || fdl_entity_within(e, now);
}

/* fdl_entity_orders, where whether e is within its guarantee (fdl_entity_within) is known. */
static __always_inline bool fdl_entity_orders_within(struct fdl_entity *e, bool within)
{
	return e->deadline_rr_ns && (e->deadline_rr_ns <= tun.fair_deadline_ns || within);
}

/*
 * Where the entity stands in the order at now (fdl_order_key), where whether it is within its
 * guarantee at now (fdl_entity_within) is known: a caller that needs that answer too reads the
 * budget once (each inlined read is verified again).
 */
static __always_inline u64 fdl_entity_order_within(struct fdl_entity *e, u64 vdt, bool within)
{
	fdl_entity_refresh(e, vdt);
	return fdl_order_key(e->dl, vdt, e->deadline_rr_ns, within);
}

/* Where the entity stands in the order at now (fdl_order_key). */
static __always_inline u64 fdl_entity_order(struct fdl_entity *e, u64 now, u64 vdt)
{
	return fdl_entity_order_within(e, vdt, fdl_entity_within(e, now));
}

/* Where the fair container stands in the order: never within a guarantee (fdl_entity_budget_left). */
static __always_inline u64 fdl_fair_order(u64 vdt)
{
	return fdl_entity_order_within(&fdl.fair, vdt, false);
}

/* The entity became runnable from empty: a new bucket, no credit for the sleep. */
static __always_inline void fdl_entity_wake(struct fdl_entity *e, u64 vdt)
{
	u64 old, dl = fdl_entity_fresh(e, vdt, &old);

	/* Brought up to date and clamped in one move. */
	fdl_entity_move(e, old, fdl_dl_wakeup(dl, vdt, e->deadline_wakeup_ns, e->deadline_rr_ns));
}

/* It ran delta_ns at bandwidth bw: fill its bucket (an add, so CPUs running members both count). */
static __always_inline void fdl_entity_fill(struct fdl_entity *e, u64 delta_ns, u64 bw)
{
	__sync_fetch_and_add(&e->dl, fdl_dl_fill(0, delta_ns, bw));
}

/*
 * A miss against min_dl, the earliest deadline, seen at `now`: move vdt back to just before it
 * (fdl_miss_lag_step) and halve the spread. Done once per miss, by compare-and-swap: a CPU that
 * finds vdt already moved back behind min_dl does nothing.
 */
static __always_inline void fdl_miss(u64 min_dl, u64 now)
{
	u64 lag = fdl.vdt_lag, vdt = now - lag, step;

	if (!fdl_time_before(min_dl, vdt))
		return;
	step = fdl_miss_lag_step(vdt, min_dl, fdl.min_rr_ns ?: tun.fair_deadline_ns);
	if (__sync_val_compare_and_swap(&fdl.vdt_lag, lag, lag + step) != lag)
		return;
	fdl.spread_vdt = now - (lag + step);
	__sync_fetch_and_add(&fdl.spread_gen, 1);
	__sync_fetch_and_add(&fdl.counters.nr_lag_steps, 1);
}

/*
 * The deadline a start is judged against, from the entity's order key (fdl_entity_order): within
 * its guarantee, that key; a container without a guarantee (and fair work) keeps its deadline in
 * the second tier, so the key without the tier's offset; a container beyond its guarantee makes no
 * promise, and its key, a tier back, is never late.
 */
static __always_inline u64 fdl_entity_promise(struct fdl_entity *e, u64 order)
{
	/*
	 * Not fair work's budget: it has one (fdl_fair_set_rate) but its key is always a tier
	 * back (fdl_fair_order); judged with the offset, its picks were never late once any
	 * guarantee had been active.
	 */
	return e != &fdl.fair && e->budget_rate ? order : order - FDL_TIER_NS;
}

/* Record s is now the start `late` late, of task pid after waiting waited_ns (woke: a wake-up's). */
static __always_inline void fdl_late_start_set(struct fdl_late_start *s, u64 late, u64 waited_ns,
					       u32 pid, bool woke)
{
	s->late_ns = late;
	s->wait_ns = waited_ns;
	s->pid = pid;
	s->woke = woke;
}

/*
 * Count a start (or pick) of the entity's work whose key was dl, and a miss if vdt had passed it,
 * by its lateness: how long after the deadline it started, but at most how long it waited
 * (waited_ns; a pick: -1). A start is never later than its wait: a deadline already behind vdt
 * when the task became runnable (the container's bucket owed from before, while other members
 * ran) made it a miss, but its lateness is the container's debt, not this start's delay (seen:
 * 44.8 ms late where the probe's worst delay was 20 ms). woke: the start is the first since its
 * task became runnable (a wake-up's), counted apart as well (nr_wake_starts, nr_wake_misses).
 * pid: the task that started (0: a pick, no task); a new worst lateness records it, its wait and
 * woke (max_late), so a report can say who was late; the same for the current measurement window
 * (win_late, fdl_state.late_window).
 */
static __always_inline void fdl_entity_count(struct fdl_entity *e, u64 dl, u64 vdt, u64 waited_ns,
					     bool woke, u32 pid)
{
	u64 late, gen, end;
	u32 b;

	__sync_fetch_and_add(&e->nr_picks, 1);
	if (woke)
		__sync_fetch_and_add(&e->nr_wake_starts, 1);
	if (!fdl_time_before(dl, vdt))
		return;
	late = fdl_min(vdt - dl, waited_ns);
	__sync_fetch_and_add(&e->nr_misses, 1);
	if (woke)
		__sync_fetch_and_add(&e->nr_wake_misses, 1);
	b = fdl_lat_bucket(late);
	if (b < FDL_LAT_BUCKETS)	/* for the verifier */
		__sync_fetch_and_add(&e->late_hist[b], 1);
	__sync_fetch_and_add(&e->late_sum_ns, late);
	if (late > e->max_late.late_ns)
		fdl_late_start_set(&e->max_late, late, waited_ns, pid, woke);
	/*
	 * The window's worst, as the worst since the start (unlocked alike: a report). Past the
	 * window's end the figures stay as they were at its end (a clock read, on misses only).
	 */
	gen = fdl.late_window;
	if (e->win_gen != gen) {
		e->win_gen = gen;
		e->win_late.late_ns = 0;
	}
	end = fdl.late_window_end;
	if (late > e->win_late.late_ns && (!end || fdl_time_before(env_now(), end)))
		fdl_late_start_set(&e->win_late, late, waited_ns, pid, woke);
}

/*
 * A new measurement window of the worst lateness (fdl_entity.win_*, fdl_entity_count) begins now,
 * for window_ns (0: until the next one): `scx_fdl dump --new-window` (fdl_new_window). Returns its
 * number. Each entity's figures reset at its first miss in it; a report shows them only where they
 * are of this window (a miss between the two writes is the old window's).
 */
static __always_inline u64 fdl_late_window_begin(u64 window_ns, u64 now)
{
	fdl.late_window_end = window_ns ? (now + window_ns) ?: 1 : 0;
	return __sync_add_and_fetch(&fdl.late_window, 1);
}

/*
 * The dispatcher took work from the entity's queue, whose order key was dl (fdl_entity_order). If
 * vdt had passed the deadline it promised (fdl_entity_promise), a container's miss moves vdt back
 * (fdl_miss). Fair work has no deadline of its own to keep: the fair container's deadline
 * only places it among the containers, and its lateness is bounded by fdl_dl_floor; moving vdt
 * back for it would only squeeze the containers' deadlines, so its picks are only counted. A
 * container's starts are counted where its work starts, however it got the CPU (fdl_on_running):
 * counted here, the picks by deadline alone would be mostly the late ones, since a container
 * whose deadline is not near is served by the fair order or an idle CPU.
 */
static __always_inline void fdl_entity_picked(struct fdl_entity *e, u64 dl, u64 now)
{
	dl = fdl_entity_promise(e, dl);
	if (e == &fdl.fair)
		fdl_entity_count(e, dl, fdl_vdt(now), (u64)-1, false, 0);
	else if (fdl_time_before(dl, fdl_vdt(now)))
		fdl_miss(dl, now);
}

/*
 * Container cg's bit in fdl.active_mask follows its activity (nr_active > 0): called where that
 * changes (fdl_cgroup_propagate) and where it gets or loses its slot. Set and clear race when one
 * CPU makes it active while another makes it inactive, so a clear looks again afterwards: the
 * activation it may have undone came before its set, which came before this clear, so the second
 * look sees it and sets the bit again.
 */
static __always_inline void fdl_cont_mark(struct fdl_cgroup *cg)
{
	u32 s = cg->cont_slot;
	u64 bit;

	if (!s || s > FDL_MAX_CONTAINERS)
		return;
	bit = 1ULL << ((s - 1) & (FDL_MAX_CONTAINERS - 1));
	if (cg->nr_active > 0) {
		__sync_fetch_and_or(&fdl.active_mask, bit);
		return;
	}
	__sync_fetch_and_and(&fdl.active_mask, ~bit);
	env_mb();
	if (cg->nr_active > 0)
		__sync_fetch_and_or(&fdl.active_mask, bit);
}

/* A deadline container's slot in fdl.containers (its existing one, or a free one), or -1. */
static __always_inline int fdl_slot_add(u64 cgref)
{
	struct fdl_cgroup *cg;
	int i, free = -1;

	fdl_for(i, 0, FDL_MAX_CONTAINERS) {
		if (fdl.containers[i] == cgref)
			return i;
		if (free < 0 && !fdl.containers[i])
			free = i;
	}
	if (free < 0 || free >= FDL_MAX_CONTAINERS)
		return -1;
	if (__sync_val_compare_and_swap(&fdl.containers[free], 0, cgref) != 0)
		return -1;
	/*
	 * Raised, never lowered: two CPUs adding slots at once (a first-level cgroup made while
	 * deadlines are set) could store in either order, and the lower one left the higher slot's
	 * container out of every scan.
	 */
	fdl_for(i, 0, 4) {
		u32 n = fdl.nr_slots;

		if ((u32)free < n || __sync_bool_compare_and_swap(&fdl.nr_slots, n, free + 1))
			break;
	}
	if ((cg = env_cgroup(cgref))) {
		cg->cont_slot = free + 1;
		env_mb();
		fdl_cont_mark(cg);	/* a nested cgroup may be active already */
	}
	return free;
}

/* The cgroup is gone: free its slot (nothing if it has none). */
static __always_inline void fdl_slot_del(u64 cgref)
{
	struct fdl_cgroup *cg = env_cgroup(cgref);
	int i;

	if (cg)
		cg->cont_slot = 0;
	fdl_for(i, 0, FDL_MAX_CONTAINERS) {
		if (fdl.containers[i] == cgref) {
			__sync_fetch_and_and(&fdl.active_mask, ~(1ULL << i));
			fdl.containers[i] = 0;
		}
	}
}

#endif /* __FDL_POLICY_DEADLINE_H */
