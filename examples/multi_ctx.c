/*
 * multi_ctx.c — several contexts sharing one device and one progress engine.
 *
 *   ./multi_ctx [--dev NAME] [--tasks N] [--len N]
 *
 * Four contexts bind the same open device; each has its own memory, buffers,
 * user data and event callback, and all are connected to one PE. Copies are
 * submitted to the four round robin, one PE is progressed, and the program
 * checks that each context received exactly its own completions with its own
 * data (a distinct pattern per context catches any mix-up).
 */
#include "example_common.h"

#define NUM_CTX 4

static const char about[] = "four contexts on one device and one progress engine";

struct ctx_state {
	unsigned id;
	struct doca_ctx *ctx;
	struct example_slots slots;
	bool *seen;        /* per copy: its event arrived */
	size_t completed;
};

/* user_data of a copy: the context id in the high half, the copy index in the low. */
static uint64_t tag_of(unsigned id, size_t i)
{
	return (uint64_t)id << 32 | i;
}

static void on_event(struct doca_event *ev, union doca_data ctx_user_data)
{
	struct ctx_state *cs = ctx_user_data.ptr;
	uint64_t tag = doca_event_get_user_data(ev).u64;
	size_t i = (size_t)(tag & 0xffffffffu);

	if (doca_event_get_ctx(ev) != cs->ctx || tag >> 32 != cs->id)
		example_fail("ctx %u received an event of another context (tag %#llx)", cs->id,
			     (unsigned long long)tag);
	if (i >= cs->slots.count || cs->seen[i])
		example_fail("ctx %u: unexpected or duplicate event for copy %zu", cs->id, i);
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS ||
	    doca_event_get_bytes(ev) != cs->slots.len)
		example_fail("ctx %u copy %zu: status %s, error %s, %zu bytes", cs->id, i,
			     example_status_name(doca_event_get_status(ev)),
			     doca_error_get_name(doca_event_get_error(ev)), doca_event_get_bytes(ev));
	example_slots_verify(&cs->slots, i, example_seed(cs->id, i));
	cs->seen[i] = true;
	cs->completed++;
}

static void setup_ctx(struct ctx_state *cs, unsigned id, struct doca_dev *dev, struct doca_pe *pe,
		      size_t tasks, size_t len)
{
	cs->id = id;
	EXAMPLE_CHECK(doca_ctx_create(&cs->ctx));
	EXAMPLE_CHECK(doca_ctx_set_dev(cs->ctx, dev));
	EXAMPLE_CHECK(doca_ctx_set_user_data(cs->ctx, (union doca_data){ .ptr = cs }));
	EXAMPLE_CHECK(doca_ctx_set_event_cb(cs->ctx, on_event));
	example_slots_create(cs->ctx, tasks, len, &cs->slots);
	for (size_t i = 0; i < tasks; i++)
		example_slots_fill(&cs->slots, i, example_seed(id, i));
	cs->seen = calloc(tasks, sizeof(*cs->seen));
	if (!cs->seen)
		example_fail("out of memory");
	EXAMPLE_CHECK(doca_pe_connect_ctx(pe, cs->ctx));
	EXAMPLE_CHECK(doca_ctx_start(cs->ctx));
}

static void submit_round_robin(struct ctx_state *cs, size_t tasks)
{
	for (size_t i = 0; i < tasks; i++)
		for (unsigned c = 0; c < NUM_CTX; c++)
			EXAMPLE_CHECK(example_slots_submit(cs[c].ctx, &cs[c].slots, i, tag_of(c, i)));
}

static size_t total_completed(const struct ctx_state *cs)
{
	size_t sum = 0;

	for (unsigned c = 0; c < NUM_CTX; c++)
		sum += cs[c].completed;
	return sum;
}

static void progress_all(struct doca_pe *pe, const struct ctx_state *cs, size_t want)
{
	uint64_t start = example_now_ns();
	unsigned long calls = 0;

	while (total_completed(cs) < want) {
		doca_pe_progress(pe);
		calls++;
		if (doca_pe_get_event(pe))
			example_fail("doca_pe_get_event returned an event of a context with a callback");
		example_check_deadline(start, "the completions");
	}
	printf("one PE, %lu progress calls, %.3f ms\n", calls, (double)(example_now_ns() - start) / 1e6);
}

/* Stop every context, destroy its children, close the shared device, then the rest. */
static void teardown(struct ctx_state *cs, struct doca_dev *dev, struct doca_pe *pe)
{
	for (unsigned c = 0; c < NUM_CTX; c++) {
		EXAMPLE_CHECK(doca_ctx_stop(cs[c].ctx));
		example_slots_destroy(&cs[c].slots);
	}
	EXAMPLE_CHECK(doca_dev_close(dev));
	for (unsigned c = 0; c < NUM_CTX; c++) {
		EXAMPLE_CHECK(doca_ctx_destroy(cs[c].ctx));
		free(cs[c].seen);
	}
	EXAMPLE_CHECK(doca_pe_destroy(pe));
}

int main(int argc, char **argv)
{
	unsigned long tasks = 32, len = 4096;
	struct example_opt opts[] = {
		{ "tasks", &tasks, "copies per context (at most 1024)" },
		{ "len", &len, "bytes per copy" },
	};
	const char *dev_name = example_parse_args(argc, argv, about, "sw0", opts, 2);
	struct ctx_state cs[NUM_CTX] = { 0 };
	struct doca_dev *dev;
	struct doca_pe *pe;

	if (!tasks || tasks > DOCA_CTX_DEFAULT_MAX_TASKS || !len)
		example_fail("--tasks must be 1..%u and --len positive", DOCA_CTX_DEFAULT_MAX_TASKS);
	printf("multi_ctx: %d contexts on \"%s\", %lu copies of %lu bytes each\n", NUM_CTX, dev_name,
	       tasks, len);
	dev = example_open_dev(dev_name);
	EXAMPLE_CHECK(doca_pe_create(&pe));
	for (unsigned c = 0; c < NUM_CTX; c++)
		setup_ctx(&cs[c], c, dev, pe, tasks, len);

	submit_round_robin(cs, tasks);
	progress_all(pe, cs, NUM_CTX * tasks);
	for (unsigned c = 0; c < NUM_CTX; c++) {
		if (cs[c].completed != tasks)
			example_fail("ctx %u: %zu completions for %lu copies", c, cs[c].completed, tasks);
		printf("  ctx %u: %zu completions through its own callback, data verified\n", c,
		       cs[c].completed);
	}
	teardown(cs, dev, pe);
	printf("all %d contexts completed exactly their own copies\n", NUM_CTX);
	return EXIT_SUCCESS;
}
