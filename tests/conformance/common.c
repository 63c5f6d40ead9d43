/*
 * tests/conformance/common.c — helpers of the conformance suite shared by
 * its test files (see conformance.h).
 */
#include <stdlib.h>
#include <string.h>

#include "tests/conformance/conformance.h"

const char *conf_dev(void)
{
	const char *dev = getenv(CONF_DEV_ENV);

	cr_assert(dev && *dev, CONF_DEV_ENV " is not set: run through main (--dev NAME)");
	return dev;
}

void conf_dev_info(struct doca_dev_info *out)
{
	struct doca_dev_info infos[32];
	size_t count = 0, name_len = strcspn(conf_dev(), ":");

	assert_ok(doca_dev_list(infos, 32, &count));
	for (size_t i = 0; i < count && i < 32; i++)
		if (strlen(infos[i].name) == name_len && strncmp(infos[i].name, conf_dev(), name_len) == 0) {
			*out = infos[i];
			return;
		}
	cr_assert_fail("device \"%s\" is not in doca_dev_list", conf_dev());
}

void conf_submit_ok(struct doca_ctx *ctx, struct doca_buf *src, struct doca_buf *dst, uint64_t user)
{
	assert_ok(submit_copy(ctx, src, dst, user, 0));
}

void conf_reap(struct doca_pe *pe, uint32_t n, uint8_t *outcome, size_t bytes, bool flush_ok)
{
	for (uint32_t got = 0; got < n; got++) {
		struct doca_event *ev = wait_event(pe);
		uint64_t user = doca_event_get_user_data(ev).u64;
		enum doca_event_status st = doca_event_get_status(ev);
		doca_error_t err = doca_event_get_error(ev);

		cr_assert_lt(user, n, "event for an unknown task %llu", (unsigned long long)user);
		cr_assert_eq(outcome[user], CONF_NO_EVENT, "second event for task %llu",
			     (unsigned long long)user);
		if (st == DOCA_EVENT_STATUS_SUCCESS) {
			assert_ok(err);
			cr_assert_eq(doca_event_get_bytes(ev), bytes, "task %llu: %zu bytes, expected %zu",
				     (unsigned long long)user, doca_event_get_bytes(ev), bytes);
			outcome[user] = CONF_COPIED;
		} else {
			cr_assert(flush_ok, "task %llu: status %d, error %s", (unsigned long long)user,
				  (int)st, doca_error_get_name(err));
			cr_assert_eq(st, DOCA_EVENT_STATUS_FAILURE, "task %llu: status %d",
				     (unsigned long long)user, (int)st);
			assert_doca(err, DOCA_ERROR_SHUTDOWN);
			cr_assert_eq(doca_event_get_bytes(ev), 0);
			outcome[user] = CONF_FLUSHED;
		}
		doca_event_free(ev);
	}
}
