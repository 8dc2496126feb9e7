/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The only door from the policy (the headers in policy/) to the kernel. The policy never calls a
 * kfunc or looks up a map itself: it asks for the time, a cgroup's or a CPU's record, and to
 * insert, move, kick or time something, through the functions below. In the BPF program they are kfuncs and
 * map lookups; in the native tests (FDL_NATIVE) tests/native/fake_env.h provides them with a
 * deterministic clock and queues, so the same policy code runs as ordinary C.
 *
 *	env_now()                         the scheduler's clock, ns
 *	env_task_exec(p)                  p's CPU time as the kernel counts it (cpu.stat's), ns
 *	env_mb()                          a full memory barrier
 *	env_cgroup(cgref)                 a cgroup's record, or NULL if untracked or gone
 *	env_cpu(cpu)                      a CPU's policy record (struct fdl_cpu), or NULL
 *	env_stats()                       this CPU's event counters
 *	env_scan()                        this CPU's scratch record for the dispatcher's scan
 *	env_insert_dom(p, cpu)            the domain p is queued in when placed for cpu (-1: the
 *	                                  CPU it is queued on)
 *	env_insert_vtime(p, dsq, slice, vtime, flags, dom)   queue p in vtime order, in domain dom
 *	env_move_to_local(dsq, lead, doms)   move the head of dsq to this CPU (its own domain's first,
 *	                                  unless another's is more than lead of vtime ahead, then
 *	                                  the nearest domain's with work); false if empty. Only the
 *	                                  domains doms counts work in are looked at (the
 *	                                  policy's counts, fdl_queue_doms; NULL: all), here and
 *	                                  below
 *	env_nr_queued(dsq)                tasks in dsq (all domains; the dump's)
 *	env_queued_any(dsq, doms)         > 0 if dsq holds work in a domain of doms: the count of
 *	                                  the first with some (own domain first), 0 if none (the
 *	                                  policy counts its queues itself, fdl_queued_add: checks
 *	                                  that do not trust the counts)
 *	env_queued_dom(dsq, dom)          the tasks in domain dom's part of dsq (a full scan's check)
 *	env_head_vtime(dsq, &vtime, lead, doms)   the vtime of the head env_move_to_local would
 *	                                  take (a sampled remote one counted lead later); false if
 *	                                  empty
 *	env_min_head_vtime(dsq, &vtime, doms)   the least vtime of its domains' heads; false if all
 *	                                  empty
 *	env_kick(cpu, preempt)            wake an idle CPU, or end the running slice (preempt)
 *	env_pick_idle(p)                  claim an idle CPU p may use, or -1
 *	env_task_allowed(p, cpu)          p may run on cpu
 *	env_set_slice(p, slice)           p's remaining slice
 *	env_random()                      a pseudo-random u32
 *	env_arm_timer(cpu, delay_ns)      kick cpu (preempt) after delay_ns
 *	env_hold(p, slice, flags)         put p in the hold queue (throttled: FDL_DSQ_HOLD)
 *	env_arm_hold(delay_ns)            run the hold queue's release pass after delay_ns
 *	env_kick_self()                   wake this CPU once it is idle (after SCX_ENQ_LAST)
 *	env_create_dsq(id)                create a queue, a DSQ per domain (sleepable context);
 *	                                  0 or -errno (then none is left)
 *	env_destroy_dsq(id)               destroy a queue's DSQs
 *	env_move_unblocked(dsq, lead, doms)   move dsq's first task that no CPU limit blocks to this
 *	                                  CPU, the blocked ones it passes to the hold queue; false if
 *	                                  none (domain by domain as env_move_to_local; one domain's
 *	                                  walk, move_unblocked_dom, is the program's, with the
 *	                                  policy's check; natively the test defines it whole)
 *	fdl_for(i, start, end)            a bounded loop
 *	fdl_for_few(i, start, end)        a loop of a few iterations (constant bounds), unrolled
 *	env_index(i, mask)                i & mask, an array index the verifier sees bounded
 *
 * Queues and domains: every queue (a container's, the root's fair queue) is one DSQ per queue
 * domain, a last-level cache (tun.nr_doms, tun.cpu_dom). Work is queued in the domain of the CPU
 * it was placed on, and a CPU takes from its own domain's DSQ first, so the CPUs of one LLC share
 * a lock and a cache line instead of the whole machine. The policy still sees one queue: which
 * queue runs next is decided over all domains (the scan counts every domain's DSQ), only which of
 * its tasks comes from where is local. With one domain, each queue is exactly one DSQ.
 */
#ifndef __FDL_ENV_H
#define __FDL_ENV_H

#include "intf.h"

/* Per-CPU policy state: what the CPU runs, to choose preemption victims and cut slices. */
struct fdl_cpu {
	u64 dl;			/* deadline of its work when last charged, in vdt */
	u64 since;		/* when that was, ns */
	u64 bw;			/* the work's bandwidth in CPUs (fixed point): dl fills at it */
	u64 rr_ns;		/* the work's deadline_rr: its deadline never runs further ahead */
	u64 queue;		/* its work's deadline entity (container cgroup id or FDL_DSQ_FAIR) */
	u64 next_dl;		/* the earliest competing deadline when it was picked */
	u32 has_next;		/* next_dl is valid */
	u32 picked;		/* the dispatcher chose its next work (fdl_take): has_next is for it */
	u64 fair_pick;		/* the queue the dispatcher last took work from by the fair order */
	u64 within_until;	/* its work is within its guarantee until then (ns; 0: not) */
	u64 cont;		/* the queue of the task it runs (container cgroup id or FDL_DSQ_FAIR) */
	u64 timer_at;		/* when its deadline timer fires (fdl_preempt_at; past or 0: not armed; 0: its slice ended first, fdl_timer_lapse) */
	u32 dispatch_gen;	/* its dispatches, counted (fdl_on_dispatch) */
	u32 timer_gen;		/* dispatch_gen when its deadline timer was last set */
	u64 pick_q;		/* the container whose work the dispatcher took by its deadline (0: none), */
	u64 pick_dl;		/* the deadline it promised, */
	u64 pick_vdt;		/* and vdt then, before a miss moved it back (fdl_took) */
	u64 run_start;		/* since when fdl_cpu_burst's burst_ns holds, ns */
	u64 burst_ns;		/* the CPU time its task had run since it last woke, by run_start */
	u64 avg_burst_ns;	/* its task's usual burst (fdl_task.avg_burst_ns; 0: unknown) */
	u64 vtime;		/* its task's vtime when it started or kept the CPU (queue cont's clock) */
	u32 empty_queued;	/* its last dispatch's scan saw queued work and took none */
	u32 inflight_retries;	/* looks again for work counted but not in its queue yet, since it last started a task */
	u64 local_since;	/* select_cpu put a task on its local queue then, not yet started (0: none) */
	u64 claimed_at;		/* woken for queued work, or given a task by select_cpu, then; not yet started (0: neither) */
	u64 lent_q;		/* the queue whose work of the fair order a deadline took it from (0: none) */
	u64 lent_at;		/* when (fdl_loan_due) */
	u64 lent_by;		/* the entity whose deadline took it (its queue, as fdl_scan.best_q) */
	u64 lent_bound;		/* the work it was taken from was past any burst (fdl_cpu_bound) */
	u64 fair_served_at;	/* it last ran work of the fair order, or saw none waiting (fdl_fair_first) */
	struct fdl_cpu_load load;	/* load tracking (policy/load.h) */
} __attribute__((aligned(64)));	/* whole cache lines: each CPU writes its own (cpu_ctxs) */

/*
 * The dispatcher's scan of the queues, kept in a per-CPU scratch record rather than in locals: the
 * verifier then sees unknown values at every turn of the loop and its states converge, instead of
 * tracking each candidate precisely through 64 turns.
 */
struct fdl_scan {
	u64 best_q, best_dl;	/* the earliest deadline entity with work: its queue, deadline */
	u64 next_q, next_dl;	/* the runner-up */
	u32 best_fair, next_fair;	/* 1: that entity is the fair container, 2: none */
	u64 fair_q, fair_key;	/* the fair queue with the least cgroup virtual time */
	u64 fair_window;	/* the starvation window its keys are capped at (fdl_fair_window) */
	u32 fair_found;
	u32 running_found;	/* running_cv is set: */
	u64 running_cv;		/* the least cgroup virtual time of the containers with a task on a CPU */
	u32 full_dom;		/* a full scan's: the domain whose DSQs it asks the kernel about */
	s64 dl_wsum, dl_unboosted_wsum;	/* the active deadline containers' root weight */
	s64 prot_wsum;		/* ... at cpu.weight, those without a first-level guarantee */
	s64 guaranteed_wsum;	/* a full scan's: the first-level guaranteed ones', active or not */
	u64 guaranteed_rate;	/* a full scan's: every deadline container's grant (budget_rate) together */
	u64 min_rr_ns;
	u64 rate_sum;		/* their granted guarantees (budget_rate) together */
	u64 nr_queued;		/* tasks waiting in the queues scanned (fdl_scan_queued: at least 1 per queue with work) */
	u64 skip_mask;		/* containers' slots (bit i: fdl.containers[i]) whose work this CPU may not run, */
	u32 skip_root;		/* ... and the root's queue: counted, not offered (fdl_take_elsewhere) */
	u64 keep_slice;		/* fdl_take_elsewhere: the previous task keeps the CPU for this long */
	u32 fair_first;		/* the fair order's choice goes first on this CPU (fdl_fair_first) */
	u32 fair_dl;		/* fair_q is a container whose deadline orders its work (fdl_entity_orders) */
};

/*
 * Functions the verifier checks once, on their own, instead of at every call site: the policy's
 * walks over the cgroup tree and the queues. They take and return plain numbers (BPF global
 * functions). Natively just functions.
 */
#define FDL_GLOBAL __attribute__((noinline))

/*
 * How many tasks wait in each domain of a queue, as the policy counts them (never fewer than its
 * DSQ there holds; policy/state.h): the takes and peeks ask the kernel only about the domains
 * counted non-empty. A struct, not an array: a BPF global function's pointer argument is checked
 * against the size of what it points to.
 */
struct fdl_dom_counts {
	s32 nr[FDL_MAX_DOMS];
};

/* The DSQ of queue q in domain dom (domain 0: q itself). */
static inline u64 fdl_dom_dsq(u64 q, u32 dom)
{
	return q | ((u64)dom << FDL_DOM_SHIFT);
}

#ifdef FDL_NATIVE
#include "fake_env.h"
#else

/* Enqueue flags the policy passes through or adds. */
#define FDL_ENQ_WAKEUP		SCX_ENQ_WAKEUP
#define FDL_ENQ_LAST		SCX_ENQ_LAST

#define fdl_for(i, start, end)	bpf_for(i, start, end)
/*
 * Unrolled by the compiler: no kfunc per iteration (bpf_for calls bpf_iter_num_next at each),
 * for the hot path's loops of three or four turns; each turn is verified on its own.
 */
#define fdl_for_few(i, start, end)	_Pragma("unroll") for ((i) = (start); (i) < (end); (i)++)
/*
 * Over queue domains start..n-1, a plain C loop: the verifier walks it turn by turn (n is the
 * loader's number of domains, a constant once loaded; at most FDL_MAX_DOMS turns of a few
 * instructions and a kfunc), where bpf_for called bpf_iter_num_next at each turn.
 */
#define env_for_doms(k, start, n)	for ((k) = (start); (k) < (n) && (k) < FDL_MAX_DOMS; (k)++)

/*
 * The cgroups' records, by slot (see FDL_CGREF_SLOT_BITS). An array, not a hash keyed by the
 * kernel's cgroup id: the verifier turns a lookup into an address computation, where a hash
 * lookup hashes the key and walks a bucket, and the hot path looks up a cgroup and its
 * ancestors several times per callback. Not bpf_cgrp_storage either: that needs a trusted
 * struct cgroup pointer, and the policy keeps cgroups as numbers (its queues, the tasks' and
 * the dispatcher's records, the native tests). The price: the array is allocated whole at load
 * (the loader sets max_entries from --max-cgroups: 8192 slots, about 6 MiB, by default).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FDL_DFL_CGROUPS);
	__type(key, u32);
	__type(value, struct fdl_cgroup);
} cgroups SEC(".maps");

/* A tracked cgroup's reference by its kernel id (cgroup callbacks and the control plane only). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FDL_DFL_CGROUPS);
	__type(key, u64);
	__type(value, u64);
} cgroup_refs SEC(".maps");

/*
 * The CPUs' policy records, by CPU id. A plain array, not a per-CPU one: other CPUs read and write
 * them (victim choice, claims), and a lookup in an array is an address computation the verifier
 * writes inline, where bpf_map_lookup_percpu_elem() is a helper call (2.4 M kernel instructions,
 * about 200 per task started, in bench/insn-profile.sh's wake shape). Each record is padded to
 * whole cache lines (struct fdl_cpu), so CPUs do not share one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FDL_MAX_CPUS);
	__type(key, u32);
	__type(value, struct fdl_cpu);
} cpu_ctxs SEC(".maps");

/* Frequent events, counted per CPU (see struct fdl_cpu_stats) and summed by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct fdl_cpu_stats);
} cpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct fdl_scan);
} scans SEC(".maps");

/* One deadline timer per CPU: fires inside a tick to preempt that CPU (see env_arm_timer). */
struct fdl_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FDL_MAX_CPUS);
	__type(key, u32);
	__type(value, struct fdl_timer);
} timers SEC(".maps");

/* The hold queue's timer (policy/bandwidth.h): one for all throttled cgroups. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct fdl_timer);
} hold_timer SEC(".maps");

static __always_inline u64 env_now(void)
{
	return scx_bpf_now();
}

/*
 * p's CPU time as the kernel counts it: se.sum_exec_runtime, brought up to date (update_curr_scx)
 * before every ops.tick and ops.stopping, and before ops.dispatch for the task that ran on.
 */
static __always_inline u64 env_task_exec(struct task_struct *p)
{
	return p->se.sum_exec_runtime;
}

/*
 * The CPU task p is on: task_cpu(p), the field scx_bpf_task_cpu() returns, read in place. The
 * kfunc is a call (about 135 ns each in the 2-vCPU VM, measured by calling it twice more in
 * ops.running: bench/cost.sh), and ops.running, ops.stopping and ops.tick each asked it. Not this
 * CPU's id: a task's properties changed from another CPU run its ops.stopping and ops.running
 * there, under its run queue's lock. Where the field is elsewhere (an architecture that keeps
 * it out of thread_info), the kfunc.
 */
static __always_inline s32 env_task_cpu(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return p->thread_info.cpu;
	return scx_bpf_task_cpu(p);
}

/* A full memory barrier (BPF has no fence instruction: an atomic add orders like one). */
static __always_inline void env_mb(void)
{
	volatile u64 fence = 0;

	__sync_fetch_and_add(&fence, 0);
}

/*
 * The record of the cgroup cgref refers to; NULL for 0, or once that cgroup's slot was freed. No
 * test of its own for 0: slot 0 is never a cgroup's, and fdl_init marks it free, so its record's
 * cgref is never 0 (about 25 lookups per task started: each test counts).
 */
static __always_inline struct fdl_cgroup *env_cgroup(u64 cgref)
{
	u32 slot = cgref & FDL_CGREF_SLOT_MASK;
	struct fdl_cgroup *cg = bpf_map_lookup_elem(&cgroups, &slot);

	return cg && cg->cgref == cgref ? cg : NULL;
}

static __always_inline struct fdl_cpu *env_cpu(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctxs, &key);
}

/* This CPU's event counters; NULL never happens for index 0 of a per-CPU array. */
static __always_inline struct fdl_cpu_stats *env_stats(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_stats, &zero);
}

