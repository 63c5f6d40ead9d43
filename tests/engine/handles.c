/*
 * tests/engine/handles.c — handles carry a generation: a buffer, memory,
 * context, device or PE handle kept after its destroy is refused
 * (INVALID_VALUE, logged, counted) even once a new object lives at the same
 * address, and the refusal leaves the new object alone.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/task_pool.h"

#define ACCESS_RW (DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE)

struct tree {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *mem;
};

static void tree_up(struct tree *t)
{
	cr_assert_eq(doca_ctx_create(&t->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_open("sw0", &t->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_set_dev(t->ctx, t->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_create(t->ctx, 4096, ACCESS_RW, &t->mem), DOCA_SUCCESS);
}

static void tree_down(struct tree *t)
{
	cr_assert_eq(doca_mem_destroy(t->mem), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(t->dev), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(t->ctx), DOCA_SUCCESS);
}

/* After a grace period the cell is free again; the next object of the
 * kind takes it (the free lists are LIFO and this test is alone). */
static void settle(void)
{
	doca_rcu_barrier();
}

/* A started context of @p t on a new PE (*pe), two 64-byte buffers of its
 * memory, and this thread running the PE (its guard parked). */
static void pe_thread_up(struct tree *t, struct doca_pe **pe, struct doca_buf **src, struct doca_buf **dst)
{
	cr_assert_eq(doca_pe_create(pe), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_connect_ctx(*pe, t->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(t->mem, 0, 64, src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_create(t->mem, 64, 64, dst), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_start(t->ctx), DOCA_SUCCESS);
	(void)doca_pe_progress(*pe); /* this thread now runs the PE: its guard parked */
}

/* The first event @p pe hands out within 1000 progress calls (asserted). */
static struct doca_event *first_event(struct doca_pe *pe)
{
	struct doca_event *ev = NULL;

	for (int i = 0; i < 1000 && ev == NULL; i++) {
		(void)doca_pe_progress(pe);
		ev = doca_pe_get_event(pe);
	}
	cr_assert_neq(ev, NULL);
	return ev;
}

/* The one event @p pe has: its task's user data @p u64; freed. */
static void only_event_is(struct doca_pe *pe, uint64_t u64)
{
	struct doca_event *ev = first_event(pe);

	cr_assert_eq(doca_event_get_user_data(ev).u64, u64, "only the good task ran");
	doca_event_free(ev);
	cr_assert_eq(doca_pe_get_event(pe), NULL);
}

/* pe_thread_up's undone: the context stopped, all destroyed. */
static void pe_thread_down(struct tree *t, struct doca_pe *pe, struct doca_buf *src, struct doca_buf *dst)
{
	cr_assert_eq(doca_ctx_stop(t->ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(dst), DOCA_SUCCESS);
	tree_down(t);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
}

/* A tree whose context runs on a PE of this thread, with two buffers. */
struct rig {
	struct tree t;
	struct doca_pe *pe;
	struct doca_buf *src, *dst;
};

static void rig_up(struct rig *r)
{
	tree_up(&r->t);
	pe_thread_up(&r->t, &r->pe, &r->src, &r->dst);
}

static void rig_down(struct rig *r)
{
	pe_thread_down(&r->t, r->pe, r->src, r->dst);
}

Test(handles, a_stale_buffer_handle_cannot_touch_the_buffer_in_its_cell)
{
	struct tree t;
	struct doca_buf *old, *cur;
	size_t len = 0;

	tree_up(&t);
	cr_assert_eq(doca_buf_create(t.mem, 0, 64, &old), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(old), DOCA_SUCCESS);
	settle();
	cr_assert_eq(doca_buf_create(t.mem, 64, 128, &cur), DOCA_SUCCESS);
	cr_assert_eq(handle_addr(cur), handle_addr(old), "the cell was reused");
	cr_assert_neq(cur, old, "with a new generation");

	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_buf_destroy(old), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_buf_get_len(old, &len), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(len, 0);
	cr_assert_eq(doca_stale_handle_count(), stale + 2);
	cr_assert_eq(doca_buf_get_len(cur, &len), DOCA_SUCCESS, "the new buffer is untouched");
	cr_assert_eq(len, 128);
	cr_assert_eq(doca_buf_destroy(cur), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(cur), DOCA_ERROR_INVALID_VALUE, "destroyed twice");
	cr_assert_eq(doca_stale_handle_count(), stale + 3);
	tree_down(&t);
}

Test(handles, a_stale_memory_handle_cannot_touch_the_memory_in_its_cell)
{
	struct tree t;
	struct doca_mem *old;
	struct doca_buf *buf;
	size_t len = 0;

	tree_up(&t);
	cr_assert_eq(doca_mem_create(t.ctx, 64, ACCESS_RW, &old), DOCA_SUCCESS);
	cr_assert_eq(doca_mem_destroy(old), DOCA_SUCCESS);
	settle();
	struct doca_mem *cur;

	cr_assert_eq(doca_mem_create(t.ctx, 256, ACCESS_RW, &cur), DOCA_SUCCESS);
	cr_assert_eq(handle_addr(cur), handle_addr(old), "the cell was reused");

	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_mem_destroy(old), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_buf_create(old, 0, 16, &buf), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale + 2);
	cr_assert_eq(doca_mem_get_len(cur, &len), DOCA_SUCCESS);
	cr_assert_eq(len, 256, "the new memory is untouched");
	cr_assert_eq(doca_mem_destroy(cur), DOCA_SUCCESS);
	tree_down(&t);
}

Test(handles, a_stale_context_handle_cannot_touch_the_context_in_its_cell)
{
	struct doca_ctx *old, *cur;
	uint32_t n = 0;

	cr_assert_eq(doca_ctx_create(&old), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(old), DOCA_SUCCESS);
	settle();
	cr_assert_eq(doca_ctx_create(&cur), DOCA_SUCCESS);
	cr_assert_eq(handle_addr(cur), handle_addr(old), "the cell was reused");
	cr_assert_eq(doca_ctx_set_max_tasks(cur, 7), DOCA_SUCCESS);

	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_ctx_set_max_tasks(old, 9), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_ctx_set_max_tasks(old, 0), DOCA_ERROR_INVALID_VALUE, "the handle, then n");
	cr_assert_eq(doca_ctx_destroy(old), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_ctx_start(old), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale + 4);
	cr_assert_eq(doca_ctx_get_max_tasks(cur, &n), DOCA_SUCCESS);
	cr_assert_eq(n, 7, "the new context is untouched");
	cr_assert_eq(doca_ctx_destroy(cur), DOCA_SUCCESS);
}

/* The PE thread's single submit takes its owner's way (engine/task.c,
 * task_one_owner), which compares the context's generation under its
 * guard: a stale handle whose cell a new context runs in, on the same PE,
 * is refused and counted, and the new context's tasks are untouched. */
Test(handles, a_stale_context_handle_is_refused_by_the_pe_threads_submit_to_the_context_in_its_cell)
{
	struct tree t;
	struct doca_ctx *old;
	struct doca_pe *pe;
	struct doca_buf *src, *dst;
	enum doca_ctx_state state = DOCA_CTX_STATE_RUNNING;

	cr_assert_eq(doca_ctx_create(&old), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(old), DOCA_SUCCESS);
	settle();
	tree_up(&t);
	cr_assert_eq(handle_addr(t.ctx), handle_addr(old), "the cell was reused");
	pe_thread_up(&t, &pe, &src, &dst);

	struct doca_task_desc desc = { .type = DOCA_TASK_COPY, .src = src, .dst = dst, .user_data.u64 = 5 };
	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_task_submit(old, &desc), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale + 1);
	desc.user_data.u64 = 6;
	cr_assert_eq(doca_task_submit(t.ctx, &desc), DOCA_SUCCESS, "the new context is untouched");

	struct doca_event *ev = first_event(pe);

	cr_assert_eq(doca_event_get_user_data(ev).u64, 6, "only the new context's task ran");
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	doca_event_free(ev);
	cr_assert_eq(doca_pe_get_event(pe), NULL);
	cr_assert_eq(doca_ctx_stop(t.ctx), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_get_state(t.ctx, &state), DOCA_SUCCESS);
	cr_assert_eq(state, DOCA_CTX_STATE_IDLE);
	cr_assert_eq(doca_buf_destroy(src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(dst), DOCA_SUCCESS);
	tree_down(&t);
	cr_assert_eq(doca_pe_destroy(pe), DOCA_SUCCESS);
}

/* A handle whose address is a live object's but whose tag is not its
 * current generation's (the next ones, one in the tag's low bits as a
 * misaligned pointer has, one in its top bits) is refused as stale by
 * every way that checks one: the getters' (handle_obj), the owner's single
 * submit's context and buffers, the burst's buffers, and the get's PE; the
 * refusals change nothing (the good handles still work after them). */
Test(handles, a_handle_with_another_generations_tag_is_refused_on_every_check_way)
{
	struct rig r;
	uint32_t accepted = 9;
	size_t len = 0;

	rig_up(&r);

	const uint32_t others[] = { 1u, 63u, 64u, HANDLE_GEN_MASK };

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct doca_buf *bad_dst = handle_pack(handle_addr(r.dst), handle_gen(r.dst) + others[i]);
		struct doca_ctx *bad_ctx = handle_pack(handle_addr(r.t.ctx), handle_gen(r.t.ctx) + others[i]);
		struct doca_pe *bad_pe = handle_pack(handle_addr(r.pe), handle_gen(r.pe) + others[i]);
		struct doca_task_desc good = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst };
		struct doca_task_desc bad = { .type = DOCA_TASK_COPY, .src = r.src, .dst = bad_dst };
		struct doca_task_desc descs[2] = { bad, good };
		uint64_t stale = doca_stale_handle_count();

		cr_assert_neq(bad_dst, r.dst);
		cr_assert_eq(doca_buf_get_len(bad_dst, &len), DOCA_ERROR_INVALID_VALUE, "tag + %u", others[i]);
		cr_assert_eq(len, 0);
		cr_assert_eq(doca_task_submit(r.t.ctx, &bad), DOCA_ERROR_INVALID_VALUE, "tag + %u", others[i]);
		cr_assert_eq(doca_task_submit(bad_ctx, &good), DOCA_ERROR_INVALID_VALUE, "tag + %u", others[i]);
		cr_assert_eq(doca_task_submit_batch(r.t.ctx, descs, 2, &accepted), DOCA_ERROR_INVALID_VALUE);
		cr_assert_eq(accepted, 0);
		cr_assert_eq(doca_pe_get_event(bad_pe), NULL);
		cr_assert_eq(doca_stale_handle_count(), stale + 5, "every refusal counted as stale (tag + %u)",
			     others[i]);
	}
	cr_assert_eq(doca_buf_get_len(r.dst, &len), DOCA_SUCCESS, "the buffer is untouched");
	cr_assert_eq(len, 64);

	struct doca_task_desc desc = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst, .user_data.u64 = 7 };
	cr_assert_eq(doca_task_submit(r.t.ctx, &desc), DOCA_SUCCESS, "the good handles still work");

	only_event_is(r.pe, 7);
	rig_down(&r);
}

