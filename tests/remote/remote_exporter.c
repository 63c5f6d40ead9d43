/*
 * tests/remote/remote_exporter.c — the exporter role of the remote tests
 * (see remote_peer.h): one fab0 device, a started context whose PE serves
 * peers' RMA ("poll": this thread progresses between commands; "event": it
 * sleeps on the PE's notification fd and stdin; "worker": a worker thread
 * runs the PE), one memory (and a spare one, on command), commands on
 * stdin.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote_peer.h"

struct exporter {
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct doca_mem *mem;
	struct doca_mem *spare; /* "spare": a second exported memory */
	uint8_t *bytes;
	size_t len;
	int mode; /* 0 poll, 1 event, 2 worker */
	uint8_t *own; /* the exporter's own region ("own"), freed at exit */
	pid_t child;  /* "fork_destroy": reaped at exit */
};

static unsigned destroy_warnings;
static unsigned export_lines; /* lines of doca_mem_export, each with the device's reason */

static void count_destroy_warning(enum doca_log_level level, const char *message, void *user)
{
	(void)user;
	if (level == DOCA_LOG_WARN && strstr(message, "doca_mem_destroy") != NULL)
		destroy_warnings++;
	if (strstr(message, "doca_mem_export") != NULL)
		export_lines += level == DOCA_LOG_WARN &&
				strstr(message, "cannot make an endpoint there") != NULL &&
				strstr(message, "(DOCA_ERROR_AGAIN)") != NULL
			? 1u
			: 1000u; /* a line that does not say why */
}

/* A second memory exported, then destroyed while a forked child (that
 * sleeps @p ms, then exits) holds copies of the fds: the service
 * endpoint cannot be made again on its port. Says how many warnings the
 * destroy logged. */
static void fork_destroy(struct exporter *x, unsigned long long ms)
{
	struct doca_mem *b;
	const void *desc;
	size_t len;
	enum doca_log_level level = doca_log_get_level();

	CHECK_OK(doca_mem_create(x->ctx, 4096, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &b));
	CHECK_OK(doca_mem_export(b, DOCA_ACCESS_FLAG_WRITE, &desc, &len));
	fflush(stdout);
	x->child = fork();
	CHECK(x->child >= 0, "fork: %s", strerror(errno));
	if (x->child == 0) {
		usleep((useconds_t)(ms * 1000));
		_exit(0);
	}
	destroy_warnings = 0;
	CHECK_OK(doca_log_set_level(DOCA_LOG_WARN));
	CHECK_OK(doca_log_set_handler(count_destroy_warning, NULL));
	CHECK_OK(doca_mem_destroy(b));
	CHECK_OK(doca_log_set_handler(NULL, NULL));
	CHECK_OK(doca_log_set_level(level));
	/* the child holds the port still: a new export is refused for now,
	 * and writes nothing */
	const void *c_desc = &level;
	size_t c_len = 77;
	doca_error_t c_err;

	CHECK_OK(doca_mem_create(x->ctx, 4096, DOCA_ACCESS_FLAG_READ, &b));
	export_lines = 0;
	CHECK_OK(doca_log_set_level(DOCA_LOG_WARN));
	CHECK_OK(doca_log_set_handler(count_destroy_warning, NULL));
	c_err = doca_mem_export(b, DOCA_ACCESS_FLAG_READ, &c_desc, &c_len);
	CHECK_OK(doca_log_set_handler(NULL, NULL));
	CHECK_OK(doca_log_set_level(level));
	CHECK(c_desc == (const void *)&level && c_len == 77, "a refused export wrote its out-parameters");
	CHECK_OK(doca_mem_destroy(b));
	/* the refused export logged the device's reason, once */
	printf("WARNED %u EXPORT %s LOGGED %u\n", destroy_warnings, doca_error_get_name(c_err), export_lines);
}