static __always_inline struct fdl_scan *env_scan(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&scans, &zero);
}

/*
 * i & mask, bounded as such for the verifier: the empty asm makes i opaque first, so clang cannot
 * drop the mask as redundant (it knew a table's entries were all below 64 and dropped it, and the
 * verifier, which does not know the table, rejected the access).
 */
static __always_inline u32 env_index(u32 i, u32 mask)
{
	barrier_var(i);
	return i & mask;
}

/* A CPU's queue domain (0 for a CPU out of range). */
static __always_inline u32 env_dom(s32 cpu)
{
	if (cpu < 0 || cpu >= FDL_MAX_CPUS)
		return 0;
	return tun.cpu_dom[cpu] & (FDL_MAX_DOMS - 1);
}

/* The k-th domain a CPU of domain dom takes work from (k = 0: its own). */
static __always_inline u32 env_dom_order(u32 dom, u32 k)
{
	return tun.dom_order[dom & (FDL_MAX_DOMS - 1)][k & (FDL_MAX_DOMS - 1)] & (FDL_MAX_DOMS - 1);
}

/* Queue domains (at least one: a loader that wrote no tables has one). */
static __always_inline u32 env_nr_doms(void)
{
	return tun.nr_doms > 1 ? tun.nr_doms : 1;
}

