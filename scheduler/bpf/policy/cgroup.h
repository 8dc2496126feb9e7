/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroup tree: who is active, what each member weighs, and a task's share of the machine.
 *
 * A cgroup is active while a task below it is runnable. Its wsum is the weight of its runnable
 * own tasks plus the contributions of its active children; an active cgroup contributes its
 * effective weight to its parent. Sums change by atomic add and contributions by exchange, so a
 * parent's wsum always equals what its children say they contribute, whatever the interleaving.
 */
#ifndef __FDL_POLICY_CGROUP_H
#define __FDL_POLICY_CGROUP_H

#include "state.h"
#include "deadline.h"

/*
 * A cgroup's weight before any boost: FDL_IDLE_WEIGHT while cpu.idle is 1 (whatever its cpu.weight,
 * as the kernel's fair class weighs an idle cgroup), else cpu.weight.
 */
static __always_inline u32 fdl_cgroup_base_weight(struct fdl_cgroup *cg)
{
	return cg->idle ? FDL_IDLE_WEIGHT : cg->cpu_weight;
}

/* The root's wsum: the weight of everything runnable at the first level. */
static __always_inline s64 fdl_root_wsum(void)
{
	return fdl.root_wsum;
}

/*
 * Where cgroup cg's wsum is kept: the root's in fdl.root_wsum (the cgroup without a parent, as
 * fdl_member_share_within and fdl_task_share_of tell it), every other cgroup's in its record.
 */
static __always_inline s64 *fdl_wsum(struct fdl_cgroup *cg)
{
	return cg->parent_cgref ? &cg->wsum : &fdl.root_wsum;
}

/*
 * The weight of everything runnable at the first level as the fair order sees it: the deadline
 * containers at their cpu.weight, not their boost (as the dispatcher's last scan summed them).
 */
static __always_inline s64 fdl_fair_order_wsum(void)
{
	return fdl_root_wsum() - fdl.dl_wsum + fdl.dl_unboosted_wsum;
}

/*
 * The share (fixed point) of a member of weight `weight` in cgroup cgref within cgroup stop, an
 * ancestor of it or cgref itself (0: the root, so the share of the machine): its weight among the
 * cgroup's runnable members, scaled by each ancestor's part of its parent, up to stop's members
 * (stop's own part of its parent is not counted):
 *
 *	share = prod over the levels from cgref up to stop of w(member) / wsum(level)
 */
FDL_GLOBAL u64 fdl_member_share_within(u64 cgref, u32 weight, u64 stop)
{
	struct fdl_cgroup *cg;
	u64 share = FDL_SHARE_ONE;
	int i;

	cg = env_cgroup(cgref);
	if (!cg)
		return FDL_SHARE_ONE / (tun.nr_cpus ?: 1);

	/*
	 * The product of the levels' parts, taken from the member up (the same product as from the
	 * root down, rounded at each step): one walk, no path to keep.
	 */
	for (i = 0; i < FDL_MAX_DEPTH + 1; i++) {
		share = fdl_share_of(share, weight, *fdl_wsum(cg));
		if (cgref == stop || !cg->parent_cgref)
			break;
		weight = cg->contrib ?: cg->weight;
		cgref = cg->parent_cgref;
		if (!(cg = env_cgroup(cgref)))
			break;
	}
	return share;
}

/*
 * The share of the machine (fixed point, FDL_SHARE_ONE = all CPUs) of a member of weight `weight`
 * in cgroup cgref: its weight among the cgroup's runnable members, scaled by each ancestor's part
 * of its parent, up to the root.
 */
static __always_inline u64 fdl_member_share(u64 cgref, u32 weight)
{
	return fdl_member_share_within(cgref, weight, 0);
}

/*
 * A nested container's share of the machine (fixed point) in the fair order, through its
 * ancestors (fdl_member_share), at w: a deadline container's cpu.weight (its boost buys deadline
 * bandwidth, not a larger fair share), any other's effective weight. For its cgroup virtual time
 * (fdl_cgroup_cv_share).
 */
static __always_inline u64 fdl_nested_fair_share(struct fdl_cgroup *top, u32 w)
{
	struct fdl_cgroup *parent;
	u64 pshare;

	/*
	 * Nested and active: w among its siblings, its parent's share through the tree. Its
	 * contribution to its parent's sum is replaced by w, so a deadline container's boost is left
	 * out there too (with the boost in the sum, the share was a sliver and its cgroup virtual
	 * time ran tens of seconds ahead); for any other, w is its contribution and this is
	 * fdl_member_share(parent, w).
	 */
	parent = env_cgroup(top->parent_cgref);
	if (top->contrib > 0 && parent && parent->wsum > top->contrib) {
		pshare = parent->level ? fdl_member_share(parent->parent_cgref,
							  parent->contrib ?: parent->weight)
				       : FDL_SHARE_ONE;
		return fdl_share_of(pshare, w ?: 1, parent->wsum - top->contrib + (w ?: 1));
	}
	return fdl_member_share(top->parent_cgref, w ?: 1);
}

