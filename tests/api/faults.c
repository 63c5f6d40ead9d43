/*
 * tests/api/faults.c — fault injection through the open string (fail_every,
 * partial_every, delay_us; descriptors counted per device from 1, flushed
 * ones not counted) and partial copies allowed by DOCA_TASK_FLAG_ALLOW_PARTIAL.
 */
#include "common.h"

#include <stdatomic.h>
#include <string.h>

#define GUARD_BYTE 0x5A

enum expected_outcome { OUT_OK, OUT_FAIL, OUT_PARTIAL };

/* Wait for one event of a @p len byte copy into f->dst and check it against @p want. */
static void expect_outcome(struct api_fixture *f, uint64_t user, size_t len, enum expected_outcome want)
{
	struct doca_event *ev = wait_event(f->pe);
	enum doca_event_status st = doca_event_get_status(ev);

	cr_assert_eq(doca_event_get_user_data(ev).u64, user, "event of task %llu, expected %llu",
		     (unsigned long long)doca_event_get_user_data(ev).u64, (unsigned long long)user);
	switch (want) {
	case OUT_OK:
		cr_assert_eq(st, DOCA_EVENT_STATUS_SUCCESS, "descriptor %llu: status %d, expected SUCCESS",
			     (unsigned long long)user, st);
		assert_ok(doca_event_get_error(ev));
		cr_assert_eq(doca_event_get_bytes(ev), len, "bytes");
		cr_assert_eq(pattern_mismatch(f->dst_bytes, len, f->seed), len, "descriptor %llu copy differs",
			     (unsigned long long)user);
		break;
	case OUT_FAIL:
		cr_assert_eq(st, DOCA_EVENT_STATUS_FAILURE, "descriptor %llu: status %d, expected FAILURE",
			     (unsigned long long)user, st);
		assert_doca(doca_event_get_error(ev), DOCA_ERROR_IO_FAILED);
		break;
	case OUT_PARTIAL:
		cr_assert_eq(st, DOCA_EVENT_STATUS_PARTIAL, "descriptor %llu: status %d, expected PARTIAL",
			     (unsigned long long)user, st);
		assert_doca(doca_event_get_error(ev), DOCA_ERROR_IO_FAILED);
		cr_assert_eq(doca_event_get_bytes(ev), len / 2, "partial of %zu bytes reported %zu", len,
			     doca_event_get_bytes(ev));
		cr_assert_eq(pattern_mismatch(f->dst_bytes, len / 2, f->seed), len / 2, "first half differs");
		cr_assert_eq(bytes_mismatch(f->dst_bytes + len / 2, len - len / 2, GUARD_BYTE), len - len / 2,
			     "a partial copy wrote past its reported bytes");
		break;
	}
	doca_event_free(ev);
}

/* Submit descriptors 1..n one at a time; descriptor i must have outcome want(i). */
static void run_sequence(const char *dev_name, size_t len, int n, enum expected_outcome (*want)(int))
{
	struct api_fixture f;

	fixture_init_started(&f, dev_name, len, 0);
	for (int i = 1; i <= n; i++) {
		f.seed = (uint32_t)i * 11u;
		fill_pattern(f.src_bytes, len, f.seed);
		memset(f.dst_bytes, GUARD_BYTE, len);
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
		expect_outcome(&f, (uint64_t)i, len, want(i));
	}
	fixture_fini(&f);
}

static enum expected_outcome every_third_fails(int i)
{
	return i % 3 == 0 ? OUT_FAIL : OUT_OK;
}

static enum expected_outcome every_second_fails(int i)
{
	return i % 2 == 0 ? OUT_FAIL : OUT_OK;
}

static enum expected_outcome every_second_partial(int i)
{
	return i % 2 == 0 ? OUT_PARTIAL : OUT_OK;
}

/* fail_every=2,partial_every=3: descriptor 6 is selected by both and fails. */
static enum expected_outcome fail2_partial3(int i)
{
	if (i % 2 == 0)
		return OUT_FAIL;
	return i % 3 == 0 ? OUT_PARTIAL : OUT_OK;
}

static enum expected_outcome always_fails(int i)
{
	(void)i;
	return OUT_FAIL;
}

