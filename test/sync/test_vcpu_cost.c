/* SPDX-License-Identifier: MIT */
/*
 * Tests for the machine profiles (vmsim/vcpu_profile.h) and the coherence
 * cost model (vmsim/vcpu_cost.h), with exact expected figures: a line
 * ping-ponged between sockets pays the profile's other_socket per
 * transfer, a private line pays hits, RMWs on one hot line queue at one
 * transfer each, clears share a socket's bandwidth, nothing depends on
 * where the lines are in memory, and naming a range changes no figure.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vmsim/vcpu_cost.h>
#include <vmsim/vcpu_profile.h>

#include "test.h"

#define LINE VS_COHERENCE_LINE

/* A complete profile: 2 sockets x 2 cores x 2 threads. */
static const char small_text[] =
	"# a comment line\n"
	"name = small\n"
	"ghz = 2.5\n"
	"sockets = 2   # trailing comment\n"
	"cores_per_socket = 2\n"
	"threads_per_core = 2\n"
	"\n"
	"hit = 4\n"
	"smt_sibling = 10\n"
	"same_socket = 50\n"
	"other_socket = 200\n"
	"memory = 150\n"
	"rmw = 20\n"
	"fence = 30\n"
	"pause = 10\n"
	"clear_core_bytes_per_cycle = 3.7\n"
	"clear_socket_bytes_per_cycle = 12\n"
	"fault_entry = 300\n"
	"fault_exit = 200\n"
	"syscall = 150\n"
	"futex_wake = 2000\n"
	"wake_latency = 8000\n"
	"context_switch = 4000\n";

static void load(struct vs_vcpu_profile *p, const char *name)
{
	char err[256] = "";
	int ret = vs_vcpu_profile_load(p, name, err, sizeof(err));

	ck_assert_msg(ret == 0, "%s: %d %s", name, ret, err);
}

static struct vs_coherence *make(struct vs_vcpu_profile *p,
				 const char *name, unsigned int nr)
{
	struct vs_coherence *c = NULL;

	load(p, name);
	ck_assert_int_eq(vs_coherence_create(&c, p, nr), 0);
	return c;
}

/* A machine of @nr vCPUs of small_text with @extra lines added. */
static struct vs_coherence *make_small(struct vs_vcpu_profile *p,
				       const char *extra, unsigned int nr)
{
	char text[sizeof(small_text) + 128];
	struct vs_coherence *c = NULL;

	ck_assert_uint_lt(strlen(extra), 128);
	snprintf(text, sizeof(text), "%s%s", small_text, extra);
	ck_assert_int_eq(vs_vcpu_profile_parse(p, text, NULL, 0), 0);
	ck_assert_int_eq(vs_coherence_create(&c, p, nr), 0);
	return c;
}

/*
 * A store by @cpu at @t retires into the store buffer (a hit's cost,
 * after the line's turn comes if others are queued for it) and a fence
 * right after it waits until the line is there.  Return: the store's
 * cost until then, the fence left out.
 */
static uint64_t store_done(struct vs_coherence *c,
			   const struct vs_vcpu_profile *p, unsigned int cpu,
			   const void *addr, uint64_t t)
{
	uint64_t cost = vs_coherence_access(c, cpu, addr, VS_ACCESS_STORE, t);

	ck_assert_uint_ge(cost, p->hit);
	return cost + vs_coherence_access(c, cpu, NULL, VS_ACCESS_FENCE,
					  t + cost) - p->fence;
}

/* @src with the first @from replaced by @to, into @out. */
static void subst(char *out, size_t size, const char *src, const char *from,
		  const char *to)
{
	const char *at = strstr(src, from);

	ck_assert_ptr_nonnull(at);
	snprintf(out, size, "%.*s%s%s", (int)(at - src), src, to,
		 at + strlen(from));
}

/* small_text with @from replaced by @to must fail, the message holding
 * @want. */
static void parse_fails(const char *from, const char *to, const char *want)
{
	struct vs_vcpu_profile p;
	char text[2048], err[256] = "";

	subst(text, sizeof(text), small_text, from, to);
	ck_assert_int_eq(vs_vcpu_profile_parse(&p, text, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, want) != NULL, "error '%s' lacks '%s'",
		      err, want);
}

START_TEST(test_parse)
{
	struct vs_vcpu_profile p;
	char err[128] = "";

	ck_assert_int_eq(vs_vcpu_profile_parse(&p, small_text, err,
					       sizeof(err)), 0);
	ck_assert_str_eq(p.name, "small");
	ck_assert(p.ghz == 2.5);
	ck_assert_uint_eq(p.nr_cpus, 8);
	ck_assert_int_eq(p.numbering, VS_NUMBERING_SOCKET_MAJOR);
	ck_assert_uint_eq(p.hit, 4);
	ck_assert_uint_eq(p.other_socket, 200);
	ck_assert_uint_eq(p.clear_core_mbpc, 3700);
	ck_assert_uint_eq(p.clear_socket_mbpc, 12000);
	ck_assert_uint_eq(p.context_switch, 4000);
	/* The optional keys' defaults: a handoff at the latency plus an
	 * RMW, an IPI a message between sockets and an interrupt's
	 * entry. */
	ck_assert_uint_eq(p.handoff_same_socket, 50 + 20);
	ck_assert_uint_eq(p.handoff_other_socket, 200 + 20);
	ck_assert_uint_eq(p.ipi, 200 + 300);
	ck_assert_int_eq(vs_vcpu_profile_parse(NULL, small_text, err,
					       sizeof(err)), -EINVAL);
	ck_assert_int_eq(vs_vcpu_profile_parse(&p, NULL, NULL, 0), -EINVAL);
}
END_TEST

START_TEST(test_parse_errors)
{
	parse_fails("hit = 4", "hti = 4", "line 8: unknown key 'hti'");
	parse_fails("hit = 4", "hit = x12", "line 8: hit: 'x12' is not");
	parse_fails("hit = 4", "hit = -4", "line 8: hit: '-4' is not");
	parse_fails("hit = 4", "hit = 4.5", "line 8: hit: '4.5' is not");
	parse_fails("hit = 4", "hit = 99999999999", "line 8: hit:");
	parse_fails("hit = 4\n", "", "missing key 'hit'");
	parse_fails("memory = 150\n", "", "missing key 'memory'");
	parse_fails("hit = 4", "hit = 4\nhit = 5", "line 9: hit: set twice");
	parse_fails("hit = 4", "hit 4", "line 8: 'hit 4' is not 'key = value'");
	parse_fails("ghz = 2.5", "ghz = 0", "line 3: ghz: '0' is not");
	parse_fails("ghz = 2.5", "ghz = 2.5e9", "line 3: ghz:");
	parse_fails("sockets = 2 ", "sockets = 0 ", "line 4: sockets: '0'");
	parse_fails("cores_per_socket = 2", "cores_per_socket = 100",
		    "= 400, more than 256 CPUs");
	parse_fails("name = small", "name = a/b", "line 2: name: 'a/b'");
	parse_fails("clear_core_bytes_per_cycle = 3.7",
		    "clear_core_bytes_per_cycle = 0.0004",
		    "clear_core_bytes_per_cycle: '0.0004' is not");
	parse_fails("clear_core_bytes_per_cycle = 3.7",
		    "clear_core_bytes_per_cycle = 3.",
		    "clear_core_bytes_per_cycle: '3.' is not");
	parse_fails("hit = 4", "hit = 4\nllc_kib = 1.5",
		    "llc_kib: '1.5' is not a whole number of KiB");
	parse_fails("hit = 4", "hit = 4\nclear_cached_bytes_per_cycle = 0",
		    "clear_cached_bytes_per_cycle: '0' is not");
	parse_fails("hit = 4", "hit = 4\nllc_kib = 8",
		    "clear_cached_bytes_per_cycle and llc_kib go together");
	parse_fails("hit = 4", "hit = 4\nprefetch_streams = 33",
		    "prefetch_streams: '33' is not a whole number from 0 to 32");
	parse_fails("hit = 4", "hit = 4\nprefetch_distance = 0",
		    "prefetch_distance: '0' is not a whole number from 1 to "
		    "32");
	parse_fails("hit = 4", "hit = 4\nprefetch_distance = 33",
		    "prefetch_distance: '33' is not a whole number from 1 to "
		    "32");
	parse_fails("hit = 4", "hit = 4\nhandoff_same_socket = 0",
		    "handoff_same_socket: '0' is not a whole number of cycles "
		    "from 1 to 1000000000");
	parse_fails("hit = 4", "hit = 4\nhandoff_other_socket = x",
		    "handoff_other_socket: 'x' is not");
	parse_fails("hit = 4", "hit = 4\nipi = 0",
		    "ipi: '0' is not a whole number of cycles from 1 to");
	parse_fails("hit = 4", "numbering = zigzag",
		    "numbering: 'zigzag' is not socket-major or interleaved");
}
END_TEST

START_TEST(test_parse_decimals)
{
	struct vs_vcpu_profile p;
	char text[2048 + 64], a[2048], b[2048];

	/* Thousandths, rounded half up at the fourth decimal. */
	subst(a, sizeof(a), small_text, "= 3.7", "= 2.0005");
	subst(b, sizeof(b), a, "= 12", "= 0.0015");
	snprintf(text, sizeof(text), "%snumbering = interleaved\nipi = 777\n",
		 b);
	ck_assert_int_eq(vs_vcpu_profile_parse(&p, text, NULL, 0), 0);
	ck_assert_uint_eq(p.ipi, 777);
	ck_assert_uint_eq(p.clear_core_mbpc, 2001);
	ck_assert_uint_eq(p.clear_socket_mbpc, 2);
	ck_assert_int_eq(p.numbering, VS_NUMBERING_INTERLEAVED);
}
END_TEST

