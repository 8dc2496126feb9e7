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
 * there is one; otherwise it joins one vtime-ordered queue. Wake-up placement bounds the credit a
 * sleeper brings back, and a starvation window bounds how far ahead any task can be pushed, so
 * every runnable task runs again well before the sched_ext watchdog would fire.
 *
 * Fair Deadline (FDL) on top: a first-level cgroup given a deadline_rr by the control plane is a
 * deadline container. Its tasks queue in deadline order and are dispatched before fair work, but
 * fair work as a whole is one more container with its own deadline (fair_deadline_ns), so it is
 * never starved. A container's bucket deadline advances as it runs, scaled by its bandwidth; a
 * container that wakes gets vdt + deadline_wakeup, with no credit for its sleep. When deadlines
 * are missed, virtual deadline time is moved back so that the lateness is shared. A waking
 * deadline task takes an idle CPU, or else preempts the CPU whose work has the latest deadline.
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
const volatile u64 fair_deadline_ns = 5000000;	/* deadline_rr of the fair container */

UEI_DEFINE(uei);

/* Rare events, read by the loader. */
struct fdl_counters counters;

/* Frequent events, counted per CPU (see struct fdl_cpu_stats) and summed by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct fdl_cpu_stats);
} cpu_stats SEC(".maps");

/* This CPU's event counters; NULL never happens for index 0 of a per-CPU array. */
static struct fdl_cpu_stats *this_cpu_stats(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_stats, &zero);
}

/* Count one event of this CPU: no atomics, the CPU is the only writer of its copy. */
#define stat_inc(field)						\
	do {							\
		struct fdl_cpu_stats *__s = this_cpu_stats();	\
		if (__s)					\
			__s->field++;				\
	} while (0)

static void count_dispatch(enum fdl_dispatch_path path)
{
	struct fdl_cpu_stats *s = this_cpu_stats();

	if (s && path < FDL_NR_DISPATCH)
		s->nr_dispatched[path]++;
}

/* The latest vtime a task started running with: the queue's notion of "now". */
static u64 vtime_now;

/* Written by the control plane: the root-level weight of the active deadline containers. */
s64 dl_wsum;

/*
 * Virtual deadline time is now - vdt_lag; misses grow vdt_lag. The fair container's bucket
 * deadline is fair_dl. Updated from every CPU without locks: a lost update shifts one deadline by
 * one charge, which the next charge corrects.
 */
static u64 vdt_lag;
static u64 fair_dl;

#define ROOT_CGID	1

/* Deadline parameters of first-level cgroups, keyed by cgroup id; written by the control plane. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FDL_MAX_CGROUPS);
	__type(key, u64);
	__type(value, struct fdl_params);
} params SEC(".maps");

/*
 * Per CPU: the deadline of the work it runs, to find the CPU with the most slack. The deadline
 * moves on as the work fills its bucket: deadline + fill(now - since, bw).
 */
struct cpu_ctx {
	u64 deadline;
	u64 since;
	u64 bw;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

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
	u64 enqueued_at;	/* when it was last queued (0: not waiting) */
	u64 deadline;		/* deadline it was queued with (deadline containers) */
	u64 rr_ns;		/* its container's deadline_rr when queued; 0: fair work */
	s32 last_cpu;		/* CPU it last ran on, plus one (0: never ran) */
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

/* The cgroup a task is counted in while runnable, else the one it belongs to. */
static u64 task_cgroup_id(struct task_ctx *tctx)
{
	return tctx->acct_cgid ?: tctx->cgid;
}

static u64 vdt_now(void)
{
	return scx_bpf_now() - vdt_lag;
}

/* The task's deadline container and its parameters; NULL when the task is fair work. */
static struct fdl_cgroup *task_container(struct task_ctx *tctx, struct fdl_params **prm)
{
	u64 cgid = task_cgroup_id(tctx);
	struct fdl_cgroup *cg = lookup_cgroup(cgid);
	u64 top;