/*
 * Cgroup virtual time is CPU time at the default cpu.weight, FDL_CV_WEIGHT (100), whatever else
 * is runnable: a first-level cgroup of weight w is charged
 *
 *	dcv = runtime * FDL_CV_WEIGHT / w
 *
 * as CFS charges vruntime at NICE_0_LOAD / weight. Charged at its share of the weights runnable
 * at the moment (runtime * W(t) / w), a cgroup paid more for CPU time it got while more cgroups
 * were active: beside hackbench, the cgroup without parameters, whose bursts come with the
 * deadline containers' (W = 400), paid twice what hackbench paid running between them (W = 200),
 * and after each burst waited while hackbench caught up on both CPUs (VM trace of 2026-12-02:
 * hackbench 6-10 ms on both CPUs after the first tier, the cgroup's key 24 ms of cgroup virtual
 * time ahead of hackbench's; its p99 23-29 ms against EEVDF's 16-18). A nested container's share
 * is of the machine through its ancestors, at the root's weight sum: taken to the same unit, its
 * weight as seen from the root, share * root_wsum.
 */
#define FDL_CV_WEIGHT	100

/* The share (fixed point) cgroup virtual time counts CPU time at for weight w: w / FDL_CV_WEIGHT. */
static __always_inline u64 fdl_cv_share_of(u64 w)
{
	return (FDL_SHARE_ONE * (w ?: 1)) / FDL_CV_WEIGHT ?: 1;
}

/*
 * The share container top's cgroup virtual time is charged at (fdl_vtime_delta): its weight in
 * the fair order (a deadline container's cpu.weight: its boost buys deadline bandwidth), or a nested one's
 * weight as seen from the root.
 */
static __always_inline u64 fdl_cgroup_cv_share(struct fdl_cgroup *top)
{
	u32 w = top->ent.deadline_rr_ns ? fdl_cgroup_base_weight(top) : (top->contrib ?: top->weight);
	s64 root_wsum;

	if (top->level <= 1)
		return fdl_cv_share_of(w);
	root_wsum = fdl_root_wsum();
	return fdl_cv_share_of((fdl_nested_fair_share(top, w) *
				(u64)(root_wsum > 0 ? root_wsum : 1)) >> FDL_SHARE_SHIFT);
}

/*
 * How far the fair clock moves while CPU time `ns` passes on every CPU with the fair order's
 * weights (fdl_fair_order_wsum) sharing them: ns * nr_cpus * FDL_CV_WEIGHT / wsum. The starvation
 * window in cgroup virtual time (fdl_fair_key).
 */
static __always_inline u64 fdl_cv_span(u64 ns)
{
	s64 wsum = fdl_fair_order_wsum();

	return fdl_vtime_delta(ns * (tun.nr_cpus ?: 1), fdl_cv_share_of(wsum > 0 ? (u64)wsum : 1));
}

/* The starvation window in cgroup virtual time, at the fair order's weights as they are now. */
static __always_inline u64 fdl_fair_window(void)
{
	return fdl_cv_span(tun.starvation_ns);
}

/* The cgroup virtual time a fair queue is ordered by: within `window` (fdl_fair_window) of the clock. */
static __always_inline u64 fdl_fair_key_in(u64 cvtime, u64 window)
{
	return fdl_vtime_cap(cvtime, fdl.cvtime_now, window);
}

/* fdl_fair_key_in, the window computed for this one key. */
static __always_inline u64 fdl_fair_key(u64 cvtime)
{
	return fdl_fair_key_in(cvtime, fdl_fair_window());
}

/* The lowest slot set in *mask (*mask != 0), taken out of it: a walk over a mask of slots. */
static __always_inline u32 fdl_mask_pop(u64 *mask)
{
	u32 i = env_index(fdl_lowest_bit(*mask), FDL_MAX_CONTAINERS - 1);

	*mask &= *mask - 1;
	return i;
}

/*
 * Bring the fair clock up to date before a cgroup wakes at it (fdl_cgroup_wake): the least
 * cgroup virtual time among the containers with a task on a CPU or queued, as the dispatcher's
 * scan keeps it (fdl_fair_clock_to), never back. The scan runs only where some work is queued,
 * so while one cgroup ran alone the clock stayed where it was, and a cgroup that woke then was
 * placed that far behind it: as much of the machine as the lone cgroup had had while it ran
 * alone, owed to the newcomer (test_cgroup_vtime_counts_cpu_time_at_weight: a cgroup that ran
 * 220 ms alone then waited while two newcomers ran for 180 ms). Walks the active containers
 * only, and only where a cgroup becomes active (fdl_cgroup_propagate) or, at most once a slice, a
 * task of the root's own wakes (fdl_on_runnable), not at every wake-up.
 */