Test(faults, fail_every_3_fails_exactly_descriptors_3_6_9_inline)
{
	run_sequence("sw0:fail_every=3", 4096, 9, every_third_fails);
}

Test(faults, fail_every_3_fails_exactly_descriptors_3_6_9_engine)
{
	run_sequence("sw0:engines=1,fail_every=3", 4096, 9, every_third_fails);
}

Test(faults, fail_every_1_fails_every_descriptor)
{
	run_sequence("sw0:fail_every=1", 64, 5, always_fails);
}

Test(faults, partial_every_2_copies_first_half_of_even_descriptors_inline)
{
	run_sequence("sw0:partial_every=2", 4096, 6, every_second_partial);
}

Test(faults, partial_every_2_copies_first_half_of_even_descriptors_engine)
{
	run_sequence("sw0:engines=1,partial_every=2", 4096, 6, every_second_partial);
}

Test(faults, partial_of_odd_length_reports_len_over_2)
{
	run_sequence("sw0:partial_every=2", 1001, 4, every_second_partial);
}

Test(faults, fail_wins_when_fail_and_partial_select_same_descriptor)
{
	run_sequence("sw0:fail_every=2,partial_every=3", 512, 12, fail2_partial3);
}

/* A batch submitted at once executes in submission order on one queue. */
static void batch_in_order(const char *dev_name)
{
	struct api_fixture f;
	int fails = 0;

	fixture_init_started(&f, dev_name, 256, 0);
	for (int i = 1; i <= 12; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	for (int i = 1; i <= 12; i++) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t user = doca_event_get_user_data(ev).u64;
		bool failed = doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE;

		cr_assert_eq(user, (uint64_t)i, "completion order: task %llu at position %d", (unsigned long long)user,
			     i);
		cr_assert_eq(failed, i % 4 == 0, "descriptor %d failed=%d", i, failed);
		if (failed) {
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_IO_FAILED);
			fails++;
		}
		doca_event_free(ev);
	}
	cr_assert_eq(fails, 3, "%d failures", fails);
	fixture_fini(&f);
}

Test(faults, fail_every_4_in_one_batch_fails_4_8_12_inline)
{
	batch_in_order("sw0:fail_every=4");
}

Test(faults, fail_every_4_in_one_batch_fails_4_8_12_one_engine)
{
	batch_in_order("sw0:engines=1,fail_every=4");
}

/* A burst of small copies on one engine thread, with failures and
 * partial copies among them: its completions are packed into the CQ's
 * slots (hw/sw/sw_cq.h), where a failed or partial one carries its bytes
 * in a second entry, so some of those pairs fall where a slot has one
 * entry left. Descriptor k (from 1): k % 5 == 0 fails (bytes 0),
 * else k % 3 == 0 copies its first half, else all 64 bytes; every event
 * in order, with exact status, error and bytes, and no byte written past
 * them. */
#define PACKED_BURST 64u

