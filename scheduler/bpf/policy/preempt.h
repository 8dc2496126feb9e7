/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Preemption. sched_ext has no wake-up preemption of its own and checks slices only at the tick,
 * so the policy does it: a waking task with an earlier deadline than the work of a busy CPU takes
 * that CPU at once (inserted into its local queue with SCX_ENQ_PREEMPT), running work gets a
 * slice that ends where the next competing deadline takes over, and where a deadline falls inside
 * a tick a per-CPU timer preempts in time.
 */
#ifndef __FDL_POLICY_PREEMPT_H
#define __FDL_POLICY_PREEMPT_H

#include "cgroup.h"

/*
 * Candidates examined for one wake-up: the task's last CPU, one online CPU chosen at random and
 * the online one after it, so the two are distinct (on two CPUs: both).
 */
#define FDL_VICTIM_CANDIDATES	3

/*
 * Record what a CPU runs from now: work of deadline entity `entity` (fdl_entity_id) whose
 * bucket is at dl, filling at bw, within its guarantee for budget_ns more of running (<= 0: not).
 */
static __always_inline void fdl_cpu_set(struct fdl_cpu *cc, u64 entity, u64 cont, u64 dl, u64 now,
					u64 bw, u64 rr_ns, s64 budget_ns)
{
	cc->queue = entity;
	cc->cont = cont;
	cc->dl = dl;
	cc->since = now;
	cc->bw = bw;
	cc->rr_ns = rr_ns;
	cc->within_until = budget_ns > 0 ? now + (u64)budget_ns : 0;
}

/*
 * The CPU's task, from now on, has run burst_ns since it last woke, usually runs avg_ns between
 * wake-ups, and has vtime `vtime` (fdl_note_fair and fdl_note_sibling read how long it has run
 * without sleeping, and where it stands in its queue; fdl_cpu_ends_soon how soon it will sleep):
 * where it starts (ops.running), keeps the CPU at a dispatch, or stops (0), and where a waker
 * claims the CPU (0: not CPU-bound work for the next waker, and no burst known).
 */
static __always_inline void fdl_cpu_burst(struct fdl_cpu *cc, u64 now, u64 burst_ns, u64 avg_ns,
					  u64 vtime)
{
	cc->run_start = now;
	cc->burst_ns = burst_ns;
	cc->avg_burst_ns = avg_ns;
	cc->vtime = vtime;
}

/*
 * How long a CPU taken from work of the fair order by a deadline owes it back (fdl_loan_due):
 * longer than any burst that took it within a slice or two; a loan not returned by then has lapsed.
 */
#define FDL_LOAN_NS	(4 * tun.slice_ns)

/* How long the task cc runs has run by now since it last woke (fdl_cpu_burst's record). */
static __always_inline u64 fdl_cpu_burst_at(struct fdl_cpu *cc, u64 now)
{
	return cc->burst_ns + fdl_since(now, cc->run_start);
}

/*
 * Has the work cc runs run as long as a loan lasts since it last woke: past any burst (a busy
 * loop, a build job)? Such fair work gets no loan back (fdl_loan_due).
 */
static __always_inline bool fdl_cpu_bound(struct fdl_cpu *cc, u64 now)
{
	return fdl_cpu_burst_at(cc, now) >= FDL_LOAN_NS;
}

/*
 * Will the CPU's task sleep by itself within tun.lazy_preempt_ns (--lazy-preempt-us), by its usual
 * burst (fdl_cpu_burst's avg_ns) less what it has run since it woke, and within a quarter of the
 * slack of the waker with key dl (fdl_lazy_wait)? Then that waker, with an earlier deadline, does
 * not take its CPU at once: a deadline timer preempts it half-way to the waker's deadline
 * (fdl_timer_delay) if it runs on, and if it sleeps first the timer lapses and the CPU's
 * dispatcher starts the waker by its deadline, with no preemption. A preemption costs the work it
 * takes the CPU from the waker's whole burst, and both of them a switch; EEVDF on a PREEMPT_LAZY
 * kernel likewise only marks a fair wake-up preemption, which the next tick or the running task's
 * return to user space carries out. Not work without a known burst (none yet, or a busy loop that
 * never slept), nor work that has run past its usual burst: both are taken at once, as before. In
 * the matrix's quiet wake cell (workers spinning 50 us, about 120 us under the emulator) the 4 ms
 * container took the CPUs of the 20 ms container's threads 150 times in 12 s and of the cgroup
 * without parameters' 117 times, against 36 and 30 under EEVDF (bench/start-trace.py,
 * 2026-12-06). Off by default: measured in docs/benchmarks.md (2026-12-06).
 */