	if (!cg || !(top = cg->top_cgid))
		return NULL;
	*prm = bpf_map_lookup_elem(&params, &top);
	if (!*prm || !(*prm)->deadline_rr_ns)
		return NULL;
	return top == cgid ? cg : lookup_cgroup(top);
}

static s64 root_wsum(void)
{
	struct fdl_cgroup *root = lookup_cgroup(ROOT_CGID);

	return root ? root->wsum : 0;
}

/* A deadline container's bandwidth in CPUs: its weight's part of the root, times the CPUs. */
static u64 container_bw(struct fdl_cgroup *c)
{
	return fdl_bandwidth_cpus(fdl_share_of(FDL_SHARE_ONE, c->contrib ?: c->weight, root_wsum()),
				  nr_cpus);
}

/* The fair container's bandwidth: what the deadline containers leave of the root. */
static u64 fair_bw(void)
{
	s64 sum = root_wsum(), fair = sum - dl_wsum;

	return fdl_bandwidth_cpus(fdl_share_of(FDL_SHARE_ONE, fair > 0 ? fair : 1, sum), nr_cpus);
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
	u64 cgid = task_cgroup_id(tctx);
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

/* What this CPU runs: work with this deadline, filling its bucket at bw from now on. */
static void set_cpu_deadline(u64 deadline, u64 now, u64 bw)
{
	u32 zero = 0;
	struct cpu_ctx *cc = bpf_map_lookup_elem(&cpu_ctxs, &zero);

	if (cc) {
		cc->deadline = deadline;
		cc->since = now;
		cc->bw = bw;
	}
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
	struct fdl_params *prm;
	struct fdl_cgroup *c;
	u64 bw;

	tctx->started_at = now;
	scx_bpf_task_set_dsq_vtime(p, p->scx.dsq_vtime + fdl_vtime_delta(delta, task_share(p, tctx)));
	cg = lookup_cgroup(task_cgroup_id(tctx));
	if (cg)
		__sync_fetch_and_add(&cg->usage_ns, delta);

	/* Running fills the bucket of the container the task belongs to. */
	c = task_container(tctx, &prm);
	bw = c ? container_bw(c) : fair_bw();
	if (c)
		c->dl = fdl_dl_fill(c->dl, delta, bw);
	else
		fair_dl = fdl_dl_fill(fair_dl, delta, bw);
	set_cpu_deadline(c ? c->dl : fair_dl, now, bw);
}

/*
 * A deadline task found no idle CPU: preempt the allowed CPU whose work has the latest deadline
 * (the most slack), if that is later than the task's. Tasks woken together (a message thread
 * waking its workers) thus spread over CPUs instead of all kicking the same one.
 */
static void preempt_for(struct task_struct *p, u64 deadline)
{
	u64 latest = deadline, now = scx_bpf_now(), cur;
	struct cpu_ctx *cc, *target_cc = NULL;
	s32 cpu, target = 0;
	u32 zero = 0;

	bpf_for(cpu, 0, nr_cpus) {
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		cc = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
		if (!cc)
			continue;
		cur = fdl_dl_fill(cc->deadline, now - cc->since, cc->bw);
		if (fdl_time_before(latest, cur)) {
			latest = cur;
			target = cpu;
			target_cc = cc;
		}
	}
	if (target_cc) {
		/* Claim it at our deadline, so that the next waker picks another CPU. */
		target_cc->deadline = deadline;
		target_cc->since = now;
		scx_bpf_kick_cpu(target, SCX_KICK_PREEMPT);
		stat_inc(nr_preempt_kicks);
	}
}

s32 BPF_STRUCT_OPS(fdl_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	if (is_stall_victim(p))
		return prev_cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle) {
		struct task_ctx *tctx = try_lookup_task_ctx(p);

		if (tctx)
			tctx->enqueued_at = scx_bpf_now();
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
		count_dispatch(FDL_DISPATCH_IDLE);
	}
	return cpu;
}

void BPF_STRUCT_OPS(fdl_enqueue, struct task_struct *p, u64 enq_flags)
{
	bool wakeup = enq_flags & SCX_ENQ_WAKEUP;
	struct fdl_params *prm;
	struct task_ctx *tctx;
	struct fdl_cgroup *c;
	u64 vtime, vdt;
	s32 cpu;

	if (is_stall_victim(p)) {
		scx_bpf_dsq_insert(p, FDL_DSQ_STALL, slice_ns, enq_flags);
		return;
	}
	tctx = try_lookup_task_ctx(p);
	if (!tctx)
		return;
	tctx->enqueued_at = scx_bpf_now();
	vdt = vdt_now();

	c = task_container(tctx, &prm);
	if (c) {
		/*
		 * A container becoming busy (this task is its only active member) starts a new bucket,
		 * however the task arrived (woken, moved in), and so does one whose parameters were
		 * just (re)written: its old deadline means nothing. A busy one stays within rr.
		 */
		if (c->nr_active <= 1 || c->dl_gen != prm->generation) {
			c->dl = fdl_dl_wakeup(c->dl, vdt, prm->deadline_wakeup_ns, prm->deadline_rr_ns);
			c->dl_gen = prm->generation;
		}
		else
			c->dl = fdl_dl_cap(c->dl, vdt, prm->deadline_rr_ns);
		tctx->deadline = wakeup ? fdl_dl_wakeup(c->dl, vdt, prm->deadline_wakeup_ns,
							 prm->deadline_rr_ns) : c->dl;
		tctx->rr_ns = prm->deadline_rr_ns;
		scx_bpf_dsq_insert_vtime(p, FDL_DSQ_DEADLINE, slice_ns, tctx->deadline, enq_flags);
		stat_inc(nr_deadline_enqueued);
	} else {
		if (!scx_bpf_dsq_nr_queued(FDL_DSQ_FAIR))
			fair_dl = fdl_dl_wakeup(fair_dl, vdt, fair_deadline_ns, fair_deadline_ns);
		else
			fair_dl = fdl_dl_cap(fair_dl, vdt, fair_deadline_ns);
		tctx->rr_ns = 0;
		vtime = fdl_vtime_cap(p->scx.dsq_vtime, vtime_now, starvation_window());
		if (vtime != p->scx.dsq_vtime)
			stat_inc(nr_starvation_clamps);
		scx_bpf_dsq_insert_vtime(p, FDL_DSQ_FAIR, slice_ns, vtime, enq_flags);
		stat_inc(nr_fair_enqueued);
	}

	/* Queued without passing through select_cpu (preempted, migrated): wake an idle CPU for it. */
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		stat_inc(nr_idle_kicks);
	} else if (c) {
		preempt_for(p, tctx->deadline);
	}
}