FDL_GLOBAL int fdl_fair_clock_refresh(u64 now)
{
	u64 mask = fdl.active_mask, least = 0, cv, window = fdl_fair_window();
	struct fdl_cgroup *cg;
	bool found = false;
	u32 i;
	int k;

	fdl_for(k, 0, FDL_MAX_CONTAINERS) {
		if (!mask)
			break;
		i = fdl_mask_pop(&mask);
		if (i >= fdl.nr_slots)
			break;
		if (!fdl.containers[i] || !(cg = env_cgroup(fdl.containers[i])))
			continue;
		if (cg->nr_running > 0)
			cv = cg->cvtime;
		else if (*fdl_queued_nr(i + 1) > 0)
			cv = fdl_fair_key_in(cg->cvtime, window);
		else
			continue;
		if (!found || fdl_time_before(cv, least)) {
			least = cv;
			found = true;
		}
	}
	if (*fdl_queued_nr(FDL_QUEUED_FAIR) > 0) {
		cv = fdl_fair_key_in(fdl.root_cvtime, window);
		if (!found || fdl_time_before(cv, least)) {
			least = cv;
			found = true;
		}
	}
	if (found && fdl_time_before(fdl.cvtime_now, least))
		fdl.cvtime_now = least;
	fdl.cvtime_refreshed_at = now;
	return 0;
}

/*
 * The root's own tasks wake (cvtime = &fdl.root_cvtime; a container: fdl_container_wake): they
 * keep at most wakeup_lag_ns of CPU time of credit at the share of the waking task's weight, as
 * a whole.
 */
static __always_inline void fdl_cgroup_wake(u64 *cvtime, u64 share)
{
	*cvtime = fdl_vtime_floor(*cvtime, fdl.cvtime_now, fdl_vtime_delta(tun.wakeup_lag_ns, share));
}

/*
 * A container wakes (becomes active): as fdl_cgroup_wake, and what it earned asleep beyond that
 * credit, up to wakeup_lag_ns more for each further CPU, is held in cv_reserve for its further
 * tasks that wake from sleep while it is active and behind the fair clock (fdl_container_rewake),
 * wakeup_lag_ns each. So a cgroup keeps one credit while one task runs, and one per task woken
 * with it, up to one per CPU, as EEVDF keeps the lag of a cgroup's entity on each CPU's runqueue.
 * With one credit as a whole, a cgroup without parameters whose two workers spin 3 ms each on the
 * 2-vCPU VM (6 ms against the 3 ms credit) was ahead of four busy loops' cgroup mid-burst,
 * although it used far less than its share over any longer window: its preempted workers waited
 * while the busy loops ran, 585 ms of their CPU in a 12 s trace (docs/benchmarks.md, 2026-12-05).
 * A larger credit for everything (--wakeup-lag-us 10000) fixed that beside busy loops but lost
 * three quiet cells of the matrix (17 of 28 verdicts against 19): it also moved each task's
 * credit and the deadline containers' test beyond their guarantees (fdl_near_front).
 * The CPUs counted are the machine's, not the cgroup's cpuset: a cgroup held to fewer CPUs can
 * get more credits than it has CPUs to run them on.
 *
 *	lag = wakeup_lag / share,  floor = cvtime_now - lag
 *	reserve = min(floor - cvtime, (nr_cpus - 1) * lag)  if cvtime < floor, else 0
 *	cvtime = max(cvtime, floor)
 *
 * Global functions, this and the next: inlined into fdl_cgroup_propagate's walk (verified once per
 * level) and fdl_on_runnable, they took the programs' verification past the attach test's limit of
 * the time, 600k instructions (628k).
 */
FDL_GLOBAL int fdl_container_wake(struct fdl_cgroup *cg)
{
	u64 lag, cv, woke_at, most;

	if (!cg)
		return 0;
	lag = fdl_vtime_delta(tun.wakeup_lag_ns, fdl_cgroup_cv_share(cg));
	cv = cg->cvtime;
	woke_at = fdl_vtime_floor(cv, fdl.cvtime_now, lag);
	most = tun.nr_cpus > 1 ? lag * (tun.nr_cpus - 1) : 0;
	cg->cv_reserve = fdl_min(woke_at - cv, most);
	cg->cvtime = woke_at;
	return 0;
}

/*
 * A further task of active container cg woke from sleep: the container gets wakeup_lag_ns of CPU
 * time at its share back from its reserve (fdl_container_wake), if any is left and it is still
 * behind the fair clock; a container that has caught up has had its turn, and its reserve lapses.
 * The reserve is emptied when the container goes inactive (fdl_cgroup_propagate), so a task that
 * wakes while another CPU is still waking the container finds none rather than the last one's.
 */