static __always_inline u32 env_insert_dom(struct task_struct *p, s32 cpu)
{
	if (env_nr_doms() <= 1)
		return 0;
	return env_dom(cpu >= 0 ? cpu : env_task_cpu(p));
}

static __always_inline void env_insert_vtime(struct task_struct *p, u64 dsq, u64 slice, u64 vtime,
					     u64 flags, u32 dom)
{
	scx_bpf_dsq_insert_vtime(p, fdl_dom_dsq(dsq, dom & (FDL_MAX_DOMS - 1)), slice, vtime, flags);
}

/* Domain d may hold work by the counts doms (NULL: no counts, every domain may). */
static __always_inline bool env_dom_in(struct fdl_dom_counts *doms, u32 d)
{
	return !doms || doms->nr[d & (FDL_MAX_DOMS - 1)] > 0;
}

/* Count where this CPU took queued work from (enum fdl_dom_take). */
static __always_inline void env_count_dom_take(u32 how)
{
	struct fdl_cpu_stats *s = env_stats();

	if (s && how < FDL_NR_DOM_TAKE)
		s->nr_dom_take[how]++;
}

/* The vtime of the head of DSQ id, or false if it is empty. */
static __always_inline bool env_dsq_head_vtime(u64 id, u64 *vtime)
{
	struct task_struct *head = __COMPAT_scx_bpf_dsq_peek(id);

	if (!head)
		return false;
	*vtime = head->scx.dsq_vtime;
	return true;
}

