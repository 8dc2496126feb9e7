/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The native tests' side of scheduler/bpf/env.h: a deterministic kernel for the policy headers.
 * A settable clock, cgroups and CPUs in arrays indexed by id, dispatch queues as small sorted
 * arrays, and records of every kick and timer, so a test can drive the very code the BPF program
 * runs and look at what it did.
 */
#ifndef __FDL_FAKE_ENV_H
#define __FDL_FAKE_ENV_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define FDL_ENQ_WAKEUP		1ULL
#define FDL_ENQ_LAST		4ULL

#define fdl_for(i, start, end)	for ((i) = (start); (i) < (end); (i)++)
#define fdl_for_few(i, start, end)	fdl_for(i, start, end)
/* The BPF headers' compiler barrier on a variable (the policy uses it to keep a test first). */
#define barrier_var(var)	asm volatile("" : "+r"(var))

#define FAKE_CPUS	4
#define FAKE_CGROUPS	64
#define FAKE_QLEN	64
#define FAKE_DSQS	8

/* A task as the fake kernel sees it. */
struct task_struct {
	int pid;
	unsigned allowed;	/* CPU bitmask; 0: all */
	u64 slice;
	u32 dom;		/* the domain it was queued in (env_insert_vtime) */
	u64 exec_ns;		/* its CPU time (env_task_exec): the test adds what it runs */
};

struct fake_dsq {
	u64 id;
	int n;
	struct task_struct *task[FAKE_QLEN];
	u64 vtime[FAKE_QLEN];
};

struct fake_env {
	u64 now;
	int cur_cpu;			/* the CPU the current callback runs on */
	struct fdl_cgroup cg[FAKE_CGROUPS];
	bool cg_present[FAKE_CGROUPS];
	struct fdl_cpu cpu[FAKE_CPUS];
	struct fdl_cpu_stats stats;
	struct fake_dsq dsq[FAKE_DSQS];
	struct fake_dsq local[FAKE_CPUS];
	bool idle[FAKE_CPUS];		/* env_pick_idle may claim it */
	int idle_kicks[FAKE_CPUS];
	int preempts[FAKE_CPUS];	/* env_kick(cpu, true): the running slice ended */
	bool timer_armed[FAKE_CPUS];
	u64 timer_at[FAKE_CPUS];
	u32 timer_fires[FAKE_CPUS];	/* deadline timers that fired (SCX_KICK_PREEMPT) */
	u32 timer_lapses[FAKE_CPUS];	/* deadline timers that fired after their slice ended: no kick */
	bool hold_armed;		/* the hold queue's timer */
	u64 hold_at;
	u32 rnd;
	struct fdl_scan scan;
	int queued_asks[FAKE_CGROUPS];	/* the kernel asked about a container queue's DSQs */
	int min_head_peeks;	/* env_min_head_vtime calls (a DSQ lookup each, in the kernel) */
	/*
	 * Domains: 0 is one. A queue stays one sorted array, each task marked with the domain it was
	 * queued in (tun.cpu_dom of the CPU it was placed for); takes and peeks see only the tasks
	 * of the domains counted non-empty (the policy's counts, fdl_queued_doms), as the program
	 * asks only those domains' DSQs: counts that miss work strand it.
	 */
	u32 nr_doms;
	u32 dom_inserts[2];		/* tasks queued in domains 0 and 1 */
	/*
	 * An interleaving: when mb_hook_at barriers have passed (counted from 1), env_mb() calls
	 * mb_hook once, as if another CPU ran it between the code before and after that barrier.
	 */
	void (*mb_hook)(void);
	int mb_hook_at;
	/*
	 * Another interleaving: env_queued_any() calls queued_any_hook once before it looks, as if
	 * an insert landed between the program's take and that look.
	 */
	void (*queued_any_hook)(void);
};

extern struct fake_env env;

static inline u64 env_now(void)
{
	return env.now;
}

static inline u64 env_task_exec(struct task_struct *p)
{
	return p->exec_ns;
}

static inline void env_mb(void)
{
	void (*hook)(void) = env.mb_hook;

	__sync_synchronize();
	if (hook && --env.mb_hook_at == 0) {
		env.mb_hook = NULL;
		hook();
	}
}

static inline struct fdl_cgroup *env_cgroup(u64 cgref)
{
	return cgref < FAKE_CGROUPS && env.cg_present[cgref] ? &env.cg[cgref] : NULL;
}

