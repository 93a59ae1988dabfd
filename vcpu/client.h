/* SPDX-License-Identifier: MIT */
/*
 * vcpu/client.h - what the engine offers the layer that runs on it
 * (sync/: its RCU on vCPUs, lock statistics, lockdep, the lock registry,
 * RCU's free batches), without the engine knowing any of them.  Private
 * to the library.
 *
 * The engine calls nothing above it.  Where it must call out - a
 * context's work ends or the context is dropped, a failed run abandons
 * its contexts, a report describes a context or an address, a machine
 * goes away - it calls the hooks its clients registered, each client's
 * in turn.  A client registers once, from a constructor of the file
 * whose state the hooks keep, so that a program that does not link that
 * file has nothing to register.  Constructors run in link order, so no
 * hook may depend on another client's having run first.
 *
 * Locking: registration happens before main(); the hooks run on the
 * machine's host thread (or the vCPU whose work ends), between events.
 */
#ifndef VS_VCPU_CLIENT_H
#define VS_VCPU_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <vmsim/vcpu_annotate.h>

/* The most clients, and the per-machine state each may keep. */
#define VS__VCPU_CLIENTS 8

/**
 * struct vs__vcpu_client - one client's hooks; NULL where it has none
 * @context_end: context @ctx's work ended (@dropped 0: on its own stack,
 *	still running), or the context is dropped where it stood (@dropped
 *	1: a machine is made or reset, on the host thread)
 * @describe_context: for a report, what context @ctx holds, as text in
 *	@buf of @len bytes (NUL-terminated); return the bytes written
 * @describe_addr: for a report, the name of the object at @addr
 *	("class+offset") in @buf; return its length, 0 when unknown
 * @abandon: a run failed or deadlocked: its contexts will never run
 *	again; free what they may hold of the client's static objects
 * @machine_end: the client's state of a machine (vs__vcpu_state())
 *	goes: the machine is destroyed or reset
 * @id: set by vs__vcpu_client_register()
 */
struct vs__vcpu_client {
	void (*context_end)(int ctx, int dropped);
	size_t (*describe_context)(int ctx, char *buf, size_t len);
	int (*describe_addr)(uintptr_t addr, char *buf, size_t len);
	void (*abandon)(void);
	void (*machine_end)(void *state);
	unsigned int id;
};

/* Register @c, which lives as long as the process.  Context: a
 * constructor; aborts when VS__VCPU_CLIENTS are registered already. */
void vs__vcpu_client_register(struct vs__vcpu_client *c);

/* The slot of client @c's state in the machine the caller runs on
 * (NULL at first; @c->machine_end frees it), or NULL on a host thread.
 * Context: any; the slot is the running machine's, touched between its
 * events. */
void **vs__vcpu_state(const struct vs__vcpu_client *c);

/* Start @fn(@arg) on a daemon context of the running machine, on vCPU 0:
 * not waited for at the end of a run, and not a deadlock when blocked.
 * Context: a vCPU.  Return: its context id, or -EBUSY on a host thread
 * or when every daemon context works. */
int vs__vcpu_spawn_daemon(void (*fn)(void *), void *arg);

/* Name the static object [@addr, +@len) @name, a string that lives as
 * long as the process, in the reports of every machine; with @quiet its
 * events are bookkeeping that reports leave out.  Context: any. */
void vs__vcpu_name_static(const void *addr, size_t len, const char *name,
			  int quiet);

/*
 * Orderings a client's own synchronization makes, for the weak memory
 * models (vmsim/vcpu.h, enum vs_vcpu_memory): the running context puts
 * its clock into cell @cell (release) or takes the cell's (acquire), or
 * executes a full fence with no event of its own.  Cells are emptied
 * before each run; a cell past VS__VCPU_CELLS is ignored.  Context: a
 * vCPU; nothing happens on a host thread.
 */
#define VS__VCPU_CELLS 4
void vs__vcpu_release(unsigned int cell);
void vs__vcpu_acquire(unsigned int cell);
void vs__vcpu_fence(void);

#endif /* VS_VCPU_CLIENT_H */
