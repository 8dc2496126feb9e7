// One cell of issue 10's matrix at the policy seam (policy_test.c's test_policy_matrix), taken
// apart: the probes' lateness, and for the watched probe's latest spins, which task ran on each
// CPU from the wake-up to the spin's end. The question it answers: behind whom did a probe wait,
// and was it preempted mid-spin? Built and smoke-run by tests/native/run.sh; by hand:
//
//   cc -std=gnu11 -O2 -DFDL_NATIVE -I scheduler/bpf -I tests/native tests/native/cell_trace.c -o /tmp/ct
//   /tmp/ct spin3-sleep20 rfc 300 quiet --watch cfs --show 3
//
// Tasks are named by probe: fdl0-1 (tighter deadline, cgroup 10), loose2-3 (looser, 11), cfs4-5
// (no parameters, 12), ant6+ (the antagonist's wakers or busy loops, 20); "-" is an idle CPU.
#define main policy_test_main
#include "policy_test.c"
#undef main

#include <string.h>

#define RING 4096	/* steps of history (100 us each): longer than any spin's wait here */

static const char *const probe_names[] = { "fdl", "loose", "cfs" };
static int ring_task[RING][FAKE_CPUS];
static u64 ring_at[RING];
static u64 ring_n;
static u32 seen[NR_TASKS];
static int watch = 2, shown, show_max = 5;
static u64 over_ns;

static void task_name(int id, char *buf, size_t n)
{
	if (id < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%s%d", id < 6 ? probe_names[id / 2] : "ant", id);
}

/* One stretch of the trace: who ran on each CPU from `from` to `to` (ms from the wake-up). */
static void print_stretch(u64 from, u64 to, u64 woke, const int *who)
{
	char name[16];

	printf("  %+8.1f .. %+8.1f ms:", (double)(s64)(from - woke) / MS, (double)(s64)(to - woke) / MS);
	for (int c = 0; c < nr_cpus; c++) {
		task_name(who[c], name, sizeof(name));
		printf("  cpu%d %-7s", c, name);
	}
	printf("\n");
}

/*
 * The spin of k that just ended, late by `late`: the ring's steps from its wake-up on, one line
 * per stretch in which the same tasks held the CPUs. The ring's last step is this one, after the
 * spin ended: the stretch it starts has no length and is not printed.
 */
static void print_trace(struct task *k, u64 late)
{
	const int *cur = NULL;
	u64 from = 0;
	char name[16];

	task_name((int)(k - tasks), name, sizeof(name));
	/* The simulation's clock starts at 1 s (policy_test.c's reset). */
	printf("%s: woke at %.1f ms, %llu us late (its spin %llu us)\n", name,
	       (double)(k->wake_t - 1000 * MS) / MS, late / US, k->spin_ns / US);
	for (u64 j = ring_n > RING ? ring_n - RING : 0; j < ring_n; j++) {
		const int *who = ring_task[j % RING];
		u64 at = ring_at[j % RING];

		if (at + step_ns < k->wake_t ||
		    (cur && !memcmp(cur, who, nr_cpus * sizeof(*who))))
			continue;
		if (cur)
			print_stretch(from, at, k->wake_t, cur);
		cur = who;
		from = at;
	}
	if (cur && from < env.now)
		print_stretch(from, env.now, k->wake_t, cur);
}

/* After every step: record who ran; a spin of the watched probe that just ended late: its trace. */
static void trace_step(void)
{
	u32 r = ring_n % RING;

	for (int c = 0; c < nr_cpus; c++)
		ring_task[r][c] = running[c] ? (int)(running[c] - tasks) : -1;
	ring_at[r] = env.now;
	ring_n++;
	for (int i = 2 * watch; i < 2 * watch + 2; i++) {
		struct task *k = &tasks[i];
		u64 late;

		if (k->nr_lates == seen[i])
			continue;
		seen[i] = k->nr_lates;
		late = k->lates[k->nr_lates - 1];
		if (late >= over_ns && shown < show_max) {
			shown++;
			print_trace(k, late);
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: cell_trace SHAPE DEADLINES SHARES LOAD [--fair] [--watch fdl|loose|cfs]\n"
			"                  [--over-us N] [--show N] [--seeds N] [--spin-us N]\n"
			"  SHAPE: spin3-sleep20, spin10-sleep30, spin1-sleep5 or wake\n"
			"  DEADLINES: rr4-20 or rfc; SHARES: each deadline container's guaranteed_shares\n"
			"  LOAD: quiet, antagonist or overcommit\n"
			"  --fair: no parameters anywhere (the matrix's reference run)\n"
			"  --over-us N: trace the watched probe's spins at least N us late (default: its p99)\n"
			"  --seeds N: the p99s of N draws of the jitter, no traces\n"
			"  --spin-us N: every probe's spin N us instead of the shape's (the emulator's\n"
			"    costs make a probe ask more CPU than its spin: the matrix's spin1 probes used\n"
			"    0.45-0.52 CPU in the VM beside busy loops, 0.40 here at 1000 us)\n");
	exit(2);
}

static int index_of(const char *s, const char *const *names, size_t stride, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, *(const char *const *)((const char *)names + i * stride)))
			return i;
	fprintf(stderr, "cell_trace: unknown name %s\n", s);
	usage();
	return -1;
}