static __always_inline bool fdl_cpu_ends_soon(struct fdl_cpu *cc, u64 now, u64 dl, u64 vdt)
{
	return tun.lazy_preempt_ns &&
	       fdl_lazy_wait(cc->avg_burst_ns, fdl_cpu_burst_at(cc, now), tun.lazy_preempt_ns,
			     fdl_key_slack(dl, vdt));
}

/*
 * The live order key of a CPU's work (fdl_entity_order): its bucket filled by the time it ran
 * since, in its tier while its budget lasts.
 */
static __always_inline u64 fdl_cpu_dl(struct fdl_cpu *cc, u64 now, u64 vdt)
{
	return fdl_order_key(fdl_dl_fill(cc->dl, fdl_since(now, cc->since), cc->bw), vdt, cc->rr_ns,
			     fdl_time_before(now, cc->within_until));
}

/*
 * How far ahead in the fair order the fair work of queue `cont` is (a CPU's fdl_cpu.cont): its
 * container's cgroup virtual time (the root's own tasks: theirs). Of two CPUs running fair work,
 * the one further ahead has had more than its share: it is the victim.
 */
FDL_GLOBAL u64 fdl_cont_cvtime(u64 cont)
{
	struct fdl_cgroup *cg;

	if (cont == FDL_DSQ_FAIR)
		return fdl.root_cvtime;
	cg = env_cgroup(cont);
	return cg ? cg->cvtime : 0;
}

/* The victim search's candidates and arguments (fdl_choose_among). */
struct fdl_victims {
	s32 cpu[FDL_VICTIM_CANDIDATES];	/* candidates the task may run on, -1: none */
	s32 later;
	s32 cross;	/* a candidate whose earlier work's key passes the task's soonest, -1: none */
	u64 cross_ns;	/* in how long */
	s32 fair;	/* a candidate whose fair work a fair waker preempts (fdl_note_fair), -1: none */
	u64 fair_cv;	/* its cgroup's virtual time */
	s32 sibling;	/* a candidate whose work of the task's own queue it takes (fdl_note_sibling) */
	u64 sibling_vtime;	/* that work's vtime */
	u64 entity, own, queue, dl, now;
	u64 vtime;	/* the task's vtime (its queue's clock) */
	u32 wakeup;	/* the task woke (FDL_ENQ_WAKEUP), rather than being preempted or yielding */
	u32 compete;	/* it may take CPUs from other entities' work (deadline rights, fair order) */
	u32 pinned;	/* it may not run on every CPU (env_task_pinned) */
	u32 deferred;	/* later is a CPU whose work ends soon (fdl_cpu_ends_soon), not one without slack */
};

/*
 * Candidate cpu runs work whose key cur is not later than the waking task's (v->dl): it keeps
 * the CPU for now, but running fills its bucket and its key passes the task's in
 * fdl_key_run_time. Within their guarantees (both keys in the first tier, where the deadline is
 * promised), note the candidate whose key passes soonest, so that a timer hands over there:
 * sched_ext would let it run on to the end of its slice at a tick (the 1 ms container in the VM:
 * a worker waited 3 ms behind a 5 ms container's work whose deadline had been earlier by less
 * than a millisecond).
 */
static __always_inline void fdl_note_crossing(struct fdl_victims *v, struct fdl_cpu *cc, s32 cpu,
					      u64 cur, u64 vdt)
{
	u64 t;

	if (cc->queue == FDL_DSQ_FAIR || !fdl_key_within(cur, vdt) || !fdl_key_within(v->dl, vdt))
		return;
	t = fdl_key_run_time(fdl_dl_fill(cc->dl, fdl_since(v->now, cc->since), cc->bw), cc->bw, cc->rr_ns,
			     vdt, v->dl);
	if (t < tun.slice_ns && (v->cross < 0 || t < v->cross_ns)) {
		v->cross = cpu;
		v->cross_ns = t;
	}
}