START_TEST(test_load)
{
	struct vs_vcpu_profile p;
	char err[256];

	load(&p, "ivb-ep-2x10x2");
	ck_assert_str_eq(p.name, "ivb-ep-2x10x2");
	ck_assert_uint_eq(p.nr_cpus, 40);
	ck_assert_uint_eq(p.sockets, 2);
	/* Set, not the defaults: below a transfer and an RMW. */
	ck_assert_uint_lt(p.handoff_same_socket, p.same_socket + p.rmw);
	ck_assert_uint_lt(p.handoff_other_socket, p.other_socket + p.rmw);
	ck_assert_uint_gt(p.ipi, 0);
	load(&p, "ivb-ex-4x15x2");
	ck_assert_str_eq(p.name, "ivb-ex-4x15x2");
	ck_assert_uint_eq(p.nr_cpus, 120);
	ck_assert_uint_lt(p.handoff_other_socket, p.other_socket + p.rmw);
	ck_assert_uint_gt(p.ipi, 0);
	load(&p, "flat");
	ck_assert_uint_eq(p.ipi, 1000);
	ck_assert_uint_eq(p.nr_cpus, VS_VCPU_MAX);
	ck_assert_uint_eq(p.same_socket, p.other_socket);
	ck_assert_uint_eq(p.smt_sibling, p.memory);
	ck_assert_int_eq(vs_vcpu_profile_load(&p, "no-such-machine", err,
					      sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "no profile 'no-such-machine'"));
	ck_assert_int_eq(vs_vcpu_profile_load(&p, "../etc", err, sizeof(err)),
			 -ENOENT);	/* a path: it has a '/' */
	ck_assert_int_eq(vs_vcpu_profile_load(&p, "bad name", err,
					      sizeof(err)), -EINVAL);
	ck_assert_int_eq(vs_vcpu_profile_load(&p, ".hidden", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(vs_vcpu_profile_load(&p, "/nonexistent/x.profile",
					      err, sizeof(err)), -ENOENT);
	/* A file of this folder by its name, as docs/vcpu.md gives
	 * host.profile; "host" alone says how to make one. */
	ck_assert_int_eq(vs_vcpu_profile_load(&p, "no-such-file.profile",
					      err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(strstr(err, "looked in"));
	if (!getenv("VMSIM_PROFILE_PATH")) {	/* where a host one may be */
		ck_assert_int_eq(vs_vcpu_profile_load(&p, "host", err,
						      sizeof(err)), -ENOENT);
		ck_assert_ptr_nonnull(strstr(err, "vcpu-calibrate"));
	}
	ck_assert_int_eq(vs_vcpu_profile_load(NULL, "flat", err, sizeof(err)),
			 -EINVAL);
}
END_TEST

START_TEST(test_numbering)
{
	struct vs_vcpu_profile p;
	struct vs_cpu_place pl;

	load(&p, "ivb-ep-2x10x2");
	/* Socket-major: 0-9 socket 0, 10-19 socket 1, then their siblings. */
	ck_assert_int_eq(vs_vcpu_cpu_place(&p, 9, &pl), 0);
	ck_assert_uint_eq(pl.socket, 0);
	ck_assert_uint_eq(pl.core, 9);
	ck_assert_uint_eq(pl.thread, 0);
	ck_assert_int_eq(vs_vcpu_cpu_place(&p, 10, &pl), 0);
	ck_assert_uint_eq(pl.socket, 1);
	ck_assert_uint_eq(pl.core, 0);
	ck_assert_int_eq(vs_vcpu_cpu_place(&p, 31, &pl), 0);
	ck_assert_uint_eq(pl.socket, 1);
	ck_assert_uint_eq(pl.core, 1);
	ck_assert_uint_eq(pl.thread, 1);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 3, 3), VS_DIST_SAME);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 0, 20), VS_DIST_SMT);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 31, 11), VS_DIST_SMT);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 0, 9), VS_DIST_SOCKET);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 0, 29), VS_DIST_SOCKET);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 9, 10), VS_DIST_REMOTE);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 0, 40), -EINVAL);
	ck_assert_int_eq(vs_vcpu_cpu_place(&p, 40, &pl), -EINVAL);
	ck_assert_int_eq(vs_vcpu_cpu_distance(NULL, 0, 1), -EINVAL);
	/* Interleaved: even CPUs socket 0, odd ones socket 1. */
	p.numbering = VS_NUMBERING_INTERLEAVED;
	ck_assert_int_eq(vs_vcpu_cpu_place(&p, 9, &pl), 0);
	ck_assert_uint_eq(pl.socket, 1);
	ck_assert_uint_eq(pl.core, 4);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 0, 1), VS_DIST_REMOTE);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 0, 2), VS_DIST_SOCKET);
	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 1, 21), VS_DIST_SMT);
	ck_assert_uint_eq(vs_vcpu_profile_latency(&p, VS_DIST_REMOTE),
			  p.other_socket);
	ck_assert_uint_eq(vs_vcpu_profile_latency(&p, VS_DIST_SAME), p.hit);
}
END_TEST

/* Two vCPUs on two sockets take turns writing one line: every transfer
 * after the first (from memory) costs exactly other_socket. */
START_TEST(test_ping_pong)
{
	static char buf[LINE] __attribute__((aligned(LINE)));
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ep-2x10x2", 40);
	unsigned int cpu[2] = { 0, 10 };
	uint64_t t = 0, cost;
	int i;

	ck_assert_int_eq(vs_vcpu_cpu_distance(&p, 0, 10), VS_DIST_REMOTE);
	cost = store_done(c, &p, 0, buf, t);
	ck_assert_uint_eq(cost, p.memory);
	t += cost + p.fence;
	for (i = 1; i <= 1000; i++) {
		int store = i % 2;

		if (store) {
			cost = store_done(c, &p, cpu[i % 2], buf, t);
			t += p.fence;
		} else {
			cost = vs_coherence_access(c, cpu[i % 2], buf,
						   VS_ACCESS_LOAD, t);
		}
		ck_assert_uint_eq(cost, p.other_socket);
		t += cost;
		/* The load left the line shared by both: the next store
		 * invalidates the other copy, over the same distance. */
		cost = store_done(c, &p, cpu[i % 2], buf, t);
		ck_assert_uint_eq(cost, store ? p.hit : p.other_socket);
		t += cost + p.fence;
	}
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &st), 0);
	ck_assert_uint_eq(st.by_source[VS_XFER_MEMORY], 1);
	ck_assert_uint_eq(st.by_source[VS_XFER_REMOTE], 1500);
	ck_assert_uint_eq(st.transfers, 1501);
	ck_assert_uint_eq(st.hits, 500);
	ck_assert_uint_eq(st.invalidations, 1000);
	ck_assert_uint_eq(st.wait_cycles, 0);
	ck_assert_uint_eq(st.cycles, t);
	vs_coherence_destroy(c);
}
END_TEST

START_TEST(test_rmw_ping_pong)
{
	static char buf[LINE] __attribute__((aligned(LINE)));
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ex-4x15x2", 120);
	uint64_t t = 0, cost;
	int i;

	/* CPUs 0 and 15: sockets 0 and 1 of the EX. */
	t += vs_coherence_access(c, 0, buf, VS_ACCESS_RMW, t);
	for (i = 1; i <= 100; i++) {
		cost = vs_coherence_access(c, i % 2 ? 15 : 0, buf,
					   VS_ACCESS_RMW, t);
		ck_assert_uint_eq(cost, p.other_socket + p.rmw);
		t += cost;
	}
	vs_coherence_destroy(c);
}
END_TEST

/* A line only one vCPU uses pays memory once, then hits. */
START_TEST(test_private_line)
{
	static char buf[4 * LINE] __attribute__((aligned(LINE)));
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ep-2x10x2", 40);
	uint64_t t = 0, cost;
	int i;

	t += vs_coherence_access(c, 3, buf, VS_ACCESS_LOAD, t);
	ck_assert_uint_eq(t, p.memory);
	for (i = 0; i < 300; i++) {
		enum vs_access kind = (enum vs_access)(i % 3);

		cost = vs_coherence_access(c, 3, buf + i % LINE, kind, t);
		ck_assert_uint_eq(cost, kind == VS_ACCESS_RMW ?
				  p.hit + p.rmw : p.hit);
		t += cost;
	}
	ck_assert_int_eq(vs_coherence_stats(c, 3, &st), 0);
	ck_assert_uint_eq(st.transfers, 1);
	ck_assert_uint_eq(st.hits, 300);
	ck_assert_uint_eq(st.rmws, 100);
	ck_assert_uint_eq(st.accesses, 301);
	ck_assert_int_eq(vs_coherence_stats(c, 4, &st), 0);
	ck_assert_uint_eq(st.accesses, 0);
	/* Another vCPU's line next to it is another line. */
	ck_assert_uint_eq(store_done(c, &p, 4, buf + LINE, 0), p.memory);
	ck_assert_uint_eq(vs_coherence_access(c, 4, buf + LINE,
					      VS_ACCESS_STORE, 0), p.hit);
	ck_assert_uint_eq(vs_coherence_access(c, 3, NULL, VS_ACCESS_FENCE, 0),
			  p.fence);
	vs_coherence_destroy(c);
}
END_TEST

/* N vCPUs RMW one line at the same instant: they queue, one transfer
 * each, the k-th finishing at k * (transfer + rmw). */
