/* SPDX-License-Identifier: MIT */
/*
 * vm/file.c - the in-memory file and its page cache (see vmsim/file.h).
 */
#include <vmsim/file.h>

#include <stdlib.h>

#include "fail.h"
#include "../sync/broken.h"

int vs_file_create(struct vs_file **f, struct vs_page_pool *pool,
		   size_t size, int mode)
{
	struct vs_file *file;
	unsigned long i, n;

	if (!f || !pool || (mode != O_RDONLY && mode != O_RDWR))
		return -EINVAL;
	if (size > VS_PAGE_POOL_MAX_PAGES * VS_PAGE_SIZE)
		return -ENOMEM;
	n = (size + VS_PAGE_SIZE - 1) >> VS_PAGE_SHIFT;
	/* The kernel's struct file and inode come from slab caches. */
	if (vs__fail_alloc(VS_FAIL_SLAB, "file"))
		return -ENOMEM;
	file = calloc(1, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->pages = calloc(n ? n : 1, sizeof(*file->pages));
	if (!file->pages) {
		free(file);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		vs_atomic_init(&file->pages[i], NULL);
	file->size = size;
	file->mode = mode;
	file->pool = pool;
	file->nr_pages = n;
	vs_atomic_init(&file->refcount, 1);
	*f = file;
	return 0;
}

void vs_file_get(struct vs_file *f)
{
	vs_fetch_add_relaxed(&f->refcount, 1);
}

/*
 * Free the page cache.  Context: the last reference is gone; every PTE
 * that mapped a page holds its own reference, so a page still mapped
 * stays allocated (with a dangling mapping, which nothing follows).
 */
static void file_free(struct vs_file *f)
{
	struct vs_page *page;
	unsigned long i;

	for (i = 0; i < f->nr_pages; i++) {
		page = vs_read_once(&f->pages[i]);
		if (page) {
			page->mapping = NULL;
			vs_put_page(f->pool, page);
		}
	}
	free(f->pages);
	free(f);
}

void vs_file_put(struct vs_file *f)
{
	/*
	 * Release, then acquire on the last put: every use of the file by
	 * other holders happens before the free (the kernel's fput).
	 */
	if (vs_fetch_sub_release(&f->refcount, 1) == 1) {
		vs_smp_rmb();
		file_free(f);
	}
}

int vs_file_destroy(struct vs_file *f)
{
	if (!f)
		return -EINVAL;
	vs_file_put(f);
	return 0;
}

int vs_file_get_page(struct vs_file *f, unsigned long pgoff,
		     struct vs_page **pgp)
{
	struct vs_page *page, *old = NULL;

	if (pgoff >= f->nr_pages)
		return -EFAULT;
	/* Acquire: pairs with the cmpxchg below, so the zeroed frame and
	 * the flags are visible to whoever finds the page. */
	page = vs_load_acquire(&f->pages[pgoff]);
	if (!page) {
		page = vs_alloc_page(f->pool);
		if (!page)
			return -ENOMEM;
		vs_clear_page(page);
		vs_page_set_flags(page, VS_PG_FILE | VS_PG_UPTODATE);
		page->mapping = f;
		/* Fully ordered: publishes the cleared page (pairs with
		 * the acquire load above).  The planted bug stores it over
		 * a racing filler's page. */
		if (VS_BROKEN(file_fill_plain_store))
			vs_store_release(&f->pages[pgoff], page);
		else if (!vs_cmpxchg(&f->pages[pgoff], &old, page)) {
			page->mapping = NULL;
			vs_put_page(f->pool, page);
			page = old;
		}
	}
	vs_get_page(page);
	*pgp = page;
	return 0;
}
