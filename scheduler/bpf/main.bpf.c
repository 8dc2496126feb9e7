/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_fdl: the BPF hot path. Thin sched_ext callbacks: each finds the task's record and calls the
 * policy (policy/sched.h), which reaches the kernel only through env.h.
 *
 * The policy in one paragraph (README "How it schedules" has the whole model): every cgroup gets
 * its cpu.weight's part of its parent, every task its weight's part of its cgroup (hierarchical
 * fairness, policy/cgroup.h). A first-level cgroup with deadline_rr is a deadline container with
 * a queue of its own; all other work shares the fair queue and is one more deadline entity, the
 * fair container. Queues are served earliest deadline first (the FDL draining-buckets model,
 * policy/deadline.h), tasks within a queue in weighted virtual time (policy/fair.h). Waking work
 * with an earlier deadline preempts (policy/preempt.h).
 */
#include <scx/common.bpf.h>
#include "intf.h"
#include "fdl_math.h"
#include "env.h"

char _license[] SEC("license") = "GPL";

/* Tunables, set by the loader before load. */
const volatile struct fdl_tunables tun = {
	.slice_ns = 3000000,
	.min_slice_ns = 200000,
	.wakeup_lag_ns = 3000000,
	.starvation_ns = 1000000000,
	.fair_deadline_ns = 5000000,
	.guarantee_window_ns = 100000000,
	.fair_floor_permille = 50,
	.nr_cpus = 1,
};

/* Everything the policy shares between CPUs. */
struct fdl_state fdl;

#include "policy/sched.h"

UEI_DEFINE(uei);

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fdl_task);
} task_ctxs SEC(".maps");

/* The task's record. Every task has one from init_task on; a miss is a bug and ejects us. */
static struct fdl_task *try_lookup_task_ctx(struct task_struct *p)
{
	struct fdl_task *t = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!t)
		scx_bpf_error("task %d (%s) has no context", p->pid, p->comm);
	return t;
}

static u64 cgroup_id(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, kn, id);
}

/*
 * The cgroup a task in cgrp is scheduled as: cgrp itself, or, when it is not tracked (deeper than
 * FDL_MAX_DEPTH, or the map was full), its nearest tracked ancestor. Counting such a task at the
 * root instead let work far below a low-weight cgroup escape that cgroup's weight.
 */
static u64 tracked_cgid(struct cgroup *cgrp)
{
	u64 cgid = cgroup_id(cgrp);
	struct cgroup *anc;
	int level = BPF_CORE_READ(cgrp, level), i, lvl;

	if (env_cgroup(cgid))
		return cgid;
	if (level > FDL_MAX_DEPTH + 1)	/* nothing deeper than FDL_MAX_DEPTH is tracked */
		level = FDL_MAX_DEPTH + 1;
	/*
	 * The ancestors read from cgrp->ancestors[] (CO-RE reads): init_task's args->cgroup is not a
	 * trusted pointer, so the bpf_cgroup_ancestor() kfunc cannot take it.
	 */
	bpf_for(i, 1, FDL_MAX_DEPTH + 2) {
		lvl = level - i;
		if (lvl < 0)
			break;
		anc = BPF_CORE_READ(cgrp, ancestors[lvl]);
		if (!anc)
			break;
		cgid = BPF_CORE_READ(anc, kn, id);
		if (env_cgroup(cgid))
			return cgid;
	}
	return FDL_ROOT_CGID;
}

static bool is_stall_victim(struct task_struct *p)
{
	return tun.stall_pid && p->pid == tun.stall_pid;
}

s32 BPF_STRUCT_OPS(fdl_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct fdl_task *t;
	bool is_idle = false;
	s32 cpu;

	if (is_stall_victim(p))
		return prev_cpu;
	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle && (t = try_lookup_task_ctx(p))) {
		t->enqueued_at = scx_bpf_now();
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tun.slice_ns, 0);
		fdl_on_idle_pick(t, cpu);
		fdl_count_dispatch(FDL_DISPATCH_IDLE);
	}
	return cpu;
}

void BPF_STRUCT_OPS(fdl_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct fdl_task *t;

	if (is_stall_victim(p)) {
		scx_bpf_dsq_insert(p, FDL_DSQ_STALL, tun.slice_ns, enq_flags);
		return;
	}
	if ((t = try_lookup_task_ctx(p)))
		fdl_on_enqueue(p, t, enq_flags);
}

void BPF_STRUCT_OPS(fdl_dispatch, s32 cpu, struct task_struct *prev)
{
	struct fdl_task *pt = NULL;

	/* ops.dispatch runs before the expiring task is queued again: it competes from here. */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && !is_stall_victim(prev))
		pt = try_lookup_task_ctx(prev);
	fdl_on_dispatch(cpu, prev, pt);
}

void BPF_STRUCT_OPS(fdl_runnable, struct task_struct *p, u64 enq_flags)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		fdl_on_runnable(t, p->scx.weight);
}

