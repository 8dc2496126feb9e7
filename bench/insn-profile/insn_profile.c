/*
 * A QEMU TCG plugin that counts the guest instructions executed per translation block, for
 * bench/insn-profile.sh: where a scheduler's callbacks spend their instructions, independent of
 * the host's speed (TCG's timings vary 25 % between boots; instruction counts do not).
 *
 * Written here against QEMU's plugin API version 1 (QEMU 7.2, Debian 12), whose header Debian
 * does not ship: the few declarations used are below. QEMU's own contrib plugins (hotblocks,
 * insn) are not packaged either.
 *
 * Arguments: out=FILE (required): at exit, one line per block of guest kernel code that ran,
 * "vaddr n_insns executions" in hex / decimal, for the kernel's symbols to be matched offline.
 * offsets=1: each line also gives the byte offset of each of the block's instructions from vaddr,
 * comma-separated (for counts per source line: bench/insn-profile.py --lines).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

/* The plugin API (QEMU 7.2, version 1). */
typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union { struct { int smp_vcpus, max_vcpus; } system; };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/*
 * One record per (start address, length) of a translated block: a block translated again (after
 * a flush, or by another vCPU) adds to the same record. Open addressing; the table only grows.
 */
struct block {
	uint64_t vaddr;
	uint64_t n_insns;
	uint64_t execs;		/* added to by the translated code, without atomics (approximate) */
	uint32_t *offsets;	/* offsets=1: each instruction's byte offset from vaddr */
};

static struct block **table;
static size_t cap = 1 << 20, used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_path;
static bool with_offsets;

/* Kernel addresses only: the scheduler's programs and the kernel code they call. */
#define KERNEL_START 0xffff800000000000ULL

static size_t slot_of(uint64_t vaddr, uint64_t n)
{
	uint64_t h = (vaddr ^ (n << 48)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (cap - 1);
}

static void grow(void)
{
	struct block **old = table;
	size_t i, old_cap = cap;

	cap *= 2;
	table = calloc(cap, sizeof(*table));
	for (i = 0; i < old_cap; i++) {
		size_t s;

		if (!old[i])
			continue;
		for (s = slot_of(old[i]->vaddr, old[i]->n_insns); table[s]; s = (s + 1) & (cap - 1))
			;
		table[s] = old[i];
	}
	free(old);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb), n = qemu_plugin_tb_n_insns(tb);
	struct block *b;
	size_t s;

	(void)id;
	if (vaddr < KERNEL_START)
		return;
	pthread_mutex_lock(&lock);
	for (s = slot_of(vaddr, n); (b = table[s]); s = (s + 1) & (cap - 1))
		if (b->vaddr == vaddr && b->n_insns == n)
			break;
	if (!b) {
		/* Records are never freed or moved: the translated code keeps their address. */
		b = calloc(1, sizeof(*b));
		b->vaddr = vaddr;
		b->n_insns = n;
		if (with_offsets) {
			size_t i;

			b->offsets = calloc(n ?: 1, sizeof(*b->offsets));
			for (i = 0; i < n; i++)
				b->offsets[i] = (uint32_t)(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)) - vaddr);
		}
		table[s] = b;
		if (++used * 2 > cap)
			grow();
	}
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->execs, 1);
}

static void at_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_path, "w");
	size_t i;

	(void)id;
	(void)userdata;
	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < cap; i++) {
		struct block *b = table[i];
		uint64_t k;

		if (!b || !b->execs)
			continue;
		fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64, b->vaddr, b->n_insns, b->execs);
		for (k = 0; b->offsets && k < b->n_insns; k++)
			fprintf(f, "%c%" PRIu32, k ? ',' : ' ', b->offsets[k]);
		fputc('\n', f);
	}
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else if (!strcmp(argv[i], "offsets=1"))
			with_offsets = true;
	if (!out_path || !info->system_emulation) {
		fprintf(stderr, "insn_profile: needs out=FILE, under system emulation\n");
		return -1;
	}
	table = calloc(cap, sizeof(*table));
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_qemu_exit, NULL);
	return 0;
}
