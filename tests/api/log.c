/*
 * tests/api/log.c — the library's log (doca_log.h): the reason a bad open
 * string was refused, the threshold, the handler, and the rate limit of a
 * message repeated in a loop.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"

#define LOG_KEEP 16

static struct {
	int count;
	enum doca_log_level level[LOG_KEEP];
	char text[LOG_KEEP][512];
	void *user;
} got;

static void keep(enum doca_log_level level, const char *message, void *user)
{
	if (got.count < LOG_KEEP) {
		got.level[got.count] = level;
		snprintf(got.text[got.count], sizeof(got.text[0]), "%s", message);
	}
	got.count++;
	got.user = user;
}

static void capture(void)
{
	memset(&got, 0, sizeof(got));
	assert_ok(doca_log_set_level(DOCA_LOG_WARN));
	assert_ok(doca_log_set_handler(keep, &got));
}

static void release(void)
{
	assert_ok(doca_log_set_handler(NULL, NULL));
}

TestSuite(log, .init = capture, .fini = release);

Test(log, a_refused_open_string_names_the_key_and_the_allowed_ones)
{
	struct doca_dev *dev = NULL;

	assert_doca(doca_dev_open("sw0:engine=1", &dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(dev);
	cr_assert_eq(got.count, 1);
	cr_assert_eq(got.level[0], DOCA_LOG_ERROR);
	cr_assert_str_eq(got.text[0], "doca_dev_open(\"sw0:engine=1\"): unknown key 'engine'; keys: engines, "
				      "cpus, fail_every, partial_every, delay_us, ring_max (DOCA_ERROR_INVALID_VALUE)");
	cr_assert_eq(got.user, &got);
	assert_doca(doca_dev_open("sw0:engines=1,cpus=0,cpus=1", &dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(got.count, 2);
	cr_assert_str_eq(got.text[1], "doca_dev_open(\"sw0:engines=1,cpus=0,cpus=1\"): 'cpus' is given twice "
				      "(DOCA_ERROR_INVALID_VALUE)");
}

Test(log, the_threshold_drops_messages_and_refuses_unknown_levels)
{
	struct doca_dev *dev;

	assert_ok(doca_log_set_level(DOCA_LOG_NONE));
	cr_assert_eq(doca_log_get_level(), DOCA_LOG_NONE);
	assert_doca(doca_dev_open("sw0:bogus=1", &dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(got.count, 0, "silenced, yet %d messages", got.count);
	assert_doca(doca_log_set_level((enum doca_log_level)4), DOCA_ERROR_INVALID_VALUE);
	assert_doca(doca_log_set_level((enum doca_log_level)-2), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_log_get_level(), DOCA_LOG_NONE, "a refused level changed the threshold");
	assert_ok(doca_log_set_level(DOCA_LOG_ERROR));
	assert_doca(doca_dev_open("sw0:bogus=1", &dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(got.count, 1);
}

/* Wait for the start of a new second of the log's clock. */
static void next_second(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	while (t.tv_sec == t0.tv_sec);
}

Test(log, a_message_repeated_in_a_loop_is_counted_not_flooded)
{
	struct doca_dev *dev;

	next_second();
	for (int i = 0; i < 50; i++)
		assert_doca(doca_dev_open("sw0:bogus=1", &dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(got.count, DOCA_LOG_BURST, "%d messages passed in one second", got.count);
	for (int i = 0; i < DOCA_LOG_BURST; i++)
		cr_assert_str_eq(got.text[i], "doca_dev_open(\"sw0:bogus=1\"): unknown key 'bogus'; keys: engines, "
					      "cpus, fail_every, partial_every, delay_us, ring_max (DOCA_ERROR_INVALID_VALUE)");
	next_second();
	assert_doca(doca_dev_open("sw0:bogus=1", &dev), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(got.count, DOCA_LOG_BURST + 2);
	cr_assert_str_eq(got.text[DOCA_LOG_BURST], "(45 similar messages suppressed: \"%s: %s (%s)\")");
	cr_assert_str_eq(got.text[DOCA_LOG_BURST + 1], got.text[0]);
}
