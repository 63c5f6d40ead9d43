/*
 * tests/remote/remote_util.c — the importer's helpers of the remote tests:
 * patterns and hashes, the exporter child and its pipes, the importer's
 * object tree.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remote_peer.h"

void pattern_fill(uint8_t *p, size_t len, uint32_t seed, size_t from)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(seed, from + i);
}

uint64_t bytes_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

uint64_t pattern_hash(uint32_t seed, size_t from, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ pattern_byte(seed, from + i)) * 0x100000001b3ull;
	return h;
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

const char *exporter_dev(void)
{
	const char *s = getenv("REMOTE_EXPORTER_DEV");

	return s != NULL ? s : "fab0";
}

const char *importer_dev(void)
{
	const char *s = getenv("REMOTE_IMPORTER_DEV");

	return s != NULL ? s : "fab0:retry_ms=1500";
}

static void read_line(struct peer *p, char *ans, size_t cap)
{
	CHECK(fgets(ans, (int)cap, p->from) != NULL, "the exporter (pid %d) said nothing", (int)p->pid);
	ans[strcspn(ans, "\n")] = '\0';
}

void peer_take_desc(struct peer *p, const char *line)
{
	CHECK(strncmp(line, "DESC ", 5) == 0, "expected DESC, got '%s'", line);
	const char *hex = line + 5;
	size_t n = strlen(hex) / 2;

	CHECK(n > 0 && n <= sizeof(p->desc), "descriptor of %zu bytes", n);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		CHECK(sscanf(hex + 2 * i, "%2x", &v) == 1, "bad hex");
		p->desc[i] = (uint8_t)v;
	}
	p->desc_len = n;
}

void peer_start(struct peer *p, const char *dev, size_t size, const char *mode, const char *access)
{
	int in[2], out[2];
	char self[4096], sz[32], line[2048];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	CHECK(n > 0, "readlink /proc/self/exe");
	self[n] = '\0';
	snprintf(sz, sizeof(sz), "%zu", size);
	CHECK(pipe(in) == 0 && pipe(out) == 0, "pipe");
	memset(p, 0, sizeof(*p));
	p->pid = fork();
	CHECK(p->pid >= 0, "fork");
	if (p->pid == 0) {
		const char *prefix = getenv("REMOTE_EXPORTER_PREFIX"); /* "nsenter --net=/proc/PID/ns/net" */
		char *argv[16];
		int argc = 0;
		char buf[256];

		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		if (prefix != NULL) {
			snprintf(buf, sizeof(buf), "%s", prefix);
			for (char *tok = strtok(buf, " "); tok != NULL && argc < 8; tok = strtok(NULL, " "))
				argv[argc++] = tok;
		}
		argv[argc++] = self;
		argv[argc++] = (char *)"exporter";
		argv[argc++] = (char *)dev;
		argv[argc++] = sz;
		argv[argc++] = (char *)mode;
		argv[argc++] = (char *)access;
		argv[argc] = NULL;
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->to = fdopen(in[1], "w");
	p->from = fdopen(out[0], "r");
	CHECK(p->to != NULL && p->from != NULL, "fdopen");
	read_line(p, line, sizeof(line));
	peer_take_desc(p, line);
}

void peer_cmd(struct peer *p, char *ans, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(p->to, fmt, ap);
	va_end(ap);
	fputc('\n', p->to);
	fflush(p->to);
	read_line(p, ans, cap);
}

uint64_t peer_sum(struct peer *p, size_t off, size_t len)
{
	char ans[64];
	unsigned long long v;

	peer_cmd(p, ans, sizeof(ans), "sum %zu %zu", off, len);
	CHECK(sscanf(ans, "SUM %llx", &v) == 1, "expected SUM, got '%s'", ans);
	return v;
}

