/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_fdl: the BPF hot path.
 *
 * This step of FDL is hierarchical weighted fairness. Every runnable task carries a share of the
 * machine: its weight among the runnable members of its cgroup, times the cgroup's weight among
 * the active members of its parent, and so on up to the root, exactly as the fair class divides
 * CPU time between cgroups (cpu.weight) and tasks (nice). Tasks run in order of weighted virtual
 * time:
 *
 *	vtime += runtime * FDL_SHARE_ONE / share
 *
 * charged on every tick and when it stops. A woken task is handed straight to an idle CPU when
 * there is one; otherwise it joins one vtime-ordered queue. Wake-up placement bounds the credit a sleeper brings back, and a starvation
 * window bounds how far ahead any task can be pushed, so every runnable task runs again well
 * before the sched_ext watchdog would fire.
 *
 * Per-cgroup state lives in a hash map keyed by cgroup id, maintained from the sched_ext cgroup
 * callbacks; the Rust control plane reads it. The arithmetic is in fdl_math.h.
 */
#include <scx/common.bpf.h>
#include "intf.h"
#include "fdl_math.h"

char _license[] SEC("license") = "GPL";

/* Tunables, set by the loader before load. */
const volatile u64 slice_ns = 3000000;		/* a task's time slice */
const volatile u64 wakeup_lag_ns = 3000000;	/* CPU time of credit a waking task keeps */
const volatile u64 starvation_ns = 1000000000;	/* bound on how long any runnable task waits */
const volatile u32 nr_cpus = 1;			/* possible CPUs */
const volatile s32 stall_pid;			/* test only: never dispatch this task (0: off) */

UEI_DEFINE(uei);

/* Counters read by the loader. */
struct fdl_counters counters;

/* The latest vtime a task started running with: the queue's notion of "now". */
static u64 vtime_now;

/* Per-cgroup state, keyed by cgroup id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FDL_MAX_CGROUPS);
	__type(key, u64);
	__type(value, struct fdl_cgroup);
} cgroups SEC(".maps");

/* Per-task state. */
struct task_ctx {
	u64 cgid;		/* cgroup the task belongs to */
	u64 acct_cgid;		/* cgroup whose wsum holds this task while runnable (0: none) */
	u32 acct_weight;	/* the weight added there */
	u64 started_at;		/* when it last started running */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

/* The task's context. Every task has one from init_task on; a miss is a bug and ejects us. */
static struct task_ctx *try_lookup_task_ctx(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!tctx)
		scx_bpf_error("task %d (%s) has no context", p->pid, p->comm);
	return tctx;
}

static u64 cgroup_id(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, kn, id);
}

static struct fdl_cgroup *lookup_cgroup(u64 cgid)
{
	return bpf_map_lookup_elem(&cgroups, &cgid);
}

static bool is_stall_victim(struct task_struct *p)
{
	return stall_pid && p->pid == stall_pid;
}

/*
 * Add dw to the wsum of cgroup cgid and dn to its count of active members. A cgroup that thereby
 * becomes active starts contributing its weight to its parent (an inactive one stops), and so on
 * up the tree. Contributions change by exchange, so each parent's wsum always equals what its
 * children say they contribute, whatever the interleaving between CPUs.
 */
static void cgroup_propagate(u64 cgid, s64 dw, s64 dn)
{
	struct fdl_cgroup *cg;
	s64 old, contrib;
	int i;

	for (i = 0; i < FDL_MAX_DEPTH + 1 && cgid; i++) {
		cg = lookup_cgroup(cgid);
		if (!cg)
			return;
		if (dw)
			__sync_fetch_and_add(&cg->wsum, dw);
		old = __sync_fetch_and_add(&cg->nr_active, dn);
		if ((dn > 0 && old != 0) || (dn < 0 && old != 1))
			return;	/* activity unchanged: the parent is unaffected */

		contrib = dn > 0 ? cg->weight : 0;
		old = __sync_lock_test_and_set(&cg->contrib, contrib);
		dw = contrib - old;
		cgid = cg->parent_cgid;
	}
}

/*
 * The task's share of the machine (fixed point, FDL_SHARE_ONE = all CPUs): its weight among its
 * cgroup's runnable members, scaled by each ancestor's part of its parent, up to the root.
 */
