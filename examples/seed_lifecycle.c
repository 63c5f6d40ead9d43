/*
 * seed_lifecycle.c — the seed's eight-step lifecycle of a memory copy, in
 * order, one line per call, then the seed's three lifecycle pitfalls shown as
 * the clear errors doca-core turns them into.
 *
 *   ./seed_lifecycle [--dev NAME]      (default "sw0"; this is `./run demo`)
 *
 * "The point is the order, not the syntax": the context is started before
 * anything is submitted, buffers are made after their memory and destroyed
 * before it, and every event is freed.
 */
#include "example_common.h"

#define MEM_LEN (1024u * 1024u)
#define BUF_LEN 4096u
#define COPY_TAG 42u /* user_data of the demo copy */

static const char about[] = "the DOCA Core lifecycle of the seed, step by step";

/* The objects of one lifecycle, in the order they are created. */
struct lifecycle {
	const char *dev_name;
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;
	struct doca_buf *src;
	struct doca_buf *dst;
	struct doca_pe *pe;
};

/* "<step> <call> → <result>"; exits when the result is not @p want. */
static void show(const char *step, const char *call, doca_error_t got, doca_error_t want)
{
	printf("%-3s %-48s → %s\n", step, call, doca_error_get_name(got));
	if (got != want)
		example_fail("%s returned %s (%s), expected %s", call, doca_error_get_name(got),
			     doca_error_get_descr(got), doca_error_get_name(want));
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	fputs("    ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *state_name_of(const struct doca_ctx *ctx)
{
	return example_state_name(example_ctx_state(ctx));
}

static doca_error_t try_copy(struct lifecycle *lc)
{
	struct doca_task_desc desc = {
		.type = DOCA_TASK_COPY,
		.src = lc->src,
		.dst = lc->dst,
		.user_data = { .u64 = COPY_TAG },
	};

	return doca_task_submit(lc->ctx, &desc);
}

static void submit_copy(struct lifecycle *lc, doca_error_t want, const char *step, const char *call)
{
	show(step, call, try_copy(lc), want);
}

/* Progress until an event is ready; *progress_calls counts the turns. */
static struct doca_event *wait_event(struct doca_pe *pe, unsigned *progress_calls)
{
	uint64_t start = example_now_ns();
	struct doca_event *ev;

	*progress_calls = 0;
	while (!(ev = doca_pe_get_event(pe))) {
		doca_pe_progress(pe);
		++*progress_calls;
		example_check_deadline(start, "an event");
	}
	return ev;
}

/* Progress until a STOPPING context has become IDLE. */
static void wait_idle(struct lifecycle *lc)
{
	uint64_t start = example_now_ns();

	while (example_ctx_state(lc->ctx) != DOCA_CTX_STATE_IDLE) {
		doca_pe_progress(lc->pe);
		example_check_deadline(start, "the context to become IDLE");
	}
}

static void describe_event(const struct doca_event *ev)
{
	note("event: status %s, %zu bytes, error %s, user_data %llu",
	     example_status_name(doca_event_get_status(ev)), doca_event_get_bytes(ev),
	     doca_error_get_name(doca_event_get_error(ev)),
	     (unsigned long long)doca_event_get_user_data(ev).u64);
}

/* ------------------------------------------------------------------------ */
/* The eight steps.                                                          */

static void step1_create_ctx(struct lifecycle *lc)
{
	show("1.", "doca_ctx_create", doca_ctx_create(&lc->ctx), DOCA_SUCCESS);
}

static void step2_open_dev(struct lifecycle *lc)
{
	char call[96];
	doca_error_t err;

	snprintf(call, sizeof(call), "doca_dev_open(\"%.60s\")", lc->dev_name);
	err = doca_dev_open(lc->dev_name, &lc->dev);
	printf("%-3s %-48s → %s\n", "2.", call, doca_error_get_name(err));
	if (err != DOCA_SUCCESS) {
		note("cannot open \"%s\": %s", lc->dev_name, doca_error_get_descr(err));
		if (err == DOCA_ERROR_NOT_FOUND) {
			example_print_devices(stdout, "    ");
		}
		EXAMPLE_CHECK(doca_ctx_destroy(lc->ctx));
		exit(EXIT_FAILURE);
	}
	show("", "doca_ctx_set_dev", doca_ctx_set_dev(lc->ctx, lc->dev), DOCA_SUCCESS);
}

static void step3_create_mem(struct lifecycle *lc)
{
	void *addr = NULL;

	show("3.", "doca_mem_create(1 MiB, READ|WRITE)",
	     doca_mem_create(lc->ctx, MEM_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &lc->mem),
	     DOCA_SUCCESS);
	EXAMPLE_CHECK(doca_mem_get_addr(lc->mem, &addr));
	note("memory registered at %p, %u bytes", addr, MEM_LEN);
}

static void step4_create_bufs(struct lifecycle *lc)
{
	show("4.", "doca_buf_create(src: offset 0, len 4096)",
	     doca_buf_create(lc->mem, 0, BUF_LEN, &lc->src), DOCA_SUCCESS);
	show("", "doca_buf_create(dst: offset 4096, len 4096)",
	     doca_buf_create(lc->mem, BUF_LEN, BUF_LEN, &lc->dst), DOCA_SUCCESS);
	example_fill_pattern(example_buf_data(lc->src), BUF_LEN, COPY_TAG);
	note("src filled with a pattern, dst is zero (a copy needs two buffers)");
}

static void step5_start_ctx(struct lifecycle *lc)
{
	show("5.", "doca_pe_create", doca_pe_create(&lc->pe), DOCA_SUCCESS);
	show("", "doca_pe_connect_ctx", doca_pe_connect_ctx(lc->pe, lc->ctx), DOCA_SUCCESS);
	show("", "doca_ctx_start", doca_ctx_start(lc->ctx), DOCA_SUCCESS);
	note("context state: %s", state_name_of(lc->ctx));
}

static void step6_submit(struct lifecycle *lc)
{
	submit_copy(lc, DOCA_SUCCESS, "6.", "doca_task_submit(DOCA_TASK_COPY, src to dst)");
}

static void step7_reap(struct lifecycle *lc)
{
	unsigned calls;
	char call[96];
	struct doca_event *ev = wait_event(lc->pe, &calls);
	bool ok = doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS &&
		  doca_event_get_error(ev) == DOCA_SUCCESS && doca_event_get_bytes(ev) == BUF_LEN &&
		  doca_event_get_user_data(ev).u64 == COPY_TAG;

	snprintf(call, sizeof(call), "doca_pe_progress (%u call%s) + doca_pe_get_event", calls,
		 calls == 1 ? "" : "s");
	printf("%-3s %-48s → event ready\n", "7.", call);
	describe_event(ev);
	doca_event_free(ev);
	note("doca_event_free: the event's credit is back in the task pool");
	if (!ok)
		example_fail("the copy did not succeed as expected");
	if (memcmp(example_buf_data(lc->dst), example_buf_data(lc->src), BUF_LEN))
		example_fail("dst differs from src after a successful copy");
	note("dst == src: all %u bytes verified", BUF_LEN);
}

static void step8_teardown(struct lifecycle *lc)
{
	printf("8.  reverse-order teardown\n");
	show("", "doca_ctx_stop", doca_ctx_stop(lc->ctx), DOCA_SUCCESS);
	note("context state: %s", state_name_of(lc->ctx));
	show("", "doca_buf_destroy(dst)", doca_buf_destroy(lc->dst), DOCA_SUCCESS);
	show("", "doca_buf_destroy(src)", doca_buf_destroy(lc->src), DOCA_SUCCESS);
	show("", "doca_mem_destroy", doca_mem_destroy(lc->mem), DOCA_SUCCESS);
	show("", "doca_dev_close", doca_dev_close(lc->dev), DOCA_SUCCESS);
	show("", "doca_ctx_destroy", doca_ctx_destroy(lc->ctx), DOCA_SUCCESS);
	show("", "doca_pe_destroy", doca_pe_destroy(lc->pe), DOCA_SUCCESS);
}

/* ------------------------------------------------------------------------ */
/* The pitfalls, each on a fresh, quietly built lifecycle.                   */

static void rig_up(struct lifecycle *lc, uint32_t max_tasks)
{
	EXAMPLE_CHECK(doca_ctx_create(&lc->ctx));
	lc->dev = example_open_dev(lc->dev_name);
	EXAMPLE_CHECK(doca_ctx_set_dev(lc->ctx, lc->dev));
	if (max_tasks)
		EXAMPLE_CHECK(doca_ctx_set_max_tasks(lc->ctx, max_tasks));
	EXAMPLE_CHECK(doca_mem_create(lc->ctx, MEM_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE,
				      &lc->mem));
	EXAMPLE_CHECK(doca_buf_create(lc->mem, 0, BUF_LEN, &lc->src));
	EXAMPLE_CHECK(doca_buf_create(lc->mem, BUF_LEN, BUF_LEN, &lc->dst));
	example_fill_pattern(example_buf_data(lc->src), BUF_LEN, COPY_TAG);
	EXAMPLE_CHECK(doca_pe_create(&lc->pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(lc->pe, lc->ctx));
	EXAMPLE_CHECK(doca_ctx_start(lc->ctx));
}

/* Tear down whatever is left, in the right order (ctx must have nothing outstanding). */
static void rig_down(struct lifecycle *lc)
{
	if (example_ctx_state(lc->ctx) != DOCA_CTX_STATE_IDLE)
		EXAMPLE_CHECK(doca_ctx_stop(lc->ctx));
	if (lc->dst)
		EXAMPLE_CHECK(doca_buf_destroy(lc->dst));
	if (lc->src)
		EXAMPLE_CHECK(doca_buf_destroy(lc->src));
	if (lc->mem)
		EXAMPLE_CHECK(doca_mem_destroy(lc->mem));
	EXAMPLE_CHECK(doca_dev_close(lc->dev));
	EXAMPLE_CHECK(doca_ctx_destroy(lc->ctx));
	EXAMPLE_CHECK(doca_pe_destroy(lc->pe));
}

static void pitfall_header(int n, const char *what, doca_error_t got, doca_error_t want)
{
	printf("\nPitfall %d: %s → %s\n", n, what, doca_error_get_name(got));
	if (got != want)
		example_fail("pitfall %d: expected %s, got %s", n, doca_error_get_name(want),
			     doca_error_get_name(got));
}

/* §4.1: destroying a context that is still running. */
static void pitfall1_destroy_running(const char *dev_name)
{
	struct lifecycle lc = { .dev_name = dev_name };
	struct doca_event *ev;
	unsigned calls;
	doca_error_t err;

	rig_up(&lc, 0);
	EXAMPLE_CHECK(try_copy(&lc));
	err = doca_ctx_destroy(lc.ctx);
	pitfall_header(1, "destroying a running context", err, DOCA_ERROR_BAD_STATE);
	note("setup: a running context, one copy submitted and not yet reaped");
	note("refused: the context is still %s, its task and objects untouched",
	     state_name_of(lc.ctx));
	note("the right way: stop first, reap what is outstanding, then destroy");
	show("", "doca_ctx_stop", doca_ctx_stop(lc.ctx), DOCA_ERROR_IN_PROGRESS);
	note("context state: %s (a task is outstanding)", state_name_of(lc.ctx));
	ev = wait_event(lc.pe, &calls);
	describe_event(ev);
	if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE &&
	    doca_event_get_error(ev) == DOCA_ERROR_SHUTDOWN)
		note("flushed by the stop: the device had not started it");
	else if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS)
		note("completed: the device had already started it");
	else
		example_fail("unexpected event after a stop");
	doca_event_free(ev);
	wait_idle(&lc);
	note("event freed; after doca_pe_progress the context is %s", state_name_of(lc.ctx));
	show("", "doca_ctx_destroy (memory still exists)", doca_ctx_destroy(lc.ctx), DOCA_ERROR_IN_USE);
	note("children first: buffers, memory, device, then the context");
	rig_down(&lc);
}

/* §4.2: a buffer outliving its memory. */
static void pitfall2_buf_outlives_mem(const char *dev_name)
{
	struct lifecycle lc = { .dev_name = dev_name };
	struct doca_event *ev;
	unsigned calls;
	doca_error_t err;

	rig_up(&lc, 0);
	err = doca_mem_destroy(lc.mem);
	pitfall_header(2, "a buffer outliving its memory: destroying the memory first", err,
		       DOCA_ERROR_IN_USE);
	note("setup: a running context, a memory with two buffers");
	if (example_find_mismatch(example_buf_data(lc.src), BUF_LEN, COPY_TAG) != BUF_LEN)
		example_fail("the memory changed although its destruction was refused");
	note("refused: memory and buffers untouched (src still holds its pattern)");
	submit_copy(&lc, DOCA_SUCCESS, "", "doca_task_submit (one copy)");
	show("", "doca_buf_destroy(src) before its event is freed", doca_buf_destroy(lc.src),
	     DOCA_ERROR_IN_USE);
	ev = wait_event(lc.pe, &calls);
	describe_event(ev);
	doca_event_free(ev);
	note("the right way: free the event, destroy the buffers, then the memory");
	show("", "doca_buf_destroy(src)", doca_buf_destroy(lc.src), DOCA_SUCCESS);
	show("", "doca_buf_destroy(dst)", doca_buf_destroy(lc.dst), DOCA_SUCCESS);
	show("", "doca_mem_destroy", doca_mem_destroy(lc.mem), DOCA_SUCCESS);
	lc.src = lc.dst = NULL;
	lc.mem = NULL;
	rig_down(&lc);
}

/* §4.3: events that are never freed exhaust the task pool. */
static void pitfall3_events_not_freed(const char *dev_name)
{
	enum { POOL = 4 };
	struct lifecycle lc = { .dev_name = dev_name };
	struct doca_event *held[POOL];
	struct doca_event *ev;
	unsigned calls;
	doca_error_t err;

	rig_up(&lc, POOL);
	for (int i = 0; i < POOL; i++)
		EXAMPLE_CHECK(try_copy(&lc));
	for (int i = 0; i < POOL; i++)
		held[i] = wait_event(lc.pe, &calls);
	err = try_copy(&lc);
	pitfall_header(3, "never freeing events, the next submit", err, DOCA_ERROR_AGAIN);
	note("setup: doca_ctx_set_max_tasks(%d), %d copies submitted, their %d events", POOL, POOL, POOL);
	note("       reaped with doca_pe_get_event and NOT freed");
	note("refused at once, nothing queued: the pool counts tasks in flight + unfreed events");
	note("the right way: free every event after reading it");
	doca_event_free(held[0]);
	submit_copy(&lc, DOCA_SUCCESS, "", "doca_event_free(one), doca_task_submit");
	for (int i = 1; i < POOL; i++)
		doca_event_free(held[i]);
	ev = wait_event(lc.pe, &calls);
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		example_fail("the resubmitted copy failed: %s",
			     doca_error_get_name(doca_event_get_error(ev)));
	doca_event_free(ev);
	note("every event freed; the resubmitted copy completed");
	rig_down(&lc);
}

int main(int argc, char **argv)
{
	struct lifecycle lc = { 0 };

	lc.dev_name = example_parse_args(argc, argv, about, "sw0", NULL, 0);
	printf("doca-core: the seed lifecycle of a 4 KiB copy on device \"%s\"\n", lc.dev_name);
	printf("Context owns the boundary, Device the capability, Memory the space,\n"
	       "Buffer the data, PE the progress, Event the result.\n\n");

	step1_create_ctx(&lc);
	step2_open_dev(&lc);
	step3_create_mem(&lc);
	step4_create_bufs(&lc);
	step5_start_ctx(&lc);
	step6_submit(&lc);
	step7_reap(&lc);
	step8_teardown(&lc);

	printf("\n--- the seed's three lifecycle pitfalls (§4), each turned into a clear error ---\n");
	pitfall1_destroy_running(lc.dev_name);
	pitfall2_buf_outlives_mem(lc.dev_name);
	pitfall3_events_not_freed(lc.dev_name);

	printf("\nAll eight steps and the three pitfalls behaved as the seed describes.\n");
	return EXIT_SUCCESS;
}