START_TEST(test_rmw_serialize)
{
	static char buf[LINE] __attribute__((aligned(LINE)));
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	const unsigned int n = 64;
	struct vs_coherence *c = make(&p, "flat", 256);
	uint64_t t0 = 1000, xfer, wait = 0;
	unsigned int k;

	ck_assert_uint_eq(store_done(c, &p, 0, buf, 0), p.memory);
	xfer = p.other_socket;	/* flat: every distance the same */
	for (k = 1; k <= n; k++) {
		unsigned int cpu = k * 3 % 256;	/* any mix of distances */
		uint64_t end = vs_coherence_access(c, cpu ? cpu : 1, buf,
						   VS_ACCESS_RMW, t0);

		ck_assert_uint_eq(end, k * (xfer + p.rmw));
		wait += (k - 1) * (xfer + p.rmw);
	}
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &st), 0);
	ck_assert_uint_eq(st.transfers, n + 1);
	ck_assert_uint_eq(st.rmws, n);
	ck_assert_uint_eq(st.wait_cycles, wait);
	/* A hit does not queue: the last RMWer owns the line. */
	ck_assert_uint_eq(vs_coherence_access(c, n * 3 % 256, buf,
					      VS_ACCESS_LOAD, t0), p.hit);
	vs_coherence_destroy(c);
}
END_TEST

/*
 * Requests queued for one line are handed over at the profile's handoff
 * interval, by the distance of each hand-over, not at the latency; an
 * uncontended transfer still costs the latency.
 */
START_TEST(test_rmw_handoff)
{
	static char buf[LINE] __attribute__((aligned(LINE)));
	struct vs_vcpu_profile p;
	struct vs_coherence *c;
	/* small: CPUs 0, 1 on socket 0, 2, 3 on socket 1 (4-7: their SMT
	 * siblings); smt_sibling 10, same_socket 50, other_socket 200, rmw
	 * 20. */
	static const struct {
		unsigned int cpu;
		uint64_t end;
	} q[] = {
		{ 1, 1000 + 50 + 20 },	/* uncontended: the latency */
		{ 2, 1070 + 90 },	/* from socket 0 to 1 */
		{ 3, 1160 + 30 },	/* within socket 1 */
		{ 7, 1190 + 10 + 20 },	/* from its SMT sibling */
		{ 0, 1220 + 90 },	/* back to socket 0 */
	};
	unsigned int k;

	c = make_small(&p, "handoff_same_socket = 30\n"
		       "handoff_other_socket = 90\n", 8);
	ck_assert_uint_eq(p.handoff_same_socket, 30);
	ck_assert_uint_eq(p.ipi, p.other_socket + p.fault_entry);
	ck_assert_uint_eq(store_done(c, &p, 0, buf, 0), p.memory);
	for (k = 0; k < VS_ARRAY_SIZE(q); k++)
		ck_assert_uint_eq(vs_coherence_access(c, q[k].cpu, buf,
						      VS_ACCESS_RMW, 1000),
				  q[k].end - 1000);
	/* Alone again: the latency. */
	ck_assert_uint_eq(vs_coherence_access(c, 1, buf, VS_ACCESS_RMW, 5000),
			  50 + 20);
	vs_coherence_destroy(c);
	/* Without the keys: the latency, queued or not. */
	c = make_small(&p, "", 8);
	ck_assert_uint_eq(p.handoff_same_socket, 50 + 20);
	ck_assert_uint_eq(p.handoff_other_socket, 200 + 20);
	ck_assert_uint_eq(store_done(c, &p, 0, buf, 0), p.memory);
	ck_assert_uint_eq(vs_coherence_access(c, 1, buf, VS_ACCESS_RMW, 1000),
			  70);
	ck_assert_uint_eq(vs_coherence_access(c, 2, buf, VS_ACCESS_RMW, 1000),
			  70 + 220);
	vs_coherence_destroy(c);
	/* A handoff above the latency is the latency. */
	c = make_small(&p, "handoff_other_socket = 900\n", 8);
	ck_assert_uint_eq(store_done(c, &p, 0, buf, 0), p.memory);
	ck_assert_uint_eq(vs_coherence_access(c, 1, buf, VS_ACCESS_RMW, 1000),
			  70);
	ck_assert_uint_eq(vs_coherence_access(c, 2, buf, VS_ACCESS_RMW, 1000),
			  70 + 220);
	vs_coherence_destroy(c);
}
END_TEST

/*
 * x86-64's store buffer: a store that misses costs the vCPU a hit and
 * goes on; its line arrives in the background.  Loads do not wait for
 * it; an RMW or a fence waits until every earlier store has its line.
 * A store to a line another is queued for first waits for its turn.
 */
START_TEST(test_store_buffer)
{
	static char buf[8 * LINE] __attribute__((aligned(LINE)));
	char *a = buf, *b = buf + LINE, *cc = buf + 2 * LINE,
	     *d = buf + 3 * LINE, *e = buf + 4 * LINE;
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "flat", 4);
	const uint64_t m = p.memory;
	uint64_t lead;

	ck_assert_uint_eq(vs_coherence_access(c, 0, a, VS_ACCESS_STORE, 0),
			  p.hit);
	/* Its own line is forwarded; another line does not wait. */
	ck_assert_uint_eq(vs_coherence_access(c, 0, a, VS_ACCESS_LOAD, 1),
			  p.hit);
	ck_assert_uint_eq(vs_coherence_access(c, 0, b, VS_ACCESS_LOAD, 2), m);
	/* Drained long ago: an RMW pays only itself. */
	ck_assert_uint_eq(vs_coherence_access(c, 0, b, VS_ACCESS_RMW, 200),
			  p.hit + p.rmw);
	/* Two stores in flight; the RMW waits for the later one. */
	vs_coherence_access(c, 0, cc, VS_ACCESS_STORE, 300);
	vs_coherence_access(c, 0, d, VS_ACCESS_STORE, 301);
	ck_assert_uint_eq(vs_coherence_access(c, 0, b, VS_ACCESS_RMW, 302),
			  301 + m - 302 + p.hit + p.rmw);
	/* A fence waits too. */
	vs_coherence_access(c, 0, e, VS_ACCESS_STORE, 499);
	ck_assert_uint_eq(vs_coherence_access(c, 0, NULL, VS_ACCESS_FENCE,
					      500), 499 + m - 500 + p.fence);
	ck_assert_int_eq(vs_coherence_stats(c, 0, &st), 0);
	ck_assert_uint_eq(st.drain_cycles, (301 + m - 302) + (499 + m - 500));
	ck_assert_uint_eq(st.transfers, 5);
	/* Another vCPU's load of a stored line waits for its transfer. */
	vs_coherence_access(c, 0, buf + 5 * LINE, VS_ACCESS_STORE, 1000);
	ck_assert_uint_eq(vs_coherence_access(c, 1, buf + 5 * LINE,
					      VS_ACCESS_LOAD, 1000),
			  m + p.same_socket);
	/* A store to a line queued for another waits for its turn (the
	 * lead), so that the engine lands it after the other's RMW: vCPU
	 * 2's RMW ends at 2110 and is held 50 more. */
	vs_coherence_access(c, 2, buf + 6 * LINE, VS_ACCESS_RMW, 2000);
	ck_assert_uint_eq(vs_coherence_access_lead(c, 3, buf + 6 * LINE,
						   VS_ACCESS_STORE, 2010,
						   &lead), 150 + p.hit);
	ck_assert_uint_eq(lead, 150);
	vs_coherence_destroy(c);
}
END_TEST

/*
 * A load waits for the last transfer of ownership and for the hold of
 * that transfer's receiver, not for the hold of a load in between: on
 * the EP, vCPU 0 takes the line from socket 1 (held 196 / 2 after),
 * vCPU 1 of its socket then loads it (held 79 / 2), and a load from
 * socket 1 takes effect only when vCPU 0's hold ends.
 */
START_TEST(test_load_waits_for_owner_hold)
{
	static char buf[LINE] __attribute__((aligned(LINE)));
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ep-2x10x2", 40);
	uint64_t lead, own;

	ck_assert_uint_eq(vs_coherence_access(c, 10, buf, VS_ACCESS_RMW, 0),
			  p.memory + p.rmw);
	own = vs_coherence_access(c, 0, buf, VS_ACCESS_RMW, 0);
	/* Queued behind vCPU 10's: handed over, not a whole transfer. */
	ck_assert_uint_eq(own, p.memory + p.rmw + p.handoff_other_socket);
	ck_assert_uint_eq(vs_coherence_access(c, 1, buf, VS_ACCESS_LOAD,
					      own + 1), p.same_socket);
	ck_assert_uint_eq(vs_coherence_access_lead(c, 11, buf, VS_ACCESS_LOAD,
						   own + 2, &lead),
			  p.other_socket);
	ck_assert_uint_eq(lead, own + p.other_socket / 2 - (own + 2));
	vs_coherence_destroy(c);

	/* The same for an RMW: vCPU 0's SMT sibling loads the line in
	 * between (a short hop, a short hold), and an RMW from socket 1
	 * still takes effect only when vCPU 0's hold ends. */
	c = make(&p, "ivb-ep-2x10x2", 40);
	vs_coherence_access(c, 10, buf, VS_ACCESS_RMW, 0);
	own = vs_coherence_access(c, 0, buf, VS_ACCESS_RMW, 0);
	ck_assert_uint_eq(vs_coherence_access(c, 20, buf, VS_ACCESS_LOAD,
					      own + 1), p.smt_sibling);
	(void)vs_coherence_access_lead(c, 11, buf, VS_ACCESS_RMW, own + 2,
				       &lead);
	ck_assert_uint_eq(lead, own + p.other_socket / 2 - (own + 2));
	vs_coherence_destroy(c);
}
END_TEST

/*
 * Loads share a line: they queue only behind a transfer of ownership,
 * not behind each other.  A transfer takes effect (the lead) once the
 * last receiver has had the line for half its transfer, and until then
 * that receiver still hits on it, though the directory gave it on.
 */
