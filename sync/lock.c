/* SPDX-License-Identifier: MIT */
/*
 * The lock kinds behind struct vs_lock: one ops table each, adapters
 * that only cast the implementation pointer.
 */
#include <vmsim/lock.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/brlock.h>
#include <vmsim/percpu_rwsem.h>
#include <vmsim/prwlock.h>
#include <vmsim/rwsem.h>
#include <vmsim/spinlock.h>
#include <vmsim/vcpu_annotate.h>

#include "../vcpu/client.h"
#include "internal.h"

#define VS__LOCK_OPS(kind, type, init_fn, destroy_fn, rl, rt, ru, wl, wt, \
		     wu, dg)                                              \
	static int kind##_init(void *p) { return init_fn((type *)p); }   \
	static int kind##_destroy(void *p) { return destroy_fn((type *)p); } \
	static void kind##_rl(struct vs_lock *l) { rl((type *)l->impl); } \
	static int kind##_rt(struct vs_lock *l) { return rt((type *)l->impl); } \
	static void kind##_ru(struct vs_lock *l) { ru((type *)l->impl); } \
	static void kind##_wl(struct vs_lock *l) { wl((type *)l->impl); } \
	static int kind##_wt(struct vs_lock *l) { return wt((type *)l->impl); } \
	static void kind##_wu(struct vs_lock *l) { wu((type *)l->impl); } \
	static void kind##_dg(struct vs_lock *l) { dg((type *)l->impl); } \
	static const struct vs_lock_ops kind##_ops = {                   \
		#kind, sizeof(type), kind##_init, kind##_destroy,        \
		kind##_rl, kind##_rt, kind##_ru, kind##_wl, kind##_wt,   \
		kind##_wu, kind##_dg,                                    \
	}

/* ---- pthread: glibc's pthread_rwlock_t, default attributes ---------- */

static void pthread_check(const char *what, int err)
{
	if (vs_unlikely(err))
		vs__die(what, err);
}

static int prw_init(pthread_rwlock_t *rw)
{
	return -pthread_rwlock_init(rw, NULL);
}

static int prw_destroy(pthread_rwlock_t *rw)
{
	/* glibc does not report a held lock: probe it. */
	if (pthread_rwlock_trywrlock(rw) != 0)
		return -EBUSY;
	pthread_rwlock_unlock(rw);
	return -pthread_rwlock_destroy(rw);
}

static void prw_rdlock(pthread_rwlock_t *rw)
{
	pthread_check("pthread_rwlock_rdlock", pthread_rwlock_rdlock(rw));
}

static int prw_tryrdlock(pthread_rwlock_t *rw)
{
	return pthread_rwlock_tryrdlock(rw) == 0;
}

static void prw_unlock(pthread_rwlock_t *rw)
{
	pthread_check("pthread_rwlock_unlock", pthread_rwlock_unlock(rw));
}

static void prw_wrlock(pthread_rwlock_t *rw)
{
	pthread_check("pthread_rwlock_wrlock", pthread_rwlock_wrlock(rw));
}

static int prw_trywrlock(pthread_rwlock_t *rw)
{
	return pthread_rwlock_trywrlock(rw) == 0;
}

/* pthread has no downgrade: release, then read-lock (not atomic; a
 * writer may get in between, which the pthread kind documents). */
static void prw_downgrade(pthread_rwlock_t *rw)
{
	prw_unlock(rw);
	prw_rdlock(rw);
}

VS__LOCK_OPS(rwsem, struct vs_rwsem, vs_rwsem_init, vs_rwsem_destroy,
	     vs_down_read, vs_down_read_trylock, vs_up_read, vs_down_write,
	     vs_down_write_trylock, vs_up_write, vs_downgrade_write);
VS__LOCK_OPS(pthread, pthread_rwlock_t, prw_init, prw_destroy, prw_rdlock,
	     prw_tryrdlock, prw_unlock, prw_wrlock, prw_trywrlock,
	     prw_unlock, prw_downgrade);
VS__LOCK_OPS(percpu, struct vs_percpu_rwsem, vs_percpu_init_rwsem,
	     vs_percpu_free_rwsem, vs_percpu_down_read,
	     vs_percpu_down_read_trylock, vs_percpu_up_read,
	     vs_percpu_down_write, vs_percpu_down_write_trylock,
	     vs_percpu_up_write, vs_percpu_downgrade_write);
