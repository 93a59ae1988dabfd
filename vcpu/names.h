/* SPDX-License-Identifier: MIT */
/*
 * vcpu/names.h - the coherence model's memory, off the heap, and its
 * table of names.  Private to vcpu/.
 *
 * The code the vCPUs run allocates its objects with malloc, and which of
 * them share a 64-byte line - so every transfer the model counts -
 * follows from where malloc puts them.  Were the model to allocate from
 * the same heap while that code runs (a copy of each name, a bigger
 * directory), naming a range or touching a new line would move the
 * objects allocated after it and change the figures.  So everything the
 * model allocates after its creation comes from mmap, never from malloc:
 * vs__offheap_alloc() for the directory, and a table of names that keeps
 * one copy of each distinct name, in pages of its own.
 */
#ifndef VS_VCPU_NAMES_H
#define VS_VCPU_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct vs__name_chunk;

/**
 * struct vs__names - the distinct names given to ranges, each kept once
 * @chunks: the pages the strings are copied into; a string never moves
 * @str: the strings by id - 1
 * @slots: a hash table of ids (0: free), 2 * @cap slots, keyed by the
 *	string's bytes
 * @nr: the ids in use, 1 to @nr
 * @cap: the room of @str
 *
 * All zero is an empty table.
 */
struct vs__names {
	struct vs__name_chunk *chunks;
	const char **str;
	uint32_t *slots;
	uint32_t nr;
	uint32_t cap;
};

/**
 * vs__offheap_alloc - @bytes of zeroed memory that malloc does not manage
 * @bytes: the size; rounded up to whole pages
 *
 * Context: any.
 * Return: the memory, or NULL.
 */
void *vs__offheap_alloc(size_t bytes);

/**
 * vs__offheap_free - free memory of vs__offheap_alloc()
 * @p: the memory, or NULL
 * @bytes: the size it was allocated with
 *
 * Context: any.
 */
void vs__offheap_free(void *p, size_t bytes);

/**
 * vs__names_intern - the id of name @s, copied the first time
 * @n: the table
 * @s: the name, a non-empty string
 *
 * The id depends on the names interned before, not on @s's address.
 *
 * Context: one call on @n at a time; allocates, off the heap.
 * Return: the id, 1 or more; 0 when out of memory.
 */
uint32_t vs__names_intern(struct vs__names *n, const char *s);

/**
 * vs__names_str - the name of id @id
 * @n: the table
 * @id: an id vs__names_intern() returned
 *
 * Context: any.
 * Return: the name, valid until vs__names_free().
 */
const char *vs__names_str(const struct vs__names *n, uint32_t id);

/**
 * vs__names_free - free every name of @n, leaving it empty
 * @n: the table
 *
 * Context: no other call on @n is running.
 */
void vs__names_free(struct vs__names *n);

/**
 * vs__symbol_name - @a as "symbol+offset", from the symbol tables of the
 * loaded object (the executable or a library) whose segments hold it
 * @a: an address, say of a static object
 * @buf: where to write the name
 * @len: its size
 *
 * dladdr() knows the dynamic symbols alone, not the statics a report
 * meets (a lock of one file, its statistics): so the ELF file of each
 * object is mapped once, on the first address in it, read-only and off
 * the heap, and its .symtab searched (.dynsym where it is stripped).
 * The mappings are kept for the life of the process.
 *
 * Context: any thread; serialized by a mutex of its own.  Not from a
 * signal handler (dl_iterate_phdr() takes the loader's lock).
 * Return: the length written, as snprintf(); 0 when no symbol holds @a.
 */
int vs__symbol_name(uintptr_t a, char *buf, size_t len);

/**
 * vs__mapping_name - @a as a place in the process's memory map, for an
 * object no one named and no symbol holds
 * @a: an address
 * @buf: where to write the name
 * @len: its size
 *
 * An address in the brk heap is "heap+OFFSET (unnamed)": the offset, not
 * the address, since ASLR moves the heap's start, not where a program's
 * allocations land in it, so the same program run the same way prints
 * the same name.  Under ASan, whose allocator keeps malloc's blocks in
 * mappings of its own, it is "a SIZE-byte heap block+OFFSET (unnamed)".
 * Anything else not named is said to be the main stack or anonymous
 * memory, with its address.
 *
 * Context: any thread; reads /proc/self/maps, allocates nothing.
 * Return: the length written, as snprintf(); 0 when no mapping holds @a.
 */
int vs__mapping_name(uintptr_t a, char *buf, size_t len);

#endif /* VS_VCPU_NAMES_H */