START_TEST(test_loads_share_and_hold)
{
	static char buf[LINE] __attribute__((aligned(LINE)));
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "flat", 8);
	uint64_t lead, x = p.other_socket;

	/* vCPU 0 takes it from memory at 0: busy and exclusive until x,
	 * kept for x / 2 after that. */
	ck_assert_uint_eq(vs_coherence_access_lead(c, 0, buf, VS_ACCESS_RMW,
						   0, &lead), p.memory + p.rmw);
	ck_assert_uint_eq(lead, 0);
	/* vCPU 1 asks at 10: its transfer queues until vCPU 0's ends, at
	 * memory + rmw, and takes effect memory / 2 later, when its snoop
	 * reaches vCPU 0. */
	ck_assert_uint_eq(vs_coherence_access_lead(c, 1, buf, VS_ACCESS_RMW,
						   10, &lead),
			  p.memory + p.rmw + x + p.rmw - 10);
	ck_assert_uint_eq(lead, p.memory + p.rmw + p.memory / 2 - 10);
	/* vCPU 0 got it at memory + rmw and keeps it for memory / 2. */
	ck_assert_uint_eq(vs_coherence_access(c, 0, buf, VS_ACCESS_RMW,
					      p.memory + p.rmw + 1),
			  p.hit + p.rmw);
	/* Two loads at 1000, after every transfer: neither waits. */
	ck_assert_uint_eq(vs_coherence_access(c, 2, buf, VS_ACCESS_LOAD, 1000),
			  x);
	ck_assert_uint_eq(vs_coherence_access(c, 3, buf, VS_ACCESS_LOAD, 1000),
			  x);
	/* A store then waits for both; a load after it waits for it. */
	ck_assert_uint_eq(store_done(c, &p, 4, buf, 1000), 2 * x);
	ck_assert_uint_eq(vs_coherence_access(c, 5, buf, VS_ACCESS_LOAD, 1000),
			  3 * x);
	vs_coherence_destroy(c);
}
END_TEST

/* Where a line comes from: the SMT sibling, the socket, the nearest
 * sharer for a load, the farthest copy for a store. */
START_TEST(test_distances)
{
	static char buf[4 * LINE] __attribute__((aligned(LINE)));
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ep-2x10x2", 40);
	char *a = buf, *b = buf + LINE, *s = buf + 2 * LINE;

	ck_assert_uint_ne(p.smt_sibling, p.same_socket);
	vs_coherence_access(c, 0, a, VS_ACCESS_STORE, 0);
	vs_coherence_access(c, 0, b, VS_ACCESS_STORE, 0);
	ck_assert_uint_eq(vs_coherence_access(c, 20, a, VS_ACCESS_LOAD, 1000),
			  p.smt_sibling);
	ck_assert_uint_eq(vs_coherence_access(c, 1, b, VS_ACCESS_LOAD, 1000),
			  p.same_socket);
	ck_assert_int_eq(vs_coherence_stats(c, 20, &st), 0);
	ck_assert_uint_eq(st.by_source[VS_XFER_SMT], 1);
	ck_assert_int_eq(vs_coherence_stats(c, 1, &st), 0);
	ck_assert_uint_eq(st.by_source[VS_XFER_SOCKET], 1);

	/* s shared by CPU 10 (other socket) and CPU 1 (same socket). */
	vs_coherence_access(c, 10, s, VS_ACCESS_STORE, 0);
	vs_coherence_access(c, 1, s, VS_ACCESS_LOAD, 2000);	/* remote */
	ck_assert_uint_eq(vs_coherence_access(c, 0, s, VS_ACCESS_LOAD, 3000),
			  p.same_socket);			/* nearest */
	ck_assert_uint_eq(store_done(c, &p, 0, s, 4000),
			  p.other_socket);			/* farthest */
	ck_assert_int_eq(vs_coherence_stats(c, 0, &st), 0);
	ck_assert_uint_eq(st.invalidations, 2);
	/* And back: the sharers lost their copies. */
	ck_assert_uint_eq(vs_coherence_access(c, 1, s, VS_ACCESS_LOAD, 5000),
			  p.same_socket);
	vs_coherence_destroy(c);
}
END_TEST

START_TEST(test_clear)
{
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "flat", 256);
	unsigned int k;

	/* flat: 8 B/cycle a core, 32 B/cycle a socket (CPUs 0-63 and
	 * 128-191 are socket 0). */
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 0, NULL, 4096, 0), 512);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 1, NULL, 4096, 10), 512);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 2, NULL, 4096, 20), 512);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 128, NULL, 4096, 30), 512);
	/* The fifth at once: 32 / 5 = 6.4 B/cycle. */
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 3, NULL, 4096, 40), 640);
	/* The other socket is not shared. */
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 64, NULL, 4096, 40), 512);
	/* Once the first ones ended, the rate is the core's again. */
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 0, NULL, 4096, 700), 512);
	ck_assert_uint_eq(vs_coherence_charge_copy(c, 5, NULL, NULL, 4096,
						   5000), 1024);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 5, NULL, 0, 9000), 0);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 256, NULL, 4096, 9000), 0);
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &st), 0);
	ck_assert_uint_eq(st.clears, 8);
	ck_assert_uint_eq(st.clear_bytes, 9 * 4096);
	ck_assert_uint_eq(st.clear_cycles, 6 * 512 + 640 + 1024);
	ck_assert_uint_eq(st.cycles, st.clear_cycles);
	/* Eleven at once on one socket: 32 / 11 B/cycle, rounded down in
	 * thousandths (2909), the cycles rounded up. */
	for (k = 10; k < 20; k++)
		vs_coherence_charge_clear(c, k, NULL, 4096, 100000);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 20, NULL, 4096, 100000),
			  (4096 * 1000 + 2908) / 2909);
	vs_coherence_destroy(c);
}
END_TEST

START_TEST(test_clear_cached)
{
	static char pages[8][4096] __attribute__((aligned(4096)));
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c;
	const uint64_t mem = (4096 * 1000 + 3699) / 3700, hit = 4096 / 16;
	static const unsigned int s0[] = { 0, 1, 4, 5 };	/* socket 0 */
	struct vs_cpu_place place;
	int k;

	/* small: 3.7 B/cycle a core to memory, 12 a socket; CPUs 0, 1, 4,
	 * 5 on socket 0, 2, 3, 6, 7 on socket 1.  An LLC of two pages,
	 * cleared at 16 B/cycle. */
	c = make_small(&p, "clear_cached_bytes_per_cycle = 16\n"
		       "llc_kib = 8\n", 8);
	for (k = 0; k < 4; k++) {
		ck_assert_int_eq(vs_vcpu_cpu_place(&p, s0[k], &place), 0);
		ck_assert_uint_eq(place.socket, 0);
		ck_assert_int_eq(vs_vcpu_cpu_place(&p, (unsigned)k + 2 +
						   (k > 1) * 2, &place), 0);
		ck_assert_uint_eq(place.socket, 1);
	}
	/* First clear: memory; again on the socket: cache; the other
	 * socket's first: memory, its second: cache. */
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 0, pages[0], 4096, 0),
			  mem);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 1, pages[0], 4096,
						    5000), hit);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 2, pages[0], 4096,
						    10000), mem);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 3, pages[0], 4096,
						    15000), hit);
	/* One other page cleared between: still cached; two: gone. */
	vs_coherence_charge_clear(c, 3, pages[1], 4096, 20000);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 3, pages[0], 4096,
						    25000), hit);
	vs_coherence_charge_clear(c, 3, pages[2], 4096, 30000);
	vs_coherence_charge_clear(c, 3, pages[3], 4096, 35000);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 3, pages[0], 4096,
						    40000), mem);
	/* No address: memory, and the socket's count does not move (had
	 * it moved, pages[0] would be three pages back, out of the LLC). */
	vs_coherence_charge_clear(c, 3, pages[1], 4096, 42000);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 3, NULL, 4096, 45000),
			  mem);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 3, pages[0], 4096,
						    50000), hit);
	/* A clear of absurd size is charged, not wrapped to nothing. */
	ck_assert_uint_gt(vs_coherence_charge_clear(c, 3, pages[0],
						    UINT64_MAX - 4095, 60000),
			  UINT64_MAX / 2000 / 4);
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &st), 0);
	ck_assert_uint_eq(st.clears, 13);
	ck_assert_uint_eq(st.cached_clears, 4);
	/* Cached clears leave the socket's memory to the others: with
	 * three under way the fourth clear still gets the core's rate. */
	for (k = 0; k < 3; k++)
		ck_assert_uint_eq(vs_coherence_charge_clear(c, s0[k],
							    pages[4 + k], 4096,
							    100000), mem);
	for (k = 0; k < 3; k++)	/* the page cleared last, thrice */
		ck_assert_uint_eq(vs_coherence_charge_clear(c, s0[k],
							    pages[6], 4096,
							    200000), hit);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 5, NULL, 4096, 200000),
			  mem);
	/* Four to memory at once: 12 / 4 = 3 B/cycle for the fourth. */
	for (k = 0; k < 3; k++)
		vs_coherence_charge_clear(c, s0[k], NULL, 4096, 300000);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 5, NULL, 4096, 300000),
			  (4096 * 1000 + 2999) / 3000);
	vs_coherence_destroy(c);
	/* Without the keys every clear goes to memory. */
	c = make(&p, "flat", 4);
	vs_coherence_charge_clear(c, 0, pages[0], 4096, 0);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 0, pages[0], 4096,
						    1000), 512);
	vs_coherence_destroy(c);
}
END_TEST

