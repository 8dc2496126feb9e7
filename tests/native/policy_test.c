// Native tests of the policy headers (scheduler/bpf/policy/): the code the BPF program runs, fed
// wake/run/sleep events through a fake kernel (fake_env.h) and a small simulator of CPUs, ticks
// and slices. Each scenario is one of the defects the deadline-tier rewrite fixed, written so that
// the old behaviour fails it. Build and run: tests/native/run.sh
#include <stdio.h>
#include <stdlib.h>

#include "policy/sched.h"

struct fake_env env;
struct fdl_state fdl;
struct fdl_tunables tun;

static int passed, failed;

#define CHECK(what, cond, ...)                                                               \
	do {                                                                                 \
		if (cond) {                                                                  \
			passed++;                                                            \
		} else {                                                                     \
			failed++;                                                            \
			printf("FAIL %s (%s:%d): ", what, __FILE__, __LINE__);               \
			printf(__VA_ARGS__);                                                 \
			printf("\n");                                                        \
		}                                                                            \
	} while (0)

#define MS 1000000ULL
#define US 1000ULL
#define NR_TASKS 16
#define NR_LATES 2048
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A task of the simulation: the fake kernel's view and the policy's record. */
struct task {
	struct task_struct p;
	struct fdl_task t;
	bool runnable;
	u64 ran_ns;
	u64 woken_at;		/* when it last woke (0: not waiting for its first run) */
	u64 max_delay_ns;	/* worst wake-up to running delay */
	u64 sum_delay_ns;	/* all wake-up to running delays, and how many */
	u64 nr_delays;
	u64 spin_ns;		/* periodic tasks: CPU time per wake-up (0: a hog) */
	u64 period_ns;		/* ... woken every period_ns */
	u64 next_wake;
	u64 spun;		/* CPU time since the last wake-up */
	u64 late_ns;		/* worst (end of spin - wake - spin): the probe's figure */
	u32 nr_lates;		/* ... and the first NR_LATES of them, for percentiles */
	u32 lates[NR_LATES];
	u64 wakes;
	u64 wake_t;		/* when it last woke */
	u64 stopped_at;		/* when it last left a CPU still runnable (0: it did not) */
	u64 max_off_ns;		/* the longest it was runnable and off every CPU after running */
};

static struct task tasks[NR_TASKS];
/*
 * How the simulation runs (reset() puts the defaults back): probe_wakes makes periodic tasks behave
 * as fdl-probe's workers (a worker still busy when its message thread wakes it is not woken again,
 * and the next wake-up is jitter_us later at most, at random); tick_ms is the kernel's tick (the VM
 * kernel's HZ=250 ticks every 4 ms), at which slices end and ops.tick runs.
 */
static bool probe_wakes;
static u64 jitter_us;
static u64 tick_ms = 1;
/* The simulation's step: 1 ms (what the tests below were written for), or finer. */
static u64 step_ns = MS;
/* What a context switch costs before the next task's ops.running (floor_all_busy): 0 none. */
static u64 switch_ns;
static struct task *running[FAKE_CPUS];
static int nr_cpus;
/* Called after every step of run_for: a study of one cell (a trace of who ran) hooks in here. */
static void (*step_hook)(void);
static int queued_count_errors;	/* check_queued_counts */
static bool queued_planted;

static struct task *task_of(struct task_struct *p)
{
	return (struct task *)((char *)p - __builtin_offsetof(struct task, p));
}

/* env.h's env_move_unblocked, as main.bpf.c defines it, over the fake queues. */
static bool env_move_unblocked(u64 dsq, u64 lead, struct fdl_dom_counts *doms)
{
	struct fake_dsq *q = fake_dsq(dsq), *hold = fake_dsq(FDL_DSQ_HOLD);
	struct task_struct *p;
	u64 at = 0, blocker;
	int i = 0;

	(void)lead;	/* one order over the domains */
	while (i < q->n) {
		if (!fake_in_doms(q, i, doms)) {
			i++;
			continue;
		}
		p = fake_remove(q, i);
		if ((blocker = fdl_bw_blocked(&task_of(p)->t, env.now, &at))) {
			fake_insert_at(hold, hold->n, p, 0);
			fdl_bw_held(&task_of(p)->t, blocker, env.now);
			fdl_hold_until(at, env.now);
			continue;
		}
		fake_insert_at(&env.local[env.cur_cpu], env.local[env.cur_cpu].n, p, 0);
		return true;
	}
	return false;
}

/* The hold timer fired: main.bpf.c's fdl_hold_fired over the fake queues. */
static void hold_fired(void)
{
	struct fake_dsq *hold = fake_dsq(FDL_DSQ_HOLD);
	u64 next = 0, at, queue, vtime;
	u32 slot = 0, dom;
	int i = 0;

	env.hold_armed = false;
	fdl.hold_next = 0;
	while (i < hold->n) {
		struct task_struct *p = hold->task[i];
		s32 cpu;

		if (!fdl_bw_release_task(&task_of(p)->t, env.now, &queue, &vtime, &slot, &at)) {
			if (!next || at < next)
				next = at;
			i++;
			continue;
		}
		fake_remove(hold, i);
		cpu = env_pick_idle(p);
		dom = env_insert_dom(p, cpu);
		fdl_queued_add(&task_of(p)->t, slot, dom, vtime, env_task_pinned(p));
		env_insert_vtime(p, queue, p->slice, vtime, 0, dom);
		if (cpu >= 0)
			env.idle_kicks[cpu]++;
	}
	if (next)
		fdl_hold_until(next, env.now);
}

/* A fresh machine of n CPUs, every CPU idle, the root cgroup tracked. */
static void reset(int n)
{
	memset(&env, 0, sizeof(env));
	memset(&fdl, 0, sizeof(fdl));
	memset(tasks, 0, sizeof(tasks));
	memset(running, 0, sizeof(running));
	nr_cpus = n;
	queued_planted = false;
	tun = (struct fdl_tunables){
		.slice_ns = 3 * MS, .min_slice_ns = 200 * US, .wakeup_lag_ns = 3 * MS,
		.starvation_ns = 1000 * MS, .fair_deadline_ns = 5 * MS, .fair_floor_permille = 50,
		.guarantee_window_ns = 100 * MS, .fair_preempt_ns = 20 * MS,
		.sibling_preempt_ns = 0, .slice_floor_ns = 0,
		.nr_cpus = n, .nr_cpu_ids = n,
	};
	for (int c = 0; c < n; c++)
		tun.online_cpu[c] = c;
	env.now = 1000 * MS;
	env.rnd = 1;
	probe_wakes = false;
	jitter_us = 0;
	tick_ms = 1;
	step_ns = MS;
	switch_ns = 0;
	srand(1);
	for (int c = 0; c < n; c++)
		env.idle[c] = true;
	fdl.fair.deadline_rr_ns = tun.fair_deadline_ns;
	fdl.fair.dl = env.now + tun.fair_deadline_ns;
	fdl.min_rr_ns = tun.fair_deadline_ns;
	env.cg_present[FDL_ROOT_CGREF] = true;
	env.cg[FDL_ROOT_CGREF] = (struct fdl_cgroup){ .weight = 100, .cpu_weight = 100 };
}

/* reset(4), the CPUs in two queue domains: 0 and 1 in domain 0, 2 and 3 in domain 1. */
static void reset_two_domains(void)
{
	reset(4);
	env.nr_doms = 2;
	tun.nr_doms = 2;
	tun.cpu_dom[2] = tun.cpu_dom[3] = 1;
	tun.dom_cpu[1] = 2;
}

/* A first-level cgroup (what ops.cgroup_init does), optionally a deadline container. */
static void add_cgroup(u64 cgref, u32 weight, u64 rr_ns, u64 wakeup_ns)
{
	env.cg_present[cgref] = true;
	env.cg[cgref] = (struct fdl_cgroup){
		.parent_cgref = FDL_ROOT_CGREF, .level = 1, .weight = weight, .cpu_weight = weight,
		.top_cgref = cgref, .has_dsq = 1,
	};
	fdl_slot_add(cgref);
	if (rr_ns)	/* what the fdl_set_params syscall program does */
		fdl_entity_set_params(&env.cg[cgref].ent, rr_ns, wakeup_ns, fdl_vdt(env.now));
}

static struct task *new_task(int i, u64 cgref)
{
	struct task *k = &tasks[i];

	k->p.pid = 100 + i;
	k->t.cgref = cgref;
	fdl_on_enable(&k->t, 100);
	return k;
}

/* A periodic task: spins spin_ns every period_ns, first woken at the next step. */
static struct task *periodic(int i, u64 cgref, u64 spin_ns, u64 period_ns)
{
	struct task *k = new_task(i, cgref);

	k->spin_ns = spin_ns;
	k->period_ns = period_ns;
	k->next_wake = env.now;
	return k;
}

/* A probe in cgroup cgref (tasks first, first+1): two workers that spin spin_ns every period_ns. */
static void probe_pair(int first, u64 cgref, u64 spin_ns, u64 period_ns)
{
	for (int i = first; i < first + 2; i++)
		periodic(i, cgref, spin_ns, period_ns);
}

/* Ten hackbench-like wakers in cgroup cgref (tasks first..first+9): 2 ms every 4 ms, 5 CPUs of demand. */
static void wakers(int first, u64 cgref)
{
	for (int i = first; i < first + 10; i++)
		periodic(i, cgref, 2 * MS, 4 * MS);
}

static int cmp_u32(const void *a, const void *b)
{
	return *(const u32 *)a < *(const u32 *)b ? -1 : *(const u32 *)a > *(const u32 *)b;
}

/* The pct-th percentile of the spin lateness of tasks first..first+n-1 (ns). */
static u64 pct_late(int first, int n, int pct)
{
	static u32 all[NR_TASKS * NR_LATES];
	u32 m = 0;

	for (int i = first; i < first + n; i++)
		for (u32 j = 0; j < tasks[i].nr_lates; j++)
			all[m++] = tasks[i].lates[j];
	if (!m)
		return 0;
	qsort(all, m, sizeof(all[0]), cmp_u32);
	return all[(u64)(m - 1) * pct / 100];
}

/* The longest stretch tasks first..first+n-1 were runnable but off every CPU after running. */
static u64 worst_off(int first, int n)
{
	u64 worst = 0;

	for (int i = first; i < first + n; i++)
		worst = tasks[i].max_off_ns > worst ? tasks[i].max_off_ns : worst;
	return worst;
}

/* The worst wake-up to running delay (late = false) or spin lateness (true) of tasks first..first+n-1. */
static u64 worst_of(int first, int n, bool late)
{
	u64 worst = 0;

	for (int i = first; i < first + n; i++) {
		u64 v = late ? tasks[i].late_ns : tasks[i].max_delay_ns;

		worst = v > worst ? v : worst;
	}
	return worst;
}

static void start(int cpu, struct task *k)
{
	running[cpu] = k;
	env.cur_cpu = cpu;
	/*
	 * The switch's cost: the clock moved on by ops.running, but the kernel counts it to the task
	 * that follows (its exec_start was taken before the dispatch), at its next update.
	 */
	env.now += switch_ns;
	fdl_on_running(&k->p, &k->t, cpu);
	k->p.exec_ns += switch_ns;
	k->ran_ns += switch_ns;
	if (k->stopped_at && env.now - k->stopped_at > k->max_off_ns)
		k->max_off_ns = env.now - k->stopped_at;
	k->stopped_at = 0;
	if (k->woken_at) {
		u64 d = env.now - k->woken_at;

		if (d > k->max_delay_ns)
			k->max_delay_ns = d;
		k->sum_delay_ns += d;
		k->nr_delays++;
		k->woken_at = 0;
	}
}

/*
 * The CPU's running task stops (runnable: preempted or its slice ended); the CPU then takes its
 * local queue's head, or asks the policy, as the kernel does.
 */
static void reschedule(int cpu)
{
	struct task *prev, *next;
	struct task_struct *p;

	if (cpu < 0 || cpu >= FAKE_CPUS)	/* cannot happen; gcc's bounds check cannot tell */
		return;
	prev = running[cpu];
	env.cur_cpu = cpu;
	if (!env.local[cpu].n)
		fdl_on_dispatch(cpu, prev ? &prev->p : NULL, prev && prev->runnable ? &prev->t : NULL);
	if (prev && prev->runnable && !env.local[cpu].n && prev->p.slice)
		return;	/* it keeps the CPU */
	if (prev) {
		fdl_on_stopping(&prev->p, &prev->t, cpu, !prev->runnable);
		running[cpu] = NULL;
		prev->stopped_at = prev->runnable ? env.now : 0;
		if (prev->runnable)	/* SCX_OPS_ENQ_LAST: nothing else for this CPU */
			fdl_on_enqueue(&prev->p, &prev->t, env.local[cpu].n ? 0 : FDL_ENQ_LAST);
		else
			fdl_on_quiescent(&prev->t);
	}
	p = fake_pop(&env.local[cpu]);
	if (!p) {
		env.idle[cpu] = true;
		fdl_on_idle(cpu);	/* ops.update_idle, after the kernel set the idle bit */
		return;
	}
	env.idle[cpu] = false;
	next = task_of(p);
	start(cpu, next);
}

/* The task wakes on `cpu`'s behalf: select_cpu (an idle CPU takes it at once) or enqueue. */
static void wake(struct task *k)
{
	int cpu;

	k->runnable = true;
	k->woken_at = env.now;
	k->wake_t = env.now;
	k->spun = 0;
	k->wakes++;
	fdl_on_runnable(&k->t, 100, true);
	k->t.enqueued_at = env.now;
	u64 at;
	for (cpu = 0; cpu < nr_cpus && !fdl_bw_blocked(&k->t, env.now, &at); cpu++)
		if (env.idle[cpu] && !running[cpu] && env_task_allowed(&k->p, cpu) &&
		    fdl_idle_free(cpu, env.now)) {	/* select_cpu */
			env.idle[cpu] = false;
			k->p.slice = tun.slice_ns;	/* what fdl_select_cpu inserts it with */
			fdl_on_select_idle(&k->t, cpu, env.now);
			start(cpu, k);
			return;
		}
	int before[FAKE_CPUS];
	for (cpu = 0; cpu < nr_cpus; cpu++)
		before[cpu] = env.preempts[cpu];
	fdl_on_enqueue(&k->p, &k->t, FDL_ENQ_WAKEUP);
	for (cpu = 0; cpu < nr_cpus; cpu++)	/* SCX_KICK_PREEMPT: the victim reschedules at once */
		if (env.preempts[cpu] != before[cpu] && running[cpu]) {
			running[cpu]->p.slice = 0;
			reschedule(cpu);
		}
}

/* The task running on cpu blocks. */
static void sleep_on(int cpu)
{
	running[cpu]->runnable = false;
	reschedule(cpu);
}

/* Advance the clock by us microseconds, one tick of 1 ms at most at a time. */
/*
 * The policy's counts of queued tasks (fdl_queued_add) against the fake queues, after every step of
 * run_for: a count is never below what its queue holds (a stall: the scan would skip the queue),
 * and it is exactly the tasks that count themselves there (none lost or counted twice). Broken
 * (queued_count_errors) unless a test plants work behind the policy's back (queued_planted).
 */
static void check_queued_counts(void)
{
	u32 s, c, d, nd = env_nr_doms();
	s64 n;

	if (queued_planted)
		return;
	for (int i = 0; i < FAKE_DSQS; i++) {
		u64 id = env.dsq[i].id;

		if (!id || id == FDL_DSQ_HOLD)
			continue;
		s = id == FDL_DSQ_FAIR ? FDL_QUEUED_FAIR : id < FAKE_CGROUPS ? env.cg[id].cont_slot : 0;
		if (s && *fdl_queued_nr(s) < env.dsq[i].n) {
			if (!queued_count_errors++)
				fprintf(stderr, "queue %llu: counted %lld, holds %d\n",
					(unsigned long long)id, (long long)*fdl_queued_nr(s), env.dsq[i].n);
		}
		/* Each domain's count covers its tasks, and so do the counts the takes are given. */
		for (d = 0; s && nd > 1 && d < nd; d++) {
			c = 0;
			for (int j = 0; j < env.dsq[i].n; j++)
				c += env.dsq[i].task[j]->dom == d;
			if (c && (fdl_queued_of(s)->dom.nr[d] < (s32)c ||
				  (fdl_queued_doms(s) && fdl_queued_doms(s)->nr[d] <= 0))) {
				if (!queued_count_errors++)
					fprintf(stderr, "queue %llu domain %u: counted %d, holds %u, "
						"counts given %d\n", (unsigned long long)id, d,
						fdl_queued_of(s)->dom.nr[d], c, !!fdl_queued_doms(s));
			}
		}
	}
	for (s = 1; s <= FDL_QUEUED_FAIR; s++) {
		c = 0;
		for (int i = 0; i < NR_TASKS; i++)
			c += tasks[i].t.queued_slot == s;
		if ((n = *fdl_queued_nr(s)) != (s64)c) {
			if (!queued_count_errors++)
				fprintf(stderr, "slot %u: counted %lld, %u tasks count there\n", s,
					(long long)n, c);
		}
		for (d = 0; nd > 1 && d < FDL_MAX_DOMS; d++) {
			c = 0;
			for (int i = 0; i < NR_TASKS; i++)
				c += tasks[i].t.queued_slot == s && tasks[i].t.queued_dom == d;
			if (fdl_queued_of(s)->dom.nr[d] != (s32)c && !queued_count_errors++)
				fprintf(stderr, "slot %u domain %u: counted %d, %u tasks count there\n",
					s, d, fdl_queued_of(s)->dom.nr[d], c);
		}
	}
}

static void run_for(u64 ns)
{
	while (ns) {
		u64 step = ns < step_ns ? ns : step_ns;
		bool tick;
		int cpu;

		env.now += step;
		ns -= step;
		/* At 1 ms steps every step in a tick's millisecond is one (as the tests expect). */
		tick = step_ns == MS ? (env.now / MS) % tick_ms == 0 : env.now % (tick_ms * MS) < step;
		if (env.hold_armed && !fdl_time_before(env.now, env.hold_at))
			hold_fired();
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			struct task *k = running[cpu];
			bool fired = false;

			/*
			 * A deadline timer fired: unless its slice lapsed (fdl_timer_due, as
			 * main.bpf.c's callback), SCX_KICK_PREEMPT, the CPU reschedules at once.
			 */
			if (env.timer_armed[cpu] && !fdl_time_before(env.now, env.timer_at[cpu])) {
				env.timer_armed[cpu] = false;
				if (fdl_timer_due(cpu)) {
					env.timer_fires[cpu]++;
					fired = k != NULL;
				} else {
					env.timer_lapses[cpu]++;
				}
			}
			if (!k) {
				if (env.local[cpu].n || env.idle_kicks[cpu])
					reschedule(cpu);
				continue;
			}
			k->ran_ns += step;
			k->p.exec_ns += step;
			k->spun += step;
			env.cur_cpu = cpu;
			if (tick)
				fdl_on_tick(&k->p, &k->t, cpu);
			if (k->spin_ns && k->spun >= k->spin_ns) {
				u64 late = env.now - k->wake_t - k->spin_ns;

				if (late > k->late_ns)
					k->late_ns = late;
				if (k->nr_lates < NR_LATES)
					k->lates[k->nr_lates++] = late;
				sleep_on(cpu);
				continue;
			}
			k->p.slice = k->p.slice > step ? k->p.slice - step : 0;
			if (fired)
				k->p.slice = 0;
			if (!k->p.slice && (fired || tick))
				reschedule(cpu);
		}
		for (int i = 0; i < NR_TASKS; i++) {	/* periodic wake-ups */
			struct task *k = &tasks[i];

			if (probe_wakes && k->period_ns && !fdl_time_before(env.now, k->next_wake)) {
				if (!k->runnable)
					wake(k);
				k->next_wake += k->period_ns + (jitter_us ? (u64)(rand() % jitter_us) * US : 0);
			} else if (k->period_ns && !k->runnable && !fdl_time_before(env.now, k->next_wake)) {
				wake(k);
				k->next_wake += k->period_ns;
			}
		}
		for (cpu = 0; cpu < nr_cpus; cpu++)	/* kicked idle CPUs look for work */
			if (!running[cpu] && env.idle_kicks[cpu]) {
				env.idle_kicks[cpu] = 0;
				reschedule(cpu);
			}
		check_queued_counts();
		if (step_hook)
			step_hook();
	}
}

static u64 vdt(void)
{
	return fdl_vdt(env.now);
}

/* Defect 1: a task that wakes onto an idle CPU never passes enqueue; its container must still
 * start a new bucket, and nothing that simply slept is counted late. */
static void test_idle_wake_sets_the_deadline(void)
{
	struct task *a, *b, *h;
	struct fdl_entity *c;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	add_cgroup(20, 100, 0, 0);
	a = new_task(0, 10);
	b = new_task(1, 10);
	h = new_task(2, 20);
	c = &env.cg[10].ent;

	wake(a);		/* onto idle CPU 0 */
	run_for(1 * MS);
	sleep_on(0);
	run_for(10000 * MS);	/* a long sleep: the old deadline is 10 s stale */
	wake(h);		/* a fair hog takes CPU 0 */
	wake(a);		/* and a goes straight to idle CPU 1 */
	CHECK("a container woken through an idle CPU gets vdt + deadline_wakeup",
	      c->dl == vdt() + 2 * MS, "dl - vdt = %lld ns", (long long)(c->dl - vdt()));
	run_for(1 * MS);
	wake(b);		/* no idle CPU: b queues (or preempts the fair hog) */
	run_for(10 * MS);
	CHECK("no miss counted for tasks that simply slept", c->nr_misses == 0,
	      "%llu misses", c->nr_misses);
	CHECK("every start after a wait is counted, through an idle CPU too", c->nr_picks >= 3,
	      "%llu starts", c->nr_picks);
	/* a's two wake-ups and b's; the rest are the busy tasks' starts after a slice's end. */
	CHECK("three of them are wake-ups' starts, none missed", c->nr_wake_starts == 3 &&
	      c->nr_wake_misses == 0, "%llu of %llu, %llu missed", c->nr_wake_starts, c->nr_picks,
	      c->nr_wake_misses);
	CHECK("virtual deadline time was not moved back", fdl.vdt_lag == 0, "vdt_lag %llu",
	      fdl.vdt_lag);
	CHECK("b ran within its deadline_wakeup", b->ran_ns > 0 && b->max_delay_ns <= 2 * MS,
	      "ran %llu ns, waited %llu ns", b->ran_ns, b->max_delay_ns);
}

/*
 * The worst lateness of a measurement window (`scx_fdl dump --new-window`): a benchmark reads the
 * worst of its own measurement, not the worst since the start (its workload's start-up included),
 * and a window that has ended keeps its figures while the workload exits.
 */
static void test_lateness_window(void)
{
	struct fdl_entity *c;
	u64 v0, w;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 0);
	c = &env.cg[10].ent;
	v0 = vdt();
	fdl_entity_count(c, v0 - 3 * MS, v0, 5 * MS, true, 101);	/* 3 ms late, before any window */
	CHECK("without a window begun, the window is since the start",
	      c->win_gen == 0 && c->win_late.late_ns == 3 * MS && c->win_late.pid == 101 && c->win_late.woke == 1,
	      "gen %llu worst %llu pid %u", c->win_gen, c->win_late.late_ns, c->win_late.pid);
	w = fdl_late_window_begin(10 * MS, env.now);
	CHECK("a window begun has the next number", w == 1 && fdl.late_window == 1, "window %llu", w);
	fdl_entity_count(c, v0 - 1 * MS, v0, 5 * MS, false, 102);	/* 1 ms late, in the window */
	CHECK("the window's worst is its own, the worst since the start stays",
	      c->win_gen == 1 && c->win_late.late_ns == 1 * MS && c->win_late.pid == 102 && c->win_late.woke == 0 &&
	      c->win_late.wait_ns == 5 * MS && c->max_late.late_ns == 3 * MS && c->max_late.pid == 101,
	      "gen %llu worst %llu pid %u; since the start %llu pid %u", c->win_gen, c->win_late.late_ns,
	      c->win_late.pid, c->max_late.late_ns, c->max_late.pid);
	env.now += 11 * MS;	/* past the window's end */
	fdl_entity_count(c, v0 - 2 * MS, v0, 5 * MS, true, 103);
	CHECK("a window that ended keeps its figures; the miss still counts",
	      c->win_late.late_ns == 1 * MS && c->win_late.pid == 102 && c->nr_misses == 3,
	      "worst %llu pid %u misses %llu", c->win_late.late_ns, c->win_late.pid, c->nr_misses);
	w = fdl_late_window_begin(0, env.now);	/* until the next one */
	fdl_entity_count(c, v0 - MS / 2, v0, 5 * MS, true, 104);
	CHECK("a window without an end counts from its first miss",
	      w == 2 && c->win_gen == 2 && c->win_late.late_ns == MS / 2 && c->win_late.pid == 104,
	      "window %llu gen %llu worst %llu pid %u", w, c->win_gen, c->win_late.late_ns, c->win_late.pid);
}

/* Defect 2: a miss moves vdt back once (compare-and-swap), by the RFC's step with the smallest
 * rr, and halves the spread of the deadlines. */
/*
 * A waker reads its clock, then another CPU's record, which that CPU wrote a moment later from its
 * own clock (a task started there): the record's times stand after the waker's now. Each CPU's
 * clock is its run queue's, read when the queue was last locked, so this is the common case, not a
 * skew. The plain difference wrapped: the record's key filled by about 2^64 ns of running (within
 * the guarantee, vdt + rr instead of its deadline; at other bandwidths, anywhere), its work taken
 * for CPU-bound (a burst of 2^64 ns), and a start's wait counted as the histogram's longest.
 */
static void test_cpu_record_written_after_the_readers_clock(void)
{
	struct fdl_cpu *cc;
	u64 v, dl, now;

	reset(2);
	now = env.now;
	v = vdt();
	dl = v + 500 * US;
	cc = env_cpu(1);
	fdl_cpu_set(cc, 10, 10, dl, now + 1 * US, FDL_SHARE_ONE, 4 * MS, 50 * MS);
	CHECK("a record begun after the reader's now: its key is its deadline",
	      fdl_cpu_dl(cc, now, v) == fdl_order_key(dl, v, 4 * MS, 1), "key - vdt %lld, want %lld",
	      (long long)(fdl_cpu_dl(cc, now, v) - v), (long long)(dl - v));
	fdl_cpu_set(cc, 10, 10, dl, now + 1 * US, 2048, 4 * MS, 0);
	CHECK("... at a small bandwidth, beyond the guarantee, too",
	      fdl_cpu_dl(cc, now, v) == fdl_order_key(dl, v, 4 * MS, 0), "key - vdt %lld",
	      (long long)(fdl_cpu_dl(cc, now, v) - v));
	fdl_cpu_burst(cc, now + 1 * US, 0, 0, 0);
	CHECK("work that started after the reader's now has run nothing", fdl_cpu_burst_at(cc, now) == 0 &&
	      !fdl_cpu_bound(cc, now), "burst %llu", fdl_cpu_burst_at(cc, now));
	CHECK("a start's wait from a waker's later clock is none", fdl_since(now, now + 1 * US) == 0 &&
	      fdl_since(now + 3 * US, now) == 3 * US, "%llu", fdl_since(now, now + 1 * US));
}

/*
 * Budgets looked at often: every CPU's scan, wake-up, charge and start reads a guarantee's
 * budget, each read earning the stretch since the last. Each dropped the fraction of a
 * nanosecond its product left: read every 100 ns (a machine of many CPUs), 0.05 CPU earned 80 %
 * of its rate and 100 shares 92 %, and the container fell out of its guarantee early.
 */
static void test_budget_read_often_earns_its_rate(void)
{
	static const u64 rates[] = { FDL_SHARE_ONE / 20, 100 * FDL_SHARE_ONE / 1024, FDL_SHARE_ONE / 1024 };
	struct fdl_entity *e;
	u64 t0, want;
	s64 got = 0;

	for (u32 i = 0; i < ARRAY_SIZE(rates); i++) {
		reset(2);
		add_cgroup(10, 100, 4 * MS, 0);
		e = &env.cg[10].ent;
		e->budget_rate = rates[i];
		e->budget_ns = 0;
		e->budget_at = t0 = env.now;
		for (u64 t = t0; t <= t0 + 50 * MS; t += 100)
			got = fdl_entity_budget(e, t);
		want = (50 * MS * rates[i]) >> FDL_SHARE_SHIFT;
		/* Less by at most 0.1 % dropped and a stretch not yet taken (under FDL_EARN_MIN_NS). */
		CHECK("a budget read every 100 ns earns its rate",
		      got <= (s64)want && got + (s64)(FDL_EARN_MIN_NS + want / 1000) >= (s64)want,
		      "rate %llu/2^20: %lld ns of %llu", rates[i], got, want);
	}
}

/*
 * An entity not looked at while three misses halved the spread (its work all ran, none queued)
 * catches up with all three: one halving for any number missed left it 60 ms ahead where three
 * give 15, an overrun key behind everyone in exactly the overload the rule is for.
 */
static void test_entity_catches_up_with_every_halving(void)
{
	struct fdl_entity *e;
	u64 v;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 0);
	e = &env.cg[10].ent;
	v = vdt();
	e->dl = v + 120 * MS;
	e->spread_gen = fdl.spread_gen;
	fdl.spread_gen += 3;
	fdl.spread_vdt = v;
	fdl_entity_refresh(e, v);
	CHECK("three halvings missed, three applied", e->dl == v + 15 * MS && e->spread_gen == fdl.spread_gen,
	      "dl - vdt %lld ms", (long long)(e->dl - v) / (long long)MS);
}

/* Fair work's picks are judged against its key, whether or not a guarantee ever gave it a budget. */
static void test_fair_picks_are_judged_with_a_budget_too(void)
{
	u64 v;

	reset(2);
	fdl.fair.budget_rate = FDL_SHARE_ONE;	/* as fdl_fair_set_rate gives it beside a guarantee */
	v = vdt();
	fdl.fair.dl = v - 2 * MS;
	fdl_entity_picked(&fdl.fair, fdl_fair_order(v), env.now);
	CHECK("fair work picked 2 ms after its deadline is a miss", fdl.fair.nr_misses == 1 &&
	      fdl.fair.max_late.late_ns == 2 * MS, "misses %llu late %llu", fdl.fair.nr_misses,
	      fdl.fair.max_late.late_ns);
}

static void test_miss_moves_vdt_once_and_halves_the_spread(void)
{
	struct fdl_entity *c1, *c2;
	u64 v0, dl1, v1;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 0);
	add_cgroup(11, 100, 20 * MS, 0);
	c1 = &env.cg[10].ent;
	c2 = &env.cg[11].ent;
	fdl.min_rr_ns = 4 * MS;
	v0 = vdt();
	c1->dl = dl1 = v0 - 1 * MS;	/* late by 1 ms */
	c2->dl = v0 + 18 * MS;

	fdl_entity_count(c1, dl1, v0, 3 * MS, true, 101);	/* a wake-up's start 1 ms late, after 3 ms (fdl_on_running) */
	/* Picked at its order key: without a guarantee, in the second tier (fdl_entity_order). */
	fdl_entity_picked(c1, fdl_tier_key(dl1, 0), env.now);
	v1 = vdt();
	CHECK("a late start is a miss", c1->nr_misses == 1 && c1->max_late.late_ns == 1 * MS,
	      "misses %llu lateness %llu", c1->nr_misses, c1->max_late.late_ns);
	CHECK("the worst lateness names its start: task, wait, a wake-up's",
	      c1->max_late.pid == 101 && c1->max_late.wait_ns == 3 * MS && c1->max_late.woke == 1,
	      "pid %u wait %llu woke %u", c1->max_late.pid, c1->max_late.wait_ns, c1->max_late.woke);
	/* 1 ms = 1000 us: bucket floor(log2(1000)) + 1 = 10, which holds [512, 1024) us. */
	CHECK("the miss is counted by its lateness", c1->late_hist[10] == 1 && c1->late_hist[9] == 0 &&
	      c1->late_hist[11] == 0, "buckets 9..11: %llu %llu %llu", c1->late_hist[9], c1->late_hist[10],
	      c1->late_hist[11]);
	/* A deadline 9 ms behind vdt, met by a start that waited 2 ms: a miss, 2 ms late (its own wait). */
	fdl_entity_count(c1, v0 - 9 * MS, v0, 2 * MS, false, 102);	/* a resumption */
	CHECK("a wake-up's start and its miss are counted apart, a resumption's not",
	      c1->nr_picks == 2 && c1->nr_wake_starts == 1 && c1->nr_wake_misses == 1,
	      "starts %llu, of wake-ups %llu, missed %llu", c1->nr_picks, c1->nr_wake_starts,
	      c1->nr_wake_misses);
	CHECK("a start is late by at most its own wait", c1->nr_misses == 2 && c1->max_late.late_ns == 2 * MS &&
	      c1->late_hist[11] == 1 && c1->late_sum_ns == 3 * MS, "misses %llu worst %llu sum %llu",
	      c1->nr_misses, c1->max_late.late_ns, c1->late_sum_ns);
	CHECK("a new worst names its own start", c1->max_late.pid == 102 && c1->max_late.wait_ns == 2 * MS &&
	      c1->max_late.woke == 0, "pid %u wait %llu woke %u", c1->max_late.pid, c1->max_late.wait_ns,
	      c1->max_late.woke);
	fdl_entity_count(c1, v0 - 1 * MS, v0, 1 * MS, true, 103);	/* less late: not the worst */
	CHECK("a start less late leaves the worst's task", c1->max_late.pid == 102 && c1->max_late.late_ns == 2 * MS,
	      "pid %u worst %llu", c1->max_late.pid, c1->max_late.late_ns);
	CHECK("vdt moved back to min_rr/4 before the missed deadline", v1 == dl1 - 1 * MS,
	      "vdt - dl = %lld", (long long)(v1 - dl1));
	fdl_miss(dl1, env.now);	/* a second CPU seeing the same miss */
	CHECK("the same miss moves vdt only once", vdt() == v1 && fdl.counters.nr_lag_steps == 1,
	      "steps %llu", fdl.counters.nr_lag_steps);
	CHECK("the spread is halved around the new vdt",
	      fdl_entity_key(c2, v1) == v1 + (v0 + 18 * MS - v1) / 2, "dl - vdt = %lld",
	      (long long)(c2->dl - v1));
	CHECK("an entity catches up with a halving only once", fdl_entity_key(c2, v1) == c2->dl &&
	      c2->spread_gen == fdl.spread_gen, "gen %llu/%llu", c2->spread_gen, fdl.spread_gen);
	fdl_entity_count(c2, fdl_entity_key(c2, vdt()), vdt(), 1 * MS, true, 104);
	CHECK("right after a miss nobody is late", c2->nr_misses == 0, "%llu", c2->nr_misses);
}