Test(handles, a_wrong_type_handle_is_no_stale_handle)
{
	struct tree t;
	uint64_t stale;
	size_t len;

	tree_up(&t);
	stale = doca_stale_handle_count();
	cr_assert_eq(doca_buf_get_len((struct doca_buf *)t.mem, &len), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_ctx_destroy((struct doca_ctx *)t.mem), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale, "a live object of another type");
	tree_down(&t);
}

Test(handles, a_stale_pe_handle_cannot_touch_the_pe_in_its_cell)
{
	struct doca_pe *old, *cur;
	int fd = -1, cur_fd = -1;

	cr_assert_eq(doca_pe_create(&old), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(old), DOCA_SUCCESS);
	settle();
	cr_assert_eq(doca_pe_create(&cur), DOCA_SUCCESS);
	cr_assert_eq(handle_addr(cur), handle_addr(old), "the cell was reused");
	cr_assert_neq(cur, old, "with a new generation");
	cr_assert_eq(doca_pe_get_notification_handle(cur, &cur_fd), DOCA_SUCCESS);

	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_pe_destroy(old), DOCA_ERROR_INVALID_VALUE, "destroyed twice");
	cr_assert_eq(doca_pe_get_notification_handle(old, &fd), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(fd, -1);
	cr_assert_eq(doca_pe_get_event(old), NULL);
	struct doca_event *evs[2] = { NULL, NULL };

	cr_assert_eq(doca_pe_get_events(old, evs, 2), 0);
	cr_assert(evs[0] == NULL && evs[1] == NULL);
	cr_assert_eq(doca_stale_handle_count(), stale + 4, "every refusal of the stale handle counted");
	fd = -1;
	cr_assert_eq(doca_pe_get_notification_handle(cur, &fd), DOCA_SUCCESS, "the new PE is untouched");
	cr_assert_eq(fd, cur_fd);
	cr_assert_eq(doca_pe_destroy(cur), DOCA_SUCCESS);
	cr_assert_eq(doca_pe_destroy(cur), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale + 5);
}

