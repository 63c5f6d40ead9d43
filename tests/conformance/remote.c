/*
 * tests/conformance/remote.c — remote memory on the device under test, in
 * one process: the fixture's context exports its memories, a second
 * context on the same device and PE imports them, so the PE both issues
 * the RDMA and serves it. A device without remote memory (sw0, verbs)
 * must say DOCA_ERROR_NOT_SUPPORTED to export and import, and nothing else.
 */
#include <string.h>

#include "tests/conformance/conformance.h"

#define BIG (1u << 20)

/* The importing side: a context next to the fixture, one local READ|WRITE
 * memory of len bytes, and the fixture's src (exported READ) and dst
 * (exported WRITE) as remote memories. */
struct remote_pair {
	struct api_sibling s;
	struct doca_mem *local;
	uint8_t *local_bytes;
	struct doca_mem *rsrc; /* the fixture's src_mem, READ */
	struct doca_mem *rdst; /* the fixture's dst_mem, WRITE */
};

/* Whether doca_dev_list gives the device under test the "export" capability */
static bool conf_dev_exports(void)
{
	struct doca_dev_info info;

	conf_dev_info(&info);
	return strstr(info.caps, "export") != NULL;
}

/* A device with remote memory exports and imports; one without refuses
 * both with NOT_SUPPORTED, makes nothing, and does not list "export". */
Test(conf_remote, export_and_import_work_or_are_refused_as_not_supported)
{
	static const uint8_t junk[64];
	struct api_fixture f;
	struct doca_mem *none = NULL;
	const void *desc = junk;
	size_t dlen = 77;

	fixture_init_started(&f, conf_dev(), 4096, 0);
	doca_error_t err = doca_mem_export(f.src_mem, DOCA_ACCESS_FLAG_READ, &desc, &dlen);

	if (err == DOCA_ERROR_NOT_SUPPORTED) {
		cr_assert(!conf_dev_exports(), "%s lists \"export\" but refuses it", conf_dev());
		cr_assert(desc == junk && dlen == 77, "a refused export wrote its out-parameters");
		assert_doca(doca_mem_import(f.ctx, junk, sizeof(junk), &none), DOCA_ERROR_NOT_SUPPORTED);
		cr_assert_null(none);
	} else {
		assert_ok(err);
		cr_assert(conf_dev_exports(), "%s exports but does not list \"export\"", conf_dev());
		cr_assert(desc != junk && dlen > 0, "an export without a descriptor");
	}
	fixture_fini(&f);
}

/* Skips the test (after tearing the fixture down) when the device has no
 * remote memory: export_and_import_... checks that refusal. */
static void remote_pair_init(struct remote_pair *r, struct api_fixture *f, size_t len, uint32_t max_tasks)
{
	const void *desc;
	size_t dlen;
	void *p;

	memset(r, 0, sizeof(*r));
	doca_error_t err = doca_mem_export(f->src_mem, DOCA_ACCESS_FLAG_READ, &desc, &dlen);

	if (err == DOCA_ERROR_NOT_SUPPORTED) {
		fixture_fini(f);
		cr_skip_test("%s has no remote memory (export refused with DOCA_ERROR_NOT_SUPPORTED)", conf_dev());
	}
	assert_ok(err);
	sibling_init(&r->s, f, max_tasks);
	assert_ok(doca_mem_import(r->s.ctx, desc, dlen, &r->rsrc));
	assert_ok(doca_mem_export(f->dst_mem, DOCA_ACCESS_FLAG_WRITE, &desc, &dlen));
	assert_ok(doca_mem_import(r->s.ctx, desc, dlen, &r->rdst));
	assert_ok(doca_mem_create(r->s.ctx, len, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &r->local));
	assert_ok(doca_mem_get_addr(r->local, &p));
	r->local_bytes = p;
}

static void remote_pair_fini(struct remote_pair *r, struct api_fixture *f)
{
	stop_and_drain(r->s.ctx, f->pe);
	assert_ok(doca_mem_destroy(r->local));
	if (r->rsrc != NULL)
		assert_ok(doca_mem_destroy(r->rsrc));
	if (r->rdst != NULL)
		assert_ok(doca_mem_destroy(r->rdst));
	sibling_fini_with_fixture(&r->s, f);
}