static inline u32 env_index(u32 i, u32 mask)
{
	return i & mask;
}

static inline struct fdl_cpu *env_cpu(s32 cpu)
{
	return cpu >= 0 && cpu < FAKE_CPUS ? &env.cpu[cpu] : NULL;
}

static inline struct fdl_cpu_stats *env_stats(void)
{
	return &env.stats;
}

static inline struct fdl_scan *env_scan(void)
{
	return &env.scan;
}

static inline u32 env_nr_doms(void)
{
	return env.nr_doms ?: 1;
}


/* The queue with this id, created on first use. */
static inline struct fake_dsq *fake_dsq(u64 id)
{
	int i;

	for (i = 0; i < FAKE_DSQS; i++)
		if (env.dsq[i].id == id)
			return &env.dsq[i];
	for (i = 0; i < FAKE_DSQS; i++)
		if (!env.dsq[i].id) {
			env.dsq[i].id = id;
			return &env.dsq[i];
		}
	fprintf(stderr, "fake_env: out of queues\n");
	return &env.dsq[0];
}

/* Insert keeping vtime order; equal vtimes keep their arrival order. */
static inline void fake_insert_at(struct fake_dsq *q, int at, struct task_struct *p, u64 vtime)
{
	int i;

	if (q->n >= FAKE_QLEN) {
		fprintf(stderr, "fake_env: queue full\n");
		return;
	}
	for (i = q->n; i > at; i--) {
		q->task[i] = q->task[i - 1];
		q->vtime[i] = q->vtime[i - 1];
	}
	q->task[at] = p;
	q->vtime[at] = vtime;
	q->n++;
}

/* Take the task at position at out of the queue. */
static inline struct task_struct *fake_remove_at(struct fake_dsq *q, int at)
{
	struct task_struct *p = q->task[at];
	int i;

	for (i = at + 1; i < q->n; i++) {
		q->task[i - 1] = q->task[i];
		q->vtime[i - 1] = q->vtime[i];
	}
	q->n--;
	return p;
}

static inline struct task_struct *fake_pop(struct fake_dsq *q)
{
	return q->n ? fake_remove_at(q, 0) : NULL;
}

static inline bool env_task_allowed(struct task_struct *p, s32 cpu)
{
	return !p->allowed || (p->allowed & (1u << cpu));
}

/* Some CPUs may not take p (env.h's, on the fake task's mask). */
static inline bool env_task_pinned(struct task_struct *p)
{
	return p->allowed != 0;
}

extern struct fdl_tunables tun;

/* The domain of a task placed for cpu (-1: the CPU the callback runs on). */
static inline u32 env_insert_dom(struct task_struct *p, s32 cpu)
{
	(void)p;
	if (env_nr_doms() <= 1)
		return 0;
	if (cpu < 0 || cpu >= FAKE_CPUS)
		cpu = env.cur_cpu;
	return tun.cpu_dom[cpu] % env_nr_doms();
}

/* Whether the task at position i of q is in a domain doms counts work in (NULL: every domain). */
static inline bool fake_in_doms(struct fake_dsq *q, int i, struct fdl_dom_counts *doms)
{
	return !doms || doms->nr[q->task[i]->dom & 63] > 0;
}

static inline void env_insert_vtime(struct task_struct *p, u64 dsq, u64 slice, u64 vtime, u64 flags,
				    u32 dom)
{
	struct fake_dsq *q = fake_dsq(dsq);
	int at = 0;

	(void)flags;
	while (at < q->n && !fdl_time_before(vtime, q->vtime[at]))
		at++;
	p->slice = slice;
	p->dom = dom;
	if (dom < 2)
		env.dom_inserts[dom]++;
	fake_insert_at(q, at, p, vtime);
}

/*
 * The first queued task this CPU may run, as the kernel's consume_dispatch_q() takes it, of the
 * domains in doms. In vtime order over all of them: lead (the program's sampled order across
 * domains) has nothing to compare.
 */
static inline bool env_move_to_local(u64 dsq, u64 lead, struct fdl_dom_counts *doms)
{
	struct fake_dsq *q = fake_dsq(dsq);
	int i;

	(void)lead;
	for (i = 0; i < q->n; i++) {
		if (!fake_in_doms(q, i, doms) || !env_task_allowed(q->task[i], env.cur_cpu))
			continue;
		fake_insert_at(&env.local[env.cur_cpu], env.local[env.cur_cpu].n, fake_remove_at(q, i), 0);
		return true;
	}
	return false;
}