/*
 * The L3 is an LRU list of frames by the bytes of their lines: a frame
 * touched again and again does not push out the others (a reuse
 * distance counted in bytes cleared would), copies fill it on both
 * sides, a touch of part of a frame brings only those lines, and a
 * write on one socket takes the lines from the others.
 */
START_TEST(test_llc_lru)
{
	static char pages[8][4096] __attribute__((aligned(4096)));
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c;
	const uint64_t mem = (4096 * 1000 + 3699) / 3700, hit = 4096 / 16;
	int k;

	/* small: CPUs 0, 1 on socket 0, 2, 3 on socket 1; an L3 of two
	 * frames a socket, cleared at 16 B/cycle. */
	c = make_small(&p, "clear_cached_bytes_per_cycle = 16\n"
		       "llc_kib = 8\n", 8);
	vs_coherence_charge_clear(c, 0, pages[0], 4096, 0);
	vs_coherence_charge_clear(c, 0, pages[1], 4096, 2000);
	for (k = 0; k < 100; k++)
		ck_assert_uint_eq(vs_coherence_charge_clear(c, 1, pages[1],
							    4096, 4000 +
							    (uint64_t)k * 300),
				  hit);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 0, pages[0], 4096,
						    40000), hit);
	/* A copy reads one frame and writes another: both cached, the two
	 * older frames gone. */
	ck_assert_uint_eq(vs_coherence_charge_copy(c, 0, pages[3], pages[2],
						   4096, 50000),
			  (8192 * 1000 + 3699) / 3700);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 1, pages[2], 4096,
						    60000), hit);
	ck_assert_uint_eq(vs_coherence_charge_copy(c, 1, pages[2], pages[3],
						   4096, 61000), 2 * hit);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 0, pages[1], 4096,
						    62000), mem);
	/* One line touched: one line cached, 63 missing. */
	ck_assert_int_eq(vs_coherence_touch_frame(c, 0, pages[4] + 100, 8, 0),
			 1);
	ck_assert_int_eq(vs_coherence_touch_frame(c, 0, pages[4] + 64, 128,
						  0), 1);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 0, pages[4], 4096,
						    70000),
			  128 / 16 + (3968 * 1000 + 3699) / 3700);
	ck_assert_int_eq(vs_coherence_stats(c, 0, &st), 0);
	/* clears of 0, 1, 1 again; the copy; the touches; the clear of 4 */
	ck_assert_uint_eq(st.llc_misses, 64 + 64 + 128 + 64 + 1 + 1 + 62);
	/* A write on socket 1 takes socket 0's copy; a read does not. */
	ck_assert_int_eq(vs_coherence_touch_frame(c, 2, pages[4], 4096, 0),
			 64);
	ck_assert_int_eq(vs_coherence_touch_frame(c, 3, pages[4], 4096, 0), 0);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 1, pages[4], 4096,
						    80000), hit);
	ck_assert_int_eq(vs_coherence_touch_frame(c, 2, pages[4], 64, 1), 1);
	ck_assert_uint_eq(vs_coherence_charge_clear(c, 1, pages[4], 4096,
						    90000),
			  (64 * 1000 + 3699) / 3700 + 4032 / 16);
	/* Bad arguments. */
	ck_assert_int_eq(vs_coherence_touch_frame(c, 8, pages[4], 64, 0),
			 -EINVAL);
	ck_assert_int_eq(vs_coherence_touch_frame(c, 0, NULL, 64, 0), -EINVAL);
	ck_assert_int_eq(vs_coherence_touch_frame(c, 0, pages[4], 0, 0),
			 -EINVAL);
	ck_assert_int_eq(vs_coherence_touch_frame(NULL, 0, pages[4], 1, 0),
			 -EINVAL);
	ck_assert_int_eq(vs_coherence_touch_frame(c, 0, pages[4],
						  (1ull << 30) + 1, 0),
			 -E2BIG);
	vs_coherence_destroy(c);
}
END_TEST

/*
 * perf's cache-misses: transfers from another socket or memory (not
 * those the prefetcher asked for), and every line of a clear, copy or
 * touch that the socket's L3 lacks.
 */
START_TEST(test_llc_misses)
{
	static char pages[4][4096] __attribute__((aligned(4096)));
	static char buf[LINE] __attribute__((aligned(LINE)));
	struct vs_coherence_stats st, all;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ep-2x10x2", 40);
	int i;

	vs_coherence_access(c, 0, buf, VS_ACCESS_STORE, 0);	/* memory */
	vs_coherence_access(c, 1, buf, VS_ACCESS_LOAD, 1000);	/* socket */
	vs_coherence_access(c, 20, buf, VS_ACCESS_RMW, 2000);	/* SMT */
	vs_coherence_access(c, 10, buf, VS_ACCESS_LOAD, 3000);	/* remote */
	ck_assert_int_eq(vs_coherence_stats(c, 0, &st), 0);
	ck_assert_uint_eq(st.llc_misses, 1);
	ck_assert_int_eq(vs_coherence_stats(c, 1, &st), 0);
	ck_assert_uint_eq(st.llc_misses, 0);
	ck_assert_int_eq(vs_coherence_stats(c, 20, &st), 0);
	ck_assert_uint_eq(st.llc_misses, 0);
	ck_assert_int_eq(vs_coherence_stats(c, 10, &st), 0);
	ck_assert_uint_eq(st.llc_misses, 1);
	/* A page cleared from memory: 64 RFOs that miss; again: none; a
	 * copy of it into a new page: the 64 writes miss. */
	vs_coherence_charge_clear(c, 2, pages[0], 4096, 10000);
	vs_coherence_charge_clear(c, 3, pages[0], 4096, 20000);
	vs_coherence_charge_copy(c, 3, pages[1], pages[0], 4096, 30000);
	ck_assert_int_eq(vs_coherence_stats(c, 2, &st), 0);
	ck_assert_uint_eq(st.llc_misses, 64);
	ck_assert_int_eq(vs_coherence_stats(c, 3, &st), 0);
	ck_assert_uint_eq(st.llc_misses, 64);
	ck_assert_uint_eq(st.cached_clears, 1);
	/* A walk over another core's lines: the prefetched ones are not
	 * demand misses. */
	for (i = 0; i < 64; i++)
		vs_coherence_access(c, 4, pages[2] + i * LINE, VS_ACCESS_STORE,
				    40000);
	for (i = 0; i < 64; i++)
		vs_coherence_access(c, 15, pages[2] + i * LINE, VS_ACCESS_LOAD,
				    100000 + (uint64_t)i * 1000);
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &all), 0);
	all.llc_misses -= 1 + 1 + 64 + 64;
	for (i = 4; i <= 15; i += 11) {	/* the writer, the reader */
		ck_assert_int_eq(vs_coherence_stats(c, (unsigned int)i, &st),
				 0);
		ck_assert_uint_eq(st.transfers, 64);
		ck_assert_uint_gt(st.prefetched, 50);
		ck_assert_uint_eq(st.llc_misses, 64 - st.prefetched);
		all.llc_misses -= st.llc_misses;
	}
	ck_assert_uint_eq(all.llc_misses, 0);
	vs_coherence_destroy(c);
	/* No L3 in the profile: every line of a clear misses. */
	c = make(&p, "flat", 4);
	vs_coherence_charge_clear(c, 0, pages[0], 4096, 0);
	vs_coherence_charge_clear(c, 0, pages[0], 4096, 1000);
	vs_coherence_charge_clear(c, 0, NULL, 100, 2000);
	ck_assert_int_eq(vs_coherence_touch_frame(c, 0, pages[0], 4096, 0), 64);
	ck_assert_int_eq(vs_coherence_stats(c, 0, &st), 0);
	ck_assert_uint_eq(st.llc_misses, 64 + 64 + 2 + 64);
	vs_coherence_destroy(c);
}
END_TEST

/* The cost of @cpu's load of line @i of @page at @t. */
static uint64_t load_at(struct vs_coherence *c, unsigned int cpu,
			char *page, int i, uint64_t t)
{
	return vs_coherence_access(c, cpu, page + i * LINE, VS_ACCESS_LOAD, t);
}

