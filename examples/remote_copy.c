/*
 * remote_copy.c — remote memory across two processes: an exporter makes a
 * memory and exports it (doca_mem_export); the descriptor travels out of
 * band (here a pipe; between hosts, anything: it is a few hundred bytes of
 * text); an importer turns it into a remote memory (doca_mem_import) and
 * runs the same COPY task as on local memory: a READ out of the exporter's
 * memory and a WRITE into it. Public API only.
 *
 *   remote_copy [--dev DEV]                 both sides on this host (fork)
 *   remote_copy --export [--dev DEV]        exporter: prints the descriptor,
 *                                           serves until a line on stdin
 *   remote_copy --import HEX [--dev DEV]    importer of that descriptor
 *
 * DEV defaults to "fab0" (libfabric tcp;ofi_rxm on 127.0.0.1); between
 * hosts give each side its own address: "fab0:addr=192.0.2.10".
 * The exporter's PE must run for peers' copies to land: it progresses
 * between looks at its input (an exporter whose PE never runs serves
 * nothing).
 */
#include <errno.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "example_common.h"

#define MEM_LEN (1024u * 1024u)
#define COPY_LEN (64u * 1024u)
#define WRITE_OFF (512u * 1024u)
#define SEED_EXPORTER 1u
#define SEED_IMPORTER 2u

static const char *side = "";

static void step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void step(const char *fmt, ...)
{
	va_list ap;

	printf("[%s] ", side);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = example_pattern_byte(seed, i);
}

static bool same(const uint8_t *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != example_pattern_byte(seed, i))
			return false;
	return true;
}

struct side_objs {
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct doca_mem *mem;
	uint8_t *bytes;
};

static void open_side(struct side_objs *s, const char *dev)
{
	void *addr;

	EXAMPLE_CHECK(doca_ctx_create(&s->ctx));
	EXAMPLE_CHECK(doca_dev_open(dev, &s->dev));
	EXAMPLE_CHECK(doca_ctx_set_dev(s->ctx, s->dev));
	EXAMPLE_CHECK(doca_pe_create(&s->pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(s->pe, s->ctx));
	EXAMPLE_CHECK(doca_mem_create(s->ctx, MEM_LEN, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE,
				      &s->mem));
	EXAMPLE_CHECK(doca_mem_get_addr(s->mem, &addr));
	s->bytes = addr;
	EXAMPLE_CHECK(doca_ctx_start(s->ctx));
	step("ctx + dev \"%s\" + pe + 1 MiB memory, started", dev);
}

static void close_side(struct side_objs *s)
{
	EXAMPLE_CHECK(doca_ctx_stop(s->ctx));
	EXAMPLE_CHECK(doca_mem_destroy(s->mem));
	EXAMPLE_CHECK(doca_dev_close(s->dev));
	EXAMPLE_CHECK(doca_ctx_destroy(s->ctx));
	EXAMPLE_CHECK(doca_pe_destroy(s->pe));
	step("torn down in reverse order");
}

/* Exporter: export, hand the descriptor to `out`, serve until a line
 * arrives on `in`, then check what the importer wrote. */
static int exporter(const char *dev, int in, FILE *out)
{
	struct side_objs s = { 0 };
	const void *desc;
	size_t len;
	char line[64];

	side = "exporter";
	open_side(&s, dev);
	fill(s.bytes, MEM_LEN, SEED_EXPORTER);
	step("memory filled with pattern %u", SEED_EXPORTER);
	EXAMPLE_CHECK(doca_mem_export(s.mem, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &desc, &len));
	step("doca_mem_export(READ|WRITE) → a %zu-byte descriptor (a bearer capability: pass it only to the peer)",
	     len);
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%02x", ((const uint8_t *)desc)[i]);
	fputc('\n', out);
	fflush(out);
	step("serving: progressing the PE until the importer is done");
	struct pollfd pfd = { .fd = in, .events = POLLIN };
	uint64_t start = example_now_ns();

	for (;;) {
		doca_pe_progress(s.pe);
		if (poll(&pfd, 1, 0) > 0)
			break;
		example_check_deadline(start, "the importer");
	}
	(void)!read(in, line, sizeof(line));
	bool ok = same(s.bytes + WRITE_OFF, COPY_LEN, SEED_IMPORTER) &&
		  same(s.bytes, COPY_LEN, SEED_EXPORTER);

	step("bytes [512 KiB, +64 KiB) now hold the importer's pattern %u: %s", SEED_IMPORTER,
	     ok ? "yes" : "NO");
	close_side(&s); /* destroying the memory revokes the export */
	return ok ? 0 : 1;
}

static void copy(struct side_objs *s, struct doca_buf *src, struct doca_buf *dst, const char *what)
{
	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = src, .dst = dst };
	struct doca_event *ev;
	uint64_t start = example_now_ns();

	EXAMPLE_CHECK(doca_task_submit(s->ctx, &d));
	while ((ev = doca_pe_get_event(s->pe)) == NULL) {
		doca_pe_progress(s->pe);
		example_check_deadline(start, what);
	}
	step("%s → event %s, %zu bytes, %.1f us", what, example_status_name(doca_event_get_status(ev)),
	     doca_event_get_bytes(ev), (double)(example_now_ns() - start) / 1000.0);
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS || doca_event_get_error(ev) != DOCA_SUCCESS)
		example_fail("%s: %s, %s", what, example_status_name(doca_event_get_status(ev)),
			     doca_error_get_name(doca_event_get_error(ev)));
	doca_event_free(ev);
}

