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

/* Tunables, set by the loader before load. */
const volatile struct fdl_tunables tun = {
	.slice_ns = 3000000,
	.min_slice_ns = 200000,
	.slice_floor_ns = 0,
	.wakeup_lag_ns = 3000000,
	.starvation_ns = 1000000000,
	.fair_deadline_ns = 5000000,
	.fair_preempt_ns = 20000000,
	.sibling_preempt_ns = 0,
	.lazy_preempt_ns = 0,
	.guarantee_window_ns = 100000000,
	.fair_floor_permille = 50,
	.nr_cpus = 1,
};
#include "env.h"

char _license[] SEC("license") = "GPL";

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

/* The reference of the cgroup with kernel id cgid, 0 if it is not tracked. */
static u64 cgroup_ref(u64 cgid)
{
	u64 *ref = bpf_map_lookup_elem(&cgroup_refs, &cgid);

	return ref ? *ref : 0;
}

/*
 * The cgroup a task in cgrp is scheduled as: cgrp itself, or, when it is not tracked (deeper than
 * FDL_MAX_DEPTH, or no slot was left), its nearest tracked ancestor. Counting such a task at the
 * root instead let work far below a low-weight cgroup escape that cgroup's weight.
 */
static u64 tracked_cgref(struct cgroup *cgrp)
{
	u64 cgref = cgroup_ref(cgroup_id(cgrp));
	struct cgroup *anc;
	int level = BPF_CORE_READ(cgrp, level), i, lvl;

	if (cgref)
		return cgref;
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
		if ((cgref = cgroup_ref(BPF_CORE_READ(anc, kn, id))))
			return cgref;
	}
	return FDL_ROOT_CGREF;
}

/* include/linux/sched.h's TASK_RUNNING (a macro: vmlinux.h has no macros). */
#define FDL_TASK_RUNNING	0x00000000

static bool is_stall_victim(struct task_struct *p)
{
	return tun.stall_pid && p->pid == tun.stall_pid;
}

/*
 * env.h's move_unblocked_dom (env_move_unblocked in one domain's DSQ): walk it in its order; a
 * task that a CPU limit blocks goes to the hold queue, the first one that none blocks and that
 * may run here comes to this CPU.
 */
static bool move_unblocked_dom(u64 dsq)
{
	struct task_struct *p;
	struct fdl_task *t;
	u64 now = scx_bpf_now(), at = 0, blocker;
	s32 cpu = bpf_get_smp_processor_id();

	bpf_for_each(scx_dsq, p, dsq, 0) {
		/* As scx_bpf_dsq_move_to_local() does, pass over tasks that may not run here. */
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		t = bpf_task_storage_get(&task_ctxs, p, 0, 0);
		if (t && (blocker = fdl_bw_blocked(t, now, &at))) {
			if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, FDL_DSQ_HOLD, 0)) {
				fdl_task_hold(t, blocker, now);
				fdl_hold_until(at, now);
				stat_inc(nr_held);
			}
			continue;
		}
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
}

/*
 * The hold timer: a throttled cgroup's pool turned positive. Every held task that no limit blocks
 * any longer goes back to its own queue in its vtime order (and an idle CPU is woken for it); the
 * timer is armed again for the earliest refill of those still blocked.
 */
