/* SPDX-License-Identifier: MIT */
/*
 * vcpu/replay.c - a schedule as text: the decisions that
 * vs_machine_decisions() recorded, in one shell-safe word that a
 * failing test prints and a later run replays (vs_vcpu_sched_replay).
 *
 *	vN.PAYLOAD.CHECK
 *
 * PAYLOAD is base64url without padding (A-Z a-z 0-9 - _) of, per
 * decision, three unsigned LEB128 varints: (anchor + 1) * 2^N + kind,
 * with the host's anchor as 0 and N the version: 1 when every kind is
 * a RUN kind, 2 when a memory model's choices are among them; the anchor's count less that of the
 * same anchor's previous decision (a context's counts only grow); the
 * context chosen.  CHECK is 8 hex digits the caller chooses, the low
 * half of the run's event hash, so that a schedule replayed against
 * other code is refused instead of quietly running another
 * interleaving.  A typical failing schedule of a few decisions is
 * under 30 characters.
 *
 * Locking: none; the functions touch only their arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmsim/vcpu.h>

#include "internal.h"

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* ---- bytes ----------------------------------------------------------- */

struct bytes {
	unsigned char *p;
	size_t n, cap;
};

static int put_varint(struct bytes *b, uint64_t v)
{
	do {
		if (b->n == b->cap)
			return -ENOSPC;
		b->p[b->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return 0;
}

/* One varint, in its one shortest form: no trailing zero group, no
 * bits past 64. */
static int get_varint(const unsigned char *p, size_t n, size_t *at,
		      uint64_t *v)
{
	unsigned int shift = 0, b;

	*v = 0;
	for (;;) {
		if (*at == n)
			return -EILSEQ;
		b = p[(*at)++];
		if ((shift == 63 && (b & 0x7e)) || (shift && b == 0))
			return -EILSEQ;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
		if (shift > 63)
			return -EILSEQ;
	}
}

/* ---- encode ---------------------------------------------------------- */

/* "vN." PAYLOAD "." CHECK into @buf, N = @version. */
static int base64(const struct bytes *b, unsigned int version,
		  uint32_t check, char *buf, size_t len)
{
	const unsigned char *raw = b->p;
	size_t i, o;
	uint32_t acc = 0;
	int bits = 0;

	if (len < 3)
		return -ENOSPC;
	memcpy(buf, version == 1 ? "v1." : "v2.", 3);
	o = 3;
	for (i = 0; i < b->n || bits > 0; ) {
		if (bits < 6 && i < b->n) {
			acc = acc << 8 | raw[i++];
			bits += 8;
		}
		if (o + 1 >= len)
			return -ENOSPC;
		if (bits >= 6) {
			buf[o++] = b64[(acc >> (bits - 6)) & 63];
			bits -= 6;
		} else {	/* the last bits, padded with zeros */
			buf[o++] = b64[(acc << (6 - bits)) & 63];
			bits = 0;
		}
	}
	if (o + 10 > len)
		return -ENOSPC;
	snprintf(buf + o, len - o, ".%08x", (unsigned int)check);
	return 0;
}


int vs_vcpu_replay_encode(const struct vs_vcpu_decision *dec, size_t nr,
			  uint32_t check, char *buf, size_t len)
{
	uint32_t last[VS__VCPU_CONTEXTS + 1] = { 0 };
	struct bytes b = { NULL, 0, VS_VCPU_REPLAY_MAX };
	unsigned int a, version = 1;
	int err = 0;
	size_t i;

	if ((nr && !dec) || !buf || len == 0)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (dec[i].kind > VS_VCPU_CHOOSE_RUN_AFTER_STOP)
			version = 2;
	b.p = malloc(b.cap);	/* not on the stack: a vCPU's may be small */
	if (!b.p)
		return -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		a = dec[i].ctx == VS_VCPU_HOST ? 0 : dec[i].ctx + 1u;
		if (a > VS__VCPU_CONTEXTS || dec[i].kind > VS_VCPU_CHOOSE_FLUSH ||
		    dec[i].run >= VS__VCPU_CONTEXTS || dec[i].at < last[a]) {
			err = -EINVAL;
			break;
		}
		err = put_varint(&b, ((uint64_t)a << version) + dec[i].kind);
		if (!err)
			err = put_varint(&b, dec[i].at - last[a]);
		if (!err)
			err = put_varint(&b, dec[i].run);
		last[a] = dec[i].at;
	}
	if (!err)
		err = base64(&b, version, check, buf, len);
	free(b.p);
	return err;
}

/* ---- decode ---------------------------------------------------------- */

static int b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

/* The payload between "vN." and the check, as bytes. */
static int unbase64(const char *s, size_t n, struct bytes *b)
{
	uint32_t acc = 0;
	int bits = 0, v;
	size_t i;

	for (i = 0; i < n; i++) {
		v = b64_value(s[i]);
		if (v < 0)
			return -EILSEQ;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			if (b->n == b->cap)
				return -E2BIG;
			b->p[b->n++] = (unsigned char)(acc >> (bits - 8));
			bits -= 8;
		}
	}
	/* Padding is fewer than 6 bits, all zero; with shortest varints,
	 * each list has one text. */
	return bits >= 6 || (acc & ((1u << bits) - 1)) ? -EILSEQ : 0;
}