static int importer(const char *dev, const char *hex)
{
	struct side_objs s = { 0 };
	struct doca_mem *remote;
	struct doca_buf *rsrc, *rdst, *lbuf;
	uint8_t desc[512];
	size_t digits = strlen(hex), len = digits / 2;
	void *p;

	side = "importer";
	/* two hex digits a byte, nothing else: sscanf's %2x would also take a
	 * sign, a space or "0x", and an odd digit would be dropped unseen */
	if (digits % 2 != 0 || strspn(hex, "0123456789abcdefABCDEF") != digits)
		example_fail("the descriptor is not hex (two digits a byte, as --export prints it)");
	if (len == 0 || len > sizeof(desc))
		example_fail("a descriptor is hex text of 1..%zu bytes", sizeof(desc));
	for (size_t i = 0; i < len; i++) {
		char byte[3] = { hex[2 * i], hex[2 * i + 1], '\0' };

		desc[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	open_side(&s, dev);
	EXAMPLE_CHECK(doca_mem_import(s.ctx, desc, len, &remote));
	step("doca_mem_import(%zu-byte descriptor) → a remote memory", len);
	EXAMPLE_EXPECT(doca_mem_get_addr(remote, &p), DOCA_ERROR_NOT_SUPPORTED);
	step("doca_mem_get_addr(remote) → DOCA_ERROR_NOT_SUPPORTED (its bytes are in the other process)");
	EXAMPLE_CHECK(doca_buf_create(remote, 0, COPY_LEN, &rsrc));
	EXAMPLE_CHECK(doca_buf_create(remote, WRITE_OFF, COPY_LEN, &rdst));
	EXAMPLE_CHECK(doca_buf_create(s.mem, 0, COPY_LEN, &lbuf));
	copy(&s, rsrc, lbuf, "COPY remote[0, 64 KiB) → local (RDMA READ)");
	step("local bytes hold the exporter's pattern %u: %s", SEED_EXPORTER,
	     same(s.bytes, COPY_LEN, SEED_EXPORTER) ? "yes" : "NO");
	if (!same(s.bytes, COPY_LEN, SEED_EXPORTER))
		example_fail("the READ brought the wrong bytes");
	fill(s.bytes, COPY_LEN, SEED_IMPORTER);
	copy(&s, lbuf, rdst, "COPY local → remote[512 KiB, +64 KiB) (RDMA WRITE, delivery complete)");
	EXAMPLE_CHECK(doca_buf_destroy(rsrc));
	EXAMPLE_CHECK(doca_buf_destroy(rdst));
	EXAMPLE_CHECK(doca_buf_destroy(lbuf));
	EXAMPLE_CHECK(doca_mem_destroy(remote));
	close_side(&s);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = "fab0", *hex = NULL;
	bool only_export = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dev") == 0 && i + 1 < argc)
			dev = argv[++i];
		else if (strcmp(argv[i], "--import") == 0 && i + 1 < argc)
			hex = argv[++i];
		else if (strcmp(argv[i], "--export") == 0)
			only_export = true;
		else
			example_fail("usage: remote_copy [--dev DEV] [--export | --import HEX]");
	}
	if (only_export)
		return exporter(dev, STDIN_FILENO, stdout);
	if (hex != NULL)
		return importer(dev, hex);

	/* Both sides here: the descriptor goes child → parent over one pipe,
	 * "done" parent → child over another. */
	int to_parent[2], to_child[2], st;
	char line[1100];

	if (pipe(to_parent) != 0 || pipe(to_child) != 0)
		example_fail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();

	if (pid < 0)
		example_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		close(to_parent[0]);
		close(to_child[1]);
		FILE *out = fdopen(to_parent[1], "w");

		exit(out != NULL ? exporter(dev, to_child[0], out) : 1);
	}
	close(to_parent[1]);
	close(to_child[0]);
	FILE *in = fdopen(to_parent[0], "r");

	if (in == NULL || fgets(line, sizeof(line), in) == NULL)
		example_fail("the exporter sent no descriptor");
	line[strcspn(line, "\n")] = '\0';
	side = "importer";
	step("got the descriptor out of band (a pipe): %.24s...", line);
	int rc = importer(dev, line);

	(void)!write(to_child[1], "done\n", 5); /* a dead exporter shows in its status below */
	close(to_child[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		example_fail("the exporter failed");
	fclose(in);
	printf("remote_copy: a READ and a WRITE across two processes, both checked\n");
	return rc;
}