START_TEST(test_prefetch)
{
	static char pg[5][4096] __attribute__((aligned(4096)));
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c;
	const uint64_t t = 100000, u = 10000000;
	int i, k;

	/* small: a transfer within socket 0 (CPUs 0 and 1) costs 50, from
	 * socket 1 (CPU 2) 200, a hit 4, an RMW 20 more.  Two streams. */
	c = make_small(&p, "prefetch_streams = 2\n", 8);
	ck_assert_uint_eq(p.prefetch_streams, 2);
	for (k = 0; k < 5; k++)		/* CPU 1 owns every line */
		for (i = 0; i < 40; i++)
			store_done(c, &p, 1, pg[k] + i * LINE, (uint64_t)i);
	/* CPU 0 walks up page 0: two misses give the direction; the third
	 * line was asked for at the second miss and is there; the fourth,
	 * 10 cycles after its request, is 40 cycles away. */
	ck_assert_uint_eq(load_at(c, 0, pg[0], 0, t), 50);
	ck_assert_uint_eq(load_at(c, 0, pg[0], 1, t + 1000), 50);
	ck_assert_uint_eq(load_at(c, 0, pg[0], 2, t + 2000), 4);
	ck_assert_uint_eq(load_at(c, 0, pg[0], 3, t + 2010), 40);
	/* A line another CPU took since the request is fetched anew: from
	 * the nearest sharer, CPU 1. */
	ck_assert_uint_eq(load_at(c, 2, pg[0], 4, t + 2020), 200);
	ck_assert_uint_eq(load_at(c, 0, pg[0], 4, t + 3000), 50);
	/* Down page 1, by RMWs: the prefetch is for ownership, so CPU 0's
	 * load of the third line takes it, and its store then hits. */
	ck_assert_uint_eq(vs_coherence_access(c, 0, pg[1] + 9 * LINE,
					      VS_ACCESS_RMW, t), 70);
	ck_assert_uint_eq(vs_coherence_access(c, 0, pg[1] + 8 * LINE,
					      VS_ACCESS_RMW, t + 1000), 70);
	ck_assert_uint_eq(load_at(c, 0, pg[1], 7, t + 2000), 4);
	ck_assert_int_eq(vs_coherence_stats(c, 0, &st), 0);
	ck_assert_uint_eq(st.prefetched, 3);
	ck_assert_uint_eq(vs_coherence_access(c, 0, pg[1] + 7 * LINE,
					      VS_ACCESS_STORE, t + 2100), 4);
	ck_assert_uint_eq(vs_coherence_access(c, 1, pg[1] + 7 * LINE,
					      VS_ACCESS_LOAD, t + 3000), 50);
	/* Three pages in turn, two streams: each evicts the oldest, and
	 * nothing is prefetched.  A step of two lines is no stream. */
	for (i = 0; i < 6; i++)
		for (k = 2; k < 5; k++)
			ck_assert_uint_eq(load_at(c, 4, pg[k], i,
						  t + 10000 * (uint64_t)i +
						  1000 * (uint64_t)k), 50);
	for (i = 6; i < 12; i += 2)
		ck_assert_uint_eq(load_at(c, 4, pg[2], i, t + 100000 * i), 50);
	ck_assert_int_eq(vs_coherence_stats(c, 4, &st), 0);
	ck_assert_uint_eq(st.prefetched, 0);
	/* CPU 6 up page 3, a load then an RMW a line (an upgrade): the
	 * third line's load takes it for ownership, so the RMW hits. */
	for (i = 20; i < 22; i++) {
		uint64_t at = u + 1000 * (uint64_t)i;

		ck_assert_uint_eq(load_at(c, 6, pg[3], i, at), 200);
		ck_assert_uint_eq(vs_coherence_access(c, 6, pg[3] + i * LINE,
						      VS_ACCESS_RMW, at + 500),
				  220);
	}
	ck_assert_uint_eq(load_at(c, 6, pg[3], 22, u + 23000), 4);
	ck_assert_uint_eq(vs_coherence_access(c, 6, pg[3] + 22 * LINE,
					      VS_ACCESS_RMW, u + 23500), 24);
	/* ... and so on: a line taken for ownership by a prefetch counts
	 * as a miss for ownership, though its RMW then hit. */
	ck_assert_uint_eq(load_at(c, 6, pg[3], 23, u + 24000), 4);
	ck_assert_uint_eq(vs_coherence_access(c, 6, pg[3] + 23 * LINE,
					      VS_ACCESS_RMW, u + 24500), 24);
	/* Least recently used out: CPU 7 walks pages 2 and 3, goes back
	 * to 2, then misses in 4: page 3's stream goes, page 2's stays. */
	load_at(c, 7, pg[2], 30, u);
	load_at(c, 7, pg[3], 30, u + 100);
	load_at(c, 7, pg[2], 31, u + 200);
	load_at(c, 7, pg[4], 20, u + 300);
	ck_assert_uint_eq(load_at(c, 7, pg[2], 32, u + 5000), 4);
	load_at(c, 7, pg[3], 31, u + 6000);
	ck_assert_uint_eq(load_at(c, 7, pg[3], 32, u + 9000), 200);
	/* The owner writes the line after the request: no prefetch. */
	load_at(c, 0, pg[4], 30, u);
	load_at(c, 0, pg[4], 31, u + 1000);
	ck_assert_uint_eq(vs_coherence_access(c, 1, pg[4] + 32 * LINE,
					      VS_ACCESS_STORE, u + 1500), 4);
	ck_assert_uint_eq(load_at(c, 0, pg[4], 32, u + 3000), 50);
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &st), 0);
	ck_assert_uint_ge(st.prefetched, 6);
	vs_coherence_destroy(c);
	/* More streams than a core can have, or a distance out of range:
	 * refused. */
	p.prefetch_streams = VS_PREFETCH_STREAMS_MAX + 1;
	ck_assert_int_eq(vs_coherence_create(&c, &p, 8), -EINVAL);
	p.prefetch_streams = 2;
	p.prefetch_distance = 0;
	ck_assert_int_eq(vs_coherence_create(&c, &p, 8), -EINVAL);
	p.prefetch_distance = VS_PREFETCH_DISTANCE_MAX + 1;
	ck_assert_int_eq(vs_coherence_create(&c, &p, 8), -EINVAL);
	/* Without the key, no prefetcher: every miss pays. */
	c = make(&p, "flat", 4);
	for (i = 0; i < 4; i++)
		store_done(c, &p, 1, pg[0] + i * LINE, (uint64_t)i);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(load_at(c, 0, pg[0], i, t + 1000 * i),
				  p.same_socket);
	vs_coherence_destroy(c);
}
END_TEST

/*
 * CPU 0 walks up a page of CPU 1's lines, a miss every @step cycles from
 * @t, and puts the cost of each of the first @n misses in @cost.
 */
static void walk_costs(struct vs_coherence *c,
		       const struct vs_vcpu_profile *p, char *page, uint64_t t,
		       uint64_t step, int n, uint64_t *cost)
{
	int i;

	ck_assert_int_le(n, 64);
	for (i = 0; i < 64; i++)
		store_done(c, p, 1, page + i * LINE, (uint64_t)i);
	for (i = 0; i < n; i++)
		cost[i] = load_at(c, 0, page, i, t + step * (uint64_t)i);
}

START_TEST(test_prefetch_distance)
{
	static char pg[4][4096] __attribute__((aligned(4096)));
	/* small: a transfer within socket 0 costs 50, a hit 4.  Misses
	 * 10 cycles apart: with distance 4 miss m's line was asked for by
	 * miss max(m - 4, m / 2), 10 * (m - that) cycles earlier; with 1,
	 * by miss m - 1. */
	static const uint64_t far[12] = { 50, 50, 40, 30, 30, 20, 20, 10, 10,
					  10, 10, 10 };
	static const uint64_t near[12] = { 50, 50, 40, 40, 40, 40, 40, 40, 40,
					   40, 40, 40 };
	struct vs_vcpu_profile p;
	struct vs_coherence *c;
	uint64_t cost[64], t = 100000;
	int i;

	c = make_small(&p, "prefetch_streams = 2\n", 2);
	ck_assert_uint_eq(p.prefetch_distance, 1);	/* the default */
	walk_costs(c, &p, pg[0], t, 10, 12, cost);
	for (i = 0; i < 12; i++)
		ck_assert_uint_eq(cost[i], near[i]);
	vs_coherence_destroy(c);
	c = make_small(&p, "prefetch_streams = 2\nprefetch_distance = 4\n",
		       2);
	ck_assert_uint_eq(p.prefetch_distance, 4);
	walk_costs(c, &p, pg[1], t, 10, 12, cost);
	for (i = 0; i < 12; i++)
		ck_assert_uint_eq(cost[i], far[i]);
	/* CPU 1 writes line 12 of page 1 at 95, after misses 8 (at 80)
	 * and 9 (90) asked for it: miss 10 (100) asked again, and the line
	 * comes at 150. */
	ck_assert_uint_eq(vs_coherence_access(c, 1, pg[1] + 12 * LINE,
					      VS_ACCESS_STORE, t + 95), 4);
	ck_assert_uint_eq(load_at(c, 0, pg[1], 12, t + 120), 30);
	/* Far enough apart, each line is there: a hit. */
	walk_costs(c, &p, pg[2], 2 * t, 20, 12, cost);
	ck_assert_uint_eq(cost[11], 4);
	vs_coherence_destroy(c);
	/* A whole page at distance 20, a miss every 2 cycles: the walk
	 * settles at 50 - 20 * 2 = 10 a line; the run's times wrap their
	 * ring of 32. */
	c = make_small(&p, "prefetch_streams = 2\nprefetch_distance = 20\n",
		       2);
	walk_costs(c, &p, pg[3], t, 2, 64, cost);
	for (i = 41; i < 64; i++)
		ck_assert_uint_eq(cost[i], 10);
	vs_coherence_destroy(c);
}
END_TEST