Test(handles, a_stale_device_handle_cannot_touch_the_device_in_its_cell)
{
	struct doca_dev *old, *cur;
	struct doca_ctx *ctx;
	const char *name = NULL;

	cr_assert_eq(doca_dev_open("sw0", &old), DOCA_SUCCESS);
	cr_assert_eq(doca_dev_close(old), DOCA_SUCCESS);
	settle();
	cr_assert_eq(doca_dev_open("sw0:engines=1", &cur), DOCA_SUCCESS);
	cr_assert_eq(handle_addr(cur), handle_addr(old), "the cell was reused");
	cr_assert_eq(doca_ctx_create(&ctx), DOCA_SUCCESS);

	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_dev_close(old), DOCA_ERROR_INVALID_VALUE, "closed twice");
	cr_assert_eq(doca_dev_get_name(old, &name), DOCA_ERROR_INVALID_VALUE);
	cr_assert_null(name);
	cr_assert_eq(doca_ctx_set_dev(ctx, old), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale + 3);
	cr_assert_eq(doca_dev_get_name(cur, &name), DOCA_SUCCESS, "the new device is untouched");
	cr_assert_str_eq(name, "sw0");
	cr_assert_eq(doca_ctx_set_dev(ctx, cur), DOCA_SUCCESS, "and the refused bind bound nothing");
	cr_assert_eq(doca_dev_close(cur), DOCA_SUCCESS);
	cr_assert_eq(doca_ctx_destroy(ctx), DOCA_SUCCESS);
}

/* A cell whose generation reached the last value a handle can carry: its
 * object's handles work; its destroy takes the generation round to 0, and
 * the cell is retired, never handed out again. A handle of the cell's
 * first object (generation 0, kept over those 2^22 destroys) stays stale:
 * it was once applied to the cell's next PE (destroyed it). */