Test(faults, a_burst_of_small_copies_packed_by_an_engine_keeps_each_partial_and_failed_bytes_exact)
{
	struct api_fixture f;
	struct doca_buf *src[PACKED_BURST], *dst[PACKED_BURST];
	struct doca_task_desc descs[PACKED_BURST];
	uint32_t accepted = 0;

	fixture_init_started(&f, "sw0:engines=1,fail_every=5,partial_every=3", 64u * PACKED_BURST, PACKED_BURST);
	f.seed = 77;
	fill_pattern(f.src_bytes, f.len, f.seed);
	memset(f.dst_bytes, GUARD_BYTE, f.len);
	for (uint32_t i = 0; i < PACKED_BURST; i++) {
		assert_ok(doca_buf_create(f.src_mem, 64u * i, 64, &src[i]));
		assert_ok(doca_buf_create(f.dst_mem, 64u * i, 64, &dst[i]));
		descs[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY, .src = src[i], .dst = dst[i], .user_data = { .u64 = i + 1u },
		};
	}
	assert_ok(doca_task_submit_batch(f.ctx, descs, PACKED_BURST, &accepted));
	cr_assert_eq(accepted, PACKED_BURST);
	for (uint32_t k = 1; k <= PACKED_BURST; k++) {
		struct doca_event *ev = wait_event(f.pe);
		enum doca_event_status st = doca_event_get_status(ev);
		size_t want = k % 5 == 0 ? 0 : k % 3 == 0 ? 32 : 64;
		const uint8_t *out = f.dst_bytes + 64u * (k - 1u), *in = f.src_bytes + 64u * (k - 1u);

		cr_assert_eq(doca_event_get_user_data(ev).u64, (uint64_t)k, "in order: task %llu at %u",
			     (unsigned long long)doca_event_get_user_data(ev).u64, k);
		cr_assert_eq(st, k % 5 == 0 ? DOCA_EVENT_STATUS_FAILURE
				 : k % 3 == 0 ? DOCA_EVENT_STATUS_PARTIAL
					      : DOCA_EVENT_STATUS_SUCCESS,
			     "descriptor %u: status %d", k, st);
		assert_doca(doca_event_get_error(ev), want == 64 ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED);
		cr_assert_eq(doca_event_get_bytes(ev), want, "descriptor %u: %zu bytes, expected %zu", k,
			     doca_event_get_bytes(ev), want);
		cr_assert_eq(memcmp(out, in, want), 0, "descriptor %u: its bytes copied", k);
		cr_assert_eq(bytes_mismatch(out + want, 64u - want, GUARD_BYTE), 64u - want,
			     "descriptor %u: nothing written past its bytes", k);
		doca_event_free(ev);
	}
	for (uint32_t i = 0; i < PACKED_BURST; i++) {
		assert_ok(doca_buf_destroy(src[i]));
		assert_ok(doca_buf_destroy(dst[i]));
	}
	fixture_fini(&f);
}

/* Two engines may reorder, but the count of injected faults is exact. */
Test(faults, fail_every_3_on_two_engines_fails_exactly_one_third)
{
	enum { N = 300 };
	struct api_fixture f;
	int fails = 0, oks = 0;

	fixture_init_started(&f, "sw0:engines=2,fail_every=3", 128, N);
	for (int i = 0; i < N; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, (uint64_t)i, 0));
	for (int i = 0; i < N; i++) {
		struct doca_event *ev = wait_event(f.pe);

		if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE) {
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_IO_FAILED);
			fails++;
		} else {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "status");
			oks++;
		}
		doca_event_free(ev);
	}
	cr_assert_eq(fails, N / 3, "%d injected failures in %d descriptors", fails, N);
	cr_assert_eq(oks, N - N / 3, "%d successes", oks);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 128, f.seed), 128, "copy differs");
	fixture_fini(&f);
}

/* Descriptors are counted per device: two ctxs bound to one handle share the count. */
Test(faults, fault_count_is_per_device_across_ctxs)
{
	struct api_fixture a;
	struct api_sibling b;
	int fails = 0;

	fixture_init_started(&a, "sw0:fail_every=2", 64, 0);
	sibling_init(&b, &a, 0);
	/* Alternate: a, sibling, a, sibling ... — descriptors 2, 4, 6, 8 (all the sibling's) fail. */
	for (int i = 1; i <= 8; i++) {
		struct doca_event *ev;
		bool on_a = i % 2 == 1;

		if (on_a)
			assert_ok(submit_copy(a.ctx, a.src, a.dst, (uint64_t)i, 0));
		else
			assert_ok(submit_copy(b.ctx, b.src, b.dst, (uint64_t)i, 0));
		ev = wait_event(a.pe);
		cr_assert_eq(doca_event_get_ctx(ev), on_a ? a.ctx : b.ctx, "event ctx");
		if (on_a) {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "descriptor %d", i);
		} else {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "descriptor %d", i);
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_IO_FAILED);
			fails++;
		}
		doca_event_free(ev);
	}
	cr_assert_eq(fails, 4, "%d failures", fails);
	sibling_fini_with_fixture(&b, &a);
}