/* One copy and its one event; returns its error (bytes checked on success). */
static doca_error_t copy_once(struct api_fixture *f, struct remote_pair *r, struct doca_buf *src,
			      struct doca_buf *dst, size_t len, uint64_t user)
{
	assert_ok(submit_copy(r->s.ctx, src, dst, user, 0));
	struct doca_event *ev = wait_event(f->pe);
	doca_error_t err = doca_event_get_error(ev);

	cr_assert_eq(doca_event_get_user_data(ev).u64, user);
	if (err == DOCA_SUCCESS) {
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_SUCCESS);
		cr_assert_eq(doca_event_get_bytes(ev), len, "%zu bytes, expected %zu", doca_event_get_bytes(ev), len);
	} else {
		cr_assert_eq(doca_event_get_status(ev), DOCA_EVENT_STATUS_FAILURE);
	}
	doca_event_free(ev);
	doca_pe_progress(f->pe);
	cr_assert_null(doca_pe_get_event(f->pe), "a second event");
	return err;
}

Test(conf_remote, read_and_write_from_one_byte_to_a_mebibyte)
{
	static const size_t sizes[] = { 1, 3, 64, 4095, 4096, 65537, BIG - 8 };
	struct api_fixture f;
	struct remote_pair r;

	fixture_init_started(&f, conf_dev(), BIG, 0);
	remote_pair_init(&r, &f, BIG, 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], off = i; /* windows off the base */
		struct doca_buf *rb, *lb;

		assert_ok(doca_buf_create(r.rsrc, off, n, &rb));
		assert_ok(doca_buf_create(r.local, 0, n, &lb));
		memset(r.local_bytes, 0, n);
		assert_ok(copy_once(&f, &r, rb, lb, n, i));
		cr_assert_eq(memcmp(r.local_bytes, f.src_bytes + off, n), 0, "READ of %zu B differs", n);
		assert_ok(doca_buf_destroy(rb));
		assert_ok(doca_buf_create(r.rdst, off, n, &rb));
		fill_pattern(r.local_bytes, n, (uint32_t)i + 40);
		memset(f.dst_bytes, 0, f.len);
		assert_ok(copy_once(&f, &r, lb, rb, n, 100 + i));
		/* delivery complete: the bytes are there when the event is */
		cr_assert_eq(memcmp(f.dst_bytes + off, r.local_bytes, n), 0, "WRITE of %zu B differs", n);
		if (off > 0)
			cr_assert_eq(f.dst_bytes[off - 1], 0, "byte before the window written");
		cr_assert_eq(f.dst_bytes[off + n], 0, "byte after the window written");
		assert_ok(doca_buf_destroy(rb));
		assert_ok(doca_buf_destroy(lb));
	}
	remote_pair_fini(&r, &f);
}