/* Defect 2 in motion: deadlines below what the machine can keep (three 1 ms containers with two
 * hogs each, and fair hogs, on 2 CPUs at 1 ms ticks). Everyone progresses, lateness is spread,
 * each step of vdt_lag is bounded by the lateness it answers, and vdt never runs backwards. */
static void test_overcommit_shares_lateness(void)
{
	int i;
	u64 v0, t0;

	reset(2);
	for (i = 0; i < 3; i++)
		add_cgroup(10 + i, 100, 1 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	for (i = 0; i < 8; i++)
		wake(new_task(i, i < 6 ? 10 + i / 2 : 20));
	v0 = vdt();
	t0 = env.now;
	run_for(2000 * MS);
	for (i = 0; i < 3; i++) {
		u64 got = tasks[2 * i].ran_ns + tasks[2 * i + 1].ran_ns;

		CHECK("each overcommitted container gets a fair part (>= 0.3 CPU of 2)",
		      got >= 600 * MS, "container %d got %llu ms of 2000", i, got / MS);
	}
	CHECK("fair work keeps at least its floor (5 % of 2 CPUs)",
	      tasks[6].ran_ns + tasks[7].ran_ns >= 200 * MS, "fair got %llu ms",
	      (tasks[6].ran_ns + tasks[7].ran_ns) / MS);
	CHECK("vdt never runs backwards over the run", fdl_time_before(v0, vdt()),
	      "vdt advanced %lld ms in %llu ms", (long long)(vdt() - v0) / (long long)MS,
	      (env.now - t0) / MS);
	u64 worst = 0;
	for (i = 0; i < 3; i++)
		worst = fdl_max(worst, env.cg[10 + i].ent.max_late.late_ns);
	worst = fdl_max(worst, fdl.fair.max_late.late_ns);
	CHECK("vdt_lag grew by at most (worst lateness + margin) per step",
	      fdl.vdt_lag <= fdl.counters.nr_lag_steps * (worst + 1 * MS),
	      "lag %llu ms over %llu steps, worst lateness %llu us", fdl.vdt_lag / MS,
	      fdl.counters.nr_lag_steps, worst / US);
	CHECK("worst lateness stays within a few deadlines", worst <= 5 * MS,
	      "worst %llu us", worst / US);
	for (i = 0; i < 3; i++)
		CHECK("misses are spread over the containers", env.cg[10 + i].ent.nr_picks > 20,
		      "container %d: %llu picks", i, env.cg[10 + i].ent.nr_picks);
	/* Hogs wake once: every later start is a resumption, not a wake-up's start. */
	for (i = 0; i < 3; i++)
		CHECK("a hog's resumptions are not counted as wake-ups",
		      env.cg[10 + i].ent.nr_wake_starts <= 2 &&
		      env.cg[10 + i].ent.nr_wake_misses <= env.cg[10 + i].ent.nr_wake_starts,
		      "container %d: %llu wake-up starts (%llu missed) of %llu", i,
		      env.cg[10 + i].ent.nr_wake_starts, env.cg[10 + i].ent.nr_wake_misses,
		      env.cg[10 + i].ent.nr_picks);
}

/* Defect 4: a woken task goes before a busy member of its own container (vtime order within
 * the container's own queue), not in a tie with it. */
static void test_woken_task_beats_busy_sibling(void)
{
	struct task *h1, *h2, *w;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 0);
	h1 = new_task(0, 10);
	h2 = new_task(1, 10);
	w = new_task(2, 10);
	wake(h1);
	wake(h2);
	run_for(500 * MS);	/* both CPUs busy with the container's hogs */
	wake(w);
	CHECK("a member of the running container does not preempt its siblings",
	      env.preempts[0] + env.preempts[1] == 0, "%d preemptions",
	      env.preempts[0] + env.preempts[1]);
	run_for(4 * MS);
	CHECK("the woken member ran within one slice", w->ran_ns > 0 && w->max_delay_ns <= 3 * MS,
	      "ran %llu ns, waited %llu us", w->ran_ns, w->max_delay_ns / US);

	/* Nor when the woken member claims a CPU as fair work (fdl_fair_claim). */
	reset(1);
	add_cgroup(11, 100, 20 * MS, 0);
	h1 = new_task(0, 11);
	env.cg[11].cvtime = fdl.cvtime_now + 1000 * MS;	/* ahead: h1 runs by its deadline */
	wake(h1);
	env.cg[11].cvtime = fdl.cvtime_now;		/* back at the front of the fair order */
	w = new_task(1, 11);
	wake(w);
	CHECK("a member claiming a CPU as fair work does not preempt its sibling either",
	      env.preempts[0] == 0, "%d preemptions", env.preempts[0]);
}

static void grant(u64 cgref, u64 milli_cpus);

/*
 * A container within its guarantee whose deadline has passed keeps its deadline's rights, however
 * late and however far ahead of the fair order it stands: the latest work within a guarantee is
 * the most urgent. (A late key compared unsigned read as a tier back, and the scan left the
 * container to the fair order: a 1 ms container waited 93 ms beside hackbench.) Beyond its
 * guarantee, the same late deadline competes only near the front of the fair order.
 */
static void test_late_container_within_guarantee_competes(void)
{
	u64 v, key;

	reset(2);
	add_cgroup(10, 100, 1 * MS, 0);
	grant(10, 500);
	env.cg[10].cvtime = fdl.cvtime_now + 1000 * MS;	/* ahead of the fair order */
	v = vdt();
	env.cg[10].ent.dl = v - 93 * MS;			/* 93 ms late */
	key = fdl_entity_order(&env.cg[10].ent, env.now, v);
	CHECK("a late container within its guarantee competes by its deadline",
	      key == v - 93 * MS && fdl_may_compete(10, key, v), "key - vdt %lld, competes %d",
	      (long long)(key - v), fdl_may_compete(10, key, v));
	grant(10, 0);
	key = fdl_entity_order(&env.cg[10].ent, env.now, v);
	CHECK("beyond a guarantee, the same late deadline ahead of the fair order does not",
	      !fdl_may_compete(10, key, v), "key - vdt %lld", (long long)(key - v));
}

/*
 * A slice that ends inside a tick. sched_ext ends a slice only at the tick (4 ms apart on a
 * HZ=250 kernel): work whose slice a competing deadline cut to a fraction of a tick ran on to
 * the tick, and the deadline it was cut for was missed by the rest of the tick. One CPU, a fair
 * hog; a 2 ms and a 3 ms container (within their guarantees) wake together: the 2 ms one runs
 * first and must hand over where its deadline passes the 3 ms one's, about 1 ms later.
 */
static void test_slice_ends_inside_a_tick(void)
{
	struct task *b;

	reset(1);
	tick_ms = 4;
	add_cgroup(10, 100, 2 * MS, 0);
	add_cgroup(11, 100, 3 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	grant(10, 400);
	grant(11, 300);
	wake(new_task(2, 20));
	periodic(0, 10, 6 * MS, 20 * MS)->next_wake = env.now + 2 * MS;
	b = periodic(1, 11, 1 * MS, 20 * MS);
	b->next_wake = env.now + 2 * MS;
	run_for(2000 * MS);
	printf("slice inside a tick: 3 ms container worst delay %llu us, %llu of %llu starts late, "
	       "worst by %llu us; %u timer preemptions\n", b->max_delay_ns / US,
	       env.cg[11].ent.nr_misses, env.cg[11].ent.nr_picks,
	       env.cg[11].ent.max_late.late_ns / US, env.timer_fires[0]);
	CHECK("the 3 ms container starts within its deadline, not at the next tick",
	      b->nr_delays > 50 && b->max_delay_ns <= 3 * MS && env.cg[11].ent.nr_misses == 0,
	      "%llu wake-ups, worst delay %llu us, %llu late", b->nr_delays, b->max_delay_ns / US,
	      env.cg[11].ent.nr_misses);

	/*
	 * The same at a dispatch: a 2 ms and a 2.5 ms container wait behind a 1 ms one, which
	 * sleeps half-way between ticks; the dispatcher runs the 2 ms one with a slice that ends
	 * where its deadline passes the 2.5 ms one's, a fraction of a millisecond later.
	 */
	reset(1);
	tick_ms = 4;
	add_cgroup(10, 100, 2 * MS, 0);
	add_cgroup(11, 100, 2500 * US, 0);
	add_cgroup(12, 100, 1 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	grant(10, 300);
	grant(11, 200);
	grant(12, 200);
	wake(new_task(3, 20));
	periodic(2, 12, 2 * MS, 20 * MS)->next_wake = env.now + 4 * MS;	/* at a tick */
	periodic(0, 10, 6 * MS, 20 * MS)->next_wake = env.now + 5 * MS;
	b = periodic(1, 11, 1 * MS, 20 * MS);
	b->next_wake = env.now + 5 * MS;
	run_for(2000 * MS);
	printf("slice cut at a dispatch: 2.5 ms container worst delay %llu us, %llu of %llu starts "
	       "late; %u timer preemptions\n", b->max_delay_ns / US, env.cg[11].ent.nr_misses,
	       env.cg[11].ent.nr_picks, env.timer_fires[0]);
	CHECK("a slice cut for a competing deadline ends there, not at the next tick",
	      b->nr_delays > 50 && b->max_delay_ns <= 2 * MS,
	      "%llu wake-ups, worst delay %llu us", b->nr_delays, b->max_delay_ns / US);
}

/*
 * CPU 0's deadline timer set for 1 ms ahead (after a dispatch with h as prev, if dispatched), then
 * h, running there, stops and runs again without sleeping; 2 ms on: the timers fired so far.
 */
static u32 timer_fires_across_a_stop(struct task *h, bool dispatched)
{
	if (dispatched)
		fdl_on_dispatch(0, &h->p, &h->t);
	fdl_preempt_at(env_cpu(0), 0, env.now + MS, env.now);
	fdl_on_stopping(&h->p, &h->t, 0, false);
	fdl_on_running(&h->p, &h->t, 0);
	run_for(2 * MS);
	return env.timer_fires[0];
}

/*
 * A deadline timer set to end the slice of the task running on a CPU (here as fdl_on_enqueue sets
 * one for a waiting deadline that falls inside a tick) does nothing once that task has gone to
 * sleep: the CPU's dispatcher chose its next work by then. It preempted whatever ran next (or
 * woke the CPU from idle): in bench/insn-profile.sh's wake shape 1517 of 1745 timers fired that
 * way. Where no dispatcher chose since it was set, it still preempts (fdl_timer_lapse).
 */
static void test_lapsed_timer_kicks_nothing(void)
{
	struct task *a, *h;

	reset(1);
	tick_ms = 4;
	add_cgroup(10, 100, 4 * MS, 0);
	add_cgroup(11, 100, 0, 0);
	a = new_task(0, 10);
	a->spin_ns = MS;
	wake(a);
	fdl_preempt_at(env_cpu(0), 0, env.now + 2 * MS, env.now);
	run_for(MS);
	CHECK("the timed task spun its 1 ms and slept", !running[0] && !a->runnable,
	      "running %d, a runnable %d", running[0] ? running[0]->p.pid : -1, a->runnable);
	h = new_task(1, 11);
	wake(h);
	run_for(3 * MS);
	printf("lapsed timer: %u kicks, %u lapsed\n", env.timer_fires[0], env.timer_lapses[0]);
	CHECK("a timer whose task slept first preempts nothing", env.timer_fires[0] == 0 &&
	      env.timer_lapses[0] == 1 && running[0] == h, "%u kicks, %u lapsed",
	      env.timer_fires[0], env.timer_lapses[0]);
	/*
	 * Set again for the task that runs now, it fires, also when that task stops and runs again
	 * without a dispatch between (its properties changed, or an RT task took the CPU a while).
	 */
	CHECK("a timer set for the running task preempts it, also after a stop without a dispatch",
	      timer_fires_across_a_stop(h, false) == 1, "%u kicks, %u lapsed",
	      env.timer_fires[0], env.timer_lapses[0]);
	/*
	 * ops.dispatch runs before the stopping task's ops.stopping: a timer another CPU sets in
	 * between is for the task the dispatcher chose, and stands.
	 */
	CHECK("a timer set between a dispatch and the stop it follows preempts the next task",
	      timer_fires_across_a_stop(h, true) == 2, "%u kicks, %u lapsed",
	      env.timer_fires[0], env.timer_lapses[0]);
	/*
	 * A task that sleeps while select_cpu has put another on the CPU's local queue: that one
	 * runs without a dispatch, so the order the timer was to enforce is not looked at; it stays.
	 */
	fdl_preempt_at(env_cpu(0), 0, env.now + MS, env.now);
	fdl_on_select_idle(&new_task(2, 11)->t, 0, env.now);
	fdl_on_stopping(&h->p, &h->t, 0, true);
	CHECK("a sleep with a task waiting on the local queue leaves the timer armed",
	      env_cpu(0)->timer_at != 0, "timer_at %llu", env_cpu(0)->timer_at);
}

/*
 * Two busy containers within their guarantees with the same deadline_rr: both keys sit at
 * vdt + rr, tied, while their buckets run ahead. A slice cut to the shortest at every tie, each
 * ended by a timer, is a dispatch every --min-slice-us for nothing; the slice runs until the
 * running key passes the other's bucket, where the other's key stops moving.
 */
static void test_tied_keys_do_not_storm(void)
{
	u32 fires;

	reset(1);
	tick_ms = 4;
	add_cgroup(10, 100, 4 * MS, 0);
	add_cgroup(11, 100, 4 * MS, 0);
	grant(10, 450);
	grant(11, 450);
	wake(new_task(0, 10));
	wake(new_task(1, 11));
	run_for(100 * MS);
	fires = env.timer_fires[0];
	run_for(1000 * MS);
	fires = env.timer_fires[0] - fires;
	printf("tied keys: %u timer preemptions in 1 s, %llu / %llu ms run\n", fires,
	       tasks[0].ran_ns / MS, tasks[1].ran_ns / MS);
	CHECK("tied busy containers take turns by slices: at most one timer per default slice (3 ms)",
	      fires <= 1000 * MS / tun.slice_ns, "%u timer preemptions in 1 s", fires);
	CHECK("and share the CPU", tasks[0].ran_ns > 400 * MS && tasks[1].ran_ns > 400 * MS,
	      "%llu / %llu ms", tasks[0].ran_ns / MS, tasks[1].ran_ns / MS);
}

/*
 * One CPU, busy with something the task may not preempt; a task of container 10 (deadline_rr rr_ns,
 * granted half a CPU) wakes and is queued. Its container's entity into *c.
 */
static struct task *woken_behind_busy_cpu(u64 rr_ns, struct fdl_entity **c)
{
	struct task *k;

	reset(1);
	add_cgroup(10, 100, rr_ns, 0);
	grant(10, 500);
	*c = &env.cg[10].ent;
	k = new_task(0, 10);
	env.idle[0] = false;
	env.cpu[0].queue = 10;
	k->runnable = true;
	fdl_on_runnable(&k->t, 100, true);
	fdl_on_enqueue(&k->p, &k->t, FDL_ENQ_WAKEUP);
	return k;
}

/*
 * A start picked by its deadline after the deadline passed is a miss, counted by its lateness.
 * The pick moves vdt back to just before the missed deadline (fdl_miss); judged by the vdt after
 * that, as it was, no such start was ever late, and the misses the benchmarks judge were only
 * the starts that came some other way.
 */
static void test_late_pick_is_counted(void)
{
	struct fdl_entity *c;
	struct task *k = woken_behind_busy_cpu(1 * MS, &c);

	env.now += 5 * MS;	/* it waits 5 ms for a 1 ms deadline */
	reschedule(0);
	CHECK("the late start is counted, 4 ms late", running[0] == k && c->nr_misses == 1 &&
	      c->max_late.late_ns == 4 * MS && fdl.counters.nr_lag_steps == 1,
	      "running %d, misses %llu, lateness %llu us, lag steps %llu", running[0] == k,
	      c->nr_misses, c->max_late.late_ns / US, fdl.counters.nr_lag_steps);
}

/*
 * A start that the kernel charged no CPU time (preempted at once: exec did not move) is not the
 * wake-up's start, and the start after it is not counted as a wake-up's again. The first start
 * was told apart by the CPU time charged since the wake-up until the charge became the kernel's
 * CPU time (fdl_charge), which can stay 0 across a start.
 */
static void test_start_without_cpu_time_is_not_a_second_wake_up(void)
{
	struct fdl_entity *c;
	struct task *k = woken_behind_busy_cpu(4 * MS, &c);

	env.now += 1 * MS;
	reschedule(0);
	CHECK("the wake-up's start is counted", running[0] == k && c->nr_picks == 1 &&
	      c->nr_wake_starts == 1, "running %d, starts %llu, of wake-ups %llu", running[0] == k,
	      c->nr_picks, c->nr_wake_starts);
	/* Preempted before the kernel counted it any CPU time (its exec did not move), queued again. */
	fdl_on_stopping(&k->p, &k->t, 0, false);
	running[0] = NULL;
	fdl_on_enqueue(&k->p, &k->t, 0);
	env.now += 1 * MS;
	reschedule(0);
	CHECK("its next start is counted, not as a wake-up's", running[0] == k && c->nr_picks == 2 &&
	      c->nr_wake_starts == 1, "running %d, starts %llu, of wake-ups %llu", running[0] == k,
	      c->nr_picks, c->nr_wake_starts);
}

/* Defect 5: the preemption victim is the CPU with the most slack, by the 1.46x rule; too little
 * slack arms a timer instead. */
static void test_victim_chosen_by_slack(void)
{
	struct task *f, *l, *d;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);	/* fdl */
	add_cgroup(11, 100, 20 * MS, 0);	/* loose */
	add_cgroup(12, 100, 8 * MS, 0);		/* a third container, 8 ms */
	/* All three within their guarantees: they compete by their deadlines, in the first tier. */
	grant(10, 500);
	grant(11, 500);
	grant(12, 500);
	f = new_task(0, 12);
	l = new_task(1, 11);
	d = new_task(2, 10);
	wake(f);	/* CPU 0: deadline <= vdt + 8 ms */
	wake(l);	/* CPU 1: loose, deadline <= vdt + 20 ms */
	run_for(20 * MS);
	wake(d);	/* deadline vdt + 2 ms */
	CHECK("the CPU with the latest deadline is preempted", env.preempts[1] == 1 &&
	      env.preempts[0] == 0, "preempts cpu0 %d cpu1 %d", env.preempts[0], env.preempts[1]);
	run_for(1 * MS);
	CHECK("the deadline task runs at once", running[1] == d || d->ran_ns > 0, "not running");

	reset(1);
	add_cgroup(10, 100, 4 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	f = periodic(0, 20, 10 * MS, 40 * MS);	/* fair work within its bandwidth */
	d = new_task(1, 10);
	run_for(41 * MS);	/* f woke again 1 ms ago: its deadline is about vdt + 5 ms */
	wake(d);	/* slack 4 ms against fair's 5 ms: 5 < 1.46 * 4 */
	CHECK("too little slack: no preemption now", env.preempts[0] == 0, "%d", env.preempts[0]);
	CHECK("but a timer preempts before the deadline", env.timer_armed[0] &&
	      env.timer_at[0] - env.now <= 2 * MS, "armed %d in %llu us", env.timer_armed[0],
	      (env.timer_at[0] - env.now) / US);
	run_for(3 * MS);
	CHECK("the deadline task ran before its deadline", d->ran_ns > 0 && d->max_delay_ns < 4 * MS,
	      "waited %llu us", d->max_delay_ns / US);
}

/*
 * One CPU runs work of the 20 ms container (11) that spins spin_ns every 2 ms (0: a busy loop,
 * which never sleeps), 100 us into a spin; the 4 ms container's task (2 ms wake-up deadline) wakes.
 * Steps of 100 us. Returns the waker; *fired: the deadline timer fired before it started.
 */
static struct task *deadline_wakes_beside_rr(u64 lazy_ns, u64 spin_ns, u64 rr_ns, u64 wakeup_ns,
					     bool *fired)
{
	struct task *l, *d;

	reset(1);
	step_ns = 100 * US;
	tun.lazy_preempt_ns = lazy_ns;
	add_cgroup(10, 100, rr_ns, wakeup_ns);
	add_cgroup(11, 100, 20 * MS, 0);
	grant(10, 400);
	grant(11, 400);
	if (spin_ns) {
		l = periodic(0, 11, spin_ns, 2 * MS);
		run_for(20 * MS + 100 * US);	/* ten wake-ups: its usual burst is known; 100 us into one */
	} else {
		l = new_task(0, 11);
		wake(l);
		run_for(20 * MS + 100 * US);
	}
	d = new_task(1, 10);
	wake(d);
	if (running[0] != l)
		return d;
	for (int i = 0; i < 30 && !d->ran_ns; i++)
		run_for(100 * US);
	*fired = env.timer_fires[0] > 0;
	return d;
}

static struct task *deadline_wakes_beside(u64 lazy_ns, u64 spin_ns, bool *fired)
{
	return deadline_wakes_beside_rr(lazy_ns, spin_ns, 4 * MS, 2 * MS, fired);
}

/*
 * Work that will sleep by itself within --lazy-preempt-us (its usual burst less what it has run)
 * and within a quarter of the waker's slack is not preempted at once by an earlier deadline: the
 * waker starts when it sleeps, with no preemption, well before its deadline; a timer half-way to
 * the deadline stands behind it. A busy loop, work past its usual burst, work whose burst is long
 * and a waker with too little slack preempt at once, as without the option (0).
 */
static void test_work_about_to_sleep_is_not_preempted(void)
{
	struct task *d;
	bool fired = false;

	d = deadline_wakes_beside(500 * US, 300 * US, &fired);
	CHECK("work 200 us from its sleep: no preemption, a deferral counted", env.preempts[0] == 0 &&
	      env.stats.nr_preempts_deferred == 1, "preempts %d, deferred %llu", env.preempts[0],
	      (u64)env.stats.nr_preempts_deferred);
	CHECK("the waker starts when that work sleeps, the timer armed within its deadline",
	      d->ran_ns > 0 && d->max_delay_ns <= 300 * US && !fired && env.timer_at[0] &&
	      env.timer_at[0] - (env.now - d->ran_ns - d->max_delay_ns) <= 2 * MS,
	      "ran %llu us after %llu us, timer fired %d", d->ran_ns / US, d->max_delay_ns / US, fired);
	d = deadline_wakes_beside(0, 300 * US, &fired);
	CHECK("without the option: preempted at once", env.preempts[0] == 1 && d->max_delay_ns == 0 &&
	      env.stats.nr_preempts_deferred == 0, "preempts %d, waited %llu us", env.preempts[0],
	      d->max_delay_ns / US);
	d = deadline_wakes_beside(500 * US, 0, &fired);
	CHECK("a busy loop (no burst known): preempted at once", env.preempts[0] == 1 &&
	      d->max_delay_ns == 0, "preempts %d, waited %llu us", env.preempts[0], d->max_delay_ns / US);
	d = deadline_wakes_beside(500 * US, 1500 * US, &fired);
	CHECK("work 1.4 ms from its sleep (usual burst 1.5 ms): preempted at once",
	      env.preempts[0] == 1 && d->max_delay_ns == 0, "preempts %d, waited %llu us",
	      env.preempts[0], d->max_delay_ns / US);
	/* The RFC's 1 ms container, 500 us wake-up deadline: 200 us is more than a quarter of it. */
	d = deadline_wakes_beside_rr(500 * US, 300 * US, 1 * MS, 500 * US, &fired);
	CHECK("a 500 us wake-up deadline does not wait 200 us: preempted at once",
	      env.preempts[0] == 1 && d->max_delay_ns == 0, "preempts %d, waited %llu us",
	      env.preempts[0], d->max_delay_ns / US);
}

/*
 * Between two CPUs running fair work, a waking deadline task takes the one whose cgroup is furthest
 * ahead in cgroup virtual time (it had the most): beside hackbench, hackbench's CPU, not the one of
 * a cgroup that waited its turn. Before, both stood at the fair container's deadline and the victim
 * was whichever CPU had recorded the later one.
 */
static void test_victim_among_fair_work_is_the_cgroup_ahead(void)
{
	struct task *a, *b, *d;
	int i;

	for (i = 0; i < 2; i++) {
		reset(2);
		add_cgroup(10, 100, 4 * MS, 2 * MS);	/* a deadline container within its guarantee */
		add_cgroup(20, 100, 0, 0);		/* fair cgroups */
		add_cgroup(21, 100, 0, 0);
		grant(10, 500);
		a = new_task(0, 20);
		b = new_task(1, 21);
		d = new_task(2, 10);
		/* Which CPU runs the cgroup that is ahead: the first, then the second (either order). */
		wake(i ? b : a);
		wake(i ? a : b);
		run_for(2 * MS);
		env.cg[21].cvtime = fdl.cvtime_now + 50 * MS;	/* b's cgroup had more than its share */
		env.cg[20].cvtime = fdl.cvtime_now;
		wake(d);
		CHECK("the victim is the CPU of the fair cgroup furthest ahead",
		      env.preempts[i ? 0 : 1] == 1 && env.preempts[i ? 1 : 0] == 0,
		      "round %d: preempts cpu0 %d cpu1 %d (b on cpu%d)", i, env.preempts[0],
		      env.preempts[1], i ? 0 : 1);
	}
}

/* Defect 4/3: earliest deadline first across containers, and the running slice is cut where a
 * competing deadline takes over. */
static void test_edf_and_slice(void)
{
	struct task *l, *d;

	reset(1);
	add_cgroup(10, 100, 1 * MS, 0);
	add_cgroup(11, 100, 20 * MS, 0);
	l = new_task(0, 11);
	d = new_task(1, 10);
	wake(l);
	run_for(50 * MS);
	d->runnable = true;	/* d becomes runnable while l runs; it must not wait for l's slice */
	wake(d);
	run_for(1 * MS);
	CHECK("the 1 ms container runs before the 20 ms one", d->ran_ns > 0,
	      "d waited %llu us", (env.now - d->woken_at) / US);
	CHECK("its slice ends where the 20 ms container's deadline takes over",
	      running[0] != d || d->p.slice <= tun.slice_ns, "slice %llu", d->p.slice);
}

/* Defect 6: deadlines and vtimes are separate clocks; deadline work never moves the fair clock. */
static void test_clocks_apart(void)
{
	u64 fair_vnow;

	reset(2);
	add_cgroup(10, 100, 1 * MS, 0);
	wake(new_task(0, 10));
	wake(new_task(1, 10));
	fair_vnow = fdl.fair.vtime_now;
	run_for(200 * MS);
	CHECK("deadline work leaves the fair queue's clock alone", fdl.fair.vtime_now == fair_vnow,
	      "moved by %llu", fdl.fair.vtime_now - fair_vnow);
	CHECK("the container's own clock moves", env.cg[10].ent.vtime_now > 0, "stuck");
}

/*
 * The promise within bandwidth, on the probe's shape: two deadline containers (4 ms and 20 ms)
 * whose periodic tasks use well under their bandwidth, beside fair hogs and a hog container, on
 * 2 CPUs. Every wake-up of the 4 ms container finishes its spin within its deadline (plus the 1 ms
 * tick of this simulation); the tighter deadline does at least as well as the looser one; misses
 * stay under 1 % of picks; the hogs still progress.
 */
static void test_within_bandwidth(void)
{
	struct task *d, *l;
	int i;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);	/* fdl */
	add_cgroup(11, 100, 20 * MS, 0);	/* loose */
	add_cgroup(20, 100, 0, 0);		/* fair hogs */
	add_cgroup(21, 100, 0, 0);		/* a hog antagonist */
	d = periodic(0, 10, 3 * MS, 20 * MS);
	l = periodic(1, 11, 3 * MS, 20 * MS);
	for (i = 2; i < 6; i++)
		wake(new_task(i, i < 4 ? 20 : 21));
	run_for(3000 * MS);
	CHECK("the 4 ms container's spins end within rr + tick", d->late_ns <= 5 * MS,
	      "worst %llu us over %llu wake-ups", d->late_ns / US, d->wakes);
	CHECK("the 20 ms container's spins end within its rr", l->late_ns <= 21 * MS,
	      "worst %llu us", l->late_ns / US);
	CHECK("tighter deadline, no worse latency", d->late_ns <= l->late_ns + 1 * MS,
	      "fdl %llu us, loose %llu us", d->late_ns / US, l->late_ns / US);
	CHECK("fewer than 1 % of the 4 ms container's picks miss",
	      env.cg[10].ent.nr_misses * 100 <= env.cg[10].ent.nr_picks,
	      "%llu of %llu", env.cg[10].ent.nr_misses, env.cg[10].ent.nr_picks);
	for (i = 2; i < 6; i++)
		CHECK("every hog progresses", tasks[i].ran_ns >= 300 * MS, "hog %d ran %llu ms", i,
		      tasks[i].ran_ns / MS);
}

/* Weighted fairness within one cgroup: two nice-0 and two nice-5 hogs (weights 100 and 33 in
 * sched_ext's scale, 3.06 : 1 as the kernel's 1024 : 335) share 2 CPUs 3 : 1. */
static void test_nice_within_a_cgroup(void)
{
	u64 n0, n5;
	int i;

	reset(2);
	add_cgroup(20, 100, 0, 0);
	for (i = 0; i < 4; i++) {
		struct task *k = new_task(i, 20);

		wake(k);
		if (i >= 2) {	/* renice: ops.set_weight */
			k->t.weight = 33;
			env.cg[20].wsum += 33 - (s64)k->t.acct_weight;
			k->t.acct_weight = 33;
		}
	}
	run_for(8000 * MS);
	n0 = tasks[0].ran_ns + tasks[1].ran_ns;
	n5 = tasks[2].ran_ns + tasks[3].ran_ns;
	CHECK("nice 0 : nice 5 runs 3.03 : 1 within 10 %", n0 * 100 >= n5 * 273 && n0 * 100 <= n5 * 333,
	      "%.3f", (double)n0 / (double)n5);
}

/* Two-level fair order: a cgroup of ten hogs and a cgroup of one get half the machine each. */
static void test_cgroups_before_tasks(void)
{
	u64 many = 0;
	int i;

	reset(2);
	add_cgroup(20, 100, 0, 0);
	add_cgroup(21, 100, 0, 0);
	for (i = 0; i < 10; i++)
		wake(new_task(i, 20));
	wake(new_task(10, 21));
	run_for(4000 * MS);
	for (i = 0; i < 10; i++)
		many += tasks[i].ran_ns;
	CHECK("the one-task cgroup gets its whole CPU beside ten hogs (>= 0.9 of 4 s)",
	      tasks[10].ran_ns >= 3600 * MS, "one %llu ms, ten %llu ms", tasks[10].ran_ns / MS,
	      many / MS);
}

/* An interactive task (spin 2 ms every 20 ms) alone in its cgroup beside a cgroup of ten tasks
 * that sleep and wake all the time (hackbench-like): its credit is its cgroup's, not out-waited
 * by ten tasks' credits (the other cgroup's are at most one per CPU). Its worst delay stays within
 * about a slice. */
static void test_interactive_beside_many_wakers(void)
{
	struct task *k;

	reset(2);
	add_cgroup(20, 100, 0, 0);
	add_cgroup(21, 100, 0, 0);
	wakers(0, 20);
	k = periodic(10, 21, 2 * MS, 20 * MS);
	run_for(3000 * MS);
	CHECK("the interactive task's worst delay is within a slice and a tick", k->late_ns <= 5 * MS,
	      "worst %llu us over %llu wake-ups", k->late_ns / US, k->wakes);
}

/*
 * A UI-like probe (two workers, 1 ms every 17 ms) beside a build (four CPU hogs in one cgroup) on 2
 * CPUs and a 4 ms tick, as bench/scenarios/desktop-mix.toml. Without fair wake-up preemption the
 * probe waits for a hog's slice to end (3 ms, and the tick after it); with it (fdl_note_fair), the
 * hogs, CPU-bound since they started, are preempted at once. The hogs never preempt one another
 * (one cgroup, and they never wake), and the build keeps its CPU time.
 */
static void ui_beside_build(u64 preempt_ns, u64 *p99, u64 *worst, u64 *build_ns, int *preempts)
{
	reset(2);
	tun.fair_preempt_ns = preempt_ns;
	tick_ms = 4;
	add_cgroup(20, 100, 0, 0);
	add_cgroup(21, 100, 0, 0);
	for (int i = 0; i < 4; i++)
		wake(new_task(i, 20));
	probe_pair(4, 21, 1 * MS, 17 * MS);
	run_for(6000 * MS);
	*p99 = pct_late(4, 2, 99);
	*worst = worst_of(4, 2, true);
	*build_ns = 0;
	for (int i = 0; i < 4; i++)
		*build_ns += tasks[i].ran_ns;
	*preempts = env.preempts[0] + env.preempts[1];
}

static void test_fair_wakeup_preemption(void)
{
	u64 p99_off, worst_off, build_off, p99_on, worst_on, build_on;
	int kicks_off, kicks_on;

	ui_beside_build(0, &p99_off, &worst_off, &build_off, &kicks_off);
	ui_beside_build(20 * MS, &p99_on, &worst_on, &build_on, &kicks_on);
	printf("UI probe beside a build: p99 %llu us, worst %llu us without fair wake-up preemption "
	       "(%d kicks, build %llu ms); p99 %llu us, worst %llu us with it (%d kicks, build %llu ms)\n",
	       p99_off / US, worst_off / US, kicks_off, build_off / MS, p99_on / US, worst_on / US,
	       kicks_on, build_on / MS);
	CHECK("without it the probe waits out a slice", worst_off >= 3 * MS, "worst %llu us",
	      worst_off / US);
	/* The simulation steps 1 ms. */
	CHECK("with it, p99 within a step", p99_on <= 1 * MS, "p99 %llu us", p99_on / US);
	CHECK("and the worst below a slice", worst_on < worst_off && worst_on <= 3 * MS,
	      "worst %llu us against %llu us", worst_on / US, worst_off / US);
	CHECK("the hogs do not preempt one another: at most a kick per probe wake-up",
	      kicks_on <= (int)(tasks[4].wakes + tasks[5].wakes), "%d kicks, %llu wake-ups", kicks_on,
	      tasks[4].wakes + tasks[5].wakes);
	CHECK("the build keeps its CPU time", build_on + 100 * MS >= build_off, "%llu ms vs %llu ms",
	      build_on / MS, build_off / MS);

	/*
	 * Three probes without parameters, 10 ms spins every 30 ms (the matrix's spin10 cell), at the
	 * default 20 ms: work that sleeps by itself is not preempted (at 3 ms, in the VM, the probes
	 * took each other's CPUs and hackbench beside them lost 6 % of its throughput).
	 */
	reset(2);
	for (int c = 0; c < 3; c++) {
		add_cgroup(10 + c, 100, 0, 0);
		probe_pair(2 * c, 10 + c, 10 * MS, (30 + c) * MS);
	}
	run_for(3000 * MS);
	CHECK("probes' spins shorter than --fair-preempt-us are never preempted by fair work",
	      env.stats.nr_fair_preempts == 0, "%llu preemptions", (u64)env.stats.nr_fair_preempts);
}

/*
 * A cgroup running two busy loops and a probe (1 ms every 17 ms) on 2 CPUs and a 4 ms tick: a
 * pod whose batch job fills its CPUs beside its health check. Without sibling preemption the
 * probe, first in its queue's vtime order, waits for a busy loop's slice to end (3 ms, and the
 * tick after it); with it (fdl_note_sibling), it takes a busy loop's CPU at once. Returns the
 * probe's p99 and the preemptions.
 */
static u64 probe_beside_own_hogs(u64 sibling_ns, u64 *kicks)
{
	reset(2);
	tun.sibling_preempt_ns = sibling_ns;
	tick_ms = 4;
	add_cgroup(20, 100, 0, 0);
	for (int i = 0; i < 2; i++)
		wake(new_task(i, 20));
	periodic(2, 20, 1 * MS, 17 * MS);
	run_for(3000 * MS);
	*kicks = env.stats.nr_sibling_preempts;
	return pct_late(2, 1, 99);
}

/*
 * The interactive classifier (policy/interactive.h): one cgroup of four busy loops and a probe
 * whose requests (8 ms every 80 ms: a frame longer than a slice and its wake credit) are below
 * its fair fifth of one CPU, on a 4 ms tick, for 5 s, with interactive work lead_ns of wake
 * credit beyond batch work's (0: no classification). Without it, after a slice the rest of a
 * request queues behind the busy loops (its vtime has passed theirs). Returns the probe's p99 lateness, and the busy loops'
 * least and most CPU time and longest time off the CPU.
 */
static u64 probe_among_own_hogs(u64 lead_ns, u64 *hog_min, u64 *hog_max, u64 *hog_off)
{
	reset(1);
	tun.interactive_ns = lead_ns;
	tun.interactive_window_ns = 100 * MS;
	tun.interactive_max_rate = 10;
	tick_ms = 4;
	add_cgroup(20, 100, 0, 0);
	for (int i = 0; i < 4; i++)
		wake(new_task(i, 20));
	periodic(4, 20, 8 * MS, 80 * MS);
	run_for(5000 * MS);
	*hog_min = ~0ULL;
	*hog_max = 0;
	for (int i = 0; i < 4; i++) {
		*hog_min = tasks[i].ran_ns < *hog_min ? tasks[i].ran_ns : *hog_min;
		*hog_max = tasks[i].ran_ns > *hog_max ? tasks[i].ran_ns : *hog_max;
	}
	*hog_off = worst_off(0, 4);
	return pct_late(4, 1, 99);
}

static void test_interactive_before_batch(void)
{
	u64 off_p99, on_p99, min0, max0, off0, min1, max1, off1;

	off_p99 = probe_among_own_hogs(0, &min0, &max0, &off0);
	CHECK("without classification no task is interactive",
	      !tasks[4].t.interactive && !env.stats.nr_interactive_wakeups && !fdl.nvcsw_thresh,
	      "probe %u, %llu queued, threshold %llu", tasks[4].t.interactive,
	      (u64)env.stats.nr_interactive_wakeups, (u64)fdl.nvcsw_thresh);
	on_p99 = probe_among_own_hogs(5 * MS, &min1, &max1, &off1);
	printf("interactive: probe p99 %llu us with 5 ms more credit, %llu without; busy loops %llu-%llu ms "
	       "(without %llu-%llu), longest off %llu ms (without %llu); threshold %llu, probe's average %u\n",
	       on_p99 / US, off_p99 / US, min1 / MS, max1 / MS, min0 / MS, max0 / MS, off1 / MS, off0 / MS,
	       (u64)fdl.nvcsw_thresh, tasks[4].t.avg_nvcsw);
	CHECK("the probe (12.5 wake-ups a second, capped at 10) is interactive",
	      tasks[4].t.interactive && tasks[4].t.avg_nvcsw == 10000, "interactive %u, average %u",
	      tasks[4].t.interactive, tasks[4].t.avg_nvcsw);
	CHECK("busy loops that never sleep are batch",
	      !tasks[0].t.interactive && !tasks[1].t.interactive && !tasks[2].t.interactive &&
	      !tasks[3].t.interactive, "%u %u %u %u", tasks[0].t.interactive, tasks[1].t.interactive,
	      tasks[2].t.interactive, tasks[3].t.interactive);
	CHECK("the moving threshold lies between the batch average (0) and the cap",
	      fdl.nvcsw_thresh > 0 && fdl.nvcsw_thresh <= 10000, "%llu", (u64)fdl.nvcsw_thresh);
	CHECK("interactive work's credit ahead of batch work lowers the probe's p99",
	      on_p99 < off_p99, "%llu against %llu us", on_p99 / US, off_p99 / US);
	CHECK("batch work keeps its shares: the busy loops within 10 % of each other and of their "
	      "CPU time without the classifier", max1 - min1 <= max1 / 10 && min1 >= min0 * 9 / 10,
	      "%llu-%llu ms, without %llu-%llu", min1 / MS, max1 / MS, min0 / MS, max0 / MS);
	/* A request runs on to its end: the interactive credit and the wake credit, in ticks. */
	CHECK("batch work waits longer behind interactive work only by the two credits and two ticks",
	      off1 <= off0 + 5 * MS + tun.wakeup_lag_ns + 2 * 4 * MS, "%llu ms off, %llu without",
	      off1 / MS, off0 / MS);
}

static void overcommit_shape(u64 floor_ns, u64 sibling_ns, u64 rr_ns, u64 *p99, u64 *other_ns);

static void test_sibling_wakeup_preemption(void)
{
	u64 p99_off, p99_on, kicks_off, kicks_on;

	p99_off = probe_beside_own_hogs(0, &kicks_off);
	p99_on = probe_beside_own_hogs(20 * MS, &kicks_on);
	printf("probe beside its own cgroup's busy loops: p99 %llu us without sibling preemption, "
	       "%llu us with it (%llu preemptions in %llu wake-ups)\n", p99_off / US, p99_on / US,
	       kicks_on, tasks[2].wakes);
	CHECK("without it the probe waits out a slice", p99_off >= 3 * MS, "p99 %llu us",
	      p99_off / US);
	CHECK("with it the probe starts within a step", p99_on <= 1 * MS, "p99 %llu us",
	      p99_on / US);
	CHECK("one preemption per probe wake-up at most", kicks_on > 0 && kicks_on <= tasks[2].wakes,
	      "%llu, %llu wake-ups", kicks_on, tasks[2].wakes);
	CHECK("the busy loops never preempt each other", kicks_off == 0, "%llu", kicks_off);

	/*
	 * Overcommit (overcommit_shape): where the probe's cgroup holds a CPU, the probe takes it
	 * from its siblings; the other cgroups' time is untouched. (In the VM the fair cgroup's probe
	 * there had a worse p99 with it, 27.5 against 20.5 ms: its message thread took the CPU late in
	 * its cgroup's turn and its workers waited for the next. The simulation has no message
	 * thread.)
	 */
	for (int dl = 0; dl < 2; dl++) {
		u64 p99_no, p99_yes, other_no, other_yes;

		overcommit_shape(0, 0, dl ? 2 * MS : 0, &p99_no, &other_no);
		overcommit_shape(0, 20 * MS, dl ? 2 * MS : 0, &p99_yes, &other_yes);
		printf("overcommit shape (%s): probes' p99 %llu us without sibling preemption, %llu us "
		       "with it; the cgroup without probe ran %llu / %llu ms\n",
		       dl ? "deadline containers" : "no parameters", p99_no / US, p99_yes / US,
		       other_no / MS, other_yes / MS);
		CHECK("in overcommit sibling preemption leaves the probes' p99 no worse",
		      p99_yes <= p99_no, "%llu us against %llu us", p99_yes / US, p99_no / US);
		CHECK("and the other cgroup its CPU time (within 2 %)",
		      other_yes * 50 >= other_no * 49 && other_yes * 50 <= other_no * 51,
		      "%llu ms against %llu ms", other_yes / MS, other_no / MS);
	}

	/* Three probes of one cgroup spinning 10 ms every 30 ms: never CPU-bound long enough. */
	reset(2);
	add_cgroup(10, 100, 0, 0);
	for (int i = 0; i < 3; i++)
		periodic(i, 10, 10 * MS, (30 + i) * MS);
	run_for(3000 * MS);
	CHECK("spins shorter than --sibling-preempt-us are never preempted by their siblings",
	      env.stats.nr_sibling_preempts == 0, "%llu preemptions",
	      (u64)env.stats.nr_sibling_preempts);
}

/*
 * The overcommit scenario's shape (bench/scenarios/overcommit-untuned.toml) on 2 CPUs and a 4 ms
 * tick: cgroups 20 and 21 each run two busy loops and a probe (1 ms every 17 ms), beside cgroup
 * 22's two busy loops; with rr_ns, 20 and 21 are deadline containers guaranteed 0.7 CPU each.
 * When a probe wakes, its cgroup's turn is often elsewhere: it waits for the next one, a whole
 * slice per CPU for each cgroup ahead. Slices shared by the waiters (fdl_base_slice) bring the
 * turn sooner. Sets the probes' p99 (after a second of warm-up) and cgroup 22's CPU time.
 */
static void overcommit_shape(u64 floor_ns, u64 sibling_ns, u64 rr_ns, u64 *p99, u64 *other_ns)
{
	reset(2);
	tun.slice_floor_ns = floor_ns;
	tun.sibling_preempt_ns = sibling_ns;
	tick_ms = 4;
	add_cgroup(20, 100, rr_ns, 0);
	add_cgroup(21, 100, rr_ns, 0);
	add_cgroup(22, 100, 0, 0);
	if (rr_ns) {
		grant(20, 700);
		grant(21, 700);
	}
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 2; i++)
			wake(new_task(2 * c + i, 20 + c));
	periodic(6, 20, 1 * MS, 17 * MS);
	periodic(7, 21, 1 * MS, 17 * MS);
	run_for(1000 * MS);
	tasks[6].nr_lates = tasks[7].nr_lates = 0;
	tasks[4].ran_ns = tasks[5].ran_ns = 0;
	run_for(5000 * MS);
	*p99 = pct_late(6, 2, 99);
	*other_ns = tasks[4].ran_ns + tasks[5].ran_ns;
}

