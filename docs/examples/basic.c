/* SPDX-License-Identifier: MIT */
/*
 * docs/examples/basic.c - make an address space, map memory, fault it
 * in through the simulated CPU, and print what the fault path did.
 *
 *	cc basic.c $(pkg-config --cflags --libs vmsim) -o basic
 */
#include <stdio.h>
#include <string.h>

#include <vmsim/vmsim.h>

#define LEN (16 * VS_PAGE_SIZE)

static int check(const char *what, long err)
{
	if (err < 0)
		fprintf(stderr, "basic: %s: %s\n", what, vs_strerror((int)err));
	return err < 0;
}

int main(void)
{
	struct vs_mm_options opt = { .lock_kind = "rwsem" };
	struct vs_fault_stats st;
	struct vs_mm *mm;
	char buf[6] = "";
	long addr;
	int ret = 1;

	if (check("vs_mm_create", vs_mm_create(&mm, &opt)))
		return 1;
	vs_mm_set_fault_strategy(mm, VS_FAULT_SPF);
	vs_fault_stats_reset();
	addr = vs_mmap(mm, 0, LEN, VS_PROT_READ | VS_PROT_WRITE,
		       VS_MAP_PRIVATE | VS_MAP_ANONYMOUS, NULL, 0);
	if (check("vs_mmap", addr))
		goto out;
	/* A read maps the zero page; a write then copies it (COW). */
	if (check("vs_access", vs_access(mm, (unsigned long)addr, LEN, 0)) ||
	    check("vs_write", vs_write(mm, (unsigned long)addr, "hello", 6)) ||
	    check("vs_read", vs_read(mm, (unsigned long)addr, buf, 6)))
		goto out;
	/* Past the mapping: the model's SIGSEGV, as -EFAULT. */
	printf("access past the end: %s\n",
	       vs_strerror(vs_access(mm, (unsigned long)addr + LEN, 1, 0)));
	vs_fault_stats_get(&st);
	printf("read back \"%s\"; %lu faults: %lu speculative, %lu locked, "
	       "%lu SIGSEGV; %ld anonymous pages resident\n",
	       buf, st.faults, st.spf_success, st.locked, st.sigsegv,
	       vs_get_mm_counter(mm, VS_MM_ANONPAGES));
	ret = strcmp(buf, "hello") != 0;
out:
	vs_mm_destroy(mm);
	return ret;
}