/* Tasks in dsq (the tests' look at a queue; counted as an ask of the kernel in queued_asks). */
static inline s32 env_nr_queued(u64 dsq)
{
	if (dsq < FAKE_CGROUPS)
		env.queued_asks[dsq]++;
	return fake_dsq(dsq)->n;
}

/* Whether dsq holds work in the domains doms counts work in (NULL: all): their tasks. */
static inline s32 env_queued_any(u64 dsq, struct fdl_dom_counts *doms)
{
	void (*hook)(void) = env.queued_any_hook;
	struct fake_dsq *q = fake_dsq(dsq);
	s32 n = 0;
	int i;

	if (hook) {
		env.queued_any_hook = NULL;
		hook();
	}
	if (dsq < FAKE_CGROUPS)	/* the program asks each domain's DSQ (at most) */
		env.queued_asks[dsq] += env.nr_doms > 1 ? env.nr_doms : 1;
	for (i = 0; i < q->n; i++)
		n += fake_in_doms(q, i, doms);
	return n;
}

/* The tasks of domain dom in dsq. */
static inline s32 env_queued_dom(u64 dsq, u32 dom)
{
	struct fake_dsq *q = fake_dsq(dsq);
	s32 n = 0;
	int i;

	if (dsq < FAKE_CGROUPS)
		env.queued_asks[dsq]++;
	for (i = 0; i < q->n; i++)
		n += (env.nr_doms <= 1 || q->task[i]->dom == dom);
	return n;
}

/* The first task of the domains in doms (the least vtime: the fake keeps one order). */
static inline bool env_head_vtime(u64 dsq, u64 *vtime, u64 lead, struct fdl_dom_counts *doms)
{
	struct fake_dsq *q = fake_dsq(dsq);
	int i;

	(void)lead;
	for (i = 0; i < q->n; i++) {
		if (fake_in_doms(q, i, doms)) {
			*vtime = q->vtime[i];
			return true;
		}
	}
	return false;
}

static inline bool env_min_head_vtime(u64 dsq, u64 *vtime, struct fdl_dom_counts *doms)
{
	env.min_head_peeks++;
	return env_head_vtime(dsq, vtime, 0, doms);
}

static inline void env_kick(s32 cpu, bool preempt)
{
	if (preempt)
		env.preempts[cpu]++;
	else
		env.idle_kicks[cpu]++;
}

static inline s32 env_pick_idle(struct task_struct *p)
{
	int cpu;

	for (cpu = 0; cpu < FAKE_CPUS; cpu++)
		if (env.idle[cpu] && env_task_allowed(p, cpu)) {
			env.idle[cpu] = false;
			return cpu;
		}
	return -1;
}

static inline void env_set_slice(struct task_struct *p, u64 slice)
{
	p->slice = slice;
}

static inline u32 env_random(void)
{
	env.rnd = env.rnd * 1103515245u + 12345u;
	return env.rnd >> 8;
}

static inline void env_arm_timer(s32 cpu, u64 delay_ns)
{
	env.timer_armed[cpu] = true;
	env.timer_at[cpu] = env.now + delay_ns;
}

static inline void env_hold(struct task_struct *p, u64 slice, u64 flags)
{
	struct fake_dsq *q = fake_dsq(FDL_DSQ_HOLD);

	(void)flags;
	p->slice = slice;
	fake_insert_at(q, q->n, p, 0);
}

static inline void env_arm_hold(u64 delay_ns)
{
	env.hold_armed = true;
	env.hold_at = env.now + delay_ns;
}

static inline void env_kick_self(void)
{
	env.idle_kicks[env.cur_cpu]++;
}

static inline s32 env_create_dsq(u64 id)
{
	return fake_dsq(id) ? 0 : -12;	/* -ENOMEM */
}

/* Remove the task at position i of a queue. */
static inline struct task_struct *fake_remove(struct fake_dsq *q, int i)
{
	struct task_struct *p = q->task[i];

	for (; i + 1 < q->n; i++) {
		q->task[i] = q->task[i + 1];
		q->vtime[i] = q->vtime[i + 1];
	}
	q->n--;
	return p;
}

#endif /* __FDL_FAKE_ENV_H */