static void test_slice_shared_by_waiters(void)
{
	u64 p99_whole, p99_shared, other_whole, other_shared;

	for (int dl = 0; dl < 2; dl++) {
		u64 rr = dl ? 2 * MS : 0;

		overcommit_shape(0, 0, rr, &p99_whole, &other_whole);
		overcommit_shape(1 * MS, 0, rr, &p99_shared, &other_shared);
		printf("overcommit shape (%s): probes' p99 %llu us with whole slices, %llu us with "
		       "slices shared by the waiters (floor 1 ms); the cgroup without probe ran %llu / "
		       "%llu ms of 10000\n", dl ? "deadline containers, 2 ms, 0.7 CPU each" :
		       "no parameters", p99_whole / US, p99_shared / US, other_whole / MS,
		       other_shared / MS);
		CHECK("shared slices halve the probes' p99", p99_shared * 2 <= p99_whole,
		      "%llu us against %llu us", p99_shared / US, p99_whole / US);
		CHECK("the other cgroup keeps its CPU time (within 2 %)",
		      other_shared * 50 >= other_whole * 49 && other_shared * 50 <= other_whole * 51,
		      "%llu ms against %llu ms", other_shared / MS, other_whole / MS);
	}
}

/*
 * A fair waker kicks the CPU of a hog that has run for long (its claim resets the CPU's record),
 * but the waker is taken elsewhere first, and the hog keeps its CPU at the dispatch, without an
 * ops.running. The record must say again that the hog is CPU-bound: the next fair waker preempts
 * it at once. (Left as the claim wrote it, the hog looked fresh for another --fair-preempt-us.)
 */
static void test_kept_hog_stays_preemptible(void)
{
	struct task *hog, *w1, *w2;

	reset(1);
	add_cgroup(20, 100, 0, 0);
	add_cgroup(21, 100, 0, 0);
	add_cgroup(22, 100, 0, 0);
	hog = new_task(0, 20);
	wake(hog);
	run_for(100 * MS);
	w1 = new_task(1, 21);
	w1->runnable = true;
	fdl_on_runnable(&w1->t, 100, true);
	fdl_on_enqueue(&w1->p, &w1->t, FDL_ENQ_WAKEUP);
	CHECK("the first waker kicks the hog's CPU", env.stats.nr_fair_preempts == 1, "%llu kicks",
	      (u64)env.stats.nr_fair_preempts);
	/* Another CPU took it meanwhile (the race the kernel allows); it ran and slept there. */
	fake_remove(fake_dsq(21), 0);
	w1->runnable = false;
	fdl_on_quiescent(&w1->t);
	env.now += 1 * MS;
	env.cur_cpu = 0;
	fdl_on_dispatch(0, &hog->p, &hog->t);
	CHECK("the hog keeps its CPU", hog->p.slice > 0 && !env.local[0].n, "slice %llu",
	      (u64)hog->p.slice);
	w2 = new_task(2, 22);
	w2->runnable = true;
	fdl_on_runnable(&w2->t, 100, true);
	fdl_on_enqueue(&w2->p, &w2->t, FDL_ENQ_WAKEUP);
	CHECK("the next fair waker preempts it at once", env.stats.nr_fair_preempts == 2,
	      "%llu kicks", (u64)env.stats.nr_fair_preempts);
}

/*
 * An interactive task (2 ms every 20 ms) in pod A (11) beside pod B (12) of ten tasks that run
 * 1 ms every 6 ms, pods of one parent (kubepods, 10), where they share their parent's queue in
 * hierarchical vtime order. Each of B's tasks had wakeup_lag_ns of credit at its own share, a
 * tenth of its pod's, so ten times the interactive task's in vtime, and woke ahead of it (VM,
 * hackbench's 40 tasks in one pod: the probe's p99 6.1 ms against EEVDF's 1.7). A task's
 * credit is its cgroup's (fdl_fair_place).
 */
static void add_child(u64 cgref, u64 parent, u32 weight);

static void test_interactive_pod_beside_a_pod_of_wakers(void)
{
	struct task *k;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_child(11, 10, 100);
	add_child(12, 10, 100);
	for (int i = 0; i < 10; i++)	/* hackbench-like: short runs, woken all the time */
		periodic(i, 12, 1 * MS, 6 * MS);
	k = periodic(10, 11, 2 * MS, 20 * MS);
	run_for(3000 * MS);
	printf("interactive pod beside a pod of ten wakers: worst delay %llu us, p99 %llu us over %llu wake-ups\n",
	       k->late_ns / US, pct_late(10, 1, 99) / US, k->wakes);
	/* Credit at each task's share: p99 5 ms (the simulation steps 1 ms). */
	CHECK("the interactive pod's p99 delay is at most 2 ms", pct_late(10, 1, 99) <= 2 * MS,
	      "p99 %llu us, worst %llu us over %llu wake-ups", pct_late(10, 1, 99) / US, k->late_ns / US, k->wakes);
}

/* Bandwidth before deadlines: a container within its bandwidth with a long deadline (20 ms)
 * is not kept waiting by an overloaded fair container (5 ms deadline), and the fair container,
 * overloaded, still gets what the container leaves (more than its floor). */
static void test_within_bandwidth_beats_overrun(void)
{
	struct task *l;
	u64 fair = 0;
	int i;

	reset(2);
	add_cgroup(11, 100, 20 * MS, 0);	/* loose */
	add_cgroup(20, 100, 0, 0);		/* fair hogs */
	l = periodic(0, 11, 3 * MS, 20 * MS);
	for (i = 1; i < 6; i++)
		wake(new_task(i, 20));
	run_for(200 * MS);	/* until the fair hogs' use has run FDL_OVER_MARGIN_NS past */
	l->late_ns = 0;
	run_for(3000 * MS);
	for (i = 1; i < 6; i++)
		fair += tasks[i].ran_ns;
	CHECK("a 20 ms container within bandwidth waits less than a slice and a tick",
	      l->late_ns <= 5 * MS, "worst %llu us", l->late_ns / US);
	CHECK("the overloaded fair container gets what it leaves", fair >= 4500 * MS,
	      "fair %llu ms of 6000", fair / MS);
}

/*
 * A deadline never makes things worse than no deadline: two cgroups run the same probe (two
 * workers spin 3 ms every 23 ms), one without parameters, one with a loose deadline (20 ms),
 * beside a hackbench-like cgroup of ten wakers (5 CPUs of demand on 2). EDF alone runs the loose
 * cgroup late, near its 20 ms deadline, while the cgroup without parameters is served by its
 * cgroup virtual time. The deadline cgroup also stands in the fair order, so it waits no longer
 * than the cgroup without parameters (within a tick), and no shorter than the 4 ms one.
 */
static void test_deadline_never_worse_than_fair(void)
{
	u64 cw, lw, dw;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);	/* fdl */
	add_cgroup(11, 100, 20 * MS, 0);	/* loose */
	add_cgroup(12, 100, 0, 0);		/* cfs */
	add_cgroup(20, 100, 0, 0);		/* antagonist */
	probe_pair(0, 10, 3 * MS, 23 * MS);
	probe_pair(2, 11, 3 * MS, 23 * MS);
	probe_pair(4, 12, 3 * MS, 23 * MS);
	wakers(6, 20);
	run_for(3000 * MS);
	dw = worst_of(0, 2, false);
	lw = worst_of(2, 2, false);
	cw = worst_of(4, 2, false);
	printf("never-worse: fdl %llu us, loose %llu us, cfs %llu us\n", dw / US, lw / US, cw / US);
	CHECK("the loose deadline cgroup waits no longer than the one without parameters",
	      lw <= cw + 1 * MS, "loose %llu us, cfs %llu us", lw / US, cw / US);
	CHECK("the 4 ms cgroup waits no longer than the loose one", dw <= lw + 1 * MS,
	      "fdl %llu us, loose %llu us", dw / US, lw / US);
	CHECK("the 4 ms cgroup's wake-ups run within its deadline_wakeup and a tick",
	      dw <= 3 * MS, "fdl %llu us", dw / US);
}

/*
 * ... and the cgroups without parameters are none the worse for it here: the same machine (a cfs
 * probe, a probe cgroup, ten busy wakers) with the probe cgroup fair, then with a 20 ms deadline;
 * the cfs probe waits no longer (within a tick) than when all three were fair.
 */