/*
 * The first domain in own's order (own first, then the nearest) whose DSQ of queue dsq has work,
 * of those doms counts work in, with its head's vtime; -1 if none. Its own domain is looked at
 * before the loop starts (most takes find work there: no iterator to set up).
 */
static __always_inline s32 env_dom_base(u64 dsq, u32 own, u32 n, struct fdl_dom_counts *doms,
					u64 *vtime)
{
	u32 k, d;

	if (env_dom_in(doms, own) && env_dsq_head_vtime(fdl_dom_dsq(dsq, own), vtime))
		return own;
	env_for_doms(k, 1, n) {
		d = env_dom_order(own, k);
		if (env_dom_in(doms, d) && env_dsq_head_vtime(fdl_dom_dsq(dsq, d), vtime))
			return d;
	}
	return -1;
}

/*
 * The domain whose head of queue dsq this CPU takes next, of n > 1: a random other domain's if
 * that head is more than lead of vtime ahead of the head of the base (env_dom_base), else the
 * base; -1 if no domain has work. *vtime is the chosen head's, a sampled one's counted lead later;
 * *sampled says the random one was chosen.
 */
static __always_inline s32 env_dom_next(u64 dsq, u32 own, u32 n, struct fdl_dom_counts *doms,
					u64 lead, u64 *vtime, bool *sampled)
{
	u32 other = env_dom_order(own, 1 + bpf_get_prandom_u32() % (n - 1));
	s32 base = env_dom_base(dsq, own, n, doms, vtime);
	u64 other_v = 0;

	*sampled = other != (u32)base && env_dom_in(doms, other) &&
		   env_dsq_head_vtime(fdl_dom_dsq(dsq, other), &other_v) &&
		   (base < 0 || fdl_time_before(other_v + lead, *vtime));
	if (!*sampled)
		return base;
	*vtime = other_v + lead;
	return other;
}