Test(handles, a_cell_whose_generation_goes_round_is_retired)
{
	struct doca_pe *first, *last, *cur;
	int fd = -1;

	cr_assert_eq(doca_pe_create(&first), DOCA_SUCCESS);
	struct doca_pe *cell = handle_deref(first);
	struct doca_pe *ancient = handle_pack(cell, 0);

	atomic_store(&cell->handle, (uintptr_t)handle_pack(cell, HANDLE_GEN_MASK)); /* as after 2^22 - 1 destroys */
	last = handle_of(cell);
	cr_assert_eq(doca_pe_get_notification_handle(last, &fd), DOCA_SUCCESS, "the last generation works");
	cr_assert_geq(fd, 0);
	cr_assert_eq(doca_pe_destroy(last), DOCA_SUCCESS);
	settle();
	cr_assert_eq(doca_pe_create(&cur), DOCA_SUCCESS);
	cr_assert_neq(handle_addr(cur), (void *)cell, "the cell was retired, not reused");
	cr_assert_eq(head_load(&cell->magic), MAGIC_DEAD);
	cr_assert_eq(atomic_load(&cell->handle), (uintptr_t)cell, "generation 0's handle: the address");

	uint64_t stale = doca_stale_handle_count();

	fd = -1;
	cr_assert_eq(doca_pe_get_notification_handle(ancient, &fd), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(fd, -1, "the refused call wrote nothing");
	cr_assert_eq(doca_pe_destroy(ancient), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_pe_destroy(last), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale + 3);
	cr_assert_eq(doca_pe_get_notification_handle(cur, &fd), DOCA_SUCCESS, "the new PE is untouched");
	cr_assert_geq(fd, 0);
	cr_assert_eq(doca_pe_destroy(cur), DOCA_SUCCESS);
	settle();
	cr_assert_eq(doca_pe_create(&first), DOCA_SUCCESS);
	cr_assert_neq(handle_addr(first), (void *)cell, "the retired cell stays out of use");
	cr_assert_eq(doca_pe_destroy(first), DOCA_SUCCESS);
}

/* A buffer's check is one compare of h ^ the epoch's fold with the
 * buffer's folded word (engine/handle.h, "A buffer's word"): a live
 * object of another kind named as a buffer is refused on every check
 * way (the getter, the destroy, the owner's single submit, the burst's
 * first task and its fill loop), as not a buffer (INVALID_VALUE, not
 * counted as stale), and nothing changes. */
Test(handles, an_object_of_another_kind_is_refused_as_a_buffer_on_every_check_way)
{
	struct rig r;
	uint32_t accepted = 9;
	size_t len = 0;

	rig_up(&r);

	struct doca_buf *const others[] = { (struct doca_buf *)r.t.mem, (struct doca_buf *)r.t.ctx,
					    (struct doca_buf *)r.pe, (struct doca_buf *)r.t.dev };
	uint64_t stale = doca_stale_handle_count();

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct doca_task_desc good = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst, .user_data.u64 = i };
		struct doca_task_desc bad_src = { .type = DOCA_TASK_COPY, .src = others[i], .dst = r.dst };
		struct doca_task_desc bad_dst = { .type = DOCA_TASK_COPY, .src = r.src, .dst = others[i] };
		struct doca_task_desc first_bad[2] = { bad_dst, good };
		struct doca_task_desc second_bad[2] = { good, bad_src };

		cr_assert_eq(doca_buf_get_len(others[i], &len), DOCA_ERROR_INVALID_VALUE, "kind %zu", i);
		cr_assert_eq(len, 0);
		cr_assert_eq(doca_task_submit(r.t.ctx, &bad_src), DOCA_ERROR_INVALID_VALUE, "kind %zu", i);
		cr_assert_eq(doca_task_submit(r.t.ctx, &bad_dst), DOCA_ERROR_INVALID_VALUE, "kind %zu", i);
		cr_assert_eq(doca_task_submit_batch(r.t.ctx, first_bad, 2, &accepted), DOCA_ERROR_INVALID_VALUE);
		cr_assert_eq(accepted, 0);
		cr_assert_eq(doca_task_submit_batch(r.t.ctx, second_bad, 2, &accepted), DOCA_ERROR_INVALID_VALUE);
		cr_assert_eq(accepted, 1, "the fill loop's check refused the second (kind %zu)", i);
		only_event_is(r.pe, i);
	}
	cr_assert_eq(doca_buf_destroy(others[0]), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale, "a live object of another kind is no stale handle");
	rig_down(&r);
}

/* A buffer whose word is folded with another epoch's fold and whose
 * epoch is that one (as an inherited buffer's is, without a fork): every
 * check way refuses it as inherited, BAD_STATE exactly, not stale; with
 * its word and epoch back, it works. */
