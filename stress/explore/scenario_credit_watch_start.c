/*
 * stress/explore/scenario_credit_watch_start.c — a context's first credit
 * waiter while the context is being started (credit_watch_start).
 *
 * A return of credits loads one byte of its run, credit_watch, to decide
 * whether to look for waiters (engine/ctx_credits.c, "Per run"): the
 * first waiter marks the published run after storing `used`, and a start
 * marks its new run if it sees `used`. Here, max_tasks 1 and the context
 * IDLE: one thread starts it while another arms its credit notification
 * fd, whose first use (`used`, the mark) races the start's publish; a
 * reader holds the arming in its grace period until the start is done
 * and the one credit taken, so the arming finds no credit free and does
 * not fire. The free that returns the credit must then fire the fd. A
 * start that loaded `used` before it published the run, with the waiter
 * storing it and looking for the run between the two, marks nothing: the
 * return skips the waiters and the fd stays quiet.
 */
#include "scenario.h"

#include <sched.h>
#include <unistd.h>

#include "engine/engine.h"

static struct world w;
static doca_error_t start_result;
static struct world_armer arm = { .w = &w };

static void *starter(void *unused)
{
	(void)unused;
	explore_name("starter");
	start_result = doca_ctx_start(w.ctx);
	return NULL;
}

void scenario_credit_watch_start(void)
{
	pthread_t t[3];
	uint64_t fired;
	int fd;

	world_open(&w, "sw0", 1, NULL);
	EXPECT_OK(doca_ctx_stop(w.ctx)); /* nothing outstanding: IDLE at once */
	t[2] = world_section_hold();
	if (pthread_create(&t[0], NULL, starter, NULL) != 0 || pthread_create(&t[1], NULL, world_armer, &arm) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	/* the armer in its first-use grace period: `used` stored, a run marked or not */
	world_until_blocked(t[1], BLOCK_GRACE, "armer: returned past a grace period a reader holds");
	pthread_join(t[0], NULL);
	EXPECT_OK(start_result);
	EXPECT_OK(world_submit(&w, 0)); /* the one credit: the arming finds none free */
	world_section_let_go();
	pthread_join(t[1], NULL);
	pthread_join(t[2], NULL);
	EXPECT_OK(arm.result);
	EXPECT_OK(doca_ctx_get_credit_notification_handle(w.ctx, &fd));
	if (read(fd, &fired, sizeof(fired)) == (ssize_t)sizeof(fired))
		explore_end(VERDICT_INVARIANT, "credit fd: fired with no credit free");
	doca_event_free(world_take_event(&w)); /* the credit back: the fd must fire */
	if (read(fd, &fired, sizeof(fired)) != (ssize_t)sizeof(fired))
		explore_end(VERDICT_INVARIANT, "credit fd: not fired after the credit came back to an armed fd");
	EXPECT_OK(doca_ctx_clear_credit_notification(w.ctx));
	world_end_with_exact_credits(&w, 1);
}