static u64 cfs_delay_beside(u64 rr_ns)
{
	int i;

	reset(2);
	add_cgroup(11, 100, rr_ns, 0);
	add_cgroup(12, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	for (i = 0; i < 2; i++) {
		periodic(i, 11, 1 * MS, 6 * MS);
		periodic(2 + i, 12, 1 * MS, 6 * MS);
	}
	wakers(4, 20);
	run_for(3000 * MS);
	return worst_of(2, 2, true);
}

static void test_fair_work_keeps_its_bandwidth(void)
{
	u64 all_fair = cfs_delay_beside(0), beside_dl = cfs_delay_beside(20 * MS);

	printf("fair bandwidth: cfs worst %llu us beside a fair cgroup, %llu us beside a 20 ms container\n",
	       all_fair / US, beside_dl / US);
	CHECK("a deadline container beside it leaves the cfs probe no worse off",
	      beside_dl <= all_fair + 1 * MS, "%llu us vs %llu us", beside_dl / US, all_fair / US);
}

/*
 * A deadline container that never goes idle (a hog and a periodic task), served partly by the fair
 * order beside hackbench-like wakers: its lateness stays within a few deadlines and it progresses.
 * (The VM showed a 27.9 ms lateness of a 4 ms container in the matrix's after-start cell; this
 * simulation did not reproduce it, with or without its own bucket filled by fair-order runs.)
 */
static void test_fair_order_keeps_the_deadline_fresh(void)
{
	struct fdl_entity *e;

	reset(2);
	add_cgroup(11, 100, 20 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	wake(new_task(0, 11));
	periodic(1, 11, 1 * MS, 6 * MS);
	wakers(2, 20);
	run_for(3000 * MS);
	e = &env.cg[11].ent;
	printf("fresh deadline: %llu misses of %llu picks, worst lateness %llu us\n", e->nr_misses,
	       e->nr_picks, e->max_late.late_ns / US);
	CHECK("worst lateness within 5 x deadline_rr", e->max_late.late_ns <= 100 * MS, "%llu us",
	      e->max_late.late_ns / US);
	CHECK("the container progresses", tasks[0].ran_ns + tasks[1].ran_ns >= 1000 * MS, "%llu ms",
	      (tasks[0].ran_ns + tasks[1].ran_ns) / MS);
}

/*
 * Deadlines written at run time to a cgroup that ran as fair work: its bucket (stale: nothing
 * keeps a fair cgroup's up to date, and spread halvings drag it along) is replaced by a fresh one
 * before the deadline is written, so a CPU that sees the deadline never reads the stale bucket.
 * Before, the bucket was renewed lazily at the next look (a flag written after the deadlines), so
 * a CPU that read the new deadline_rr first could take the stale bucket for the container's: the
 * suspected cause of a 27.9 ms lateness in the matrix's after-start cell.
 */
static void test_deadlines_set_at_run_time(void)
{
	struct fdl_entity *e;
	u64 v;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	e = &env.cg[10].ent;
	e->dl = 123;		/* whatever a fair cgroup's bucket holds */
	fdl.spread_gen = 7;
	fdl.spread_vdt = fdl_vdt(env.now) - 40 * MS;
	v = fdl_vdt(env.now);
	fdl_entity_set_params(e, 4 * MS, 2 * MS, v);
	CHECK("the bucket is fresh as soon as the deadline is written",
	      e->dl == v + 2 * MS && e->spread_gen == fdl.spread_gen, "dl - vdt = %lld us, gen %llu",
	      (long long)(e->dl - v) / 1000, e->spread_gen);
	CHECK("so its key is vdt + deadline_wakeup, not late", fdl_entity_key(e, v) == v + 2 * MS,
	      "key - vdt = %lld us", (long long)(fdl_entity_key(e, v) - v) / 1000);
}

/*
 * Guarantees far above the machine (the RFC's shares 7000): two deadline containers boosted to
 * weight 10000, each with a periodic probe, beside a cfs probe and ten busy wakers. The boosts
 * must not leak into the fair order: counted there, they made every fair share a sliver, cgroup
 * virtual time raced into the starvation window and cfs lost its place ahead of the wakers
 * (125 ms p99, 274 ms worst, in the VM matrix).
 */
static void test_boosts_stay_out_of_the_fair_order(void)
{
	u64 worst;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	add_cgroup(11, 100, 20 * MS, 0);
	env.cg[10].weight = env.cg[10].boost_weight = 10000;
	env.cg[11].weight = env.cg[11].boost_weight = 10000;
	add_cgroup(12, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	probe_pair(0, 10, 3 * MS, 23 * MS);
	probe_pair(2, 11, 3 * MS, 23 * MS);
	probe_pair(4, 12, 3 * MS, 23 * MS);
	wakers(6, 20);
	run_for(4000 * MS);
	worst = worst_of(4, 2, false);
	printf("boosts: cfs worst delay %llu us beside two containers at weight 10000\n", worst / US);
	CHECK("cfs's worst delay stays within a few slices", worst <= 10 * MS, "%llu us", worst / US);
}

/*
 * Quiet: three probe cgroups (fdl 4 ms, loose 20 ms, cfs), two workers each, on 2 CPUs, no
 * antagonist; their periods differ a little so that every phase between them comes up. The loose
 * container uses far less than its fair share: it must not wait longer than the cgroup without
 * parameters. EDF alone made it everyone's victim: a cfs worker waking (the fair container's 5 ms
 * deadline) preempted it, and it, waking, preempted nobody. In this simulator (wake-ups on 1 ms
 * steps, all at once) it passes before the fair claim too: a guard, not the proof; the VM matrix
 * showed the defect (quiet loose 1.27-1.36x EEVDF's p99 before, 0.64-0.74x after).
 */
static void test_quiet_loose_no_worse_than_cfs(void)
{
	u64 lw, cw, lm, cm;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	add_cgroup(11, 100, 20 * MS, 0);
	add_cgroup(12, 100, 0, 0);
	probe_pair(0, 10, 3 * MS, 23 * MS);
	probe_pair(2, 11, 3 * MS, 24 * MS);
	probe_pair(4, 12, 3 * MS, 25 * MS);
	run_for(6000 * MS);
	lw = worst_of(2, 2, true);
	cw = worst_of(4, 2, true);
	lm = (tasks[2].sum_delay_ns + tasks[3].sum_delay_ns) / (tasks[2].nr_delays + tasks[3].nr_delays);
	cm = (tasks[4].sum_delay_ns + tasks[5].sum_delay_ns) / (tasks[4].nr_delays + tasks[5].nr_delays);
	printf("quiet p90/p99 lateness: fdl %llu/%llu, loose %llu/%llu, cfs %llu/%llu us\n",
	       pct_late(0, 2, 90) / US, pct_late(0, 2, 99) / US, pct_late(2, 2, 90) / US,
	       pct_late(2, 2, 99) / US, pct_late(4, 2, 90) / US, pct_late(4, 2, 99) / US);
	printf("quiet: worst lateness fdl %llu, loose %llu, cfs %llu us; mean delay loose %llu, cfs %llu us\n",
	       worst_of(0, 2, true) / US, lw / US, cw / US, lm / US, cm / US);
	CHECK("quiet: the loose container's worst lateness is no worse than cfs's", lw <= cw + 1 * MS,
	      "loose %llu us, cfs %llu us", lw / US, cw / US);
	CHECK("quiet: nor its mean wake-up delay", lm <= cm + 200 * US,
	      "loose %llu us, cfs %llu us", lm / US, cm / US);
}

/*
 * Alternating on one CPU: a loose container's task (20 ms) and a cgroup without parameters each
 * spin 3 ms every 20 ms, the cfs task waking 1 ms after the loose one. Both use a quarter of
 * their fair share. EDF alone let the cfs task (the fair container's 5 ms deadline) preempt the
 * loose one every time: a deadline made the loose cgroup the one that waits. Standing first in the
 * fair order, the loose task runs as fair work, and the two wait for each other alike.
 */
static void test_loose_not_preempted_by_fair_work(void)
{
	struct task *l, *c;

	reset(1);
	add_cgroup(11, 100, 20 * MS, 0);
	add_cgroup(12, 100, 0, 0);
	l = periodic(0, 11, 3 * MS, 20 * MS);
	c = periodic(1, 12, 3 * MS, 20 * MS);
	c->next_wake = env.now + 1 * MS;
	run_for(2000 * MS);
	printf("alternating: loose worst lateness %llu us, cfs %llu us, %d preemptions\n",
	       l->late_ns / US, c->late_ns / US, env.preempts[0]);
	CHECK("fair work does not preempt a loose container within its fair share",
	      l->late_ns <= c->late_ns + 1 * MS, "loose %llu us, cfs %llu us", l->late_ns / US,
	      c->late_ns / US);
}

/* A granted guarantee of milli_cpus / 1000 CPUs for a deadline container (fdl_set_params). */
static void grant(u64 cgref, u64 milli_cpus)
{
	fdl_entity_set_budget(&env.cg[cgref].ent, FDL_SHARE_ONE * milli_cpus / 1000, env.now);
}

/*
 * The matrix's three probe cgroups on a 2-CPU machine: 10 and 11 deadline containers (4 ms / 2 ms
 * and 20 ms) granted milli_cpus each when with_dl, else fair; 12 without parameters; 20 for the
 * antagonist.
 */
static void probe_cgroups(bool with_dl, u64 milli_cpus)
{
	reset(2);
	add_cgroup(10, 100, with_dl ? 4 * MS : 0, with_dl ? 2 * MS : 0);
	add_cgroup(11, 100, with_dl ? 20 * MS : 0, 0);
	add_cgroup(12, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	if (with_dl) {
		grant(10, milli_cpus);
		grant(11, milli_cpus);
	}
}

/*
 * Three probes (two workers each, spin 3 ms, periods 23-25 ms) in cgroups 10, 11, 12 on 2 CPUs,
 * optionally beside ten hackbench-like wakers; with_dl: 10 and 11 are deadline containers (4 ms
 * and 20 ms) with guarantees of 0.88 CPU each (shares 900, what the matrix's "within" cells give),
 * else all fair (the stand-in for a machine without parameters). p99 spin lateness of each probe
 * into p99[3].
 */
static void within_run(bool with_dl, bool antagonist, u64 p99[3])
{
	probe_cgroups(with_dl, 880);
	probe_pair(0, 10, 3 * MS, 23 * MS);
	probe_pair(2, 11, 3 * MS, 24 * MS);
	probe_pair(4, 12, 3 * MS, 25 * MS);
	if (antagonist)
		wakers(6, 20);
	run_for(6000 * MS);
	for (int i = 0; i < 3; i++)
		p99[i] = pct_late(2 * i, 2, 99);
}

/*
 * Within its guarantee a deadline container runs ahead of all work that is not, whatever its
 * deadline: of two containers that use about 0.3 of their 0.88 CPU, the 4 ms one finishes its
 * spins at no more than half the lateness (p99) of the same probe without parameters, quiet and
 * beside hackbench-like wakers, and the 20 ms one waits for nothing but the 4 ms one. Before the budget,
 * the 20 ms container competed with fair work's 5 ms deadline and waited as long as fair work.
 */
static void test_within_guarantee_ahead_of_fair_work(void)
{
	for (int a = 0; a < 2; a++) {
		u64 fair[3], dl[3];

		within_run(false, a, fair);
		within_run(true, a, dl);
		printf("within the guarantee, %s: p99 lateness fdl %llu / loose %llu / cfs %llu us "
		       "(all fair: %llu / %llu / %llu), %llu loans returned, %llu preemptions\n",
		       a ? "antagonist" : "quiet", dl[0] / US, dl[1] / US, dl[2] / US, fair[0] / US,
		       fair[1] / US, fair[2] / US, (u64)env.stats.nr_loans_returned,
		       (u64)env.stats.nr_preempt_kicks);
		CHECK("the 4 ms container: p99 at most half of the same probe's without parameters",
		      dl[0] * 2 <= fair[0], "%llu us vs %llu us", dl[0] / US, fair[0] / US);
		/*
		 * Its floor: when the 4 ms container's two workers hold both CPUs, a spin (3 ms).
		 * Quiet, the same probe without parameters is at that floor too (3 ms at this
		 * simulation's 1 ms steps; 4 ms before cgroup virtual time counted CPU time at a fixed
		 * weight, test_cgroup_vtime_counts_cpu_time_at_weight): no later than it there.
		 */
		CHECK("the 20 ms container: p99 within the 4 ms one's spin and a tick, not above the "
		      "same probe's without parameters (below it beside the wakers)",
		      dl[1] <= 4 * MS && (a ? dl[1] < fair[1] : dl[1] <= fair[1]),
		      "%llu us vs %llu us", dl[1] / US, fair[1] / US);
		CHECK("the tighter deadline no later", dl[0] <= dl[1], "%llu us vs %llu us", dl[0] / US,
		      dl[1] / US);
	}
}

/*
 * Issue 10's matrix at the policy seam: every shape, deadline pair, guarantee and load of the
 * VM's matrix (bench/matrix/issue10.toml) that this simulation can express, without the
 * emulator's wake-up floor. A cell: three probes (two workers each) in cgroups 10 (tighter
 * deadline), 11 (looser) and 12 (no parameters), quiet or beside ten hackbench-like wakers or four
 * busy loops in cgroup 20, on 2 CPUs. Each cell runs twice: with the deadlines and guarantees, and with all four
 * cgroups fair (the stand-in for a machine without parameters, as within_run).
 */
struct sweep_cell {
	const char *shape;
	u64 spin_ns, sleep_ns, jitter_ns;	/* as the matrix's shapes */
	const char *deadlines;
	u64 rr_ns[2], wakeup_ns[2];		/* cgroups 10 and 11 */
	u64 shares;				/* each deadline container's guaranteed_shares */
	int load;				/* 0 quiet, 1 hackbench-like wakers, 2 four hogs */
};

/* The matrix's shapes and deadline pairs (tests/native/cell_trace.c runs one cell of them). */
static const struct sweep_shape { const char *name; u64 spin, sleep, jitter; } sweep_shapes[] = {
	{ "spin3-sleep20", 3 * MS, 20 * MS, 5 * MS },
	{ "spin10-sleep30", 10 * MS, 30 * MS, 7500 * US },
	{ "spin1-sleep5", 1 * MS, 5 * MS, 1250 * US },
	{ "wake", 100 * US, 10 * MS, 2500 * US },
};
static const struct sweep_dl { const char *name; u64 rr[2], wakeup[2]; } sweep_dls[] = {
	{ "rr4-20", { 4 * MS, 20 * MS }, { 2 * MS, 0 } },
	{ "rfc", { 1 * MS, 5 * MS }, { 500 * US, 2500 * US } },
};
static const char *const sweep_loads[] = { "quiet", "antagonist", "overcommit" };
/* The jitter's draws (srand); the test runs one, a study of a cell may run several. */
static unsigned int sweep_seed = 1;

static struct sweep_cell sweep_cell_of(const struct sweep_shape *sh, const struct sweep_dl *d,
				       u64 shares, int load)
{
	return (struct sweep_cell){
		.shape = sh->name, .spin_ns = sh->spin, .sleep_ns = sh->sleep, .jitter_ns = sh->jitter,
		.deadlines = d->name, .rr_ns = { d->rr[0], d->rr[1] },
		.wakeup_ns = { d->wakeup[0], d->wakeup[1] }, .shares = shares, .load = load,
	};
}

/* One run of a cell: p99 spin lateness of each probe, and CPUs (x1000) each probe used. */
static void sweep_run(const struct sweep_cell *c, bool with_dl, u64 p99[3], u64 milli_used[3])
{
	const u64 secs = 8;

	reset(2);
	srand(sweep_seed);
	step_ns = 100 * US;
	tick_ms = 4;		/* the VM kernel's HZ=250 */
	probe_wakes = true;
	jitter_us = c->jitter_ns / US;
	for (int i = 0; i < 2; i++) {
		add_cgroup(10 + i, 100, with_dl ? c->rr_ns[i] : 0, with_dl ? c->wakeup_ns[i] : 0);
		if (with_dl && c->shares)
			grant(10 + i, c->shares * 1000 / 1024);
	}
	add_cgroup(12, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	/* Each wake-up jitter_ns / 2 either side of the sleep (probe_wakes draws 0..jitter). */
	for (int i = 0; i < 3; i++)
		probe_pair(2 * i, 10 + i, c->spin_ns, c->sleep_ns - c->jitter_ns / 2);
	if (c->load == 1)
		wakers(6, 20);
	for (int i = 0; c->load == 2 && i < 4; i++)
		wake(new_task(6 + i, 20));
	run_for(secs * 1000 * MS);
	for (int i = 0; i < 3; i++) {
		p99[i] = pct_late(2 * i, 2, 99);
		milli_used[i] = (tasks[2 * i].ran_ns + tasks[2 * i + 1].ran_ns) / (secs * MS);
	}
}

/*
 * The rules that hold in every cell, the issue's with this simulation's tick (4 ms, at which a
 * slice ends without a deadline timer) in place of the VM's wake-up floor and scx_fdl without
 * parameters in place of EEVDF:
 * - above the guarantee, or without one, a deadline never makes things worse: each deadline
 *   container's p99 at most 1.2x its p99 without parameters, and a tick;
 * - where the guarantees leave the cgroup without parameters more than its share (none, or 0.29
 *   CPU each), its p99 at most 1.2x its p99 with no parameters anywhere, and a tick: it was
 *   18.2 ms against 1.5 in the RFC's deadlines without guarantees beside four busy loops, which
 *   took the CPUs back as loans (fdl_loan_due);
 * - within the guarantee (both fit the machine and neither is used up), the tighter deadline
 *   has the lower p99 (or the same);
 * - no probe starves.
 * Not held here: the VM's "within: p99 <= deadline_rr + 2 ms and half of EEVDF's", whose
 * reference this simulation does not have (scx_fdl without parameters runs these probes far
 * closer to their floor than EEVDF does). The table printed is every cell's figures, for what the
 * rules leave open: a 20 ms container without a guarantee, looser than fair work's 5 ms, at 1.5x
 * its p99 without parameters in the 3 ms cells; the cgroup without parameters behind two
 * containers' bursts. The VM's matrix (bench/matrix.sh) is the same space with the kernel, the
 * emulator and EEVDF.
 */
static void test_policy_matrix(void)
{
	static const u64 shares[] = { 0, 300, 900, 7000 };
	int cells = 0, failed_before = failed;

	printf("policy matrix (p99 spin lateness in us, with deadlines / all fair; CPUs used x1000):\n");
	for (u32 a = 0; a < ARRAY_SIZE(sweep_shapes); a++)
	for (u32 b = 0; b < ARRAY_SIZE(sweep_dls); b++)
	for (u32 g = 0; g < ARRAY_SIZE(shares); g++)
	for (int load = 0; load < 3; load++) {
		struct sweep_cell c = sweep_cell_of(&sweep_shapes[a], &sweep_dls[b], shares[g], load);
		u64 dl[3], fair[3], used[3], fused[3], guar = c.shares * 1000 / 1024;
		bool within;
		char name[96];

		snprintf(name, sizeof(name), "%s.%s.shares%llu %s", c.shape, c.deadlines,
			 (u64)c.shares, sweep_loads[load]);
		sweep_run(&c, true, dl, used);
		sweep_run(&c, false, fair, fused);
		within = guar && 2 * guar <= 2000 && used[0] < guar && used[1] < guar;
		cells++;
		printf("  %-42s %-6s fdl %5llu / %5llu  loose %5llu / %5llu  cfs %5llu / %5llu  used %llu %llu %llu\n",
		       name, within ? "within" : "above", dl[0] / US, fair[0] / US, dl[1] / US,
		       fair[1] / US, dl[2] / US, fair[2] / US, used[0], used[1], used[2]);
		for (int i = 0; i < 3; i++)
			CHECK("every probe runs", tasks[2 * i].nr_lates > 0 && tasks[2 * i + 1].nr_lates > 0,
			      "%s probe %d", name, i);
		if (c.shares <= 300)
			CHECK("the cgroup without parameters: p99 <= 1.2x without any, and a tick",
			      dl[2] * 10 <= fair[2] * 12 + 10 * 4 * MS,
			      "%s: %llu vs %llu us", name, dl[2] / US, fair[2] / US);
		if (!within) {
			for (int i = 0; i < 2; i++)
				CHECK("a deadline never makes things worse (p99 <= 1.2x without, and a tick)",
				      dl[i] * 10 <= fair[i] * 12 + 10 * 4 * MS,
				      "%s cgroup %d: %llu vs %llu us", name, 10 + i, dl[i] / US, fair[i] / US);
			continue;
		}
		CHECK("within: the tighter deadline no later", dl[0] <= dl[1], "%s: %llu vs %llu us",
		      name, dl[0] / US, dl[1] / US);
	}
	printf("policy matrix: %d cells, %d checks failed\n", cells, failed - failed_before);
}

/*
 * The loan tests' set-up: the probe cgroups (guarantees of milli_cpus), two 3 ms spinners in each,
 * k[0..1] in the cgroup without parameters, k[2..3] in the 4 ms container, k[4..5] in the 20 ms
 * one; a round of everyone first (warm_ns; the dispatcher's scans set fair work's protected
 * share), then lateness, preemptions and loans counted afresh.
 */
static void loan_setup(struct task *k[6], u64 milli_cpus, u64 warm_ns)
{
	int i;

	probe_cgroups(true, milli_cpus);
	for (i = 0; i < 6; i++) {
		k[i] = new_task(i, i < 2 ? 12 : i < 4 ? 10 : 11);
		k[i]->spin_ns = 3 * MS;
	}
	for (i = 0; i < 6; i++)
		wake(k[i]);
	run_for(warm_ns);
	for (i = 0; i < 6; i++)
		k[i]->late_ns = 0;
	memset(env.preempts, 0, sizeof(env.preempts));
	env.stats.nr_loans_returned = 0;
}

/* The loan tests: the 4 ms container's two workers wake and take both CPUs. */
static void loan_taken_by_4ms(struct task *k[6])
{
	wake(k[2]);
	wake(k[3]);
	CHECK("the 4 ms container's wake-ups take both CPUs",
	      env.preempts[0] + env.preempts[1] == 2, "%d + %d preemptions", env.preempts[0],
	      env.preempts[1]);
}

/*
 * The loan tests: the preempted workers a and b got their CPUs back as loans, late by the 4 ms
 * container's spin and a step (what: what they finished before).
 */
static void loan_returned(const char *what, struct task *a, struct task *b)
{
	CHECK(what, a->late_ns <= 4 * MS && b->late_ns <= 4 * MS, "%llu / %llu us",
	      a->late_ns / US, b->late_ns / US);
	CHECK("the CPUs were handed back as loans", env.stats.nr_loans_returned == 2, "%llu",
	      (u64)env.stats.nr_loans_returned);
}

/*
 * A preemption is a loan (fdl_loan_due). Two fair workers of the cgroup without parameters spin
 * 3 ms; 2 ms in, the 4 ms container's two workers wake and take both CPUs (their deadline is due);
 * the 20 ms container's two wake just after. When the 4 ms workers are done, the fair workers get
 * their CPUs back for the last millisecond of their spins before the 20 ms container's burst,
 * which could not have taken them. Before, they waited out that burst too: the shape of the
 * VM trace of 2026-11-27 (7 ms off a CPU for 0.1 ms of work). And the 20 ms container's wake-up
 * takes no CPU from fair work within its protected share; the 4 ms container's does.
 */
static void test_preemption_is_a_loan(void)
{
	struct task *k[6];

	loan_setup(k, 880, 30 * MS);
	wake(k[0]);
	wake(k[1]);
	run_for(2 * MS);
	wake(k[4]);	/* the 20 ms container first: fair work keeps its CPUs */
	CHECK("the 20 ms container's wake-up takes no CPU from fair work within its share",
	      env.preempts[0] + env.preempts[1] == 0 && running[0] == k[0] && running[1] == k[1],
	      "%d + %d preemptions", env.preempts[0], env.preempts[1]);
	loan_taken_by_4ms(k);
	wake(k[5]);
	run_for(10 * MS);
	printf("loan: fair workers %llu / %llu us late, 20 ms workers %llu / %llu us, %llu loans\n",
	       k[0]->late_ns / US, k[1]->late_ns / US, k[4]->late_ns / US, k[5]->late_ns / US,
	       (u64)env.stats.nr_loans_returned);
	loan_returned("the preempted fair workers finish before the 20 ms container's burst (late by "
		      "the 4 ms container's spin and a step)", k[0], k[1]);
	CHECK("the 20 ms container still runs within its deadline", k[4]->late_ns < 20 * MS &&
	      k[5]->late_ns < 20 * MS, "%llu / %llu us", k[4]->late_ns / US, k[5]->late_ns / US);
}

/*
 * The loan tests with a third pair: two more 3 ms spinners x[0..1] in cgroup cgref, run once (their
 * lateness counted afresh); then the fair workers spin, and 2 ms in the 4 ms container's two
 * workers take both CPUs from them.
 */
static void loan_pair_taken(struct task *k[6], struct task *x[2], u64 cgref)
{
	int i;

	for (i = 0; i < 2; i++) {
		x[i] = new_task(6 + i, cgref);
		x[i]->spin_ns = 3 * MS;
		wake(x[i]);
	}
	run_for(10 * MS);
	x[0]->late_ns = x[1]->late_ns = 0;
	wake(k[0]);
	wake(k[1]);
	run_for(2 * MS);
	loan_taken_by_4ms(k);
}

/*
 * A loan does not come before the rest of the burst that took the CPU, within a guarantee. The
 * 4 ms container's burst is four 3 ms workers (the matrix's t4 cell, guarantees of 0.88 CPU that
 * it uses 0.6 of), two more than the machine: two take both CPUs from the fair workers 2 ms into
 * their spins, the other two queue. When the first two are done, the other two (deadline due in
 * a millisecond, within the guarantee) run next, and the loans after them. Before, the loans went
 * first: fair work's deadline was not later than theirs by the slack rule, so they waited out the
 * fair workers' last millisecond (the VM trace of 2026-12-05 19:30, `workers=4`: the 4 ms
 * container's last two workers 5.3-5.8 ms off a CPU thus, its p99 6.6 ms against rr + 2 ms).
 */
static void test_loan_waits_for_the_rest_of_the_burst(void)
{
	struct task *k[6], *more[2];

	loan_setup(k, 880, 30 * MS);
	loan_pair_taken(k, more, 10);
	wake(more[0]);
	wake(more[1]);
	run_for(12 * MS);
	printf("loan after the burst: 4 ms workers %llu / %llu / %llu / %llu us late, fair workers "
	       "%llu / %llu us, %llu loans\n", k[2]->late_ns / US, k[3]->late_ns / US,
	       more[0]->late_ns / US, more[1]->late_ns / US, k[0]->late_ns / US, k[1]->late_ns / US,
	       (u64)env.stats.nr_loans_returned);
	CHECK("the burst's last two workers start once its first two are done",
	      more[0]->late_ns <= 3500 * US && more[1]->late_ns <= 3500 * US, "%llu / %llu us",
	      more[0]->late_ns / US, more[1]->late_ns / US);
	CHECK("the preempted fair workers then finish (late by the burst's two rounds and a step)",
	      k[0]->late_ns <= 7 * MS && k[1]->late_ns <= 7 * MS, "%llu / %llu us",
	      k[0]->late_ns / US, k[1]->late_ns / US);
	CHECK("the CPUs were handed back as loans", env.stats.nr_loans_returned == 2, "%llu",
	      (u64)env.stats.nr_loans_returned);
}

/*
 * ...but only for the borrower's own burst: another container within its guarantee, with a
 * deadline earlier than fair work's but not by the slack rule (it could not have taken the CPU
 * from it), waits for the loans. The 4 ms container takes both CPUs from the fair workers, a 5 ms
 * container (the RFC's looser deadline) wakes 2.5 ms later; when the 4 ms workers are done, the
 * fair workers finish their last millisecond first. A loan that waited for every earlier deadline
 * of the first tier took the cgroup without parameters' p99 from 1.19x to 1.38x EEVDF's in issue
 * 10's RFC cell within the guarantee (spin3-sleep20.rfc.shares900.config, quiet).
 */
static void test_loan_keeps_the_slack_rule_for_others(void)
{
	struct task *k[6], *five[2];

	loan_setup(k, 880, 30 * MS);
	add_cgroup(13, 100, 5 * MS, 0);
	grant(13, 880);
	loan_pair_taken(k, five, 13);
	run_for(2500 * US);
	wake(five[0]);
	wake(five[1]);
	run_for(12 * MS);
	printf("loan beside a 5 ms container: fair workers %llu / %llu us late, 5 ms workers %llu / "
	       "%llu us, %llu loans\n", k[0]->late_ns / US, k[1]->late_ns / US,
	       five[0]->late_ns / US, five[1]->late_ns / US, (u64)env.stats.nr_loans_returned);
	loan_returned("the preempted fair workers finish before the 5 ms container's burst (late by "
		      "the 4 ms container's spin and a step)", k[0], k[1]);
	CHECK("the 5 ms container waits no more than the fair workers' last millisecond (and the 4 ms "
	      "container's last half, and a step)",
	      five[0]->late_ns <= 2 * MS && five[1]->late_ns <= 2 * MS, "%llu / %llu us",
	      five[0]->late_ns / US, five[1]->late_ns / US);
}

/*
 * Beyond any guarantee a preemption is a loan too. No guarantees (the matrix's shares0 cells):
 * the 20 ms container's workers spin on both CPUs, the cgroup without parameters' workers wake and
 * queue behind them (fair work does not preempt fair work), then the 4 ms container's wake and take
 * both CPUs by their deadline. Once those are done, the preempted workers get their CPUs back
 * before the fair order serves the cgroup that had not started: the VM's trace of the quiet
 * shares0 cell (2026-12-05 16:07) had 18 of loose's 21 wake-ups off a CPU over 6 ms thus, 0.1-2 ms
 * of a spin left behind both of cfs's spins as well (EEVDF: 12 over 6 ms).
 */
static void test_preemption_beyond_guarantees_is_a_loan(void)
{
	struct task *k[6];

	loan_setup(k, 0, 40 * MS);
	wake(k[4]);
	wake(k[5]);
	run_for(1500 * US);
	wake(k[0]);
	wake(k[1]);
	CHECK("the cgroup without parameters queues behind the 20 ms container's spins",
	      env.preempts[0] + env.preempts[1] == 0 && running[0] && running[1] &&
	      running[0]->t.cgref == 11 && running[1]->t.cgref == 11,
	      "%d + %d preemptions", env.preempts[0], env.preempts[1]);
	loan_taken_by_4ms(k);
	run_for(15 * MS);
	printf("loan beyond guarantees: 20 ms workers %llu / %llu us late, fair workers %llu / %llu "
	       "us, %llu loans\n", k[4]->late_ns / US, k[5]->late_ns / US, k[0]->late_ns / US,
	       k[1]->late_ns / US, (u64)env.stats.nr_loans_returned);
	loan_returned("the preempted workers finish before the fair workers' spins (late by the 4 ms "
		      "container's spin and a step)", k[4], k[5]);
	CHECK("the fair workers wait no more than the two spins ahead of them",
	      k[0]->late_ns <= 7 * MS && k[1]->late_ns <= 7 * MS, "%llu / %llu us",
	      k[0]->late_ns / US, k[1]->late_ns / US);
}

/*
 * A guarantee is a budget, not a priority: a container of two hogs (both CPUs of demand) beside a
 * cgroup of two fair hogs gets the larger of its guarantee and its fair share, not both: with
 * 0.5 CPU guaranteed, its fair share (1 CPU). Above its fair share a guarantee takes from the
 * other deadline containers, never from fair work's weighted share (see
 * test_fair_share_protected_from_overcommitted_guarantees): 1.5 CPUs guaranteed beside a deadline
 * container without a guarantee and light fair work (weight 10), 1.5 CPUs.
 */
static u64 budget_run(u64 milli_cpus, bool beside_deadline)
{
	u64 c = 0;
	int i;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 0);
	if (beside_deadline) {
		add_cgroup(11, 100, 4 * MS, 0);
		add_cgroup(20, 10, 0, 0);
	} else {
		add_cgroup(20, 100, 0, 0);
	}
	grant(10, milli_cpus);
	for (i = 0; i < 2; i++) {
		wake(new_task(i, 10));
		wake(new_task(2 + i, 20));
		if (beside_deadline)
			wake(new_task(4 + i, 11));
	}
	run_for(4000 * MS);
	for (i = 0; i < 2; i++)
		c += tasks[i].ran_ns;
	return c;
}

static void test_guarantee_is_a_budget(void)
{
	u64 half = budget_run(500, false), more = budget_run(1500, true);

	printf("budget: container of hogs with 0.5 CPU guaranteed %llu ms, with 1.5 CPUs (beside a "
	       "deadline container) %llu ms, of 8000\n", half / MS, more / MS);
	CHECK("guarantee below the fair share: the fair share (1 CPU +-10 %)",
	      half >= 3600 * MS && half <= 4400 * MS, "%llu ms", half / MS);
	CHECK("guarantee above the fair share: the guarantee (1.5 CPUs +-10 %)",
	      more >= 5400 * MS && more <= 6600 * MS, "%llu ms", more / MS);
}

/*
 * A container's message thread (m, on CPU 1) wakes two workers: the first goes straight to idle
 * CPU 0 (select_cpu), and before it starts there the second wakes. CPU 0's record still showed the
 * fair task that ran there last, its bucket filled by all the time since: a victim with plenty of
 * slack, so the second worker was put in CPU 0's queue too and one of the two waited out the
 * other's whole spin (the VM: fdl's p90 1.3 ms on 1 ms spins, quiet). Claimed at the idle pick,
 * CPU 0 is the container's own: the second worker waits in its container's queue for CPU 1.
 */
static void test_idle_pick_claims_the_cpu(void)
{
	struct task *c, *m, *w1, *w2;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	add_cgroup(12, 100, 0, 0);
	grant(10, 880);
	c = new_task(0, 12);
	m = new_task(1, 10);
	w1 = new_task(2, 10);
	w2 = new_task(3, 10);
	wake(c);		/* CPU 0 */
	wake(m);		/* CPU 1 */
	run_for(5 * MS);
	sleep_on(0);		/* c sleeps: CPU 0 idle, its record c's */
	run_for(3 * MS);
	env.cur_cpu = 1;
	w1->runnable = true;
	fdl_on_runnable(&w1->t, 100, true);
	w1->t.enqueued_at = env.now;
	env.idle[0] = false;	/* select_cpu found CPU 0 idle and queued w1 there */
	fdl_on_idle_pick(&w1->t, 0, env.now);
	w2->runnable = true;
	fdl_on_runnable(&w2->t, 100, true);
	w2->t.enqueued_at = env.now;
	fdl_on_enqueue(&w2->p, &w2->t, FDL_ENQ_WAKEUP);
	CHECK("the second worker is not queued on the CPU the first was just given",
	      env.preempts[0] == 0 && env.local[0].n == 0, "%d preemptions, %d queued on CPU 0",
	      env.preempts[0], env.local[0].n);
	CHECK("it waits in its container's queue", env_nr_queued(10) == 1, "%d queued",
	      (int)env_nr_queued(10));
}

/*
 * The dispatcher reads the policy's counts of queued tasks of active containers only, and asks the
 * kernel about no queue (each ask: a kfunc and a DSQ hash lookup per domain; a node has hundreds of
 * containers, most idle). Work the counts do not show should never be; if it is, the full scan
 * every FDL_FULL_SCAN_NS (one CPU's) takes it, so it waits a few ms, not forever; work hidden at
 * two full scans in a row is counted (nr_scan_strays).
 */
/*
 * A cgroup's contribution to its parent's sum follows its activity as it is after the exchange,
 * not as the caller's own change implied: a CPU activating the cgroup and one deactivating it at
 * once left an active cgroup with contribution 0 when the deactivation's exchange came last (the
 * state set up here), its parent's sum short of its weight for good.
 */
static void test_contribution_follows_activity(void)
{
	struct fdl_cgroup *cg;
	s64 dw;

	reset(1);
	add_cgroup(10, 100, 0, 0);
	cg = &env.cg[10];
	cg->nr_active = 1;	/* a task woke in it... */
	cg->contrib = 0;	/* ...and a sleeper's exchange came last */
	dw = fdl_cgroup_settle_contrib(cg);
	CHECK("an active cgroup left without a contribution gets its weight back into its parent's sum",
	      dw == 100 && cg->contrib == 100, "dw %lld contrib %lld", (long long)dw,
	      (long long)cg->contrib);
	cg->nr_active = 0;
	dw = fdl_cgroup_settle_contrib(cg);
	CHECK("an inactive one with a contribution takes it out", dw == -100 && cg->contrib == 0,
	      "dw %lld contrib %lld", (long long)dw, (long long)cg->contrib);
	CHECK("a settled one changes nothing", fdl_cgroup_settle_contrib(cg) == 0 && cg->contrib == 0,
	      "contrib %lld", (long long)cg->contrib);
}

static void test_scan_asks_active_queues_only(void)
{
	struct task *a, *b, *c, *s, *s2;

	reset(1);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(11, 100, 0, 0);
	add_cgroup(12, 100, 4 * MS, 0);
	a = new_task(0, 10);
	b = new_task(1, 10);
	c = new_task(2, 12);
	s = new_task(3, 11);
	wake(c);		/* CPU 0 */
	run_for(1 * MS);
	CHECK("a container with runnable work is in the active set, the others not",
	      fdl.active_mask == 1ULL << (env.cg[12].cont_slot - 1), "mask %llx, 12's slot %u",
	      (unsigned long long)fdl.active_mask, env.cg[12].cont_slot);
	sleep_on(0);		/* 12 inactive again */
	CHECK("and leaves it when its work sleeps", !fdl.active_mask, "mask %llx",
	      (unsigned long long)fdl.active_mask);
	wake(a);
	wake(b);		/* queued behind a */
	CHECK("the queued task is counted in its container's slot",
	      *fdl_queued_nr(env.cg[10].cont_slot) == 1 && b->t.queued_slot == env.cg[10].cont_slot,
	      "count %lld, b's slot %u", (long long)*fdl_queued_nr(env.cg[10].cont_slot),
	      b->t.queued_slot);
	memset(env.queued_asks, 0, sizeof(env.queued_asks));
	run_for(1 * MS);
	fdl.full_scan_at = env.now;	/* the full scan was just now */
	running[0]->p.slice = 0;
	reschedule(0);
	CHECK("a dispatch among active work asks the kernel about no queue (the counts say)",
	      running[0] == b && !env.queued_asks[10] && !env.queued_asks[11] && !env.queued_asks[12],
	      "CPU 0 runs task %d; asks: 10 %d, 11 %d, 12 %d",
	      running[0] ? (int)(running[0] - tasks) : -1, env.queued_asks[10],
	      env.queued_asks[11], env.queued_asks[12]);
	CHECK("and b, started, counts there no more; a, queued again, does",
	      *fdl_queued_nr(env.cg[10].cont_slot) == 1 && !b->t.queued_slot &&
	      a->t.queued_slot == env.cg[10].cont_slot,
	      "count %lld", (long long)*fdl_queued_nr(env.cg[10].cont_slot));
	CHECK("no stray so far", !env.stats.nr_scan_strays, "%llu",
	      (unsigned long long)env.stats.nr_scan_strays);
	sleep_on(0);
	sleep_on(0);		/* a and b sleep: CPU 0 idle */
	CHECK("context: CPU 0 idle", !running[0], "CPU 0 runs task %d",
	      running[0] ? (int)(running[0] - tasks) : -1);
	/* s sits in inactive container 11's queue, never counted runnable (what should not happen). */
	queued_planted = true;
	s->runnable = true;
	fake_insert_at(fake_dsq(11), 0, &s->p, 0);
	env.idle_kicks[0] = 1;
	run_for(1 * MS);
	CHECK("a dispatch between full scans leaves an inactive container's queue alone",
	      !running[0] && !env.stats.nr_scan_strays, "CPU 0 runs task %d, strays %llu",
	      running[0] ? (int)(running[0] - tasks) : -1,
	      (unsigned long long)env.stats.nr_scan_strays);
	run_for(FDL_FULL_SCAN_NS);
	env.idle_kicks[0] = 1;
	run_for(1 * MS);
	CHECK("the next full scan takes the hidden work", running[0] == s,
	      "CPU 0 runs task %d", running[0] ? (int)(running[0] - tasks) : -1);
	CHECK("work hidden for a moment (found once) is no stray", !env.stats.nr_scan_strays, "%llu",
	      (unsigned long long)env.stats.nr_scan_strays);
	sleep_on(0);
	run_for(FDL_FULL_SCAN_NS);
	env.idle_kicks[0] = 1;
	run_for(1 * MS);	/* a full scan that finds nothing hidden */
	/* s2, pinned to a CPU the machine does not have, stays in 11's queue, never counted. */
	s2 = new_task(4, 11);
	s2->runnable = true;
	s2->p.allowed = 1u << 1;
	fake_insert_at(fake_dsq(11), 0, &s2->p, 0);
	run_for(FDL_FULL_SCAN_NS);
	env.idle_kicks[0] = 1;
	run_for(1 * MS);
	CHECK("found hidden by one full scan: not yet a stray", !env.stats.nr_scan_strays, "%llu",
	      (unsigned long long)env.stats.nr_scan_strays);
	run_for(FDL_FULL_SCAN_NS);
	env.idle_kicks[0] = 1;
	run_for(1 * MS);
	CHECK("found hidden again by the next: a stray, counted", env.stats.nr_scan_strays == 1,
	      "%llu", (unsigned long long)env.stats.nr_scan_strays);
}

/*
 * With several domains, each full scan asks the kernel about one domain's DSQs, in turn (one
 * kfunc per queue counted empty, not one per queue and domain): work hidden in domain 1 is found
 * by the first full scan of domain 1, and a stray is work found hidden by two scans of the same
 * domain, however many scans of other domains came between.
 */
static void test_full_scan_asks_one_domain_in_turn(void)
{
	struct task *s, *s2;
	int asks, found = -1, i;

	reset_two_domains();
	add_cgroup(10, 100, 0, 0);
	add_cgroup(11, 100, 0, 0);
	new_task(0, 10);	/* 11 gets slot 2: the scan walks past an empty container first */
	s = new_task(1, 11);
	/* s sits in inactive container 11's queue, in domain 1, never counted (should not happen). */
	queued_planted = true;
	s->runnable = true;
	s->p.dom = 1;
	fake_insert_at(fake_dsq(11), 0, &s->p, 0);
	for (i = 0; i < 3 && found < 0; i++) {
		run_for(FDL_FULL_SCAN_NS);
		memset(env.queued_asks, 0, sizeof(env.queued_asks));
		for (int c = 0; c < 4; c++)
			env.idle_kicks[c] = 1;
		run_for(1 * MS);
		asks = env.queued_asks[10] + env.queued_asks[11];
		CHECK("a full scan asks the kernel once per queue counted empty, one domain",
		      asks == 2, "full scan %d: %d asks", i, asks);
		for (int c = 0; c < 4; c++)
			if (running[c] == s)
				found = i;
	}
	CHECK("work hidden in domain 1 is found within two full scans", found >= 0 && found <= 1,
	      "found at full scan %d", found);
	CHECK("found once: no stray", !env.stats.nr_scan_strays, "%llu",
	      (unsigned long long)env.stats.nr_scan_strays);
	for (int c = 0; c < 4; c++)
		if (running[c] == s)
			sleep_on(c);	/* all idle: a full scan per period, no more */
	for (int k = 0; k < 2; k++) {	/* one of each domain: domain 1's clears the sighting */
		run_for(FDL_FULL_SCAN_NS);
		for (int c = 0; c < 4; c++)
			env.idle_kicks[c] = 1;
		run_for(1 * MS);
	}
	CHECK("a full scan of domain 1 that finds nothing there clears the sighting",
	      !fdl_queued_of(env.cg[11].cont_slot)->hidden_at, "hidden at %llu",
	      (unsigned long long)fdl_queued_of(env.cg[11].cont_slot)->hidden_at);
	/* s2, pinned to a CPU the machine does not have, stays in 11's queue in domain 1. */
	s2 = new_task(2, 11);
	s2->runnable = true;
	s2->p.allowed = 1u << 7;
	s2->p.dom = 1;
	fake_insert_at(fake_dsq(11), 0, &s2->p, 0);
	i = fdl.nr_full_scans;
	for (int k = 0; k < 4; k++) {
		run_for(FDL_FULL_SCAN_NS);
		for (int c = 0; c < 4; c++)
			env.idle_kicks[c] = 1;
		run_for(1 * MS);
	}
	CHECK("four full scans, two of them of domain 1: one stray",
	      fdl.nr_full_scans - i == 4 && env.stats.nr_scan_strays == 1, "%u scans, %llu strays",
	      fdl.nr_full_scans - i, (unsigned long long)env.stats.nr_scan_strays);
}

/*
 * The lost wake-up of the VM's quiet 3 ms spin cells (trace of 2026-11-27): a container's message
 * thread m wakes worker w1 onto idle CPU 0 and worker w2, then sleeps. CPU 1's dispatcher finds
 * nothing; before the kernel sets CPU 1's idle bit, w2 is enqueued (on CPU 0's behalf): no idle
 * CPU to pick, CPU 0 claimed by w1 and CPU 1 last running m, both its own container's: w2 is
 * queued and no CPU is woken. CPU 1 then idled beside it while w2 waited out w1's whole spin.
 * Going idle, CPU 1 must see w2 and wake up (fdl_on_idle); and a CPU whose dispatcher left
 * queued work it may not run (pinned elsewhere) must not wake itself for it, again and again.
 */
static void test_cpu_going_idle_takes_work_queued_meanwhile(void)
{
	struct task *m, *w1, *w2, *pin;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	grant(10, 880);
	m = new_task(0, 10);
	w1 = new_task(1, 10);
	w2 = new_task(2, 10);
	env.idle[0] = false;	/* CPU 0 busy for now: m starts on CPU 1 */
	env.idle[1] = true;
	wake(m);
	run_for(1 * MS);
	env.idle[0] = true;
	wake(w1);		/* select_cpu: idle CPU 0 */
	m->runnable = false;	/* m sleeps: CPU 1's dispatcher finds nothing */
	env.cur_cpu = 1;
	fdl_on_dispatch(1, &m->p, NULL);
	fdl_on_stopping(&m->p, &m->t, 1, true);
	running[1] = NULL;
	fdl_on_quiescent(&m->t);
	env.cur_cpu = 0;	/* w2 enqueued before CPU 1's idle bit is set */
	wake(w2);
	CHECK("context: w2 queued with no CPU woken", env_nr_queued(10) == 1 && !env.idle_kicks[1] &&
	      !env.preempts[1], "%d queued, %d kicks, %d preemptions", (int)env_nr_queued(10),
	      env.idle_kicks[1], env.preempts[1]);
	env.idle[1] = true;	/* the kernel sets the idle bit, then calls ops.update_idle */
	env.cur_cpu = 1;
	fdl_on_idle(1);
	CHECK("CPU 1, going idle, wakes itself for w2", env.idle_kicks[1] == 1, "%d kicks",
	      env.idle_kicks[1]);
	run_for(1 * MS);
	CHECK("w2 runs on CPU 1 at once", running[1] == w2, "CPU 1 runs task %d",
	      running[1] ? (int)(running[1] - tasks) : -1);
	if (running[1] != w2)
		return;

	/* A task pinned to CPU 0 waits behind w1: CPU 1 leaves it, and idles without waking itself. */
	pin = new_task(3, 10);
	pin->p.allowed = 1u << 0;
	sleep_on(1);		/* w2 done: CPU 1 idle */
	env.idle_kicks[1] = 0;
	wake(pin);
	run_for(1 * MS);
	CHECK("the pinned task waits for CPU 0", running[0] == w1 && env_nr_queued(10) == 1,
	      "CPU 0 runs task %d, %d queued", running[0] ? (int)(running[0] - tasks) : -1,
	      (int)env_nr_queued(10));
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);
	env.idle[1] = true;
	fdl_on_idle(1);
	CHECK("CPU 1 does not wake itself for work it may not run", env.idle_kicks[1] == 0,
	      "%d kicks", env.idle_kicks[1]);
}

/*
 * A task is counted in its queue (ops.enqueue) before the kernel inserts it, when the callback
 * returns. A CPU whose dispatch falls in between finds the queue it chose empty: it looks again
 * once idle (a self-kick that lands after the dispatch), at most FDL_INFLIGHT_RETRIES times until
 * it next runs a task. Work in the queue that it may not run gets no such look
 * (test_cpu_going_idle_takes_work_queued_meanwhile).
 */
static void test_cpu_looks_again_for_work_on_its_way(void)
{
	struct fake_dsq *q;
	struct task_struct *p;
	struct task *a, *w;
	u64 vtime;
	int k;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	a = new_task(0, 10);
	w = new_task(1, 10);
	env.idle[1] = false;	/* CPU 1 about to dispatch, its idle bit not set */
	wake(a);		/* select_cpu: idle CPU 0 */
	run_for(1 * MS);
	wake(w);		/* no idle CPU: queued */
	q = fake_dsq(10);
	CHECK("context: a runs on CPU 0, w queued, CPU 1 not running", running[0] == a &&
	      !running[1] && q->n == 1 && q->task[0] == &w->p, "CPU 0 runs %d, %d queued",
	      running[0] ? (int)(running[0] - tasks) : -1, q->n);
	if (q->n != 1)
		return;
	/* Counted, not inserted yet: CPU 1's dispatch falls in between. */
	vtime = q->vtime[0];
	p = fake_remove_at(q, 0);
	env.idle_kicks[1] = 0;
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);
	CHECK("CPU 1 finds w's queue empty and looks again once idle", env.idle_kicks[1] == 1 &&
	      env.stats.nr_dispatch_inflight == 1, "%d kicks, %llu counted",
	      env.idle_kicks[1], (u64)env.stats.nr_dispatch_inflight);
	for (k = 0; k < 5; k++)
		fdl_on_dispatch(1, NULL, NULL);
	CHECK("at most FDL_INFLIGHT_RETRIES times", env.idle_kicks[1] == FDL_INFLIGHT_RETRIES,
	      "%d kicks", env.idle_kicks[1]);
	/* The insert lands; the kick is delivered: CPU 1 takes w. */
	fake_insert_at(q, 0, p, vtime);
	env.idle[1] = true;
	run_for(1 * MS);
	CHECK("CPU 1 runs w", running[1] == w, "CPU 1 runs task %d",
	      running[1] ? (int)(running[1] - tasks) : -1);
	CHECK("running a task gives the CPU its looks back", env_cpu(1)->inflight_retries == 0,
	      "%u", env_cpu(1)->inflight_retries);
}

/*
 * The same look when the work on its way is the choice of a rescan (fdl_take_elsewhere): the scan
 * put first a queue whose only task is bound to the other, busy CPU; the rescan past it chose the
 * queue whose task is counted but not inserted yet. Before, the dispatcher judged "on its way" by
 * the first scan's choice only (work it may not run, so not on its way), rescanned past the second
 * queue too and went idle with its scan counted as having seen work it could not take: no look
 * again once idle (fdl_on_idle skips such a CPU), and the task waited for something else to wake
 * CPU 1 (a review of the rescans, 2026-11-29).
 */
static void test_cpu_looks_again_for_work_on_its_way_past_bound_work(void)
{
	struct fake_dsq *q;
	struct task_struct *p;
	struct task *h, *pin, *w;
	u64 vtime;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	h = new_task(0, 10);
	pin = new_task(1, 10);
	pin->p.allowed = 1u << 0;	/* bound to CPU 0, which h holds */
	w = new_task(2, 20);
	env.idle[1] = false;	/* CPU 1 about to dispatch, its idle bit not set */
	wake(h);		/* select_cpu: idle CPU 0 */
	run_for(1 * MS);
	wake(pin);
	wake(w);
	q = fake_dsq(20);
	CHECK("context: h on CPU 0, pin and w queued, CPU 1 not running", running[0] == h &&
	      !running[1] && fake_dsq(10)->n == 1 && q->n == 1, "CPU 0 runs %d, %d and %d queued",
	      running[0] ? (int)(running[0] - tasks) : -1, fake_dsq(10)->n, q->n);
	if (q->n != 1)
		return;
	/* The fair order puts the bound task's cgroup first. */
	env.cg[10].cvtime = fdl.cvtime_now;
	env.cg[20].cvtime = fdl.cvtime_now + 1 * MS;
	/* w counted, not inserted yet: CPU 1's dispatch falls in between. */
	vtime = q->vtime[0];
	p = fake_remove_at(q, 0);
	env.idle_kicks[1] = 0;
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);
	CHECK("CPU 1 looks again once idle for w, on its way past the bound task",
	      env.idle_kicks[1] == 1 && env.stats.nr_dispatch_inflight == 1,
	      "%d kicks, %llu counted", env.idle_kicks[1], (u64)env.stats.nr_dispatch_inflight);
	fake_insert_at(q, 0, p, vtime);
	env.idle[1] = true;
	run_for(1 * MS);
	CHECK("CPU 1 runs w", running[1] == w, "CPU 1 runs task %d",
	      running[1] ? (int)(running[1] - tasks) : -1);
}

/*
 * The scene of the promise tests: a message thread (m, cgroup 10: 4 ms, within its guarantee)
 * runs on CPU 0 of two; select_cpu has just put its worker a on idle CPU 1's local queue, where a
 * has not arrived yet; the other worker, b, is asleep.
 */
static void promise_cpu1(struct task **m, struct task **a, struct task **b)
{
	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	grant(10, 880);
	*m = new_task(0, 10);
	*a = new_task(1, 10);
	*b = new_task(2, 10);
	env.idle[1] = false;
	wake(*m);		/* the message thread on CPU 0 */
	run_for(1 * MS);
	(*a)->runnable = true;	/* select_cpu: CPU 1 idle, a is on its way to CPU 1's local queue */
	fdl_on_runnable(&(*a)->t, 100, true);
	fdl_on_select_idle(&(*a)->t, 1, env.now);
	env.idle[1] = false;
}

/* The end of the promise tests' scene: a arrives on CPU 1 and runs; m sleeps; CPU 0 takes b. */
static void a_arrives_b_taken(struct task *m, struct task *a, struct task *b)
{
	env.idle[1] = false;
	start(1, a);
	m->runnable = false;
	reschedule(0);
	CHECK("CPU 0 takes b", running[0] == b && running[1] == a, "CPU 0 runs %d, CPU 1 %d",
	      running[0] ? (int)(running[0] - tasks) : -1, running[1] ? (int)(running[1] - tasks) : -1);
}

/* The task test_cpu_takes_work_that_lands_after_its_take holds back, and where it goes back. */
static struct task_struct *landing_task;
static u64 landing_vtime;

static void land_insert(void)
{
	fake_insert_at(fake_dsq(10), 0, landing_task, landing_vtime);
}

/*
 * The other order of the same race: the insert lands after the dispatcher's take found the queue
 * empty but before its look at whether the work is on its way (fdl_in_flight). The look sees work
 * in the queue, so it is not "on its way"; the dispatcher takes again instead of going idle beside
 * it with its scan counted as having seen work it could not take, which fdl_on_idle does not look
 * at again (trace of 2026-11-28, 15.050059: CPU 1 idled 2.3 ms beside a queued worker).
 */
static void test_cpu_takes_work_that_lands_after_its_take(void)
{
	struct fake_dsq *q;
	struct task *a, *w;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	a = new_task(0, 10);
	w = new_task(1, 10);
	env.idle[1] = false;
	wake(a);		/* select_cpu: idle CPU 0 */
	run_for(1 * MS);
	wake(w);		/* no idle CPU: queued */
	q = fake_dsq(10);
	CHECK("context: w queued", running[0] == a && !running[1] && q->n == 1, "%d queued", q->n);
	if (q->n != 1)
		return;
	landing_vtime = q->vtime[0];
	landing_task = fake_remove_at(q, 0);	/* counted, not inserted yet */
	env.queued_any_hook = land_insert;	/* lands after the take, before the look */
	env.idle_kicks[1] = 0;
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);
	CHECK("CPU 1 takes w after all", env.local[1].n == 1 && env.local[1].task[0] == &w->p &&
	      !q->n, "%d local, %d queued, %d self-kicks", env.local[1].n, q->n, env.idle_kicks[1]);
	env.queued_any_hook = NULL;
}

