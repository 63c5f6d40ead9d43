/*
 * tests/conformance/conformance.h — the device-independent conformance
 * suite: one set of Criterion tests, written against the public API only
 * (<doca_core.h>, plus the public-API test helpers of tests/api/common.h),
 * run once per device. main.c picks the device (--dev NAME or the
 * DOCA_CONFORMANCE_DEV environment variable) and passes it to every test
 * process through DOCA_CONFORMANCE_DEV.
 */
#ifndef DOCA_TESTS_CONFORMANCE_H
#define DOCA_TESTS_CONFORMANCE_H

#include "tests/api/common.h"

/** Environment variable naming the device (open string) under test. */
#define CONF_DEV_ENV "DOCA_CONFORMANCE_DEV"

/** The open string of the device under test (the test fails if unset). */
const char *conf_dev(void);

/** The doca_dev_list entry of the device under test ("sw0:engines=1" is
 * device "sw0"); the test fails if it is not listed. */
void conf_dev_info(struct doca_dev_info *out);

/** Submit a copy of @p src into @p dst and assert it is accepted. */
void conf_submit_ok(struct doca_ctx *ctx, struct doca_buf *src, struct doca_buf *dst, uint64_t user);

/** What became of a task (indexed by its user data). */
enum conf_outcome {
	CONF_NO_EVENT = 0,
	CONF_COPIED,  /* SUCCESS, every byte */
	CONF_FLUSHED, /* FAILURE, DOCA_ERROR_SHUTDOWN, 0 bytes */
};

/**
 * Progress and free events until the @p n tasks with user data 0..n-1 have
 * each had exactly one event: SUCCESS with @p bytes bytes, or — when
 * @p flush_ok — FAILURE with DOCA_ERROR_SHUTDOWN and 0 bytes. Records each
 * in outcome[user]; fails on a second event, an unknown user, or after
 * API_WAIT_MS without progress.
 */
void conf_reap(struct doca_pe *pe, uint32_t n, uint8_t *outcome, size_t bytes, bool flush_ok);

#endif /* DOCA_TESTS_CONFORMANCE_H */
