/* tests/api/turn_room.c — a turn executes at most 256 events (its room),
 * in submission order, on an inline sw0: the room a turn has left when it
 * reaches a context's backlog may be odd (another context's events came
 * first), and the backlog longer than it. engine/pe_progress.c copies two
 * events a round on such a device (turn_copy) and leaves an odd room's
 * last one to the device's execute; the rest waits for the next turn. */
#include <criterion/criterion.h>

#include "common.h"

enum { LEN = 64, LONG = 300, TURN = 256 };

/* One task on the sibling (visited first: it became ready first), then
 * LONG on the fixture: the first turn has 255 left for them. */
static void submit_odd_then_long(struct api_fixture *f, struct api_sibling *s)
{
	doca_pe_progress(f->pe); /* this thread now runs the PE */
	assert_ok(submit_copy(s->ctx, s->src, s->dst, 1000, 0));
	for (uint64_t i = 0; i < LONG; i++)
		assert_ok(submit_copy(f->ctx, f->src, f->dst, i, 0));
}

Test(turn_room, an_odd_room_takes_as_many_as_fit_in_order_and_the_rest_waits)
{
	struct api_fixture f;
	struct api_sibling s;

	fixture_init_started(&f, "sw0", LEN, 512);
	sibling_init(&s, &f, 4);
	submit_odd_then_long(&f, &s);
	cr_assert_eq(doca_pe_progress(f.pe), TURN); /* 1 + 255 */
	assert_success_event(doca_pe_get_event(f.pe), 1000, 64);
	for (uint64_t want = 0; want < TURN - 1; want++)
		assert_success_event(doca_pe_get_event(f.pe), want, LEN);
	cr_assert_null(doca_pe_get_event(f.pe));
	cr_assert_eq(doca_pe_progress(f.pe), LONG - (TURN - 1));
	for (uint64_t want = TURN - 1; want < LONG; want++)
		assert_success_event(doca_pe_get_event(f.pe), want, LEN);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
	sibling_fini_with_fixture(&s, &f);
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
 * array, the odd room's last one too. */
Test(turn_room, an_odd_room_with_an_event_callback_calls_back_in_order)
{
	struct api_fixture f;
	struct api_sibling s;

	fixture_init(&f, "sw0", LEN, 512);
	assert_ok(doca_ctx_set_event_cb(f.ctx, record_event));
	assert_ok(doca_ctx_start(f.ctx));
	sibling_init(&s, &f, 4);
	g_nseen = 0;
	submit_odd_then_long(&f, &s);
	cr_assert_eq(doca_pe_progress(f.pe), TURN);
	cr_assert_eq(g_nseen, TURN - 1);
	assert_success_event(doca_pe_get_event(f.pe), 1000, 64);
	cr_assert_eq(doca_pe_progress(f.pe), LONG - (TURN - 1));
	cr_assert_eq(g_nseen, LONG);
	for (uint32_t i = 0; i < LONG; i++)
		cr_assert_eq(g_seen[i], i, "callback %u had task %llu", i, (unsigned long long)g_seen[i]);
	expect_no_event_for(f.pe, 10);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, LEN, f.seed), LEN);
	sibling_fini_with_fixture(&s, &f);
}
