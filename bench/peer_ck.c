/*
 * peer_ck.c — raw Concurrency Kit SPSC rings between the application CPU and
 * the other CPU: a ping-pong (round-trip latency of one message) and a
 * stream (items per second through one ring). No work in the items: the
 * floor of any cross-core hand-off, the mailbox's included.
 */
#include "bench_threads.h"

#include <ck_ring.h>
#include <stdlib.h>

#define RING_SIZE 1024u

struct ck_lane {
	_Alignas(64) struct ck_ring ring;
	_Alignas(64) ck_ring_buffer_t buf[RING_SIZE];
};

struct peer_ck {
	struct ck_lane ping, pong;
	struct bench_crew crew;
	double *lat;
};

static const char *ck_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct peer_ck *p = c->priv;

	if (bench_cpu_count() < 2)
		return "needs two CPUs";
	if (!p->lat && !(p->lat = malloc(BENCH_LAT_CAP * sizeof(*p->lat))))
		bench_fail("out of memory");
	return NULL;
}

static void ck_teardown(struct bench_contender *c)
{
}

/* The other CPU: send every ping back as a pong. */
static void echo(struct bench_crew *crew, unsigned id)
{
	struct peer_ck *p = crew->arg;
	void *item;

	while (!bench_crew_stopping(crew))
		if (ck_ring_dequeue_spsc(&p->ping.ring, p->ping.buf, &item))
			while (!ck_ring_enqueue_spsc(&p->pong.ring, p->pong.buf, item))
				;
}

static void ping(void *q, unsigned n)
{
	struct peer_ck *p = q;

	while (!ck_ring_enqueue_spsc(&p->ping.ring, p->ping.buf, p))
		;
}

static uint64_t pong(void *q, unsigned max)
{
	struct peer_ck *p = q;
	void *item;

	return ck_ring_dequeue_spsc(&p->pong.ring, p->pong.buf, &item);
}

static void pingpong_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			 struct bench_measure *m)
{
	struct peer_ck *p = c->priv;
	const struct bench_queue q = { ping, pong, p };

	ck_ring_init(&p->ping.ring, RING_SIZE);
	ck_ring_init(&p->pong.ring, RING_SIZE);
	bench_crew_start(&p->crew, 1, bench_other_cpu, echo, p);
	bench_crew_go(&p->crew);
	m->n_lat = bench_latency_loop(&q, p->lat, BENCH_LAT_CAP,
				      bench_now_ns() + (uint64_t)(seconds * 1e9), &m->ns);
	bench_crew_stop(&p->crew);
	m->tasks = m->n_lat;
	m->lat_ns = p->lat;
}

/* The other CPU: produce items as fast as the ring takes them. */
static void produce(struct bench_crew *crew, unsigned id)
{
	struct peer_ck *p = crew->arg;

	while (!bench_crew_stopping(crew))
		ck_ring_enqueue_spsc(&p->ping.ring, p->ping.buf, p);
}

static void spsc_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		     struct bench_measure *m)
{
	struct peer_ck *p = c->priv;
	uint64_t t0, deadline, n = 0;
	unsigned turn = 0;
	void *item;

	ck_ring_init(&p->ping.ring, RING_SIZE);
	bench_crew_start(&p->crew, 1, bench_other_cpu, produce, p);
	bench_crew_go(&p->crew);
	t0 = bench_now_ns();
	deadline = t0 + (uint64_t)(seconds * 1e9);
	do {
		n += ck_ring_dequeue_spsc(&p->ping.ring, p->ping.buf, &item);
	} while (++turn % 256 || bench_now_ns() < deadline);
	m->ns = bench_now_ns() - t0;
	m->tasks = n;
	bench_crew_stop(&p->crew);
}

static const struct bench_contender_ops pingpong_ops = { ck_setup, pingpong_run, ck_teardown };
static const struct bench_contender_ops spsc_ops = { ck_setup, spsc_run, ck_teardown };

static void init(struct bench_contender *c, const char *name, const struct bench_contender_ops *ops)
{
	struct peer_ck *p = bench_alloc_aligned(sizeof(*p));

	*c = (struct bench_contender){ .name = name, .ops = ops, .priv = p };
}

void peer_ck_pingpong_contender(struct bench_contender *c)
{
	init(c, "ck-pingpong", &pingpong_ops);
}

void peer_ck_spsc_contender(struct bench_contender *c)
{
	init(c, "ck-spsc", &spsc_ops);
}
