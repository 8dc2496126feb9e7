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

/* The root's wsum: the weight of everything runnable at the first level. */
static __always_inline s64 fdl_root_wsum(void)
{
	struct fdl_cgroup *root = env_cgroup(FDL_ROOT_CGID);

	return root ? root->wsum : 0;
}

/*
 * Add dw to the wsum of cgroup cgid and dn to its count of active members. A cgroup that thereby
 * becomes active starts contributing its weight to its parent (an inactive one stops), and so on
 * up the tree. A deadline container that becomes active starts a new bucket: it wakes.
 */
static __always_inline void fdl_cgroup_propagate(u64 cgid, s64 dw, s64 dn, u64 vdt)
{
	struct fdl_cgroup *cg;
	s64 old, contrib;
	int i;

	for (i = 0; i < FDL_MAX_DEPTH + 1 && cgid; i++) {
		cg = env_cgroup(cgid);
		if (!cg)
			return;
		if (dw)
			__sync_fetch_and_add(&cg->wsum, dw);
		old = __sync_fetch_and_add(&cg->nr_active, dn);
		if ((dn > 0 && old != 0) || (dn < 0 && old != 1))
			return;	/* activity unchanged: the parent is unaffected */
		if (dn > 0 && cg->level == 1 && cg->ent.deadline_rr_ns)
			fdl_entity_wake(&cg->ent, vdt);

		contrib = dn > 0 ? cg->weight : 0;
		old = __sync_lock_test_and_set(&cg->contrib, contrib);
		dw = contrib - old;
		cgid = cg->parent_cgid;
	}
}

/*
 * Make weight the cgroup's effective weight. An active cgroup's contribution to its parent
 * changes by exchange, as in fdl_cgroup_propagate(), so the parent's sum stays exact.
 */
static __always_inline void fdl_cgroup_apply_weight(struct fdl_cgroup *cg, u32 weight)
{
	struct fdl_cgroup *parent;
	s64 old;

	cg->weight = weight;
	if (cg->nr_active <= 0)
		return;
	old = __sync_lock_test_and_set(&cg->contrib, (s64)weight);
	parent = env_cgroup(cg->parent_cgid);
	if (parent)
		__sync_fetch_and_add(&parent->wsum, (s64)weight - old);
}

/* The cgroup a task is counted in while runnable, else the one it belongs to. */
static __always_inline u64 fdl_task_cgid(struct fdl_task *t)
{
	return t->acct_cgid ?: t->cgid;
}

/*
 * The task's share of the machine (fixed point, FDL_SHARE_ONE = all CPUs): its weight among its
 * cgroup's runnable members, scaled by each ancestor's part of its parent, up to the root.
 */
static __always_inline u64 fdl_task_share(struct fdl_task *t)
{
	struct fdl_cgroup *cg, *parent;
	u64 share = FDL_SHARE_ONE;
	u32 weight, levels[FDL_MAX_DEPTH + 1];
	s64 sums[FDL_MAX_DEPTH + 1];
	int i, n = 0;

	cg = env_cgroup(fdl_task_cgid(t));
	if (!cg)
		return FDL_SHARE_ONE / (tun.nr_cpus ?: 1);

	/* Walk up collecting (weight, sum of the parent's members), then apply from the root down. */
	weight = t->weight;
	for (i = 0; i < FDL_MAX_DEPTH + 1; i++) {
		levels[i] = weight;
		sums[i] = cg->wsum;
		n = i + 1;
		if (!cg->parent_cgid)
			break;
		weight = cg->contrib ?: cg->weight;
		parent = env_cgroup(cg->parent_cgid);
		if (!parent)
			break;
		cg = parent;
	}
	for (i = FDL_MAX_DEPTH; i >= 0; i--) {
		if (i < n)
			share = fdl_share_of(share, levels[i], sums[i]);
	}
	return share;
}

/*
 * The queue a task belongs to now: its deadline container's (DSQ id = the container's cgroup
 * id), or the fair queue. *ent is the deadline entity that queue's work runs under.
 */
static __always_inline u64 fdl_task_queue(struct fdl_task *t, struct fdl_entity **ent)
{
	u64 cgid = fdl_task_cgid(t);
	struct fdl_cgroup *cg = env_cgroup(cgid), *top;

	*ent = &fdl.fair;
	if (!cg || !cg->top_cgid)
		return FDL_DSQ_FAIR;
	top = cg->top_cgid == cgid ? cg : env_cgroup(cg->top_cgid);
	if (!top || !top->has_dsq || !top->ent.deadline_rr_ns)
		return FDL_DSQ_FAIR;
	*ent = &top->ent;
	return cg->top_cgid;
}

/* A deadline entity's bandwidth in CPUs (fixed point): a container's weight's part of the root. */
static __always_inline u64 fdl_entity_bw(u64 queue)
{
	struct fdl_cgroup *c;

	if (queue != FDL_DSQ_FAIR && (c = env_cgroup(queue)))
		return fdl_bandwidth_cpus(fdl_share_of(FDL_SHARE_ONE, c->contrib ?: c->weight,
						       fdl_root_wsum()), tun.nr_cpus);
	return fdl_fair_bw(fdl_root_wsum(), fdl.dl_wsum, fdl.dl_unboosted_wsum,
			   tun.fair_floor_permille, tun.nr_cpus);
}

#endif /* __FDL_POLICY_CGROUP_H */