static int fdl_hold_fired(void *map, int *key, struct fdl_timer *timer)
{
	u64 now = scx_bpf_now(), next = 0, at, queue, vtime;
	struct task_struct *p;
	struct fdl_task *t;
	u32 slot = 0, dom;
	s32 cpu;

	fdl.hold_next = 0;
	env_mb();
	bpf_for_each(scx_dsq, p, FDL_DSQ_HOLD, 0) {
		t = bpf_task_storage_get(&task_ctxs, p, 0, 0);
		at = 0;
		if (!t) {
			/* Cannot happen (every task has a record): never strand it. */
			queue = FDL_DSQ_FAIR;
			vtime = fdl.fair.vtime_now;
		} else if (!fdl_bw_release_task(t, now, &queue, &vtime, &slot, &at)) {
			if (!next || at < next)
				next = at;
			continue;
		}
		scx_bpf_dsq_move_set_vtime(BPF_FOR_EACH_ITER, vtime);
		/* Back in the domain of the idle CPU woken for it (else of its last CPU). */
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
		dom = env_insert_dom(p, cpu);
		if (t)	/* before the move: a count never below */
			fdl_queued_add(t, slot, dom, vtime, env_task_pinned(p));
		queue = fdl_dom_dsq(queue, dom);
		if (!scx_bpf_dsq_move_vtime(BPF_FOR_EACH_ITER, p, queue, 0)) {
			/* Gone from the hold queue meanwhile: not in its queue either. */
			if (t)
				fdl_queued_del(t);
			continue;
		}
		stat_inc(nr_released);
		if (cpu >= 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
	if (next)
		fdl_hold_until(next, now);
	return 0;
}

s32 BPF_STRUCT_OPS(fdl_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct fdl_task *t;
	bool is_idle = false;
	u64 at, now;
	s32 cpu;

	if (is_stall_victim(p) || !(t = try_lookup_task_ctx(p)))
		return prev_cpu;
	/* Throttled: no idle CPU is claimed for it; enqueue holds it. (No clock read without limits.) */
	if (fdl.counters.nr_limited && fdl_bw_blocked(t, scx_bpf_now(), &at))
		return prev_cpu;
	/* Moved by the balancer: an idle CPU is looked for in its new domain first. */
	if (tun.load_tracking && (cpu = fdl_lb_cpu(p, t, p->pid)) >= 0)
		prev_cpu = cpu;
	/*
	 * Without the WF_SYNC hint (the waker is about to sleep: pipes, sockets). With it the
	 * kernel's pick answers with the waker's own CPU, busy, as idle, whenever another CPU is idle
	 * and the waker's local queue is empty: the task went onto that local queue, outside the
	 * queues' order, and waited there as long as the waker kept running (a pipe's writer that
	 * spins on: a whole slice, the other CPU idle meanwhile; tests/vm/sync-wake.sh), and the
	 * busy CPU's record (fdl_on_select_idle) said it ran the wakee. A hint is not a promise:
	 * EEVDF too puts such a wakee on an idle CPU of the waker's LLC first, and scx_flash drops it.
	 */
	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags & ~SCX_WAKE_SYNC, &is_idle);
	if (!is_idle)
		return cpu;
	now = scx_bpf_now();	/* once: a kfunc per read */
	if (!fdl_idle_free(cpu, now)) {
		/* Already woken for queued work: enqueue queues the task there, not bound to it. */
		stat_inc(nr_wake_queued);
		return cpu;
	}
	t->enqueued_at = now;
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tun.slice_ns, 0);
	fdl_on_select_idle(t, cpu, now);
	fdl_count_dispatch(FDL_DISPATCH_IDLE);
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

/* The kernel set or cleared cpu's idle bit (kept: SCX_OPS_KEEP_BUILTIN_IDLE). */
void BPF_STRUCT_OPS(fdl_update_idle, s32 cpu, bool idle)
{
	if (tun.load_tracking)
		fdl_load_idle(cpu, idle, scx_bpf_now());
	if (idle)
		fdl_on_idle(cpu);
}

void BPF_STRUCT_OPS(fdl_runnable, struct task_struct *p, u64 enq_flags)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (!t)
		return;
	fdl_on_runnable(t, p->scx.weight, enq_flags & FDL_ENQ_WAKEUP);
	if (tun.load_tracking)
		fdl_load_runnable(t, env_task_cpu(p), scx_bpf_now());
}

void BPF_STRUCT_OPS(fdl_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (!t)
		return;
	fdl_on_quiescent(t);
	if (tun.load_tracking)
		fdl_load_quiescent(t, env_task_cpu(p), scx_bpf_now());
}

void BPF_STRUCT_OPS(fdl_running, struct task_struct *p)
{
	struct fdl_task *t = try_lookup_task_ctx(p);
	s32 cpu = env_task_cpu(p);
	u64 now;

	if (!t)
		return;
	now = fdl_on_running(p, t, cpu);
	if (tun.load_tracking)
		fdl_load_running(t, p->pid, cpu, env_dom(cpu), now);
}

void BPF_STRUCT_OPS(fdl_tick, struct task_struct *p)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		fdl_on_tick(p, t, env_task_cpu(p));
}