/*
 * Fair wake-up preemption of CPU-bound work: a fair task that wakes takes a CPU from fair work of
 * another queue whose cgroup is ahead of the waker's in cgroup virtual time (fdl_cont_cvtime: it
 * had more than its share), once that work has run tun.fair_preempt_ns since it last woke; of
 * several, the one furthest ahead. Without it, a fair task woke to CPUs busy with fair work and
 * waited out the rest of their slices: a UI-like probe beside a CPU-bound build waited up to a
 * whole slice and the tick after it (p99 2.8 ms, desktop-mix). Only work that has run that long
 * without sleeping (20 ms by default: a build job, not a request handler): taken at any point of
 * its slice, as EEVDF does, work that sleeps soon by itself (another probe's spin) was preempted
 * too, and the wait only moved from one probe to another (simulation: three probes without
 * parameters, p99 2 -> 6 ms); at 3 ms, probes spinning 10 ms took each other's CPUs and hackbench
 * beside them lost 6 % (VM, same boot).
 */
static __always_inline void fdl_note_fair(struct fdl_victims *v, struct fdl_cpu *cc, s32 cpu)
{
	u64 cv;

	if (!tun.fair_preempt_ns || !v->wakeup || v->entity != FDL_DSQ_FAIR ||
	    cc->queue != FDL_DSQ_FAIR || cc->cont == v->queue)
		return;
	/*
	 * The burst before the two cgroups' clocks: a test on the record at hand, false for nearly
	 * every wake-up (work that has run 20 ms without sleeping is rare), where the clocks are two
	 * calls and a cgroup lookup each.
	 */
	if (fdl_cpu_burst_at(cc, v->now) < tun.fair_preempt_ns)
		return;
	cv = fdl_cont_cvtime(cc->cont);
	if (!fdl_time_before(fdl_cont_cvtime(v->queue), cv))
		return;
	if (v->fair < 0 || fdl_time_before(v->fair_cv, cv)) {
		v->fair = cpu;
		v->fair_cv = cv;
	}
}

/*
 * Wake-up preemption within a queue (off by default: --sibling-preempt-us): a task that wakes
 * takes the CPU of work of its own queue (a container's, or the root cgroup's own tasks') that
 * has run tun.sibling_preempt_ns since it last woke and is behind it in vtime (vtime order is
 * that queue's order: the waker would run first at the next pick anyway); of several, the one
 * furthest behind. The CPU's slice ends, and its dispatcher finds the waker first in their queue,
 * unless another queue's turn has come by the scan's order. The wait it removes: a probe that
 * shares its cgroup with CPU-bound work (a pod's health check beside its batch job) waited out a
 * worker's slice. Preemption by deadline (fdl_choose_among) never takes a CPU from its own
 * entity, and fair preemption (fdl_note_fair) only from another cgroup's. As there, only
 * CPU-bound work: work that sleeps soon by itself is left to finish.
 *
 * Why off: measured in the VM (same boot, 3 repeats) it lowers the median and p90 (the pod's
 * probe p50 0.38 -> 0.30 ms and p99 8.3 -> 7.2 ms, bench/scenarios/pod-batch.toml;
 * tests/vm/ui-build.sh p90 1.5 -> 0.6 ms) but not every tail under contention between cgroups:
 * where a message thread wakes the probe's workers, it now runs in the middle of its cgroup's
 * turn and wakes them as the turn ends, so the workers wait for the next one (overcommit-untuned,
 * the fair cgroup's probe: p99 20.5 -> 27.5 ms). Handing the CPU to the waker whatever the scan
 * said made both scenarios' p99 worse (pod 8.3 -> 9.3 ms, fair 22.5 -> 28.3 ms).
 */
static __always_inline void fdl_note_sibling(struct fdl_victims *v, struct fdl_cpu *cc, s32 cpu)
{
	if (!tun.sibling_preempt_ns || !v->wakeup || cc->cont != v->queue)
		return;
	if (fdl_cpu_burst_at(cc, v->now) < tun.sibling_preempt_ns)
		return;
	if (!fdl_time_before(v->vtime, cc->vtime))
		return;
	if (v->sibling < 0 || fdl_time_before(v->sibling_vtime, cc->vtime)) {
		v->sibling = cpu;
		v->sibling_vtime = cc->vtime;
	}
}

/*
 * The key of the fair work a waker of key v->dl would preempt (fdl_choose_among). Fair work within
 * its protected bandwidth (fdl_fair_within) is taken by a container within its guarantee only
 * for an earlier deadline than its own, by the slack rule, as a loan (fdl_loan_due) is given
 * back: the 20 ms container took the CPU of fair work that had started before it, on every
 * wake-up of its burst.
 */
