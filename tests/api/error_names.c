/*
 * tests/api/error_names.c — doca_error_get_name / doca_error_get_descr for
 * every one of the DOCA_ERROR_COUNT values and for values outside the enum.
 */
#include "common.h"

#include <string.h>

static const char *const expected_names[DOCA_ERROR_COUNT] = {
	"DOCA_SUCCESS",
	"DOCA_ERROR_UNKNOWN",
	"DOCA_ERROR_NOT_PERMITTED",
	"DOCA_ERROR_IN_USE",
	"DOCA_ERROR_NOT_SUPPORTED",
	"DOCA_ERROR_AGAIN",
	"DOCA_ERROR_INVALID_VALUE",
	"DOCA_ERROR_NO_MEMORY",
	"DOCA_ERROR_INITIALIZATION",
	"DOCA_ERROR_TIME_OUT",
	"DOCA_ERROR_SHUTDOWN",
	"DOCA_ERROR_CONNECTION_RESET",
	"DOCA_ERROR_CONNECTION_ABORTED",
	"DOCA_ERROR_CONNECTION_INPROGRESS",
	"DOCA_ERROR_NOT_CONNECTED",
	"DOCA_ERROR_NO_LOCK",
	"DOCA_ERROR_NOT_FOUND",
	"DOCA_ERROR_IO_FAILED",
	"DOCA_ERROR_BAD_STATE",
	"DOCA_ERROR_UNSUPPORTED_VERSION",
	"DOCA_ERROR_OPERATING_SYSTEM",
	"DOCA_ERROR_DRIVER",
	"DOCA_ERROR_UNEXPECTED",
	"DOCA_ERROR_ALREADY_EXIST",
	"DOCA_ERROR_FULL",
	"DOCA_ERROR_EMPTY",
	"DOCA_ERROR_IN_PROGRESS",
	"DOCA_ERROR_TOO_BIG",
	"DOCA_ERROR_AUTHENTICATION",
	"DOCA_ERROR_BAD_CONFIG",
	"DOCA_ERROR_SKIPPED",
	"DOCA_ERROR_DEVICE_FATAL_ERROR",
};

Test(error_names, numeric_values_match_doca_sdk)
{
	cr_assert_eq(DOCA_ERROR_COUNT, 32, "DOCA_ERROR_COUNT %d", DOCA_ERROR_COUNT);
	cr_assert_eq(DOCA_SUCCESS, 0, "DOCA_SUCCESS");
	cr_assert_eq(DOCA_ERROR_AGAIN, 5, "AGAIN");
	cr_assert_eq(DOCA_ERROR_INVALID_VALUE, 6, "INVALID_VALUE");
	cr_assert_eq(DOCA_ERROR_SHUTDOWN, 10, "SHUTDOWN");
	cr_assert_eq(DOCA_ERROR_NOT_FOUND, 16, "NOT_FOUND");
	cr_assert_eq(DOCA_ERROR_BAD_STATE, 18, "BAD_STATE");
	cr_assert_eq(DOCA_ERROR_IN_PROGRESS, 26, "IN_PROGRESS");
	cr_assert_eq(DOCA_ERROR_DEVICE_FATAL_ERROR, 31, "DEVICE_FATAL_ERROR");
}

Test(error_names, every_code_has_its_identifier_as_name)
{
	for (int i = 0; i < DOCA_ERROR_COUNT; i++) {
		const char *name = doca_error_get_name((doca_error_t)i);

		cr_assert_not_null(name, "name of %d is NULL", i);
		cr_assert_str_eq(name, expected_names[i], "name of %d", i);
	}
}

Test(error_names, names_and_descriptions_are_non_empty_and_distinct)
{
	for (int i = 0; i < DOCA_ERROR_COUNT; i++) {
		const char *ni = doca_error_get_name((doca_error_t)i);
		const char *di = doca_error_get_descr((doca_error_t)i);

		cr_assert_not_null(ni, "name of %d is NULL", i);
		cr_assert_not_null(di, "description of %d is NULL", i);
		cr_assert_gt(strlen(di), 0, "description of %s is empty", ni);
		cr_assert_str_neq(ni, "DOCA_ERROR_UNRECOGNIZED", "%d is a known code", i);
		cr_assert_str_neq(di, "Unrecognized error code", "%d is a known code", i);
		for (int j = 0; j < i; j++) {
			cr_assert_str_neq(ni, doca_error_get_name((doca_error_t)j), "codes %d and %d share a name", i,
					  j);
			cr_assert_str_neq(di, doca_error_get_descr((doca_error_t)j),
					  "codes %d and %d share a description", i, j);
		}
	}
}

Test(error_names, unknown_values_are_reported_as_unrecognized)
{
	static const int unknown[] = { DOCA_ERROR_COUNT, 33, 100, 1000, -1, -32, 0x7fffffff };

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		const char *name = doca_error_get_name((doca_error_t)unknown[i]);
		const char *descr = doca_error_get_descr((doca_error_t)unknown[i]);

		cr_assert_not_null(name, "name of %d is NULL", unknown[i]);
		cr_assert_not_null(descr, "description of %d is NULL", unknown[i]);
		cr_assert_str_eq(name, "DOCA_ERROR_UNRECOGNIZED", "name of %d", unknown[i]);
		cr_assert_str_eq(descr, "Unrecognized error code", "description of %d", unknown[i]);
	}
}

Test(error_names, strings_are_static)
{
	const char *a = doca_error_get_name(DOCA_ERROR_BAD_STATE);
	const char *b = doca_error_get_name(DOCA_ERROR_BAD_STATE);

	cr_assert_eq(a, b, "the same code gave two different strings");
	cr_assert_eq(doca_error_get_descr(DOCA_ERROR_AGAIN), doca_error_get_descr(DOCA_ERROR_AGAIN),
		     "the same code gave two different descriptions");
}