static void print_run(const char *what, const u64 p99[3], const u64 used[3])
{
	printf("%s: p99 spin lateness fdl %llu us, loose %llu us, cfs %llu us (p50 %llu / %llu / %llu); "
	       "CPUs used x1000 %llu %llu %llu; %llu loans returned, %llu deadline preemptions\n",
	       what, p99[0] / US, p99[1] / US, p99[2] / US, pct_late(0, 2, 50) / US,
	       pct_late(2, 2, 50) / US, pct_late(4, 2, 50) / US, used[0], used[1], used[2],
	       (u64)env.stats.nr_loans_returned, (u64)env.stats.nr_preempt_kicks);
}

int main(int argc, char **argv)
{
	int seeds = 0, a, b, load;
	bool with_dl = true, over_set = false;
	u64 p99[3], used[3];
	struct sweep_cell c;
	char what[128];

	if (argc < 5)
		usage();
	a = index_of(argv[1], &sweep_shapes[0].name, sizeof(sweep_shapes[0]), ARRAY_SIZE(sweep_shapes));
	b = index_of(argv[2], &sweep_dls[0].name, sizeof(sweep_dls[0]), ARRAY_SIZE(sweep_dls));
	load = index_of(argv[4], sweep_loads, sizeof(sweep_loads[0]), ARRAY_SIZE(sweep_loads));
	c = sweep_cell_of(&sweep_shapes[a], &sweep_dls[b], strtoull(argv[3], NULL, 10), load);
	for (int i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "--fair")) {
			with_dl = false;
		} else if (i + 1 < argc && !strcmp(argv[i], "--watch")) {
			watch = index_of(argv[++i], probe_names, sizeof(probe_names[0]), 3);
		} else if (i + 1 < argc && !strcmp(argv[i], "--over-us")) {
			over_ns = strtoull(argv[++i], NULL, 10) * US;
			over_set = true;
		} else if (i + 1 < argc && !strcmp(argv[i], "--show")) {
			show_max = atoi(argv[++i]);
		} else if (i + 1 < argc && !strcmp(argv[i], "--seeds")) {
			seeds = atoi(argv[++i]);
		} else if (i + 1 < argc && !strcmp(argv[i], "--spin-us")) {
			c.spin_ns = strtoull(argv[++i], NULL, 10) * US;
		} else {
			usage();
		}
	}
	snprintf(what, sizeof(what), "%s.%s.shares%llu %s%s", c.shape, c.deadlines, (u64)c.shares,
		 sweep_loads[load], with_dl ? "" : ", all fair");
	if (seeds > 0) {
		for (int s = 1; s <= seeds; s++) {
			char run[160];

			sweep_seed = s;
			sweep_run(&c, with_dl, p99, used);
			snprintf(run, sizeof(run), "%s, seed %d", what, s);
			print_run(run, p99, used);
		}
		return 0;
	}
	/* The same draws twice: the first finds the p99, the second traces the spins at it. */
	sweep_run(&c, with_dl, p99, used);
	print_run(what, p99, used);
	if (!over_set)
		over_ns = p99[watch];
	memset(seen, 0, sizeof(seen));
	step_hook = trace_step;
	sweep_run(&c, with_dl, p99, used);
	return 0;
}
