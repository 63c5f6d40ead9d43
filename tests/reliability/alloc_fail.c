/*
 * tests/reliability/alloc_fail.c — allocation-failure injection over the
 * seed's lifecycle. For k = 1, 2, ... the k-th engine allocation fails
 * (engine/alloc.h); the failing call must return DOCA_ERROR_NO_MEMORY, hand
 * out nothing and leave every object usable: the step is retried with
 * injection off and the script runs to its end, tearing everything down.
 * The loop ends at the first k the script never reaches. Backend allocations
 * (plain malloc in hw/sw) are not counted.
 *
 * Needs -Dalloc_fail_injection=true (the ASan build of ./run test); other
 * builds skip with a reason.
 */
#include "../api/common.h"

#include <string.h>

#include "engine/alloc.h"

#ifdef DOCA_ALLOC_FAIL_INJECTION

#include "engine/rcu.h"

#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOC_ASAN 1
#endif
#endif
#ifdef ALLOC_ASAN
#include <sanitizer/lsan_interface.h>
#endif

struct script {
	const char *dev_name;
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mem *src_mem, *dst_mem;
	struct doca_buf *src, *dst;
};

/* ---- the steps, in the seed's order; each returns what its call returned ---- */

static doca_error_t st_ctx_create(struct script *s) { return doca_ctx_create(&s->ctx); }
static doca_error_t st_dev_open(struct script *s) { return doca_dev_open(s->dev_name, &s->dev); }
static doca_error_t st_set_dev(struct script *s) { return doca_ctx_set_dev(s->ctx, s->dev); }
static doca_error_t st_set_max(struct script *s) { return doca_ctx_set_max_tasks(s->ctx, 16); }
static doca_error_t st_pe_create(struct script *s) { return doca_pe_create(&s->pe); }
static doca_error_t st_pe_connect(struct script *s) { return doca_pe_connect_ctx(s->pe, s->ctx); }

static doca_error_t st_src_mem(struct script *s)
{
	doca_error_t rc = doca_mem_create(s->ctx, 1 << 20, DOCA_ACCESS_FLAG_READ, &s->src_mem);
	void *addr;

	if (rc == DOCA_SUCCESS && doca_mem_get_addr(s->src_mem, &addr) == DOCA_SUCCESS)
		fill_pattern(addr, 4096, 3);
	return rc;
}

static doca_error_t st_dst_mem(struct script *s)
{
	return doca_mem_create(s->ctx, 1 << 20, DOCA_ACCESS_FLAG_WRITE, &s->dst_mem);
}

static doca_error_t st_src_buf(struct script *s) { return doca_buf_create(s->src_mem, 0, 4096, &s->src); }
static doca_error_t st_dst_buf(struct script *s) { return doca_buf_create(s->dst_mem, 0, 4096, &s->dst); }

static doca_error_t st_start(struct script *s)
{
	doca_error_t rc = doca_ctx_start(s->ctx);

	if (rc != DOCA_SUCCESS)
		assert_state(s->ctx, DOCA_CTX_STATE_IDLE); /* a failed start stays IDLE */
	return rc;
}

/* submit → progress → event → verify → free: allocation-free by design */
static doca_error_t st_copy(struct script *s)
{
	doca_error_t rc = submit_copy(s->ctx, s->src, s->dst, 42, 0);
	void *dst;

	if (rc != DOCA_SUCCESS)
		return rc;
	expect_success_event(s->pe, 42, 4096);
	assert_ok(doca_buf_get_data(s->dst, &dst));
	cr_assert_eq(pattern_mismatch(dst, 4096, 3), (size_t)4096, "the copy differs from its source");
	return DOCA_SUCCESS;
}

