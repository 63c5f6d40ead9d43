/* tests/install/copy_outside.c — a program built outside the project, the
 * way a user builds one: `#include <doca_core.h>`, flags from
 * `pkg-config doca-core` (installed or uninstalled), nothing else. It runs
 * the whole lifecycle of one 4 KiB copy on "sw0" and checks every result:
 * each call's return code, the event's facts and every copied byte.
 * Exits 0 and prints one line when all hold; otherwise names the first
 * difference and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <doca_core.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEM_LEN 8192u
#define COPY_LEN 4096u
#define COPY_TAG 0x5eedu
#define DEADLINE_NS 10000000000ull /* a stuck engine fails the run, it does not hang it */

static void fail(const char *what, doca_error_t got)
{
	fprintf(stderr, "copy_outside: %s: %s (%s)\n", what, doca_error_get_name(got),
		doca_error_get_descr(got));
	exit(1);
}

static void check(const char *call, doca_error_t got)
{
	if (got != DOCA_SUCCESS)
		fail(call, got);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void check_deadline(uint64_t start, const char *waiting_for)
{
	if (now_ns() - start > DEADLINE_NS) {
		fprintf(stderr, "copy_outside: no %s within 10 s\n", waiting_for);
		exit(1);
	}
}

int main(void)
{
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
	struct doca_event *ev;
	enum doca_ctx_state state;
	unsigned char *bytes;
	uint64_t start;

	check("doca_ctx_create", doca_ctx_create(&ctx));
	check("doca_dev_open(\"sw0\")", doca_dev_open("sw0", &dev));
	check("doca_ctx_set_dev", doca_ctx_set_dev(ctx, dev));
	check("doca_mem_create",
	      doca_mem_create(ctx, MEM_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	check("doca_mem_get_addr", doca_mem_get_addr(mem, (void **)&bytes));
	for (unsigned i = 0; i < COPY_LEN; i++) {
		bytes[i] = (unsigned char)(i * 7u + 1u);
		bytes[COPY_LEN + i] = 0;
	}
	check("doca_buf_create(src)", doca_buf_create(mem, 0, COPY_LEN, &src));
	check("doca_buf_create(dst)", doca_buf_create(mem, COPY_LEN, COPY_LEN, &dst));
	check("doca_pe_create", doca_pe_create(&pe));
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(pe, ctx));
	check("doca_ctx_start", doca_ctx_start(ctx));

	struct doca_task_desc task = {
		.type = DOCA_TASK_COPY, .src = src, .dst = dst, .user_data = { .u64 = COPY_TAG },
	};
	check("doca_task_submit", doca_task_submit(ctx, &task));
	start = now_ns();
	while (!(ev = doca_pe_get_event(pe))) {
		doca_pe_progress(pe);
		check_deadline(start, "event");
	}
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		fail("event status is not SUCCESS; its error", doca_event_get_error(ev));
	if (doca_event_get_error(ev) != DOCA_SUCCESS || doca_event_get_bytes(ev) != COPY_LEN ||
	    doca_event_get_user_data(ev).u64 != COPY_TAG || doca_event_get_ctx(ev) != ctx ||
	    doca_event_get_type(ev) != DOCA_TASK_COPY) {
		fprintf(stderr, "copy_outside: event: error %s, %zu bytes, user_data %llu\n",
			doca_error_get_name(doca_event_get_error(ev)), doca_event_get_bytes(ev),
			(unsigned long long)doca_event_get_user_data(ev).u64);
		return 1;
	}
	doca_event_free(ev);
	for (unsigned i = 0; i < COPY_LEN; i++) {
		if (bytes[COPY_LEN + i] != (unsigned char)(i * 7u + 1u)) {
			fprintf(stderr, "copy_outside: byte %u of the destination is %u, expected %u\n", i,
				bytes[COPY_LEN + i], (unsigned char)(i * 7u + 1u));
			return 1;
		}
	}

	check("doca_ctx_stop", doca_ctx_stop(ctx));
	start = now_ns();
	for (;;) {
		check("doca_ctx_get_state", doca_ctx_get_state(ctx, &state));
		if (state == DOCA_CTX_STATE_IDLE)
			break;
		doca_pe_progress(pe);
		check_deadline(start, "IDLE context after the stop");
	}
	check("doca_buf_destroy(dst)", doca_buf_destroy(dst));
	check("doca_buf_destroy(src)", doca_buf_destroy(src));
	check("doca_mem_destroy", doca_mem_destroy(mem));
	check("doca_dev_close", doca_dev_close(dev));
	check("doca_ctx_destroy", doca_ctx_destroy(ctx));
	check("doca_pe_destroy", doca_pe_destroy(pe));
	printf("copy_outside: %u bytes copied on sw0 and checked, lifecycle complete\n", COPY_LEN);
	return 0;
}