FDL_GLOBAL int fdl_container_rewake(struct fdl_cgroup *cg)
{
	u64 r, take, lag;
	int i;

	if (!cg || !cg->cv_reserve)
		return 0;
	if (!fdl_time_before(cg->cvtime, fdl.cvtime_now)) {
		cg->cv_reserve = 0;
		return 0;
	}
	lag = fdl_vtime_delta(tun.wakeup_lag_ns, fdl_cgroup_cv_share(cg));
	fdl_for_few(i, 0, 4) {
		r = cg->cv_reserve;
		if (!r)
			return 0;
		take = fdl_min(lag, r);
		if (__sync_bool_compare_and_swap(&cg->cv_reserve, r, r - take)) {
			__sync_fetch_and_sub(&cg->cvtime, take);
			return 0;
		}
	}
	return 0;
}

/*
 * Bring cgroup cg's contribution to its parent's wsum in line with its activity as it is now
 * (its weight while it has active members, else 0); returns the change to add to the parent's
 * wsum. Read again after the exchange, and once more if the activity changed meanwhile: a CPU
 * that activates the cgroup and one that deactivates it at once (a task waking in it while its
 * last other task sleeps) each exchanged the contribution their own change implied, after both
 * counts had landed, so the later exchange won whatever the count said: an active cgroup could
 * keep a contribution of 0 and its parent's sum lack its weight for good.
 */
static __always_inline s64 fdl_cgroup_settle_contrib(struct fdl_cgroup *cg)
{
	s64 contrib, old, dw = 0;
	int k;

	fdl_for_few(k, 0, 4) {
		contrib = cg->nr_active > 0 ? cg->weight : 0;
		old = __sync_lock_test_and_set(&cg->contrib, contrib);
		dw += contrib - old;
		env_mb();
		if ((cg->nr_active > 0) == (contrib != 0))
			break;
	}
	return dw;
}

/*
 * One level of fdl_cgroup_propagate's walk: cgroup *cgref takes dw and dn. Returns 1 if the walk
 * goes on to the parent (its activity changed: *cgref and *dw are then the parent and its
 * change), else 0; *woke is set if a container woke.
 */
static __always_inline int fdl_cgroup_propagate_level(u64 *cgref, s64 *dw, s64 dn, u64 vdt, int *woke)
{
	struct fdl_cgroup *cg = env_cgroup(*cgref);
	s64 old;

	if (!cg)
		return 0;
	if (*dw)
		__sync_fetch_and_add(fdl_wsum(cg), *dw);
	old = __sync_fetch_and_add(&cg->nr_active, dn);
	if ((dn > 0 && old != 0) || (dn < 0 && old != 1))
		return 0;	/* activity unchanged: the parent is unaffected */
	fdl_cont_mark(cg);
	if (dn < 0)
		cg->cv_reserve = 0;
	if (dn > 0 && (cg->level == 1 || cg->has_dsq)) {
		if (cg->ent.deadline_rr_ns)
			fdl_entity_wake(&cg->ent, vdt);
		fdl_fair_clock_refresh(env_now());
		fdl_container_wake(cg);
		*woke = 1;
	}
	*dw = fdl_cgroup_settle_contrib(cg);
	*cgref = cg->parent_cgref;
	return *cgref != 0;
}

/*
 * Add dw to the wsum of cgroup cgref and dn to its count of active members. A cgroup that thereby
 * becomes active starts contributing its weight to its parent (an inactive one stops), and so on
 * up the tree. A container (or first-level cgroup) that becomes active wakes in the fair order;
 * a deadline container also starts a new bucket. Returns 1 if a container woke: with dn > 0 from
 * a task's cgroup, the task's own container is the first the walk meets, and the walk ends there
 * unless that one woke.
 */
FDL_GLOBAL int fdl_cgroup_propagate(u64 cgref, s64 dw, s64 dn, u64 vdt)
{
	int i, woke = 0;

	/*
	 * The task's own cgroup inline: most calls end there (its activity did not change), without
	 * the loop's kfuncs. Its ancestors through fdl_for (bpf_for): the verifier checks the level
	 * until its states repeat, where a plain loop of FDL_MAX_DEPTH turns was checked turn by turn
	 * (some 37k instructions in each of the four programs that call this walk).
	 */
	if (!fdl_cgroup_propagate_level(&cgref, &dw, dn, vdt, &woke))
		return woke;
	fdl_for(i, 0, FDL_MAX_DEPTH) {
		if (!fdl_cgroup_propagate_level(&cgref, &dw, dn, vdt, &woke))
			break;
	}
	return woke;
}

