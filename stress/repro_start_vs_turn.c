/*
 * stress/repro_start_vs_turn.c — minimal reproducer of a data race in the
 * library (found by stress_submit_stop under TSan): doca_ctx_start resets
 * ctx->flush_sent and ctx->qp_fatal (engine/ctx.c) on the caller's thread
 * while a PE turn that began while the ctx was STOPPING still reads them and
 * writes flush_sent (engine/pe_progress.c, turn_collect). Nothing orders the
 * two: doca_ctx_stop's grace period does not wait for a turn that started
 * after it, and its "nothing outstanding" path goes IDLE without another one.
 *
 * One thread progresses the PE without pause; main starts and stops the ctx
 * (nothing submitted, so every stop goes straight to IDLE). Under TSan this
 * reports within a second; without TSan it runs clean (the effect — a stale
 * flush_sent = true carried into the next run, so that run's stop flushes
 * nothing — needs an unlucky preemption). Fixed by giving each run its own
 * RCU-published state (engine/ctx_run.c); kept as a regression test.
 *
 *   repro_start_vs_turn [--seconds S]
 */
#include <doca_core.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_bool quit;

static void *progress_main(void *arg)
{
	struct doca_pe *pe = arg;

	while (!atomic_load(&quit))
		(void)doca_pe_progress(pe);
	return NULL;
}

static void check(doca_error_t err, const char *what)
{
	if (err != DOCA_SUCCESS) {
		fprintf(stderr, "%s: %s\n", what, doca_error_get_name(err));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double seconds = argc == 3 && strcmp(argv[1], "--seconds") == 0 ? atof(argv[2]) : 3;
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	pthread_t t;
	time_t end = time(NULL) + (time_t)seconds;
	unsigned long cycles = 0;

	check(doca_ctx_create(&ctx), "doca_ctx_create");
	check(doca_dev_open("sw0", &dev), "doca_dev_open");
	check(doca_ctx_set_dev(ctx, dev), "doca_ctx_set_dev");
	check(doca_pe_create(&pe), "doca_pe_create");
	check(doca_pe_connect_ctx(pe, ctx), "doca_pe_connect_ctx");
	if (pthread_create(&t, NULL, progress_main, pe) != 0)
		return 1;
	while (time(NULL) < end) {
		check(doca_ctx_start(ctx), "doca_ctx_start");
		check(doca_ctx_stop(ctx), "doca_ctx_stop"); /* nothing outstanding: IDLE at once */
		cycles++;
	}
	atomic_store(&quit, true);
	pthread_join(t, NULL);
	check(doca_dev_close(dev), "doca_dev_close");
	check(doca_ctx_destroy(ctx), "doca_ctx_destroy");
	check(doca_pe_destroy(pe), "doca_pe_destroy");
	printf("repro_start_vs_turn: %lu start/stop cycles, no report means no race seen\n", cycles);
	return 0;
}