START_TEST(test_names_top)
{
	static char buf[8 * LINE] __attribute__((aligned(LINE)));
	struct vs_coherence_hot hot[8];
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "flat", 4);
	uint64_t t = 0;
	int i;

	ck_assert_int_eq(vs_coherence_name(c, buf, LINE, "mmap_lock"), 0);
	ck_assert_int_eq(vs_coherence_name(c, buf + 2 * LINE, 2 * LINE,
					   "pool"), 0);
	/* Unnamed line 5 first, 3 transfers; "pool"+64 2 transfers, then
	 * line 6 (unnamed) 2 transfers; mmap_lock 10; line 7 never used. */
	for (i = 0; i < 3; i++)
		t += store_done(c, &p, (unsigned int)i % 2, buf + 5 * LINE, t) +
		     p.fence;
	for (i = 0; i < 2; i++)
		t += vs_coherence_access(c, i % 2, buf + 6 * LINE,
					 VS_ACCESS_RMW, t);
	for (i = 0; i < 2; i++)
		t += store_done(c, &p, (unsigned int)i % 2, buf + 3 * LINE, t) +
		     p.fence;
	for (i = 0; i < 10; i++)
		t += vs_coherence_access(c, i % 2, buf, VS_ACCESS_RMW, t);
	ck_assert_int_eq(vs_coherence_top(c, hot, 8), 4);
	ck_assert_str_eq(hot[0].name, "mmap_lock");
	ck_assert_uint_eq(hot[0].transfers, 10);
	ck_assert_uint_eq(hot[0].rmws, 10);
	ck_assert_uint_eq(hot[0].first_touch, 4);
	ck_assert_ptr_null(hot[1].name);
	ck_assert_uint_eq(hot[1].transfers, 3);
	ck_assert_uint_eq(hot[1].first_touch, 1);
	ck_assert_str_eq(hot[2].name, "pool");	/* named first in a tie */
	ck_assert_uint_eq(hot[2].offset, LINE);
	ck_assert_ptr_null(hot[3].name);
	ck_assert_uint_eq(hot[3].first_touch, 2);
	ck_assert_ptr_eq(hot[3].addr, buf + 6 * LINE);
	ck_assert_int_eq(vs_coherence_top(c, hot, 1), 1);
	ck_assert_str_eq(hot[0].name, "mmap_lock");
	/* Renaming, and the errors. */
	ck_assert_int_eq(vs_coherence_name(c, buf + 6 * LINE, 1, "ptl"), 0);
	ck_assert_int_eq(vs_coherence_top(c, hot, 8), 4);
	ck_assert_str_eq(hot[2].name, "pool");
	ck_assert_str_eq(hot[3].name, "ptl");
	ck_assert_int_eq(vs_coherence_name(c, buf, 0, "x"), -EINVAL);
	ck_assert_int_eq(vs_coherence_name(c, buf, 1, ""), -EINVAL);
	ck_assert_int_eq(vs_coherence_name(c, buf, (64u << 20) + 1, "x"),
			 -E2BIG);
	ck_assert_int_eq(vs_coherence_top(c, NULL, 1), -EINVAL);
	/* After a reset the state stays: mmap_lock is a hit for vCPU 1. */
	vs_coherence_reset_stats(c);
	ck_assert_int_eq(vs_coherence_top(c, hot, 1), 1);
	ck_assert_uint_eq(hot[0].transfers, 0);
	ck_assert_uint_eq(vs_coherence_access(c, 1, buf, VS_ACCESS_LOAD, t),
			  p.hit);
	vs_coherence_destroy(c);
}
END_TEST

/* Per-name totals: exact sums over two named ranges and an unnamed line,
 * most cycles first; a tie goes by name, the unnamed lines last. */
START_TEST(test_by_name)
{
	static char buf[8 * LINE] __attribute__((aligned(LINE)));
	struct vs_coherence_named out[4];
	struct vs_coherence_stats all;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "flat", 4);
	uint64_t lat = p.same_socket, sum = 0, t;

	/* flat: every transfer costs the same, whatever the distance. */
	ck_assert_uint_eq(p.smt_sibling, lat);
	ck_assert_uint_eq(p.other_socket, lat);
	ck_assert_int_eq(vs_coherence_name(c, buf, LINE, "lock"), 0);
	ck_assert_int_eq(vs_coherence_name(c, buf + 2 * LINE, 2 * LINE,
					   "pool"), 0);
	ck_assert_int_eq(vs_coherence_name(c, buf + 7 * LINE, LINE, "idle"),
			 0);
	/* lock: a store from memory (its fence's wait for the line is the
	 * lock's), an RMW queued behind it, a hit. */
	t = store_done(c, &p, 0, buf, 0);
	ck_assert_uint_eq(t, p.memory);
	ck_assert_uint_eq(vs_coherence_access(c, 1, buf + 8, VS_ACCESS_RMW, 0),
			  p.memory + lat + p.rmw);
	t += vs_coherence_access(c, 1, buf, VS_ACCESS_LOAD, 1000);
	/* pool: a load from memory, a store that hits, another line's load;
	 * the unnamed line: an RMW from memory; a fence counts nowhere. */
	t += vs_coherence_access(c, 2, buf + 2 * LINE, VS_ACCESS_LOAD, t);
	t += vs_coherence_access(c, 2, buf + 2 * LINE, VS_ACCESS_STORE, t);
	t += vs_coherence_access(c, 3, buf + 3 * LINE + 5, VS_ACCESS_LOAD, t);
	t += vs_coherence_access(c, 0, buf + 5 * LINE, VS_ACCESS_RMW, t);
	t += vs_coherence_access(c, 0, NULL, VS_ACCESS_FENCE, t);
	ck_assert_int_eq(vs_coherence_by_name(c, out, 4), 3);
	ck_assert_str_eq(out[0].name, "lock");
	ck_assert_uint_eq(out[0].cycles, 2 * p.memory + lat + p.rmw + p.hit);
	ck_assert_uint_eq(out[0].wait_cycles, p.memory);
	ck_assert_uint_eq(out[0].transfers, 2);
	ck_assert_uint_eq(out[0].rmws, 1);
	ck_assert_uint_eq(out[0].accesses, 3);
	ck_assert_str_eq(out[1].name, "pool");
	ck_assert_uint_eq(out[1].cycles, 2 * p.memory + p.hit);
	ck_assert_uint_eq(out[1].wait_cycles, 0);
	ck_assert_uint_eq(out[1].transfers, 2);
	ck_assert_uint_eq(out[1].rmws, 0);
	ck_assert_uint_eq(out[1].accesses, 3);
	ck_assert_ptr_null(out[2].name);
	ck_assert_uint_eq(out[2].cycles, p.memory + p.rmw);
	ck_assert_uint_eq(out[2].transfers, 1);
	ck_assert_uint_eq(out[2].rmws, 1);
	ck_assert_uint_eq(out[2].accesses, 1);
	/* The names' cycles are every access's but the two fences'. */
	sum = out[0].cycles + out[1].cycles + out[2].cycles;
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &all), 0);
	ck_assert_uint_eq(sum + 2 * p.fence, all.cycles);
	ck_assert_uint_eq(all.drain_cycles, p.memory - p.hit);
	/* A short array keeps the first. */
	ck_assert_int_eq(vs_coherence_by_name(c, out, 1), 1);
	ck_assert_str_eq(out[0].name, "lock");
	ck_assert_int_eq(vs_coherence_by_name(c, NULL, 0), 0);
	ck_assert_int_eq(vs_coherence_by_name(c, NULL, 1), -EINVAL);
	ck_assert_int_eq(vs_coherence_by_name(NULL, out, 1), -EINVAL);
	/* A reset zeroes them. */
	vs_coherence_reset_stats(c);
	ck_assert_int_eq(vs_coherence_by_name(c, out, 4), 0);
	/* Ties: by name, then the unnamed lines. */
	ck_assert_int_eq(vs_coherence_name(c, buf + 6 * LINE, LINE, "b"), 0);
	ck_assert_int_eq(vs_coherence_name(c, buf + 4 * LINE, LINE, "a"), 0);
	vs_coherence_access(c, 0, buf + 1 * LINE, VS_ACCESS_LOAD, t);
	vs_coherence_access(c, 0, buf + 6 * LINE, VS_ACCESS_LOAD, t);
	vs_coherence_access(c, 0, buf + 4 * LINE, VS_ACCESS_LOAD, t);
	ck_assert_int_eq(vs_coherence_by_name(c, out, 4), 3);
	ck_assert_str_eq(out[0].name, "a");
	ck_assert_str_eq(out[1].name, "b");
	ck_assert_ptr_null(out[2].name);
	ck_assert_uint_eq(out[0].cycles, out[2].cycles);
	vs_coherence_destroy(c);
}
END_TEST

/* xorshift64*: the workload's own PRNG, so the run is reproducible. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

#define DET_LINES 6000

/* A random workload over DET_LINES lines of @base (enough to grow the
 * table several times), folded into one checksum with every figure.
 * The range named "hot" starts @skew bytes into line 6 and ends with
 * line 7, the hottest: the offsets must not depend on @skew. */
static uint64_t workload(const char *base, unsigned int skew)
{
	struct vs_coherence_stats st;
	struct vs_coherence_hot hot[16];
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ex-4x15x2", 120);
	uint64_t seed = 42, sum = 0, clock[120] = { 0 };
	int i, n;

	ck_assert_int_eq(vs_coherence_name(c, base + 6 * LINE + skew,
					   2 * LINE - skew, "hot"), 0);
	for (i = 0; i < 200000; i++) {
		uint64_t r = next(&seed);
		unsigned int cpu = (unsigned int)(r % 120);
		uint64_t line = r >> 8 & 1 ? 7 : r >> 9 & 7 ? r >> 16 & 7 :
				(r >> 16) % DET_LINES;
		enum vs_access kind = (enum vs_access)(r >> 40 & 3);
		uint64_t cost;

		if ((r >> 42 & 63) == 0)
			cost = vs_coherence_charge_clear(c, cpu, NULL, 4096,
							 clock[cpu]);
		else
			cost = vs_coherence_access(c, cpu, base + line * LINE,
						   kind, clock[cpu]);
		clock[cpu] += cost;
		sum = sum * 31 + cost;
	}
	ck_assert_int_eq(vs_coherence_stats(c, VS_COHERENCE_ALL, &st), 0);
	sum = sum * 31 + st.cycles + st.transfers * 7 + st.wait_cycles * 11 +
	      st.invalidations * 13 + st.by_source[VS_XFER_REMOTE];
	n = vs_coherence_top(c, hot, 16);
	ck_assert_int_eq(n, 16);
	for (i = 0; i < n; i++)
		sum = sum * 31 + hot[i].transfers + hot[i].first_touch * 3 +
		      (uint64_t)(hot[i].name != NULL) + hot[i].offset * 5;
	ck_assert_str_eq(hot[0].name, "hot");
	ck_assert_uint_eq(hot[0].offset, LINE);
	vs_coherence_destroy(c);
	return sum;
}