/*
 * Make weight the cgroup's effective weight. Its contribution to its parent follows by the same
 * exchange as in fdl_cgroup_propagate() (fdl_cgroup_settle_contrib), so the parent's sum stays
 * exact: checked active, then exchanged, a weight change could also restore the contribution of a
 * cgroup that went inactive in between.
 */
static __always_inline void fdl_cgroup_apply_weight(struct fdl_cgroup *cg, u32 weight)
{
	struct fdl_cgroup *parent;
	s64 dw;

	cg->weight = weight;
	dw = fdl_cgroup_settle_contrib(cg);
	if (dw && (parent = env_cgroup(cg->parent_cgref)))
		__sync_fetch_and_add(fdl_wsum(parent), dw);
}

/*
 * The effective weight a cgroup's writers ask for: its boost while it has one (a guarantee is the
 * operator's explicit promise, above cpu.idle), else its unboosted weight (fdl_cgroup_base_weight).
 */
static __always_inline u32 fdl_cgroup_wanted_weight(struct fdl_cgroup *cg)
{
	return cg->boost_weight ?: fdl_cgroup_base_weight(cg);
}

/*
 * Make the effective weight what cpu_weight and boost_weight ask for now. Their writers (a
 * cpu.weight write, ops.cgroup_set_weight; the guarantee loop, fdl_set_boost) run concurrently, and
 * each may read the other's field just before it is written and apply a stale weight after the
 * other applied the new one. So each reads both fields again after applying, and applies again
 * while they ask for something else: the writer that finishes last read every write made before
 * it finished. (Before, a cpu.weight write seen while a boost was set was left to the boost's
 * writer, which could already have read the old cpu.weight: the cgroup kept the old weight until
 * its boost next changed.)
 */
static __always_inline void fdl_cgroup_settle_weight(struct fdl_cgroup *cg)
{
	u32 w;
	int i;

	fdl_for(i, 0, 8) {
		w = fdl_cgroup_wanted_weight(cg);
		env_mb();	/* both fields read before the weight is written */
		fdl_cgroup_apply_weight(cg, w);
		env_mb();
		if (fdl_cgroup_wanted_weight(cg) == w && cg->weight == w)
			break;
	}
}

/* cpu.weight changed (ops.cgroup_set_weight). While the guarantee loop boosts it, the boost rules. */
static __always_inline void fdl_cgroup_set_cpu_weight(struct fdl_cgroup *cg, u32 weight)
{
	cg->cpu_weight = weight;
	env_mb();
	fdl_cgroup_settle_weight(cg);
}

/*
 * cpu.idle changed (ops.cgroup_set_idle): the cgroup weighs FDL_IDLE_WEIGHT while it is 1, as the
 * kernel's fair class gives an idle cgroup the idle weight whatever its cpu.weight; back at 0, the
 * default weight, as the kernel's. (Ignored, an idle cgroup of batch work competed at its cpu.weight.)
 */
static __always_inline void fdl_cgroup_set_cpu_idle(struct fdl_cgroup *cg, bool idle)
{
	/*
	 * Back from idle, the kernel sets the group's weight to the default, and cpu.weight reads 100
	 * whatever it was before (sched_group_set_idle), without an ops.cgroup_set_weight.
	 */
	if (cg->idle && !idle)
		cg->cpu_weight = FDL_CGROUP_WEIGHT_DFL;
	cg->idle = idle;
	env_mb();
	fdl_cgroup_settle_weight(cg);
}

/* The guarantee loop sets the cgroup's boost (0: none; it decays back to its cpu.weight). */
static __always_inline void fdl_cgroup_set_boost(struct fdl_cgroup *cg, u32 weight)
{
	cg->boost_weight = weight;
	env_mb();
	fdl_cgroup_settle_weight(cg);
}

/* The cgroup a task is counted in while runnable, else the one it belongs to. */
static __always_inline u64 fdl_task_cgref(struct fdl_task *t)
{
	return (t->acct_cgref & ~FDL_ACCT_HELD) ?: t->cgref;
}

/*
 * The nearest cgroup, cgref (record cg) itself or an ancestor, that is summed (summed: true) or a
 * container (false: it has a queue); 0 if none is.
 */
static __always_inline u64 fdl_nearest(u64 cgref, struct fdl_cgroup *cg, bool summed)
{
	struct fdl_cgroup *c = cg;
	u64 id = cgref;
	int i;

	for (i = 0; i < FDL_MAX_DEPTH + 1; i++) {
		if (summed ? c->summed : c->has_dsq)
			return id;
		id = c->parent_cgref;
		if (!id || !(c = env_cgroup(id)))
			break;
	}
	return 0;
}

/*
 * The container of cgroup cgref, looked up (fdl_container_of): the cgroup itself or its nearest
 * ancestor with a queue; 0 if none has one (the root's queue). Cached in the cgroup's record with
 * the generation it was found at. The generation is read before the queues are: a cgroup that
 * becomes a container meanwhile (queue first, then the generation) makes the cache stale at once.
 */
