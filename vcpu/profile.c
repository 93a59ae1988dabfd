/* SPDX-License-Identifier: MIT */
/*
 * Machine profiles (vmsim/vcpu_profile.h): the text format's parser, the
 * lookup of a profile by name, and Linux's CPU numbering.
 */
#include <vmsim/vcpu_profile.h>

#include <dlfcn.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef VS_PROFILE_DIR
#define VS_PROFILE_DIR "/usr/local/share/vmsim/profiles"
#endif
#ifndef VS_PROFILE_SRCDIR
#define VS_PROFILE_SRCDIR ""
#endif

#define PROFILE_FILE_MAX (64 * 1024)
#define CYCLES_MAX 1000000000u	/* a larger cost is surely a typo */
#define BW_MAX_MILLI 1000000000u	/* a million bytes per cycle */

enum key_type { T_NAME, T_GHZ, T_COUNT, T_CYCLES, T_KIB, T_BW, T_NUMBERING,
		T_STREAMS, T_DISTANCE, T_INTERVAL };

struct key {
	const char *name;
	enum key_type type;
	size_t offset;
	int optional;
};

#define KEY(n, t, field) { n, t, offsetof(struct vs_vcpu_profile, field), 0 }
#define OPT_KEY(n, t, field) \
	{ n, t, offsetof(struct vs_vcpu_profile, field), 1 }

static const struct key keys[] = {
	KEY("name", T_NAME, name),
	KEY("ghz", T_GHZ, ghz),
	KEY("sockets", T_COUNT, sockets),
	KEY("cores_per_socket", T_COUNT, cores_per_socket),
	KEY("threads_per_core", T_COUNT, threads_per_core),
	OPT_KEY("numbering", T_NUMBERING, numbering),
	KEY("hit", T_CYCLES, hit),
	KEY("smt_sibling", T_CYCLES, smt_sibling),
	KEY("same_socket", T_CYCLES, same_socket),
	KEY("other_socket", T_CYCLES, other_socket),
	KEY("memory", T_CYCLES, memory),
	KEY("rmw", T_CYCLES, rmw),
	KEY("fence", T_CYCLES, fence),
	KEY("pause", T_CYCLES, pause),
	KEY("clear_core_bytes_per_cycle", T_BW, clear_core_mbpc),
	KEY("clear_socket_bytes_per_cycle", T_BW, clear_socket_mbpc),
	OPT_KEY("clear_cached_bytes_per_cycle", T_BW, clear_cached_mbpc),
	OPT_KEY("llc_kib", T_KIB, llc_kib),
	OPT_KEY("prefetch_streams", T_STREAMS, prefetch_streams),
	OPT_KEY("prefetch_distance", T_DISTANCE, prefetch_distance),
	KEY("fault_entry", T_CYCLES, fault_entry),
	KEY("fault_exit", T_CYCLES, fault_exit),
	KEY("syscall", T_CYCLES, syscall),
	KEY("futex_wake", T_CYCLES, futex_wake),
	KEY("wake_latency", T_CYCLES, wake_latency),
	KEY("context_switch", T_CYCLES, context_switch),
	OPT_KEY("handoff_same_socket", T_INTERVAL, handoff_same_socket),
	OPT_KEY("handoff_other_socket", T_INTERVAL, handoff_other_socket),
	OPT_KEY("ipi", T_INTERVAL, ipi),
};

_Static_assert(VS_PREFETCH_STREAMS_MAX == 32 &&
	       VS_PREFETCH_DISTANCE_MAX == 32, "type_what() says 32");

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	       c == '+';
}

/* A profile name: 1 to VS_PROFILE_NAME_MAX name characters, no leading
 * dot (so that it is never "." or ".." as a file name). */
static int valid_name(const char *s)
{
	size_t n = 0;

	if (s[0] == '.')
		return 0;
	for (; s[n]; n++)
		if (!is_name_char(s[n]))
			return 0;
	return n >= 1 && n <= VS_PROFILE_NAME_MAX;
}

/* A whole number of at most @max, digits only. */
static int parse_uint(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -ERANGE;
	}
	*out = (uint32_t)v;
	return 0;
}

/* A whole number from 1 to @max, digits only. */
static int parse_count(const char *s, uint32_t max, uint32_t *out)
{
	int ret = parse_uint(s, max, out);

	return !ret && !*out ? -ERANGE : ret;
}

/*
 * A decimal number "D[.D]" in thousandths, rounded half up at the fourth
 * decimal: integer arithmetic, so every platform reads it alike.
 */