static doca_error_t st_stop(struct script *s) { return doca_ctx_stop(s->ctx); }
static doca_error_t st_src_buf_destroy(struct script *s) { return doca_buf_destroy(s->src); }
static doca_error_t st_dst_buf_destroy(struct script *s) { return doca_buf_destroy(s->dst); }
static doca_error_t st_src_mem_destroy(struct script *s) { return doca_mem_destroy(s->src_mem); }
static doca_error_t st_dst_mem_destroy(struct script *s) { return doca_mem_destroy(s->dst_mem); }
static doca_error_t st_dev_close(struct script *s) { return doca_dev_close(s->dev); }
static doca_error_t st_ctx_destroy(struct script *s) { return doca_ctx_destroy(s->ctx); }
static doca_error_t st_pe_destroy(struct script *s) { return doca_pe_destroy(s->pe); }

struct step {
	const char *name;
	doca_error_t (*run)(struct script *s);
	size_t out; /* offset of the handle it creates in struct script, or 0 */
};

#define STEP(fn) { #fn, st_##fn, 0 }
#define MAKES(fn, field) { #fn, st_##fn, offsetof(struct script, field) }

static const struct step steps[] = {
	MAKES(ctx_create, ctx),  MAKES(dev_open, dev),      STEP(set_dev),
	STEP(set_max),           MAKES(pe_create, pe),      STEP(pe_connect),
	MAKES(src_mem, src_mem), MAKES(dst_mem, dst_mem),   MAKES(src_buf, src),
	MAKES(dst_buf, dst),     STEP(start),               STEP(copy),
	STEP(stop),              STEP(src_buf_destroy),     STEP(dst_buf_destroy),
	STEP(src_mem_destroy),   STEP(dst_mem_destroy),     STEP(dev_close),
	STEP(ctx_destroy),       STEP(pe_destroy),
};

/*
 * Run the script with allocation k failing. Returns true if the k-th
 * allocation happened (so k + 1 is worth trying).
 */
static bool run_script(const char *dev_name, uint64_t k)
{
	struct script s = { .dev_name = dev_name };
	bool injected = false;

	doca_alloc_fail_at(k);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *st = &steps[i];
		doca_error_t rc = st->run(&s);

		if (!injected && doca_alloc_count() >= k) {
			injected = true;
			doca_alloc_fail_at(0); /* one failure per run: the rest of the script runs clean */
			if (rc != DOCA_SUCCESS) {
				assert_doca(rc, DOCA_ERROR_NO_MEMORY);
				if (st->out != 0)
					cr_assert_null(*(void **)((char *)&s + st->out),
						       "k=%llu: failed %s handed out a handle", (unsigned long long)k,
						       st->name);
				rc = st->run(&s); /* the objects it named are still usable */
			}
		}
		cr_assert_eq(rc, DOCA_SUCCESS, "%s, allocation %llu failing: step %s returned %s", dev_name,
			     (unsigned long long)k, st->name, doca_error_get_name(rc));
	}
	doca_alloc_fail_at(0);
	return injected;
}

static void alloc_fail_loop(const char *dev_name)
{
	uint64_t k = 1;

	while (run_script(dev_name, k))
		k++;
	cr_log_info("%s: the lifecycle makes %llu engine allocations; each one failing was survived", dev_name,
		    (unsigned long long)(k - 1));
	cr_assert_gt(k, 5, "%s: only %llu allocations counted: is injection wired?", dev_name,
		     (unsigned long long)(k - 1));
#ifdef ALLOC_ASAN
	doca_rcu_barrier(); /* every RCU-deferred free has run */
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "%s: LeakSanitizer found leaks (see above)", dev_name);
#endif
}

Test(reliability_alloc_fail, lifecycle_inline)
{
	alloc_fail_loop("sw0");
}

Test(reliability_alloc_fail, lifecycle_engine_thread)
{
	alloc_fail_loop("sw0:engines=1");
}

#else

Test(reliability_alloc_fail, lifecycle_inline)
{
	cr_skip_test("allocation-failure injection is not compiled in: build with -Dalloc_fail_injection=true "
		     "(the ASan build of ./run test does)");
}

Test(reliability_alloc_fail, lifecycle_engine_thread)
{
	cr_skip_test("allocation-failure injection is not compiled in: build with -Dalloc_fail_injection=true "
		     "(the ASan build of ./run test does)");
}

#endif
