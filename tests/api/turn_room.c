/* tests/api/turn_room.c — a turn executes at most 256 events (its room),
 * in submission order, on an inline sw0: the room a turn has left when it
 * reaches a context's backlog may be no multiple of four (another
 * context's events came first), and the backlog longer than it.
 * engine/pe_progress.c copies four events a round on such a device
 * (turn_copy) and leaves a room's last one to three to the device's
 * execute; the rest waits for the next turn. Each case runs with 1 to 4
 * tasks first on the sibling: rooms of 255 to 252, and a second turn of
 * 45 to 48 (the backlog's end inside a round, and at a round's end). */
#include <criterion/criterion.h>

#include "common.h"

enum { LEN = 64, LONG = 300, TURN = 256 };

/* @p k tasks on the sibling (visited first: it became ready first), then
 * LONG on the fixture: the first turn has TURN - k left for them. */
static void submit_k_then_long(struct api_fixture *f, struct api_sibling *s, uint32_t k)
{
	doca_pe_progress(f->pe); /* this thread now runs the PE */
	for (uint32_t j = 0; j < k; j++)
		assert_ok(submit_copy(s->ctx, s->src, s->dst, 1000 + j, 0));
	for (uint64_t i = 0; i < LONG; i++)
		assert_ok(submit_copy(f->ctx, f->src, f->dst, i, 0));
}

Test(turn_room, a_room_takes_as_many_as_fit_in_order_and_the_rest_waits)
{
	for (uint32_t k = 1; k <= 4; k++) {
		struct api_fixture f;
		struct api_sibling s;

		fixture_init_started(&f, "sw0", LEN, 512);
		sibling_init(&s, &f, 4);
		submit_k_then_long(&f, &s, k);
		cr_assert_eq(doca_pe_progress(f.pe), TURN, "k %u", k); /* k + TURN - k */
		for (uint32_t j = 0; j < k; j++)
			assert_success_event(doca_pe_get_event(f.pe), 1000 + j, 64);
		for (uint64_t want = 0; want < TURN - k; want++)
			assert_success_event(doca_pe_get_event(f.pe), want, LEN);
		cr_assert_null(doca_pe_get_event(f.pe));
		cr_assert_eq(doca_pe_progress(f.pe), LONG - (TURN - k), "k %u", k);
		for (uint64_t want = TURN - k; want < LONG; want++)
			assert_success_event(doca_pe_get_event(f.pe), want, LEN);
		expect_no_event_for(f.pe, 10);
		cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
		sibling_fini_with_fixture(&s, &f);
	}
}

static uint64_t g_seen[LONG];
static uint32_t g_nseen;

static void record_event(struct doca_event *ev, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
	cr_assert_eq(doca_event_get_bytes(ev), LEN);
	cr_assert_lt(g_nseen, LONG);
	g_seen[g_nseen++] = doca_event_get_user_data(ev).u64;
}

/* The same with an event callback: the events go through the turn's
 * array, the room's last ones too. */
Test(turn_room, a_room_with_an_event_callback_calls_back_in_order)
{
	for (uint32_t k = 1; k <= 4; k++) {
		struct api_fixture f;
		struct api_sibling s;

		fixture_init(&f, "sw0", LEN, 512);
		assert_ok(doca_ctx_set_event_cb(f.ctx, record_event));
		assert_ok(doca_ctx_start(f.ctx));
		sibling_init(&s, &f, 4);
		g_nseen = 0;
		submit_k_then_long(&f, &s, k);
		cr_assert_eq(doca_pe_progress(f.pe), TURN, "k %u", k);
		cr_assert_eq(g_nseen, TURN - k, "k %u", k);
		for (uint32_t j = 0; j < k; j++)
			assert_success_event(doca_pe_get_event(f.pe), 1000 + j, 64);
		cr_assert_eq(doca_pe_progress(f.pe), LONG - (TURN - k), "k %u", k);
		cr_assert_eq(g_nseen, LONG);
		for (uint32_t i = 0; i < LONG; i++)
			cr_assert_eq(g_seen[i], i, "callback %u had task %llu", i, (unsigned long long)g_seen[i]);
		expect_no_event_for(f.pe, 10);
		cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
		sibling_fini_with_fixture(&s, &f);
	}
}