VS__LOCK_OPS(brlock, struct vs_brlock, vs_brlock_init, vs_brlock_destroy,
	     vs_br_read_lock, vs_br_read_trylock, vs_br_read_unlock,
	     vs_br_write_lock, vs_br_write_trylock, vs_br_write_unlock,
	     vs_br_downgrade_write);
VS__LOCK_OPS(prwlock, struct vs_prwlock, vs_prwlock_init,
	     vs_prwlock_destroy, vs_prw_read_lock, vs_prw_read_trylock,
	     vs_prw_read_unlock, vs_prw_write_lock, vs_prw_write_trylock,
	     vs_prw_write_unlock, vs_prw_downgrade_write);

/*
 * Every initialized lock, so that switching the hooks can repoint them.
 * Under registry_lock.
 */
static vs_spinlock_t registry_lock = VS_SPINLOCK_INIT;
static struct vs_lock *registry;
static const struct vs_lock_ops *registry_hooked; /* NULL: hooks off */

static void registry_add(struct vs_lock *lock)
{
	vs_spin_lock(&registry_lock);
	lock->reg_prev = NULL;
	lock->reg_next = registry;
	if (registry)
		registry->reg_prev = lock;
	registry = lock;
	vs_write_once(&lock->ops, registry_hooked ? registry_hooked
						  : lock->kind);
	vs_spin_unlock(&registry_lock);
}

static void registry_del(struct vs_lock *lock)
{
	vs_spin_lock(&registry_lock);
	if (lock->reg_prev)
		lock->reg_prev->reg_next = lock->reg_next;
	else
		registry = lock->reg_next;
	if (lock->reg_next)
		lock->reg_next->reg_prev = lock->reg_prev;
	vs_spin_unlock(&registry_lock);
}

/*
 * The engine's hooks (vcpu/client.h): a failed run's contexts never run
 * again, so the registry's lock is free; a report names the lock an
 * address lies in ("class+offset"), unless the registry is busy.
 */
static void abandon(void)
{
	memset(&registry_lock, 0, sizeof(registry_lock));
}

static int lock_name_of(uintptr_t a, char *buf, size_t len)
{
	const struct vs_lock *l;
	uintptr_t impl;
	int w = 0;

	if (!vs_spin_trylock(&registry_lock))
		return 0;	/* held by whoever stopped: no name */
	for (l = registry; l && !w; l = l->reg_next) {
		impl = (uintptr_t)l->impl;
		if (!l->class)
			continue;
		if (a >= impl && a < impl + l->kind->size)
			w = snprintf(buf, len, "%s+%lu", l->class->name,
				     (unsigned long)(a - impl));
		else if (a >= (uintptr_t)l && a < (uintptr_t)(l + 1))
			w = snprintf(buf, len, "%s's struct vs_lock+%lu",
				     l->class->name,
				     (unsigned long)(a - (uintptr_t)l));
	}
	vs_spin_unlock(&registry_lock);
	return w < 0 ? 0 : w;
}

static struct vs__vcpu_client lock_client = {
	.describe_addr = lock_name_of,
	.abandon = abandon,
};

__attribute__((constructor)) static void lock_client_register(void)
{
	vs__vcpu_client_register(&lock_client);
}

/*
 * A thread inside a lock call when the table changes finishes with the
 * table it loaded; its unlock may then go through the other one, which
 * lockstat tolerates (a release it has no acquisition for is skipped).
 */
void vs__lock_set_hooks(const struct vs_lock_ops *hooked, int on)
{
	struct vs_lock *lock;

	vs_spin_lock(&registry_lock);
	registry_hooked = on ? hooked : NULL;
	for (lock = registry; lock; lock = lock->reg_next)
		vs_write_once(&lock->ops, on ? hooked : lock->kind);
	vs_spin_unlock(&registry_lock);
}

/*
 * Every kind: the built-in ones, then those registered.  A slot is
 * written once, under kinds_lock, with a release store that pairs with
 * the acquire load in kind_at(): whoever finds a table finds it whole.
 */
#if VS_VCPU
/*
 * On vCPUs every vCPU is the same host thread: a pthread_rwlock_t would
 * see one owner for all of them and block the host for good.  The kind
 * is left out, and vs_lock_init() refuses it by name.
 */