/* Flushed descriptors are not counted. */
Test(faults, flushed_descriptors_are_not_counted)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0:fail_every=2", 256, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	expect_success_event(f.pe, 1, 256); /* descriptor 1 */
	for (int i = 0; i < 3; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, 100 + (uint64_t)i, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (int i = 0; i < 3; i++) {
		struct doca_event *ev = wait_event(f.pe);

		assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
		doca_event_free(ev);
	}
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_ctx_start(f.ctx));
	memset(f.dst_bytes, GUARD_BYTE, 256);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 2, 0));
	expect_outcome(&f, 2, 256, OUT_FAIL); /* descriptor 2 */
	fixture_copy_and_verify(&f);          /* descriptor 3 */
	memset(f.dst_bytes, GUARD_BYTE, 256);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 4, 0));
	expect_outcome(&f, 4, 256, OUT_FAIL); /* descriptor 4 */
	fixture_fini(&f);
}

/* Fault injection on one device leaves another device alone. */
Test(faults, faults_of_one_device_do_not_affect_another)
{
	struct api_fixture bad, good;

	fixture_init_started(&bad, "sw0:fail_every=1", 128, 0);
	fixture_init_started(&good, "sw0", 128, 0);
	for (int i = 0; i < 3; i++) {
		struct doca_event *ev;

		assert_ok(submit_copy(bad.ctx, bad.src, bad.dst, 1, 0));
		ev = wait_event(bad.pe);
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE, "status");
		doca_event_free(ev);
		fixture_copy_and_verify(&good);
	}
	fixture_fini(&bad);
	fixture_fini(&good);
}

/* ---- DOCA_TASK_FLAG_ALLOW_PARTIAL ---- */

static void allow_partial_short_dst(const char *dev_name)
{
	struct api_fixture f;
	struct doca_buf *short_dst = NULL;
	struct doca_event *ev;

	fixture_init_started(&f, dev_name, 1000, 0);
	memset(f.dst_bytes, GUARD_BYTE, 1000);
	assert_ok(doca_buf_create(f.dst_mem, 17, 600, &short_dst));
	assert_ok(submit_copy(f.ctx, f.src, short_dst, 8, DOCA_TASK_FLAG_ALLOW_PARTIAL));
	ev = wait_event(f.pe);
	cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_PARTIAL, "status %d", doca_event_get_status(ev));
	assert_doca(doca_event_get_error(ev), DOCA_ERROR_TOO_BIG);
	cr_assert_eq(doca_event_get_bytes(ev), 600, "bytes %zu, expected the destination length",
		     doca_event_get_bytes(ev));
	cr_assert_eq(doca_event_get_user_data(ev).u64, 8, "user data");
	doca_event_free(ev);
	cr_assert_eq(pattern_mismatch(f.dst_bytes + 17, 600, f.seed), 600, "copied bytes differ");
	cr_assert_eq(bytes_mismatch(f.dst_bytes, 17, GUARD_BYTE), 17, "bytes before the window changed");
	cr_assert_eq(bytes_mismatch(f.dst_bytes + 617, 383, GUARD_BYTE), 383, "bytes after the window changed");
	stop_and_drain(f.ctx, f.pe);
	assert_ok(doca_buf_destroy(short_dst));
	fixture_fini(&f);
}

Test(faults, allow_partial_with_short_dst_is_partial_too_big_with_dst_len_bytes_inline)
{
	allow_partial_short_dst("sw0");
}

Test(faults, allow_partial_with_short_dst_is_partial_too_big_with_dst_len_bytes_engine)
{
	allow_partial_short_dst("sw0:engines=1");
}

/* The PE's own thread submits (one progress first parks the runner guard
 * with it), so the next turn executes its tasks at once (hw_ops.execute)
 * and sets their statuses in the pass that builds their copies: a short
 * destination between two whole copies is PARTIAL / TOO_BIG, its
 * neighbours are SUCCESS, in submission order. */