static int parse_milli(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	int digits = 0, frac = -1;

	for (; *s; s++) {
		if (*s == '.' && frac < 0 && digits) {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9')
			return -EINVAL;
		digits++;
		if (frac >= 0 && ++frac > 3) {
			if (frac == 4 && *s >= '5')
				v++;
			continue;
		}
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > (uint64_t)max * 1000)
			return -ERANGE;
	}
	if (!digits || frac == 0)
		return -EINVAL;
	for (frac = frac < 0 ? 0 : frac; frac < 3; frac++)
		v *= 10;
	if (v > max)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

static int parse_ghz(const char *s, double *out)
{
	uint32_t milli;
	char *end;
	double v;
	int ret = parse_milli(s, 100000, &milli);	/* the syntax check */

	if (ret)
		return ret;
	v = strtod(s, &end);
	if (*end || !(v > 0.0) || v > 100.0)
		return -ERANGE;
	*out = v;
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static const struct key *find_key(const char *name)
{
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(keys); i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static const char *type_what(enum key_type t)
{
	switch (t) {
	case T_NAME:
		return "a name of 1 to 63 letters, digits, '.', '_', '-', '+'";
	case T_GHZ:
		return "a decimal number of GHz above 0, at most 100";
	case T_COUNT:
		return "a whole number from 1 to 256";
	case T_CYCLES:
		return "a whole number of cycles, at most 1000000000";
	case T_KIB:
		return "a whole number of KiB, at most 1000000000";
	case T_BW:
		return "a decimal number of bytes per cycle, at least 0.001";
	case T_NUMBERING:
		return "socket-major or interleaved";
	case T_STREAMS:
		return "a whole number from 0 to 32";
	case T_DISTANCE:
		return "a whole number from 1 to 32";
	case T_INTERVAL:
		return "a whole number of cycles from 1 to 1000000000";
	}
	return "?";
}

/* Store @val into the field of @k in @p. */
static int set_value(struct vs_vcpu_profile *p, const struct key *k,
		     const char *val)
{
	void *field = (char *)p + k->offset;
	uint32_t u;
	int ret = 0;

	switch (k->type) {
	case T_NAME:
		if (!valid_name(val))
			return -EINVAL;
		strcpy(field, val);
		break;
	case T_GHZ:
		ret = parse_ghz(val, field);
		break;
	case T_COUNT:
		ret = parse_count(val, VS_VCPU_MAX, &u);
		if (!ret)
			*(unsigned int *)field = u;
		break;
	case T_CYCLES:
	case T_KIB:
		ret = parse_uint(val, CYCLES_MAX, field);
		break;
	case T_STREAMS:
		ret = parse_uint(val, VS_PREFETCH_STREAMS_MAX, field);
		break;
	case T_DISTANCE:
		ret = parse_count(val, VS_PREFETCH_DISTANCE_MAX, field);
		break;
	case T_INTERVAL:
		ret = parse_count(val, CYCLES_MAX, field);
		break;
	case T_BW:
		ret = parse_milli(val, BW_MAX_MILLI, &u);
		if (!ret && !u)
			ret = -ERANGE;
		if (!ret)
			*(uint32_t *)field = u;
		break;
	case T_NUMBERING:
		if (!strcmp(val, "socket-major"))
			*(enum vs_cpu_numbering *)field =
				VS_NUMBERING_SOCKET_MAJOR;
		else if (!strcmp(val, "interleaved"))
			*(enum vs_cpu_numbering *)field =
				VS_NUMBERING_INTERLEAVED;
		else
			ret = -EINVAL;
		break;
	}
	return ret;
}

/* One "key = value" line (comment and blanks already gone). */
static int parse_line(struct vs_vcpu_profile *p, char *line, int lineno,
		      unsigned char *seen, char *err, size_t errlen)
{
	char *eq = strchr(line, '=');
	const struct key *k;
	char *key, *val;

	if (!eq) {
		set_err(err, errlen, "line %d: '%.40s' is not 'key = value'",
			lineno, line);
		return -EINVAL;
	}
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	k = find_key(key);
	if (!k) {
		set_err(err, errlen, "line %d: unknown key '%.40s'", lineno,
			key);
		return -EINVAL;
	}
	if (seen[k - keys]) {
		set_err(err, errlen, "line %d: %s: set twice", lineno, k->name);
		return -EINVAL;
	}
	seen[k - keys] = 1;
	if (set_value(p, k, val)) {
		set_err(err, errlen, "line %d: %s: '%.40s' is not %s", lineno,
			k->name, val, type_what(k->type));
		return -EINVAL;
	}
	return 0;
}

/*
 * The optional keys whose default depends on other keys, when absent: a
 * contended line is handed over at its transfer's latency plus an RMW
 * (a queue that does not pipeline), and an IPI takes a message between
 * sockets and an interrupt's entry (docs/cost-model.md).
 */
static void set_defaults(struct vs_vcpu_profile *p)
{
	if (!p->handoff_same_socket)
		p->handoff_same_socket = p->same_socket + p->rmw;
	if (!p->handoff_other_socket)
		p->handoff_other_socket = p->other_socket + p->rmw;
	if (!p->ipi)
		p->ipi = p->other_socket + p->fault_entry;
}

static int check_profile(struct vs_vcpu_profile *p, const unsigned char *seen,
			 char *err, size_t errlen)
{
	unsigned long n;
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(keys); i++) {
		if (!seen[i] && !keys[i].optional) {
			set_err(err, errlen, "missing key '%s'", keys[i].name);
			return -EINVAL;
		}
	}
	if (!p->clear_cached_mbpc != !p->llc_kib) {
		set_err(err, errlen, "clear_cached_bytes_per_cycle and llc_kib "
			"go together: set both or neither");
		return -EINVAL;
	}
	n = (unsigned long)p->sockets * p->cores_per_socket *
	    p->threads_per_core;
	if (n > VS_VCPU_MAX) {
		set_err(err, errlen,
			"sockets * cores_per_socket * threads_per_core = %lu, "
			"more than %d CPUs", n, VS_VCPU_MAX);
		return -EINVAL;
	}
	p->nr_cpus = (unsigned int)n;
	set_defaults(p);
	return 0;
}

int vs_vcpu_profile_parse(struct vs_vcpu_profile *p, const char *text,
			  char *err, size_t errlen)
{
	unsigned char seen[VS_ARRAY_SIZE(keys)] = { 0 };
	struct vs_vcpu_profile tmp = { .numbering = VS_NUMBERING_SOCKET_MAJOR,
				       .prefetch_distance = 1 };
	char line[512];
	int lineno = 0, ret;

	if (!p || !text) {
		set_err(err, errlen, "no profile or no text");
		return -EINVAL;
	}
	while (*text) {
		size_t len = strcspn(text, "\n");
		char *s;

		lineno++;
		if (len >= sizeof(line)) {
			set_err(err, errlen, "line %d: longer than %zu bytes",
				lineno, sizeof(line) - 1);
			return -EINVAL;
		}
		memcpy(line, text, len);
		line[len] = '\0';
		text += len + (text[len] == '\n');
		line[strcspn(line, "#")] = '\0';
		s = trim(line);
		if (!*s)
			continue;
		ret = parse_line(&tmp, s, lineno, seen, err, errlen);
		if (ret)
			return ret;
	}
	ret = check_profile(&tmp, seen, err, errlen);
	if (!ret)
		*p = tmp;
	return ret;
}

/* Read @path whole; *@text is malloc'd and NUL-terminated. */
static int read_file(const char *path, char **text)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;
	int ret = 0;

	if (!f)
		return -errno;
	buf = malloc(PROFILE_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, PROFILE_FILE_MAX + 1, f);
	if (ferror(f))
		ret = -EIO;
	else if (n > PROFILE_FILE_MAX)
		ret = -EFBIG;
	fclose(f);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[n] = '\0';
	*text = buf;
	return 0;
}

static int load_path(struct vs_vcpu_profile *p, const char *path, char *err,
		     size_t errlen)
{
	char *text = NULL, msg[200];
	int ret = read_file(path, &text);

	if (ret) {
		if (ret == -EFBIG)
			set_err(err, errlen, "%s: larger than %d bytes", path,
				PROFILE_FILE_MAX);
		else
			set_err(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = vs_vcpu_profile_parse(p, text, msg, sizeof(msg));
	if (ret)
		set_err(err, errlen, "%s: %s", path, msg);
	free(text);
	return ret;
}

/*
 * Try DIR/NAME.profile for the @len bytes of @dir; -ENOENT when it is not
 * there.  An empty @dir is skipped.
 */
static int try_dir(struct vs_vcpu_profile *p, const char *dir, size_t len,
		   const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX];
	FILE *f;

	if (!len)
		return -ENOENT;
	if (snprintf(path, sizeof(path), "%.*s/%s.profile", (int)len, dir,
		     name) >= (int)sizeof(path))
		return -ENOENT;
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	fclose(f);
	return load_path(p, path, err, errlen);
}

/* Does @s end in @suffix?  A name so ending is a file's, in the
 * current folder if it has no '/'. */
static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

/*
 * Try share/vmsim/profiles beside the installed object this code is in
 * (libvmsim.so, or a tool linked statically): PREFIX/lib/.. or
 * PREFIX/lib/ARCH/../.., and PREFIX/bin/.., whatever prefix it was
 * installed into or moved to.  -ENOENT when there is none.
 */
static int try_installed(struct vs_vcpu_profile *p, const char *name,
			 char *err, size_t errlen)
{
	static const char *const up[] = { "/../share/vmsim/profiles",
					   "/../../share/vmsim/profiles" };
	char dir[PATH_MAX];
	Dl_info info;
	const char *slash;
	size_t i, len;
	int ret = -ENOENT;

	if (!dladdr(up, &info) || !info.dli_fname ||
	    !(slash = strrchr(info.dli_fname, '/')))
		return -ENOENT;
	len = (size_t)(slash - info.dli_fname);
	for (i = 0; ret == -ENOENT && i < 2; i++) {
		if (snprintf(dir, sizeof(dir), "%.*s%s", (int)len,
			     info.dli_fname, up[i]) >= (int)sizeof(dir))
			return -ENOENT;
		ret = try_dir(p, dir, strlen(dir), name, err, errlen);
	}
	return ret;
}

static int load_name(struct vs_vcpu_profile *p, const char *name, char *err,
		     size_t errlen)
{
	const char *env = getenv("VMSIM_PROFILE_PATH");
	int ret;

	while (env && *env) {
		size_t len = strcspn(env, ":");

		ret = try_dir(p, env, len, name, err, errlen);
		if (ret != -ENOENT)
			return ret;
		env += len + (env[len] == ':');
	}
	ret = try_installed(p, name, err, errlen);
	if (ret != -ENOENT)
		return ret;
	ret = try_dir(p, VS_PROFILE_SRCDIR, strlen(VS_PROFILE_SRCDIR), name,
		      err, errlen);
	if (ret != -ENOENT)
		return ret;
	ret = try_dir(p, VS_PROFILE_DIR, strlen(VS_PROFILE_DIR), name, err,
		      errlen);
	if (ret != -ENOENT)
		return ret;
	set_err(err, errlen, "no profile '%s' (looked in $VMSIM_PROFILE_PATH, "
		"share/vmsim/profiles beside the library, %s and %s)%s", name, *VS_PROFILE_SRCDIR ? VS_PROFILE_SRCDIR :
		"(no source tree)", VS_PROFILE_DIR, strcmp(name, "host") ? "" :
		"; measure this machine's with 'vcpu-calibrate --output "
		"host.profile', then name host.profile (docs/vcpu.md)");
	return -ENOENT;
}

int vs_vcpu_profile_load(struct vs_vcpu_profile *p, const char *name_or_path,
			 char *err, size_t errlen)
{
	if (!p || !name_or_path) {
		set_err(err, errlen, "no profile or no name");
		return -EINVAL;
	}
	if (strchr(name_or_path, '/') || has_suffix(name_or_path, ".profile"))
		return load_path(p, name_or_path, err, errlen);
	if (!valid_name(name_or_path)) {
		set_err(err, errlen, "'%.40s' is not a profile name (letters, "
			"digits, '.', '_', '-', '+') nor a path", name_or_path);
		return -EINVAL;
	}
	return load_name(p, name_or_path, err, errlen);
}

int vs_vcpu_cpu_place(const struct vs_vcpu_profile *p, unsigned int cpu,
		      struct vs_cpu_place *out)
{
	unsigned int per, r;

	if (!p || !out || cpu >= p->nr_cpus)
		return -EINVAL;
	per = p->sockets * p->cores_per_socket;
	r = cpu % per;
	out->thread = cpu / per;
	if (p->numbering == VS_NUMBERING_INTERLEAVED) {
		out->socket = r % p->sockets;
		out->core = r / p->sockets;
	} else {
		out->socket = r / p->cores_per_socket;
		out->core = r % p->cores_per_socket;
	}
	return 0;
}

int vs_vcpu_cpu_distance(const struct vs_vcpu_profile *p, unsigned int a,
			 unsigned int b)
{
	struct vs_cpu_place pa, pb;

	if (vs_vcpu_cpu_place(p, a, &pa) || vs_vcpu_cpu_place(p, b, &pb))
		return -EINVAL;
	if (a == b)
		return VS_DIST_SAME;
	if (pa.socket != pb.socket)
		return VS_DIST_REMOTE;
	return pa.core == pb.core ? VS_DIST_SMT : VS_DIST_SOCKET;
}

uint32_t vs_vcpu_profile_latency(const struct vs_vcpu_profile *p,
				 enum vs_cpu_distance dist)
{
	if (!p)
		return 0;
	switch (dist) {
	case VS_DIST_SAME:
		return p->hit;
	case VS_DIST_SMT:
		return p->smt_sibling;
	case VS_DIST_SOCKET:
		return p->same_socket;
	case VS_DIST_REMOTE:
		return p->other_socket;
	}
	return 0;
}