static void mem_make(struct exporter *x)
{
	void *addr;

	CHECK_OK(doca_mem_create(x->ctx, x->len, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &x->mem));
	CHECK_OK(doca_mem_get_addr(x->mem, &addr));
	x->bytes = addr;
}

static void say_desc(struct doca_mem *mem, const char *access)
{
	uint32_t a = (strchr(access, 'r') ? DOCA_ACCESS_FLAG_READ : 0) |
		     (strchr(access, 'w') ? DOCA_ACCESS_FLAG_WRITE : 0);
	const void *desc;
	size_t len;

	CHECK_OK(doca_mem_export(mem, a, &desc, &len));
	printf("DESC ");
	for (size_t i = 0; i < len; i++)
		printf("%02x", ((const uint8_t *)desc)[i]);
	printf("\n");
	fflush(stdout);
}

/* One command; false after "quit". */
static bool command(struct exporter *x, char *line)
{
	unsigned long long a, b;
	char word[16];

	if (sscanf(line, "fill %llu", &a) == 1) {
		pattern_fill(x->bytes, x->len, (uint32_t)a, 0);
		printf("OK\n");
	} else if (sscanf(line, "sum %llu %llu", &a, &b) == 2) {
		CHECK(a <= x->len && b <= x->len - a, "sum out of range");
		printf("SUM %llx\n", (unsigned long long)bytes_hash(x->bytes + a, b));
	} else if (sscanf(line, "export %15s", word) == 1) {
		say_desc(x->mem, word);
		return true;
	} else if (strncmp(line, "spare_destroy", 13) == 0) {
		CHECK(x->spare != NULL, "spare_destroy: no spare");
		CHECK_OK(doca_mem_destroy(x->spare));
		x->spare = NULL;
		printf("OK\n");
	} else if (strncmp(line, "spare", 5) == 0) {
		CHECK(x->spare == NULL, "spare: once");
		CHECK_OK(doca_mem_create(x->ctx, 4096, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &x->spare));
		say_desc(x->spare, "rw");
		return true;
	} else if (strncmp(line, "renew", 5) == 0) {
		CHECK_OK(doca_mem_destroy(x->mem));
		mem_make(x);
		printf("OK\n");
	} else if (strncmp(line, "create", 6) == 0) {
		CHECK(x->mem == NULL, "create: the memory exists");
		mem_make(x);
		printf("OK\n");
	} else if (strncmp(line, "own", 3) == 0) {
		CHECK(x->own == NULL && x->mode == 0, "own: once, poll mode");
		CHECK_OK(doca_mem_destroy(x->mem));
		x->own = aligned_alloc(4096, (x->len + 4095) & ~(size_t)4095);
		CHECK(x->own != NULL, "aligned_alloc");
		memset(x->own, 0, x->len);
		CHECK_OK(doca_mem_create_from(x->ctx, x->own, x->len,
					      DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &x->mem));
		x->bytes = x->own;
		printf("OK\n");
	} else if (strncmp(line, "destroy_landing", 15) == 0) {
		CHECK(x->own != NULL, "destroy_landing: after own");
		uint64_t end = now_ms() + REMOTE_WAIT_MS;
		size_t before = 0, after = 0;

		while (x->own[0] == 0 && now_ms() < end)
			doca_pe_progress(x->pe);
		for (size_t i = 0; i < x->len; i++)
			before += x->own[i] != 0;
		CHECK_OK(doca_mem_destroy(x->mem));
		x->mem = NULL;
		memset(x->own, 0, x->len); /* the application's again */
		for (end = now_ms() + 1000; now_ms() < end;)
			doca_pe_progress(x->pe); /* the device keeps serving */
		for (size_t i = 0; i < x->len; i++)
			after += x->own[i] != 0;
		printf("LANDED %zu %zu\n", before, after);
	} else if (strncmp(line, "destroy", 7) == 0) {
		CHECK_OK(doca_mem_destroy(x->mem));
		x->mem = NULL;
		printf("OK\n");
	} else if (sscanf(line, "pause %llu", &a) == 1) {
		printf("PAUSED\n"); /* from here on nothing is served */
		fflush(stdout);
		usleep((useconds_t)(a * 1000)); /* serving nothing: a stalled peer */
		printf("OK\n");
	} else if (sscanf(line, "fork_destroy %llu", &a) == 1) {
		CHECK(x->child == 0, "fork_destroy: once");
		fork_destroy(x, a);
	} else if (strncmp(line, "quit", 4) == 0) {
		return false;
	} else {
		CHECK(false, "unknown command '%s'", line);
	}
	fflush(stdout);
	return true;
}

