/*
 * tests/api/common.h — shared helpers of the public-API test suite.
 *
 * The tests use only <doca_core.h>. A fixture builds the whole object tree of
 * the seed's lifecycle (ctx + dev + pe + a READ source memory + a WRITE
 * destination memory + one buffer over each) so a test only writes the step
 * it checks. Every helper asserts what it does: a helper that returns has
 * succeeded.
 */
#ifndef DOCA_TESTS_API_COMMON_H
#define DOCA_TESTS_API_COMMON_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include <doca_core.h>

/* How long a helper waits for something the library owes us (an event, a
 * state) before the test fails. Generous for ASan builds on 2 busy cores;
 * a passing test never comes close. */
#define API_WAIT_MS 5000

/* Assert that a call returns exactly @p expected, naming both codes. */
#define assert_doca(expr, expected)                                                               \
	do {                                                                                       \
		doca_error_t assert_doca_rc_ = (expr);                                             \
		doca_error_t assert_doca_exp_ = (expected);                                        \
		cr_assert_eq(assert_doca_rc_, assert_doca_exp_, "%s returned %s, expected %s",    \
			     #expr, doca_error_get_name(assert_doca_rc_),                          \
			     doca_error_get_name(assert_doca_exp_));                                \
	} while (0)

#define assert_ok(expr) assert_doca((expr), DOCA_SUCCESS)

/* Assert the state of a context. */
#define assert_state(ctx, expected)                                                                \
	do {                                                                                       \
		enum doca_ctx_state assert_state_s_ = (enum doca_ctx_state)-1;                     \
		assert_ok(doca_ctx_get_state((ctx), &assert_state_s_));                             \
		cr_assert_eq(assert_state_s_, (expected), "ctx state is %s, expected %s",         \
			     state_name(assert_state_s_), state_name(expected));                    \
	} while (0)

/** The whole object tree of one context. */
struct api_fixture {
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mem *src_mem; /* DOCA_ACCESS_FLAG_READ */
	struct doca_mem *dst_mem; /* DOCA_ACCESS_FLAG_WRITE */
	struct doca_buf *src;     /* the whole of src_mem */
	struct doca_buf *dst;     /* the whole of dst_mem */
	uint8_t *src_bytes;       /* CPU view of src_mem */
	uint8_t *dst_bytes;       /* CPU view of dst_mem */
	size_t len;               /* length of each memory and buffer */
	uint32_t seed;            /* pattern seed of src_bytes */
};

/*
 * Build ctx (max_tasks when non-zero), open and bind @p dev_name, create and
 * connect a PE, create src_mem (READ) and dst_mem (WRITE) of @p len bytes with
 * one buffer over each. src is filled with a pattern, dst is zero. The ctx is
 * IDLE.
 */
void fixture_init(struct api_fixture *f, const char *dev_name, size_t len, uint32_t max_tasks);
/* fixture_init + doca_ctx_start. */
void fixture_init_started(struct api_fixture *f, const char *dev_name, size_t len, uint32_t max_tasks);
/*
 * Tear everything down in the seed's order, asserting success at each step:
 * stop if RUNNING, reap every event until IDLE, destroy the buffers and
 * memories (those not already NULL), close the device, destroy ctx and PE.
 */
void fixture_fini(struct api_fixture *f);
/* A second ctx on a fixture's device and PE, with one READ|WRITE memory
 * and 64-byte src (offset 0) and dst (offset 64) buffers, started. */
struct api_sibling {
	struct doca_ctx *ctx;
	struct doca_mem *mem;
	struct doca_buf *src;
	struct doca_buf *dst;
};

/* Make @p s next to the started fixture @p a (max_tasks when non-zero). */
void sibling_init(struct api_sibling *s, struct api_fixture *a, uint32_t max_tasks);
/* Stop and drain both ctxs, then tear down the sibling and the fixture in
 * the seed's order (the device is closed before either ctx is destroyed). */
void sibling_fini_with_fixture(struct api_sibling *s, struct api_fixture *a);
/* The same for the @p n siblings of s[] on one fixture. */
void siblings_fini_with_fixture(struct api_sibling *s, uint32_t n, struct api_fixture *a);

