/*
 * example_common.h — small helpers shared by the doca-core examples.
 *
 * Public API only. Everything here is static inline so each example stays one
 * .c file; none of it is part of the library. The helpers stop the program
 * with a clear message on any unexpected result: an example that misbehaves
 * must fail loudly, never print a wrong success.
 */
#ifndef EXAMPLE_COMMON_H
#define EXAMPLE_COMMON_H

#include <doca_core.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** Longest any example waits for completions before declaring a hang
 * (a program run under Valgrind's tools may define a longer one). */
#ifndef EXAMPLE_TIMEOUT_NS
#define EXAMPLE_TIMEOUT_NS (30ull * 1000 * 1000 * 1000)
#endif

/** Print "error: ..." and exit(1). */
__attribute__((format(printf, 1, 2))) static inline _Noreturn void example_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_FAILURE);
}

static inline void example_expect_result(doca_error_t got, doca_error_t want, const char *call,
					 const char *file, int line)
{
	if (got == want)
		return;
	example_fail("%s:%d: %s returned %s (%s), expected %s", file, line, call,
		     doca_error_get_name(got), doca_error_get_descr(got), doca_error_get_name(want));
}

/** Exit with a message unless @p call returns DOCA_SUCCESS. */
#define EXAMPLE_CHECK(call) example_expect_result((call), DOCA_SUCCESS, #call, __FILE__, __LINE__)
/** Exit with a message unless @p call returns @p want. */
#define EXAMPLE_EXPECT(call, want) example_expect_result((call), (want), #call, __FILE__, __LINE__)

static inline const char *example_state_name(enum doca_ctx_state state)
{
	switch (state) {
	case DOCA_CTX_STATE_IDLE:
		return "IDLE";
	case DOCA_CTX_STATE_STARTING:
		return "STARTING";
	case DOCA_CTX_STATE_RUNNING:
		return "RUNNING";
	case DOCA_CTX_STATE_STOPPING:
		return "STOPPING";
	}
	return "?";
}

static inline const char *example_status_name(enum doca_event_status status)
{
	switch (status) {
	case DOCA_EVENT_STATUS_SUCCESS:
		return "SUCCESS";
	case DOCA_EVENT_STATUS_FAILURE:
		return "FAILURE";
	case DOCA_EVENT_STATUS_PARTIAL:
		return "PARTIAL";
	}
	return "?";
}

/** The current state of @p ctx (exits if it cannot be read). */
static inline enum doca_ctx_state example_ctx_state(const struct doca_ctx *ctx)
{
	enum doca_ctx_state state;

	EXAMPLE_CHECK(doca_ctx_get_state(ctx, &state));
	return state;
}

static inline uint64_t example_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** Exit with a message once EXAMPLE_TIMEOUT_NS have passed since @p start_ns. */
static inline void example_check_deadline(uint64_t start_ns, const char *waiting_for)
{
	if (example_now_ns() - start_ns > EXAMPLE_TIMEOUT_NS)
		example_fail("timed out after %llu s waiting for %s",
			     EXAMPLE_TIMEOUT_NS / 1000000000ull, waiting_for);
}

/* ------------------------------------------------------------------------ */
/* Data patterns: each (seed, index) gives a distinct, checkable byte.       */

static inline uint8_t example_pattern_byte(uint64_t seed, size_t i)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

	return (uint8_t)(x >> 56);
}

/** A pattern seed distinct for every (owner, n): owner < 2^24, n < 2^40. */
static inline uint64_t example_seed(uint64_t owner, uint64_t n)
{
	return owner << 40 | n;
}

static inline void example_fill_pattern(void *data, size_t len, uint64_t seed)
{
	uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		p[i] = example_pattern_byte(seed, i);
}

/** @return the index of the first byte that differs from the pattern, or len. */
static inline size_t example_find_mismatch(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		if (p[i] != example_pattern_byte(seed, i))
			return i;
	return len;
}

/* ------------------------------------------------------------------------ */
/* Devices and command line.                                                 */

/** Print what doca_dev_list reports (used when a device name is unknown). */
static inline void example_print_devices(FILE *out, const char *indent)
{
	struct doca_dev_info infos[32];
	size_t count = 0;
	doca_error_t err = doca_dev_list(infos, 32, &count);

	if (err != DOCA_SUCCESS) {
		fprintf(out, "doca_dev_list failed: %s\n", doca_error_get_name(err));
		return;
	}
	fprintf(out, "%sdevices that exist (%zu):\n", indent, count);
	for (size_t i = 0; i < count && i < 32; i++)
		fprintf(out, "%s  %-16s backend %-6s caps %s\n", indent, infos[i].name, infos[i].backend,
			infos[i].caps);
}

/** Open @p name; on failure print why (and, if unknown, the device list) and exit(1). */
static inline struct doca_dev *example_open_dev(const char *name)
{
	struct doca_dev *dev = NULL;
	doca_error_t err = doca_dev_open(name, &dev);

	if (err == DOCA_SUCCESS)
		return dev;
	fprintf(stderr, "doca_dev_open(\"%s\") failed: %s (%s)\n", name, doca_error_get_name(err),
		doca_error_get_descr(err));
	if (err == DOCA_ERROR_NOT_FOUND)
		example_print_devices(stderr, "");
	exit(EXIT_FAILURE);
}

/** A numeric command-line option "--name N". */
struct example_opt {
	const char *name;      /**< Without the leading "--". */
	unsigned long *value;  /**< In: default; out: the value given. */
	const char *help;
};