#define NR_BUILTIN_KINDS 4
static VS_ATOMIC(const struct vs_lock_ops *) kinds[VS_LOCK_MAX_KINDS] = {
	&rwsem_ops, &percpu_ops, &brlock_ops, &prwlock_ops,
};
#else
#define NR_BUILTIN_KINDS 5
static VS_ATOMIC(const struct vs_lock_ops *) kinds[VS_LOCK_MAX_KINDS] = {
	&rwsem_ops, &pthread_ops, &percpu_ops, &brlock_ops, &prwlock_ops,
};
#endif
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct vs_lock_ops *kind_at(int i)
{
	if (i < 0 || i >= VS_LOCK_MAX_KINDS)
		return NULL;
	return vs_load_acquire(&kinds[i]);
}

const char *vs_lock_kind_name(int i)
{
	const struct vs_lock_ops *ops = kind_at(i);

	return ops ? ops->name : NULL;
}

const struct vs_lock_ops *vs_lock_kind_ops(const char *name)
{
	const struct vs_lock_ops *ops;
	int i;

	for (i = 0; name && (ops = kind_at(i)); i++)
		if (strcmp(ops->name, name) == 0)
			return ops;
	return NULL;
}

/* Does @ops have everything a lock kind needs? */
static int kind_valid(const struct vs_lock_ops *ops)
{
	return ops && ops->name && *ops->name && ops->size && ops->init &&
	       ops->destroy && ops->read_lock && ops->read_trylock &&
	       ops->read_unlock && ops->write_lock && ops->write_trylock &&
	       ops->write_unlock && ops->downgrade_write;
}

int vs_lock_kind_register(const struct vs_lock_ops *ops)
{
	int i, ret = -EBUSY;

	if (!kind_valid(ops))
		return -EINVAL;
	pthread_mutex_lock(&kinds_lock);
	if (vs_lock_kind_ops(ops->name) ||
	    (VS_VCPU && strcmp(ops->name, pthread_ops.name) == 0))
		ret = -EEXIST;
	for (i = NR_BUILTIN_KINDS; ret == -EBUSY && i < VS_LOCK_MAX_KINDS;
	     i++) {
		if (vs_read_once(&kinds[i]))
			continue;
		vs_store_release(&kinds[i], ops);
		ret = i;
	}
	pthread_mutex_unlock(&kinds_lock);
	return ret;
}

/* In the vCPU build, reports name the registry's lock. */
static void name_statics(void)
{
	vs__vcpu_name_static(&registry_lock, sizeof(registry_lock),
			     "the lock registry's lock", 0);
}

int vs_lock_init(struct vs_lock *lock, const char *kind, const char *class)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const struct vs_lock_ops *ops = vs_lock_kind_ops(kind ? kind : "rwsem");
	struct vs_lock_class *lc = NULL;
	size_t size;
	void *impl;
	int err;

	if (VS_VCPU && kind && strcmp(kind, pthread_ops.name) == 0)
		return -EOPNOTSUPP;
	if (VS_VCPU)
		(void)pthread_once(&once, name_statics);
	if (!lock || !ops)
		return -EINVAL;
	if (class && !(lc = vs_lock_class_get(class)))
		return -EINVAL;
	size = (ops->size + VS_CACHELINE - 1) / VS_CACHELINE * VS_CACHELINE;
	impl = aligned_alloc(VS_CACHELINE, size);
	if (!impl)
		return -ENOMEM;
	err = ops->init(impl);
	if (err) {
		free(impl);
		return err;
	}
	lock->kind = ops;
	lock->impl = impl;
	lock->class = lc;
	/* lockdep's class is the statistics class, by name. */
	VS__LD(lock->dep_map = (struct vs_lockdep_map){ 0 });
	if (lc)
		VS__LD(vs__lockdep_set_class(&lock->dep_map, lc->name));
	vs_atomic_init(&lock->last_slot, UINT32_MAX);
	registry_add(lock);
	if (lc)	/* on a vCPU: the cost model's hot lines name it */
		vs_vcpu_name(impl, ops->size, lc->name);
	return 0;
}

int vs_lock_destroy(struct vs_lock *lock)
{
	int err;

	if (!lock || !lock->kind)
		return -EINVAL;
	err = lock->kind->destroy(lock->impl);
	if (err)
		return err;
	registry_del(lock);
	free(lock->impl);
	vs_write_once(&lock->ops, NULL);
	lock->kind = NULL;
	lock->impl = NULL;
	return 0;
}