/* The same calls on lines elsewhere in memory, at another alignment in
 * the hash table, a name starting elsewhere in its first line: the same
 * figures, the same offsets.  The lines keep their offsets in their 4
 * KiB pages (the prefetcher's streams end at page boundaries). */
START_TEST(test_deterministic)
{
	size_t pg = 4096, size = ((DET_LINES + 64) * LINE + pg - 1) / pg * pg;
	char *a = aligned_alloc(pg, size), *b = aligned_alloc(pg, size * 3);
	uint64_t x, y, z;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	x = workload(a, 0);
	y = workload(b + 17 * pg, 24);
	z = workload(b + size + 11 * pg, 63);
	ck_assert_uint_eq(x, y);
	ck_assert_uint_eq(x, z);
	free(a);
	free(b);
}
END_TEST

#define NEU_LINES 3000
#define NEU_VCPUS 40

/* What a run of neutral_run() charged: every cost, and the counters of
 * every vCPU and of every line. */
struct neutral_result {
	uint64_t sum;
	struct vs_coherence_stats st[NEU_VCPUS];
	int nr_hot;
	struct vs_coherence_hot hot[NEU_LINES];
};

static int by_first_touch(const void *a, const void *b)
{
	const struct vs_coherence_hot *x = a, *y = b;

	return x->first_touch < y->first_touch ? -1 :
	       x->first_touch > y->first_touch;
}

/* A random sequence of accesses by NEU_VCPUS vCPUs to the lines of @base.
 * With @named, names between the accesses: the whole buffer first (the
 * table grows sooner), then ranges of the accessed lines that start and
 * end anywhere, renaming lines already named, touched or not. */
static void neutral_run(char *base, int named, struct neutral_result *res)
{
	static const char *const names[] = { "mmap_lock", "PTEs", "a VMA" };
	struct vs_vcpu_profile p;
	struct vs_coherence *c = make(&p, "ivb-ep-2x10x2", NEU_VCPUS);
	uint64_t seed = 99, clock[NEU_VCPUS] = { 0 };
	unsigned int i;

	memset(res, 0, sizeof(*res));
	if (named)
		ck_assert_int_eq(vs_coherence_name(c, base, NEU_LINES * LINE,
						   "the buffer"), 0);
	for (i = 0; i < 100000; i++) {
		uint64_t r = next(&seed);
		unsigned int cpu = (unsigned int)(r % NEU_VCPUS);
		uint64_t line = r >> 8 & 3 ? r >> 16 & 15 :
				(r >> 16) % (NEU_LINES - 3);
		uint64_t cost;

		if (named && (r >> 50 & 15) == 0)
			ck_assert_int_eq(vs_coherence_name(c,
				base + line * LINE + (r >> 40 & 63),
				1 + (r >> 32 & 127), names[r % 3]), 0);
		cost = vs_coherence_access(c, cpu, base + line * LINE +
					   (r >> 56), (enum vs_access)(r >> 46 & 3),
					   clock[cpu]);
		clock[cpu] += cost;
		res->sum = res->sum * 31 + cost;
	}
	for (i = 0; i < NEU_VCPUS; i++)
		ck_assert_int_eq(vs_coherence_stats(c, i, &res->st[i]), 0);
	res->nr_hot = vs_coherence_top(c, res->hot, NEU_LINES);
	qsort(res->hot, (size_t)res->nr_hot, sizeof(res->hot[0]),
	      by_first_touch);
	vs_coherence_destroy(c);
}

/* Names over the accessed lines change no cost and no counter, of a vCPU
 * or of a line: a named line that was never accessed starts as a line
 * never seen does. */
START_TEST(test_names_neutral)
{
	struct neutral_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	char *buf = aligned_alloc(LINE, NEU_LINES * LINE);
	int i;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(buf);
	neutral_run(buf, 0, a);
	neutral_run(buf, 1, b);
	ck_assert_uint_eq(a->sum, b->sum);
	ck_assert_int_eq(memcmp(a->st, b->st, sizeof(a->st)), 0);
	ck_assert_int_gt(a->nr_hot, NEU_LINES / 2);
	ck_assert_int_eq(a->nr_hot, b->nr_hot);
	for (i = 0; i < a->nr_hot; i++) {
		ck_assert_ptr_null(a->hot[i].name);
		ck_assert_ptr_nonnull(b->hot[i].name);
		ck_assert_uint_eq(a->hot[i].first_touch, b->hot[i].first_touch);
		ck_assert_uint_eq(a->hot[i].transfers, b->hot[i].transfers);
		ck_assert_uint_eq(a->hot[i].rmws, b->hot[i].rmws);
		ck_assert_uint_eq(a->hot[i].wait_cycles, b->hot[i].wait_cycles);
	}
	free(buf);
	free(a);
	free(b);
}
END_TEST

#define HEAP_OBJS 2000

/*
 * Objects malloc'd one after another, several to a line, accessed by 8
 * vCPUs at random; with @named each is named as it is allocated, and a
 * megabyte besides (the directory grows).  The checksum of the costs, 0
 * on an error (this runs in a child, where ck_assert cannot report).
 */
static uint64_t heap_run(int named)
{
	static char big[1 << 20];
	struct vs_vcpu_profile p;
	struct vs_coherence *c = NULL;
	char *obj[HEAP_OBJS], name[32];
	uint64_t seed = 7, sum = 1, clock[8] = { 0 };
	int i;

	if (vs_vcpu_profile_load(&p, "ivb-ep-2x10x2", NULL, 0) ||
	    vs_coherence_create(&c, &p, 8))
		return 0;
	for (i = 0; i < HEAP_OBJS; i++) {
		obj[i] = malloc(24);
		if (!obj[i])
			return 0;
		snprintf(name, sizeof(name), "object %d", i % 100);
		if (named && (vs_coherence_name(c, obj[i], 24, name) ||
			      (i == HEAP_OBJS / 2 &&
			       vs_coherence_name(c, big, sizeof(big), "big"))))
			return 0;
	}
	for (i = 0; i < 50000; i++) {
		uint64_t r = next(&seed);
		unsigned int cpu = (unsigned int)(r % 8);
		uint64_t cost = vs_coherence_access(c, cpu,
			obj[(r >> 8) % HEAP_OBJS],
			(enum vs_access)((r >> 40) % 3), clock[cpu]);

		clock[cpu] += cost;
		sum = sum * 31 + cost;
	}
	vs_coherence_destroy(c);
	return sum ? sum : 1;
}

/* heap_run(@named) in a child forked now: its checksum. */
static uint64_t heap_run_child(int named)
{
	uint64_t sum = 0;
	int fd[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sum = heap_run(named);
		_exit(write(fd[1], &sum, sizeof(sum)) == sizeof(sum) ? 0 : 1);
	}
	close(fd[1]);
	ck_assert_int_eq(read(fd[0], &sum, sizeof(sum)), sizeof(sum));
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_uint_ne(sum, 0);
	return sum;
}

/*
 * The figures of the simulated code follow from where malloc puts its
 * objects (which share a line).  Naming allocates nothing from the heap,
 * so the same allocations with and without names give the same figures.
 * The two runs are children forked from one state of the heap.
 */
START_TEST(test_names_off_heap)
{
	uint64_t plain = heap_run_child(0);

	ck_assert_uint_eq(heap_run_child(1), plain);
	ck_assert_uint_eq(heap_run_child(0), plain);
}
END_TEST

START_TEST(test_bad_args)
{
	struct vs_coherence_stats st;
	struct vs_vcpu_profile p;
	struct vs_coherence *c = NULL;
	static char buf[LINE];

	load(&p, "ivb-ep-2x10x2");
	ck_assert_int_eq(vs_coherence_create(&c, &p, 0), -EINVAL);
	ck_assert_int_eq(vs_coherence_create(&c, &p, 41), -EINVAL);
	ck_assert_int_eq(vs_coherence_create(NULL, &p, 2), -EINVAL);
	ck_assert_int_eq(vs_coherence_create(&c, NULL, 2), -EINVAL);
	ck_assert_int_eq(vs_coherence_create(&c, &p, 2), 0);
	ck_assert_str_eq(vs_coherence_profile(c)->name, "ivb-ep-2x10x2");
	ck_assert_uint_eq(vs_coherence_access(c, 2, buf, VS_ACCESS_LOAD, 0), 0);
	ck_assert_uint_eq(vs_coherence_access(c, 0, buf, (enum vs_access)7, 0),
			  0);
	ck_assert_uint_eq(vs_coherence_access(NULL, 0, buf, VS_ACCESS_LOAD, 0),
			  0);
	ck_assert_int_eq(vs_coherence_stats(c, 2, &st), -EINVAL);
	ck_assert_int_eq(vs_coherence_stats(c, 0, NULL), -EINVAL);
	ck_assert_int_eq(vs_coherence_name(NULL, buf, 1, "x"), -EINVAL);
	vs_coherence_destroy(c);
	vs_coherence_destroy(NULL);
}
END_TEST

Suite *vcpu_cost_suite(void)
{
	Suite *s = suite_create("vcpu_cost");

	vs_test_add(vs_test_tcase(s, "profile"), test_parse, test_parse_errors,
		    test_parse_decimals, test_load, test_numbering);
	vs_test_add(vs_test_tcase(s, "coherence"), test_ping_pong,
		    test_rmw_ping_pong, test_private_line, test_rmw_serialize,
		    test_rmw_handoff,
		    test_loads_share_and_hold, test_load_waits_for_owner_hold,
		    test_distances, test_store_buffer, test_clear,
		    test_clear_cached, test_llc_lru, test_llc_misses,
		    test_prefetch, test_prefetch_distance,
		    test_names_top, test_by_name,
		    test_deterministic, test_names_neutral,
		    test_names_off_heap, test_bad_args);
	return s;
}