static __always_inline u64 fdl_victim_fair_key(struct fdl_victims *v, u64 vdt)
{
	u64 key = fdl_fair_order(vdt);

	if (fdl_key_within(v->dl, vdt) && !fdl_key_overrun(key - FDL_TIER_NS, vdt) &&
	    fdl_fair_within(v->now))
		key -= FDL_TIER_NS;
	return key;
}

/*
 * The choice among the candidates, a global function verified once: inlined into enqueue, the
 * tie-break's extra state multiplied its verified instructions (195k -> 846k).
 */
FDL_GLOBAL s32 fdl_choose_among(struct fdl_victims *v)
{
	u64 vdt, cur, best_dl, later_dl, fair_key = 0, cv, best_cv = 0;
	s32 cpu, best = -1;
	struct fdl_cpu *cc;
	bool soon;
	int k;

	if (!v)
		return -1;
	vdt = fdl_vdt(v->now);
	best_dl = later_dl = v->dl;
	v->later = v->cross = v->fair = v->sibling = -1;
	v->deferred = 0;
	fdl_for_few(k, 0, FDL_VICTIM_CANDIDATES) {
		cpu = v->cpu[k];
		if (cpu < 0 || !(cc = env_cpu(cpu)))
			continue;
		fdl_note_sibling(v, cc, cpu);
		if (!v->compete)
			continue;
		fdl_note_fair(v, cc, cpu);
		if (cc->queue == v->entity || cc->queue == v->own)
			continue;
		/*
		 * The fair work's key once, where a candidate runs it: a fair waker never gets here
		 * for fair work (its own entity). Computed up front, with the fair container's refresh
		 * (a write to the shared record), on every wake-up: 199 instructions per enqueue in this
		 * function beside hackbench, 151 since (bench/insn-profile.sh antagonist=1).
		 */
		if (cc->queue == FDL_DSQ_FAIR && !fair_key)
			fair_key = fdl_victim_fair_key(v, vdt);
		cur = cc->queue == FDL_DSQ_FAIR ? fair_key : fdl_cpu_dl(cc, v->now, vdt);
		/*
		 * Fair work's key speaks for the machine: behind vdt where fair work used less than
		 * its bandwidth, an idle CPU's worth of it too. To a waker that may not use every CPU,
		 * fair work that has held this one as long as a loan lasts without sleeping (a busy
		 * loop bound there) is not late: it is preempted as work of the second tier. Raised to
		 * the first tier at its bucket, deadline_rr behind vdt, two busy loops bound to the one
		 * CPU of a 4 ms container within its guarantee kept it for their whole slices: 851 of
		 * 1426 wake-ups late (test_pinned_container_takes_its_cpu_from_busy_loops; in the VM,
		 * 21 % of its starts, bench/scenarios/pinned.toml).
		 */
		if (cc->queue == FDL_DSQ_FAIR && v->pinned && fdl_key_within(cur, vdt) &&
		    fdl_cpu_bound(cc, v->now))
			cur += FDL_TIER_NS;
		if (!fdl_time_before(v->dl, cur)) {
			fdl_note_crossing(v, cc, cpu, cur, vdt);
			continue;
		}
		/* Too little slack to preempt now, or work that sleeps soon by itself: a timer. */
		soon = false;
		if (!fdl_slack_allows(cur, v->dl, vdt) ||
		    (soon = fdl_cpu_ends_soon(cc, v->now, v->dl, vdt))) {
			if (fdl_time_before(later_dl, cur)) {
				later_dl = cur;
				v->later = cpu;
				v->deferred = soon;
			}
			continue;
		}
		cv = cc->queue == FDL_DSQ_FAIR ? fdl_cont_cvtime(cc->cont) : 0;
		if (fdl_time_before(best_dl, cur) ||
		    (best >= 0 && cur == best_dl && fdl_time_before(best_cv, cv))) {
			best_dl = cur;
			best = cpu;
			best_cv = cv;
		}
	}
	if (best < 0 && v->fair < 0 && v->later >= 0 && v->deferred)
		stat_inc(nr_preempts_deferred);
	return best >= 0 ? best : v->fair;
}