/* Stop a RUNNING ctx and reap/free events until IDLE. */
void stop_and_drain(struct doca_ctx *ctx, struct doca_pe *pe);

/* Submit a copy; returns what doca_task_submit returns. */
doca_error_t submit_copy(struct doca_ctx *ctx, struct doca_buf *src, struct doca_buf *dst, uint64_t user,
			 uint32_t flags);
/* Progress until an event is ready and return it; the test fails after API_WAIT_MS. */
struct doca_event *wait_event(struct doca_pe *pe);
/* Wait for one event, assert SUCCESS / DOCA_SUCCESS / bytes / user data, free it. */
void expect_success_event(struct doca_pe *pe, uint64_t user, size_t bytes);
/* Asserts ev is a SUCCESS event of `bytes` bytes with user data `user`, then frees it. */
void assert_success_event(struct doca_event *ev, uint64_t user, size_t bytes);
/* Progress for @p ms milliseconds and assert that no event appeared. */
void expect_no_event_for(struct doca_pe *pe, unsigned ms);
/* Progress (reaping nothing) until @p ctx is in @p state; fails after API_WAIT_MS. */
void progress_until_state(struct doca_pe *pe, struct doca_ctx *ctx, enum doca_ctx_state state);

/*
 * "The object still works": copy the fixture's src into dst (a fresh
 * pattern), wait for the event and verify every byte. The ctx must be RUNNING
 * and have a free credit.
 */
void fixture_copy_and_verify(struct api_fixture *f);

/* Deterministic byte pattern (never all one value). */
void fill_pattern(void *p, size_t len, uint32_t seed);
/* Index of the first byte differing from the pattern, or len if none. */
size_t pattern_mismatch(const void *p, size_t len, uint32_t seed);
/* Index of the first byte differing from @p value, or len if none. */
size_t bytes_mismatch(const void *p, size_t len, uint8_t value);

uint64_t now_ns(void);
/* Pin the calling thread to the first CPU it may run on; @p process gets
 * the thread's affinity from before (restore it with
 * pthread_setaffinity_np). Skips the test on a one-CPU process. */
void pin_to_first_cpu(cpu_set_t *process);
void sleep_ms(unsigned ms);
/* Number of open file descriptors of this process. */
int count_open_fds(void);
/* count_open_fds once it is at most @p limit, or after API_WAIT_MS: a PE's
 * fds and a queue pair's are closed after an RCU grace period, on another
 * thread, so they may outlive the destroy call by a moment. */
int count_open_fds_settled(int limit);
const char *state_name(enum doca_ctx_state s);
/* What was written to stderr so far, in a test run with .init = cr_redirect_stderr. */
void read_redirected_stderr(char *text, size_t cap);

/* Where the test thread currently is, so callbacks can record which call ran them. */
enum api_where {
	WHERE_TEST = 0,
	WHERE_START,
	WHERE_STOP,
	WHERE_PROGRESS,
};
extern volatile int api_where;

/* doca_ctx_start / doca_ctx_stop / doca_pe_progress with api_where set around the call. */
doca_error_t tracked_start(struct doca_ctx *ctx);
doca_error_t tracked_stop(struct doca_ctx *ctx);
uint32_t tracked_progress(struct doca_pe *pe);

/* One recorded state transition. */
struct state_record {
	enum doca_ctx_state prev;
	enum doca_ctx_state next;
	enum doca_ctx_state observed; /* doca_ctx_get_state inside the callback */
	int where;                    /* api_where when the callback ran */
	uint64_t user;                /* ctx user data the callback received */
};

#define STATE_LOG_MAX 32
struct state_log {
	int count;
	struct state_record rec[STATE_LOG_MAX];
};

/*
 * A doca_ctx_state_cb_t that appends to the struct state_log given as the
 * ctx user data (ptr). Set with doca_ctx_set_user_data({.ptr = &log}).
 */
void record_state_cb(struct doca_ctx *ctx, union doca_data ctx_user_data, enum doca_ctx_state prev,
		     enum doca_ctx_state next);

#endif /* DOCA_TESTS_API_COMMON_H */
