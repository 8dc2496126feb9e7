/*
 * For bench/insn-profile.sh --lines, run in the guest: the source line of every piece of JIT code of
 * the loaded BPF programs, from the kernel's own record (bpf_prog_info's jited_line_info beside
 * line_info, and the program's BTF for the file names). One line per record:
 *
 *	address file line
 *
 * address in hex, the first JIT instruction of that source line's code; file the source file's
 * base name. bench/insn-profile.py --lines then counts the guest instructions executed per source
 * line. Not bpftool: Debian 12's bpftool has no JIT disassembler, without which it prints no JIT
 * line information; this needs only the bpf(2) system call.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int obj_info(int fd, void *info, uint32_t len)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = len;
	a.info.info = (uint64_t)(uintptr_t)info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
}

/*
 * A file descriptor for the object with this id (cmd: BPF_PROG_GET_FD_BY_ID or
 * BPF_BTF_GET_FD_BY_ID; prog_id and btf_id are one field of bpf_attr's union), or -1.
 */
static int fd_by_id(int cmd, uint32_t id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	return sys_bpf(cmd, &a);
}

/* The BTF object btf_id's string section, or NULL; *len its length. */
static char *btf_strings(uint32_t btf_id, uint32_t *len)
{
	struct bpf_btf_info bi;
	struct {
		uint16_t magic;
		uint8_t version, flags;
		uint32_t hdr_len, type_off, type_len, str_off, str_len;
	} *h;
	uint32_t size;
	char *raw;
	int fd;

	fd = fd_by_id(BPF_BTF_GET_FD_BY_ID, btf_id);
	if (fd < 0)
		return NULL;
	memset(&bi, 0, sizeof(bi));
	if (obj_info(fd, &bi, sizeof(bi)) || !bi.btf_size) {
		close(fd);
		return NULL;
	}
	size = bi.btf_size;
	raw = calloc(1, size);
	memset(&bi, 0, sizeof(bi));
	bi.btf = (uint64_t)(uintptr_t)raw;
	bi.btf_size = size;
	if (obj_info(fd, &bi, sizeof(bi))) {
		close(fd);
		free(raw);
		return NULL;
	}
	close(fd);
	h = (void *)raw;
	if (h->magic != 0xeB9F || h->hdr_len + h->str_off + h->str_len > size) {
		free(raw);
		return NULL;
	}
	*len = h->str_len;
	memmove(raw, raw + h->hdr_len + h->str_off, h->str_len);
	return raw;
}

static void prog_lines(uint32_t id)
{
	struct bpf_prog_info info;
	struct bpf_line_info *li;
	uint64_t *jl;
	uint32_t n, i, slen = 0;
	char *strs;
	int fd;

	fd = fd_by_id(BPF_PROG_GET_FD_BY_ID, id);
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (obj_info(fd, &info, sizeof(info)) || !info.nr_jited_line_info || !info.btf_id ||
	    info.nr_jited_line_info != info.nr_line_info) {
		close(fd);
		return;
	}
	n = info.nr_line_info;
	jl = calloc(n, sizeof(*jl));
	li = calloc(n, sizeof(*li));
	memset(&info, 0, sizeof(info));
	info.nr_jited_line_info = n;
	info.jited_line_info_rec_size = sizeof(*jl);
	info.jited_line_info = (uint64_t)(uintptr_t)jl;
	info.nr_line_info = n;
	info.line_info_rec_size = sizeof(*li);
	info.line_info = (uint64_t)(uintptr_t)li;
	if (!obj_info(fd, &info, sizeof(info)) && (strs = btf_strings(info.btf_id, &slen))) {
		for (i = 0; i < n; i++) {
			const char *file = li[i].file_name_off < slen ? strs + li[i].file_name_off : "?";
			const char *base = strrchr(file, '/');

			if (!jl[i])
				continue;
			printf("%llx %s %u\n", (unsigned long long)jl[i], base ? base + 1 : file,
			       BPF_LINE_INFO_LINE_NUM(li[i].line_col));
		}
		free(strs);
	}
	free(jl);
	free(li);
	close(fd);
}

int main(void)
{
	union bpf_attr a;
	uint32_t id = 0;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a))
			break;
		id = a.next_id;
		prog_lines(id);
	}
	return errno == ENOENT ? 0 : 1;
}