void BPF_STRUCT_OPS(fdl_stopping, struct task_struct *p, bool runnable)
{
	struct fdl_task *t = try_lookup_task_ctx(p);

	if (t)
		/*
		 * Slept: ops.stopping from the dequeue of a task that blocks (its state no longer
		 * TASK_RUNNING), not from a change of its properties (dequeued and queued again).
		 */
		fdl_on_stopping(p, t, env_task_cpu(p), !runnable && p->__state != FDL_TASK_RUNNING);
}

void BPF_STRUCT_OPS(fdl_set_weight, struct task_struct *p, u32 weight)
{
	struct fdl_task *t = try_lookup_task_ctx(p);
	struct fdl_cgroup *cg;

	if (!t)
		return;
	t->weight = weight;
	if (!t->acct_cgref)
		return;
	cg = env_cgroup(t->acct_cgref & ~FDL_ACCT_HELD);
	/* Held: out of the sums until released (fdl_task_hold), with the weight set here. */
	if (cg && !(t->acct_cgref & FDL_ACCT_HELD))
		__sync_fetch_and_add(fdl_wsum(cg), (s64)weight - t->acct_weight);
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
	t->cgref = args->cgroup ? tracked_cgref(args->cgroup) : FDL_ROOT_CGREF;
	return 0;
}

void BPF_STRUCT_OPS(fdl_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct fdl_task *t = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	/* A task leaving scx while still counted as runnable must not stay in the sums. */
	if (t) {
		fdl_on_quiescent(t);
		if (tun.load_tracking)
			fdl_load_quiescent(t, env_task_cpu(p), scx_bpf_now());
	}
}

/* Every field of cg but its reference back to zero. */
static void fdl_cgroup_zero(struct fdl_cgroup *cg)
{
	__builtin_memset((void *)cg + sizeof(cg->cgref), 0, sizeof(*cg) - sizeof(cg->cgref));
}

/*
 * A slot for a new cgroup (the root: slot 1), with its reference in the next generation; 0 if
 * none is left. The caller zeroes the record again (fdl_cgroup_init): a write that passed the
 * old reference's check just before the exit reset it may have landed since. Next fit from
 * where the last one was found; claimed by compare-and-swap, so that two cgroups created at once
 * never share one.
 */
static u64 fdl_cgroup_alloc(u32 level)
{
	u32 n = tun.max_cgroups, slot, i;
	struct fdl_cgroup *cg;
	u64 old, ref;

	if (n > FDL_MAX_CGROUPS)
		n = FDL_MAX_CGROUPS;
	if (!level) {
		slot = 1;
		cg = bpf_map_lookup_elem(&cgroups, &slot);
		return cg && __sync_bool_compare_and_swap(&cg->cgref, 0, FDL_ROOT_CGREF) ? FDL_ROOT_CGREF : 0;
	}
	bpf_for(i, 0, n) {
		slot = (fdl.cgroup_next + i) % n;
		if (slot < 2)
			continue;
		cg = bpf_map_lookup_elem(&cgroups, &slot);
		if (!cg)
			break;
		old = cg->cgref;
		if (old && !(old & FDL_CGREF_FREE))
			continue;
		ref = ((((old >> FDL_CGREF_SLOT_BITS) + 1) & FDL_CGREF_GEN_MASK) << FDL_CGREF_SLOT_BITS) | slot;
		if (__sync_bool_compare_and_swap(&cg->cgref, old, ref)) {
			fdl.cgroup_next = slot + 1;
			return ref;
		}
	}
	return 0;
}

/*
 * Frees cg's slot: every field but cgref back to zero, then cgref marked free (keeping its
 * generation for the next one). From then on env_cgroup(ref) finds nothing.
 */