/* Defined by the program (main.bpf.c), with the policy's check: env_move_unblocked in one DSQ. */
static bool move_unblocked_dom(u64 id);

/* One DSQ's part of a take: its first task, or (unblocked) its first that no CPU limit blocks. */
static __always_inline bool env_take_dsq(u64 id, int unblocked)
{
	return unblocked ? move_unblocked_dom(id) : scx_bpf_dsq_move_to_local(id, 0);
}

/*
 * env_move_to_local and env_move_unblocked: own domain first, then the others nearest first.
 * Nothing else would move a task between domains while its own kept work (a queue's four tasks
 * in one LLC and two in another: the two got a CPU each, the four half of one, for good), so the
 * queue's order also holds across domains, sampled: a random other domain's head that is more
 * than lead of vtime ahead of the head this CPU would take (its own domain's, or if that is
 * empty the nearest one's) goes first (the policy's lead: a slice of one of the queue's members'
 * CPU time, fdl_queue_lead). Compared with its own domain's head only, a CPU whose own domain ran
 * empty took from the nearest domain whatever waited further away: on 8 emulated CPUs, node 0's
 * CPUs served its 5 busy loops and node 1's 11 loops got a third of a CPU each for seconds
 * (tests/vm/topology.sh: one loop 485 ms in 2 s against 2000 on node 0). A global function: the
 * dispatcher calls it at several sites, and its loop is verified once.
 */
