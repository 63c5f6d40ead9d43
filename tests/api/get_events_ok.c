/*
 * tests/api/get_events_ok.c — doca_pe_get_events_ok: the events that
 * succeeded, oldest first, up to max; it stops before the first ready
 * event that did not (a FAILURE by fail_every, a PARTIAL by
 * partial_every), says so in has_error, and that event stays first in
 * line for the next get. Refused calls take nothing and clear has_error.
 * On an engine (engines=1) the same: there the events a turn reaps come
 * to the getters through the PE's ready index (engine/engine.h), over
 * several turns, mixed with single gets.
 */
#include "common.h"

#include <stdbool.h>

enum { MOST = 9 };

/* Not an event: marks a slot the call must not write. */
static const char poison_byte;
#define POISON ((struct doca_event *)&poison_byte)

static void poison_all(struct doca_event **evs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		evs[i] = POISON;
}

/* Submit users first .. first + n - 1 and progress until all n are ready. */
static void submit_and_ready(struct api_fixture *f, uint64_t first, uint32_t n)
{
	uint64_t deadline = now_ns() + (uint64_t)API_WAIT_MS * 1000000ull;
	uint32_t done = 0;

	for (uint32_t i = 0; i < n; i++)
		assert_ok(submit_copy(f->ctx, f->src, f->dst, first + i, 0));
	while (done < n && now_ns() < deadline)
		done += (uint32_t)doca_pe_progress(f->pe);
	cr_assert_eq(done, n, "%u of %u ready", done, n);
}

/* fail_every=5: of users 1..8 (descriptors 1..8), 5 fails. One call with
 * room for all returns exactly 1..4 and has_error; the next returns 0 and
 * has_error again; doca_pe_get_event then takes 5 (FAILURE, IO_FAILED);
 * the rest, 6..8, come with has_error false; then nothing. */
static void failed_event_mid_burst(const char *dev)
{
	struct api_fixture f;
	struct doca_event *evs[MOST + 1];
	bool has_error = false;

	fixture_init_started(&f, dev, 64, 8);
	submit_and_ready(&f, 1, 8);
	poison_all(evs, MOST + 1);
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, MOST, &has_error), 4);
	cr_assert(has_error, "stopped at the failed event");
	for (uint32_t i = 0; i < 4; i++) {
		cr_assert_eq(doca_event_get_user_data(evs[i]).u64, 1 + i);
		cr_assert_eq(doca_event_get_status(evs[i]), DOCA_EVENT_STATUS_SUCCESS);
	}
	for (uint32_t i = 4; i <= MOST; i++)
		cr_assert_eq(evs[i], POISON, "place %u written", i);
	doca_event_free_bulk(evs, 4);

	has_error = false;
	poison_all(evs, MOST + 1);
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, MOST, &has_error), 0);
	cr_assert(has_error, "the failed event is still first");
	cr_assert_eq(evs[0], POISON);

	struct doca_event *failed = doca_pe_get_event(f.pe);

	cr_assert_not_null(failed);
	cr_assert_eq(doca_event_get_user_data(failed).u64, 5);
	cr_assert_eq(doca_event_get_status(failed), DOCA_EVENT_STATUS_FAILURE);
	assert_doca(doca_event_get_error(failed), DOCA_ERROR_IO_FAILED);
	doca_event_free(failed);

	has_error = true;
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, MOST, &has_error), 3);
	cr_assert(!has_error);
	for (uint32_t i = 0; i < 3; i++)
		cr_assert_eq(doca_event_get_user_data(evs[i]).u64, 6 + i);
	cr_assert_eq(evs[3], POISON);
	doca_event_free_bulk(evs, 3);
	has_error = true;
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, MOST, &has_error), 0);
	cr_assert(!has_error);
	cr_assert_null(doca_pe_get_event(f.pe));
	fixture_fini(&f);
}

Test(get_events_ok, a_failed_event_mid_burst_ends_the_call_and_is_next_in_line)
{
	failed_event_mid_burst("sw0:fail_every=5");
}

Test(get_events_ok, a_failed_event_mid_burst_ends_the_call_and_is_next_in_line_on_an_engine)
{
	failed_event_mid_burst("sw0:engines=1,fail_every=5");
}

/* The failed event is next in line for doca_pe_get_events too, and a
 * PARTIAL (partial_every) stops the call as a FAILURE does. */