Test(handles, a_buffer_folded_in_another_epoch_is_refused_as_inherited_on_every_check_way)
{
	struct rig r;
	uint32_t accepted = 9;
	size_t len = 0;

	rig_up(&r);

	struct doca_buf *cell = handle_deref(r.dst), *other;
	const uintptr_t word = atomic_load(&cell->handle);

	cr_assert_eq(doca_buf_create(r.t.mem, 128, 64, &other), DOCA_SUCCESS);

	cr_assert_eq(word, buf_word_made(r.dst, g_buf_fold), "a live buffer's word is its handle folded");
	cr_assert_neq(word, (uintptr_t)r.dst);
	head_store(&cell->epoch, g_fork_epoch + 1u);
	atomic_store(&cell->handle, buf_word_made(r.dst, buf_fold_made(g_fork_epoch + 1u)));

	struct doca_task_desc good = { .type = DOCA_TASK_COPY, .src = r.dst, .dst = r.src, .user_data.u64 = 5 };
	struct doca_task_desc bad = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst };
	struct doca_task_desc second_bad[2] = { { .type = DOCA_TASK_COPY, .src = r.src, .dst = other }, bad };
	uint64_t stale = doca_stale_handle_count();

	cr_assert_eq(doca_buf_get_len(r.dst, &len), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(len, 0);
	cr_assert_eq(doca_task_submit(r.t.ctx, &bad), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_task_submit(r.t.ctx, &good), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_task_submit_batch(r.t.ctx, &bad, 1, &accepted), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(accepted, 0);
	cr_assert_eq(doca_task_submit_batch(r.t.ctx, second_bad, 2, &accepted), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(accepted, 1);
	only_event_is(r.pe, 0);
	cr_assert_eq(doca_buf_destroy(r.dst), DOCA_ERROR_BAD_STATE);
	cr_assert_eq(doca_stale_handle_count(), stale, "an inherited buffer is no stale handle");

	head_store(&cell->epoch, g_fork_epoch);
	atomic_store(&cell->handle, word);
	cr_assert_eq(doca_buf_get_len(r.dst, &len), DOCA_SUCCESS, "back in this epoch");
	cr_assert_eq(len, 64);
	cr_assert_eq(doca_task_submit(r.t.ctx, &good), DOCA_SUCCESS);
	only_event_is(r.pe, 5);
	cr_assert_eq(doca_buf_destroy(other), DOCA_SUCCESS);
	rig_down(&r);
}

/* A buffer's cell at the last generation a handle carries (its word the
 * folded handle of generation 2^22 - 1): the handle works; its destroy
 * takes the generation round to 0 and the word to the plain address, and
 * the cell is retired. The first generation's handle and the last are
 * then stale, and so is the plain word taken as a handle. */
Test(handles, a_buffer_cell_whose_generation_goes_round_is_retired)
{
	struct tree t;
	struct doca_buf *first, *cur;

	tree_up(&t);
	cr_assert_eq(doca_buf_create(t.mem, 0, 64, &first), DOCA_SUCCESS);

	struct doca_buf *cell = handle_deref(first);
	struct doca_buf *last = handle_pack(cell, HANDLE_GEN_MASK);
	size_t len = 0;

	atomic_store(&cell->handle, buf_word_made(last, g_buf_fold)); /* as after 2^22 - 1 destroys */
	cr_assert_eq(doca_buf_get_len(last, &len), DOCA_SUCCESS, "the last generation works");
	cr_assert_eq(len, 64);
	cr_assert_eq(doca_buf_destroy(last), DOCA_SUCCESS);
	cr_assert_eq(atomic_load(&cell->handle), (uintptr_t)cell, "generation 0's handle, plain: the address");
	settle();
	cr_assert_eq(doca_buf_create(t.mem, 0, 64, &cur), DOCA_SUCCESS);
	cr_assert_neq(handle_addr(cur), (void *)cell, "the cell was retired, not reused");

	struct doca_buf *ancient = handle_pack(cell, 0);
	uint64_t stale = doca_stale_handle_count();

	len = 0;
	cr_assert_eq(doca_buf_get_len(ancient, &len), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(len, 0);
	cr_assert_eq(doca_buf_get_len((struct doca_buf *)atomic_load(&cell->handle), &len), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_buf_destroy(ancient), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_buf_destroy(last), DOCA_ERROR_INVALID_VALUE);
	cr_assert_eq(doca_stale_handle_count(), stale + 4);
	cr_assert_eq(doca_buf_get_len(cur, &len), DOCA_SUCCESS, "the new buffer is untouched");
	cr_assert_eq(doca_buf_destroy(cur), DOCA_SUCCESS);
	tree_down(&t);
}

/* An event slot at the last generation a handle carries (its gs that
 * generation's FREE, as after 2^22 - 1 uses): its handout is that
 * generation's handle and works; either free's claim takes the
 * generation round to 0 (the carry out of the gs's top bit dropped,
 * engine.h), the slot's next handle is its plain address, and the last
 * generation's handle is then stale (refused, counted, nothing freed
 * twice: the slot's one credit comes back once). */
Test(handles, an_event_slot_whose_generation_goes_round_hands_out_generation_0)
{
	struct rig r;

	rig_up(&r);
	for (uint64_t way = 0; way < 2; way++) {
		struct doca_task_desc task = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst,
					       .user_data.u64 = 10 + way };

		cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
		struct doca_event *first = first_event(r.pe);
		struct doca_event *slot = handle_deref(first);

		doca_event_free(first);
		atomic_store(&slot->gs, ev_gs(HANDLE_GEN_MASK, EV_FREE)); /* as after 2^22 - 1 uses */
		cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
		struct doca_event *last = first_event(r.pe);

		cr_assert_eq(last, handle_pack(slot, HANDLE_GEN_MASK), "the slot's last generation (way %lu)", way);
		cr_assert_eq(doca_event_get_user_data(last).u64, 10 + way, "the last generation works");
		cr_assert_eq(doca_event_get_status(last), DOCA_EVENT_STATUS_SUCCESS);
		if (way == 0)
			doca_event_free(last);
		else
			doca_event_free_bulk(&last, 1);
		cr_assert_eq(atomic_load(&slot->gs), ev_gs(0, EV_FREE), "generation 0, FREE (way %lu)", way);

		uint64_t stale = doca_stale_handle_count();

		doca_event_free(last);
		doca_event_free_bulk(&last, 1);
		cr_assert_eq(doca_stale_handle_count(), stale + 2, "the last generation's handle is stale");
		cr_assert_eq(doca_event_get_user_data(last).u64, 0);
		task.user_data.u64 = 20 + way;
		cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
		struct doca_event *next = first_event(r.pe);

		cr_assert_eq(next, slot, "generation 0's handle: the slot's address (way %lu)", way);
		cr_assert_eq(doca_event_get_user_data(next).u64, 20 + way);
		doca_event_free(next);
		cr_assert_eq(doca_pe_get_event(r.pe), NULL, "nothing else ran");
	}
	rig_down(&r);
}

/* Every slot's PE word (engine.h, struct doca_event's `pe`) is its run's
 * PE from the slot's chunk_make on, and stays so after the slot's free
 * and after the run's retirement scrubs the slot (the frees find the PE
 * by it before they claim: engine/event.c). A second PE's context whose
 * pool takes the same cells then stores its own PE there. */
Test(handles, an_event_slots_pe_word_is_its_runs_pe_and_survives_the_scrub)
{
	struct rig r;

	rig_up(&r);
	struct doca_task_desc task = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst, .user_data.u64 = 1 };

	cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
	struct doca_event *h = first_event(r.pe);
	struct doca_event *slot = handle_deref(h);
	struct doca_pe *pe_addr = handle_addr(r.pe);

	cr_assert_eq(atomic_load(&slot->pe), pe_addr, "the slot's PE word is its run's PE");
	cr_assert_eq(slot->run->pe, pe_addr);
	doca_event_free(h);
	cr_assert_eq(atomic_load(&slot->pe), pe_addr, "a free leaves it");
	cr_assert_eq(doca_ctx_stop(r.t.ctx), DOCA_SUCCESS);
	settle();
	cr_assert_eq(slot->run, NULL, "the run's retirement scrubbed the slot");
	cr_assert_eq(atomic_load(&slot->pe), pe_addr, "the scrub leaves the PE word");
	cr_assert_eq(doca_buf_destroy(r.src), DOCA_SUCCESS);
	cr_assert_eq(doca_buf_destroy(r.dst), DOCA_SUCCESS);
	tree_down(&r.t);
	settle();

	/* a new tree on a new PE (the first still alive, so at another
	 * address): its run's first chunk takes the same cell back (LIFO,
	 * this test alone) and stores the new PE */
	struct rig s;

	rig_up(&s);
	task.src = s.src;
	task.dst = s.dst;
	cr_assert_eq(doca_task_submit(s.t.ctx, &task), DOCA_SUCCESS);
	struct doca_event *h2 = first_event(s.pe);
	struct doca_event *slot2 = handle_deref(h2);

	cr_assert_eq(slot2, slot, "the new run's first event took the same cell");
	cr_assert_neq(handle_addr(s.pe), pe_addr, "on a new PE");
	cr_assert_eq(atomic_load(&slot2->pe), handle_addr(s.pe), "the new slot's PE word is its run's PE");
	cr_assert_eq(slot2->run->pe, handle_addr(s.pe));
	doca_event_free(h2);
	rig_down(&s);
	cr_assert_eq(doca_pe_destroy(r.pe), DOCA_SUCCESS);
}

/* The claim flag's one way up (engine/event.c, "The owner's plain
 * claim"), without a race: a stale handle freed by another thread is
 * refused before it looks at the guard and leaves the flag 0; a held
 * event freed by another thread while this thread runs the PE finds the
 * guard parked, so it runs the protocol and leaves the flag SET; the owner
 * then claims by CAS, and its own stale free is refused as before.
 * Without the owner way (runner_owner_way false: no membarrier, or a
 * race detector) no claim is plain, no protocol runs and the flag stays
 * 0. */
struct outside_free {
	struct doca_event *ev;
};

static void *outside_free_run(void *arg)
{
	doca_event_free(((struct outside_free *)arg)->ev);
	return NULL;
}

static void free_on_another_thread(struct doca_event *ev)
{
	struct outside_free o = { .ev = ev };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, outside_free_run, &o), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
}

