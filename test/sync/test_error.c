/* SPDX-License-Identifier: MIT */
/*
 * Tests for vmsim/error.h: vs_strerror() and vs_err_name().
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <vmsim/error.h>

#include "test.h"

static const struct {
	int code;
	const char *name;
	const char *msg;
} errmap[] = {
#define XX(code, msg) { code, #code, msg },
	VS_ERRNO_MAP(XX)
#undef XX
};

/* EINVAL has a real message and its symbolic name. */
START_TEST(error_einval)
{
	const char *msg = vs_strerror(-EINVAL);

	ck_assert_ptr_nonnull(msg);
	ck_assert_str_ne(msg, "unknown error");
	ck_assert_str_eq(msg, "invalid argument");
	ck_assert_str_eq(vs_err_name(-EINVAL), "EINVAL");
}
END_TEST

/* Every code of VS_ERRNO_MAP maps to its own name and message. */
START_TEST(error_map_roundtrip)
{
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(errmap); i++) {
		ck_assert_str_eq(vs_err_name(-errmap[i].code), errmap[i].name);
		ck_assert_str_eq(vs_strerror(-errmap[i].code), errmap[i].msg);
	}
}
END_TEST

/* A positive errno is accepted and means the same as its negation. */
START_TEST(error_positive)
{
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(errmap); i++) {
		ck_assert_str_eq(vs_err_name(errmap[i].code), errmap[i].name);
		ck_assert_str_eq(vs_strerror(errmap[i].code), errmap[i].msg);
	}
}
END_TEST

/* A code outside the map is "EUNKNOWN" / "unknown error", not NULL. */
START_TEST(error_unknown)
{
	static const int codes[] = { -EXDEV, -ESPIPE, -4095, -100000, 12345 };
	size_t i;

	for (i = 0; i < VS_ARRAY_SIZE(codes); i++) {
		ck_assert_str_eq(vs_err_name(codes[i]), "EUNKNOWN");
		ck_assert_str_eq(vs_strerror(codes[i]), "unknown error");
	}
}
END_TEST

/*
 * Extreme inputs must not crash (docs/architecture.md: bad input gets an error,
 * never an abort): INT_MIN has no positive counterpart, so abs(INT_MIN)
 * is undefined and UBSan aborts on it.
 */
START_TEST(error_int_min)
{
	ck_assert_str_eq(vs_err_name(INT_MIN), "EUNKNOWN");
	ck_assert_str_eq(vs_strerror(INT_MIN), "unknown error");
	ck_assert_str_eq(vs_err_name(INT_MAX), "EUNKNOWN");
	ck_assert_str_eq(vs_strerror(INT_MAX), "unknown error");
}
END_TEST

/* Success (0) is described, not reported as an unknown error. */
START_TEST(error_zero)
{
	ck_assert_ptr_nonnull(vs_strerror(0));
	ck_assert_ptr_nonnull(vs_err_name(0));
	ck_assert_str_ne(vs_strerror(0), "unknown error");
	ck_assert_str_ne(vs_err_name(0), "EUNKNOWN");
}
END_TEST

Suite *error_suite(void)
{
	Suite *s = suite_create("error");
	vs_test_add(vs_test_tcase(s, "error"), error_einval,
		    error_map_roundtrip, error_positive, error_unknown,
		    error_int_min, error_zero);
	return s;
}
