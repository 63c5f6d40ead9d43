/*
 * scenarios.c — the scenarios of the suite: which cases, which
 * contenders (ours first, then the peers), measured by bench_runner.c.
 */
#include "bench.h"
#include "peer_fabric.h"

#include <stdlib.h>
#include <string.h>

static void run(const struct bench_opts *o, const struct bench_case *bc, struct bench_contender *cs, size_t n)
{
	bench_run_case(o, bc, cs, n);
	for (size_t i = 0; i < n; i++)
		free(cs[i].priv);
}

/* (a) one thread, "sw0" inline, batch 1 and batch N; io_uring NOP at the
 * smallest size, where batch N also runs the two loop shapes of issue 12
 * (ours_shapes.c), each noted against io_uring NOP. */
void scenario_inline(const struct bench_opts *o)
{
	unsigned batches[2] = { 1, o->batch };

	for (unsigned s = 0; s < o->n_sizes; s++) {
		for (unsigned b = 0; b < (o->batch > 1 ? 2u : 1u); b++) {
			struct bench_case bc = { .scenario = "inline", .size = o->sizes[s],
						 .batch = batches[b], .depth = batches[b], .threads = 1,
						 .seed = o->seed };
			struct bench_contender cs[5];
			size_t n = 0;
			bool shapes = s == 0 && b == 1;

			ours_copy_contender(&cs[n++], BENCH_INLINE_DEV);
			if (shapes) {
				ours_shape_contender(&cs[n++], "task");
				ours_shape_contender(&cs[n++], "burst");
			}
			peer_memcpy_contender(&cs[n++]);
			if (s == 0)
				peer_uring_contender(&cs[n++]);
			run(o, &bc, cs, n);
			if (shapes) {
				bench_note_ratio("doca-task", "io_uring-nop");
				bench_note_ratio("doca-burst", "io_uring-nop");
			}
		}
	}
}

/* (b) app thread on CPU 0, one engine thread on CPU 1; depth in bursts of
 * batch. At the first size also the same loop reaping one event at a time
 * (doca-per-event), noted against the skeleton. */
void scenario_offload(const struct bench_opts *o)
{
	for (unsigned s = 0; s < o->n_sizes; s++) {
		struct bench_case bc = { .scenario = "offload", .size = o->sizes[s], .batch = o->batch,
					 .depth = o->depth, .threads = 1, .seed = o->seed };
		struct bench_contender cs[4];
		size_t n = 0;

		ours_copy_contender(&cs[n++], BENCH_OFFLOAD_DEV);
		if (s == 0)
			ours_copy_per_event_contender(&cs[n++], BENCH_OFFLOAD_DEV);
		peer_dpdk_contender(&cs[n++], false);
		peer_memcpy_contender(&cs[n++]);
		run(o, &bc, cs, n);
		if (s == 0)
			bench_note_ratio("doca-per-event", "dpdk-skeleton");
	}
}

/* (c) one copy at a time in offload mode; the ck ping-pong is the floor. */
void scenario_latency(const struct bench_opts *o)
{
	for (unsigned s = 0; s < o->n_lat_sizes; s++) {
		struct bench_case bc = { .scenario = "latency", .size = o->lat_sizes[s], .batch = 1,
					 .depth = 1, .threads = 1, .seed = o->seed };
		struct bench_contender cs[3];

		ours_latency_contender(&cs[0]);
		peer_dpdk_contender(&cs[1], true);
		peer_ck_pingpong_contender(&cs[2]);
		run(o, &bc, cs, 3);
	}
}

/* (d) 1..N foreign submitters into one context, against the PE submitting
 * to itself (1 submitter) or against 1 submitter (2..N), interleaved; one
 * raw ck SPSC ring as information. */
void scenario_mailbox(const struct bench_opts *o)
{
	for (unsigned t = 1; t <= o->threads; t++) {
		struct bench_case bc = { .scenario = "mailbox", .size = 64, .batch = 1,
					 .depth = 1024, .threads = t, .seed = o->seed };
		struct bench_contender cs[3];

		ours_mailbox_contender(&cs[0]);
		ours_mailbox_baseline_contender(&cs[1], t == 1 ? 0 : 1);
		peer_ck_spsc_contender(&cs[2]);
		run(o, &bc, cs, 3);
	}
}

/* (e) one context + worker PE per CPU, against the same on one CPU. */
void scenario_scaling(const struct bench_opts *o)
{
	unsigned cpus = (unsigned)bench_cpu_count();
	struct bench_case bc = { .scenario = "scaling", .size = 64, .batch = 1, .depth = 32,
				 .threads = cpus, .seed = o->seed };
	struct bench_contender cs[2];

	if (bench_cpu_count() < 2) {
		bench_add_note("scaling", "doca", "needs at least two CPUs");
		return;
	}
	ours_scaling_contender(&cs[0], cpus);
	ours_scaling_contender(&cs[1], 1);
	run(o, &bc, cs, 2);
}

/* (f) event mode on sw0:engines=1: one task at a time (each waits for its
 * event) and depth in flight in bursts of batch; tasks from a producer
 * thread or from the loop's own thread, against the same work polled. */