/*
 * select_cpu gave idle CPU 1 a task (a) that has not reached its local queue yet. CPU 1, woken
 * for it, dispatches before it arrives, finds nothing (the promise: fdl_local_pending) and goes
 * idle again, its idle bit set. The waker's next wake-up (b) must not be bound to CPU 1 as well:
 * b would wait out a's whole spin there while CPU 0, once its waker sleeps, idles (trace of
 * 2026-11-28, 11.717520: a message thread's two workers both on CPU 0's local queue). b is queued;
 * CPU 0 takes it when the waker sleeps. CPU 1 is free again once a started, or once the promise
 * is older than FDL_LOCAL_WAIT_NS.
 */
static void test_cpu_promised_to_a_wakeup_is_not_bound_again(void)
{
	struct task *m, *a, *b;

	promise_cpu1(&m, &a, &b);
	env.cur_cpu = 1;	/* CPU 1 dispatches before a arrives, and goes idle again */
	fdl_on_dispatch(1, NULL, NULL);
	env.idle[1] = true;
	CHECK("CPU 1, promised to a, is not free", !fdl_idle_free(1, env.now), "free");
	env.cur_cpu = 0;
	wake(b);
	CHECK("b is queued, not bound to CPU 1", env_nr_queued(10) == 1 && !running[1],
	      "%d queued, CPU 1 runs %d", (int)env_nr_queued(10),
	      running[1] ? (int)(running[1] - tasks) : -1);
	a_arrives_b_taken(m, a, b);
	CHECK("CPU 1 is free again once a started", fdl_idle_free(1, env.now), "not free");
	fdl_on_select_idle(&a->t, 1, env.now);
	env.now += FDL_LOCAL_WAIT_NS;
	CHECK("a promise older than FDL_LOCAL_WAIT_NS holds nothing up", fdl_idle_free(1, env.now),
	      "not free");
}

/*
 * The previous task, still runnable, yields to work the scan put first; if that work cannot be
 * taken here (on its way to its queue, here), the previous task keeps the CPU for the shortest
 * slice, and the queues are looked at again then: it neither goes to idle still runnable nor
 * leaves the CPU idle beside it.
 */
static void test_prev_keeps_the_cpu_when_nothing_can_be_taken(void)
{
	struct fake_dsq *q;
	struct task *a, *w;

	reset(1);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(11, 100, 1 * MS, 500 * US);
	grant(11, 500);
	a = new_task(0, 10);
	w = new_task(1, 11);
	wake(a);
	run_for(2 * MS);
	/* w is counted and queued by ops.enqueue, its insert still on its way. */
	w->runnable = true;
	fdl_on_runnable(&w->t, 100, true);
	fdl_on_enqueue(&w->p, &w->t, FDL_ENQ_WAKEUP);
	q = fake_dsq(11);
	CHECK("context: a runs, w queued first", running[0] == a && q->n == 1, "CPU 0 runs %d, %d queued",
	      running[0] ? (int)(running[0] - tasks) : -1, q->n);
	if (q->n != 1)
		return;
	fake_remove_at(q, 0);
	a->p.slice = 0;		/* its slice ended: the kernel asks for the next task */
	env.cur_cpu = 0;
	fdl_on_dispatch(0, &a->p, &a->t);
	CHECK("a keeps the CPU for the shortest slice", a->p.slice == tun.min_slice_ns &&
	      env.local[0].n == 0 && env.stats.nr_prev_kept_untaken == 1 &&
	      env.stats.nr_dispatch_empty == 0, "slice %llu, %d local, %llu kept, %llu empty",
	      (u64)a->p.slice, env.local[0].n, (u64)env.stats.nr_prev_kept_untaken,
	      (u64)env.stats.nr_dispatch_empty);
	/* Still not there (counts that stay wrong): short slices FDL_INFLIGHT_RETRIES times only. */
	for (int k = 1; k < FDL_INFLIGHT_RETRIES; k++)
		fdl_on_dispatch(0, &a->p, &a->t);
	CHECK("short slices while the work may be on its way", a->p.slice == tun.min_slice_ns,
	      "slice %llu", (u64)a->p.slice);
	fdl_on_dispatch(0, &a->p, &a->t);
	CHECK("then a slice as usual", a->p.slice == tun.slice_ns, "slice %llu", (u64)a->p.slice);
}

/*
 * select_cpu put a worker on idle CPU 1's local queue; before it arrives there (the wake-up's
 * interrupt), CPU 1 is woken for another worker queued meanwhile. It leaves that one to the next
 * CPU that looks and runs its own: taking it, the first worker waited behind it, bound to CPU 1,
 * while CPU 0 idled (fdl_local_pending). Once per promise, and not for long.
 */
static void test_cpu_promised_to_a_wakeup_leaves_the_queues(void)
{
	struct task *m, *a, *b;

	promise_cpu1(&m, &a, &b);
	env.cur_cpu = 0;
	wake(b);		/* no idle CPU: b is queued */
	CHECK("context: b queued", env_nr_queued(10) == 1, "%d queued", (int)env_nr_queued(10));
	env.cur_cpu = 1;	/* CPU 1 is woken (a kick) before a arrives */
	fdl_on_dispatch(1, NULL, NULL);
	CHECK("CPU 1 leaves b in the queue for a", env_nr_queued(10) == 1 && !env.local[1].n &&
	      env.stats.nr_local_waits == 1, "%d queued, %d local, %llu local waits",
	      (int)env_nr_queued(10), env.local[1].n, (unsigned long long)env.stats.nr_local_waits);
	env.idle[1] = true;
	fdl_on_idle(1);
	CHECK("and does not wake itself for b", env.idle_kicks[1] == 0, "%d kicks",
	      env.idle_kicks[1]);
	a_arrives_b_taken(m, a, b);

	/* Once per promise: kicked a second time before its task arrives, the CPU takes queued work. */
	sleep_on(1);
	env.idle[1] = false;
	fdl_on_select_idle(&a->t, 1, env.now);
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);
	wake(m);
	fdl_on_dispatch(1, NULL, NULL);
	CHECK("a second look takes queued work", env.local[1].n == 1, "%d local", env.local[1].n);
	if (env.local[1].n != 1)
		return;
	start(1, task_of(fake_pop(&env.local[1])));
	sleep_on(1);
	env.idle[1] = false;

	/* Not for long: a promise older than FDL_LOCAL_WAIT_NS holds nothing up. */
	fdl_on_select_idle(&a->t, 1, env.now);
	env.now += FDL_LOCAL_WAIT_NS;
	sleep_on(0);
	env.idle[0] = false;	/* CPU 0 runs something else */
	wake(b);
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);
	CHECK("a stale promise holds nothing up", env.local[1].n == 1, "%d local", env.local[1].n);
}

/*
 * An idle CPU woken for queued work keeps its idle bit until it leaves idle: select_cpu must not
 * bind a waking task to it (fdl_idle_free), or the task waits behind that work while another CPU
 * may idle. Free again once it runs something, finds nothing, or after FDL_LOCAL_WAIT_NS.
 */
static void test_idle_cpu_woken_for_queued_work_is_not_bound(void)
{
	struct task *a, *b;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	a = new_task(0, 10);
	b = new_task(1, 10);
	env.idle[1] = false;	/* CPU 1 busy elsewhere; CPU 0 idle */
	CHECK("context: an idle CPU is free", fdl_idle_free(0, env.now), "not free");
	env.idle[0] = false;	/* CPU 0 busy: b's waker queues b and preempts CPU 0 for it */
	wake(b);		/* no idle CPU: b is queued */
	fdl_kick_for_queued(0, true, env.now);
	env.idle[0] = true;	/* CPU 0's task slept before b was queued: its idle bit is set */
	wake(a);
	CHECK("a is queued, not bound to CPU 0", !running[0] && !env.local[0].n && env_nr_queued(10) == 2,
	      "CPU 0 runs %d, %d local, %d queued", running[0] ? (int)(running[0] - tasks) : -1,
	      env.local[0].n, (int)env_nr_queued(10));
	reschedule(0);		/* CPU 0 takes the first of them; the other waits for the next CPU */
	CHECK("CPU 0 runs one of them, free again", running[0] && env_nr_queued(10) == 1 &&
	      fdl_idle_free(0, env.now), "CPU 0 runs %d, %d queued",
	      running[0] ? (int)(running[0] - tasks) : -1, (int)env_nr_queued(10));
	fdl_kick_for_queued(1, false, env.now);
	env.now += FDL_LOCAL_WAIT_NS;
	CHECK("a kick long past frees the CPU", fdl_idle_free(1, env.now), "not free");
	fdl_kick_for_queued(1, false, env.now);
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);	/* takes the one queued */
	fdl_kick_for_queued(1, false, env.now);
	fdl_on_dispatch(1, NULL, NULL);	/* finds nothing: its kick may still be on its way */
	CHECK("a CPU whose dispatch found nothing is not free yet", !fdl_idle_free(1, env.now),
	      "free");
}

/* A cgroup below parent (what ops.cgroup_init does for a deeper level). */
static void add_child(u64 cgref, u64 parent, u32 weight)
{
	env.cg_present[cgref] = true;
	env.cg[cgref] = (struct fdl_cgroup){
		.parent_cgref = parent, .level = env.cg[parent].level + 1, .weight = weight,
		.cpu_weight = weight, .top_cgref = env.cg[parent].top_cgref,
	};
}

/* cpu.max (and cpu.max.burst) written: what ops.cgroup_init and ops.cgroup_set_bandwidth do. */
static void limit(u64 cgref, u64 period_us, u64 quota_us, u64 burst_us)
{
	fdl_bw_set(&env.cg[cgref], period_us, quota_us, burst_us, env.now);
	if (env_nr_queued(FDL_DSQ_HOLD) > 0)
		fdl_hold_until(env.now, env.now);
}

static u64 ran(int first, int n)
{
	u64 c = 0;

	for (int i = first; i < first + n; i++)
		c += tasks[i].ran_ns;
	return c;
}

/* Two busy loops in each of cgroups a (tasks 0, 1), b (2, 3) and c (4, 5), all woken. */
static void two_hogs_each(u64 a, u64 b, u64 c)
{
	for (int i = 0; i < 2; i++) {
		wake(new_task(i, a));
		wake(new_task(2 + i, b));
		wake(new_task(4 + i, c));
	}
}

/*
 * cpu.max 20000 100000 on a cgroup of two hogs beside a fair cgroup of two: 0.2 CPU, whatever its
 * fair share (1 CPU); every period counted and throttled; its held tasks never wait longer than a
 * period and a tick; the fair cgroup takes the rest.
 */
static void test_quota_limits_a_cgroup(void)
{
	struct fdl_bw *bw;
	u64 lim, fair, worst = 0;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	limit(10, 100000, 20000, 0);
	for (int i = 0; i < 2; i++) {
		wake(new_task(i, 10));
		wake(new_task(2 + i, 20));
	}
	run_for(2000 * MS);
	lim = ran(0, 2);
	fair = ran(2, 2);
	bw = &env.cg[10].bw;
	for (u32 b = 0; b < FDL_LAT_BUCKETS; b++)	/* the longest wait for a CPU, in its bucket */
		if (env.cg[10].runq_lat[b])
			worst = b;
	printf("cpu.max 0.2 CPU: %llu ms of 2000 (fair cgroup %llu); periods %llu throttled %llu "
	       "(%llu ms); longest wait below %llu ms\n", lim / MS, fair / MS, bw->nr_periods,
	       bw->nr_throttled, bw->throttled_ns / MS, (1ULL << worst) / 1000);
	CHECK("a limited cgroup gets its quota (0.2 CPU +-5 %)", lim >= 380 * MS && lim <= 420 * MS,
	      "%llu ms", lim / MS);
	CHECK("the rest goes to the fair cgroup", fair >= 3500 * MS, "%llu ms", fair / MS);
	CHECK("every period counted (19-20)", bw->nr_periods >= 19 && bw->nr_periods <= 20, "%llu",
	      bw->nr_periods);
	CHECK("throttled in every period", bw->nr_throttled >= 19 && bw->nr_throttled <= 20, "%llu",
	      bw->nr_throttled);
	/*
	 * Throttled about 90 ms of each 100 ms period (two CPUs drain 20 ms in 10), on both CPUs'
	 * run queues, summed as the kernel sums them: about 180 ms per period.
	 */
	CHECK("throttled time summed over both held tasks' run queues (about 2 x 90 of 100 ms)",
	      bw->throttled_ns >= 3200 * MS && bw->throttled_ns <= 3800 * MS, "%llu ms",
	      bw->throttled_ns / MS);
	CHECK("a held task waits for the refill (64-131 ms) and no longer",
	      worst == 17, "waits up to %llu us", 1ULL << worst);
	/* Throttled no longer than a period and a tick (1 ms here): the refill releases it. */
	CHECK("a hog is off its CPU at most a period and a tick (about 90 ms)",
	      worst_off(0, 2) >= 80 * MS && worst_off(0, 2) <= 101 * MS, "%llu ms",
	      worst_off(0, 2) / MS);
	CHECK("no burst without burst", bw->nr_bursts == 0, "%llu", bw->nr_bursts);
}

/*
 * throttled_usec counts run queues as the kernel's does: one hog under cpu.max 20000 100000 waits on
 * one (about 80 ms of each period), and twelve hogs on two CPUs wait on both (about 2 x 90 ms), not
 * on twelve. Nothing stays counted as held once the limit is lifted.
 */
static void test_throttled_time_counts_run_queues(void)
{
	struct fdl_bw *bw = &env.cg[10].bw;
	u64 one, many;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	limit(10, 100000, 20000, 0);
	wake(new_task(0, 10));
	wake(new_task(1, 20));
	wake(new_task(2, 20));
	run_for(1000 * MS);
	one = bw->throttled_ns;
	reset(2);
	add_cgroup(10, 100, 0, 0);
	limit(10, 100000, 20000, 0);
	for (int i = 0; i < 12; i++)
		wake(new_task(i, 10));
	run_for(1000 * MS);
	many = bw->throttled_ns;
	limit(10, 0, 0, 0);
	run_for(10 * MS);
	printf("throttled time in 1 s: one hog %llu ms, twelve hogs %llu ms (%lld held after the lift)\n",
	       one / MS, many / MS, bw->nr_held);
	CHECK("one hog: throttled about 80 of each 100 ms", one >= 700 * MS && one <= 850 * MS,
	      "%llu ms", one / MS);
	CHECK("twelve hogs on two CPUs: two run queues, about 2 x 90 of each 100 ms",
	      many >= 1600 * MS && many <= 1850 * MS, "%llu ms", many / MS);
	CHECK("a lifted limit holds nobody", bw->nr_held == 0, "%lld", bw->nr_held);
}

/*
 * A deadline container under a CPU limit (issue 12): within its quota it keeps its deadline order
 * (a periodic task of 0.1 CPU beside four fair hogs starts within its 2 ms deadline_rr under a
 * limit of 0.3), and a quota smaller than its guarantee wins: granted a whole CPU, a container of
 * hogs gets its 0.05 CPU limit and no more.
 */