Test(faults, allow_partial_with_short_dst_between_whole_copies_on_the_pe_thread_inline)
{
	struct api_fixture f;
	struct doca_buf *short_dst = NULL, *src = NULL, *dst_a = NULL, *dst_b = NULL;
	struct doca_event *ev;
	static const uint64_t want_bytes[3] = { 100, 60, 100 };
	static const enum doca_event_status want_status[3] = {
		DOCA_EVENT_STATUS_SUCCESS, DOCA_EVENT_STATUS_PARTIAL, DOCA_EVENT_STATUS_SUCCESS
	};
	static const doca_error_t want_error[3] = { DOCA_SUCCESS, DOCA_ERROR_TOO_BIG, DOCA_SUCCESS };

	fixture_init_started(&f, "sw0", 1000, 0);
	cr_assert_eq(doca_pe_progress(f.pe), 0, "nothing submitted yet");
	memset(f.dst_bytes, GUARD_BYTE, 1000);
	assert_ok(doca_buf_create(f.src_mem, 0, 100, &src));
	assert_ok(doca_buf_create(f.dst_mem, 0, 100, &dst_a));
	assert_ok(doca_buf_create(f.dst_mem, 200, 60, &short_dst));
	assert_ok(doca_buf_create(f.dst_mem, 400, 100, &dst_b));
	assert_ok(submit_copy(f.ctx, src, dst_a, 0, 0));
	assert_ok(submit_copy(f.ctx, src, short_dst, 1, DOCA_TASK_FLAG_ALLOW_PARTIAL));
	assert_ok(submit_copy(f.ctx, src, dst_b, 2, 0));
	cr_assert_eq(doca_pe_progress(f.pe), 3, "one turn completes the three");
	for (uint64_t i = 0; i < 3; i++) {
		ev = doca_pe_get_event(f.pe);
		cr_assert_not_null(ev, "event %llu", (unsigned long long)i);
		cr_assert_eq(doca_event_get_user_data(ev).u64, i, "submission order");
		cr_assert_eq(doca_event_get_status(ev), want_status[i], "status %d", doca_event_get_status(ev));
		assert_doca(doca_event_get_error(ev), want_error[i]);
		cr_assert_eq(doca_event_get_bytes(ev), want_bytes[i], "bytes %zu", doca_event_get_bytes(ev));
		doca_event_free(ev);
	}
	cr_assert_null(doca_pe_get_event(f.pe), "exactly one event per task");
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 100, f.seed), 100, "first copy differs");
	cr_assert_eq(pattern_mismatch(f.dst_bytes + 200, 60, f.seed), 60, "partial copy differs");
	cr_assert_eq(bytes_mismatch(f.dst_bytes + 260, 140, GUARD_BYTE), 140, "the partial copy wrote past its window");
	cr_assert_eq(pattern_mismatch(f.dst_bytes + 400, 100, f.seed), 100, "last copy differs");
	assert_ok(doca_buf_destroy(src));
	assert_ok(doca_buf_destroy(dst_a));
	assert_ok(doca_buf_destroy(short_dst));
	assert_ok(doca_buf_destroy(dst_b));
	fixture_fini(&f);
}

Test(faults, allow_partial_with_long_enough_dst_is_plain_success)
{
	struct api_fixture f;

	fixture_init_started(&f, "sw0", 1000, 0);
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 9, DOCA_TASK_FLAG_ALLOW_PARTIAL));
	expect_success_event(f.pe, 9, 1000);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 1000, f.seed), 1000, "copy differs");
	fixture_fini(&f);
}

/* ---- delay_us ---- */

static void delay_applies(const char *dev_name, unsigned delay_ms)
{
	struct api_fixture f;
	struct doca_event *ev;
	uint64_t t0, elapsed;

	fixture_init_started(&f, dev_name, 256, 0);
	t0 = now_ns();
	assert_ok(submit_copy(f.ctx, f.src, f.dst, 1, 0));
	/* Not ready early: wait_event polls without pause, so an early
	 * completion shows up early. The time is read after the event is seen:
	 * a preemption can make it later, never earlier (a "no event in the
	 * first half" window failed when the test thread was preempted across
	 * the window's end and then found the due event). */
	ev = wait_event(f.pe);
	elapsed = now_ns() - t0;
	cr_assert_geq(elapsed, (uint64_t)delay_ms * 1000000ull, "completed after %llu us, delay is %u ms",
		      (unsigned long long)(elapsed / 1000), delay_ms);
	cr_assert_lt(elapsed, (uint64_t)delay_ms * 1000000ull + 2000000000ull, "completed after %llu ms",
		     (unsigned long long)(elapsed / 1000000));
	assert_success_event(ev, 1, 256);
	cr_assert_eq(pattern_mismatch(f.dst_bytes, 256, f.seed), 256, "copy differs");
	fixture_fini(&f);
}