/*
 * A waking task of deadline entity `entity` with deadline dl found no idle CPU: the candidate CPU
 * whose work has the latest deadline, if that is later than dl and has enough slack (the RFC's
 * 1.46x rule, fdl_slack_allows), or -1. All fair work stands at the fair container's deadline;
 * between CPUs running fair work, the victim is the one whose cgroup is furthest ahead in cgroup
 * virtual time: a waking deadline task takes its CPU from the cgroup that had the most, not from
 * one that waited its turn (beside hackbench, from hackbench, not from a probe that just got the
 * CPU). CPUs running work of the task's own entity are not candidates (its members take turns by
 * vtime), nor, for a container's task that claims a CPU as fair work, CPUs running its own
 * container's work (own: its entity id unclaimed). *later is set to a candidate with a later
 * deadline but too little slack, or -1: the caller times a preemption for it instead; *cross to a
 * candidate whose earlier work's key passes the task's within a slice, in *cross_ns, or -1
 * (fdl_note_crossing). A fair task that woke may also take a CPU from CPU-bound fair work of a
 * cgroup ahead of its own (fdl_note_fair). All of that only where it may compete (compete: its
 * deadline's rights, or fair work); compete or not, *sibling is set to a candidate running
 * CPU-bound work of its own queue behind it in vtime (fdl_note_sibling), or -1.
 */
static __always_inline s32 fdl_choose_victim(struct task_struct *p, struct fdl_task *t, u64 entity,
					     u64 own, u64 queue, u64 dl, u64 now, u64 flags,
					     bool compete, s32 *later, s32 *cross, u64 *cross_ns,
					     s32 *sibling)
{
	struct fdl_victims v = { .entity = entity, .own = own, .queue = queue, .dl = dl, .now = now,
				 .vtime = t->vtime, .wakeup = !!(flags & FDL_ENQ_WAKEUP),
				 .compete = compete, .pinned = env_task_pinned(p) };
	u32 nr = tun.nr_cpus ?: 1, r = fdl_scale_random(env_random(), nr), i;
	s32 cpu, best;
	int k;

	fdl_for_few(k, 0, FDL_VICTIM_CANDIDATES) {
		/* (r + k - 1) mod nr for k >= 1: below 2 nr, so a subtraction, not a division. */
		i = r + k - 1;
		if (i >= nr)
			i -= nr;
		cpu = k == 0 ? t->last_cpu - 1 : tun.online_cpu[i & (FDL_MAX_CPUS - 1)];
		/* The last CPU drawn again is looked at once (on two CPUs, always). */
		if (k > 0 && cpu == t->last_cpu - 1)
			cpu = -1;
		v.cpu[k] = cpu >= 0 && env_task_allowed(p, cpu) ? cpu : -1;
	}
	best = fdl_choose_among(&v);
	*later = v.later;
	*cross = v.cross;
	*cross_ns = v.cross_ns;
	*sibling = v.sibling;
	return best;
}

/*
 * The slice before any deadline cuts it: --slice-us shared by the work that waits, as seed 004's
 * scx_bpfland does, so that the more tasks wait per CPU, the sooner each gets a turn:
 * slice * nr_cpus / (waiting + nr_cpus), never below tun.slice_floor_ns (0: always the whole
 * slice). Waiting is this CPU's last count of the queues (its dispatcher's scan). The sharing is
 * fdl_shared_slice, a global function (inlined at its three call sites, the dispatcher's program
 * grew past the verifier's limit, -E2BIG), which fdl_base_slice calls only where
 * --slice-floor-us asks for it (not by default).
 */
FDL_GLOBAL u64 fdl_shared_slice(void)
{
	struct fdl_scan *sc = env_scan();
	u64 n = tun.nr_cpus ?: 1;

	if (!sc)
		return tun.slice_ns;
	return fdl_min(fdl_max(tun.slice_ns * n / (sc->nr_queued + n), tun.slice_floor_ns),
		       tun.slice_ns);
}

static __always_inline u64 fdl_base_slice(void)
{
	return tun.slice_floor_ns ? fdl_shared_slice() : tun.slice_ns;
}

/*
 * The slice of work with bucket dl at bw (deadline_rr rr_ns, at vdt) and budget_ns left within
 * its guarantee (<= 0: beyond it, in the second tier), competing with order key next_dl (if
 * has_next), within [min_slice, base] (base: fdl_base_slice, which the caller has at hand): a
 * competitor of the same tier takes over where the keys meet, one of a later tier never; work
 * within its guarantee stops at the end of its budget, where its tier changes. Within it, the key
 * is the bucket capped at vdt + rr (fdl_order_key), so the keys meet when both have passed
 * next_dl (fdl_key_run_time); beyond it, the bucket alone decides (fdl_dl_run_time: an entity
 * that overran its bandwidth has a key of its own, fdl_dl_key, that a slice does not follow).
 */