Test(get_events_ok, a_partial_copy_stops_it_and_get_events_takes_it_next)
{
	struct api_fixture f;
	struct doca_event *evs[4];
	bool has_error = false;

	fixture_init_started(&f, "sw0:partial_every=2", 64, 3);
	submit_and_ready(&f, 1, 3);
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, 4, &has_error), 1);
	cr_assert(has_error);
	cr_assert_eq(doca_event_get_user_data(evs[0]).u64, 1);
	doca_event_free(evs[0]);
	cr_assert_eq(doca_pe_get_events(f.pe, evs, 4), 2, "the partial one first, then the rest");
	cr_assert_eq(doca_event_get_user_data(evs[0]).u64, 2);
	cr_assert_eq(doca_event_get_status(evs[0]), DOCA_EVENT_STATUS_PARTIAL);
	cr_assert_eq(doca_event_get_bytes(evs[0]), 32);
	cr_assert_eq(doca_event_get_user_data(evs[1]).u64, 3);
	cr_assert_eq(doca_event_get_status(evs[1]), DOCA_EVENT_STATUS_SUCCESS);
	doca_event_free_bulk(evs, 2);
	fixture_fini(&f);
}

/*
 * The handout's rounds of four and its last max % 4 places (engine/pe.c,
 * pe_take_ready_watched) with the stop at each place: fail_every=7 over
 * rounds of 1..9 ready events and every max from 1 to 9 (the failed
 * descriptor falls at every place of the rounds as they go). The test
 * knows which users fail (descriptors are counted per device from 1,
 * one per task here) and reaps the way an application would: each call
 * returns exactly the successes before the next failure or the room,
 * oldest first, nothing written past them, has_error exactly when a
 * failure is next; the failure is then taken with doca_pe_get_event.
 */
static void every_count_and_max(const char *dev)
{
	struct api_fixture f;
	struct doca_event *evs[MOST + 1];
	uint64_t user = 1; /* == the descriptor's number */

	fixture_init_started(&f, dev, 64, MOST);
	for (uint32_t ready = 1; ready <= MOST; ready++) {
		for (uint32_t max = 1; max <= MOST; max++) {
			uint64_t first = user, end = user + ready;

			submit_and_ready(&f, first, ready);
			for (uint64_t next = first; next < end;) {
				uint32_t want = 0;
				bool has_error = false;

				while (next + want < end && want < max && (next + want) % 7 != 0)
					want++;
				bool stops = want < max && next + want < end;

				poison_all(evs, MOST + 1);
				cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, max, &has_error), want,
					     "ready %u max %u from user %llu", ready, max, (unsigned long long)next);
				cr_assert_eq(has_error, stops, "ready %u max %u from user %llu", ready, max,
					     (unsigned long long)next);
				for (uint32_t i = 0; i < want; i++)
					cr_assert_eq(doca_event_get_user_data(evs[i]).u64, next + i);
				for (uint32_t i = want; i <= MOST; i++)
					cr_assert_eq(evs[i], POISON, "ready %u max %u: place %u written", ready, max, i);
				doca_event_free_bulk(evs, want);
				next += want;
				if (stops) {
					struct doca_event *failed = doca_pe_get_event(f.pe);

					cr_assert_eq(doca_event_get_user_data(failed).u64, next);
					cr_assert_eq(doca_event_get_status(failed), DOCA_EVENT_STATUS_FAILURE);
					doca_event_free(failed);
					next++;
				}
			}
			bool has_error = true;

			cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, max, &has_error), 0);
			cr_assert(!has_error);
			user = end;
		}
	}
	fixture_fini(&f);
}

Test(get_events_ok, every_count_and_max_stops_exactly_before_each_failure)
{
	every_count_and_max("sw0:fail_every=7");
}

/* The same where the events come over turns through the ready index: a
 * round's events may be reaped in more than one turn (appended to the
 * index), and each get takes from it or stops inside it. */
Test(get_events_ok, every_count_and_max_stops_exactly_before_each_failure_on_an_engine)
{
	every_count_and_max("sw0:engines=1,fail_every=7");
}

/* Refused calls (NULL, wrong-type and stale handles, NULL evs, max 0, a
 * NULL has_error) return 0, take nothing and clear has_error, with a
 * failed event first in line; a stale handle is counted, also with a
 * NULL has_error. Then every ready event is still there, in order. */