FDL_GLOBAL u64 fdl_container_walk(u64 cgref)
{
	struct fdl_cgroup *cg = env_cgroup(cgref);
	u64 gen = fdl.cont_gen, found;

	if (!cg)
		return 0;
	env_mb();
	found = fdl_nearest(cgref, cg, false);
	cg->cont_cgref = found;
	env_mb();
	cg->cont_gen = gen + 1;
	return found;
}

static __always_inline u64 fdl_container_of(u64 cgref, struct fdl_cgroup *cg)
{
	return cg->cont_gen == fdl.cont_gen + 1 ? cg->cont_cgref : fdl_container_walk(cgref);
}

/*
 * The nearest summed cgroup of cgroup cgref (itself or an ancestor; 0: none), looked up and cached
 * in the cgroup's record as fdl_container_walk caches its container.
 */
FDL_GLOBAL u64 fdl_summed_walk(u64 cgref)
{
	struct fdl_cgroup *cg = env_cgroup(cgref);
	u64 gen = fdl.sum_gen, found;

	if (!cg)
		return 0;
	env_mb();
	found = fdl_nearest(cgref, cg, true);
	cg->sum_cgref = found;
	env_mb();
	cg->sum_gen = gen + 1;
	return found;
}

/* The record of cgroup cgref's (record cg's) nearest summed cgroup; NULL if none. */
static __always_inline struct fdl_cgroup *fdl_summed_of(u64 cgref, struct fdl_cgroup *cg)
{
	u64 id;

	if (!fdl.nr_summed)
		return NULL;
	id = cg->sum_gen == fdl.sum_gen + 1 ? cg->sum_cgref : fdl_summed_walk(cgref);
	return !id ? NULL : id == cgref ? cg : env_cgroup(id);
}

/*
 * CPU time used or waited in cgroup cgref: counted at its nearest summed cgroup too, so that a
 * guarantee's control loop reads its whole subtree's use from one record, children of any age
 * included (it listed the subtree once a second and read every cgroup of it each period: a child
 * younger than the listing was missed until it was removed and folded in, and the loop saw a
 * guarantee that waited in no period, then one that used 300 ms at once).
 */
static __always_inline void fdl_sum_charge(u64 cgref, struct fdl_cgroup *cg, u64 usage, u64 wait)
{
	struct fdl_cgroup *s = fdl_summed_of(cgref, cg);

	if (!s)
		return;
	if (usage)
		__sync_fetch_and_add(&s->sub_usage_ns, usage);
	if (wait)
		__sync_fetch_and_add(&s->sub_wait_ns, wait);
}

/*
 * Cgroup cgref stops being summed (its guarantee was removed, or the cgroup is): its sums move to
 * its nearest summed ancestor, whose own then never go down (a dip was read as a counter reset).
 * Its sums start from zero if it is summed again.
 */
static __always_inline void fdl_sum_release(struct fdl_cgroup *cg)
{
	struct fdl_cgroup *parent, *s = NULL;
	u64 usage, wait;

	if (!cg->summed)
		return;
	cg->summed = 0;
	__sync_fetch_and_sub(&fdl.nr_summed, 1);
	env_mb();
	__sync_fetch_and_add(&fdl.sum_gen, 1);
	usage = cg->sub_usage_ns;
	wait = cg->sub_wait_ns;
	__sync_fetch_and_sub(&cg->sub_usage_ns, usage);
	__sync_fetch_and_sub(&cg->sub_wait_ns, wait);
	if (cg->parent_cgref && (parent = env_cgroup(cg->parent_cgref)))
		s = fdl_summed_of(cg->parent_cgref, parent);
	if (s) {
		__sync_fetch_and_add(&s->sub_usage_ns, usage);
		__sync_fetch_and_add(&s->sub_wait_ns, wait);
	}
}

/*
 * A cgroup goes (ops.cgroup_exit): its counts stay in its parent's, as cpu.stat keeps a removed
 * child's usage: sums over a subtree never go down when a descendant goes (read as a restart,
 * they made counters jump). A summed cgroup's sums move to its nearest summed ancestor.
 */
static __always_inline void fdl_cgroup_fold(struct fdl_cgroup *cg)
{
	struct fdl_cgroup *parent = cg->parent_cgref ? env_cgroup(cg->parent_cgref) : NULL;
	int i;

	fdl_sum_release(cg);
	if (!parent)
		return;
	/* Empty by now; if anything was still contributed, give it back. */
	if (cg->contrib)
		__sync_fetch_and_add(fdl_wsum(parent), -cg->contrib);
	__sync_fetch_and_add(&parent->usage_ns, cg->usage_ns);
	__sync_fetch_and_add(&parent->wait_ns, cg->wait_ns);
	fdl_for(i, 0, FDL_LAT_BUCKETS) {
		if (i >= FDL_LAT_BUCKETS)	/* for the verifier */
			break;
		__sync_fetch_and_add(&parent->runq_lat[i], cg->runq_lat[i]);
	}
}