static __always_inline u64 fdl_tier_slice(u64 base, u64 dl, u64 bw, u64 rr_ns, u64 vdt,
					  u64 next_dl, bool has_next, s64 budget_ns)
{
	u64 slice = base;

	if (has_next)
		slice = fdl_min(slice, budget_ns > 0 ? fdl_key_run_time(dl, bw, rr_ns, vdt, next_dl) :
					fdl_dl_run_time(dl, next_dl - FDL_TIER_NS, bw));
	if (budget_ns > 0)
		slice = fdl_min(slice, (u64)budget_ns);
	return fdl_max(slice, tun.min_slice_ns);
}

/*
 * Preempt cpu at `at` with its deadline timer: a slice that ends inside a tick (sched_ext ends
 * slices only at the tick, 4 ms apart on a HZ=250 kernel), or a waiting deadline that falls
 * inside one. A timer already set to fire by then stands; a later one is brought forward.
 * (Two CPUs arming one CPU's timer at once may leave the later of their times; the tick then
 * bounds the delay, as it did without the timer.)
 */
static __always_inline void fdl_preempt_at(struct fdl_cpu *cc, s32 cpu, u64 at, u64 now)
{
	u64 cur = cc->timer_at;

	/* Not one set before the dispatcher's last choice: that one lapses (fdl_timer_lapse). */
	if (cc->timer_gen == cc->dispatch_gen && fdl_time_before(now, cur) &&
	    !fdl_time_before(at, cur))
		return;
	cc->timer_at = at;
	cc->timer_gen = cc->dispatch_gen;
	env_arm_timer(cpu, fdl_time_before(now, at) ? at - now : 0);
}

/*
 * cpu's deadline timer fired: whether to preempt it. Not if it lapsed (fdl_timer_lapse: its task
 * went to sleep, or the CPU's dispatcher chose since it was set) and nothing set it again since:
 * that choice followed the order the timer was to enforce, and a kick would only end the slice
 * of the task that came next, or wake an idle CPU for nothing. In the wake shape of bench/insn-profile.sh
 * (workers spinning 50 us, slices cut short for the next deadline ending by a timer) 1517 of
 * 1745 such timers fired after their task had slept, every one a CPU preempted or woken.
 */
static __always_inline bool fdl_timer_due(s32 cpu)
{
	struct fdl_cpu *cc = env_cpu(cpu);
	u64 at = cc ? cc->timer_at : 1;

	if (!at) {
		stat_inc(nr_timer_lapsed);
		return false;
	}
	/*
	 * Fired: not armed any longer, unless the CPU set it again meanwhile (this callback runs on
	 * the CPU that armed the timer, beside the target's ops.running): that time stands.
	 */
	if (cc)
		__sync_val_compare_and_swap(&cc->timer_at, at, 0);
	stat_inc(nr_timer_kicks);
	return true;
}

/*
 * The task running on the CPU of record cc stopped. The preemption its deadline timer was set
 * for has happened (fdl_timer_due) if the task went to sleep and the CPU's dispatcher chooses
 * next, by the order the timer was to enforce (slept, and select_cpu put no task on its local
 * queue, which would run without a dispatch: local_since), or if that dispatcher chose since
 * the timer was set (a preempted or expired task: ops.dispatch runs before its ops.stopping).
 * Set again, by the next task's slice or a waiting deadline, it fires again. Not lapsed: a stop
 * of a task that stays runnable without a dispatch (its properties changed, and it resumes by
 * ops.running alone), nor a timer set after that dispatch, for the task it chose.
 */
static __always_inline void fdl_timer_lapse(struct fdl_cpu *cc, bool slept)
{
	if ((slept && !cc->local_since) || cc->timer_gen != cc->dispatch_gen)
		cc->timer_at = 0;
}

/*
 * When to preempt a CPU whose work is later than a waiting deadline dl but has too little slack
 * to be preempted at once: half-way to dl, so the waiting task starts before its deadline even
 * when no tick comes in time.
 */
static __always_inline u64 fdl_timer_delay(u64 dl, u64 now)
{
	u64 vdt = fdl_vdt(now);
	u64 slack = fdl_key_slack(dl, vdt);

	return fdl_min(fdl_max(slack / 2, tun.min_slice_ns), tun.slice_ns);
}

#endif /* __FDL_POLICY_PREEMPT_H */