FDL_GLOBAL int env_dom_take(u64 dsq, int unblocked, u64 lead, struct fdl_dom_counts *doms)
{
	u32 own = env_dom(bpf_get_smp_processor_id()), k, n = env_nr_doms();
	bool sampled;
	u64 vtime = 0;
	s32 d;

	if (n <= 1)
		return env_take_dsq(dsq, unblocked);
	d = env_dom_next(dsq, own, n, doms, lead, &vtime, &sampled);
	if (d >= 0 && env_take_dsq(fdl_dom_dsq(dsq, d), unblocked)) {
		env_count_dom_take(sampled ? FDL_DOM_ORDER : d == (s32)own ? FDL_DOM_OWN :
				   FDL_DOM_STEAL);
		return 1;
	}
	/* The head seen went to another CPU meanwhile (or was blocked): every domain in order. */
	env_for_doms(k, 0, n) {
		d = env_dom_order(own, k);
		if (env_dom_in(doms, d) && env_take_dsq(fdl_dom_dsq(dsq, d), unblocked)) {
			env_count_dom_take(k ? FDL_DOM_STEAL : FDL_DOM_OWN);
			return 1;
		}
	}
	return 0;
}

/* One queue domain: the DSQ's first task, without env_dom_take's call (a take per start). */
static __always_inline bool env_move_to_local(u64 dsq, u64 lead, struct fdl_dom_counts *doms)
{
	if (env_nr_doms() <= 1)
		return scx_bpf_dsq_move_to_local(dsq, 0);
	return env_dom_take(dsq, 0, lead, doms);
}

