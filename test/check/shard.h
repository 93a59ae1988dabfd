/* SPDX-License-Identifier: MIT */
/*
 * test/check/shard.h - an exploration split among processes, and put
 * back together (test/check/shard.c, docs/sharding.md): private to
 * vs_explore().
 *
 *   VMSIM_SHARD=K/N         explore only the schedules of shard K of N
 *   VMSIM_SHARD_OUT=FILE    where each exploration of a shard appends
 *                           its line of JSON
 *   VMSIM_SHARD_MERGE=F,... explore nothing: report what the shards'
 *                           files say the unsharded exploration finds
 *
 * Schedule s (from 1) is shard K's when (s - 1) % N == K - 1; schedules
 * 1 (the warm-up) and 2 (the scheduler's first run, which measures its
 * choice points) run in every shard: every later one depends on them.
 * The scheduler reaches each later schedule of its shard without those
 * between (vs_machine_sched_seek()); with one that cannot (a DFS, a
 * caller's own), every shard explores whole.
 */
#ifndef VS_CHECK_SHARD_H
#define VS_CHECK_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include <vmsim/check/explore.h>

/* What the environment asks: k, n 0 when not sharded. */
struct vs__shard {
	unsigned int k, n;
	const char *out;	/* VMSIM_SHARD_OUT */
	const char *merge;	/* VMSIM_SHARD_MERGE, or NULL */
};

/* What makes two explorations one: the shards' lines are matched so. */
struct vs__shard_key {
	const char *name;
	uint64_t seed;
	const char *sched;
	unsigned long max;		/* the schedules' bound */
	uint64_t opts;			/* the other options, packed */
	uint64_t warmup;		/* schedule 1's hash */
};

/*
 * vs__shard_env - read VMSIM_SHARD, VMSIM_SHARD_OUT, VMSIM_SHARD_MERGE
 * into @sh.  Context: any.
 * Return: 0; -EINVAL with @msg naming the bad value: K/N not
 * 1 <= K <= N, VMSIM_SHARD without VMSIM_SHARD_OUT, or with
 * VMSIM_SHARD_MERGE.
 */
int vs__shard_env(struct vs__shard *sh, char *msg, size_t len);

/*
 * vs__shard_next - the schedule after @s that @sh runs (@s + 1 when not
 * sharded).  Context: any.
 */
unsigned long vs__shard_next(const struct vs__shard *sh, unsigned long s);

/*
 * vs__shard_write - append @rep, the exploration @key of shard @sh that
 * returned @ret, as one line of JSON to @sh->out (one write(): the forked test cases of
 * one shard share the file).
 * Context: the exploring host thread.
 * Return: 0, or a negative errno.
 */
int vs__shard_write(const struct vs__shard *sh, const struct vs__shard_key *key,
		    int ret, const struct vs_explore_report *rep);

/*
 * vs__shard_merge - what the unsharded exploration @key reports, from
 * the files of @sh->merge: of the line of each shard, the failure found
 * at the lowest schedule, or, when none failed, the most schedules.
 * @rep receives it whole, its text included, and @ret what vs_explore()
 * returned.
 * Context: the exploring host thread.
 * Return: 0 when it is found; -EINVAL with @rep->text saying what is missing (a shard, a
 * file, a line for @key) or malformed; -ENOMEM.
 */
int vs__shard_merge(const struct vs__shard *sh, const struct vs__shard_key *key,
		    struct vs_explore_report *rep, int *ret);

#endif /* VS_CHECK_SHARD_H */