static u64 task_share(struct task_struct *p, struct task_ctx *tctx)
{
	u64 cgid = tctx->acct_cgid ?: tctx->cgid;
	struct fdl_cgroup *cg, *parent;
	u64 share = FDL_SHARE_ONE;
	u32 weight, levels[FDL_MAX_DEPTH + 1];
	s64 sums[FDL_MAX_DEPTH + 1];
	int i, n = 0;

	cg = lookup_cgroup(cgid);
	if (!cg)
		return FDL_SHARE_ONE / nr_cpus;

	/* Walk up collecting (weight, sum of the parent's members), then apply from the root down. */
	weight = p->scx.weight;
	for (i = 0; i < FDL_MAX_DEPTH + 1; i++) {
		levels[i] = weight;
		sums[i] = cg->wsum;
		n = i + 1;
		if (!cg->parent_cgid)
			break;
		weight = cg->contrib ?: cg->weight;
		parent = lookup_cgroup(cg->parent_cgid);
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
 * How far past the queue's now a task may be queued. vtime_now advances about nr_cpus ns per ns
 * when the runnable shares sum to one, so this is about starvation_ns of waiting.
 */
static u64 starvation_window(void)
{
	return starvation_ns * nr_cpus;
}

/*
 * Charge the running task for the CPU time since it was last charged, at its current share.
 * Called on every tick as well as when it stops, so that each stretch is charged at the share
 * that held during it: charging a long run at the share of its last instant would penalise long
 * runners whenever some other task happens to wake near the end.
 */
static void charge(struct task_struct *p, struct task_ctx *tctx)
{
	u64 now = scx_bpf_now();
	u64 delta = now - tctx->started_at;
	struct fdl_cgroup *cg;

	tctx->started_at = now;
	scx_bpf_task_set_dsq_vtime(p, p->scx.dsq_vtime + fdl_vtime_delta(delta, task_share(p, tctx)));
	cg = lookup_cgroup(tctx->acct_cgid ?: tctx->cgid);
	if (cg)
		__sync_fetch_and_add(&cg->usage_ns, delta);
}

s32 BPF_STRUCT_OPS(fdl_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	if (is_stall_victim(p))
		return prev_cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
		__sync_fetch_and_add(&counters.nr_direct_idle, 1);
	}
	return cpu;
}

void BPF_STRUCT_OPS(fdl_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx;
	u64 vtime;
	s32 cpu;

	if (is_stall_victim(p)) {
		scx_bpf_dsq_insert(p, FDL_DSQ_STALL, slice_ns, enq_flags);
		return;
	}
	tctx = try_lookup_task_ctx(p);
	if (!tctx)
		return;

	vtime = fdl_vtime_cap(p->scx.dsq_vtime, vtime_now, starvation_window());
	if (vtime != p->scx.dsq_vtime)
		__sync_fetch_and_add(&counters.nr_starvation_clamps, 1);
	scx_bpf_dsq_insert_vtime(p, FDL_DSQ_FAIR, slice_ns, vtime, enq_flags);
	__sync_fetch_and_add(&counters.nr_fair_enqueued, 1);

	/* Queued without passing through select_cpu (preempted, migrated): wake an idle CPU for it. */
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		__sync_fetch_and_add(&counters.nr_idle_kicks, 1);
	}
}

/*
 * ops.dispatch runs before the expiring task is charged and queued again, so on its own every
 * slice end would hand the CPU to the queue's head: round-robin, whatever the weights. Let the
 * previous task compete instead: it keeps the CPU while its vtime, charged up to now, is not
 * after the head's.
 */
void BPF_STRUCT_OPS(fdl_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_struct *head;
	struct task_ctx *tctx;

	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && !is_stall_victim(prev) &&
	    (tctx = try_lookup_task_ctx(prev))) {
		charge(prev, tctx);
		head = __COMPAT_scx_bpf_dsq_peek(FDL_DSQ_FAIR);
		if (!head || !fdl_time_before(head->scx.dsq_vtime, prev->scx.dsq_vtime)) {
			scx_bpf_task_set_slice(prev, slice_ns);
			return;
		}
	}
	scx_bpf_dsq_move_to_local(FDL_DSQ_FAIR, 0);
}

void BPF_STRUCT_OPS(fdl_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);
	u64 lag;

	if (!tctx)
		return;
	if (!tctx->acct_cgid) {
		u64 cgid = lookup_cgroup(tctx->cgid) ? tctx->cgid : 1;

		tctx->acct_cgid = cgid;
		tctx->acct_weight = p->scx.weight;
		cgroup_propagate(cgid, tctx->acct_weight, 1);
	}
	/* Wake-up placement: bounded credit for the sleep, counted at the task's new share. */
	lag = fdl_vtime_delta(wakeup_lag_ns, task_share(p, tctx));
	scx_bpf_task_set_dsq_vtime(p, fdl_vtime_floor(p->scx.dsq_vtime, vtime_now, lag));
}