Test(handles, an_outside_free_of_a_held_event_sets_the_claim_flag_and_a_stale_one_does_not)
{
	struct rig r;

	rig_up(&r);
	struct runner *guard = &handle_deref(r.pe)->runner;
	struct ctx_run *run = handle_deref(r.t.ctx)->run;
	struct doca_task_desc task = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst, .user_data.u64 = 1 };

	cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
	struct doca_event *a = first_event(r.pe);

	doca_event_free(a);
	cr_assert_eq(atomic_load(&guard->claims), 0, "the owner's free leaves the flag 0");
	uint64_t stale = doca_stale_handle_count();

	free_on_another_thread(a);
	cr_assert_eq(doca_stale_handle_count(), stale + 1, "the outside free of a freed event is refused");
	cr_assert_eq(atomic_load(&guard->claims), 0, "a refused stale handle runs no protocol");

	task.user_data.u64 = 2;
	cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
	struct doca_event *b = first_event(r.pe);

	task.user_data.u64 = 3;
	cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
	struct doca_event *c = first_event(r.pe);

	cr_assert_eq(task_pool_free(&run->pool), run->pool.size - 2, "two credits out");
	const uint8_t up = runner_owner_way ? RUNNER_CLAIMS_SET : 0;

	free_on_another_thread(b);
	cr_assert_eq(atomic_load(&guard->claims), up, "a held event's outside free set the flag (owner way %d)",
		     runner_owner_way);
	cr_assert(!runner_owner_way || !runner_claims_plain(guard), "the owner's claims are CAS from now on");
	cr_assert_eq(doca_stale_handle_count(), stale + 1, "and was not refused");
	(void)doca_pe_progress(r.pe); /* its credit comes back through the mailbox */
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size - 1, "its credit is back");
	doca_event_free(c); /* the owner's claim, a CAS now */
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size, "the owner's free of c at once");
	doca_event_free(c);
	doca_event_free(b);
	cr_assert_eq(doca_stale_handle_count(), stale + 3, "the owner's stale frees refused");
	cr_assert_eq(task_pool_free(&run->pool), run->pool.size, "and changed no credit");
	cr_assert_eq(atomic_load(&guard->claims), up, "the flag stays as it was");
	rig_down(&r);
}

