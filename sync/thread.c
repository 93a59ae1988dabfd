/* SPDX-License-Identifier: MIT */
#include <vmsim/thread.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/lockdep_annotate.h>
#include <vmsim/rcu.h>
#include <vmsim/wait.h>

#include "internal.h"

__thread int vs__tls_slot VS_TLS_IE = -1;

/* Bit i set: slot i is owned by a live attached thread. */
static vs_atomic64_t slot_map;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

void vs__slot_lock_slow(vs__slot_lock_t *lock)
{
	uint32_t old;
	unsigned int spins = 0;

	for (;;) {
		old = 0;
		/* Acquire: pairs with the release in vs__slot_unlock(). */
		if (vs_read_once(lock) == 0 && vs_cmpxchg_acquire(lock, &old, 1))
			return;
		if (++spins % 128 == 0)
			vs_yield();
		else
			vs_cpu_relax();
	}
}

static void thread_exit(void *arg)
{
	(void)arg;
	VS__LD(vs__lockdep_context_end(-1, 0));
	vs_thread_detach();
}

static void exit_key_create(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0)
		vs__die("pthread_key_create", EAGAIN);
	vs_membarrier_init();
}

static int slot_take(void)
{
	uint64_t map = vs_read_once(&slot_map);
	int slot;

	for (;;) {
		if (map == UINT64_MAX)
			return VS_SLOT_SHARED;
		slot = __builtin_ctzll(~map);
		if (vs_cmpxchg(&slot_map, &map, map | (UINT64_C(1) << slot)))
			return slot;
	}
}

int vs__thread_attach_slow(void)
{
	int slot;

	pthread_once(&exit_key_once, exit_key_create);
	if (vs__tls_slot >= 0)
		return vs__tls_slot;
	slot = slot_take();
	/* A non-NULL value makes the key's destructor run at thread exit.
	 * Our key is allocated, so this cannot fail. */
	if (pthread_setspecific(exit_key, (void *)1) != 0)
		vs__die("pthread_setspecific", ENOMEM);
	vs_rcu_register_thread();
	vs__tls_slot = slot;
	return slot;
}

int vs_thread_attach(void)
{
	vs__thread_attach_slow();
	return 0;
}

void vs_thread_detach(void)
{
	int slot = vs__tls_slot;

	if (slot < 0)
		return;
	vs_rcu_unregister_thread();
	vs__tls_slot = -1;
	pthread_setspecific(exit_key, NULL);
	if (slot != VS_SLOT_SHARED)
		vs_fetch_and(&slot_map, ~(UINT64_C(1) << slot));
}