Test(conf_remote, access_is_what_was_exported)
{
	struct api_fixture f;
	struct remote_pair r;
	struct doca_buf *rs, *rd, *lb;
	void *p;
	const void *desc;
	size_t dlen;

	fixture_init_started(&f, conf_dev(), 4096, 0);
	remote_pair_init(&r, &f, 4096, 0);
	/* never more than the memory's own flags */
	assert_doca(doca_mem_export(f.src_mem, DOCA_ACCESS_FLAG_WRITE, &desc, &dlen), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(doca_mem_export(r.rsrc, DOCA_ACCESS_FLAG_READ, &desc, &dlen), DOCA_ERROR_NOT_SUPPORTED);
	assert_doca(doca_mem_get_addr(r.rsrc, &p), DOCA_ERROR_NOT_SUPPORTED);
	assert_doca(doca_buf_create(r.rsrc, 1, 4096, &rs), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_buf_create(r.rsrc, 0, 4096, &rs));
	assert_ok(doca_buf_create(r.rdst, 0, 4096, &rd));
	assert_ok(doca_buf_create(r.local, 0, 4096, &lb));
	assert_doca(doca_buf_get_data(rs, &p), DOCA_ERROR_NOT_SUPPORTED);
	/* src exported READ only, dst WRITE only; both remote is no RMA */
	assert_doca(submit_copy(r.s.ctx, lb, rs, 1, 0), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(submit_copy(r.s.ctx, rd, lb, 2, 0), DOCA_ERROR_NOT_PERMITTED);
	assert_doca(submit_copy(r.s.ctx, rs, rd, 3, 0), DOCA_ERROR_NOT_SUPPORTED);
	expect_no_event_for(f.pe, 20);
	/* a remote memory belongs to its importing context */
	assert_doca(submit_copy(f.ctx, rs, f.dst, 4, 0), DOCA_ERROR_INVALID_VALUE);
	/* and the allowed directions work */
	assert_ok(copy_once(&f, &r, rs, lb, 4096, 5));
	cr_assert_eq(memcmp(r.local_bytes, f.src_bytes, 4096), 0);
	assert_ok(copy_once(&f, &r, lb, rd, 4096, 6));
	cr_assert_eq(memcmp(f.dst_bytes, r.local_bytes, 4096), 0);
	assert_doca(doca_mem_destroy(r.rsrc), DOCA_ERROR_IN_USE);
	assert_ok(doca_buf_destroy(rs));
	assert_ok(doca_buf_destroy(rd));
	assert_ok(doca_buf_destroy(lb));
	remote_pair_fini(&r, &f);
}

Test(conf_remote, a_destroyed_memory_is_revoked_and_the_ctx_goes_on)
{
	struct api_fixture f;
	struct remote_pair r;
	struct doca_buf *rs, *rd, *lb;

	fixture_init_started(&f, conf_dev(), 4096, 0);
	remote_pair_init(&r, &f, 4096, 0);
	assert_ok(doca_buf_create(r.rsrc, 0, 4096, &rs));
	assert_ok(doca_buf_create(r.rdst, 0, 4096, &rd));
	assert_ok(doca_buf_create(r.local, 0, 4096, &lb));
	assert_ok(copy_once(&f, &r, lb, rd, 4096, 1));
	/* the exporter destroys its dst memory: the export is revoked */
	assert_ok(doca_buf_destroy(f.dst));
	f.dst = NULL;
	assert_ok(doca_mem_destroy(f.dst_mem));
	f.dst_mem = NULL;
	doca_error_t e = copy_once(&f, &r, lb, rd, 4096, 2);

	cr_assert(e == DOCA_ERROR_NOT_PERMITTED || e == DOCA_ERROR_CONNECTION_RESET,
		  "a write into a destroyed memory: %s", doca_error_get_name(e));
	/* the same context still reads the memory that lives */
	memset(r.local_bytes, 0, 4096);
	assert_ok(copy_once(&f, &r, rs, lb, 4096, 3));
	cr_assert_eq(memcmp(r.local_bytes, f.src_bytes, 4096), 0);
	assert_ok(doca_buf_destroy(rs));
	assert_ok(doca_buf_destroy(rd));
	assert_ok(doca_buf_destroy(lb));
	/* the fixture's dst side is gone: recreate it so the teardown helpers run */
	assert_ok(doca_mem_create(f.ctx, 4096, DOCA_ACCESS_FLAG_WRITE, &f.dst_mem));
	assert_ok(doca_buf_create(f.dst_mem, 0, 4096, &f.dst));
	remote_pair_fini(&r, &f);
}

Test(conf_remote, stop_gives_every_remote_task_one_event)
{
	enum { N = 64, SLICE = 4096 };
	struct api_fixture f;
	struct remote_pair r;
	struct doca_buf *rd[N], *lb[N];
	uint8_t outcome[N] = { 0 };

	fixture_init_started(&f, conf_dev(), N * SLICE, N);
	remote_pair_init(&r, &f, N * SLICE, N);
	for (uint32_t i = 0; i < N; i++) {
		assert_ok(doca_buf_create(r.rdst, i * SLICE, SLICE, &rd[i]));
		assert_ok(doca_buf_create(r.local, i * SLICE, SLICE, &lb[i]));
		assert_ok(submit_copy(r.s.ctx, lb[i], rd[i], i, 0));
	}
	doca_error_t rc = doca_ctx_stop(r.s.ctx);

	cr_assert(rc == DOCA_ERROR_IN_PROGRESS, "stop with %u tasks accepted: %s", N, doca_error_get_name(rc));
	assert_doca(submit_copy(r.s.ctx, lb[0], rd[0], N, 0), DOCA_ERROR_BAD_STATE);
	conf_reap(f.pe, N, outcome, SLICE, true);
	progress_until_state(f.pe, r.s.ctx, DOCA_CTX_STATE_IDLE);
	for (uint32_t i = 0; i < N; i++) {
		assert_ok(doca_buf_destroy(rd[i]));
		assert_ok(doca_buf_destroy(lb[i]));
	}
	remote_pair_fini(&r, &f);
}
