/*
 * tests/remote/remote_peer.h — the two-process remote-memory tests (public
 * API only): the exporter role (remote_exporter.c) and the importer's
 * helpers (remote_util.c). The importer starts the exporter as a child
 * (this same program, argument "exporter"), optionally inside a command
 * prefix (REMOTE_EXPORTER_PREFIX, e.g. "nsenter --net=/proc/PID/ns/net"); descriptors
 * and commands travel over the child's stdin/stdout pipes as text lines.
 *
 * Exporter commands (one line each, answered by one line):
 *   fill SEED          fill the memory with pattern(SEED)        → OK
 *   sum OFF LEN        hash of [OFF, OFF+LEN)                    → SUM <hex>
 *   export ACCESS      export (r, w or rw)                       → DESC <hex>
 *   renew              destroy the memory (revokes its exports) and make
 *                      a new one of the same size, zero-filled   → OK
 *   destroy            destroy the memory (revokes its exports)  → OK
 *   create             a new zero-filled memory after destroy    → OK
 *   own                the memory becomes one over the exporter's own
 *                      zero-filled region (doca_mem_create_from) → OK
 *   destroy_landing    serve until a peer's bytes land in it, destroy
 *                      it, zero it, serve 1 s more → LANDED <nonzero
 *                      bytes at the destroy> <nonzero bytes after>
 *   pause MS           → PAUSED at once, then serve nothing for MS ms
 *                      (poll mode: the PE does not run) → OK
 *   quit               tear everything down and exit 0           → BYE
 */
#ifndef DOCA_TESTS_REMOTE_PEER_H
#define DOCA_TESTS_REMOTE_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <doca_core.h>

/* Longest a test waits for anything it is owed; a pass never comes close. */
#define REMOTE_WAIT_MS 20000

/* Fail the whole program with a message (the test is one process). */
#define CHECK(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_RC(expr, expected)                                                                  \
	do {                                                                                       \
		doca_error_t check_rc_ = (expr);                                                   \
		CHECK(check_rc_ == (expected), "returned %s, expected %s",                          \
		      doca_error_get_name(check_rc_), doca_error_get_name(expected));              \
	} while (0)

#define CHECK_OK(expr) CHECK_RC((expr), DOCA_SUCCESS)

/** The byte at index i of pattern(seed). */
static inline uint8_t pattern_byte(uint32_t seed, size_t i)
{
	return (uint8_t)((i * 131u + seed * 7u + (i >> 9)) ^ seed);
}

void pattern_fill(uint8_t *p, size_t len, uint32_t seed, size_t from);
uint64_t bytes_hash(const uint8_t *p, size_t len);
/** Hash of pattern(seed)[from, from + len). */
uint64_t pattern_hash(uint32_t seed, size_t from, size_t len);
uint64_t now_ms(void);

/** The exporter role: serve until "quit" (argv after "exporter"). */
int exporter_main(int argc, char **argv);

/** A running exporter child. */
struct peer {
	pid_t pid;
	FILE *to;   /* its stdin */
	FILE *from; /* its stdout */
	uint8_t desc[512];
	size_t desc_len;
};

/** Start an exporter of `size` bytes on device `dev` ("fab0:..."), mode
 * "poll", "event" or "worker"; exports with `access` ("rw", "r", "w"). */
void peer_start(struct peer *p, const char *dev, size_t size, const char *mode, const char *access);
/** Send one command line and read the answer line into ans (cap bytes). */
void peer_cmd(struct peer *p, char *ans, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/** "sum OFF LEN" as a number. */
uint64_t peer_sum(struct peer *p, size_t off, size_t len);
/** Decode "DESC <hex>" into p->desc. */
void peer_take_desc(struct peer *p, const char *line);
/** "quit", then reap: the child must exit 0. */
void peer_quit(struct peer *p);
/** SIGKILL and reap. */
void peer_kill(struct peer *p);

/** The importer's object tree. */
struct importer {
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct doca_mem *local; /* READ | WRITE */
	uint8_t *bytes;
	size_t len;
};

/** Open `dev`, a ctx with max_tasks (0: default), a PE, a local memory of
 * len bytes; started. */
void importer_open(struct importer *im, const char *dev, size_t len, uint32_t max_tasks);
void importer_close(struct importer *im);
/** Progress until one event arrives (fails after REMOTE_WAIT_MS). */
struct doca_event *importer_wait_event(struct importer *im);
/** One copy, waited for: returns its event's error (SUCCESS with bytes == len checked). */
doca_error_t importer_copy(struct importer *im, struct doca_buf *src, struct doca_buf *dst, size_t len);

/** The device strings from the environment (netns runs), or the defaults. */
const char *exporter_dev(void);
const char *importer_dev(void);

#endif /* DOCA_TESTS_REMOTE_PEER_H */