/*
 * The deadline the previous task would run on with: its container's capped bucket deadline, or
 * the fair container's.
 */
static u64 prev_deadline(struct task_ctx *tctx, u64 vdt)
{
	struct fdl_params *prm;
	struct fdl_cgroup *c = task_container(tctx, &prm);

	return c ? fdl_dl_cap(c->dl, vdt, prm->deadline_rr_ns) : fair_dl;
}

/*
 * Earliest deadline first between the deadline queue's head and the fair container (while fair
 * work waits); within fair work, weighted virtual time.
 *
 * ops.dispatch runs before the expiring task is charged and queued again, so on its own every
 * slice end would hand the CPU to a queue's head: round-robin, whatever the weights. Let the
 * previous task compete instead: it keeps the CPU while it is still first, charged up to now.
 */
void BPF_STRUCT_OPS(fdl_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_struct *dhead = __COMPAT_scx_bpf_dsq_peek(FDL_DSQ_DEADLINE);
	struct task_struct *fhead = __COMPAT_scx_bpf_dsq_peek(FDL_DSQ_FAIR);
	u64 vdt = vdt_now(), pdl;
	struct task_ctx *tctx;
	bool deadline_first;

	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && !is_stall_victim(prev) &&
	    (tctx = try_lookup_task_ctx(prev))) {
		charge(prev, tctx);
		pdl = prev_deadline(tctx, vdt);
		if ((!dhead || !fdl_time_before(dhead->scx.dsq_vtime, pdl)) &&
		    (!fhead || (tctx->rr_ns ? !fdl_time_before(fair_dl, pdl) :
			       !fdl_time_before(fhead->scx.dsq_vtime, prev->scx.dsq_vtime)))) {
			scx_bpf_task_set_slice(prev, slice_ns);
			count_dispatch(FDL_DISPATCH_PREV);
			return;
		}
	}

	deadline_first = dhead && (!fhead || !fdl_time_before(fair_dl, dhead->scx.dsq_vtime));
	if (deadline_first) {
		if (scx_bpf_dsq_move_to_local(FDL_DSQ_DEADLINE, 0))
			count_dispatch(FDL_DISPATCH_DEADLINE);
		else if (scx_bpf_dsq_move_to_local(FDL_DSQ_FAIR, 0))
			count_dispatch(FDL_DISPATCH_FAIR);
	} else if (scx_bpf_dsq_move_to_local(FDL_DSQ_FAIR, 0)) {
		count_dispatch(FDL_DISPATCH_FAIR);
	} else if (scx_bpf_dsq_move_to_local(FDL_DSQ_DEADLINE, 0)) {
		count_dispatch(FDL_DISPATCH_DEADLINE);
	}
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
		stat_inc(nr_became_runnable);
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
	stat_inc(nr_stopped_runnable);
}

/*
 * A task starting past its deadline is a miss: count it for its container (NULL: the fair
 * container) and move virtual deadline time back (fdl_miss_lag_step) so that the lateness is spread over everyone.
 */
