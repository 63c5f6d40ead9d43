/*
 * tests/remote/remote_test.c — remote memory across two processes over
 * fab0 (public API only). `remote_test CASE` is one test: it starts an
 * exporter child (remote_exporter.c), imports its descriptor and checks one
 * thing. Without libfabric's tcp;ofi_rxm the program prints "SKIP: ..." and
 * passes. Cases: see the table at the bottom.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "remote_peer.h"

#define MiB (1024u * 1024u)

/* READ remote → local and WRITE local → remote at every size, data checked
 * on both sides, each task one event with its exact byte count. */
static void case_read_write(const char *mode)
{
	static const size_t sizes[] = { 1, 7, 64, 4096, 65536, 1 * MiB, 4 * MiB };
	struct peer p;
	struct importer im;
	struct doca_mem *remote;
	char ans[64];

	peer_start(&p, exporter_dev(), 4 * MiB + 64, mode, "rw");
	importer_open(&im, importer_dev(), 4 * MiB + 64, 0);
	CHECK_OK(doca_mem_import(im.ctx, p.desc, p.desc_len, &remote));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], off = i * 3; /* an offset, so the base is used */
		uint32_t seed = (uint32_t)(i + 1);
		struct doca_buf *rb, *lb;

		CHECK_OK(doca_buf_create(remote, off, n, &rb));
		CHECK_OK(doca_buf_create(im.local, 0, n, &lb));
		/* READ */
		peer_cmd(&p, ans, sizeof(ans), "fill %u", seed);
		memset(im.bytes, 0, n);
		CHECK_OK(importer_copy(&im, rb, lb, n));
		CHECK(bytes_hash(im.bytes, n) == pattern_hash(seed, off, n), "READ of %zu B: wrong bytes", n);
		/* WRITE */
		pattern_fill(im.bytes, n, seed + 100, 0);
		CHECK_OK(importer_copy(&im, lb, rb, n));
		/* delivery complete: the exporter has the bytes when the event comes */
		CHECK(peer_sum(&p, off, n) == pattern_hash(seed + 100, 0, n), "WRITE of %zu B: wrong bytes", n);
		CHECK_OK(doca_buf_destroy(rb));
		CHECK_OK(doca_buf_destroy(lb));
	}
	CHECK_OK(doca_mem_destroy(remote));
	importer_close(&im);
	peer_quit(&p);
}

static void case_read_write_poll(void)
{
	case_read_write("poll");
}

static void case_read_write_worker(void)
{
	case_read_write("worker");
}

