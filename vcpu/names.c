/* SPDX-License-Identifier: MIT */
/*
 * The coherence model's memory off the heap, its table of distinct
 * names, and the symbols of the loaded objects (vcpu/names.h).
 */
#include "internal.h"	/* VCPU_ASAN */
#include "names.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* ---- symbols of the loaded objects -------------------------------------- */

#define SYM_OBJECTS 32		/* objects whose tables are kept */

/* One loaded object: where it is, and its symbol table (nsym 0: none). */
struct sym_object {
	uintptr_t bias;			/* its load address: the key */
	const ElfW(Sym) *sym;
	size_t nsym;
	const char *str;
	size_t strsz;
};

static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sym_object sym_objects[SYM_OBJECTS];	/* under sym_lock */
static unsigned int nr_sym_objects;			/* under sym_lock */

/* What dl_iterate_phdr() looks for: the object whose segment holds @a. */
struct sym_find {
	uintptr_t a;
	uintptr_t bias;
	const char *file;
	int found;
};

/* dl_iterate_phdr()'s callback: 1 (stop) when @info's object holds
 * @arg's address.  Context: under the loader's lock. */
static int sym_find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct sym_find *f = arg;
	uintptr_t lo;
	ElfW(Half) i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		if (f->a < lo || f->a - lo >= info->dlpi_phdr[i].p_memsz)
			continue;
		f->bias = info->dlpi_addr;
		f->file = info->dlpi_name && *info->dlpi_name ?
			  info->dlpi_name : "/proc/self/exe";
		f->found = 1;
		return 1;
	}
	return 0;
}

/* Section @i of the file at @base (@size bytes), or NULL when out of it.
 * Context: any. */
static const ElfW(Shdr) *sym_section(const char *base, size_t size,
				      unsigned int i)
{
	const ElfW(Ehdr) *eh = (const void *)base;
	size_t at = eh->e_shoff + (size_t)i * sizeof(ElfW(Shdr));

	if (i >= eh->e_shnum || at + sizeof(ElfW(Shdr)) > size)
		return NULL;
	return (const void *)(base + at);
}

/* @o's table from the ELF file at @base: .symtab, else .dynsym.
 * Context: under sym_lock. */
static void sym_table(struct sym_object *o, const char *base, size_t size)
{
	const ElfW(Ehdr) *eh = (const void *)base;
	const ElfW(Shdr) *sh, *st;
	unsigned int want, i;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)))
		return;
	for (want = SHT_SYMTAB; !o->nsym; want = SHT_DYNSYM) {
		for (i = 0; (sh = sym_section(base, size, i)); i++) {
			if (sh->sh_type != want)
				continue;
			st = sym_section(base, size, sh->sh_link);
			if (!st || sh->sh_offset + sh->sh_size > size ||
			    st->sh_offset + st->sh_size > size)
				continue;
			o->sym = (const void *)(base + sh->sh_offset);
			o->nsym = sh->sh_size / sizeof(ElfW(Sym));
			o->str = base + st->sh_offset;
			o->strsz = st->sh_size;
			break;
		}
		if (want == SHT_DYNSYM)
			break;
	}
}

/* The table of the object loaded at @bias from @file, mapped the first
 * time.  Context: under sym_lock. */
static const struct sym_object *sym_object_of(uintptr_t bias,
					      const char *file)
{
	struct sym_object *o;
	struct stat st;
	void *base;
	unsigned int i;
	int fd;

	for (i = 0; i < nr_sym_objects; i++)
		if (sym_objects[i].bias == bias)
			return &sym_objects[i];
	if (nr_sym_objects == SYM_OBJECTS)
		return NULL;			/* addresses, then */
	o = &sym_objects[nr_sym_objects++];
	o->bias = bias;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return o;
	if (!fstat(fd, &st) && st.st_size > 0) {
		base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			    fd, 0);
		if (base != MAP_FAILED)
			sym_table(o, base, (size_t)st.st_size);
	}
	close(fd);
	return o;
}

int vs__symbol_name(uintptr_t a, char *buf, size_t len)
{
	struct sym_find f = { .a = a };
	const struct sym_object *o;
	const ElfW(Sym) *s;
	uintptr_t off;
	size_t i;
	int w = 0;

	if (!dl_iterate_phdr(sym_find_one, &f) || !f.found)
		return 0;
	off = a - f.bias;
	pthread_mutex_lock(&sym_lock);
	o = sym_object_of(f.bias, f.file);
	for (i = 0; o && i < o->nsym && !w; i++) {
		s = &o->sym[i];
		if (s->st_shndx == SHN_UNDEF || s->st_name >= o->strsz ||
		    !o->str[s->st_name] ||
		    (ELF64_ST_TYPE(s->st_info) != STT_OBJECT &&
		     ELF64_ST_TYPE(s->st_info) != STT_FUNC))
			continue;
		if (off >= s->st_value &&
		    off - s->st_value < (s->st_size ? s->st_size : 1))
			w = snprintf(buf, len, "%s+%lu", o->str + s->st_name,
				     (unsigned long)(off - s->st_value));
	}
	pthread_mutex_unlock(&sym_lock);
	return w < 0 ? 0 : w;
}

/* One line of /proc/self/maps: @a in it, named into @buf; 0 if not in it. */
static int map_line_name(const char *line, uintptr_t a, char *buf,
			 size_t len)
{
	unsigned long lo, hi;
	const char *path;
	int at = 0;

	if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 ||
	    !at || a < lo || a >= hi)
		return 0;
	path = line + at;
	if (!strcmp(path, "[heap]"))
		return snprintf(buf, len, "heap+%lu (unnamed)",
				(unsigned long)(a - lo));
	if (!strncmp(path, "[stack", 6))
		return snprintf(buf, len, "the main stack (unnamed)");
	return snprintf(buf, len, "anonymous memory at %#lx (unnamed)",
			(unsigned long)a);
}

#ifdef VCPU_ASAN
/* Under ASan malloc's blocks lie in its own mappings, not in the brk
 * heap, and ASan knows each: @a as the offset in its block. */
static int asan_heap_name(uintptr_t a, char *buf, size_t len)
{
	void *start = NULL;
	size_t size = 0;
	const char *kind = __asan_locate_address((void *)a, NULL, 0, &start,
						 &size);

	if (!kind || strcmp(kind, "heap") || !start)
		return 0;
	return snprintf(buf, len, "a %zu-byte heap block+%lu (unnamed)",
			size, (unsigned long)(a - (uintptr_t)start));
}
#endif

int vs__mapping_name(uintptr_t a, char *buf, size_t len)
{
	char chunk[4096], line[1024];
	size_t n = 0;
	ssize_t got;
	int fd, w = 0, i;

#ifdef VCPU_ASAN
	w = asan_heap_name(a, buf, len);
	if (w > 0)
		return w;
#endif
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* Read in chunks (no malloc: a report must not move the heap). */
	while (!w && (got = read(fd, chunk, sizeof(chunk))) > 0) {
		for (i = 0; i < got && !w; i++) {
			if (chunk[i] != '\n') {
				if (n < sizeof(line) - 1)
					line[n++] = chunk[i];
				continue;
			}
			line[n] = '\0';
			n = 0;
			w = map_line_name(line, a, buf, len);
		}
	}
	close(fd);
	return w < 0 ? 0 : w;
}