/* The owner's plain claim against frees from another thread, on the
 * hardware (the explorer is sequentially consistent: a missing fence of
 * engine/event.c's "The owner's plain claim" shows only here, if at all).
 * Each round a new PE (its claim flag 0), this thread its parked owner
 * with 8 events, and another thread freeing the same events from the last
 * while this one frees them from the first (doca_event_free, or
 * doca_event_free_bulk every other round): every event is freed exactly
 * once (one refusal of each, counted stale; the credits all back after a
 * turn, none twice: the pool aborts on a second return), and the flag is
 * 0 or SET after the round (SET when an outside free found an event
 * still held: it found the guard parked by this thread; a stale one is
 * refused before it enters, and runs no protocol). */
#define CLAIM_RACE_EVENTS 8u

struct claim_race {
	struct doca_event *evs[CLAIM_RACE_EVENTS];
	_Atomic int ready, go;
};

static void *claim_race_outside(void *arg)
{
	struct claim_race *c = arg;

	atomic_store(&c->ready, 1);
	while (!atomic_load(&c->go))
		;
	for (uint32_t i = CLAIM_RACE_EVENTS; i-- > 0;)
		doca_event_free(c->evs[i]);
	return NULL;
}

Test(handles, an_event_freed_by_its_owner_and_another_thread_at_once_is_freed_once)
{
	enum doca_log_level level = doca_log_get_level();

	(void)doca_log_set_level(DOCA_LOG_NONE); /* the refusals' lines */
	int rounds_set = 0;
	for (int round = 0; round < 300; round++) {
		struct rig r;
		struct claim_race c = { .ready = 0, .go = 0 };
		pthread_t t;

		rig_up(&r);
		struct runner *guard = &handle_deref(r.pe)->runner;
		struct ctx_run *run = handle_deref(r.t.ctx)->run;

		cr_assert_eq(atomic_load(&guard->claims), 0, "a new PE's owner claims plainly");
		/* Rounds 2 and 3 of every 4 start with the flag SET, as after an
		 * outside free: the owner must then claim by CAS against the
		 * outside CAS, which no longer waits (an owner that ignored the
		 * flag, holder_ignores_claims, would claim plainly here and both
		 * could win: the review's F1, found by no other test). */
		bool preset = round % 4 >= 2;

		if (preset)
			atomic_store(&guard->claims, RUNNER_CLAIMS_SET);
		for (uint32_t i = 0; i < CLAIM_RACE_EVENTS; i++) {
			struct doca_task_desc task = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst,
						       .user_data.u64 = i };

			cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
		}
		for (uint32_t got = 0, tries = 0; got < CLAIM_RACE_EVENTS; tries++) {
			cr_assert_lt(tries, 100000u, "the tasks completed");
			(void)doca_pe_progress(r.pe);
			got += doca_pe_get_events(r.pe, c.evs + got, CLAIM_RACE_EVENTS - got);
		}
		uint64_t stale = doca_stale_handle_count();

		cr_assert_eq(pthread_create(&t, NULL, claim_race_outside, &c), 0);
		while (!atomic_load(&c.ready))
			;
		atomic_store(&c.go, 1);
		if (round % 2 == 0) {
			for (uint32_t i = 0; i < CLAIM_RACE_EVENTS; i++)
				doca_event_free(c.evs[i]);
		} else {
			doca_event_free_bulk(c.evs, CLAIM_RACE_EVENTS);
		}
		cr_assert_eq(pthread_join(t, NULL), 0);
		cr_assert_eq(doca_stale_handle_count(), stale + CLAIM_RACE_EVENTS,
			     "round %d: one free of each event refused", round);
		for (int i = 0; i < 1000 && task_pool_free(&run->pool) != run->pool.size; i++)
			(void)doca_pe_progress(r.pe); /* the outside wins come back through the mailbox */
		cr_assert_eq(task_pool_free(&run->pool), run->pool.size, "round %d: credits %u of %u", round,
			     task_pool_free(&run->pool), run->pool.size);
		uint8_t claims = atomic_load(&guard->claims);

		cr_assert(claims == 0 || claims == RUNNER_CLAIMS_SET, "round %d: claims %u, SETTING left", round,
			  claims);
		if (preset)
			cr_assert_eq(claims, RUNNER_CLAIMS_SET, "round %d: a SET flag stays SET", round);
		else
			rounds_set += claims == RUNNER_CLAIMS_SET;
		rig_down(&r);
	}
	(void)doca_log_set_level(level);
	/* Only logged: whether an outside free finds an event still held
	 * depends on timing (the flag's way up is asserted without a race by
	 * an_outside_free_of_a_held_event_sets_the_claim_flag_and_a_stale_one_does_not) */
	cr_log_info("the outside frees ran the protocol in %d of the 150 rounds begun at 0", rounds_set);
}

/* The ready list's end, pe_ready_end (engine.h): an event the library
 * never hands out and never writes. A handle naming it (its address, with
 * or without a generation's tag bits) is no event of this process to every
 * public call taking an event: the getters answer as for any handle that
 * names no event, the frees refuse it (logged, not counted stale) and the
 * marker's bytes stay as they were; the PE's list still ends there (every
 * get on an empty list gets nothing, the ok form sets no error at it, and
 * a task's event comes out alone). */