static void test_deadline_container_under_a_quota(void)
{
	struct task *k;
	u64 got;

	reset(2);
	add_cgroup(10, 100, 2 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	grant(10, 1000);
	limit(10, 100000, 30000, 0);
	k = periodic(0, 10, 1 * MS, 10 * MS);
	for (int i = 1; i < 5; i++)
		wake(new_task(i, 20));
	run_for(2000 * MS);
	printf("deadline container under cpu.max 0.3: periodic task worst delay %llu us over %llu "
	       "wake-ups, %llu late of %llu starts\n", k->max_delay_ns / US, k->nr_delays,
	       env.cg[10].ent.nr_misses, env.cg[10].ent.nr_picks);
	CHECK("within its quota it keeps its deadline order (starts within deadline_rr + a tick)",
	      k->nr_delays > 150 && k->max_delay_ns <= 3 * MS, "%llu wake-ups, worst %llu us",
	      k->nr_delays, k->max_delay_ns / US);

	reset(2);
	add_cgroup(10, 100, 2 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	grant(10, 1000);
	limit(10, 100000, 5000, 0);
	for (int i = 0; i < 2; i++) {
		wake(new_task(i, 10));
		wake(new_task(2 + i, 20));
	}
	run_for(2000 * MS);
	got = ran(0, 2);
	printf("deadline container granted 1 CPU under cpu.max 0.05: %llu ms of 2000\n", got / MS);
	CHECK("a quota smaller than the guarantee wins (0.05 CPU +-10 %)",
	      got >= 90 * MS && got <= 110 * MS, "%llu ms", got / MS);
}

/*
 * A limit binds the subtree: two children of a parent limited to half a CPU share that half
 * (here by their weights, 3:1), and a tighter limit on a child wins over its parent's.
 */
static void test_parent_limit_binds_children(void)
{
	u64 a, b, c;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_child(11, 10, 300);
	add_child(12, 10, 100);
	add_cgroup(20, 100, 0, 0);
	limit(10, 100000, 50000, 0);
	two_hogs_each(11, 12, 20);
	run_for(2000 * MS);
	a = ran(0, 2);
	b = ran(2, 2);
	printf("parent limit 0.5 CPU: children %llu + %llu ms of 2000, fair %llu\n", a / MS, b / MS,
	       ran(4, 2) / MS);
	CHECK("the children together get the parent's quota (+-5 %)",
	      a + b >= 950 * MS && a + b <= 1050 * MS, "%llu ms", (a + b) / MS);
	CHECK("... split by their weights (3:1 +-20 %)", a >= 2.4 * b && a <= 3.6 * b,
	      "%llu : %llu ms", a / MS, b / MS);

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_child(11, 10, 100);
	add_child(12, 10, 100);
	limit(10, 100000, 100000, 0);
	limit(12, 100000, 20000, 0);
	for (int i = 0; i < 2; i++) {
		wake(new_task(i, 11));
		wake(new_task(2 + i, 12));
	}
	run_for(2000 * MS);
	b = ran(0, 2);
	c = ran(2, 2);
	printf("nested limits: pod 1 CPU, container 0.2 CPU: container %llu ms, sibling %llu ms\n",
	       c / MS, b / MS);
	CHECK("the tighter limit (the child's 0.2 CPU) wins", c >= 380 * MS && c <= 420 * MS,
	      "%llu ms", c / MS);
	CHECK("the parent's 1 CPU binds the rest", b + c >= 1900 * MS && b + c <= 2100 * MS,
	      "%llu ms", (b + c) / MS);
}

/*
 * Run warm_ns, then 2 s counted from zero for tasks 0..n-1: *a gets what tasks 0 and 1 ran in
 * the 2 s, *b what tasks 2 and 3 ran.
 */
static void ran_over_2s(u64 warm_ns, int n, u64 *a, u64 *b)
{
	run_for(warm_ns);
	for (int i = 0; i < n; i++)
		tasks[i].ran_ns = 0;
	run_for(2000 * MS);
	*a = ran(0, 2);
	*b = ran(2, 2);
}

/*
 * A throttled cgroup leaves its parent's weights, as the kernel's throttled cfs_rq leaves its
 * parent's load: pod P (weight 100) holds container A, limited to 0.1 CPU, and container B, beside
 * cgroup Q at the root (weight 100 each, two hogs each). P and Q share the machine 1:1, so B gets
 * P's CPU less A's 0.1. While A's held tasks kept A's weight in P's sum, B ran at half of P's share
 * beside an A that could not use its half: B, a deadline container (its own place in the fair
 * order, at its share of the machine), ran 0.63 CPU and Q 1.27, not 0.9 and 1.0; with A at weight
 * 300 beside B's 100, 0.38 CPU. (At 10000 beside 1 B still gets 0.6 CPU: while A runs, the 5 ms
 * of each period its quota allows, B's share is 1/10001 of the pod's and what B runs then moves its
 * place far on. The flattened order has no level for P where that would stay inside the pod; at
 * ratios up to 10:1 it does not show, at 30:1 B gets 0.71 CPU.)
 */
static void held_run(u32 wa, u32 wb, u64 rr_b, u64 *a, u64 *b, u64 *q)
{
	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_child(11, 10, wa);
	add_child(12, 10, wb);
	add_cgroup(20, 100, 0, 0);
	limit(11, 100000, 10000, 0);
	if (rr_b)
		fdl_cgroup_set_deadlines(12, rr_b, 0, 0);
	two_hogs_each(11, 12, 20);
	ran_over_2s(1000 * MS, 6, a, b);
	*q = ran(4, 2);
}

/*
 * The hold and release of a task race with its own quiescent and runnable on other CPUs (the
 * dispatcher that holds it, the hold timer that releases it): in every order of those whole
 * steps, a stale hold or release included, the task is counted in its cgroup exactly while it is
 * runnable and not held, and its cgroup's sums return to 0 once it sleeps.
 */
static bool held_sums_are(const char *order, struct task *k, s64 nr, s64 wsum)
{
	struct fdl_cgroup *cg = &env.cg[10];
	bool ok = cg->nr_active == nr && cg->wsum == wsum;

	CHECK(order, ok, "nr_active %lld wsum %lld (want %lld, %lld), acct_cgref %llx",
	      (long long)cg->nr_active, (long long)cg->wsum, (long long)nr, (long long)wsum,
	      (unsigned long long)k->t.acct_cgref);
	return ok;
}

static void test_hold_and_release_in_any_order(void)
{
	struct task *k;
	u64 now;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	k = new_task(0, 10);
	now = env.now;
	fdl_on_runnable(&k->t, 100, true);
	held_sums_are("runnable: counted", k, 1, 100);
	fdl_task_hold(&k->t, 10, now);
	held_sums_are("held: out of the sums", k, 0, 0);
	fdl_task_hold(&k->t, 10, now);
	held_sums_are("held twice: out once", k, 0, 0);
	fdl_on_quiescent(&k->t);
	held_sums_are("quiescent while held: not taken out again", k, 0, 0);
	fdl_task_unhold(&k->t, now);
	held_sums_are("a stale release after quiescent: nothing", k, 0, 0);
	fdl_task_hold(&k->t, 10, now);
	held_sums_are("a stale hold after quiescent: nothing", k, 0, 0);

	fdl_on_runnable(&k->t, 100, true);
	fdl_task_hold(&k->t, 10, now);
	fdl_task_unhold(&k->t, now);
	held_sums_are("held, released: counted again", k, 1, 100);
	fdl_task_unhold(&k->t, now);
	held_sums_are("released twice: counted once", k, 1, 100);
	fdl_on_quiescent(&k->t);
	held_sums_are("released, then quiescent: 0", k, 0, 0);

	fdl_on_runnable(&k->t, 100, true);
	fdl_task_hold(&k->t, 10, now);
	fdl_on_quiescent(&k->t);
	fdl_on_runnable(&k->t, 100, true);
	held_sums_are("held, requeued (quiescent, runnable): counted", k, 1, 100);
	fdl_task_unhold(&k->t, now);
	held_sums_are("... and the hold timer's stale release after it: counted once", k, 1, 100);
	fdl_on_quiescent(&k->t);
	held_sums_are("then asleep: 0", k, 0, 0);
	fdl_bw_unheld(&k->t, now);
	CHECK("no task counted held by the limit", env.cg[10].bw.nr_held == 0, "%lld",
	      (long long)env.cg[10].bw.nr_held);
}

static void test_throttled_cgroup_leaves_its_parents_weights(void)
{
	u64 a, b, q;

	held_run(100, 100, 0, &a, &b, &q);
	printf("pod of A (cpu.max 0.1 CPU) and B beside Q, 2 s: A %llu ms, B %llu ms, Q %llu ms\n",
	       a / MS, b / MS, q / MS);
	CHECK("A gets its limit (0.1 CPU +-10 %)", a >= 180 * MS && a <= 220 * MS, "%llu ms", a / MS);
	CHECK("B gets the pod's CPU less A's limit (0.9 CPU -10 %)", b >= 1620 * MS, "%llu ms",
	      b / MS);
	CHECK("Q gets its half, no more (1 CPU +10 %)", q <= 2200 * MS, "%llu ms", q / MS);
	held_run(100, 100, 20 * MS, &a, &b, &q);
	printf("the same, B a deadline container (20 ms): A %llu ms, B %llu ms, Q %llu ms\n",
	       a / MS, b / MS, q / MS);
	CHECK("B, a deadline container, gets the pod's CPU less A's limit (0.9 CPU -10 %)",
	      b >= 1620 * MS, "%llu ms", b / MS);
	held_run(300, 100, 20 * MS, &a, &b, &q);
	printf("the same, A weight 300 and B weight 100: A %llu ms, B %llu ms, Q %llu ms\n",
	       a / MS, b / MS, q / MS);
	CHECK("with A at 300 beside B's 100, B gets what A's limit leaves (0.9 CPU -10 %)",
	      b >= 1620 * MS, "%llu ms", b / MS);
}

/*
 * cpu.idle (ops.cgroup_set_idle): an idle cgroup of two hogs beside one at cpu.weight 100 weighs
 * FDL_IDLE_WEIGHT, 1/101 of the machine (EEVDF's idle weight: 0.3/100.3), and alone it still takes
 * the whole machine; back at cpu.idle 0 it weighs its cpu.weight again; a guarantee's boost rules
 * over it. Before, scx_fdl had no ops.cgroup_set_idle and an idle cgroup took half.
 */
static void test_idle_cgroup_weighs_the_least(void)
{
	u64 idle, other, alone;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	fdl_cgroup_set_cpu_idle(&env.cg[10], true);
	for (int i = 0; i < 2; i++)
		wake(new_task(i, 10));
	run_for(1000 * MS);
	alone = ran(0, 2);
	for (int i = 0; i < 2; i++)
		wake(new_task(2 + i, 20));
	ran_over_2s(500 * MS, 4, &idle, &other);
	printf("cpu.idle 1 beside cpu.weight 100, 2 s on 2 CPUs: idle %llu ms, other %llu ms (alone "
	       "before: %llu of 2000 ms); effective weight %u\n", idle / MS, other / MS, alone / MS,
	       env.cg[10].weight);
	CHECK("an idle cgroup weighs FDL_IDLE_WEIGHT", env.cg[10].weight == FDL_IDLE_WEIGHT, "%u",
	      env.cg[10].weight);
	CHECK("alone, an idle cgroup takes the whole machine", alone >= 1950 * MS, "%llu ms",
	      alone / MS);
	CHECK("beside cpu.weight 100 it gets about 1/101 (at most 2 %)", idle <= 80 * MS, "%llu ms",
	      idle / MS);
	CHECK("... and the other cgroup the rest", other >= 3900 * MS, "%llu ms", other / MS);
	fdl_cgroup_set_cpu_idle(&env.cg[10], false);
	ran_over_2s(500 * MS, 4, &idle, &other);
	printf("cpu.idle back to 0: %llu ms and %llu ms\n", idle / MS, other / MS);
	CHECK("at cpu.idle 0 it weighs its cpu.weight again (1:1 +-10 %)",
	      idle >= 1800 * MS && idle <= 2200 * MS, "%llu : %llu ms", idle / MS, other / MS);
	fdl_cgroup_set_cpu_idle(&env.cg[10], true);
	fdl_cgroup_set_boost(&env.cg[10], 300);
	CHECK("a guarantee's boost rules over cpu.idle", env.cg[10].weight == 300, "%u",
	      env.cg[10].weight);
	fdl_cgroup_set_boost(&env.cg[10], 0);
	CHECK("without the boost, idle again", env.cg[10].weight == FDL_IDLE_WEIGHT, "%u",
	      env.cg[10].weight);

	/* Back from idle, the kernel's default weight (cpu.weight reads 100), not the one before. */
	fdl_cgroup_set_cpu_idle(&env.cg[10], false);
	fdl_cgroup_set_cpu_weight(&env.cg[10], 300);
	fdl_cgroup_set_cpu_idle(&env.cg[10], true);
	fdl_cgroup_set_cpu_idle(&env.cg[10], false);
	CHECK("back from idle at cpu.weight 100, as the kernel resets it (not 300)",
	      env.cg[10].weight == 100 && env.cg[10].cpu_weight == 100, "%u", env.cg[10].weight);

	/* A deadline container's place in the fair order moves at its unboosted weight: idle too. */
	reset(2);
	add_cgroup(10, 100, 20 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	fdl_cgroup_set_cpu_idle(&env.cg[10], true);
	two_hogs_each(10, 20, 20);
	ran_over_2s(500 * MS, 6, &idle, &other);
	printf("an idle deadline container (20 ms) beside a cgroup at 100: %llu ms of 4000\n", idle / MS);
	CHECK("an idle deadline container gets about 1/101 too (at most 2 %)", idle <= 80 * MS,
	      "%llu ms", idle / MS);
}

/*
 * Burst: a job that runs 35 ms every 200 ms under cpu.max 20000 100000 uses 17.5 % on average,
 * but each run needs more than one period's quota. Without burst it is throttled in every run;
 * with cpu.max.burst = 20 ms the quota saved in its idle period carries it through.
 */
static u64 bursty_run(u64 burst_us, u64 *bursts, u64 *worst_late)
{
	struct task *k;
	u64 throttled;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	limit(10, 100000, 20000, burst_us);
	k = periodic(0, 10, 35 * MS, 200 * MS);
	run_for(1000 * MS);	/* the pool starts with one quota: measure once it carries over */
	throttled = env.cg[10].bw.nr_throttled;
	*bursts = env.cg[10].bw.nr_bursts;
	k->late_ns = 0;
	run_for(2000 * MS);
	*bursts = env.cg[10].bw.nr_bursts - *bursts;
	*worst_late = k->late_ns;
	return env.cg[10].bw.nr_throttled - throttled;
}

static void test_burst_carries_unused_quota(void)
{
	u64 b0, b1, l0, l1, t0 = bursty_run(0, &b0, &l0), t1 = bursty_run(20000, &b1, &l1);

	printf("bursty job, 2 s: throttled %llu times without burst (worst lateness %llu ms), %llu "
	       "with burst 20 ms (%llu ms; %llu bursts)\n", t0, l0 / MS, t1, l1 / MS, b1);
	CHECK("without burst every run is throttled", t0 >= 9, "%llu", t0);
	CHECK("no burst counted without burst", b0 == 0, "%llu", b0);
	CHECK("with burst none is", t1 == 0, "%llu", t1);
	CHECK("... and the runs beyond the quota are counted as bursts", b1 >= 9, "%llu", b1);
	CHECK("without burst a run waits for the next period", l0 >= 60 * MS, "%llu ms", l0 / MS);
	CHECK("with burst it does not", l1 <= 2 * MS, "%llu ms", l1 / MS);
}

/*
 * A job whose work per run is a whole number of quotas (63 ms every 400 ms under 21 ms per 100 ms,
 * so that the quota runs out between ticks) beside its own messenger (1 ms per run), on the VM's
 * 4 ms tick. The kernel stops a task that ran
 * out of quota at its next tick and takes the overrun from the next period: the job often finishes
 * within three periods. Stopped exactly at the quota by a deadline timer, it never did (its
 * messenger's millisecond always pushed it into a fourth): nr_throttled / nr_periods 0.74 in the
 * VM against the kernel's 0.58 (bench/burst.sh).
 */
static void test_quota_runs_out_at_a_tick(void)
{
	struct fdl_bw *bw = &env.cg[10].bw;
	u64 p0, t0;
	double ratio;

	reset(2);
	tick_ms = 4;
	add_cgroup(10, 100, 0, 0);
	limit(10, 100000, 21000, 0);
	periodic(0, 10, 63 * MS, 400 * MS);
	periodic(1, 10, 1 * MS, 400 * MS);
	run_for(1000 * MS);
	p0 = bw->nr_periods;
	t0 = bw->nr_throttled;
	run_for(4000 * MS);
	ratio = (double)(bw->nr_throttled - t0) / (double)(bw->nr_periods - p0);
	printf("63 ms of work every 400 ms under 21 ms per 100 ms, 4 ms tick: throttled %llu of %llu "
	       "periods (%.2f), %u timer preemptions\n", bw->nr_throttled - t0, bw->nr_periods - p0,
	       ratio, env.timer_fires[0] + env.timer_fires[1]);
	CHECK("a quota runs out at a tick, as the kernel's: throttled in fewer than 3 of 4 periods",
	      ratio < 0.7, "%.2f", ratio);
}

/*
 * Guarantees that overcommit the machine (two deadline containers granted 0.95 CPU each, what the
 * control plane grants for 1.5 each on 2 CPUs less a 5 % floor) beside a fair cgroup, all at
 * cpu.weight 100, two hogs each. Fair work keeps its weighted share of the machine (1/3 of 2
 * CPUs): the guarantees' budgets are scaled into what that leaves (1.33 CPUs, 0.67 each). With one
 * container alone beside fair work (0.95 fits into 2 - 1): its whole guarantee.
 */
/*
 * On 2 CPUs, a deadline container (2 ms) of three hogs guaranteed milli_cpus / 1000 CPUs beside a
 * fair cgroup of three hogs at fair_weight, for 4 s: what each ran, into *a and *f.
 */
static void guarantee_beside_fair(u64 milli_cpus, u32 fair_weight, u64 *a, u64 *f)
{
	reset(2);
	add_cgroup(10, 100, 2 * MS, 0);
	add_cgroup(20, fair_weight, 0, 0);
	grant(10, milli_cpus);
	for (int i = 0; i < 3; i++) {
		wake(new_task(i, 10));
		wake(new_task(3 + i, 20));
	}
	run_for(4000 * MS);
	*a = ran(0, 3);
	*f = ran(3, 3);
}

static void test_fair_share_protected_from_overcommitted_guarantees(void)
{
	u64 a, b, f;

	reset(2);
	add_cgroup(10, 100, 2 * MS, 0);
	add_cgroup(11, 100, 2 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	grant(10, 950);
	grant(11, 950);
	for (int i = 0; i < 2; i++) {
		wake(new_task(i, 10));
		wake(new_task(2 + i, 11));
		wake(new_task(4 + i, 20));
	}
	run_for(4000 * MS);
	a = ran(0, 2);
	b = ran(2, 2);
	f = ran(4, 2);
	printf("overcommitted guarantees (0.95 + 0.95 granted): containers %llu / %llu ms, fair %llu ms of 8000\n",
	       a / MS, b / MS, f / MS);
	CHECK("fair work keeps its weighted share (1/3 of 2 CPUs, -10 %)", f >= 2400 * MS, "%llu ms",
	      f / MS);
	CHECK("the containers share the rest evenly (+-15 %)", a * 100 >= b * 85 && b * 100 >= a * 85,
	      "%llu / %llu ms", a / MS, b / MS);

	guarantee_beside_fair(1400, 100, &a, &f);
	printf("a guarantee of 1.4 CPUs beside fair work of the same weight: %llu ms, fair %llu ms of 8000\n",
	       a / MS, f / MS);
	CHECK("a guarantee above the fair share is capped where fair work keeps its share (1 CPU)",
	      a >= 3600 * MS && a <= 4400 * MS && f >= 3600 * MS, "%llu / %llu ms", a / MS, f / MS);

	guarantee_beside_fair(1000, 300, &a, &f);
	printf("a guarantee of 1 CPU beside fair work of 3x its weight: %llu ms, fair %llu ms of 8000\n",
	       a / MS, f / MS);
	CHECK("... fair work keeps 3/4 (1.5 CPUs, -10 %)", f >= 5400 * MS, "%llu ms", f / MS);
}

/*
 * Fair work's protected share is reckoned beside every guaranteed container, the sleeping ones'
 * too: their budgets are earned while they sleep. On 2 CPUs, the 4 ms container (wake-up 2 ms,
 * 0.88 CPU guaranteed) runs two workers (1 ms every 5 ms) and a message-thread-like task (0.1 ms
 * every 5 ms) beside three fair tasks of a cgroup at weight 300 (6 ms every 12 ms: 1.5 CPUs of
 * demand) while the 20 ms container (0.88 guaranteed) sleeps. Fair work's share beside both
 * containers is 300 / 500 (1.2 CPUs); counted beside the running one alone it was 300 / 400
 * (1.5 CPUs), more than fair work used, so its budget never ran out, it kept its first-tier claim
 * with a bucket late from the bursts, and the 4 ms container's tasks waited out fair work's
 * slices (the VM's spin1 cell beside hackbench: 2 % of its starts late, mostly its message thread).
 */
static void test_protected_share_counts_sleeping_guarantees(void)
{
	u64 picks, misses, fair, worst = 0, want = fdl_fair_protected(300, 200, 50, 2);
	int i;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	add_cgroup(11, 100, 20 * MS, 0);
	add_cgroup(20, 300, 0, 0);
	grant(10, 880);
	grant(11, 880);
	probe_pair(0, 10, 1 * MS, 5 * MS);
	periodic(2, 10, 100 * US, 5 * MS);
	for (i = 3; i < 6; i++)
		periodic(i, 20, 6 * MS, 12 * MS);
	run_for(1000 * MS);	/* fair work's first budget, full, runs out */
	for (i = 0; i < 3; i++)
		tasks[i].max_delay_ns = 0;
	picks = env.cg[10].ent.nr_picks;
	misses = env.cg[10].ent.nr_misses;
	fair = ran(3, 3);
	run_for(2000 * MS);
	fair = ran(3, 3) - fair;
	picks = env.cg[10].ent.nr_picks - picks;
	misses = env.cg[10].ent.nr_misses - misses;
	for (i = 0; i < 3; i++)
		worst = tasks[i].max_delay_ns > worst ? tasks[i].max_delay_ns : worst;
	printf("protected share beside a sleeping guarantee: %llu.%03llu CPUs (want %llu.%03llu), "
	       "4 ms container worst delay %llu us, %llu misses of %llu starts, fair work %llu ms of 4000\n",
	       fdl.fair.budget_rate >> FDL_SHARE_SHIFT,
	       ((fdl.fair.budget_rate & (FDL_SHARE_ONE - 1)) * 1000) >> FDL_SHARE_SHIFT,
	       want >> FDL_SHARE_SHIFT, ((want & (FDL_SHARE_ONE - 1)) * 1000) >> FDL_SHARE_SHIFT,
	       worst / US, misses, picks, fair / MS);
	CHECK("fair work's protected bandwidth counts the sleeping guarantee (1.2 CPUs)",
	      fdl.fair.budget_rate == want, "%llu vs %llu", (u64)fdl.fair.budget_rate, want);
	CHECK("the 4 ms container's tasks start within its wake-up deadline (2 ms)",
	      worst <= 2 * MS, "worst %llu us", worst / US);
	CHECK("fewer than 1 % of its starts are late", misses * 100 < picks, "%llu of %llu", misses,
	      picks);
	CHECK("fair work keeps its protected share (1.2 CPUs, -10 %)", fair >= 2160 * MS, "%llu ms",
	      fair / MS);
}

/*
 * The matrix's cell of four workers per probe (`t4`: 3 ms every 23-25 ms) in 10 and 11 (deadline
 * containers granted 0.88 CPU each when with_dl) and 12 (without parameters), beside two hogs in
 * 20, under --fair-protection protect, run for half a second: tasks 0-3 the workers of 10, 4-7 of
 * 11, 8-11 of 12, 12 and 13 the hogs.
 */
static void t4_cell(bool with_dl, u32 protect)
{
	int i;

	probe_cgroups(with_dl, 880);
	tun.fair_protect = protect;
	for (i = 0; i < 4; i++) {
		periodic(i, 10, 3 * MS, 23 * MS);
		periodic(4 + i, 11, 3 * MS, 24 * MS);
		periodic(8 + i, 12, 3 * MS, 25 * MS);
	}
	wake(new_task(12, 20));
	wake(new_task(13, 20));
	run_for(500 * MS);
}

/*
 * The fair clock and the cgroups that run: the matrix's cell of four workers per probe (3 ms every
 * 23-25 ms) within guarantees of 0.88 CPU, beside an antagonist of two hogs (CPU-bound, so its tasks
 * run rather than wait). The guaranteed containers run ahead of fair work and their cgroup virtual
 * time runs ahead to the starvation window's edge; the cgroup without parameters (12) sleeps
 * between its bursts and wakes at most a --wakeup-lag-us credit per task woken (up to one per
 * CPU) behind the fair clock. Each returns
 * cgroup 12's CPU time and the hogs' over the run into *cfs and *hogs (ms), and the p99 of its
 * spin lateness; *behind how far the fair clock got ahead of the hogs' cgroup virtual time.
 */
static u64 clock_run(bool with_dl, u64 *cfs, u64 *hogs, u64 *behind)
{
	u64 b;
	int i;

	t4_cell(with_dl, FDL_FAIR_PROTECT_WEIGHTED);
	for (i = 8; i < 12; i++)
		tasks[i].nr_lates = 0;
	*cfs = ran(8, 4);
	*hogs = ran(12, 2);
	/* How far the fair clock got ahead of the hogs' cgroup, sampled every millisecond. */
	*behind = 0;
	for (i = 0; i < 3000; i++) {
		run_for(1 * MS);
		b = fdl_time_before(env.cg[20].cvtime, fdl.cvtime_now) ? fdl.cvtime_now - env.cg[20].cvtime : 0;
		*behind = b > *behind ? b : *behind;
	}
	*cfs = (ran(8, 4) - *cfs) / MS;
	*hogs = (ran(12, 2) - *hogs) / MS;
	return pct_late(8, 4, 99);
}

/*
 * A container's wake credit (fdl_container_wake): what it earned asleep, up to one wakeup_lag_ns
 * at its share for each task that wakes in it while it is active, up to one per CPU (here 2), as
 * EEVDF keeps a lag for a cgroup's entity on each CPU. Cgroup 10's tasks slept while cgroup 20's
 * busy loop ran 500 ms: its first task wakes it one credit behind the fair clock, its second two,
 * its third no further; a task created in it (not woken) takes none. A cgroup that earned 1.33
 * credits asleep gets no more than that; one that went to sleep and woke again starts afresh.
 */
static void test_container_wake_credit_per_task_up_to_the_cpus(void)
{
	u64 lag, behind[3], created;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	wake(new_task(0, 20));
	run_for(500 * MS);
	lag = fdl_vtime_delta(tun.wakeup_lag_ns, fdl_cgroup_cv_share(&env.cg[10]));
	fdl_on_runnable(&new_task(1, 10)->t, 100, true);
	behind[0] = fdl.cvtime_now - env.cg[10].cvtime;
	fdl_on_runnable(&new_task(2, 10)->t, 100, false);
	created = fdl.cvtime_now - env.cg[10].cvtime;
	CHECK("a task created in it is counted all the same (members, weight)",
	      env.cg[10].nr_active == 2 && *fdl_wsum(&env.cg[10]) == 200,
	      "%lld members, weight %lld", (long long)env.cg[10].nr_active,
	      (long long)*fdl_wsum(&env.cg[10]));
	for (int i = 1; i < 3; i++) {
		fdl_on_runnable(&new_task(2 + i, 10)->t, 100, true);
		behind[i] = fdl.cvtime_now - env.cg[10].cvtime;
	}
	printf("container wake credit: %llu / %llu / %llu us of cgroup virtual time behind the fair "
	       "clock after 1 / 2 / 3 tasks woke (one credit %llu us; %llu after a task created)\n",
	       behind[0] / US, behind[1] / US, behind[2] / US, lag / US, created / US);
	CHECK("one credit for the first task, two for the second, no more for a third on 2 CPUs",
	      behind[0] == lag && behind[1] == 2 * lag && behind[2] == 2 * lag,
	      "%llu / %llu / %llu us, credit %llu us", behind[0] / US, behind[1] / US,
	      behind[2] / US, lag / US);
	CHECK("a task created in it takes no credit", created == lag, "%llu us, credit %llu us",
	      created / US, lag / US);

	/* All of cgroup 10's tasks sleep, one wakes at once: one credit, and a fresh reserve of 0. */
	for (int i = 1; i < 5; i++)
		fdl_on_quiescent(&tasks[i].t);
	env.cg[10].cvtime = fdl.cvtime_now;
	fdl_on_runnable(&tasks[1].t, 100, true);
	fdl_on_runnable(&tasks[3].t, 100, true);
	CHECK("woken again at the clock: no credit left from the last time",
	      env.cg[10].cvtime == fdl.cvtime_now && !env.cg[10].cv_reserve, "%llu us behind",
	      (fdl.cvtime_now - env.cg[10].cvtime) / US);

	/* Cgroup 30 earned 1.33 credits asleep. */
	add_cgroup(30, 100, 0, 0);
	env.cg[30].cvtime = fdl.cvtime_now - lag - lag / 3;
	fdl_on_runnable(&new_task(5, 30)->t, 100, true);
	fdl_on_runnable(&new_task(6, 30)->t, 100, true);
	CHECK("no more than it earned asleep", fdl.cvtime_now - env.cg[30].cvtime == lag + lag / 3,
	      "%llu us behind, earned %llu us", (fdl.cvtime_now - env.cg[30].cvtime) / US,
	      (lag + lag / 3) / US);
}

/*
 * The matrix's overcommit load: three probes (two workers each, spin 3 ms, periods 23-25 ms) in a
 * 4 ms and a 20 ms container granted 0.29 CPU each (shares 300) and in cgroup 12 without
 * parameters, beside four busy loops in cgroup 20, on 2 CPUs. Each burst of cgroup 12 is 6 ms of
 * CPU time; with one 3 ms credit as a whole it was ahead of the busy loops' cgroup mid-burst, and
 * a worker that a container preempted waited behind the busy loops (the VM: 585 ms of their CPU in
 * 12 s while its workers waited, p99 0.70-0.86x EEVDF's where scx_flash's was 0.39-0.57x).
 */
static void test_parallel_burst_beside_busy_loops(void)
{
	u64 p99, fair_p99, hogs;

	probe_cgroups(true, 293);
	probe_wakes = true;
	tick_ms = 4;
	probe_pair(0, 10, 3 * MS, 23 * MS);
	probe_pair(2, 11, 3 * MS, 24 * MS);
	probe_pair(4, 12, 3 * MS, 25 * MS);
	for (int i = 6; i < 10; i++)
		wake(new_task(i, 20));
	run_for(6000 * MS);
	p99 = pct_late(4, 2, 99);
	hogs = ran(6, 4) / MS;
	fair_p99 = pct_late(0, 4, 99);
	printf("parallel burst beside busy loops: cgroup without parameters p99 lateness %llu us "
	       "(the containers' %llu us), busy loops %llu ms of 12000\n", p99 / US, fair_p99 / US,
	       hogs);
	/* Before: 10 ms (6 ms since; the containers' 3 ms is a spin behind the other's). */
	CHECK("the cgroup without parameters: p99 lateness within two spins", p99 <= 6 * MS,
	      "%llu us", p99 / US);
	CHECK("the busy loops keep what the probes leave (at least 0.9 of 2 CPUs less 3 x 0.26)",
	      hogs * 10 >= (12000 - 3 * 6 * 6000 / 24) * 9, "%llu ms", hogs);
}

/*
 * A deadline container whose tasks may run on one CPU only (a pod given CPU 1 by the kubelet's
 * static CPU manager, bench/scenarios/pinned.toml), within its guarantee, beside two busy loops
 * bound to that CPU, while fair work leaves the other CPU idle most of the time. Fair work then
 * uses less than its bandwidth over the machine, so its bucket stays at its floor, deadline_rr
 * behind vdt, and within its protected share (which it also is) it stood in the first tier at
 * that key: every wake-up of the container (vdt + 2 ms) came after it, and waited for a busy
 * loop's slice (in the VM, 21 % of the container's starts late, its message thread up to 8 ms).
 * Fair work that has held its CPU without sleeping as long as a loan lasts (fdl_cpu_bound) is
 * not late there, whatever its bucket says about the machine: to a waker that may not use the
 * idle CPUs it is preempted as work of the second tier.
 */
static void test_pinned_container_takes_its_cpu_from_busy_loops(void)
{
	struct fdl_entity *c = &env.cg[10].ent;
	u64 p99, hogs, fair_p99;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	grant(10, 293);
	add_cgroup(12, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	step_ns = 100 * US;
	tick_ms = 4;
	probe_wakes = true;
	jitter_us = 2500;
	probe_pair(0, 10, 1 * MS, 10 * MS);
	tasks[0].p.allowed = tasks[1].p.allowed = 1u << 1;
	probe_pair(2, 12, 1 * MS, 10 * MS);
	for (int i = 4; i < 6; i++) {
		new_task(i, 20)->p.allowed = 1u << 1;
		wake(&tasks[i]);
	}
	run_for(8000 * MS);
	p99 = pct_late(0, 2, 99);
	fair_p99 = pct_late(2, 2, 99);
	hogs = ran(4, 2) / MS;
	printf("a container bound to CPU 1 beside busy loops bound there: p99 lateness %llu us "
	       "(the cgroup without parameters %llu us), %llu of %llu wake-ups late, busy loops "
	       "%llu ms of 8000\n", p99 / US, fair_p99 / US, c->nr_wake_misses, c->nr_wake_starts,
	       hogs);
	CHECK("the container bound to one CPU: under 1 % of its wake-ups late",
	      c->nr_wake_starts > 1000 && c->nr_wake_misses * 100 < c->nr_wake_starts,
	      "%llu of %llu", c->nr_wake_misses, c->nr_wake_starts);
	/* Its floor: the other worker's 1 ms spin, on the one CPU both may use. */
	CHECK("its p99 lateness within its wake-up deadline", p99 <= 2 * MS, "%llu us", p99 / US);
	CHECK("the busy loops keep the rest of CPU 1 (at least 0.9 of it less the probe's 0.2)",
	      hogs * 10 >= (8000 - 8000 / 5) * 9, "%llu ms", hogs);
}

/*
 * The fair clock follows the least cgroup virtual time with work queued, never back. A cgroup
 * whose tasks all ran at that moment (the hogs on both CPUs, the preempted one not queued again
 * yet) was not counted, so when the only queued work in the fair order was a guaranteed
 * container's, far ahead, the clock jumped to it: up to the whole starvation window (800 ms of
 * cgroup virtual time on 2 CPUs). The hogs' cgroup, active throughout, kept its place that far
 * behind the clock and then won the fair order until it had caught up, while the cgroup without
 * parameters, placed at the clock when it woke, waited: in the VM (matrix cell
 * spin3-sleep20.rr4-20.shares900.config.t4 beside hackbench) it got 0.27 CPU for 0.52 of demand,
 * hackbench 0.54, and its p99 was 269 ms (EEVDF's 31 ms). Now the clock also stays at or behind
 * every cgroup with a task on a CPU, as CFS's min_vruntime counts the running
 * entity (a task on a CPU; not one held by a CPU limit: next test): cgroup 12 gets what it asks
 * (0.48 CPU) beside the hogs, as without deadlines.
 */
static void test_fair_clock_waits_for_running_cgroups(void)
{
	u64 cfs, hogs, fair_cfs, fair_hogs, p99, fair_p99, behind, fair_behind;

	fair_p99 = clock_run(false, &fair_cfs, &fair_hogs, &fair_behind);
	p99 = clock_run(true, &cfs, &hogs, &behind);
	printf("fair clock: cgroup without parameters %llu ms of 3000 beside hogs %llu ms, p99 lateness "
	       "%llu us, the clock at most %llu us ahead of the hogs' cgroup (no deadlines: %llu / %llu "
	       "ms, %llu us, %llu us)\n", cfs, hogs, p99 / US, behind / US, fair_cfs, fair_hogs,
	       fair_p99 / US, fair_behind / US);
	/* Before: 484 ms of cgroup virtual time (3 ms without deadlines). */
	CHECK("the fair clock never passes the cgroup whose tasks keep running",
	      behind == 0 && fair_behind == 0, "%llu us, %llu us without deadlines", behind / US,
	      fair_behind / US);
	/* Before: 1362 ms and a p99 of 39 ms (without deadlines 1440 ms, 22 ms). */
	CHECK("the cgroup without parameters gets what it asks beside guaranteed containers (0.48 CPU, -3 %)",
	      cfs >= 1400, "%llu ms of 3000", cfs);
	/*
	 * 32 ms against 22 without deadlines before cgroup virtual time counted CPU time at a fixed
	 * weight (test_cgroup_vtime_counts_cpu_time_at_weight); 27 against 15 since: both lower,
	 * the figure without deadlines more. What is left is the first tier's bursts, 24 ms of work
	 * every 23-24 ms on 2 CPUs, ahead of fair work (README, "Fair work below its protected share
	 * beside bursty guarantees").
	 */
	CHECK("its p99 lateness within 2x of the same without deadlines, and below 30 ms",
	      p99 <= fair_p99 * 2 && p99 < 30 * MS, "%llu us vs %llu us", p99 / US, fair_p99 / US);
}

/*
 * Cgroup virtual time is CPU time at the default weight, FDL_CV_WEIGHT, whatever else is runnable
 * (fdl_cgroup_cv_share). Charged at the cgroup's share of the weights runnable at the moment, a
 * cgroup paid more for CPU time it got while more cgroups were active: in the VM, the cgroup
 * without parameters, whose bursts come with the deadline containers', paid twice what hackbench
 * paid between them and then waited on both CPUs while hackbench caught up (p99 23-29 ms, EEVDF's
 * 16-18; 13-15 ms since). Here cgroup 11's one busy task is charged the same per ns of CPU alone
 * (W = 100) and beside cgroups 12 and 13 (W = 500: it was five times as much), and the three share
 * two CPUs by weight (0.4, 0.4 and 1.2 CPUs).
 */
static void test_cgroup_vtime_counts_cpu_time_at_weight(void)
{
	struct task *a, *c1, *c2, *b;
	u64 cv, ran, ran_b, ran_c, d_alone, r_alone, d_busy, r_busy;

	reset(2);
	add_cgroup(11, 100, 0, 0);
	add_cgroup(12, 100, 0, 0);
	add_cgroup(13, 300, 0, 0);
	a = new_task(0, 11);
	wake(a);
	run_for(20 * MS);
	cv = env.cg[11].cvtime;
	ran = a->ran_ns;
	run_for(200 * MS);
	d_alone = env.cg[11].cvtime - cv;
	r_alone = a->ran_ns - ran;
	b = new_task(1, 12);
	c1 = new_task(2, 13);
	c2 = new_task(3, 13);
	wake(b);
	wake(c1);
	wake(c2);
	run_for(100 * MS);
	cv = env.cg[11].cvtime;
	ran = a->ran_ns;
	ran_b = b->ran_ns;
	ran_c = c1->ran_ns + c2->ran_ns;
	run_for(1000 * MS);
	d_busy = env.cg[11].cvtime - cv;
	r_busy = a->ran_ns - ran;
	ran_b = b->ran_ns - ran_b;
	ran_c = c1->ran_ns + c2->ran_ns - ran_c;
	printf("cgroup vtime: alone %llu us for %llu us of CPU, beside weight 400 %llu us for %llu us; "
	       "CPU 11 / 12 / 13: %llu / %llu / %llu ms of 2000\n", d_alone / US, r_alone / US,
	       d_busy / US, r_busy / US, r_busy / MS, ran_b / MS, ran_c / MS);
	CHECK("alone, weight 100: cgroup virtual time moves by its CPU time (-+3 %)",
	      r_alone >= 190 * MS && d_alone * 100 >= r_alone * 97 && d_alone * 100 <= r_alone * 103,
	      "%llu us for %llu us", d_alone / US, r_alone / US);
	CHECK("beside weight 400 more: by the same (-+3 %)",
	      r_busy > 0 && d_busy * 100 >= r_busy * 97 && d_busy * 100 <= r_busy * 103,
	      "%llu us for %llu us", d_busy / US, r_busy / US);
	CHECK("the CPUs shared by weight (0.4, 0.4, 1.2 CPUs, -+10 %)",
	      r_busy >= 360 * MS && r_busy <= 440 * MS && ran_b >= 360 * MS && ran_b <= 440 * MS &&
	      ran_c >= 1080 * MS && ran_c <= 1320 * MS, "%llu / %llu / %llu ms", r_busy / MS,
	      ran_b / MS, ran_c / MS);
}

/*
 * A queue's clock moves up to a task that starts, never past a task still waiting there. The
 * task its CPU took as the queue's first waiter bounds the clock by its own key, without a peek at
 * the queue (a DSQ lookup in the kernel): every other waiter's key is at or after it. Not so when
 * a waiter may have been passed over because it may not run on that CPU (pinned), nor for a task
 * that did not wait in that queue (straight onto an idle CPU): those peek. One start of a task
 * of cgroup 10 at vtime 50 ms over a clock at 10 ms, a waiter at 30 ms behind it.
 */
static u64 first_waiter_start(bool took_first, bool pinned_waiter, u64 key, int *peeks)
{
	struct task *a, *w;
	u32 s;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	s = env.cg[10].cont_slot;
	a = new_task(0, 10);
	w = new_task(1, 10);
	a->t.vqueue = w->t.vqueue = 10;
	env.cg[10].ent.vtime_now = 10 * MS;
	w->t.vtime = 30 * MS;
	if (pinned_waiter)
		w->p.allowed = 1u << 1;
	fdl_queued_add(&w->t, s, 0, w->t.vtime, env_task_pinned(&w->p));
	env_insert_vtime(&w->p, 10, tun.slice_ns, w->t.vtime, 0, 0);
	a->t.vtime = 50 * MS;
	if (took_first)	/* counted in its queue, taken from it */
		fdl_queued_add(&a->t, s, 0, key, false);
	*peeks = env.min_head_peeks;
	env.cur_cpu = 0;
	fdl_on_running(&a->p, &a->t, 0);
	*peeks = env.min_head_peeks - *peeks;
	return env.cg[10].ent.vtime_now;
}

static void test_first_waiter_starts_without_a_peek(void)
{
	int peeks;
	u64 clock;

	clock = first_waiter_start(true, false, 20 * MS, &peeks);
	CHECK("taken as the first waiter: no peek, the clock up to its key (20 ms)", !peeks &&
	      clock == 20 * MS, "%d peeks, clock %llu us", peeks, clock / US);
	clock = first_waiter_start(true, true, 50 * MS, &peeks);
	CHECK("a pinned waiter queued: a peek, the clock up to that waiter (30 ms)", peeks == 1 &&
	      clock == 30 * MS && fdl.nr_queued_pinned == 1, "%d peeks, clock %llu us, %lld pinned",
	      peeks, clock / US, (long long)fdl.nr_queued_pinned);
	fdl_queued_del(&tasks[1].t);
	CHECK("counted pinned while it waits only", !fdl.nr_queued_pinned && !tasks[1].t.queued_pinned,
	      "%lld", (long long)fdl.nr_queued_pinned);
	clock = first_waiter_start(false, false, 0, &peeks);
	CHECK("not taken from its queue: a peek, the clock up to the waiter (30 ms)", peeks == 1 &&
	      clock == 30 * MS, "%d peeks, clock %llu us", peeks, clock / US);
}

/*
 * With several domains the least head of a queue is a peek per domain (a DSQ lookup each in the
 * kernel, a cost that grew with the LLCs): the bound found is kept for FDL_HEAD_LB_USES starts of
 * the queue's tasks. A waiter in domain 1 at 30 ms; tasks of the same cgroup start one after the
 * other at vtimes 50, 60, ... ms over a clock at 10 ms, none taken from the queue: the first
 * peeks, the next FDL_HEAD_LB_USES do not, and none moves the clock past the waiter. A task
 * queued meanwhile at 20 ms brings the bound down at once (no peek): the clock stays at 20 ms
 * (without that, at 30 ms, past it). Taken meanwhile, the waiter leaves the bound below the queue
 * until the next peek: the clock lags, it never passes a waiter.
 */
static void test_head_bound_kept_between_peeks(void)
{
	struct task *w, *w2, *a;
	int peeks, i;
	u32 s;
	bool past = false;

	reset_two_domains();
	add_cgroup(10, 100, 0, 0);
	s = env.cg[10].cont_slot;
	env.cg[10].ent.vtime_now = 10 * MS;
	w = new_task(0, 10);
	w->t.vqueue = 10;
	w->t.vtime = 30 * MS;
	fdl_queued_add(&w->t, s, 1, w->t.vtime, false);
	env_insert_vtime(&w->p, 10, tun.slice_ns, w->t.vtime, 0, 1);
	env.cur_cpu = 0;
	peeks = env.min_head_peeks;
	a = new_task(2, 10);	/* one task started again and again */
	a->t.vqueue = 10;
	for (i = 0; i <= FDL_HEAD_LB_USES; i++) {
		a->t.vtime = (50 + 10 * i) * MS;
		fdl_fair_started(&a->t, 10, &env.cg[10], 0);
		past |= env.cg[10].ent.vtime_now > 30 * MS;
	}
	peeks = env.min_head_peeks - peeks;
	CHECK("one peek for FDL_HEAD_LB_USES + 1 starts, the clock up to the waiter (30 ms), never "
	      "past it", peeks == 1 && !past && env.cg[10].ent.vtime_now == 30 * MS,
	      "%d peeks, clock %llu us", peeks, env.cg[10].ent.vtime_now / US);
	/* The bound is used up: a peek; then a waiter queued below it. */
	a->t.vtime = 170 * MS;
	env.cg[10].ent.vtime_now = 10 * MS;
	peeks = env.min_head_peeks;
	fdl_fair_started(&a->t, 10, &env.cg[10], 0);
	w2 = new_task(1, 10);
	w2->t.vqueue = 10;
	w2->t.vtime = 20 * MS;
	fdl_queued_add(&w2->t, s, 0, w2->t.vtime, false);
	env_insert_vtime(&w2->p, 10, tun.slice_ns, w2->t.vtime, 0, 0);
	env.cg[10].ent.vtime_now = 10 * MS;
	a->t.vtime = 180 * MS;
	fdl_fair_started(&a->t, 10, &env.cg[10], 0);
	peeks = env.min_head_peeks - peeks;
	CHECK("a waiter queued below the bound brings it down: no peek, the clock at that waiter "
	      "(20 ms)", peeks == 1 && env.cg[10].ent.vtime_now == 20 * MS, "%d peeks, clock %llu us",
	      peeks, env.cg[10].ent.vtime_now / US);
	/* Both taken (uncounted, out of the queue): the bound stays below, the clock lags. */
	fdl_queued_del(&w->t);
	fdl_queued_del(&w2->t);
	while (fake_dsq(10)->n)
		fake_pop(fake_dsq(10));
	CHECK("nothing waits: the clock moves to the task that starts (190 ms)",
	      (a->t.vtime = 190 * MS, fdl_fair_started(&a->t, 10, &env.cg[10], 0),
	       env.cg[10].ent.vtime_now == 190 * MS),
	      "clock %llu us", env.cg[10].ent.vtime_now / US);
}

/*
 * The root's own tasks have no activation of their own to bring the fair clock up to date
 * (fdl_cgroup_propagate refreshes it for a first-level cgroup): two busy loops of the root's that
 * wake after cgroup 11's two ran alone for 220 ms, with no work queued (no scan: the clock stays
 * where it was), get the CPUs by weight (the root's tasks as one cgroup at their weight, 100, as
 * 11's), not both CPUs until the root's cgroup virtual time caught up with 11's (without the
 * refresh: 11 got 0 of 400 ms, the root's tasks all of it; with it 198 and 202).
 */
static void test_root_tasks_wake_at_a_fresh_clock(void)
{
	struct task *a1, *a2, *r1, *r2;
	u64 ran_a, ran_r;

	reset(2);
	add_cgroup(11, 100, 0, 0);
	a1 = new_task(0, 11);
	a2 = new_task(1, 11);
	wake(a1);
	wake(a2);
	run_for(220 * MS);
	r1 = new_task(2, FDL_ROOT_CGREF);
	r2 = new_task(3, FDL_ROOT_CGREF);
	wake(r1);
	wake(r2);
	ran_a = a1->ran_ns + a2->ran_ns;
	run_for(200 * MS);
	ran_a = a1->ran_ns + a2->ran_ns - ran_a;
	ran_r = r1->ran_ns + r2->ran_ns;
	printf("root's own tasks waking beside a cgroup that ran alone 220 ms: cgroup %llu ms, root's "
	       "tasks %llu ms of 400 in the next 200 ms\n", ran_a / MS, ran_r / MS);
	CHECK("the cgroup that ran alone keeps its share by weight beside the root's tasks (200 of 400 ms, "
	      "-20 %)", ran_a >= 160 * MS && ran_r >= 160 * MS, "cgroup %llu ms, root's tasks %llu ms",
	      ran_a / MS, ran_r / MS);
}

/*
 * --fair-protection floor: guarantees that fit the machine are met in full. The matrix's cell of
 * four workers per probe (3 ms every 23-25 ms) in 10 (4 ms / 2 ms) and 11 (20 ms), both granted
 * 0.88 CPU (1.76 of 2 CPUs, within the machine less the 5 % floor), and in 12 without parameters,
 * beside two hogs (20). By default fair work keeps its share at the containers' cpu.weight (2 of
 * 4 cgroups at weight 100: 1 CPU), the guarantees are scaled into the other CPU while both
 * containers are active, and the 4 ms container's bursts (12 ms of work at once) outrun its scaled
 * budget. Under floor, fair work keeps what the guarantees leave (0.24 CPU) and they are never
 * scaled. Returns the 4 ms container's misses and starts, its workers' p99 spin lateness, the
 * least guarantee scale seen (FDL_SHARE_ONE: none) and fair work's budget rate.
 */
static u64 protection_run(u32 mode, u64 *misses, u64 *picks, u64 *min_scale, u64 *fair_rate)
{
	u64 s;
	int i;

	t4_cell(true, mode);
	for (i = 0; i < 4; i++)
		tasks[i].nr_lates = 0;
	*misses = env.cg[10].ent.nr_misses;
	*picks = env.cg[10].ent.nr_picks;
	*min_scale = FDL_SHARE_ONE;
	for (i = 0; i < 3000; i++) {
		run_for(1 * MS);
		s = fdl.budget_scale ?: FDL_SHARE_ONE;
		*min_scale = s < *min_scale ? s : *min_scale;
	}
	*misses = env.cg[10].ent.nr_misses - *misses;
	*picks = env.cg[10].ent.nr_picks - *picks;
	*fair_rate = fdl.fair.budget_rate;
	return pct_late(0, 4, 99);
}

static void test_floor_protection_keeps_guarantees_that_fit(void)
{
	u64 m, p, sc, fr, p99, wm, wp, wsc, wfr, wp99;
	u64 left = fdl_fair_left(2 * (FDL_SHARE_ONE * 880 / 1000), 50, 2);

	wp99 = protection_run(FDL_FAIR_PROTECT_WEIGHTED, &wm, &wp, &wsc, &wfr);
	p99 = protection_run(FDL_FAIR_PROTECT_FLOOR, &m, &p, &sc, &fr);
	printf("fair protection, 4 ms container of four bursty workers within 0.88 CPU: floor %llu misses "
	       "of %llu starts, p99 lateness %llu us, least scale %llu/1024, fair rate %llu/1024 CPUs; "
	       "weighted %llu of %llu, %llu us, %llu/1024, %llu/1024\n", m, p, p99 / US,
	       sc * 1024 / FDL_SHARE_ONE, fr * 1024 / FDL_SHARE_ONE, wm, wp, wp99 / US,
	       wsc * 1024 / FDL_SHARE_ONE, wfr * 1024 / FDL_SHARE_ONE);
	CHECK("floor: the guarantees are never scaled", sc == FDL_SHARE_ONE, "least %llu/1024",
	      sc * 1024 / FDL_SHARE_ONE);
	CHECK("floor: fair work's protected bandwidth is what the guarantees leave (0.24 CPU)",
	      fr == left, "%llu vs %llu", fr, left);
	CHECK("floor: fewer than 1 % of the 4 ms container's starts are late", m * 100 < p,
	      "%llu of %llu", m, p);
	CHECK("weighted (the default): the guarantees are scaled while both containers run",
	      wsc < FDL_SHARE_ONE, "least %llu/1024", wsc * 1024 / FDL_SHARE_ONE);

	/* A Kubernetes-like pod two levels down guaranteed half a CPU: its grant counts too. */
	reset(2);
	tun.fair_protect = FDL_FAIR_PROTECT_FLOOR;
	add_cgroup(10, 100, 0, 0);
	add_child(11, 10, 100);
	add_child(12, 11, 100);
	add_cgroup(20, 100, 0, 0);
	left = fdl_cgroup_set_deadlines(12, 10 * MS, 0, FDL_SHARE_ONE / 2);
	wake(new_task(0, 12));
	wake(new_task(1, 20));
	run_for(500 * MS);
	CHECK("floor: a nested container's grant is left out of fair work's protection (1.5 CPUs)",
	      left == 0 && fdl.fair.budget_rate == fdl_fair_left(FDL_SHARE_ONE / 2, 50, 2),
	      "%llu vs %llu", (u64)fdl.fair.budget_rate, fdl_fair_left(FDL_SHARE_ONE / 2, 50, 2));
}

/*
 * Containers 10 (4 ms) and 11 (20 ms), each granted 0.879 CPU (guaranteed_shares 900), two busy
 * loops each, beside fair cgroup 20 with two, all at weight 100, under --fair-protection floor
 * (tests/vm/fair-protection.sh's floor run), for 4 s after 1 s; every context switch costing
 * switch_cost of the CPU before the next task's ops.running, which the kernel charges to that
 * task. Each cgroup's CPU time as the kernel counts it (ms) into g1, g2, f; returns the time that
 * passed (ms).
 */
static u64 floor_all_busy(u64 switch_cost, u64 *g1, u64 *g2, u64 *f)
{
	u64 t0;

	reset(2);
	tun.fair_protect = FDL_FAIR_PROTECT_FLOOR;
	add_cgroup(10, 100, 4 * MS, 0);
	add_cgroup(11, 100, 20 * MS, 0);
	add_cgroup(20, 100, 0, 0);
	grant(10, 879);
	grant(11, 879);
	switch_ns = switch_cost;
	two_hogs_each(10, 11, 20);
	run_for(1000 * MS);
	t0 = env.now;
	*g1 = ran(0, 2);
	*g2 = ran(2, 2);
	*f = ran(4, 2);
	run_for(4000 * MS);
	*g1 = (ran(0, 2) - *g1) / MS;
	*g2 = (ran(2, 2) - *g2) / MS;
	*f = (ran(4, 2) - *f) / MS;
	return (env.now - t0) / MS;
}

/*
 * The guarantees and fair work's floor (the 0.242 CPU they leave) fill the machine: none may take
 * from another, and a guarantee is counted as the kernel counts CPU time (cpu.stat). Counted by
 * the scheduler's clock from ops.running, a switch's cost was charged to no one, and the containers
 * the timers switched most ran past their grants by it: in the VM 0.7 and 0.8 % by cpu.stat (fair
 * work 0.204 CPU of its 0.242), 9.5 % for the 4 ms container in a CI run on a noisy host (fair
 * work 0.188). Here, at 200 us a switch (the emulator's order), the clock's count (the fake's
 * env_task_exec returning env.now) gave the 4 ms container, switched most, 4206 ms of the 4160 it
 * was owed (+1.1 %); the kernel's count gives each 4288-4290 of 4288. (The fake's clock moves for
 * both CPUs while one switches, and no task's CPU time on the other one is counted meanwhile: so
 * the clock's count charged the 20 ms container the other CPU's switches, 4140 ms, and fair work's
 * figure with switches costing is not its floor.)
 */
static void test_guarantee_counts_the_kernels_cpu_time(void)
{
	u64 g1, g2, f, el, want, want_f = fdl_fair_left(2 * (FDL_SHARE_ONE * 879 / 1000), 50, 2);

	el = floor_all_busy(0, &g1, &g2, &f);
	want_f = want_f * el / FDL_SHARE_ONE;
	want = 879 * el / 1000;
	printf("floor, all busy: 4 ms container %llu ms, 20 ms container %llu ms, fair work %llu ms of "
	       "%llu (owed %llu, %llu, %llu)\n", g1, g2, f, el, want, want, want_f);
	CHECK("floor: fair work keeps the 0.242 CPU the guarantees leave (-3 %)", f * 100 >= want_f * 97,
	      "%llu ms, want %llu", f, want_f);
	CHECK("floor: each container gets its grant (0.879 CPU, -3 %)",
	      g1 * 100 >= want * 97 && g2 * 100 >= want * 97, "%llu and %llu ms, want %llu", g1, g2, want);

	el = floor_all_busy(200 * US, &g1, &g2, &f);
	want = 879 * el / 1000;
	printf("floor, all busy, 200 us a switch: containers %llu and %llu ms, fair work %llu ms of %llu "
	       "(containers owed %llu)\n", g1, g2, f, el, want);
	CHECK("a switch's cost counts against the guarantee of the task that follows it: each container "
	      "gets its grant, no more (+0.5 %)", g1 * 1000 <= want * 1005 && g2 * 1000 <= want * 1005,
	      "%llu and %llu ms, owed %llu", g1, g2, want);
	switch_ns = 0;
}

/*
 * The fair clock is held back by cgroups whose tasks run, not by one whose tasks its CPU limit
 * holds: a cgroup of two hogs at cpu.max 0.4 CPU falls behind the others in cgroup virtual time
 * by what its limit keeps from it, for good. Held at its cgroup virtual time, the clock would
 * stay there while the others ran on, until they all stood at the starvation window's edge past
 * it, where the order between them is lost: two cgroups of hogs at cpu.weight 200 and 100 got
 * 2.80 : 1 of the rest there (a variant counting every cgroup with a task runnable).
 */
static void test_limited_cgroup_does_not_hold_the_fair_clock(void)
{
	u64 hi, lo;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(20, 200, 0, 0);
	add_cgroup(21, 100, 0, 0);
	limit(10, 100000, 40000, 0);
	two_hogs_each(10, 20, 21);
	run_for(4000 * MS);
	hi = ran(2, 2);
	lo = ran(4, 2);
	run_for(6000 * MS);
	hi = ran(2, 2) - hi;
	lo = ran(4, 2) - lo;
	printf("beside a limited cgroup (0.4 CPU): weights 200 and 100 got %llu and %llu ms in 6 s "
	       "(%llu.%02llu : 1)\n", hi / MS, lo / MS, hi / (lo ?: 1), hi * 100 / (lo ?: 1) % 100);
	CHECK("the unlimited cgroups share the rest by weight (2 : 1 +- 10 %)",
	      hi * 10 >= lo * 18 && hi * 10 <= lo * 22, "%llu ms vs %llu ms", hi / MS, lo / MS);
}

/*
 * A Kubernetes-shaped tree on 2 CPUs: kubepods (10) / burstable (11) / pod A (12) / its container
 * (13), with a probe (two workers, spin_ns every 20 ms), beside pod B (14) of ten hackbench-like
 * wakers, and a fair first-level cgroup (20) of two hogs. with_dl: pod A gets deadlines (4 ms,
 * wakeup 2 ms) after 100 ms, when its tasks already run (their container, cached, was kubepods).
 * Returns the probe's p99 lateness; *fair_ms what cgroup 20 ran.
 */
/* The probe's p50 and p90 spin lateness in the last nested_run, before its deadlines were removed. */
static u64 nested_p50, nested_p90;

static u64 nested_run(bool with_dl, u64 spin_ns, u64 *fair_ms)
{
	u64 p99;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_child(11, 10, 100);
	add_child(12, 11, 100);
	add_child(13, 12, 100);
	add_child(14, 11, 100);
	add_cgroup(20, 100, 0, 0);
	probe_pair(0, 13, spin_ns, 20 * MS);
	wakers(2, 14);
	for (int i = 12; i < 14; i++)
		wake(new_task(i, 20));
	run_for(100 * MS);
	if (with_dl) {
		struct fdl_cgroup *top;
		struct fdl_entity *e;
		int ret = fdl_cgroup_set_deadlines(12, 4 * MS, 2 * MS, 0);

		CHECK("deadlines on a cgroup three levels down are taken", ret == 0, "%d", ret);
		CHECK("it becomes a container with a queue", env.cg[12].has_dsq, "no queue");
		CHECK("its bit in the dispatcher's active set says whether its subtree is active",
		      env.cg[12].cont_slot &&
		      !!(fdl.active_mask & (1ULL << (env.cg[12].cont_slot - 1))) == (env.cg[12].nr_active > 0),
		      "slot %u, mask %llx, nr_active %lld", env.cg[12].cont_slot,
		      (unsigned long long)fdl.active_mask, (long long)env.cg[12].nr_active);
		CHECK("its subtree's tasks queue there and run under its deadline",
		      fdl_task_queue(&tasks[0].t, &top, &e, env.now) == 12 && e == &env.cg[12].ent,
		      "queue %llu", (unsigned long long)fdl_task_queue(&tasks[0].t, &top, &e, env.now));
		ret = fdl_cgroup_set_deadlines(13, 4 * MS, 0, 0);
		CHECK("no deadline cgroup inside another", ret == -EEXIST, "%d", ret);
		ret = fdl_cgroup_set_deadlines(FDL_ROOT_CGREF, 4 * MS, 0, 0);
		CHECK("none on the root", ret == -EINVAL, "%d", ret);
	}
	for (int i = 0; i < 2; i++)
		tasks[i].nr_lates = 0;
	run_for(4000 * MS);
	CHECK("no full scan found work outside the active set", !env.stats.nr_scan_strays, "%llu",
	      (unsigned long long)env.stats.nr_scan_strays);
	*fair_ms = ran(12, 2) / MS;
	p99 = pct_late(0, 2, 99);
	nested_p50 = pct_late(0, 2, 50);
	nested_p90 = pct_late(0, 2, 90);
	if (with_dl) {
		/* Deadlines removed: a fair container from then on, its queue still served. */
		u64 before = ran(0, 2);
		int ret = fdl_cgroup_set_deadlines(12, 0, 0, 0);

		run_for(1000 * MS);
		CHECK("deadlines removed: its work still runs, fair (about 0.1 CPU)",
		      ret == 0 && env.cg[12].has_dsq && ran(0, 2) - before >= 80 * MS, "%d, %llu ms",
		      ret, (ran(0, 2) - before) / MS);
	}
	return p99;
}

/*
 * A nested deadline cgroup (a Kubernetes pod) keeps its deadline against its siblings and against
 * the rest of the machine, at the bandwidth its ancestors' shares give it: its probe's p99
 * lateness is at most half of the same probe's without parameters, and its deadline work comes
 * out of its first-level ancestor's fair share, not the other first-level cgroup's.
 */
static void test_nested_deadline_container(void)
{
	u64 fair_dl, fair_fair, dl = nested_run(true, 1 * MS, &fair_dl), plain = nested_run(false, 1 * MS, &fair_fair);

	printf("nested deadline (pod 3 levels down, beside a pod of wakers): p99 lateness %llu us, "
	       "without parameters %llu us; fair first-level cgroup ran %llu / %llu ms of 8000\n",
	       dl / US, plain / US, fair_dl, fair_fair);
	CHECK("the pod's p99 lateness at most half of the same probe's without parameters",
	      dl * 2 <= plain, "%llu us vs %llu us", dl / US, plain / US);
	CHECK("the other first-level cgroup keeps its half of the machine (-10 %)", fair_dl >= 3600,
	      "%llu ms", fair_dl);
	/* While the queue's clock followed the running task past the waiters: 20 ms. */
	CHECK("without parameters, the probe in a pod beside a pod of wakers: p99 within 8 ms "
	      "(it needs 0.1 CPU of its 0.33)", plain <= 8 * MS, "%llu us", plain / US);
}

/*
 * A burst past the budget runs on as fair work would: the pod of test_nested_deadline_container
 * with spins of 3 ms (the two workers' bursts overrun its bandwidth of 0.33 CPU). Where its slice
 * is cut at the end of its budget, it claims the CPU as fair work (its cgroup used far less than
 * its share) and, fair work not being preempted by fair work, keeps it for the rest of its slice
 * and at most its deadline_rr. Before, it yielded to the fair order at each such cut and waited
 * there: p50 2 ms and p90 4 ms here; in the VM (bench/nested.sh, 1 ms spins) p50 0.62 ms and p99
 * 7.1 ms against 0.22 and 3.4 for the same pod without parameters.
 */
static void test_nested_burst_past_budget_runs_on_as_fair(void)
{
	u64 fair_ms, p50_dl, p90_dl, p50_plain;

	nested_run(true, 3 * MS, &fair_ms);
	p50_dl = nested_p50;
	p90_dl = nested_p90;
	nested_run(false, 3 * MS, &fair_ms);
	p50_plain = nested_p50;
	printf("nested burst past the budget (3 ms spins): p50 %llu us, p90 %llu us; without parameters p50 %llu us\n",
	       p50_dl / US, p90_dl / US, p50_plain / US);
	CHECK("a pod's burst past its budget is not queued behind fair work: p90 within a tick",
	      p90_dl <= 1 * MS, "p90 %llu us", p90_dl / US);
	CHECK("and its p50 is no worse than without parameters", p50_dl <= p50_plain,
	      "p50 %llu us, without parameters %llu us", p50_dl / US, p50_plain / US);
}

/*
 * Issue 14, defect 3: a guarantee's control loop read every cgroup of its subtree each period,
 * from a listing refreshed once a second, so a child younger than the listing went uncounted until
 * it was removed. Now all use below a summed cgroup is counted in its record as it happens: G (10)
 * is summed; its child 11, created after, runs a hog; its child 12, summed too, has a child 13 that
 * spins 50 ms once. 11's use is G's, 13's is 12's only; when 13 and 12 go, 12's sums move into G's.
 */
static void test_a_guarantee_sums_its_subtree_as_it_runs(void)
{
	u64 g_use, g_before, g_wait;
	s64 d;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	CHECK("summing an untracked cgroup is refused", fdl_cgroup_set_summed(99, true) == -ENOENT, "accepted");
	fdl_cgroup_set_summed(10, true);
	fdl_cgroup_set_summed(10, true);	/* twice: counted once */
	add_child(11, 10, 100);
	add_child(12, 10, 100);
	add_child(13, 12, 100);
	fdl_cgroup_set_summed(12, true);
	wake(new_task(0, 11));
	periodic(1, 13, 50 * MS, 100000 * MS);
	wake(new_task(2, 20));
	wake(new_task(3, 20));
	run_for(500 * MS);
	g_use = env.cg[10].sub_usage_ns;
	d = (s64)g_use - (s64)tasks[0].ran_ns;
	printf("summed subtree: G %llu ms used (its child's task ran %llu), %llu ms waited; nested 12: %llu ms (13 ran %llu)\n",
	       g_use / MS, tasks[0].ran_ns / MS, env.cg[10].sub_wait_ns / MS, env.cg[12].sub_usage_ns / MS,
	       tasks[1].ran_ns / MS);
	CHECK("a child created after its guaranteed parent was summed is counted there as it runs",
	      d > -(s64)(2 * MS) && d < (s64)(2 * MS), "G %llu ns, its child's task ran %llu", g_use, tasks[0].ran_ns);
	CHECK("its waiting is counted too", env.cg[10].sub_wait_ns > 10 * MS, "%llu ns", env.cg[10].sub_wait_ns);
	CHECK("a summed descendant's use is its own, not its summed ancestor's",
	      env.cg[12].sub_usage_ns == 50 * MS, "12 has %llu ns, 13 ran %llu", env.cg[12].sub_usage_ns, tasks[1].ran_ns);
	CHECK("two summed cgroups counted", fdl.nr_summed == 2, "%llu", fdl.nr_summed);
	g_before = env.cg[10].sub_usage_ns;
	g_wait = env.cg[10].sub_wait_ns + env.cg[12].sub_wait_ns;
	fdl_cgroup_fold(&env.cg[13]);	/* what ops.cgroup_exit does, child first */
	env.cg_present[13] = false;
	fdl_cgroup_fold(&env.cg[12]);
	env.cg_present[12] = false;
	CHECK("a summed cgroup that goes moves its sums into its summed ancestor's",
	      env.cg[10].sub_usage_ns == g_before + 50 * MS && env.cg[10].sub_wait_ns == g_wait,
	      "G %llu ns, was %llu + 50 ms", env.cg[10].sub_usage_ns, g_before);
	CHECK("and is no longer counted", fdl.nr_summed == 1, "%llu", fdl.nr_summed);
	g_before = env.cg[10].sub_usage_ns;
	run_for(200 * MS);
	CHECK("the rest of the subtree is still counted", env.cg[10].sub_usage_ns > g_before + 50 * MS,
	      "G %llu ns, was %llu", env.cg[10].sub_usage_ns, g_before);
	fdl_cgroup_set_summed(10, false);
	CHECK("no longer summed: its sums start from zero if it is summed again",
	      fdl.nr_summed == 0 && env.cg[10].sub_usage_ns == 0 && env.cg[10].sub_wait_ns == 0,
	      "%llu summed, %llu ns", fdl.nr_summed, env.cg[10].sub_usage_ns);
	g_before = env.cg[10].sub_usage_ns;
	run_for(100 * MS);
	CHECK("and nothing is counted while it is not summed", env.cg[10].sub_usage_ns == g_before,
	      "%llu ns", env.cg[10].sub_usage_ns);
}

/*
 * Kubernetes' tree on 2 CPUs: kubepods (10) / burstable (11) / pods 12 and 14 of two hogs each
 * (tasks 0, 1 and 2, 3), beside first-level cgroups 20..22 of one hog each (tasks 4..6), all at
 * weight 100 (pod 12's share: 0.25 CPU), everything woken, fair work protected by `protect`.
 */
static void nested_pods_tree(u32 protect)
{
	int i;

	reset(2);
	tun.fair_protect = protect;
	add_cgroup(10, 100, 0, 0);
	add_child(11, 10, 100);
	add_child(12, 11, 100);
	add_child(14, 11, 100);
	for (i = 0; i < 3; i++)
		add_cgroup(20 + i, 100, 0, 0);
	for (i = 0; i < 2; i++) {
		wake(new_task(i, 12));
		wake(new_task(2 + i, 14));
	}
	for (i = 0; i < 3; i++)
		wake(new_task(4 + i, 20 + i));
}

/*
 * A guarantee three levels down (nested_pods_tree): pod 12 gets deadlines and a guarantee of 1
 * CPU, then loses its deadlines and keeps the guarantee: it keeps running (it starved in the VM).
 */
static void test_nested_guarantee_without_deadlines_runs(void)
{
	u64 before, got;
	int ret;

	nested_pods_tree(FDL_FAIR_PROTECT_WEIGHTED);
	run_for(1000 * MS);
	ret = fdl_cgroup_set_deadlines(12, 10 * MS, 0, FDL_SHARE_ONE);
	before = ran(0, 2);
	run_for(2000 * MS);
	got = ran(0, 2) - before;
	printf("nested guarantee: pod with deadlines and 1 CPU guaranteed %llu ms of 4000\n", got / MS);
	ret |= fdl_cgroup_set_deadlines(12, 0, 0, 0);
	before = ran(0, 2);
	run_for(2000 * MS);
	got = ran(0, 2) - before;
	printf("nested guarantee: the same pod without deadlines %llu ms of 4000\n", got / MS);
	CHECK("a nested container whose deadlines are removed keeps its share (0.25 CPU, -20 %)",
	      ret == 0 && got >= 400 * MS, "%d, %llu ms", ret, got / MS);
}

/*
 * nested_pods_tree, pod 12 made a deadline container guaranteed 1 CPU while its hogs run (the path
 * of `scx_fdl set`), beside two kworker-like tasks of the root's, one bound to each CPU (0.2 ms
 * every 20 ms). Measured over 2 s: the pod's two hogs (cpu[0], cpu[1]), its sibling pod (cpu[2]),
 * the three first-level cgroups (cpu[3]) and the whole machine (cpu[4]), in ms; and the kworkers'
 * longest wait from wake-up to running over the whole run (cpu[5], ms; 10000 if one never ran).
 */
static void nested_guarantee_run(u32 protect, u64 cpu[6])
{
	u64 before[NR_TASKS], sum = 0;
	struct task *kw;
	int i;

	nested_pods_tree(protect);
	for (i = 0; i < 2; i++) {	/* per-CPU kworkers: one of them is bound to the pod's CPU */
		kw = periodic(7 + i, FDL_ROOT_CGREF, 200 * US, 20 * MS);
		kw->p.allowed = 1u << i;
	}
	run_for(1000 * MS);
	fdl_cgroup_set_deadlines(12, 10 * MS, 0, FDL_SHARE_ONE);
	run_for(1000 * MS);
	for (i = 0; i < NR_TASKS; i++)
		before[i] = tasks[i].ran_ns;
	run_for(2000 * MS);
	for (i = 0; i < 9; i++)
		sum += tasks[i].ran_ns - before[i];
	cpu[0] = (tasks[0].ran_ns - before[0]) / MS;
	cpu[1] = (tasks[1].ran_ns - before[1]) / MS;
	cpu[2] = (ran(2, 2) - before[2] - before[3]) / MS;
	cpu[3] = (ran(4, 3) - before[4] - before[5] - before[6]) / MS;
	cpu[4] = sum / MS;
	cpu[5] = 0;
	for (i = 7; i < 9; i++) {
		u64 d = tasks[i].ran_ns ? tasks[i].max_delay_ns / MS : 10000;

		cpu[5] = d > cpu[5] ? d : cpu[5];
	}
}

/*
 * A pod guaranteed 1 CPU three levels down gets it, and what it leaves is shared: its sibling pod
 * and the first-level cgroups beside kubepods are served, no CPU idles beside them, and the kworker
 * bound to the pod's CPU waits at most the starvation bound (fdl_fair_first; before, it never ran).
 * Under --fair-protection floor the pod starved its sibling (0.000 CPU in the VM: its work within
 * the guarantee moved kubepods on in the fair order, for good; natively its hogs also split 2000 /
 * 0 ms, a CPU idled and the first-level cgroups got 380 ms: bench/guest/nested-guarantee.sh,
 * 2026-11-29).
 */
static void test_nested_guarantee_leaves_the_rest_shared(void)
{
	u64 f[6], w[6];

	nested_guarantee_run(FDL_FAIR_PROTECT_FLOOR, f);
	nested_guarantee_run(FDL_FAIR_PROTECT_WEIGHTED, w);
	printf("nested guarantee of 1 CPU beside its sibling pod and three cgroups, ms of CPU in 2 s: "
	       "floor pod %llu + %llu, sibling %llu, cgroups %llu, machine %llu, kworkers' longest wait "
	       "%llu; weighted %llu + %llu, %llu, %llu, %llu, %llu\n", f[0], f[1], f[2], f[3], f[4], f[5],
	       w[0], w[1], w[2], w[3], w[4], w[5]);
	CHECK("floor: the pod gets its 1 CPU (-10 %)", f[0] + f[1] >= 1800, "%llu ms", f[0] + f[1]);
	CHECK("floor: its two hogs share it (each at least a third)",
	      f[0] * 3 >= f[0] + f[1] && f[1] * 3 >= f[0] + f[1], "%llu / %llu ms", f[0], f[1]);
	CHECK("floor: its sibling pod is served (an eighth of the rest: 0.125 CPU, -40 %)", f[2] >= 150,
	      "%llu ms", f[2]);
	CHECK("floor: the first-level cgroups get about 0.75 CPU together (-20 %)", f[3] >= 1200,
	      "%llu ms", f[3]);
	CHECK("floor: no CPU idles beside the waiting work (-2 %)", f[4] >= 3920, "%llu ms of 4000",
	      f[4]);
	CHECK("the kworkers wait at most the starvation bound and a slice (1 s + 20 ms)",
	      f[5] <= 1020 && w[5] <= 1020, "floor %llu, weighted %llu ms", f[5], w[5]);
	CHECK("weighted: its sibling pod is served too", w[2] >= 150, "%llu ms", w[2]);
	CHECK("weighted: no CPU idles beside the waiting work (-2 %)", w[4] >= 3920, "%llu ms of 4000",
	      w[4]);
}

/*
 * A running task whose cgroup becomes a container (`scx_fdl set` on a pod while its busy loop
 * runs) counts its vtime in the new queue's clock from its next charge (fdl_fair_join). Left in
 * its old queue's clock, it was compared with the new queue's tasks across two clocks: in the VM
 * one of a pod's two busy loops kept its CPU and the other ran 25 ms in 15 s.
 */
static void test_running_task_joins_its_new_queue(void)
{
	struct task *k;

	reset(2);
	add_cgroup(10, 100, 0, 0);
	add_child(12, 10, 100);
	k = new_task(0, 12);
	wake(k);
	run_for(300 * MS);
	env.cg[12].ent.vtime_now = 7 * MS;	/* the new queue's clock, far from kubepods' */
	fdl_cgroup_set_deadlines(12, 10 * MS, 0, FDL_SHARE_ONE / 2);
	CHECK("before its next charge it still counts in its old queue", k->t.vqueue == 10,
	      "queue %llu", k->t.vqueue);
	run_for(1 * MS);
	CHECK("after it, in the new queue's clock",
	      k->t.vqueue == 12 && k->t.vtime >= 7 * MS && k->t.vtime <= 9 * MS,
	      "queue %llu, vtime %llu us (clock %llu)", k->t.vqueue, k->t.vtime / US,
	      env.cg[12].ent.vtime_now / US);
}

/*
 * The fair order's first queue holds only work bound to another CPU: the root's, whose kworker is
 * bound to CPU 0, where a container's busy loop runs within its guarantee of 1 CPU (by deadline,
 * ahead of fair work). Three fair cgroups, each of one task that spins 4 ms every 6 ms (2 CPUs of
 * demand for the 1 CPU left; busy = false) or of one busy loop (true), over 2 s: what the three
 * got (ms) into cgs[], the CPU time left to the fair cgroups and the kworker (ms, of 2000) into
 * *rest, the takes past the bound work into *takes; returns the kworker's longest wait from its
 * wake-up to running (ms; 10000 if it never ran). Once the kworker has had its CPU, the busy loop
 * may run on the other one: the fair work there is what the loop leaves.
 */
static u64 bound_elsewhere_run(bool busy, u64 cgs[3], u64 *rest, u64 *takes)
{
	u64 before[5];
	struct task *kw;
	int i;

	reset(2);
	tun.fair_protect = FDL_FAIR_PROTECT_FLOOR;
	add_cgroup(10, 100, 0, 0);
	fdl_cgroup_set_deadlines(10, 10 * MS, 0, FDL_SHARE_ONE);
	wake(new_task(0, 10));
	for (i = 0; i < 3; i++) {
		add_cgroup(20 + i, 100, 0, 0);
		if (busy)
			wake(new_task(1 + i, 20 + i));
		else
			periodic(1 + i, 20 + i, 4 * MS, 6 * MS);
	}
	kw = periodic(4, FDL_ROOT_CGREF, 200 * US, 20 * MS);
	kw->p.allowed = 1u << (running[0] == &tasks[0] ? 0 : 1);
	run_for(500 * MS);
	for (i = 0; i < 5; i++)
		before[i] = tasks[i].ran_ns;
	*takes = env.stats.nr_skip_takes;
	run_for(2000 * MS);
	for (i = 0; i < 3; i++)
		cgs[i] = (tasks[1 + i].ran_ns - before[1 + i]) / MS;
	*rest = (ran(1, 4) - before[1] - before[2] - before[3] - before[4]) / MS;
	*takes = env.stats.nr_skip_takes - *takes;
	return kw->ran_ns ? kw->max_delay_ns / MS : 10000;
}

/*
 * The CPU beside the bound work runs the fair cgroups, not idle beside them (periodic: 1334 ms of
 * 2000 without the take past that work) and not one busy loop for good while the other two wait
 * (busy: 0, 0 and 2000 ms while the previous task kept its CPU without a second look). In the VM's
 * nested pod tree three first-level cgroups' busy loops got 0.05-0.07 CPU each beside such an idle
 * CPU (bench/guest/nested-guarantee.sh, 2026-11-29). The kworker itself waits at most the
 * starvation bound (1 s) for the CPU the guarantee holds (fdl_fair_first; it never ran before).
 */
static void test_cpu_passes_work_bound_elsewhere(void)
{
	u64 p[3], b[3], pr, br, pt, bt, pk, bk;

	pk = bound_elsewhere_run(false, p, &pr, &pt);
	bk = bound_elsewhere_run(true, b, &br, &bt);
	printf("work bound elsewhere first in the fair order, ms of 2000 beside the guarantee: periodic "
	       "%llu + %llu + %llu (with the kworker %llu; %llu takes past it), busy loops %llu + %llu + "
	       "%llu (%llu; %llu); the kworker's longest wait %llu / %llu ms\n", p[0], p[1], p[2], pr,
	       pt, b[0], b[1], b[2], br, bt, pk, bk);
	CHECK("periodic: the CPU the guarantee leaves runs the rest, not idle beside it (-5 %)",
	      pr >= 1900, "%llu ms", pr);
	CHECK("periodic: by taking past the bound work", pt > 0, "%llu", pt);
	CHECK("busy loops: each gets its third of the CPU the guarantee leaves (-25 %)",
	      b[0] >= 500 && b[1] >= 500 && b[2] >= 500, "%llu / %llu / %llu ms", b[0], b[1], b[2]);
	CHECK("the kworker waits at most the starvation bound and a slice (1 s + 20 ms)",
	      pk <= 1020 && bk <= 1020, "%llu / %llu ms", pk, bk);
}

/*
 * The starvation bound of the fair order: a fair cgroup whose cgroup virtual time ran far ahead
 * (40 s of it; a boosted nested container's did) beside three busy fair cgroups runs again within
 * the window. While the window's edge moved with the fair clock, it never ran again.
 */
static void test_cgroup_far_ahead_runs_within_the_window(void)
{
	u64 got;

	reset(2);
	for (int c = 0; c < 4; c++)
		add_cgroup(10 + c, 100, 0, 0);
	for (int c = 0; c < 4; c++)
		wake(new_task(c, 10 + c));
	run_for(500 * MS);
	env.cg[10].cvtime = fdl.cvtime_now + 40000 * MS;
	got = ran(0, 1);
	run_for(4000 * MS);
	got = ran(0, 1) - got;
	printf("fair cgroup 40 s ahead in cgroup virtual time: ran %llu ms in the next 4 s\n", got / MS);
	CHECK("a cgroup far ahead runs again within the starvation window (1 s x 2 CPUs)", got >= 500 * MS,
	      "%llu ms", got / MS);
}

/* vtime per ns of CPU time of the four tasks 0-3 over the next `ns` (x 1000). */
static u64 vtime_rate(u64 ns)
{
	u64 v = 0, r = 0;

	for (int i = 0; i < 4; i++) {
		v -= tasks[i].t.vtime;
		r -= tasks[i].ran_ns;
	}
	run_for(ns);
	for (int i = 0; i < 4; i++) {
		v += tasks[i].t.vtime;
		r += tasks[i].ran_ns;
	}
	return r ? v * 1000 / r : 0;
}

/*
 * A task's vtime counts its CPU time at its share of its queue, not of the machine: when the root's
 * weight sum grows sixteenfold (a shell's forks in the root cgroup, here written into the sum),
 * a queue of four busy loops still charges them 4 ns of vtime per ns. At their machine share,
 * whoever ran at such a moment was charged 64 and the loops waiting nothing.
 */
static void test_vtime_counts_the_share_of_the_queue(void)
{
	u64 quiet, busy;

	reset(2);
	add_cgroup(20, 100, 0, 0);
	for (int i = 0; i < 4; i++)
		wake(new_task(i, 20));
	run_for(100 * MS);
	quiet = vtime_rate(200 * MS);
	fdl.root_wsum += 1500;
	busy = vtime_rate(200 * MS);
	fdl.root_wsum -= 1500;
	printf("vtime per ns of a loop of four: %.2f alone at the root, %.2f beside 1500 of root weight\n",
	       quiet / 1000.0, busy / 1000.0);
	CHECK("a queue's vtime rate is its members' share of the queue (4 per ns), whatever runs beside it",
	      quiet >= 3900 && quiet <= 4100 && busy >= 3900 && busy <= 4100, "%llu, %llu (x 1000)", quiet, busy);
}

/*
 * Tasks that were queued before their cgroup ran out of quota: the dispatcher passes them to the
 * hold queue and still finds the work of another queue, however many queues held only such tasks.
 */
static void test_throttled_queues_are_passed(void)
{
	reset(1);
	add_cgroup(10, 100, 0, 0);
	add_cgroup(11, 100, 0, 0);
	add_cgroup(20, 100, 0, 0);
	limit(10, 100000, 10000, 0);
	limit(11, 100000, 10000, 0);
	for (int i = 0; i < 5; i++) {
		struct task *k = new_task(i, i < 2 ? 10 : i < 4 ? 11 : 20);

		k->runnable = true;
		fdl_on_runnable(&k->t, 100, true);
		fdl_queued_add(&k->t, env.cg[k->t.cgref].cont_slot, 0, k->t.vtime, false);	/* as fdl_on_enqueue */
		env_insert_vtime(&k->p, k->t.cgref, tun.slice_ns, k->t.vtime, 0, 0);
	}
	env.cg[10].bw.runtime_ns = env.cg[11].bw.runtime_ns = -1;	/* ran out meanwhile */
	env.cg[10].cvtime = 0;	/* the fair order looks at the throttled queues first */
	env.cg[11].cvtime = 1;
	env.cg[20].cvtime = 2;
	env.cur_cpu = 0;
	fdl_on_dispatch(0, NULL, NULL);
	CHECK("the unthrottled cgroup's task is dispatched", env.local[0].n == 1 &&
	      task_of(env.local[0].task[0])->t.cgref == 20, "%d on CPU 0", env.local[0].n);
	CHECK("the throttled ones wait in the hold queue, counted in their queues no more",
	      env_nr_queued(FDL_DSQ_HOLD) == 4 && !*fdl_queued_nr(env.cg[10].cont_slot) &&
	      !*fdl_queued_nr(env.cg[11].cont_slot), "%d held, counts %lld %lld",
	      env_nr_queued(FDL_DSQ_HOLD), (long long)*fdl_queued_nr(env.cg[10].cont_slot),
	      (long long)*fdl_queued_nr(env.cg[11].cont_slot));
	CHECK("and the hold timer is armed for the refill", env.hold_armed &&
	      env.hold_at == env.cg[10].bw.period_start + 100 * MS, "armed %d at %llu", env.hold_armed,
	      env.hold_at);
}

/*
 * Queue domains (two LLCs of two CPUs each): a queue counts its tasks per domain, and a take or a
 * peek asks only the domains counted non-empty (fdl_queued_doms; the fake's takes see only the
 * tasks of those domains, as the program asks only their DSQs). Work queued in one domain only is
 * still taken by a CPU of the other; a queue counted empty gives no counts (a full scan's take
 * looks everywhere); and in a mixed run across both domains no task is stranded
 * (check_queued_counts after every step: each domain's count covers its tasks).
 */
static void test_domains_take_only_where_counted(void)
{
	struct task *k;
	u32 s;

	reset_two_domains();
	add_cgroup(10, 100, 0, 0);
	s = env.cg[10].cont_slot;
	for (int i = 0; i < 2; i++) {	/* queued on CPU 3's behalf: domain 1 */
		k = new_task(i, 10);
		k->runnable = true;
		fdl_on_runnable(&k->t, 100, true);
		fdl_queued_add(&k->t, s, env_insert_dom(&k->p, 3), k->t.vtime, false);	/* as fdl_on_enqueue */
		env_insert_vtime(&k->p, 10, tun.slice_ns, k->t.vtime, 0, env_insert_dom(&k->p, 3));
	}
	CHECK("two tasks queued in domain 1: counted there, and the takes are given the counts",
	      fdl_queued_of(s)->dom.nr[1] == 2 && !fdl_queued_of(s)->dom.nr[0] &&
	      fdl_queued_doms(s) == &fdl_queued_of(s)->dom, "counts %d %d, given %d",
	      fdl_queued_of(s)->dom.nr[0], fdl_queued_of(s)->dom.nr[1], !!fdl_queued_doms(s));
	env.cur_cpu = 0;
	fdl_on_dispatch(0, NULL, NULL);
	CHECK("CPU 0, of domain 0, takes one from domain 1", env.local[0].n == 1, "%d on CPU 0",
	      env.local[0].n);
	if (env.local[0].n) {
		start(0, task_of(fake_pop(&env.local[0])));
		env.idle[0] = false;
	}
	CHECK("started, it counts there no more", fdl_queued_of(s)->dom.nr[1] == 1 &&
	      *fdl_queued_nr(s) == 1, "domain 1 %d, total %lld", fdl_queued_of(s)->dom.nr[1],
	      (long long)*fdl_queued_nr(s));
	env.cur_cpu = 1;
	fdl_on_dispatch(1, NULL, NULL);
	if (env.local[1].n) {
		start(1, task_of(fake_pop(&env.local[1])));
		env.idle[1] = false;
	}
	CHECK("the other taken too: the queue is counted empty, and a take (a full scan's) would "
	      "look at every domain", !fdl_queued_of(s)->dom.nr[1] && !*fdl_queued_nr(s) &&
	      !fdl_queued_doms(s), "domain 1 %d, given %d", fdl_queued_of(s)->dom.nr[1],
	      !!fdl_queued_doms(s));

	/* A mixed run over both domains: a deadline probe pair, wakers, and two hogs. */
	reset_two_domains();
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	grant(10, 500);
	add_cgroup(11, 100, 0, 0);
	probe_pair(0, 10, 1 * MS, 5 * MS);
	for (int i = 2; i < 8; i++)
		periodic(i, 11, 2 * MS, 4 * MS);
	wake(new_task(8, FDL_ROOT_CGREF));
	wake(new_task(9, FDL_ROOT_CGREF));
	run_for(500 * MS);
	for (int i = 0; i < 10; i++)
		CHECK("every task ran, none stranded in a domain counted empty",
		      tasks[i].ran_ns >= 10 * MS && worst_off(i, 1) < 100 * MS,
		      "task %d ran %llu ms, off %llu ms at worst", i, tasks[i].ran_ns / MS,
		      worst_off(i, 1) / MS);
	/*
	 * Tens at least in each: where tasks queue follows the fair order's placements (52 and 856
	 * since cgroup virtual time counts CPU time at a fixed weight, over 100 each before, with the
	 * same CPU time per task within 3 %).
	 */
	CHECK("context: work was queued in both domains", env.dom_inserts[0] > 20 &&
	      env.dom_inserts[1] > 20, "%u, %u", env.dom_inserts[0], env.dom_inserts[1]);
}

/* Lifting a limit frees its held tasks at once, not at the next boundary. */
static void test_lifted_limit_releases_at_once(void)
{
	u64 before, after;

	reset(1);
	add_cgroup(10, 100, 0, 0);
	limit(10, 100000, 10000, 0);
	wake(new_task(0, 10));
	run_for(30 * MS);	/* 10 ms run, then throttled until 100 ms */
	before = tasks[0].ran_ns;
	limit(10, 100000, ~0ULL, 0);
	run_for(20 * MS);
	after = tasks[0].ran_ns;
	printf("lifted limit: ran %llu ms before, %llu ms in the 20 ms after\n", before / MS,
	       (after - before) / MS);
	CHECK("throttled after its 10 ms", before <= 11 * MS, "%llu ms", before / MS);
	CHECK("runs again at once when the limit is lifted", after - before >= 18 * MS, "%llu ms",
	      (after - before) / MS);
	CHECK("no cgroup counted as limited", fdl.counters.nr_limited == 0, "%llu",
	      fdl.counters.nr_limited);
}

/*
 * Overload beyond the guarantees (the matrix's spin10 cell): three probes whose workers spin 10 ms
 * every 30 ms (0.67 CPU each) in a 4 ms and a 20 ms container (0.29 CPU guaranteed each) and a
 * cgroup without parameters, beside ten busy wakers, on 2 CPUs with the VM's 4 ms tick. Every
 * cgroup wants more than its fair share (0.5 CPU). Beyond its guarantee a deadline container gets
 * its fair share, not more: by its deadline it was served whenever it woke (its deadline bandwidth
 * is its share among the cgroups active at each moment), took 0.65 CPU and left the cgroup without
 * parameters 0.41 with a p99 7 ms worse than with no deadlines at all.
 */
static void overload_run(bool with_dl, u64 cpu_ms[4], u64 *cfs_p99)
{
	int i;

	probe_cgroups(with_dl, 293);
	probe_wakes = true;
	jitter_us = 2000;
	tick_ms = 4;
	probe_pair(0, 10, 10 * MS, 30 * MS);
	probe_pair(2, 11, 10 * MS, 30 * MS);
	probe_pair(4, 12, 10 * MS, 30 * MS);
	for (i = 2; i < 6; i++)	/* the three probes out of phase */
		tasks[i].next_wake += (i / 2) * 10 * MS;
	wakers(6, 20);
	run_for(10000 * MS);
	for (i = 0; i < 4; i++)
		cpu_ms[i] = 0;
	for (i = 0; i < 16; i++)
		cpu_ms[i < 2 ? 0 : i < 4 ? 1 : i < 6 ? 2 : 3] += tasks[i].ran_ns / MS;
	*cfs_p99 = pct_late(4, 2, 99);
}

static void test_overload_beyond_the_guarantee_is_fair(void)
{
	u64 dl[4], fair[4], dl_p99, fair_p99;

	overload_run(true, dl, &dl_p99);
	overload_run(false, fair, &fair_p99);
	printf("overload: fdl / loose / cfs / wakers %llu / %llu / %llu / %llu ms of 20000 (all fair: %llu / %llu / %llu / %llu), cfs p99 %llu us (all fair %llu)\n",
	       dl[0], dl[1], dl[2], dl[3], fair[0], fair[1], fair[2], fair[3], dl_p99 / US,
	       fair_p99 / US);
	CHECK("beyond its guarantee, the 4 ms container gets no more than its fair share (+10 %)",
	      dl[0] <= 5500, "%llu ms of 20000", dl[0]);
	CHECK("the cgroup without parameters keeps its fair share (-10 %)", dl[2] >= 4500,
	      "%llu ms of 20000", dl[2]);
	CHECK("... and its p99 is no worse than with no deadlines at all (+ a tick)",
	      dl_p99 <= fair_p99 + 4 * MS, "%llu us vs %llu us", dl_p99 / US, fair_p99 / US);
}

/*
 * A container that ran beyond its guarantee waits for the fair order, and its bucket does not move
 * meanwhile. When it earns its way back within its guarantee, its deadline promise starts anew, as
 * at a wake-up: before, its first start within counted as late by the whole wait (the matrix's
 * spin1 cell: 46 ms late with a 4 ms deadline).
 */
static void test_back_within_the_guarantee_starts_a_new_bucket(void)
{
	struct fdl_entity *e;
	u64 key;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	grant(10, 100);				/* 0.1 CPU */
	e = &env.cg[10].ent;
	fdl_entity_budget(e, env.now);
	e->budget_ns = -(s64)(1 * MS);		/* it ran 1 ms beyond its guarantee */
	run_for(50 * MS);			/* ... and waited 50 ms for the fair order */
	key = fdl_entity_order(e, env.now, vdt());	/* it earned 5 ms: within again */
	CHECK("back within its guarantee", fdl_entity_within(e, env.now), "budget %lld ns",
	      (long long)e->budget_ns);
	CHECK("its deadline starts anew: not behind vdt", !fdl_time_before(key, vdt()),
	      "key - vdt = %lld us", (long long)(key - vdt()) / (long long)US);
	CHECK("... at its deadline_wakeup", key == vdt() + 2 * MS, "key - vdt = %lld us",
	      (long long)(key - vdt()) / (long long)US);
}


/*
 * Beyond its guarantee, or without one, a container whose deadline is looser than fair work's
 * (20 ms against 5 ms) is served as fair work (fdl_entity_orders): in the tier behind the
 * guarantees its deadline only made it wait longer than a cgroup without parameters. Within its
 * guarantee it runs by its deadline; a 4 ms container and a 5 ms one (fair work's own) keep their
 * deadlines beyond their guarantees. Served as fair work, its starts are still counted: beyond
 * its guarantee never as late (it promised nothing there), without a guarantee against its
 * deadline.
 */
static void test_loose_beyond_its_guarantee_is_fair_work(void)
{
	struct fdl_entity *tight, *loose, *e;
	struct fdl_cgroup *top;
	struct task *k;

	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	add_cgroup(11, 100, 20 * MS, 0);
	add_cgroup(12, 100, 20 * MS, 0);
	add_cgroup(13, 100, 5 * MS, 0);
	grant(10, 100);
	grant(11, 100);
	grant(13, 100);
	tight = &env.cg[10].ent;
	loose = &env.cg[11].ent;
	new_task(0, 10);
	k = periodic(1, 11, 1 * MS, 10 * MS);
	new_task(2, 12);
	new_task(3, 13);
	fdl_task_queue(&k->t, &top, &e, env.now);
	CHECK("within its guarantee the 20 ms container's work runs by its deadline", e == loose,
	      "entity %s", e == &fdl.fair ? "fair work" : "other");
	fdl_entity_budget(tight, env.now);
	fdl_entity_budget(loose, env.now);
	fdl_entity_budget(&env.cg[13].ent, env.now);
	tight->budget_ns = loose->budget_ns = env.cg[13].ent.budget_ns = -(s64)(50 * MS);
	fdl_task_queue(&k->t, &top, &e, env.now);
	CHECK("beyond it, as fair work", e == &fdl.fair && top == &env.cg[11], "entity %s",
	      e == loose ? "its own" : "other");
	fdl_task_queue(&tasks[0].t, &top, &e, env.now);
	CHECK("the 4 ms container beyond its guarantee keeps its deadline", e == tight, "entity %s",
	      e == &fdl.fair ? "fair work" : "other");
	fdl_task_queue(&tasks[2].t, &top, &e, env.now);
	CHECK("a 20 ms container without a guarantee is fair work too", e == &fdl.fair &&
	      top == &env.cg[12], "entity %s", e == &env.cg[12].ent ? "its own" : "other");
	fdl_task_queue(&tasks[3].t, &top, &e, env.now);
	CHECK("a container at fair work's 5 ms keeps its deadline beyond its guarantee",
	      e == &env.cg[13].ent, "entity %s", e == &fdl.fair ? "fair work" : "other");
	run_for(200 * MS);
	CHECK("still beyond its guarantee", !fdl_entity_within(loose, env.now), "budget %lld ns",
	      (long long)loose->budget_ns);
	CHECK("its wake-ups served as fair work are counted, none late",
	      loose->nr_wake_starts >= 15 && !loose->nr_wake_misses && !loose->nr_misses,
	      "%llu wake-ups started, %llu missed, %llu starts missed",
	      (u64)loose->nr_wake_starts, (u64)loose->nr_wake_misses, (u64)loose->nr_misses);
	/*
	 * Without a guarantee its deadline is still its promise: a wake-up that waits 40 ms for a
	 * CPU starts 20 ms past its 20 ms deadline, and is counted so.
	 */
	k = &tasks[2];
	fdl_on_runnable(&k->t, 100, true);
	k->t.enqueued_at = env.now;
	env.now += 40 * MS;
	start(1, k);
	CHECK("without a guarantee, a start served as fair work is counted against its deadline",
	      env.cg[12].ent.nr_wake_starts == 1 && env.cg[12].ent.nr_wake_misses == 1,
	      "%llu wake-ups started, %llu missed", (u64)env.cg[12].ent.nr_wake_starts,
	      (u64)env.cg[12].ent.nr_wake_misses);
}

/*
 * A container comes back within its guarantee on one CPU (fdl_entity_budget: a new deadline and a
 * positive budget) while another CPU reads where it stands (fdl_entity_order, as a start or a pick
 * does), replayed at the refill's barrier. The reader sees either beyond its guarantee (a tier
 * back, no promise) or within with the new deadline, never within with the old one: that start
 * would count as late by its whole wait (the matrix's wake cell: one start 33 ms late).
 */
static struct fdl_entity *refill_e;
static u64 refill_key;

static void refill_read(void)
{
	refill_key = fdl_entity_order(refill_e, env.now, vdt());
}

static void test_refill_publishes_the_deadline_first(void)
{
	reset(2);
	add_cgroup(10, 100, 4 * MS, 2 * MS);
	grant(10, 100);				/* 0.1 CPU */
	refill_e = &env.cg[10].ent;
	fdl_entity_budget(refill_e, env.now);
	refill_e->budget_ns = -(s64)(1 * MS);	/* beyond its guarantee, its bucket behind vdt */
	run_for(50 * MS);
	refill_key = 0;
	env.mb_hook = refill_read;
	env.mb_hook_at = 1;
	fdl_entity_budget(refill_e, env.now);
	env.mb_hook = NULL;
	CHECK("the refill was read halfway", refill_key != 0, "no read");
	CHECK("read halfway through the refill: no promise yet, or the new deadline",
	      !fdl_time_before(refill_key, vdt()), "key - vdt = %lld us",
	      (long long)(refill_key - vdt()) / (long long)US);
}

/*
 * Issue 14, defect 7: a cpu.weight write and the guarantee loop's boost race. Each interleaving is
 * replayed through the fake barrier hook: the other writer runs between one writer's read of the
 * two fields and its apply, so that writer applies a stale weight last. The weight must end as
 * both fields ask, and the parent's sum must match the contribution. (The old writers, in
 * main.bpf.c: a cpu.weight write seen while a boost was set was not applied, and the boost's
 * writer dropping to 0 applied the cpu.weight it had read before: the cgroup kept weight 100
 * with cpu.weight 200 and no boost, until the boost next changed.)
 */
static struct fdl_cgroup *race_cg;

static void race_set_cpu_weight_200(void)
{
	fdl_cgroup_set_cpu_weight(race_cg, 200);
}

static void race_drop_boost(void)
{
	fdl_cgroup_set_boost(race_cg, 0);
}

static void race_setup(void)
{
	reset(2);
	add_cgroup(10, 100, 0, 0);
	race_cg = &env.cg[10];
	/* Active, contributing to the root as fdl_cgroup_propagate() leaves it. */
	race_cg->nr_active = 1;
	race_cg->contrib = 100;
	fdl.root_wsum = 100;
	fdl_cgroup_set_boost(race_cg, 500);
}

/* The cgroup's weight, its contribution and its parent's sum all say `want`. */
static void check_weight(const char *what, u32 want)
{
	CHECK(what, race_cg->weight == want && race_cg->contrib == want && fdl.root_wsum == want,
	      "weight %u contrib %lld wsum %lld, want %u", race_cg->weight, race_cg->contrib,
	      fdl.root_wsum, want);
}

static void test_weight_and_boost_writers_race(void)
{
	race_setup();
	check_weight("a boost applies", 500);
	/* The boost drops; the cpu.weight write lands after its read (its 2nd barrier). */
	env.mb_hook = race_set_cpu_weight_200;
	env.mb_hook_at = 2;
	fdl_cgroup_set_boost(race_cg, 0);
	check_weight("boost dropped while cpu.weight changed: the new cpu.weight rules", 200);

	/* The other order: the cpu.weight writer read the boost (500) before it dropped. */
	race_setup();
	env.mb_hook = race_drop_boost;
	env.mb_hook_at = 2;
	fdl_cgroup_set_cpu_weight(race_cg, 200);
	check_weight("cpu.weight changed while the boost dropped: the new cpu.weight rules", 200);

	/* While a boost is set, a cpu.weight write changes nothing until it drops. */
	race_setup();
	fdl_cgroup_set_cpu_weight(race_cg, 300);
	check_weight("the boost rules while set", 500);
	fdl_cgroup_set_boost(race_cg, 0);
	check_weight("then it decays to cpu.weight", 300);
}

/*
 * Load tracking (policy/load.h): a task counts on the CPU it woke for, moves with the CPU it runs
 * on (its old CPU's sums through the removed counters, folded in there later), and leaves when it
 * sleeps; each CPU records its period's candidates once; a balancer move is taken at the next
 * enqueue and counted when it arrives; a bad request changes nothing.
 */
static void test_load_follows_tasks_between_cpus(void)
{
	struct task *a = &tasks[0], *b = &tasks[1];
	struct fdl_lb_move moves[2] = { { .pid = 11, .dom = 1 }, { .pid = 12, .dom = 7 } };
	struct fdl_cpu_load *c0 = &env.cpu[0].load, *c2 = &env.cpu[2].load;
	struct fdl_pelt pelt;
	u64 w, n, upd;

	reset_two_domains();
	a->p.pid = 11;
	b->p.pid = 12;
	a->t.weight = 100;
	b->t.weight = 300;

	fdl_load_runnable(&a->t, 0, env.now);
	fdl_load_runnable(&b->t, 0, env.now);
	CHECK("both count on CPU 0", c0->weight_sum == 400 && c0->nr_runnable == 2,
	      "weight %llu runnable %llu", c0->weight_sum, c0->nr_runnable);
	/* What each CPU starts (fdl_on_running's fdl_cpu_set): a as fair work, b by a 4 ms deadline. */
	env.cpu[0].queue = FDL_DSQ_FAIR;
	env.cpu[0].rr_ns = 5 * MS;
	env.cpu[2].queue = 42;
	env.cpu[2].rr_ns = 4 * MS;
	fdl_load_running(&a->t, a->p.pid, 0, 0, env.now);
	fdl_load_running(&b->t, b->p.pid, 2, 1, env.now);	/* taken by CPU 2, of domain 1 */
	CHECK("b moved with its CPU: out of CPU 0 through its removed counters",
	      c0->weight_sum == 400 && c0->removed_weight == 300 && c0->removed_nr == 1 &&
	      c2->weight_sum == 300 && c2->nr_runnable == 1, "c0 %llu (removed %llu) c2 %llu",
	      c0->weight_sum, c0->removed_weight, c2->weight_sum);
	fdl_cpu_load_view(c0, &pelt, &w, &n, env.now);
	CHECK("a reader sees CPU 0 without it at once", w == 100 && n == 1, "%llu %llu", w, n);
	CHECK("each recorded once as a candidate of its CPU",
	      c0->nr_active == 1 && c0->active[0].pid == 11 && c2->nr_active == 1 &&
	      c2->active[0].pid == 12 && c2->active[0].weight == 300, "c0 %llu c2 %llu",
	      c0->nr_active, c2->nr_active);
	CHECK("each with the deadline it started under (the balancer's deadline pressure), none as fair work",
	      c0->active[0].deadline_rr_ns == 0 && c2->active[0].deadline_rr_ns == 4 * MS,
	      "a %llu b %llu", c0->active[0].deadline_rr_ns, c2->active[0].deadline_rr_ns);
	/* Both run for a second and stop, their CPUs idle: the loads are their weights, busy. */
	env.now += 1000 * MS;
	fdl_load_idle(0, true, env.now);	/* nothing else to run: idle */
	fdl_load_idle(2, true, env.now);	/* nothing else to run: idle */
	CHECK("CPU 0 folded the removal in at its next update", c0->weight_sum == 100 &&
	      c0->removed_weight == 0 && c0->removed_nr == 0, "%llu", c0->weight_sum);
	fdl_load_idle(0, false, env.now);	/* a woke again on CPU 0, which leaves idle */
	upd = c0->pelt.last_update_ns;
	env.now += 5 * MS;
	fdl_load_running(&a->t, a->p.pid, 0, 0, env.now);	/* again, same period: not recorded */
	CHECK("a task counted on its CPU starts there with no update of the CPU's sums",
	      c0->pelt.last_update_ns == upd && c0->running, "updated %llu -> %llu",
	      upd, c0->pelt.last_update_ns);
	fdl_load_idle(0, true, env.now);	/* nothing else to run: idle */
	CHECK("a candidate once per period", c0->nr_active == 1, "%llu", c0->nr_active);
	fdl_cpu_load_view(c0, &pelt, &w, &n, env.now);
	CHECK("CPU 0's load is a's weight, its util busy", pelt.load_avg >= 95 &&
	      pelt.load_avg <= 100 && pelt.util_avg >= 1000, "load %llu util %llu", pelt.load_avg,
	      pelt.util_avg);
	fdl_cpu_load_view(c2, &pelt, &w, &n, env.now);
	CHECK("CPU 2's load is b's weight", pelt.load_avg >= 285 && pelt.load_avg <= 300,
	      "%llu", pelt.load_avg);
	fdl_cpu_load_view(&env.cpu[1].load, &pelt, &w, &n, env.now);
	CHECK("an idle CPU has none", pelt.load_avg == 0 && pelt.util_avg == 0, "%llu",
	      pelt.load_avg);
	/* A task's sums are brought to now where they are read (fdl_load_running's candidate). */
	fdl_pelt_accumulate(&b->t.pelt, env.now, 1, 1, 0);
	fdl_pelt_avg(&b->t.pelt, b->t.weight);
	CHECK("a task's load is its weight while runnable", b->t.pelt.load_avg >= 285 &&
	      b->t.pelt.load_avg <= 300, "%llu", b->t.pelt.load_avg);

	/* A request naming a domain that does not exist changes nothing. */
	CHECK("bad domain refused", fdl_lb_set_moves(moves, 2) == -EINVAL && fdl.lb.gen == 0 &&
	      fdl.lb.nr_moves == 0, "gen %llu", fdl.lb.gen);
	CHECK("too many refused", fdl_lb_set_moves(moves, FDL_LB_MAX_MOVES + 1) == -E2BIG &&
	      fdl.lb.gen == 0, "gen %llu", fdl.lb.gen);
	CHECK("a move accepted", fdl_lb_set_moves(moves, 1) == 0 && fdl.lb.gen == 1, "gen %llu",
	      fdl.lb.gen);
	/* a is queued again: in domain 1, at the CPU the loader named for it. */
	CHECK("a queued in its new domain", fdl_lb_cpu(&a->p, &a->t, a->p.pid) == 2 &&
	      fdl_lb_cpu(&b->p, &b->t, b->p.pid) == -1, "a %d", fdl_lb_cpu(&a->p, &a->t, a->p.pid));
	fdl_load_running(&a->t, a->p.pid, 1, 0, env.now);	/* an idle CPU of domain 0 took it */
	fdl_load_idle(1, true, env.now);	/* nothing else to run: idle */
	CHECK("a move that did not arrive is kept for the next enqueue",
	      fdl_lb_cpu(&a->p, &a->t, a->p.pid) == 2 && env.cpu[1].load.nr_moved_in == 0, "lb_dom %u",
	      a->t.lb_dom);
	fdl_load_running(&a->t, a->p.pid, 3, 1, env.now);
	CHECK("the move arrived and was counted", env.cpu[3].load.nr_moved_in == 1 &&
	      a->t.lb_dom == 0 && a->t.load_cpu == 4, "moved %llu", env.cpu[3].load.nr_moved_in);
	CHECK("a new period's candidates replace the old: a, where it first ran in it",
	      env.cpu[1].load.lb_gen == 1 && env.cpu[1].load.nr_active == 1 &&
	      env.cpu[1].load.active[0].pid == 11 && env.cpu[3].load.nr_active == 0, "cpu1 n %llu",
	      env.cpu[1].load.nr_active);
	CHECK("a move is taken once", fdl_lb_cpu(&a->p, &a->t, a->p.pid) == -1, "lb_dom %u",
	      a->t.lb_dom);

	/* Both sleep where they run: the sums are empty, and the loads decay. */
	fdl_load_quiescent(&a->t, 3, env.now);
	fdl_load_quiescent(&b->t, 2, env.now);
	CHECK("sleepers leave the sums", env.cpu[3].load.weight_sum == 0 && c2->weight_sum == 0 &&
	      c2->nr_runnable == 0, "c2 %llu", c2->weight_sum);
	fdl_cpu_load_view(&env.cpu[1].load, &pelt, &w, &n, env.now);
	CHECK("CPU 1, idle since a left it, holds the removal until its next update; readers see it",
	      env.cpu[1].load.removed_weight == 100 && w == 0 && n == 0, "removed %llu w %llu",
	      env.cpu[1].load.removed_weight, w);
	env.now += 100 * MS;
	fdl_cpu_load_view(c2, &pelt, &w, &n, env.now);
	CHECK("blocked load decays (3 half-lives: ~1/8)", pelt.load_avg >= 30 && pelt.load_avg <= 45,
	      "%llu", pelt.load_avg);
}

int main(void)
{
	test_first_waiter_starts_without_a_peek();
	test_entity_catches_up_with_every_halving();
	test_fair_picks_are_judged_with_a_budget_too();
	test_budget_read_often_earns_its_rate();
	test_cpu_record_written_after_the_readers_clock();
	test_load_follows_tasks_between_cpus();
	test_interactive_before_batch();
	test_slice_ends_inside_a_tick();
	test_late_pick_is_counted();
	test_start_without_cpu_time_is_not_a_second_wake_up();
	test_lapsed_timer_kicks_nothing();
	test_tied_keys_do_not_storm();
	test_weight_and_boost_writers_race();
	test_quota_limits_a_cgroup();
	test_throttled_time_counts_run_queues();
	test_deadline_container_under_a_quota();
	test_parent_limit_binds_children();
	test_throttled_cgroup_leaves_its_parents_weights();
	test_hold_and_release_in_any_order();
	test_idle_cgroup_weighs_the_least();
	test_burst_carries_unused_quota();
	test_quota_runs_out_at_a_tick();
	test_lifted_limit_releases_at_once();
	test_throttled_queues_are_passed();
	test_domains_take_only_where_counted();
	test_head_bound_kept_between_peeks();
	test_nested_deadline_container();
	test_nested_burst_past_budget_runs_on_as_fair();
	test_nested_guarantee_without_deadlines_runs();
	test_nested_guarantee_leaves_the_rest_shared();
	test_cpu_passes_work_bound_elsewhere();
	test_running_task_joins_its_new_queue();
	test_cgroup_far_ahead_runs_within_the_window();
	test_vtime_counts_the_share_of_the_queue();
	test_fair_share_protected_from_overcommitted_guarantees();
	test_protected_share_counts_sleeping_guarantees();
	test_floor_protection_keeps_guarantees_that_fit();
	test_guarantee_counts_the_kernels_cpu_time();
	test_fair_clock_waits_for_running_cgroups();
	test_container_wake_credit_per_task_up_to_the_cpus();
	test_parallel_burst_beside_busy_loops();
	test_pinned_container_takes_its_cpu_from_busy_loops();
	test_cgroup_vtime_counts_cpu_time_at_weight();
	test_root_tasks_wake_at_a_fresh_clock();
	test_limited_cgroup_does_not_hold_the_fair_clock();
	test_idle_pick_claims_the_cpu();
	test_scan_asks_active_queues_only();
	test_full_scan_asks_one_domain_in_turn();
	test_contribution_follows_activity();
	test_cpu_going_idle_takes_work_queued_meanwhile();
	test_cpu_looks_again_for_work_on_its_way();
	test_cpu_looks_again_for_work_on_its_way_past_bound_work();
	test_prev_keeps_the_cpu_when_nothing_can_be_taken();
	test_cpu_promised_to_a_wakeup_leaves_the_queues();
	test_cpu_promised_to_a_wakeup_is_not_bound_again();
	test_cpu_takes_work_that_lands_after_its_take();
	test_idle_cpu_woken_for_queued_work_is_not_bound();
	test_within_guarantee_ahead_of_fair_work();
	test_policy_matrix();
	test_preemption_is_a_loan();
	test_loan_waits_for_the_rest_of_the_burst();
	test_loan_keeps_the_slack_rule_for_others();
	test_preemption_beyond_guarantees_is_a_loan();
	test_guarantee_is_a_budget();
	test_loose_not_preempted_by_fair_work();
	test_quiet_loose_no_worse_than_cfs();
	test_deadlines_set_at_run_time();
	test_idle_wake_sets_the_deadline();
	test_miss_moves_vdt_once_and_halves_the_spread();
	test_lateness_window();
	test_overcommit_shares_lateness();
	test_woken_task_beats_busy_sibling();
	test_late_container_within_guarantee_competes();
	test_victim_chosen_by_slack();
	test_work_about_to_sleep_is_not_preempted();
	test_victim_among_fair_work_is_the_cgroup_ahead();
	test_edf_and_slice();
	test_clocks_apart();
	test_within_bandwidth();
	test_nice_within_a_cgroup();
	test_cgroups_before_tasks();
	test_interactive_beside_many_wakers();
	test_fair_wakeup_preemption();
	test_kept_hog_stays_preemptible();
	test_sibling_wakeup_preemption();
	test_slice_shared_by_waiters();
	test_interactive_pod_beside_a_pod_of_wakers();
	test_within_bandwidth_beats_overrun();
	test_deadline_never_worse_than_fair();
	test_fair_work_keeps_its_bandwidth();
	test_fair_order_keeps_the_deadline_fresh();
	test_boosts_stay_out_of_the_fair_order();
	test_overload_beyond_the_guarantee_is_fair();
	test_back_within_the_guarantee_starts_a_new_bucket();
	test_loose_beyond_its_guarantee_is_fair_work();
	test_refill_publishes_the_deadline_first();
	test_a_guarantee_sums_its_subtree_as_it_runs();
	CHECK("every queue's count was never below what it held, and exactly its tasks' (every step "
	      "of every scenario)", !queued_count_errors, "%d steps broke it", queued_count_errors);
	printf("policy: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
