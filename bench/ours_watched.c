/*
 * ours_watched.c — a foreign submitter's tasks while many other contexts'
 * rings are watched (the "watched" scenario, misc59): one PE on the inline
 * "sw0" progressed by the application thread (CPU 0); one foreign thread
 * (CPU 1) submits, in turn, a task to the measured context (max_tasks
 * WATCHED_DEPTH, retried on AGAIN) and one to the next of W other
 * contexts of the same PE (round robin), so the PE's turns drain their
 * rings and watch them: every context is on the PE's watch list, and a
 * turn looks at 64 of them (engine/ring.c, rule L). doca_task.h's R2: a
 * watched ring's entry waits at most ceil(W / 64) turns. Counts the
 * measured context's tasks per second and each one's submit-to-event
 * latency (the submitter's clock before the submit, the PE thread's after
 * doca_pe_get_event; one CLOCK_MONOTONIC). The submitter's work per
 * measured task is the same at every W (one other task), so the rows
 * compare the watch list's length alone.
 */
#include "bench_threads.h"
#include "ours_rig.h"

#include <stdlib.h>

#define WATCHED_DEPTH 64u          /* the measured context's max_tasks: tasks in flight at most */
/* Send times kept: task t's at t % WATCHED_SENT. Twice the depth: the
 * store for t comes before its submit, which may find the credits out
 * (AGAIN) with t - WATCHED_DEPTH still in flight; t - 2 WATCHED_DEPTH is
 * done and reaped by then (sw0 completes one thread's tasks in order, so
 * the tasks in flight are the last ones accepted). */
#define WATCHED_SENT (2u * WATCHED_DEPTH)
#define WATCHED_LAT_CAP (1u << 20) /* latency samples kept per repetition */
#define OTHER_TAG (1ull << 63)     /* user data of the other contexts' tasks */

/* One of the W other contexts: its own memory and one copy slot. */
struct other {
	struct doca_ctx *ctx;
	struct doca_mem *mem;
	struct doca_buf *src, *dst;
};

struct ours_watched {
	struct ours_rig rig;          /* the measured context and the PE */
	struct bench_crew crew;
	struct doca_dev *dev;         /* the others' handle of the same device */
	struct other *others;
	unsigned w;
	_Atomic uint64_t sent_at[WATCHED_SENT]; /* submit time of task t, at t % WATCHED_SENT */
	double *lat;
	_Alignas(64) uint64_t submitted, other_submitted; /* the submitter's, read after the join */
};

static void other_open(struct ours_watched *o, struct other *x, size_t size)
{
	void *base;

	ours_check(doca_ctx_create(&x->ctx), "doca_ctx_create");
	ours_check(doca_ctx_set_dev(x->ctx, o->dev), "doca_ctx_set_dev");
	ours_check(doca_mem_create(x->ctx, 2 * size, DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &x->mem),
		   "doca_mem_create");
	ours_check(doca_mem_get_addr(x->mem, &base), "doca_mem_get_addr");
	bench_fill(base, 2 * size, size);
	ours_check(doca_buf_create(x->mem, 0, size, &x->src), "doca_buf_create");
	ours_check(doca_buf_create(x->mem, size, size, &x->dst), "doca_buf_create");
	ours_check(doca_pe_connect_ctx(o->rig.pe, x->ctx), "doca_pe_connect_ctx");
	ours_check(doca_ctx_start(x->ctx), "doca_ctx_start");
}

static const char *watched_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct ours_watched *o = c->priv;
	struct ours_rig_conf conf = { .dev_open = "sw0", .slots = WATCHED_DEPTH, .max_tasks = WATCHED_DEPTH };
	const char *why = ours_rig_open(&o->rig, bc->size, &conf);

	if (why)
		return why;
	o->others = calloc(o->w, sizeof(*o->others));
	o->lat = malloc(WATCHED_LAT_CAP * sizeof(*o->lat));
	if (!o->others || !o->lat)
		bench_fail("out of memory");
	ours_check(doca_dev_open("sw0", &o->dev), "doca_dev_open");
	for (unsigned i = 0; i < o->w; i++)
		other_open(o, &o->others[i], bc->size);
	doca_pe_progress(o->rig.pe); /* this thread is the PE's: the submitter is foreign */
	return NULL;
}