/* Serve the PE until stdin has a line (poll and event modes). */
static void serve_until_stdin(struct exporter *x)
{
	struct pollfd fds[2] = { { .fd = STDIN_FILENO, .events = POLLIN } };
	int nfds = 1;

	if (x->mode == 1) {
		CHECK_OK(doca_pe_get_notification_handle(x->pe, &fds[1].fd));
		fds[1].events = POLLIN;
		nfds = 2;
	}
	for (;;) {
		if (x->mode == 0) {
			for (int i = 0; i < 64; i++)
				doca_pe_progress(x->pe);
		} else {
			CHECK_OK(doca_pe_request_notification(x->pe));
		}
		int n = poll(fds, (nfds_t)nfds, x->mode == 0 ? 0 : -1);

		CHECK(n >= 0 || errno == EINTR, "poll: %s", strerror(errno));
		if (x->mode == 1) {
			CHECK_OK(doca_pe_clear_notification(x->pe));
			doca_pe_progress(x->pe);
		}
		if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP)))
			return;
	}
}

/* A worker delivers events only to callbacks; the exporter submits no task. */
static void no_events(struct doca_event *ev, union doca_data user)
{
	(void)ev;
	(void)user;
	CHECK(false, "the exporter got an event");
}

int exporter_main(int argc, char **argv)
{
	struct exporter x = { 0 };
	char line[256];

	CHECK(argc == 4, "usage: exporter DEV SIZE poll|event|worker ACCESS");
	x.len = strtoull(argv[1], NULL, 0);
	x.mode = strcmp(argv[2], "event") == 0 ? 1 : strcmp(argv[2], "worker") == 0 ? 2 : 0;
	CHECK_OK(doca_dev_open(argv[0], &x.dev));
	CHECK_OK(doca_ctx_create(&x.ctx));
	CHECK_OK(doca_ctx_set_dev(x.ctx, x.dev));
	CHECK_OK(doca_pe_create(&x.pe));
	CHECK_OK(doca_pe_connect_ctx(x.pe, x.ctx));
	if (x.mode == 2)
		CHECK_OK(doca_ctx_set_event_cb(x.ctx, no_events));
	CHECK_OK(doca_ctx_start(x.ctx));
	mem_make(&x);
	say_desc(x.mem, argv[3]);
	if (x.mode == 2)
		CHECK_OK(doca_pe_run_on_cpu(x.pe, -1));
	for (;;) {
		if (x.mode != 2)
			serve_until_stdin(&x);
		if (fgets(line, sizeof(line), stdin) == NULL || !command(&x, line))
			break;
	}
	if (x.mode == 2)
		CHECK_OK(doca_pe_stop_run(x.pe));
	CHECK_OK(doca_ctx_stop(x.ctx));
	if (x.mem != NULL)
		CHECK_OK(doca_mem_destroy(x.mem));
	if (x.spare != NULL)
		CHECK_OK(doca_mem_destroy(x.spare));
	CHECK_OK(doca_dev_close(x.dev));
	CHECK_OK(doca_ctx_destroy(x.ctx));
	CHECK_OK(doca_pe_destroy(x.pe));
	free(x.own);
	if (x.child > 0)
		CHECK(waitpid(x.child, NULL, 0) == x.child, "waitpid");
	printf("BYE\n");
	fflush(stdout);
	return 0;
}
