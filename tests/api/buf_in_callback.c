/*
 * tests/api/buf_in_callback.c — "buffers made per task": an event callback
 * may destroy its own task's buffers; they go when the event does. A
 * buffer another task still uses stays refused (IN_USE), and the refusal
 * changes nothing.
 */
#include <stdatomic.h>

#include "common.h"

#define TASKS 100u

struct per_task {
	struct doca_mem *mem;
	struct doca_buf *other; /* a buffer of a task still in flight, or NULL */
	unsigned done;
	unsigned destroyed;
	doca_error_t other_rc[2]; /* per task: the try on `other` */
	uint64_t order[2];        /* the tasks, in callback order */
};

static struct doca_buf *bufs[TASKS][2];

static void destroy_own_buffers(struct doca_event *ev, union doca_data ud)
{
	struct per_task *p = ud.ptr;
	uint64_t i = doca_event_get_user_data(ev).u64;

	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	if (p->other != NULL && i < 2) {
		p->other_rc[i] = doca_buf_destroy(p->other);
		p->order[p->done] = i;
	}
	if (doca_buf_destroy(bufs[i][0]) == DOCA_SUCCESS)
		p->destroyed++;
	if (doca_buf_destroy(bufs[i][1]) == DOCA_SUCCESS)
		p->destroyed++;
	/* the memory still counts them until the event is gone */
	cr_assert_eq(doca_mem_destroy(p->mem), DOCA_ERROR_IN_USE);
	p->done++;
}

static void setup(struct api_fixture *f, struct per_task *p, struct doca_mem **mem)
{
	fixture_init(f, "sw0", 64, 4);
	assert_ok(doca_mem_create(f->ctx, 2 * 64 * TASKS, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, mem));
	p->mem = *mem;
	assert_ok(doca_ctx_set_event_cb(f->ctx, destroy_own_buffers));
	assert_ok(doca_ctx_set_user_data(f->ctx, (union doca_data){ .ptr = p }));
	assert_ok(doca_ctx_start(f->ctx));
}

Test(buf_in_callback, a_callback_destroys_its_own_tasks_buffers)
{
	struct api_fixture f;
	struct per_task p = { 0 };
	struct doca_mem *mem;
	void *data;

	setup(&f, &p, &mem);
	assert_ok(doca_mem_get_addr(mem, &data));
	for (unsigned i = 0; i < TASKS; i++) {
		uint8_t *base = (uint8_t *)data + 128 * i;

		fill_pattern(base, 64, i + 1);
		assert_ok(doca_buf_create(mem, 128 * i, 64, &bufs[i][0]));
		assert_ok(doca_buf_create(mem, 128 * i + 64, 64, &bufs[i][1]));
		assert_ok(submit_copy(f.ctx, bufs[i][0], bufs[i][1], i, 0));
		uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

		while (p.done == i && now_ns() < deadline)
			(void)doca_pe_progress(f.pe);
		cr_assert_eq(p.done, i + 1, "task %u delivered", i);
		cr_assert_eq(pattern_mismatch(base + 64, 64, i + 1), 64, "task %u copied", i);
		assert_doca(doca_buf_destroy(bufs[i][0]), DOCA_ERROR_INVALID_VALUE); /* gone */
	}
	cr_assert_eq(p.destroyed, 2 * TASKS);
	assert_ok(doca_mem_destroy(mem)); /* no buffer left */
	fixture_fini(&f);
}

/* Two tasks read one source; each callback tries to destroy it. The first
 * callback runs while the other task still pins it (its event is released after
 * its own callback), so it is refused; the second succeeds. */
Test(buf_in_callback, a_buffer_another_task_uses_stays_refused)
{
	struct api_fixture f;
	struct per_task p = { 0 };
	struct doca_mem *mem;
	struct doca_buf *shared_src;

	setup(&f, &p, &mem);
	assert_ok(doca_buf_create(mem, 0, 64, &shared_src));
	assert_ok(doca_buf_create(mem, 64, 64, &bufs[0][1]));
	assert_ok(doca_buf_create(mem, 128, 64, &bufs[1][1]));
	bufs[0][0] = bufs[1][0] = NULL; /* the shared source is tried through `other` */
	p.other = shared_src;
	p.other_rc[0] = p.other_rc[1] = DOCA_ERROR_UNKNOWN;
	assert_ok(submit_copy(f.ctx, shared_src, bufs[0][1], 0, 0));
	assert_ok(submit_copy(f.ctx, shared_src, bufs[1][1], 1, 0));
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;

	while (p.done < 2 && now_ns() < deadline)
		(void)doca_pe_progress(f.pe);
	cr_assert_eq(p.done, 2);
	assert_doca(p.other_rc[p.order[0]], DOCA_ERROR_IN_USE);
	assert_doca(p.other_rc[p.order[1]], DOCA_SUCCESS);
	cr_assert_eq(p.destroyed, 2, "each task's own destination");
	assert_doca(doca_buf_destroy(shared_src), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mem_destroy(mem));
	fixture_fini(&f);
}