static void watched_teardown(struct bench_contender *c)
{
	struct ours_watched *o = c->priv;

	for (unsigned i = 0; i < o->w; i++)
		ours_check(doca_ctx_stop(o->others[i].ctx), "doca_ctx_stop");
	for (unsigned i = 0; i < o->w; i++) {
		ours_check(doca_buf_destroy(o->others[i].src), "doca_buf_destroy");
		ours_check(doca_buf_destroy(o->others[i].dst), "doca_buf_destroy");
		ours_check(doca_mem_destroy(o->others[i].mem), "doca_mem_destroy");
	}
	ours_check(doca_dev_close(o->dev), "doca_dev_close");
	for (unsigned i = 0; i < o->w; i++)
		ours_check(doca_ctx_destroy(o->others[i].ctx), "doca_ctx_destroy");
	free(o->others);
	free(o->lat);
	ours_rig_close(&o->rig);
}

/* The foreign submitter: task t to the measured context (its send time
 * stored first: the submit's release hands it to the PE thread with the
 * task), then one to the next other context, until told to stop. */
static void submitter(struct bench_crew *crew, unsigned id)
{
	struct ours_watched *o = crew->arg;
	uint64_t t = 0, others = 0;
	unsigned next = 0;

	(void)id;
	while (!bench_crew_stopping(crew)) {
		struct other *x = &o->others[next];
		struct doca_task_desc d = {
			.type = DOCA_TASK_COPY, .src = x->src, .dst = x->dst, .user_data = { .u64 = OTHER_TAG | next }
		};
		doca_error_t err;

		atomic_store_explicit(&o->sent_at[t % WATCHED_SENT], bench_now_ns(), memory_order_relaxed);
		err = ours_rig_submit(&o->rig, t % WATCHED_DEPTH, t);
		if (err == DOCA_ERROR_AGAIN)
			continue; /* WATCHED_DEPTH in flight: no other task either, so the mix stays 1:1 */
		ours_check(err, "doca_task_submit (measured)");
		t++;
		err = doca_task_submit(x->ctx, &d);
		if (err == DOCA_SUCCESS)
			others++;
		else if (err != DOCA_ERROR_AGAIN)
			ours_check(err, "doca_task_submit (other)");
		next = next + 1 == o->w ? 0 : next + 1;
	}
	o->submitted = t;
	o->other_submitted = others;
}

/* One turn and every ready event reaped; the measured context's counted in
 * *done (and their latency sampled while @p n_lat is not NULL), the
 * others' in *other. */
static void turn(struct ours_watched *o, uint64_t *done, uint64_t *other, size_t *n_lat)
{
	struct doca_event *ev;

	doca_pe_progress(o->rig.pe);
	while ((ev = doca_pe_get_event(o->rig.pe))) {
		uint64_t tag = doca_event_get_user_data(ev).u64;

		if (tag & OTHER_TAG) {
			(*other)++;
		} else {
			(*done)++;
			if (n_lat && *n_lat < WATCHED_LAT_CAP)
				o->lat[(*n_lat)++] = (double)(bench_now_ns() -
							      atomic_load_explicit(&o->sent_at[tag % WATCHED_SENT],
										   memory_order_relaxed));
		}
		ours_reap(ev);
	}
}

static void watched_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			struct bench_measure *m)
{
	struct ours_watched *o = c->priv;
	uint64_t t0, t1, deadline, done = 0, other = 0, counted;
	size_t n_lat = 0;
	unsigned k = 0;

	bench_crew_start(&o->crew, 1, bench_other_cpu, submitter, o);
	bench_crew_go(&o->crew);
	t0 = bench_now_ns();
	deadline = t0 + (uint64_t)(seconds * 1e9);
	do {
		turn(o, &done, &other, &n_lat);
	} while (++k % 64 || bench_now_ns() < deadline);
	t1 = bench_now_ns();
	counted = done;
	bench_crew_stop(&o->crew);
	if (o->submitted == 0)
		bench_fail("doca: the foreign submitter submitted no task (did the host never run it?)");
	while (done < o->submitted || other < o->other_submitted)
		turn(o, &done, &other, NULL);
	m->tasks = counted;
	m->bytes = counted * bc->size;
	m->ns = t1 - t0;
	m->lat_ns = o->lat;
	m->n_lat = n_lat;
}

static const struct bench_contender_ops watched_ops = { watched_setup, watched_run, watched_teardown };

void ours_watched_contender(struct bench_contender *c, unsigned w)
{
	struct ours_watched *o = bench_alloc_aligned(sizeof(*o));
	static char names[BENCH_MAX_CONTENDERS][16];
	static unsigned next_name;
	char *name = names[next_name++ % BENCH_MAX_CONTENDERS];

	o->w = w;
	snprintf(name, sizeof(names[0]), "W=%u", w);
	*c = (struct bench_contender){ .name = name, .ops = &watched_ops, .priv = o };
}