Test(handles, the_ready_lists_end_is_no_event_to_any_public_call)
{
	struct rig r;
	struct doca_event before;

	rig_up(&r);
	memcpy(&before, &pe_ready_end, sizeof(before));
	for (uint32_t g = 0; g < 3; g++) {
		const uint32_t gens[3] = { 0, 1, HANDLE_GEN_MASK };
		struct doca_event *h = handle_pack(&pe_ready_end, gens[g]);
		uint64_t stale = doca_stale_handle_count();

		/* the refusal's answers, each unlike the marker's own field
		 * (engine/pe.c): a getter reading the marker fails here */
		cr_assert_neq(pe_ready_end.user_data.u64, 0);
		cr_assert_neq(pe_ready_end.bytes, 0);
		cr_assert_neq(pe_ready_end.error, DOCA_ERROR_INVALID_VALUE);
		cr_assert_eq(doca_event_get_status(h), DOCA_EVENT_STATUS_FAILURE);
		cr_assert_eq(doca_event_get_user_data(h).u64, 0);
		cr_assert_eq(doca_event_get_ctx(h), NULL);
		cr_assert_eq(doca_event_get_bytes(h), 0);
		cr_assert_eq(doca_event_get_error(h), DOCA_ERROR_INVALID_VALUE);
		doca_event_free(h);
		doca_event_free_bulk(&h, 1);
		cr_assert_eq(doca_stale_handle_count(), stale, "not a stale event: no event at all");
		cr_assert_eq(memcmp(&before, &pe_ready_end, sizeof(before)), 0, "the marker unwritten (gen %u)", g);
	}
	bool err = true;
	struct doca_event *evs[4] = { NULL };

	cr_assert_eq(doca_pe_get_event(r.pe), NULL);
	cr_assert_eq(doca_pe_get_events(r.pe, evs, 4), 0);
	cr_assert_eq(doca_pe_get_events_ok(r.pe, evs, 4, &err), 0);
	cr_assert_eq(err, false, "the end is no failed event");
	for (uint32_t max = 1; max <= 5; max++) {
		struct doca_task_desc task = { .type = DOCA_TASK_COPY, .src = r.src, .dst = r.dst,
					       .user_data.u64 = 40 + max };
		uint32_t n = 0;

		cr_assert_eq(doca_task_submit(r.t.ctx, &task), DOCA_SUCCESS);
		for (int i = 0; i < 1000 && n == 0; i++) {
			(void)doca_pe_progress(r.pe);
			err = true;
			n = doca_pe_get_events_ok(r.pe, evs, max, &err);
		}
		cr_assert_eq(n, 1, "max %u", max);
		cr_assert_eq(err, false, "max %u: the end is no failed event", max);
		cr_assert_eq(doca_event_get_user_data(evs[0]).u64, 40 + max);
		doca_event_free(evs[0]);
		cr_assert_eq(doca_pe_get_events(r.pe, evs, max), 0);
	}
	cr_assert_eq(memcmp(&before, &pe_ready_end, sizeof(before)), 0, "the marker unwritten");
	rig_down(&r);
}

/* ---- two destroys of one handle at once: one wins, the other is told
 * the object is gone (INVALID_VALUE), never that it is in use ---- */

#define RACES 300

struct destroy_race {
	_Atomic int go;
	_Atomic int ready;
	void *handle;
	doca_error_t (*destroy)(void *h);
	doca_error_t result[2];
};

static doca_error_t destroy_buf(void *h)
{
	return doca_buf_destroy(h);
}

static doca_error_t destroy_mem(void *h)
{
	return doca_mem_destroy(h);
}

static void race_one(struct destroy_race *r, int me)
{
	atomic_fetch_add(&r->ready, 1);
	while (atomic_load(&r->go) == 0)
		;
	r->result[me] = r->destroy(r->handle);
}

static void *race_other(void *arg)
{
	race_one(arg, 1);
	return NULL;
}

/* Both destroys at once: one wins, the other is refused as stale. */
static void destroy_twice_at_once(struct destroy_race *r)
{
	pthread_t t;

	atomic_store(&r->go, 0);
	atomic_store(&r->ready, 0);
	cr_assert_eq(pthread_create(&t, NULL, race_other, r), 0);
	while (atomic_load(&r->ready) != 1)
		;
	atomic_store(&r->go, 1);
	race_one(r, 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert(r->result[0] == DOCA_SUCCESS || r->result[1] == DOCA_SUCCESS, "one destroy won");
	cr_assert_eq(r->result[0] == DOCA_SUCCESS ? r->result[1] : r->result[0], DOCA_ERROR_INVALID_VALUE,
		     "the other was told the object is gone (got %d)",
		     r->result[0] == DOCA_SUCCESS ? r->result[1] : r->result[0]);
}

Test(handles, of_two_concurrent_buffer_destroys_one_wins_and_one_is_refused_as_stale)
{
	struct tree t;
	struct destroy_race r = { .destroy = destroy_buf };

	tree_up(&t);
	for (int i = 0; i < RACES; i++) {
		struct doca_buf *buf;

		cr_assert_eq(doca_buf_create(t.mem, 0, 64, &buf), DOCA_SUCCESS);
		r.handle = buf;
		destroy_twice_at_once(&r);
	}
	tree_down(&t);
}

Test(handles, of_two_concurrent_memory_destroys_one_wins_and_one_is_refused_as_stale)
{
	struct tree t;
	struct destroy_race r = { .destroy = destroy_mem };

	tree_up(&t);
	for (int i = 0; i < RACES; i++) {
		struct doca_mem *mem;

		cr_assert_eq(doca_mem_create(t.ctx, 64, ACCESS_RW, &mem), DOCA_SUCCESS);
		r.handle = mem;
		destroy_twice_at_once(&r);
	}
	tree_down(&t);
}