void BPF_STRUCT_OPS(fdl_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		fdl_on_quiescent(t);
}

void BPF_STRUCT_OPS(fdl_running, struct task_struct *p)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		fdl_on_running(p, t, scx_bpf_task_cpu(p));
}

void BPF_STRUCT_OPS(fdl_tick, struct task_struct *p)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		fdl_on_tick(p, t, scx_bpf_task_cpu(p));
}

void BPF_STRUCT_OPS(fdl_stopping, struct task_struct *p, bool runnable)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		fdl_on_stopping(t, scx_bpf_task_cpu(p));
}

void BPF_STRUCT_OPS(fdl_set_weight, struct task_struct *p, u32 weight)
{
	struct fdl_task *t = try_lookup_task_ctx(p);
	struct fdl_cgroup *cg;

	if (!t)
		return;
	t->weight = weight;
	if (!t->acct_cgid)
		return;
	cg = env_cgroup(t->acct_cgid);
	if (cg)
		__sync_fetch_and_add(&cg->wsum, (s64)weight - t->acct_weight);
	t->acct_weight = weight;
}

void BPF_STRUCT_OPS(fdl_enable, struct task_struct *p)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		fdl_on_enable(t, p->scx.weight);
}

s32 BPF_STRUCT_OPS(fdl_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct fdl_task *t;

	t = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return -ENOMEM;
	t->cgid = args->cgroup ? tracked_cgid(args->cgroup) : FDL_ROOT_CGID;
	return 0;
}