static void fdl_cgroup_free(struct fdl_cgroup *cg)
{
	u64 ref = cg->cgref;

	fdl_cgroup_zero(cg);
	env_mb();
	cg->cgref = ref | FDL_CGREF_FREE;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(fdl_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	u64 cgid = cgroup_id(cgrp), cgref, pref = 0;
	struct fdl_cgroup *cg, *pcg = NULL;

	if (cgrp->level > 0) {
		struct cgroup *parent = bpf_cgroup_ancestor(cgrp, cgrp->level - 1);

		if (parent) {
			pref = cgroup_ref(cgroup_id(parent));
			bpf_cgroup_release(parent);
		}
		pcg = env_cgroup(pref);
	}
	/*
	 * Beyond the depth we honour, or with no slot left, a cgroup is scheduled as part of its
	 * ancestor (never an error: that would fail the cgroup's creation). So is one below a cgroup
	 * that is not tracked: tracked once slots were free again, with no parent it stood at the
	 * root, its weight summed there, no container found for it, and its ancestors' cpu.max never
	 * applied (their walk stopped at it: a pod made under an untracked slice of a kubepods
	 * limited to 0.5 CPU ran its loops on 1 CPU).
	 */
	if (cgrp->level > FDL_MAX_DEPTH || (cgrp->level > 0 && !pcg) ||
	    !(cgref = fdl_cgroup_alloc(cgrp->level))) {
		__sync_fetch_and_add(&fdl.counters.nr_cgroups_untracked, 1);
		return 0;
	}
	if ((cg = env_cgroup(cgref)))
		fdl_cgroup_zero(cg);
	if (!cg || bpf_map_update_elem(&cgroup_refs, &cgid, &cgref, BPF_NOEXIST)) {
		if (cg)
			fdl_cgroup_free(cg);
		__sync_fetch_and_add(&fdl.counters.nr_cgroups_untracked, 1);
		return 0;
	}
	cg->cgid = cgid;
	cg->level = cgrp->level;
	cg->cpu_weight = args->weight;
	/* cpu.idle (the argument comes with ops.cgroup_set_idle, on kernels that have it). */
	if (bpf_core_field_exists(args->sched_idle))
		cg->idle = args->sched_idle;
	cg->weight = fdl_cgroup_wanted_weight(cg);
	if (pcg) {
		cg->parent_cgref = pref;
		cg->top_cgref = cgrp->level == 1 ? cgref : pcg->top_cgref;
	}
	/*
	 * A first-level cgroup gets a queue of its own and a place in the dispatcher's scan, while
	 * there is room: that is what makes it a unit of cgroup fairness, and a deadline container
	 * when it has deadline_rr. Without one, its tasks share the root's queue. Its queue's DSQ id
	 * is its reference (below 2^FDL_DOM_SHIFT, where the domain bits begin).
	 */
	if (cgrp->level == 1 && fdl_slot_add(cgref) >= 0) {
		if (!env_create_dsq(cgref))
			cg->has_dsq = 1;
		else
			fdl_slot_del(cgref);
	}
	/* Its CPU limit (cpu.max; kernel >= 6.17: the arguments come with ops.cgroup_set_bandwidth). */
	if (bpf_core_field_exists(args->bw_quota_us))
		fdl_bw_set(cg, args->bw_period_us, args->bw_quota_us, args->bw_burst_us,
			   scx_bpf_now());
	return 0;
}

void BPF_STRUCT_OPS(fdl_cgroup_exit, struct cgroup *cgrp)
{
	u64 cgid = cgroup_id(cgrp), cgref = cgroup_ref(cgid);
	struct fdl_cgroup *cg = env_cgroup(cgref);

	bpf_map_delete_elem(&cgroup_refs, &cgid);
	if (!cg)
		return;
	fdl_cgroup_fold(cg);
	/*
	 * Its slot and queue, whether or not has_dsq says so yet: fdl_set_params gives a nested
	 * cgroup a slot and a queue before it sets has_dsq, and an exit between the two left both
	 * taken for good (one of the 64 slots per pod of a short-lived Job given deadlines by a
	 * pattern). Neither call does anything where there is none.
	 */
	fdl_slot_del(cgref);
	env_destroy_dsq(cgref);
	if (cg->bw.quota_ns)	/* no longer limited: uncount it */
		fdl_bw_set(cg, 0, 0, 0, scx_bpf_now());
	fdl_cgroup_free(cg);
}

void BPF_STRUCT_OPS(fdl_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	struct fdl_cgroup *cg = env_cgroup(cgroup_ref(cgroup_id(cgrp)));

	if (cg)
		fdl_cgroup_set_cpu_weight(cg, weight);
}

/* cpu.idle changed: policy/cgroup.h's fdl_cgroup_set_cpu_idle. */
void BPF_STRUCT_OPS(fdl_cgroup_set_idle, struct cgroup *cgrp, bool idle)
{
	struct fdl_cgroup *cg = env_cgroup(cgroup_ref(cgroup_id(cgrp)));

	if (cg)
		fdl_cgroup_set_cpu_idle(cg, idle);
}

/*
 * cpu.max or cpu.max.burst changed: the new limit applies at once, with a fresh period. Tasks held
 * under the old one are looked at again now (a raised or removed limit frees them).
 */
void BPF_STRUCT_OPS(fdl_cgroup_set_bandwidth, struct cgroup *cgrp, u64 period_us, u64 quota_us,
		    u64 burst_us)
{
	struct fdl_cgroup *cg = env_cgroup(cgroup_ref(cgroup_id(cgrp)));
	u64 now = scx_bpf_now();

	if (!cg)
		return;
	fdl_bw_set(cg, period_us, quota_us, burst_us, now);
	if (scx_bpf_dsq_nr_queued(FDL_DSQ_HOLD) > 0)
		fdl_hold_until(now, now);
}

void BPF_STRUCT_OPS(fdl_cgroup_move, struct task_struct *p, struct cgroup *from, struct cgroup *to)
{
	struct fdl_task *t = try_lookup_task_ctx(p);
	u64 cgref, c;
	int i;

	if (!t)
		return;
	t->cgref = tracked_cgref(to);
	/* Still counted in the old cgroup (moved while runnable): move the count along. */
	cgref = env_cgroup(t->cgref) ? t->cgref : FDL_ROOT_CGREF;
	/*
	 * By compare-and-swap, as another CPU may hold or release it meanwhile (fdl_task_hold). Held,
	 * it is out of the sums: its release counts it in the new cgroup.
	 */
	fdl_for(i, 0, 3) {
		c = t->acct_cgref;
		if (!c || (c & ~FDL_ACCT_HELD) == cgref)
			break;
		if (c & FDL_ACCT_HELD) {
			if (__sync_bool_compare_and_swap(&t->acct_cgref, c, cgref | FDL_ACCT_HELD))
				break;
		} else if (__sync_bool_compare_and_swap(&t->acct_cgref, c, cgref)) {
			fdl_cgroup_propagate(c, -(s64)t->acct_weight, -1, 0);
			fdl_cgroup_propagate(cgref, t->acct_weight, 1, fdl_vdt(scx_bpf_now()));
			break;
		}
	}
}

/*
 * The guaranteed_shares control loop (Rust) sets a cgroup's effective weight through this program
 * (BPF_PROG_RUN), so that the change goes through the same exchange as a cpu.weight change.
 */
SEC("syscall")
int fdl_set_boost(struct fdl_boost_args *args)
{
	struct fdl_cgroup *cg = env_cgroup(cgroup_ref(args->cgid));

	if (!cg) {
		args->ret = -ENOENT;
		return 0;
	}
	fdl_cgroup_set_boost(cg, args->weight);
	args->ret = 0;
	return 0;
}

/*
 * The guaranteed_shares control loop has a guaranteed cgroup's subtree use summed in its record
 * (fdl_cgroup_set_summed), or no longer.
 */
SEC("syscall")
int fdl_set_summed(struct fdl_summed_args *args)
{
	args->ret = fdl_cgroup_set_summed(cgroup_ref(args->cgid), args->on);
	return 0;
}

/* `scx_fdl dump --new-window`: a new measurement window of the worst lateness (fdl_late_window_begin). */
SEC("syscall")
int fdl_new_window(struct fdl_window_args *args)
{
	args->window = fdl_late_window_begin(args->window_ns, scx_bpf_now());
	return 0;
}

/* The control plane writes a cgroup's deadlines through this program (fdl_cgroup_set_deadlines). */
SEC("syscall")
int fdl_set_params(struct fdl_params_args *args)
{
	args->ret = fdl_cgroup_set_deadlines(cgroup_ref(args->cgid), args->deadline_rr_ns,
					     args->deadline_wakeup_ns, args->budget_rate);
	return 0;
}

/*
 * The control plane writes a cgroup's burst buffer (configuration: burst_buffer) through this
 * program. It takes effect at the next period boundary.
 */
SEC("syscall")
int fdl_set_buffer(struct fdl_buffer_args *args)
{
	struct fdl_cgroup *cg = env_cgroup(cgroup_ref(args->cgid));

	if (!cg) {
		args->ret = -ENOENT;
		return 0;
	}
	cg->bw.buffer_ns = args->buffer_ns;
	args->ret = 0;
	return 0;
}

/*
 * The load balancer (scheduler/src/load_balance.rs) reads every domain's load, its CPUs' summed
 * (fdl_cpu_load_view) and brought to now, with the candidates they recorded in the current
 * balancer period.
 */
SEC("syscall")
int fdl_read_loads(struct fdl_loads_args *args)
{
	u64 now = scx_bpf_now(), gen = fdl.lb.gen, w, n, k, m;
	struct fdl_cpu_load *cl;
	struct fdl_dom_load *dl;
	struct fdl_pelt pelt;
	struct fdl_cpu *cc;
	u32 d, cpu, i;

	args->now_ns = now;
	args->nr_doms = env_nr_doms();
	bpf_for(cpu, 0, FDL_MAX_CPUS) {
		if (cpu >= tun.nr_cpu_ids)
			break;
		cc = env_cpu(cpu);
		if (!cc)
			continue;
		cl = &cc->load;
		fdl_cpu_load_view(cl, &pelt, &w, &n, now);
		d = env_dom(cpu) & (FDL_MAX_DOMS - 1);
		dl = &args->doms[d];
		dl->pelt.load_avg += pelt.load_avg;
		dl->pelt.runnable_avg += pelt.runnable_avg;
		dl->pelt.util_avg += pelt.util_avg;
		dl->nr_moved_in += cl->nr_moved_in;
		if (cl->lb_gen != gen)
			continue;
		k = cl->nr_active;
		bpf_for(i, 0, FDL_LB_ACTIVE) {
			m = dl->nr_active;
			if (i >= k || m >= FDL_LB_DOM_ACTIVE)
				break;
			dl->active[m & (FDL_LB_DOM_ACTIVE - 1)] = cl->active[i];
			dl->nr_active = m + 1;
		}
	}
	return 0;
}

/* The balancer's moves for this period (policy/load.h); a bad request changes nothing. */
SEC("syscall")
int fdl_set_moves(struct fdl_moves_args *args)
{
	args->ret = fdl_lb_set_moves(args->moves, args->nr_moves);
	return 0;
}

/* A deadline timer fired: preempt its CPU, whose dispatch lets the earlier deadline in. */
static int fdl_timer_fired(void *map, int *key, struct fdl_timer *timer)
{
	if (fdl_timer_due(*key))
		scx_bpf_kick_cpu(*key, SCX_KICK_PREEMPT);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(fdl_init)
{
	struct fdl_cgroup *cg;
	struct fdl_timer *timer;
	u32 cpu, zero = 0;
	s32 ret;

	/* Slot 0 is no cgroup's (cgref 0 is none): free, so that env_cgroup(0) finds nothing. */
	cg = bpf_map_lookup_elem(&cgroups, &zero);
	if (cg)
		cg->cgref = FDL_CGREF_FREE;
	fdl.fair.deadline_rr_ns = tun.fair_deadline_ns;
	fdl.fair.dl = scx_bpf_now() + tun.fair_deadline_ns;
	fdl.min_rr_ns = tun.fair_deadline_ns;
	bpf_for(cpu, 0, FDL_MAX_CPUS) {
		if (cpu >= tun.nr_cpu_ids)
			break;
		timer = bpf_map_lookup_elem(&timers, &cpu);
		if (!timer)
			continue;
		bpf_timer_init(&timer->timer, &timers, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&timer->timer, fdl_timer_fired);
	}
	timer = bpf_map_lookup_elem(&hold_timer, &zero);
	if (timer) {
		bpf_timer_init(&timer->timer, &hold_timer, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&timer->timer, fdl_hold_fired);
	}
	ret = env_create_dsq(FDL_DSQ_FAIR);
	if (!ret)
		ret = scx_bpf_create_dsq(FDL_DSQ_STALL, -1);
	if (!ret)
		ret = scx_bpf_create_dsq(FDL_DSQ_HOLD, -1);
	return ret;
}

/*
 * The exit dump (printed when the kernel ejects scx_fdl, --exit-dump-len): the policy's shared
 * state, every first-level queue, every busy CPU's record and every task's, so that a stall or an
 * error can be read without reproducing it.
 */
void BPF_STRUCT_OPS(fdl_dump, struct scx_dump_ctx *dctx)
{
	u64 now = scx_bpf_now(), cgref;
	struct fdl_cgroup *cg;
	u32 i;

	scx_bpf_dump("scx_fdl: now %llu vdt %llu (lag %llu) min_rr %llu cvtime_now %llu\n", now,
		     fdl_vdt(now), fdl.vdt_lag, fdl.min_rr_ns, fdl.cvtime_now);
	scx_bpf_dump("scx_fdl: fair container dl %llu runnable %lld picks %llu misses %llu; fair queue %d (counted %lld)\n",
		     fdl.fair.dl, fdl.fair.nr_runnable, fdl.fair.nr_picks, fdl.fair.nr_misses,
		     env_nr_queued(FDL_DSQ_FAIR), *fdl_queued_nr(FDL_QUEUED_FAIR));
	if (fdl.stray_at)
		scx_bpf_dump("scx_fdl: stray: queue %llu counted %lld held %lld at %llu\n", fdl.stray_q,
			     fdl.stray_counted, fdl.stray_queued, fdl.stray_at);
	scx_bpf_dump("scx_fdl: cpu.max: %llu limited cgroups, %d tasks held, hold timer at %llu; %llu cgroups untracked\n",
		     fdl.counters.nr_limited, scx_bpf_dsq_nr_queued(FDL_DSQ_HOLD), fdl.hold_next,
		     fdl.counters.nr_cgroups_untracked);
	bpf_for(i, 0, FDL_MAX_CONTAINERS) {
		if (i >= fdl.nr_slots)
			break;
		cgref = fdl.containers[i];
		if (!cgref || !(cg = env_cgroup(cgref)))
			continue;
		scx_bpf_dump("scx_fdl: queue %llu: %d queued (counted %lld), rr %llu dl %llu budget %lld cvtime %llu active %lld\n",
			     cgref, env_nr_queued(cgref), *fdl_queued_nr(i + 1), cg->ent.deadline_rr_ns,
			     cg->ent.dl, cg->ent.budget_ns, cg->cvtime, cg->nr_active);
	}
}

void BPF_STRUCT_OPS(fdl_dump_cpu, struct scx_dump_ctx *dctx, s32 cpu, bool idle)
{
	struct fdl_cpu *cc = env_cpu(cpu);

	if (idle || !cc)
		return;
	scx_bpf_dump("scx_fdl: cpu %d runs entity %llx dl %llu since %llu bw %llu; next %llu (%u) within until %llu\n",
		     cpu, cc->queue, cc->dl, cc->since, cc->bw, cc->next_dl, cc->has_next,
		     cc->within_until);
}

void BPF_STRUCT_OPS(fdl_dump_task, struct scx_dump_ctx *dctx, struct task_struct *p)
{
	struct fdl_task *t = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!t)
		return;
	scx_bpf_dump("scx_fdl: cgroup %llu queue %llx vtime %llu weight %u queued since %llu via_fair %u\n",
		     t->cgref, t->vqueue, t->vtime, t->weight, t->enqueued_at, t->via_fair);
}

void BPF_STRUCT_OPS(fdl_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(fdl_ops,
	       .select_cpu		= (void *)fdl_select_cpu,
	       .enqueue			= (void *)fdl_enqueue,
	       .dispatch		= (void *)fdl_dispatch,
	       .update_idle		= (void *)fdl_update_idle,
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
	       .cgroup_set_bandwidth	= (void *)fdl_cgroup_set_bandwidth,
	       .cgroup_set_idle		= (void *)fdl_cgroup_set_idle,
	       .cgroup_move		= (void *)fdl_cgroup_move,
	       .init			= (void *)fdl_init,
	       .exit			= (void *)fdl_exit,
	       .dump			= (void *)fdl_dump,
	       .dump_cpu		= (void *)fdl_dump_cpu,
	       .dump_task		= (void *)fdl_dump_task,
	       /*
	        * ENQ_LAST: a throttled task must not keep its CPU when nothing else waits
	        * (policy/bandwidth.h). KEEP_BUILTIN_IDLE: ops.update_idle is only a hook (fdl_on_idle);
	        * the kernel's idle tracking, which select_cpu and enqueue pick idle CPUs from, stays.
	        */
	       .flags			= SCX_OPS_ENQ_LAST | SCX_OPS_KEEP_BUILTIN_IDLE,
	       .name			= "scx_fdl");