static __always_inline bool env_move_unblocked(u64 dsq, u64 lead, struct fdl_dom_counts *doms)
{
	return env_dom_take(dsq, 1, lead, doms);
}

/*
 * Whether queue dsq holds work in the domains doms counts work in (NULL: every domain): this CPU's
 * domain's DSQ first, then the others nearest first, up to the first with work; its count (a lower
 * bound of the queue's total), 0 if none has any. One kfunc (and DSQ hash lookup) per domain asked
 * until work is found. The dispatcher asks the policy's counts instead (fdl_queued_add); this is
 * for the checks that do not trust them.
 */
FDL_GLOBAL s32 env_queued_any(u64 dsq, struct fdl_dom_counts *doms)
{
	u32 own, k, d, n = env_nr_doms();
	s32 w;

	if (n <= 1)
		return scx_bpf_dsq_nr_queued(dsq);
	own = env_dom(bpf_get_smp_processor_id());
	env_for_doms(k, 0, n) {
		d = env_dom_order(own, k);
		if (env_dom_in(doms, d) && (w = scx_bpf_dsq_nr_queued(fdl_dom_dsq(dsq, d))) > 0)
			return w;
	}
	return 0;
}

/* The tasks in domain dom's DSQ of queue dsq (domain 0, the only one of one: dsq itself). */
static __always_inline s32 env_queued_dom(u64 dsq, u32 dom)
{
	return scx_bpf_dsq_nr_queued(fdl_dom_dsq(dsq, dom));
}

FDL_GLOBAL s32 env_nr_queued(u64 dsq)
{
	u32 d, n = env_nr_doms();
	s32 sum = 0;

	if (n <= 1)
		return scx_bpf_dsq_nr_queued(dsq);
	bpf_for(d, 0, FDL_MAX_DOMS) {
		if (d >= n)
			break;
		sum += scx_bpf_dsq_nr_queued(fdl_dom_dsq(dsq, d));
	}
	return sum;
}

/*
 * The vtime a task of queue dsq that would keep this CPU competes with: the head this CPU would
 * take next (env_dom_next, as env_dom_take chooses; a sampled remote one counted lead later).
 * A global function: its loop is verified once, not once per path of the dispatcher that calls it.
 */
FDL_GLOBAL int env_head_vtime(u64 dsq, u64 *vtime, u64 lead, struct fdl_dom_counts *doms)
{
	u32 n = env_nr_doms();
	bool sampled;

	if (!vtime)
		return 0;
	if (n <= 1)
		return env_dsq_head_vtime(dsq, vtime);
	return env_dom_next(dsq, env_dom(bpf_get_smp_processor_id()), n, doms, lead, vtime,
			    &sampled) >= 0;
}

/*
 * One peek per domain: the queue's clock must never pass a waiter in any of them. A global
 * function (verified once, on its own: inlined into the dispatcher, clang's code for the loop
 * failed verification).
 */
FDL_GLOBAL int env_min_head_vtime(u64 dsq, u64 *vtime, struct fdl_dom_counts *doms)
{
	u32 d, n = env_nr_doms();
	u64 v, best = 0;
	int found = 0;

	if (!vtime)
		return 0;
	env_for_doms(d, 0, n) {
		if (env_dom_in(doms, d) && env_dsq_head_vtime(fdl_dom_dsq(dsq, d), &v) &&
		    (!found || fdl_time_before(v, best))) {
			best = v;
			found = 1;
		}
	}
	if (found)
		*vtime = best;
	return found;
}