Test(faults, delay_us_delays_completion_inline)
{
	delay_applies("sw0:delay_us=100000", 100);
}

Test(faults, delay_us_delays_completion_engine)
{
	delay_applies("sw0:engines=1,delay_us=100000", 100);
}

Test(faults, delay_us_with_fail_every_still_fails_the_nth)
{
	run_sequence("sw0:delay_us=1000,fail_every=2", 64, 4, every_second_fails);
}

/* Two opens of one open string share the underlying device, hence its descriptor count. */
Test(faults, two_handles_of_one_open_string_share_the_fault_count)
{
	struct api_fixture a, b;
	int fails = 0;

	fixture_init_started(&a, "sw0:fail_every=2", 64, 0);
	fixture_init_started(&b, "sw0:fail_every=2", 64, 0);
	cr_assert_neq(a.dev, b.dev, "two opens returned one handle");
	/* a, b, a, b ...: descriptors 2, 4, 6 are b's. */
	for (int i = 1; i <= 6; i++) {
		struct api_fixture *f = i % 2 == 1 ? &a : &b;
		struct doca_event *ev;

		assert_ok(submit_copy(f->ctx, f->src, f->dst, (uint64_t)i, 0));
		ev = wait_event(f->pe);
		if (i % 2 == 0) {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE,
				     "descriptor %d of the shared device did not fail", i);
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_IO_FAILED);
			fails++;
		} else {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "descriptor %d failed", i);
		}
		doca_event_free(ev);
	}
	cr_assert_eq(fails, 3, "%d failures", fails);
	fixture_fini(&a);
	fixture_fini(&b);
}

/* ---- ring_max: a device ring that cannot grow (as when memory runs out) ---- */

#define RING_TASKS 40u /* more than the 16 slots a ring of ring_max=16 holds */

static _Atomic unsigned ring_full_lines;

static void count_ring_full(enum doca_log_level level, const char *message, void *user)
{
	(void)level;
	(void)user;
	if (strstr(message, "the device's queue is full and cannot grow") != NULL)
		atomic_fetch_add(&ring_full_lines, 1);
}

/* More than a device of ring_max=16 holds with nobody progressing: 16 in
 * its SQ and up to 96 completions in its CQ, six to a slot
 * (hw/sw/sw_cq.h). RING_TASKS (40) fitted there when the engine thread
 * kept up and packed them, and then no post was refused. */
#define RING_FULL_TASKS 160u

/* Submit RING_FULL_TASKS tasks without progressing (from the PE's thread,
 * so they go straight to the device, or to an inline device at the next
 * turn): all are accepted although the device holds fewer (a device with
 * an engine thread says its queue is full; an inline one's turn posts
 * only what fits, silently); then every one completes, in submission
 * order, exactly once. */