static void account_miss(struct fdl_cgroup *c, u64 deadline, u64 rr_ns, u64 vdt)
{
	u64 late = vdt - deadline;

	if (c) {
		__sync_fetch_and_add(&c->nr_misses, 1);
		if (late > c->max_lateness_ns)
			c->max_lateness_ns = late;
	} else {
		__sync_fetch_and_add(&counters.nr_fair_misses, 1);
		if (late > counters.fair_max_lateness_ns)
			counters.fair_max_lateness_ns = late;
	}
	vdt_lag += fdl_miss_lag_step(vdt, deadline, rr_ns);
}

void BPF_STRUCT_OPS(fdl_running, struct task_struct *p)
{
	struct task_ctx *tctx = try_lookup_task_ctx(p);
	u64 now = scx_bpf_now(), vdt = now - vdt_lag, deadline;
	struct fdl_cgroup *cg, *c;
	struct fdl_params *prm;
	s32 cpu = scx_bpf_task_cpu(p);
	u64 wait;
	u32 b;

	if (!tctx)
		return;
	tctx->started_at = now;
	if (fdl_time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
	if (tctx->last_cpu && tctx->last_cpu != cpu + 1)
		stat_inc(nr_migrations);
	tctx->last_cpu = cpu + 1;

	if (tctx->enqueued_at) {
		wait = now - tctx->enqueued_at;
		cg = lookup_cgroup(task_cgroup_id(tctx));
		if (cg) {
			__sync_fetch_and_add(&cg->wait_ns, wait);
			b = fdl_lat_bucket(wait);
			if (b < FDL_LAT_BUCKETS)
				__sync_fetch_and_add(&cg->runq_lat[b], 1);
		}
		tctx->enqueued_at = 0;
	}

	c = task_container(tctx, &prm);
	deadline = tctx->rr_ns ? tctx->deadline : fair_dl;
	if (fdl_time_before(deadline, vdt))
		account_miss(tctx->rr_ns ? c : NULL, deadline, tctx->rr_ns ?: fair_deadline_ns, vdt);
	set_cpu_deadline(deadline, now, c ? container_bw(c) : fair_bw());
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
		stat_inc(nr_stopped_runnable);
	}
}

s32 BPF_STRUCT_OPS(fdl_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
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
		/* Deadline parameters belong to first-level cgroups; descendants inherit theirs. */
		pcg = lookup_cgroup(cg.parent_cgid);
		cg.top_cgid = cgrp->level == 1 ? cgid : pcg ? pcg->top_cgid : 0;
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

/*
 * Make weight the cgroup's effective weight. An active cgroup's contribution to its parent
 * changes by exchange, as in cgroup_propagate(), so the parent's sum stays exact.
 */
static void cgroup_apply_weight(struct fdl_cgroup *cg, u32 weight)
{
	struct fdl_cgroup *parent;
	s64 old;

	cg->weight = weight;
	if (cg->nr_active <= 0)
		return;
	old = __sync_lock_test_and_set(&cg->contrib, (s64)weight);
	parent = lookup_cgroup(cg->parent_cgid);
	if (parent)
		__sync_fetch_and_add(&parent->wsum, (s64)weight - old);
}

void BPF_STRUCT_OPS(fdl_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	struct fdl_cgroup *cg = lookup_cgroup(cgroup_id(cgrp));

	if (!cg)
		return;
	cg->cpu_weight = weight;
	/* While the control loop boosts it, the boost rules; it decays back to this weight. */
	if (!cg->boost_weight)
		cgroup_apply_weight(cg, weight);
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

/*
 * The guaranteed_shares control loop (Rust) sets a cgroup's effective weight through this program
 * (BPF_PROG_RUN), so that the change goes through the same exchange as a cpu.weight change.
 */
SEC("syscall")
int fdl_set_boost(struct fdl_boost_args *args)
{
	struct fdl_cgroup *cg = lookup_cgroup(args->cgid);

	if (!cg) {
		args->ret = -ENOENT;
		return 0;
	}
	cg->boost_weight = args->weight;
	cgroup_apply_weight(cg, args->weight ?: cg->cpu_weight);
	args->ret = 0;
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(fdl_init)
{
	s32 ret;

	fair_dl = scx_bpf_now() + fair_deadline_ns;
	ret = scx_bpf_create_dsq(FDL_DSQ_FAIR, -1);
	if (!ret)
		ret = scx_bpf_create_dsq(FDL_DSQ_DEADLINE, -1);
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