static void case_api(void)
{
	struct peer p;
	struct importer im;
	struct doca_mem *remote, *remote_ro, *bogus = NULL;
	struct doca_buf *rb, *rb2, *lb;
	void *ptr;
	uint8_t bad[512];
	const void *desc;
	size_t len;

	peer_start(&p, exporter_dev(), 4096, "poll", "r");
	importer_open(&im, importer_dev(), 4096, 0);

	/* export: access beyond the memory's, wrong flags, a remote memory */
	struct doca_mem *ro;

	CHECK_OK(doca_mem_create(im.ctx, 4096, DOCA_ACCESS_FLAG_READ, &ro));
	CHECK_RC(doca_mem_export(ro, DOCA_ACCESS_FLAG_WRITE, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_RC(doca_mem_export(ro, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &desc, &len),
		 DOCA_ERROR_NOT_PERMITTED);
	CHECK_RC(doca_mem_export(ro, 0, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_mem_export(ro, 1u << 7, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_mem_export(ro, DOCA_ACCESS_FLAG_READ, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	const void *d1, *d2;
	size_t l1, l2;

	CHECK_OK(doca_mem_export(ro, DOCA_ACCESS_FLAG_READ, &d1, &l1));
	CHECK_OK(doca_mem_export(ro, DOCA_ACCESS_FLAG_READ, &d2, &l2));
	CHECK(d1 == d2 && l1 == l2, "the same access exported twice gives the same descriptor");
	CHECK_OK(doca_mem_destroy(ro));

	/* import: every truncation, every flipped byte, an extra byte */
	CHECK(p.desc_len <= sizeof(bad) - 1, "descriptor too long");
	for (size_t n = 0; n < p.desc_len; n++)
		CHECK_RC(doca_mem_import(im.ctx, p.desc, n, &bogus), n == 0 ? DOCA_ERROR_INVALID_VALUE
									    : DOCA_ERROR_INVALID_VALUE);
	memcpy(bad, p.desc, p.desc_len);
	bad[p.desc_len] = 0;
	CHECK_RC(doca_mem_import(im.ctx, bad, p.desc_len + 1, &bogus), DOCA_ERROR_INVALID_VALUE);
	for (size_t i = 0; i < p.desc_len; i++) {
		memcpy(bad, p.desc, p.desc_len);
		bad[i] ^= 0x01;
		CHECK_RC(doca_mem_import(im.ctx, bad, p.desc_len, &bogus), DOCA_ERROR_INVALID_VALUE);
	}
	CHECK(bogus == NULL, "a refused import wrote its out-parameter");
	CHECK_RC(doca_mem_import(im.ctx, NULL, p.desc_len, &bogus), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_mem_import(im.ctx, p.desc, p.desc_len, NULL), DOCA_ERROR_INVALID_VALUE);

	/* a read-only export: reads work, writes are refused at submit */
	CHECK_OK(doca_mem_import(im.ctx, p.desc, p.desc_len, &remote_ro));
	CHECK_OK(doca_mem_import(im.ctx, p.desc, p.desc_len, &remote));
	size_t rlen;

	CHECK_OK(doca_mem_get_len(remote, &rlen));
	CHECK(rlen == 4096, "remote length %zu", rlen);
	CHECK_RC(doca_mem_get_addr(remote, &ptr), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_RC(doca_mem_export(remote, DOCA_ACCESS_FLAG_READ, &desc, &len), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_RC(doca_buf_create(remote, 4096, 1, &rb), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_buf_create(remote, 1, 4096, &rb), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_create(remote, 0, 4096, &rb));
	CHECK_OK(doca_buf_create(remote_ro, 0, 4096, &rb2));
	CHECK_RC(doca_buf_get_data(rb, &ptr), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_buf_create(im.local, 0, 4096, &lb));
	struct doca_task_desc both = { .type = DOCA_TASK_COPY, .src = rb, .dst = rb2 };
	struct doca_task_desc wr = { .type = DOCA_TASK_COPY, .src = lb, .dst = rb };

	CHECK_RC(doca_task_submit(im.ctx, &both), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_RC(doca_task_submit(im.ctx, &wr), DOCA_ERROR_NOT_PERMITTED);
	doca_pe_progress(im.pe);
	CHECK(doca_pe_get_event(im.pe) == NULL, "a refused task made an event");
	char ans[32];

	peer_cmd(&p, ans, sizeof(ans), "fill 9");
	CHECK_OK(importer_copy(&im, rb, lb, 4096));
	CHECK(bytes_hash(im.bytes, 4096) == pattern_hash(9, 0, 4096), "read-only export: wrong bytes");
	/* destroy order as for local memory */
	CHECK_RC(doca_mem_destroy(remote), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_buf_destroy(rb));
	CHECK_OK(doca_buf_destroy(rb2));
	CHECK_OK(doca_buf_destroy(lb));
	CHECK_OK(doca_mem_destroy(remote));
	CHECK_OK(doca_mem_destroy(remote_ro));
	importer_close(&im);

	/* sw0 cannot export or import */
	struct importer sw;

	importer_open(&sw, "sw0", 4096, 0);
	CHECK_RC(doca_mem_export(sw.local, DOCA_ACCESS_FLAG_READ, &desc, &len), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_RC(doca_mem_import(sw.ctx, p.desc, p.desc_len, &bogus), DOCA_ERROR_NOT_SUPPORTED);
	importer_close(&sw); /* closes the device: no memory was left behind by the refusals */
	peer_quit(&p);
}

/* Open strings: an unknown provider, addresses that cannot be bound. */
static void case_open_errors(void)
{
	struct doca_dev *dev = NULL;

	CHECK_RC(doca_dev_open("fab0:prov=nosuchprov", &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_dev_open("fab0:addr=0.0.0.0", &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_dev_open("fab0:addr=192.0.2.77", &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_dev_open("fab0:addr=not-an-ip", &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_RC(doca_dev_open("fab0:colour=blue", &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK(dev == NULL, "a refused open wrote its out-parameter");
	CHECK_OK(doca_dev_open("fab0", &dev));
	CHECK_OK(doca_dev_close(dev));
	/* listed, with its provider */
	struct doca_dev_info infos[16];
	size_t count = 0;
	bool found = false;

	CHECK_OK(doca_dev_list(infos, 16, &count));
	for (size_t i = 0; i < count && i < 16; i++)
		found = found || (strcmp(infos[i].name, "fab0") == 0 &&
				  strstr(infos[i].caps, "prov=tcp;ofi_rxm") != NULL);
	CHECK(found, "doca_dev_list does not show fab0 with prov=tcp;ofi_rxm");
}

struct test_case {
	const char *name;
	void (*fn)(void);
};

static const struct test_case cases[] = {
	{ "read_write", case_read_write_poll },
	{ "read_write_worker", case_read_write_worker },
	{ "api", case_api },
	{ "open_errors", case_open_errors },
};

int main(int argc, char **argv)
{
	struct doca_dev *dev;

	if (argc >= 2 && strcmp(argv[1], "exporter") == 0)
		return exporter_main(argc - 2, argv + 2);
	CHECK(argc == 2, "usage: remote_test CASE | exporter DEV SIZE MODE ACCESS");
	signal(SIGPIPE, SIG_IGN);
	if (doca_dev_open("fab0", &dev) != DOCA_SUCCESS) {
		printf("SKIP: remote: fab0 cannot be opened here (libfabric tcp;ofi_rxm missing)\n");
		return 0;
	}
	CHECK_OK(doca_dev_close(dev));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, argv[1]) == 0) {
			cases[i].fn();
			printf("PASS: %s\n", argv[1]);
			return 0;
		}
	}
	CHECK(false, "no case '%s'", argv[1]);
}