void scenario_events(const struct bench_opts *o)
{
	unsigned batches[2] = { 1, o->batch }, depths[2] = { 1, o->depth };

	for (unsigned k = 0; k < 2; k++) {
		struct bench_case bc = { .scenario = "events", .size = 64, .batch = batches[k],
					 .depth = depths[k], .threads = 1, .seed = o->seed };
		struct bench_contender cs[3];

		ours_events_contender(&cs[0], true);
		ours_events_contender(&cs[1], false);
		ours_copy_contender(&cs[2], BENCH_OFFLOAD_DEV);
		cs[2].name = "poll-own";
		run(o, &bc, cs, 3);
	}
}

/* (g) what idle contexts cost: --contexts (10000), then a tenth of that
 * each down to 1 started contexts on one PE (the most first, so ours/x of a
 * row is "10000 contexts / x"),
 * inline and on one engine thread; empty progress calls/s ("idle-*") and
 * the one active context's tasks/s ("busy-*"). */
void scenario_contexts(const struct bench_opts *o)
{
	unsigned counts[5];
	static const struct {
		const char *scenario;
		const char *dev;
		bool busy;
	} kinds[] = {
		{ "idle-sw0", BENCH_INLINE_DEV, false },
		{ "idle-e1", BENCH_OFFLOAD_DEV, false },
		{ "busy-sw0", BENCH_INLINE_DEV, true },
		{ "busy-e1", BENCH_OFFLOAD_DEV, true },
	};

	/* The idle rows' ratio pairs a repetition's 10 000 with its 1, four
	 * contenders apart: at --duration 0.25 a second apart, and the host
	 * flips between states that differ 1.7x in empty calls/s (misc59: 117
	 * against 69 M/s, the state kept for minutes or seconds), so one rep
	 * of five could read 0.6 or 1.6. Four times the reps, a fifth of the
	 * time each: pairs 0.2 s apart, the median over 20. */
	struct bench_opts idle = *o;

	idle.reps = o->reps * 4 < BENCH_MAX_REPS ? o->reps * 4 : BENCH_MAX_REPS;
	idle.duration = o->duration / 5;
	counts[0] = o->contexts;
	for (size_t i = 1; i < 5; i++)
		counts[i] = counts[i - 1] / 10 > 1 ? counts[i - 1] / 10 : 1;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bool inline_dev = !strcmp(kinds[k].dev, BENCH_INLINE_DEV);
		struct bench_case bc = { .scenario = kinds[k].scenario, .size = 64,
					 .batch = kinds[k].busy ? o->batch : 1,
					 .depth = kinds[k].busy && !inline_dev ? o->depth : o->batch,
					 .threads = 1, .seed = o->seed };
		struct bench_contender cs[5];

		for (size_t i = 0; i < 5; i++)
			ours_contexts_contender(&cs[i], kinds[k].dev, counts[i], kinds[k].busy);
		run(kinds[k].busy ? o : &idle, &bc, cs, 5);
	}
}

/* (g) a foreign submitter's tasks to one context while W other contexts
 * of its PE are watched (engine/ring.c's watch list), W = 1, 64, 256,
 * 1024: tasks/s and submit-to-event p50/p99 per W; each row's note is its
 * tasks/s against W = 1 (misc59). No target: doca_task.h's R2 bounds the
 * wait in turns, not time. */
void scenario_watched(const struct bench_opts *o)
{
	static const unsigned ws[] = { 1, 64, 256, 1024 };
	struct bench_case bc = { .scenario = "watched", .size = 64, .batch = 1, .depth = 64, .threads = 1,
				 .seed = o->seed };
	struct bench_contender cs[4];
	char name[16];

	if (bench_cpu_count() < 2) {
		bench_add_note("watched", "W=1", "needs at least two CPUs");
		return;
	}
	for (size_t i = 0; i < 4; i++)
		ours_watched_contender(&cs[i], ws[i]);
	run(o, &bc, cs, 4);
	for (size_t i = 1; i < 4; i++) {
		snprintf(name, sizeof(name), "W=%u", ws[i]);
		bench_note_ratio(name, "W=1");
	}
}

/* (g) remote memory: RDMA WRITE (delivery complete) into another process's
 * memory over fab0, one at a time (remote-lat, p50) and 64 in flight
 * (remote), against the raw libfabric loop with the same provider and
 * flags; one target process serves both. Not part of `all`. */
void scenario_remote(const struct bench_opts *o)
{
#ifndef BENCH_HAVE_FABRIC
	(void)o;
	bench_add_note("remote", "doca", "built without libfabric (libfabric-dev)");
#else
	static const size_t sizes[] = { 64, 4096, 65536, 1u << 20 };
	struct remote_target t;
	const char *why = remote_target_start(&t);

	if (why) {
		bench_add_note("remote", "doca", why);
		return;
	}
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (unsigned k = 0; k < 2; k++) {
			struct bench_case bc = { .scenario = k ? "remote" : "remote-lat", .size = sizes[s],
						 .batch = 1, .depth = k ? 64 : 1, .threads = 1, .seed = o->seed };
			struct bench_contender cs[2];

			ours_remote_contender(&cs[0], &t);
			peer_fabric_contender(&cs[1], &t);
			run(o, &bc, cs, 2);
		}
	}
	remote_target_stop(&t);
#endif
}