Test(get_events_ok, refused_calls_take_nothing_and_clear_has_error)
{
	struct api_fixture f;
	struct doca_event *evs[4] = { POISON, POISON, POISON, POISON };
	struct doca_pe *stale_pe;
	bool has_error;

	fixture_init_started(&f, "sw0:fail_every=1", 64, 2);
	assert_ok(doca_pe_create(&stale_pe));
	assert_ok(doca_pe_destroy(stale_pe));
	submit_and_ready(&f, 1, 2); /* both failed: the first is next */

	has_error = true;
	cr_assert_eq(doca_pe_get_events_ok(NULL, evs, 4, &has_error), 0);
	cr_assert(!has_error);
	has_error = true;
	cr_assert_eq(doca_pe_get_events_ok((struct doca_pe *)f.ctx, evs, 4, &has_error), 0);
	cr_assert(!has_error);
	has_error = true;
	cr_assert_eq(doca_pe_get_events_ok(f.pe, NULL, 4, &has_error), 0);
	cr_assert(!has_error);
	has_error = true;
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, 0, &has_error), 0);
	cr_assert(!has_error, "max 0 looks at no event");
	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, 4, NULL), 0);

	uint64_t stale = doca_stale_handle_count();

	has_error = true;
	cr_assert_eq(doca_pe_get_events_ok(stale_pe, evs, 4, &has_error), 0);
	cr_assert(!has_error);
	cr_assert_eq(doca_stale_handle_count(), stale + 1);
	cr_assert_eq(doca_pe_get_events_ok(stale_pe, evs, 4, NULL), 0);
	cr_assert_eq(doca_stale_handle_count(), stale + 2);
	for (uint32_t i = 0; i < 4; i++)
		cr_assert_eq(evs[i], POISON, "a refused call wrote place %u", i);

	cr_assert_eq(doca_pe_get_events(f.pe, evs, 4), 2, "nothing was taken");
	for (uint32_t i = 0; i < 2; i++) {
		cr_assert_eq(doca_event_get_user_data(evs[i]).u64, 1 + i);
		cr_assert_eq(doca_event_get_status(evs[i]), DOCA_EVENT_STATUS_FAILURE);
	}
	doca_event_free_bulk(evs, 2);
	fixture_fini(&f);
}

/* More events ready than the ready index holds (PE_READY_INDEX, 256),
 * reaped over several turns on an engine: taken by get_events_ok,
 * doca_pe_get_event and doca_pe_get_events in turn, with counts that
 * cross the index's end, every user comes out exactly once, in order, and
 * then nothing. */
Test(get_events_ok, more_ready_than_the_index_holds_come_out_once_in_order_on_an_engine)
{
	enum { N = 600, ROOM = 64 };
	static const uint32_t maxes[] = { 37, 1, 64, 5, 50 };
	struct api_fixture f;
	struct doca_event *evs[ROOM];
	uint64_t next = 1;

	fixture_init_started(&f, "sw0:engines=1", 64, N);
	submit_and_ready(&f, 1, N);
	for (uint32_t call = 0; next <= N; call++) {
		uint32_t max = maxes[call % 5u], got;
		bool has_error = true;

		if (call % 3u == 1u) {
			struct doca_event *ev = doca_pe_get_event(f.pe);

			cr_assert_not_null(ev, "user %llu is ready", (unsigned long long)next);
			evs[0] = ev;
			got = 1;
		} else if (call % 3u == 2u) {
			got = doca_pe_get_events(f.pe, evs, max);
		} else {
			got = doca_pe_get_events_ok(f.pe, evs, max, &has_error);
			cr_assert_not(has_error, "every copy succeeded");
		}
		uint32_t want = call % 3u == 1u ? 1u : (N + 1u - next < max ? (uint32_t)(N + 1u - next) : max);

		cr_assert_eq(got, want, "call %u from user %llu", call, (unsigned long long)next);
		for (uint32_t i = 0; i < got; i++)
			cr_assert_eq(doca_event_get_user_data(evs[i]).u64, next + i, "call %u, place %u", call, i);
		doca_event_free_bulk(evs, got);
		next += got;
	}
	bool has_error = true;

	cr_assert_eq(doca_pe_get_events_ok(f.pe, evs, ROOM, &has_error), 0);
	cr_assert_not(has_error);
	cr_assert_null(doca_pe_get_event(f.pe));
	fixture_fini(&f);
}