static void ring_max_tasks_wait_in_order(const char *dev_name, bool engine)
{
	struct api_fixture f;
	enum doca_log_level level = doca_log_get_level();

	fixture_init_started(&f, dev_name, 64, RING_FULL_TASKS);
	atomic_store(&ring_full_lines, 0);
	assert_ok(doca_log_set_level(DOCA_LOG_WARN)); /* the line is a warning; meson runs at error */
	assert_ok(doca_log_set_handler(count_ring_full, NULL));
	(void)doca_pe_progress(f.pe); /* this thread runs the PE: submits post directly */
	for (uint32_t i = 0; i < RING_FULL_TASKS; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	for (uint32_t i = 0; i < RING_FULL_TASKS; i++)
		expect_outcome(&f, i, 64, OUT_OK);
	expect_no_event_for(f.pe, 20);
	assert_ok(doca_log_set_handler(NULL, NULL));
	assert_ok(doca_log_set_level(level));
	if (engine)
		cr_assert_geq(atomic_load(&ring_full_lines), 1, "the ring held them all: ring_max had no effect");
	fixture_fini(&f);
}

Test(faults, ring_max_16_tasks_beyond_wait_in_order_inline)
{
	ring_max_tasks_wait_in_order("sw0:ring_max=16", false);
}

Test(faults, ring_max_16_tasks_beyond_wait_in_order_one_engine)
{
	ring_max_tasks_wait_in_order("sw0:engines=1,ring_max=16", true);
}

/* One slot (ring_max=1 left the rings unbounded, found by a review) */
Test(faults, ring_max_1_tasks_beyond_wait_in_order_inline)
{
	ring_max_tasks_wait_in_order("sw0:ring_max=1", false);
}

Test(faults, ring_max_1_tasks_beyond_wait_in_order_one_engine)
{
	ring_max_tasks_wait_in_order("sw0:engines=1,ring_max=1", true);
}

/* An engine thread whose CQ is full (16 completions, nobody progressing)
 * while more tasks wait: a stop from the PE's thread waits for a grace
 * period, which must not wait for the engine thread, and the engine
 * thread must not wait for the PE inside its read-side section (it
 * did: the stop hung for ever). Then every task has exactly one event. */
Test(faults, ring_max_16_one_engine_stop_while_the_cq_is_full_returns, .timeout = 30)
{
	struct api_fixture f;
	bool seen[RING_TASKS] = { false };

	fixture_init_started(&f, "sw0:engines=1,ring_max=16", 64, 64);
	(void)doca_pe_progress(f.pe);
	for (uint32_t i = 0; i < RING_TASKS; i++) {
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
		sleep_ms(1); /* the engine completes each: the CQ fills at 16 */
	}
	sleep_ms(100);
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (uint32_t k = 0; k < RING_TASKS; k++) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t u = doca_event_get_user_data(ev).u64;

		cr_assert_lt(u, RING_TASKS, "event of unknown task %llu", (unsigned long long)u);
		cr_assert(!seen[u], "a second event for task %llu", (unsigned long long)u);
		seen[u] = true;
		if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE)
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
		doca_event_free(ev);
	}
	expect_no_event_for(f.pe, 20);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
}

/* The same tasks, stopped before any progress: each task gets exactly one
 * event, a copy or a flush, the ones that waited for the ring included,
 * and in submission order (the device's first, then those that waited).
 * Returns how many were flushed. */
static uint32_t ring_max_stop_in_order(const char *dev_name)
{
	struct api_fixture f;
	uint32_t flushed = 0;

	fixture_init_started(&f, dev_name, 64, 64);
	(void)doca_pe_progress(f.pe);
	for (uint32_t i = 0; i < RING_TASKS; i++)
		assert_ok(submit_copy(f.ctx, f.src, f.dst, i, 0));
	assert_doca(doca_ctx_stop(f.ctx), DOCA_ERROR_IN_PROGRESS);
	for (uint32_t k = 0; k < RING_TASKS; k++) {
		struct doca_event *ev = wait_event(f.pe);
		uint64_t u = doca_event_get_user_data(ev).u64;

		cr_assert_eq(u, k, "event %u is of task %llu: not in submission order", k, (unsigned long long)u);
		if (doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE) {
			assert_doca(doca_event_get_error(ev), DOCA_ERROR_SHUTDOWN);
			cr_assert_eq(doca_event_get_bytes(ev), 0, "a flushed task copied bytes");
			flushed++;
		} else {
			cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS, "task %llu: status %d",
				     (unsigned long long)u, doca_event_get_status(ev));
		}
		doca_event_free(ev);
	}
	expect_no_event_for(f.pe, 20);
	progress_until_state(f.pe, f.ctx, DOCA_CTX_STATE_IDLE);
	fixture_fini(&f);
	return flushed;
}

Test(faults, ring_max_16_stop_flushes_the_tasks_that_wait_in_order_inline)
{
	/* nothing ran before the stop (inline: only a progress call runs a
	 * task), so every task is flushed: those in the ring by the device,
	 * those that wait for the turn (the run's backlog) by the engine */
	uint32_t flushed = ring_max_stop_in_order("sw0:ring_max=16");

	cr_assert_eq(flushed, RING_TASKS, "%u of %u flushed", flushed, RING_TASKS);
}

Test(faults, ring_max_16_stop_flushes_the_tasks_that_wait_in_order_one_engine)
{
	(void)ring_max_stop_in_order("sw0:engines=1,ring_max=16"); /* the engine may copy some first */
}