static inline _Noreturn void example_usage(const char *prog, const char *about, const char *def_dev,
					   const struct example_opt *opts, size_t n_opts, int code)
{
	FILE *out = code ? stderr : stdout;

	fprintf(out, "%s — %s\n\nusage: %s [--dev NAME]", prog, about, prog);
	for (size_t i = 0; i < n_opts; i++)
		fprintf(out, " [--%s N]", opts[i].name);
	fprintf(out, "\n  --dev NAME     device open string (default \"%s\")\n", def_dev);
	for (size_t i = 0; i < n_opts; i++) {
		int pad = 10 - (int)strlen(opts[i].name);

		fprintf(out, "  --%s N%*s %s (default %lu)\n", opts[i].name, pad > 0 ? pad : 0, "",
			opts[i].help, *opts[i].value);
	}
	exit(code);
}

static inline bool example_parse_number(const char *text, unsigned long *value)
{
	char *end;

	if (!text || !*text || *text == '-')
		return false;
	*value = strtoul(text, &end, 0);
	return *end == '\0';
}

/**
 * Parse "--dev NAME", "--help" and the numeric @p opts.
 * @return the device open string (@p def_dev when not given). Exits on bad usage.
 */
static inline const char *example_parse_args(int argc, char **argv, const char *about, const char *def_dev,
					     const struct example_opt *opts, size_t n_opts)
{
	const char *dev = def_dev;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		bool known = false;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
			example_usage(argv[0], about, def_dev, opts, n_opts, 0);
		if (!strcmp(arg, "--dev")) {
			if (!next) {
				fprintf(stderr, "%s: --dev needs a device name\n", argv[0]);
				example_usage(argv[0], about, def_dev, opts, n_opts, 2);
			}
			dev = next;
			i++;
			continue;
		}
		for (size_t o = 0; o < n_opts && !known; o++) {
			if (strncmp(arg, "--", 2) || strcmp(arg + 2, opts[o].name))
				continue;
			if (!example_parse_number(next, opts[o].value)) {
				fprintf(stderr, "%s: --%s needs a number\n", argv[0], opts[o].name);
				example_usage(argv[0], about, def_dev, opts, n_opts, 2);
			}
			known = true;
			i++;
		}
		if (!known) {
			fprintf(stderr, "%s: unexpected argument \"%s\"\n", argv[0], arg);
			example_usage(argv[0], about, def_dev, opts, n_opts, 2);
		}
	}
	return dev;
}

/* ------------------------------------------------------------------------ */
/* Copy slots: one memory carved into count source and count destination    */
/* buffers of len bytes each (src i at i*len, dst i at (count+i)*len).      */

struct example_slots {
	struct doca_mem *mem;
	struct doca_buf **src;
	struct doca_buf **dst;
	size_t count;
	size_t len;
};

static inline void example_slots_create(struct doca_ctx *ctx, size_t count, size_t len,
					struct example_slots *slots)
{
	if (!count || !len || len > SIZE_MAX / 2 / count)
		example_fail("%zu slots of %zu bytes do not fit in one memory", count, len);
	slots->count = count;
	slots->len = len;
	slots->src = calloc(count, sizeof(*slots->src));
	slots->dst = calloc(count, sizeof(*slots->dst));
	if (!slots->src || !slots->dst)
		example_fail("out of memory for %zu slots", count);
	EXAMPLE_CHECK(doca_mem_create(ctx, 2 * count * len, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE,
				      &slots->mem));
	for (size_t i = 0; i < count; i++) {
		EXAMPLE_CHECK(doca_buf_create(slots->mem, i * len, len, &slots->src[i]));
		EXAMPLE_CHECK(doca_buf_create(slots->mem, (count + i) * len, len, &slots->dst[i]));
	}
}

static inline void *example_buf_data(const struct doca_buf *buf)
{
	void *data = NULL;

	EXAMPLE_CHECK(doca_buf_get_data(buf, &data));
	return data;
}

/** Fill source @p i with the pattern of @p seed and clear destination @p i. */
static inline void example_slots_fill(struct example_slots *slots, size_t i, uint64_t seed)
{
	example_fill_pattern(example_buf_data(slots->src[i]), slots->len, seed);
	memset(example_buf_data(slots->dst[i]), 0, slots->len);
}

/** Exit with a message unless destination @p i holds the pattern of @p seed. */
static inline void example_slots_verify(const struct example_slots *slots, size_t i, uint64_t seed)
{
	size_t bad = example_find_mismatch(example_buf_data(slots->dst[i]), slots->len, seed);

	if (bad != slots->len)
		example_fail("slot %zu: destination byte %zu of %zu differs from the source", i, bad,
			     slots->len);
}

/** Submit a copy of source @p i into destination @p i carrying @p user_data. */
static inline doca_error_t example_slots_submit(struct doca_ctx *ctx, const struct example_slots *slots,
						size_t i, uint64_t user_data)
{
	struct doca_task_desc desc = {
		.type = DOCA_TASK_COPY,
		.src = slots->src[i],
		.dst = slots->dst[i],
		.user_data = { .u64 = user_data },
		.flags = 0,
	};

	return doca_task_submit(ctx, &desc);
}

/** Destroy the buffers, then their memory (the reverse of creation). */
static inline void example_slots_destroy(struct example_slots *slots)
{
	for (size_t i = 0; i < slots->count; i++) {
		EXAMPLE_CHECK(doca_buf_destroy(slots->src[i]));
		EXAMPLE_CHECK(doca_buf_destroy(slots->dst[i]));
	}
	EXAMPLE_CHECK(doca_mem_destroy(slots->mem));
	free(slots->src);
	free(slots->dst);
	memset(slots, 0, sizeof(*slots));
}

#endif /* EXAMPLE_COMMON_H */