/* The control plane sums cgroup cgref's subtree (on) or no longer (fdl_summed_args). */
static __always_inline int fdl_cgroup_set_summed(u64 cgref, bool on)
{
	struct fdl_cgroup *cg = env_cgroup(cgref);

	if (!cg)
		return -ENOENT;
	if (!on) {
		fdl_sum_release(cg);
		return 0;
	}
	if (cg->summed)
		return 0;
	cg->summed = 1;
	__sync_fetch_and_add(&fdl.nr_summed, 1);
	env_mb();
	__sync_fetch_and_add(&fdl.sum_gen, 1);
	return 0;
}

/*
 * The hot path's lookups, once each: fdl_charge, fdl_on_running and fdl_on_runnable look up the
 * task's cgroup and the root's weight sum once and pass them to the _of forms below, which do
 * what fdl_task_queue and fdl_entity_bw do without looking them up again (hash
 * lookups were the bulk of those callbacks: the same two records were looked up three times per
 * charge; bench/cost.sh).
 */

/* fdl_task_queue, with cgroup cgref's record cg (NULL: untracked) at hand. */
static __always_inline u64 fdl_task_queue_of(struct fdl_task *t, u64 cgref, struct fdl_cgroup *cg,
					     struct fdl_cgroup **top, struct fdl_entity **dl, u64 now)
{
	struct fdl_cgroup *c;
	u64 q;

	*top = NULL;
	*dl = &fdl.fair;
	if (!cg)
		return FDL_DSQ_FAIR;
	q = fdl_container_of(cgref, cg);
	if (!q)
		return FDL_DSQ_FAIR;
	c = q == cgref ? cg : env_cgroup(q);
	if (!c || !c->has_dsq)
		return FDL_DSQ_FAIR;
	*top = c;
	if (!t->via_fair && fdl_entity_orders(&c->ent, now))
		*dl = &c->ent;
	return q;
}

/*
 * The queue a task belongs to now: its container's (DSQ id = that cgroup's id; *top is the
 * container), or the shared fair queue of the root's own tasks (*top NULL). *dl is the deadline
 * entity its work runs under: the container's if it is a deadline container whose deadline
 * orders its work at now, the caller's clock (fdl_entity_orders), else the fair container (a
 * deadline container's task too while it runs by the fair order: t->via_fair).
 */
static __always_inline u64 fdl_task_queue(struct fdl_task *t, struct fdl_cgroup **top,
					  struct fdl_entity **dl, u64 now)
{
	u64 cgref = fdl_task_cgref(t);

	return fdl_task_queue_of(t, cgref, env_cgroup(cgref), top, dl, now);
}

/*
 * The task's share of the machine (fdl_member_share of the task in its cgroup), with its cgroup
 * (cgref, record cg) and the root's weight sum at hand: the root's own tasks and a first-level
 * cgroup's without a lookup (the walk of one and two levels), deeper ones by the walk.
 */
static __always_inline u64 fdl_task_share_of(struct fdl_task *t, u64 cgref, struct fdl_cgroup *cg,
					     s64 root_wsum)
{
	if (!cg)
		return FDL_SHARE_ONE / (tun.nr_cpus ?: 1);
	if (!cg->parent_cgref)
		return fdl_share_of(FDL_SHARE_ONE, t->weight, root_wsum);
	if (cg->parent_cgref == FDL_ROOT_CGREF)
		return fdl_share_of(fdl_share_of(FDL_SHARE_ONE, cg->contrib ?: cg->weight, root_wsum),
				    t->weight, cg->wsum);
	return fdl_member_share(cgref, t->weight);
}

/*
 * The share of task t's cgroup as a whole (fixed point): its place among its siblings through
 * the tree (fdl_member_share of the cgroup in its parent). The root's own tasks have no cgroup
 * around them but the machine: theirs is the task's own share.
 */
static __always_inline u64 fdl_task_cgroup_share_of(struct fdl_task *t, u64 cgref, struct fdl_cgroup *cg,
						    s64 root_wsum)
{
	if (!cg || !cg->parent_cgref)
		return fdl_task_share_of(t, cgref, cg, root_wsum);
	if (cg->parent_cgref == FDL_ROOT_CGREF)
		return fdl_share_of(FDL_SHARE_ONE, cg->contrib ?: cg->weight, root_wsum);
	return fdl_member_share(cg->parent_cgref, cg->contrib ?: cg->weight);
}