void BPF_STRUCT_OPS(fdl_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct fdl_task *t = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	/* A task leaving scx while still counted as runnable must not stay in the sums. */
	if (t)
		fdl_on_quiescent(t);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(fdl_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	struct fdl_cgroup cg = {
		.level = cgrp->level,
		.weight = args->weight,
		.cpu_weight = args->weight,
	};
	u64 cgid = cgroup_id(cgrp);

	if (cgrp->level > 0) {
		struct cgroup *parent = bpf_cgroup_ancestor(cgrp, cgrp->level - 1);
		struct fdl_cgroup *pcg;

		if (parent) {
			cg.parent_cgid = cgroup_id(parent);
			bpf_cgroup_release(parent);
		}
		pcg = env_cgroup(cg.parent_cgid);
		cg.top_cgid = cgrp->level == 1 ? cgid : pcg ? pcg->top_cgid : 0;
	}
	/*
	 * A first-level cgroup gets a queue of its own and a place in the dispatcher's scan, while
	 * there is room: that is what makes it a unit of cgroup fairness, and a deadline container
	 * when it has deadline_rr. Without one, its tasks share the root's queue.
	 */
	if (cgrp->level == 1 && fdl_slot_add(cgid) >= 0) {
		if (!scx_bpf_create_dsq(cgid, -1))
			cg.has_dsq = 1;
		else
			fdl_slot_del(cgid);
	}
	/* Beyond the depth we honour, a cgroup is scheduled as part of its ancestor. */
	if (cg.level > FDL_MAX_DEPTH ||
	    bpf_map_update_elem(&cgroups, &cgid, &cg, BPF_NOEXIST))
		__sync_fetch_and_add(&fdl.counters.nr_cgroups_untracked, 1);
	return 0;
}

void BPF_STRUCT_OPS(fdl_cgroup_exit, struct cgroup *cgrp)
{
	u64 cgid = cgroup_id(cgrp);
	struct fdl_cgroup *cg = env_cgroup(cgid);
	struct fdl_cgroup *parent;

	parent = cg ? env_cgroup(cg->parent_cgid) : NULL;
	if (cg && parent) {
		int i;

		/* Empty by now; if anything was still contributed, give it back. */
		if (cg->contrib)
			__sync_fetch_and_add(&parent->wsum, -cg->contrib);
		/*
		 * Its counts stay in its parent's, as cpu.stat keeps a removed child's usage: sums
		 * over a subtree never go down when a descendant goes (read as a restart, they made
		 * counters jump).
		 */
		__sync_fetch_and_add(&parent->usage_ns, cg->usage_ns);
		__sync_fetch_and_add(&parent->wait_ns, cg->wait_ns);
		bpf_for(i, 0, FDL_LAT_BUCKETS) {
			if (i >= FDL_LAT_BUCKETS)	/* for the verifier */
				break;
			__sync_fetch_and_add(&parent->runq_lat[i], cg->runq_lat[i]);
		}
	}
	if (cg && cg->has_dsq) {
		fdl_slot_del(cgid);
		scx_bpf_destroy_dsq(cgid);
	}
	bpf_map_delete_elem(&cgroups, &cgid);
}

void BPF_STRUCT_OPS(fdl_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	struct fdl_cgroup *cg = env_cgroup(cgroup_id(cgrp));

	if (!cg)
		return;
	cg->cpu_weight = weight;
	/* While the control loop boosts it, the boost rules; it decays back to this weight. */
	if (!cg->boost_weight)
		fdl_cgroup_apply_weight(cg, weight);
}

void BPF_STRUCT_OPS(fdl_cgroup_move, struct task_struct *p, struct cgroup *from, struct cgroup *to)
{
	struct fdl_task *t = try_lookup_task_ctx(p);
	u64 cgid;

	if (!t)
		return;
	t->cgid = tracked_cgid(to);
	/* Still counted in the old cgroup (moved while runnable): move the count along. */
	cgid = env_cgroup(t->cgid) ? t->cgid : FDL_ROOT_CGID;
	if (t->acct_cgid && t->acct_cgid != cgid) {
		fdl_cgroup_propagate(t->acct_cgid, -(s64)t->acct_weight, -1, 0);
		t->acct_cgid = cgid;
		fdl_cgroup_propagate(cgid, t->acct_weight, 1, fdl_vdt(scx_bpf_now()));
	}
}

/*
 * The guaranteed_shares control loop (Rust) sets a cgroup's effective weight through this program
 * (BPF_PROG_RUN), so that the change goes through the same exchange as a cpu.weight change.
 */
SEC("syscall")
int fdl_set_boost(struct fdl_boost_args *args)
{
	struct fdl_cgroup *cg = env_cgroup(args->cgid);

	if (!cg) {
		args->ret = -ENOENT;
		return 0;
	}
	cg->boost_weight = args->weight;
	fdl_cgroup_apply_weight(cg, args->weight ?: cg->cpu_weight);
	args->ret = 0;
	return 0;
}

/*
 * The control plane writes a first-level cgroup's deadlines through this program. The container
 * starts a new bucket at its next look (ent.fresh); a container whose deadlines are removed
 * becomes a fair cgroup with the same queue.
 */
SEC("syscall")
int fdl_set_params(struct fdl_params_args *args)
{
	struct fdl_cgroup *cg = env_cgroup(args->cgid);

	args->ret = 0;
	if (!cg)
		args->ret = -ENOENT;
	else if (cg->level != 1)
		args->ret = -EINVAL;
	else if (!cg->has_dsq)
		args->ret = -ENOSPC;
	if (args->ret)
		return 0;
	fdl_entity_set_budget(&cg->ent, args->deadline_rr_ns ? args->budget_rate : 0, scx_bpf_now());
	fdl_entity_set_params(&cg->ent, args->deadline_rr_ns, args->deadline_wakeup_ns,
			      fdl_vdt(scx_bpf_now()));
	return 0;
}

/* A deadline timer fired: preempt its CPU, whose dispatch lets the earlier deadline in. */
static int fdl_timer_fired(void *map, int *key, struct fdl_timer *timer)
{
	scx_bpf_kick_cpu(*key, SCX_KICK_PREEMPT);
	stat_inc(nr_timer_kicks);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(fdl_init)
{
	struct fdl_timer *timer;
	s32 ret;
	u32 cpu;

	fdl.fair.deadline_rr_ns = tun.fair_deadline_ns;
	fdl.fair.dl = scx_bpf_now() + tun.fair_deadline_ns;
	fdl.min_rr_ns = tun.fair_deadline_ns;
	bpf_for(cpu, 0, FDL_MAX_CPUS) {
		if (cpu >= tun.nr_cpus)
			break;
		timer = bpf_map_lookup_elem(&timers, &cpu);
		if (!timer)
			continue;
		bpf_timer_init(&timer->timer, &timers, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&timer->timer, fdl_timer_fired);
	}
	ret = scx_bpf_create_dsq(FDL_DSQ_FAIR, -1);
	if (!ret)
		ret = scx_bpf_create_dsq(FDL_DSQ_STALL, -1);
	return ret;
}

void BPF_STRUCT_OPS(fdl_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(fdl_ops,
	       .select_cpu		= (void *)fdl_select_cpu,
	       .enqueue			= (void *)fdl_enqueue,
	       .dispatch		= (void *)fdl_dispatch,
	       .runnable		= (void *)fdl_runnable,
	       .running			= (void *)fdl_running,
	       .tick			= (void *)fdl_tick,
	       .stopping		= (void *)fdl_stopping,
	       .quiescent		= (void *)fdl_quiescent,
	       .set_weight		= (void *)fdl_set_weight,
	       .enable			= (void *)fdl_enable,
	       .init_task		= (void *)fdl_init_task,
	       .exit_task		= (void *)fdl_exit_task,
	       .cgroup_init		= (void *)fdl_cgroup_init,
	       .cgroup_exit		= (void *)fdl_cgroup_exit,
	       .cgroup_set_weight	= (void *)fdl_cgroup_set_weight,
	       .cgroup_move		= (void *)fdl_cgroup_move,
	       .init			= (void *)fdl_init,
	       .exit			= (void *)fdl_exit,
	       .name			= "scx_fdl");
