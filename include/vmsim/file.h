/* SPDX-License-Identifier: MIT */
/*
 * vmsim/file.h - a small in-memory file to map: a size, an open mode and a
 * page cache of pages indexed by page offset, allocated and zeroed on
 * first use.
 *
 * A file is reference counted: vs_file_create() returns one reference,
 * every VMA that maps the file holds one more.  vs_file_destroy() drops
 * the creator's; the file and its page cache go when the last VMA
 * mapping it is freed.  The pages come from the pool given at creation,
 * which must be the pool of every mm that maps the file (an mm and the
 * children forked from it share one pool).
 *
 * Locking: docs/locking.md, "struct vs_file".
 *
 * The page cache holds one reference on each of its pages; a PTE that
 * maps one holds another, and a mapcount.
 */
#ifndef VMSIM_FILE_H
#define VMSIM_FILE_H

#include <fcntl.h>
#include <stddef.h>

#include "atomic.h"
#include "common.h"
#include "page.h"

/**
 * struct vs_file - an in-memory file
 * @size: bytes (read-only)
 * @mode: O_RDONLY or O_RDWR (read-only)
 * @shmem: 1 for the file behind an anonymous shared mapping (set by
 *         vs_mmap() before the mapping is published; then read-only)
 * @pool: where the page cache's pages come from (read-only)
 * @nr_pages: slots in @pages, size rounded up to pages (read-only)
 * @pages: the page cache (private)
 * @refcount: references (private)
 */
struct vs_file {
	size_t size;
	int mode;
	int shmem;
	struct vs_page_pool *pool;
	unsigned long nr_pages;
	VS_ATOMIC(struct vs_page *) *pages;
	vs_atomic_long_t refcount;
};

/**
 * vs_file_create - a file of @size bytes, all zero
 * @f: receives the file
 * @pool: the page pool of the mms that will map it
 * @size: bytes; 0 is allowed (nothing can be faulted in then)
 * @mode: O_RDONLY or O_RDWR
 *
 * Context: any.
 * Return: 0; -EINVAL for a NULL @f or @pool or another @mode; -ENOMEM.
 */
VS_EXTERN int vs_file_create(struct vs_file **f, struct vs_page_pool *pool,
			     size_t size, int mode);

/**
 * vs_file_destroy - drop the creator's reference
 * @f: the file
 *
 * The file lives on while a VMA maps it.
 * Context: any; the caller does not use @f afterwards.
 * Return: 0, -EINVAL for NULL.
 */
VS_EXTERN int vs_file_destroy(struct vs_file *f);

/**
 * vs_file_get_page - the page cache page at @pgoff, with a reference
 * @pgp: receives the page; the caller owns the reference taken
 *
 * Allocates and zeroes a missing page (flags FILE | UPTODATE, mapping
 * the file), published with a compare-and-swap: a racing filler frees
 * its copy.  A shared writable mapping writes to the page directly.
 *
 * Context: any thread holding a reference on @f, or a VMA that maps it
 * found under its lock or inside vs_rcu_read_lock() (a VMA drops its
 * reference in its RCU callback); no PTL held (it may allocate).
 * Return: 0; -EFAULT for @pgoff beyond the end (the kernel's SIGBUS);
 * -ENOMEM.
 */
VS_EXTERN int vs_file_get_page(struct vs_file *f, unsigned long pgoff,
			       struct vs_page **pgp);

/**
 * vs_file_get - take a reference on @f
 * @f: the file
 *
 * Context: any; the caller already holds a reference (or a VMA that
 * holds one is stable under its lock).
 */
VS_EXTERN void vs_file_get(struct vs_file *f);

/**
 * vs_file_put - drop a reference; free the file and its cache at zero
 * @f: the file
 *
 * The page cache drops its references to its pages; a page that a PTE
 * still maps stays allocated.
 *
 * Context: any thread holding the reference; no PTL held (the last put
 * frees pages into the pool).
 */
VS_EXTERN void vs_file_put(struct vs_file *f);

#endif /* VMSIM_FILE_H */
