/* SPDX-License-Identifier: MIT */
/*
 * The lock kinds behind struct vs_lock: one ops table each, adapters
 * that only cast the implementation pointer.
 */
#include "lock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "brlock.h"
#include "internal.h"
#include "percpu_rwsem.h"
#include "prwlock.h"
#include "rwsem.h"

#define VS__LOCK_OPS(kind, type, init_fn, destroy_fn, rl, rt, ru, wl, wt, \
		     wu, dg)                                              \
	static int kind##_init(void *p) { return init_fn((type *)p); }   \
	static int kind##_destroy(void *p) { return destroy_fn((type *)p); } \
	static void kind##_rl(void *p) { rl((type *)p); }                \
	static int kind##_rt(void *p) { return rt((type *)p); }          \
	static void kind##_ru(void *p) { ru((type *)p); }                \
	static void kind##_wl(void *p) { wl((type *)p); }                \
	static int kind##_wt(void *p) { return wt((type *)p); }          \
	static void kind##_wu(void *p) { wu((type *)p); }                \
	static void kind##_dg(void *p) { dg((type *)p); }                \
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

static const struct vs_lock_ops *const kinds[] = {
	&rwsem_ops, &pthread_ops, &percpu_ops, &brlock_ops, &prwlock_ops,
};

const char *vs_lock_kind_name(int i)
{
	if (i < 0 || i >= (int)VS_ARRAY_SIZE(kinds))
		return NULL;
	return kinds[i]->name;
}

const struct vs_lock_ops *vs_lock_kind_ops(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < VS_ARRAY_SIZE(kinds); i++)
		if (strcmp(kinds[i]->name, name) == 0)
			return kinds[i];
	return NULL;
}

int vs_lock_init(struct vs_lock *lock, const char *kind, const char *class)
{
	const struct vs_lock_ops *ops = vs_lock_kind_ops(kind ? kind : "rwsem");
	struct vs_lock_class *lc = NULL;
	size_t size;
	void *impl;
	int err;

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
	lock->ops = ops;
	lock->impl = impl;
	lock->class = lc;
	vs_atomic_init(&lock->last_slot, UINT32_MAX);
	return 0;
}

int vs_lock_destroy(struct vs_lock *lock)
{
	int err;

	if (!lock || !lock->ops)
		return -EINVAL;
	err = lock->ops->destroy(lock->impl);
	if (err)
		return err;
	free(lock->impl);
	lock->ops = NULL;
	lock->impl = NULL;
	return 0;
}