/* The clock of a queue's task vtimes: its cgroup's, or the root queue's. */
static __always_inline struct fdl_entity *fdl_queue_clock(struct fdl_cgroup *top)
{
	return top ? &top->ent : &fdl.fair;
}

/* The id of a deadline entity, as CPUs record the work they run: container cgroup id or fair. */
static __always_inline u64 fdl_entity_id(struct fdl_entity *dl, u64 queue)
{
	return dl == &fdl.fair ? FDL_DSQ_FAIR : queue;
}

/*
 * A container's share of the machine (fixed point): a first-level one's weight's part of the
 * root; a nested one's share through its ancestors.
 */
static __always_inline u64 fdl_cgroup_share_at(struct fdl_cgroup *top, s64 root_wsum)
{
	if (top->level > 1)
		return fdl_member_share(top->parent_cgref, top->contrib ?: top->weight);
	return fdl_share_of(FDL_SHARE_ONE, top->contrib ?: top->weight, root_wsum);
}

static __always_inline u64 fdl_cgroup_share(struct fdl_cgroup *top)
{
	return fdl_cgroup_share_at(top, top->level > 1 ? 0 : fdl_root_wsum());
}

/*
 * A deadline entity's bandwidth in CPUs (fixed point): a container's share of the machine, or its
 * guarantee as the guarantees are scaled now if that is more (a nested container's share is only
 * what its ancestors leave it; its guarantee is a promise of the machine).
 */
/* fdl_entity_bw with the root's weight sum at hand (no lookup for a first-level container). */
static __always_inline u64 fdl_entity_bw_of(struct fdl_cgroup *top, struct fdl_entity *dl, s64 root_wsum)
{
	if (top && dl != &fdl.fair)
		return fdl_max(fdl_bandwidth_cpus(fdl_cgroup_share_at(top, root_wsum), tun.nr_cpus),
			       fdl_budget_scaled(dl->budget_rate, fdl.budget_scale));
	return fdl.fair_bw ?: fdl_fair_bw(root_wsum, fdl.dl_wsum, fdl.dl_unboosted_wsum,
					  tun.fair_floor_permille, tun.nr_cpus);
}

/*
 * fdl_entity_bw_of, the root's weight sum looked up only where it is used: a first-level
 * container's share, or the fair bandwidth before the first scan.
 */
static __always_inline u64 fdl_entity_bw(struct fdl_cgroup *top, struct fdl_entity *dl)
{
	bool root = dl == &fdl.fair ? !fdl.fair_bw : top && top->level <= 1;

	return fdl_entity_bw_of(top, dl, root ? fdl_root_wsum() : 0);
}

/*
 * The control plane sets a cgroup's deadlines (both 0: none) and guarantee budget rate. Deadlines
 * make a cgroup a deadline container at any depth: a first-level cgroup has its queue already; a
 * nested one gets one now and stays a container (a fair one once its deadlines are removed) until
 * it goes, so that no task is ever left in a queue the dispatcher no longer scans. It then stands
 * in the fair order at its share through its ancestors, its work also moving its first-level
 * ancestor on there, and its deadline bandwidth is that share (or its guarantee). A deadline
 * cgroup cannot sit inside another: its tasks belong to one container. Returns 0 or -errno
 * (struct fdl_params_args). The container starts a new bucket at its next look (ent.fresh).
 */
static __always_inline int fdl_cgroup_set_deadlines(u64 cgref, u64 rr_ns, u64 wakeup_ns, u64 rate)
{
	struct fdl_cgroup *cg = env_cgroup(cgref), *c;
	u64 id, now = env_now();
	int i;

	if (!cg)
		return -ENOENT;
	if (!cg->level)
		return -EINVAL;
	if (rr_ns && cg->level > 1) {
		c = cg;
		fdl_for(i, 0, FDL_MAX_DEPTH + 1) {
			id = c->parent_cgref;
			if (!id || !(c = env_cgroup(id)))
				break;
			if (c->ent.deadline_rr_ns)
				return -EEXIST;
		}
		if (!cg->has_dsq) {
			if (fdl_slot_add(cgref) < 0)
				return -ENOSPC;
			if (env_create_dsq(cgref)) {
				fdl_slot_del(cgref);
				return -ENOSPC;
			}
			/* Already active (no wake to come): it joins the fair order at its clock. */
			cg->cvtime = fdl.cvtime_now;
			cg->has_dsq = 1;
			env_mb();
			__sync_fetch_and_add(&fdl.cont_gen, 1);
		}
	}
	if (rr_ns && !cg->has_dsq)
		return -ENOSPC;
	fdl_entity_set_budget(&cg->ent, rr_ns ? rate : 0, now);
	fdl_entity_set_params(&cg->ent, rr_ns, wakeup_ns, fdl_vdt(now));
	return 0;
}

#endif /* __FDL_POLICY_CGROUP_H */