static __always_inline void env_kick(s32 cpu, bool preempt)
{
	scx_bpf_kick_cpu(cpu, preempt ? SCX_KICK_PREEMPT : SCX_KICK_IDLE);
}

static __always_inline s32 env_pick_idle(struct task_struct *p)
{
	return scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
}

/*
 * Some CPUs may not take p: its affinity, or migrate_disable() (which points cpus_ptr at one
 * CPU's mask, leaving cpus_mask and nr_cpus_allowed as they were).
 */
static __always_inline bool env_task_pinned(struct task_struct *p)
{
	return p->nr_cpus_allowed < tun.nr_cpu_ids || p->cpus_ptr != &p->cpus_mask;
}

static __always_inline bool env_task_allowed(struct task_struct *p, s32 cpu)
{
	/* Not pinned (env_task_pinned): allowed everywhere, no kfunc call. */
	if (!env_task_pinned(p))
		return true;
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

static __always_inline void env_set_slice(struct task_struct *p, u64 slice)
{
	scx_bpf_task_set_slice(p, slice);
}

static __always_inline u32 env_random(void)
{
	return bpf_get_prandom_u32();
}

static __always_inline void env_arm_timer(s32 cpu, u64 delay_ns)
{
	u32 key = cpu;
	struct fdl_timer *t = bpf_map_lookup_elem(&timers, &key);

	if (t)
		bpf_timer_start(&t->timer, delay_ns, 0);
}

static __always_inline void env_hold(struct task_struct *p, u64 slice, u64 flags)
{
	scx_bpf_dsq_insert(p, FDL_DSQ_HOLD, slice, flags);
}

static __always_inline void env_arm_hold(u64 delay_ns)
{
	u32 zero = 0;
	struct fdl_timer *t = bpf_map_lookup_elem(&hold_timer, &zero);

	if (t)
		bpf_timer_start(&t->timer, delay_ns, 0);
}

/*
 * With SCX_ENQ_LAST the CPU is on its way to idle: work queued now is not seen until something
 * reschedules it, so kick it (an idle kick lands once it is idle).
 */
static __always_inline void env_kick_self(void)
{
	scx_bpf_kick_cpu(bpf_get_smp_processor_id(), SCX_KICK_IDLE);
}

static __always_inline void env_destroy_dsq(u64 id)
{
	u32 d, n = env_nr_doms();

	bpf_for(d, 0, FDL_MAX_DOMS) {
		if (d >= n)
			break;
		scx_bpf_destroy_dsq(fdl_dom_dsq(id, d));
	}
}

/* Each domain's DSQ on its own NUMA node. */
static __always_inline s32 env_create_dsq(u64 id)
{
	u32 d, j, n = env_nr_doms();
	s32 ret = 0;

	bpf_for(d, 0, FDL_MAX_DOMS) {
		if (d >= n)
			break;
		ret = scx_bpf_create_dsq(fdl_dom_dsq(id, d), n > 1 ? tun.dom_node[d] : -1);
		if (ret) {
			/* None is left behind: the queue exists in every domain or not at all. */
			bpf_for(j, 0, FDL_MAX_DOMS) {
				if (j >= d)
					break;
				scx_bpf_destroy_dsq(fdl_dom_dsq(id, j));
			}
			break;
		}
	}
	return ret;
}

#endif /* FDL_NATIVE */

#ifdef FDL_NATIVE
/* Defined by the test, with the policy's check (the program builds it on move_unblocked_dom). */
static bool env_move_unblocked(u64 dsq, u64 lead, struct fdl_dom_counts *doms);
#endif

/* Count one event of this CPU: no atomics, the CPU is the only writer of its copy. */
#define stat_inc(field)						\
	do {							\
		struct fdl_cpu_stats *__s = env_stats();	\
		if (__s)					\
			__s->field++;				\
	} while (0)

#endif /* __FDL_ENV_H */
