/*
 * remote_target.c — the other process of `doca_bench remote`: pinned to the
 * other CPU, it exports a doca memory on fab0 and opens a raw libfabric
 * target, hands both addresses to the parent over a pipe, then serves both
 * from one loop (doca_pe_progress, fi_cq_read on the raw target) until the
 * parent closes its pipe. Both contenders get the same target loop.
 */
#include "bench.h"
#include "peer_fabric.h"

#include <doca_core.h>

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void put_hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

static size_t get_hex(const char *s, uint8_t *b, size_t cap)
{
	size_t n = 0;
	unsigned v;

	while (n < cap && sscanf(s + 2 * n, "%2x", &v) == 1)
		b[n++] = (uint8_t)v;
	return n;
}

#define CHECK_DOCA(call)                                                                            \
	do {                                                                                       \
		doca_error_t e_ = (call);                                                          \
		if (e_ != DOCA_SUCCESS)                                                            \
			bench_fail("target: %s: %s", #call, doca_error_get_name(e_));              \
	} while (0)

static _Noreturn void target_main(int in, FILE *out)
{
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct doca_mem *mem;
	struct fabric_side *raw;
	struct fabric_raw_addr ra;
	const void *desc;
	size_t len;
	const char *why;

	(void)bench_pin_self(BENCH_OTHER_CPU);
	CHECK_DOCA(doca_dev_open(REMOTE_DEV, &dev));
	CHECK_DOCA(doca_ctx_create(&ctx));
	CHECK_DOCA(doca_ctx_set_dev(ctx, dev));
	CHECK_DOCA(doca_pe_create(&pe));
	CHECK_DOCA(doca_pe_connect_ctx(pe, ctx));
	CHECK_DOCA(doca_ctx_start(ctx));
	CHECK_DOCA(doca_mem_create(ctx, REMOTE_TARGET_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &mem));
	CHECK_DOCA(doca_mem_export(mem, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &desc, &len));
	if ((why = fabric_target_open(&raw, REMOTE_TARGET_LEN, &ra)))
		bench_fail("target: %s", why);
	fprintf(out, "DOCA ");
	put_hex(out, desc, len);
	fprintf(out, "\nRAW %llu %llu ", (unsigned long long)ra.key, (unsigned long long)ra.base);
	put_hex(out, ra.addr, ra.addr_len);
	fprintf(out, "\n");
	fflush(out);
	struct pollfd pfd = { .fd = in, .events = POLLIN };

	for (unsigned i = 0;; i++) {
		doca_pe_progress(pe);
		fabric_target_progress(raw);
		if ((i & 4095) == 0 && poll(&pfd, 1, 0) > 0)
			break;
	}
	fabric_side_close(raw);
	CHECK_DOCA(doca_ctx_stop(ctx));
	CHECK_DOCA(doca_mem_destroy(mem));
	CHECK_DOCA(doca_dev_close(dev));
	CHECK_DOCA(doca_ctx_destroy(ctx));
	CHECK_DOCA(doca_pe_destroy(pe));
	_exit(0);
}

const char *remote_target_start(struct remote_target *t)
{
	int down[2], up[2];
	char line[2048];
	unsigned long long key, base;
	int off = 0;

	memset(t, 0, sizeof(*t));
	if (pipe(down) || pipe(up))
		bench_fail("pipe");
	fflush(NULL);
	t->pid = fork();
	if (t->pid < 0)
		bench_fail("fork");
	if (t->pid == 0) {
		close(down[1]);
		close(up[0]);
		target_main(down[0], fdopen(up[1], "w"));
	}
	close(down[0]);
	close(up[1]);
	t->to_child = down[1];
	FILE *in = fdopen(up[0], "r");

	if (!in || !fgets(line, sizeof(line), in) || strncmp(line, "DOCA ", 5)) {
		remote_target_stop(t);
		if (in)
			fclose(in);
		return "the target process could not export (is fab0 there? libfabric tcp;ofi_rxm)";
	}
	t->desc_len = get_hex(line + 5, t->desc, sizeof(t->desc));
	if (!fgets(line, sizeof(line), in) || sscanf(line, "RAW %llu %llu %n", &key, &base, &off) != 2) {
		fclose(in);
		remote_target_stop(t);
		return "the target process could not open its raw libfabric target";
	}
	fclose(in);
	t->raw.key = key;
	t->raw.base = base;
	t->raw.addr_len = get_hex(line + off, t->raw.addr, sizeof(t->raw.addr));
	return NULL;
}

void remote_target_stop(struct remote_target *t)
{
	int st;

	if (t->pid <= 0)
		return;
	close(t->to_child);
	if (waitpid(t->pid, &st, 0) != t->pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "doca_bench: the remote target process ended badly (status %#x)\n", st);
	t->pid = 0;
}