static void reap(struct peer *p, bool want_clean)
{
	int st;

	CHECK(waitpid(p->pid, &st, 0) == p->pid, "waitpid");
	if (want_clean)
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the exporter ended with status %#x", st);
	fclose(p->to);
	fclose(p->from);
	p->pid = 0;
}

void peer_quit(struct peer *p)
{
	char ans[32];

	peer_cmd(p, ans, sizeof(ans), "quit");
	CHECK(strcmp(ans, "BYE") == 0, "expected BYE, got '%s'", ans);
	reap(p, true);
}

void peer_kill(struct peer *p)
{
	kill(p->pid, SIGKILL);
	reap(p, false);
}

void importer_open(struct importer *im, const char *dev, size_t len, uint32_t max_tasks)
{
	void *addr;

	memset(im, 0, sizeof(*im));
	CHECK_OK(doca_dev_open(dev, &im->dev));
	CHECK_OK(doca_ctx_create(&im->ctx));
	CHECK_OK(doca_ctx_set_dev(im->ctx, im->dev));
	if (max_tasks != 0)
		CHECK_OK(doca_ctx_set_max_tasks(im->ctx, max_tasks));
	CHECK_OK(doca_pe_create(&im->pe));
	CHECK_OK(doca_pe_connect_ctx(im->pe, im->ctx));
	CHECK_OK(doca_mem_create(im->ctx, len, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE,
				 &im->local));
	CHECK_OK(doca_mem_get_addr(im->local, &addr));
	im->bytes = addr;
	im->len = len;
	CHECK_OK(doca_ctx_start(im->ctx));
}

void importer_close(struct importer *im)
{
	enum doca_ctx_state st;
	uint64_t end = now_ms() + REMOTE_WAIT_MS;

	if (doca_ctx_stop(im->ctx) == DOCA_ERROR_IN_PROGRESS) {
		do {
			doca_pe_progress(im->pe);
			struct doca_event *ev = doca_pe_get_event(im->pe);

			if (ev != NULL)
				doca_event_free(ev);
			CHECK_OK(doca_ctx_get_state(im->ctx, &st));
			CHECK(now_ms() < end, "stop did not finish");
		} while (st != DOCA_CTX_STATE_IDLE);
	}
	CHECK_OK(doca_mem_destroy(im->local));
	CHECK_OK(doca_dev_close(im->dev));
	CHECK_OK(doca_ctx_destroy(im->ctx));
	CHECK_OK(doca_pe_destroy(im->pe));
}

struct doca_event *importer_wait_event(struct importer *im)
{
	uint64_t end = now_ms() + REMOTE_WAIT_MS;

	for (;;) {
		doca_pe_progress(im->pe);
		struct doca_event *ev = doca_pe_get_event(im->pe);

		if (ev != NULL)
			return ev;
		CHECK(now_ms() < end, "no event within %d ms", REMOTE_WAIT_MS);
	}
}

doca_error_t importer_copy(struct importer *im, struct doca_buf *src, struct doca_buf *dst, size_t len)
{
	struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = src, .dst = dst,
				    .user_data = { .u64 = 77 } };

	CHECK_OK(doca_task_submit(im->ctx, &d));
	struct doca_event *ev = importer_wait_event(im);
	doca_error_t err = doca_event_get_error(ev);

	CHECK(doca_event_get_user_data(ev).u64 == 77, "wrong event");
	if (err == DOCA_SUCCESS) {
		CHECK(doca_event_get_status(ev) == DOCA_EVENT_STATUS_SUCCESS, "status");
		CHECK(doca_event_get_bytes(ev) == len, "bytes %zu, expected %zu",
		      doca_event_get_bytes(ev), len);
	} else {
		CHECK(doca_event_get_status(ev) == DOCA_EVENT_STATUS_FAILURE, "status of a failure");
	}
	doca_event_free(ev);
	/* exactly once: nothing more comes for it */
	doca_pe_progress(im->pe);
	CHECK(doca_pe_get_event(im->pe) == NULL, "a second event");
	return err;
}