static int parse_check(const char *s, uint32_t *check)
{
	unsigned int v = 0;
	int i;

	if (strlen(s) != 8)
		return -EILSEQ;
	for (i = 0; i < 8; i++) {
		if (!strchr("0123456789abcdef", s[i]))
			return -EILSEQ;
		v = v << 4 | (unsigned int)(s[i] <= '9' ? s[i] - '0' :
					    s[i] - 'a' + 10);
	}
	*check = v;
	return 0;
}

/* The decisions in the payload's bytes, of format @version. */
static int decisions(const struct bytes *b, unsigned int version,
		     struct vs_vcpu_decision *dec, size_t max, size_t *nr)
{
	uint64_t a, kind;
	uint32_t last[VS__VCPU_CONTEXTS + 1] = { 0 };
	uint64_t head, at, run;
	size_t pos = 0, n = 0;
	int err = 0;

	while (!err && pos < b->n) {
		err = get_varint(b->p, b->n, &pos, &head);
		if (!err)
			err = get_varint(b->p, b->n, &pos, &at);
		if (!err)
			err = get_varint(b->p, b->n, &pos, &run);
		if (err)
			return err;
		a = head >> version;
		kind = head & ((1u << version) - 1);
		if (a > VS__VCPU_CONTEXTS || at > UINT32_MAX - last[a] ||
		    run >= VS__VCPU_CONTEXTS || kind > VS_VCPU_CHOOSE_FLUSH)
			return -EILSEQ;
		if (n == max)
			return -E2BIG;
		dec[n].ctx = a ? (uint16_t)(a - 1) : VS_VCPU_HOST;
		dec[n].kind = (uint8_t)kind;
		dec[n].at = last[a] += (uint32_t)at;
		dec[n].run = (uint16_t)run;
		n++;
	}
	*nr = n;
	return 0;
}

int vs_vcpu_replay_decode(const char *s, struct vs_vcpu_decision *dec,
			  size_t max, size_t *nr, uint32_t *check)
{
	struct bytes b = { NULL, 0, VS_VCPU_REPLAY_MAX };
	unsigned int version;
	const char *dot;
	int err;

	if (!s || (max && !dec) || !nr || !check)
		return -EINVAL;
	if (s[0] != 'v' || (s[1] != '1' && s[1] != '2') || s[2] != '.')
		return -EILSEQ;
	version = (unsigned int)(s[1] - '0');
	s += 3;
	dot = strchr(s, '.');
	if (!dot)
		return -EILSEQ;
	b.p = malloc(b.cap);	/* not on the stack: a vCPU's may be small */
	if (!b.p)
		return -ENOMEM;
	err = unbase64(s, (size_t)(dot - s), &b);
	if (!err)
		err = parse_check(dot + 1, check);
	if (!err)
		err = decisions(&b, version, dec, max, nr);
	free(b.p);
	return err;
}
