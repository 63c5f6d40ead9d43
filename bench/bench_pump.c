/*
 * bench_pump.c — the two measuring loops every queue-shaped contender shares
 * (ours and the DPDK skeleton run the very same loop; only the two calls
 * behind struct bench_queue differ).
 */
#include "bench.h"

/* Bytes per direction a case may touch: enough slots for the queue depth,
 * but never more than this, so 1 MiB copies stream through memory while
 * 64 B copies stay in cache, for ours and the peers alike. */
#define BENCH_FOOTPRINT (16u << 20)

size_t bench_slots(size_t size, unsigned depth)
{
	size_t cap = BENCH_FOOTPRINT / size;

	if (cap < 1)
		cap = 1;
	return depth < cap ? depth : cap;
}

/*
 * Keep up to @p depth tasks in flight, submitted in bursts of @p batch (one
 * doorbell per burst), until @p max_tasks were submitted or @p deadline
 * (0: none) passed, reading the clock every @p every turns; then drain.
 * @return the tasks completed.
 */
uint64_t bench_pump(const struct bench_queue *q, unsigned batch, unsigned depth, uint64_t max_tasks,
		    uint64_t deadline, unsigned every)
{
	uint64_t submitted = 0, done = 0;
	unsigned turn = 0;
	bool open = true;

	while (open || done < submitted) {
		while (open && submitted - done + batch <= depth) {
			q->submit_burst(q->q, batch);
			submitted += batch;
			if (submitted >= max_tasks)
				open = false;
		}
		done += q->reap(q->q, depth);
		if (open && deadline && ++turn % every == 0 && bench_now_ns() >= deadline)
			open = false;
	}
	return done;
}

/*
 * One task at a time: submit, spin until it completes, record the round
 * trip in ns. Stops at @p cap samples or @p deadline.
 * @return the samples taken; *ns gets the wall time of the loop.
 */
size_t bench_latency_loop(const struct bench_queue *q, double *lat, size_t cap, uint64_t deadline,
			  uint64_t *ns)
{
	uint64_t t0 = bench_now_ns(), now = t0;
	size_t n = 0;

	while (n < cap && now < deadline) {
		uint64_t start = now;

		q->submit_burst(q->q, 1);
		while (!q->reap(q->q, 1))
			;
		now = bench_now_ns();
		lat[n++] = (double)(now - start);
	}
	*ns = now - t0;
	return n;
}
