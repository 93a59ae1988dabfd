/* SPDX-License-Identifier: MIT */
/*
 * The coherence model's memory off the heap, and its table of distinct
 * names (vcpu/names.h).
 */
#include "names.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK_BYTES (64u << 10)	/* a chunk of strings, unless one is longer */
#define FIRST_CAP 16		/* first room of the table, a power of 2 */

/* Pages of strings: [used, size) of data is free. */
struct vs__name_chunk {
	struct vs__name_chunk *next;
	size_t size;
	size_t used;
	char data[];
};

static size_t page_round(size_t bytes)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t p = pg > 0 ? (size_t)pg : 4096;

	return (bytes + p - 1) / p * p;
}

void *vs__offheap_alloc(size_t bytes)
{
	void *p;

	if (!bytes)
		return NULL;
	p = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void vs__offheap_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, page_round(bytes));
}

/* FNV-1a over the bytes of @s: a function of the name alone. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

/* The slot of @s in @slots (2 * @cap of them): its id's, or a free one. */
static uint32_t *find_slot(const char *const *str, uint32_t *slots,
			   uint32_t cap, const char *s)
{
	size_t mask = (size_t)cap * 2 - 1, i = name_hash(s) & mask;

	for (; slots[i]; i = (i + 1) & mask)
		if (!strcmp(str[slots[i] - 1], s))
			break;
	return &slots[i];
}

/* Double the room of @n, rehashing every id; 0 or -1. */
static int names_grow(struct vs__names *n)
{
	uint32_t cap = n->cap ? n->cap * 2 : FIRST_CAP, i;
	const char **str;
	uint32_t *slots;

	if (n->cap >= UINT32_C(1) << 30)
		return -1;
	str = vs__offheap_alloc(cap * sizeof(*str));
	slots = vs__offheap_alloc((size_t)cap * 2 * sizeof(*slots));
	if (!str || !slots) {
		vs__offheap_free(str, cap * sizeof(*str));
		vs__offheap_free(slots, (size_t)cap * 2 * sizeof(*slots));
		return -1;
	}
	for (i = 0; i < n->nr; i++) {
		str[i] = n->str[i];
		*find_slot(str, slots, cap, str[i]) = i + 1;
	}
	vs__offheap_free(n->str, n->cap * sizeof(*n->str));
	vs__offheap_free(n->slots, (size_t)n->cap * 2 * sizeof(*n->slots));
	n->str = str;
	n->slots = slots;
	n->cap = cap;
	return 0;
}

/* A copy of @s in @n's chunks, or NULL. */
static const char *copy_name(struct vs__names *n, const char *s)
{
	size_t len = strlen(s) + 1;
	struct vs__name_chunk *ch = n->chunks;
	char *d;

	if (!ch || ch->size - ch->used < len) {
		size_t size = sizeof(*ch) + len > CHUNK_BYTES ?
			      page_round(sizeof(*ch) + len) : CHUNK_BYTES;

		ch = vs__offheap_alloc(size);
		if (!ch)
			return NULL;
		ch->size = size - sizeof(*ch);
		ch->next = n->chunks;
		n->chunks = ch;
	}
	d = ch->data + ch->used;
	memcpy(d, s, len);
	ch->used += len;
	return d;
}

uint32_t vs__names_intern(struct vs__names *n, const char *s)
{
	uint32_t *slot;
	const char *copy;

	if (n->cap) {
		slot = find_slot(n->str, n->slots, n->cap, s);
		if (*slot)
			return *slot;
	}
	if (n->nr == n->cap && names_grow(n))
		return 0;
	copy = copy_name(n, s);
	if (!copy)
		return 0;
	slot = find_slot(n->str, n->slots, n->cap, s);
	n->str[n->nr] = copy;
	*slot = ++n->nr;
	return n->nr;
}

const char *vs__names_str(const struct vs__names *n, uint32_t id)
{
	return id && id <= n->nr ? n->str[id - 1] : NULL;
}

void vs__names_free(struct vs__names *n)
{
	struct vs__name_chunk *ch = n->chunks, *next;

	for (; ch; ch = next) {
		next = ch->next;
		vs__offheap_free(ch, ch->size + sizeof(*ch));
	}
	vs__offheap_free(n->str, n->cap * sizeof(*n->str));
	vs__offheap_free(n->slots, (size_t)n->cap * 2 * sizeof(*n->slots));
	memset(n, 0, sizeof(*n));
}