void BPF_STRUCT_OPS(fdl_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);

	if (!tctx || !tctx->acct_cgid)
		return;
	cgroup_propagate(tctx->acct_cgid, -(s64)tctx->acct_weight, -1);
	tctx->acct_cgid = 0;
}

void BPF_STRUCT_OPS(fdl_running, struct task_struct *p)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);

	if (!tctx)
		return;
	tctx->started_at = scx_bpf_now();
	if (fdl_time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(fdl_tick, struct task_struct *p)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);

	if (tctx)
		charge(p, tctx);
}

void BPF_STRUCT_OPS(fdl_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);

	if (tctx)
		charge(p, tctx);
}

void BPF_STRUCT_OPS(fdl_set_weight, struct task_struct *p, u32 weight)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);
	struct fdl_cgroup *cg;

	if (!tctx || !tctx->acct_cgid)
		return;
	cg = lookup_cgroup(tctx->acct_cgid);
	if (cg)
		__sync_fetch_and_add(&cg->wsum, (s64)weight - tctx->acct_weight);
	tctx->acct_weight = weight;
}

void BPF_STRUCT_OPS(fdl_enable, struct task_struct *p)
{
	scx_bpf_task_set_dsq_vtime(p, vtime_now);
}

s32 BPF_STRUCT_OPS(fdl_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->cgid = args->cgroup ? cgroup_id(args->cgroup) : 1;
	return 0;
}

void BPF_STRUCT_OPS(fdl_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	/* A task leaving scx while still counted as runnable must not stay in its cgroup's sums. */
	if (tctx && tctx->acct_cgid) {
		cgroup_propagate(tctx->acct_cgid, -(s64)tctx->acct_weight, -1);
		tctx->acct_cgid = 0;
	}
}

s32 BPF_STRUCT_OPS(fdl_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	struct fdl_cgroup cg = {
		.level = cgrp->level,
		.weight = args->weight,
	};
	u64 cgid = cgroup_id(cgrp);

	if (cgrp->level > 0) {
		struct cgroup *parent = bpf_cgroup_ancestor(cgrp, cgrp->level - 1);

		if (parent) {
			cg.parent_cgid = cgroup_id(parent);
			bpf_cgroup_release(parent);
		}
	}
	/* Beyond the depth we honour, a cgroup is scheduled as part of its ancestor. */
	if (cg.level > FDL_MAX_DEPTH ||
	    bpf_map_update_elem(&cgroups, &cgid, &cg, BPF_NOEXIST))
		__sync_fetch_and_add(&counters.nr_cgroups_untracked, 1);
	return 0;
}

void BPF_STRUCT_OPS(fdl_cgroup_exit, struct cgroup *cgrp)
{
	u64 cgid = cgroup_id(cgrp);
	struct fdl_cgroup *cg = lookup_cgroup(cgid);
	struct fdl_cgroup *parent;

	/* Empty by now; if anything was still contributed, give it back. */
	if (cg && cg->contrib && (parent = lookup_cgroup(cg->parent_cgid)))
		__sync_fetch_and_add(&parent->wsum, -cg->contrib);
	bpf_map_delete_elem(&cgroups, &cgid);
}

void BPF_STRUCT_OPS(fdl_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	struct fdl_cgroup *cg = lookup_cgroup(cgroup_id(cgrp));
	struct fdl_cgroup *parent;
	s64 old;

	if (!cg)
		return;
	cg->weight = weight;
	if (cg->nr_active <= 0)
		return;
	old = __sync_lock_test_and_set(&cg->contrib, (s64)weight);
	parent = lookup_cgroup(cg->parent_cgid);
	if (parent)
		__sync_fetch_and_add(&parent->wsum, (s64)weight - old);
}

void BPF_STRUCT_OPS(fdl_cgroup_move, struct task_struct *p, struct cgroup *from, struct cgroup *to)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);
	u64 cgid;

	if (!tctx)
		return;
	tctx->cgid = cgroup_id(to);
	/* Still counted in the old cgroup (moved while runnable): move the count along. */
	cgid = lookup_cgroup(tctx->cgid) ? tctx->cgid : 1;
	if (tctx->acct_cgid && tctx->acct_cgid != cgid) {
		cgroup_propagate(tctx->acct_cgid, -(s64)tctx->acct_weight, -1);
		tctx->acct_cgid = cgid;
		cgroup_propagate(cgid, tctx->acct_weight, 1);
	}
}

s32 BPF_STRUCT_OPS_SLEEPABLE(fdl_init)
{
	s32 ret;

	ret = scx_bpf_create_dsq(FDL_DSQ_FAIR, -1);
	if (ret)
		return ret;
	return scx_bpf_create_dsq(FDL_DSQ_STALL, -1);
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
