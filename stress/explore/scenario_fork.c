/*
 * stress/explore/scenario_fork.c — fork with a task in flight on an engine
 * thread and a PE worker running (fork_in_flight), against the fork
 * contract (DESIGN.md §6): the child may create objects of its own and use
 * them normally — here on the very device string the parent has open, so
 * it needs a fresh registry and engine threads of its own — every object
 * inherited from the parent is refused with DOCA_ERROR_BAD_STATE, and the
 * child's exit does not hang (every deferred free runs, as the library's
 * exit-time rcu_barrier requires). The parent carries on unharmed.
 *
 * The child is a process of its own with its own schedule (the parent's
 * other threads are lost in it, with whatever they held); its report
 * comes first, prefixed "fork child", and the parent ends with the child's
 * verdict if it was not clean.
 */
#include "scenario.h"

#include <sched.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

static struct world parent, child;

static void child_main(void)
{
	struct epoll_event ev;
	int epfd;

	explore_name("fork child");
	world_open(&child, "sw0:engines=1", 2, NULL);
	EXPECT_OK(doca_pe_get_notification_handle(child.pe, &epfd));
	EXPECT_OK(world_submit(&child, 0));
	/* event mode: the completion is due, so the wait may be for ever */
	while (world_progress(&child) == 0) {
		EXPECT_OK(doca_pe_request_notification(child.pe));
		(void)epoll_wait(epfd, &ev, 1, -1);
		EXPECT_OK(doca_pe_clear_notification(child.pe));
	}
	EXPECT_OK(doca_ctx_stop(child.ctx));
	world_close(&child);
	EXPECT_IN(world_submit(&parent, 1), 1, DOCA_ERROR_BAD_STATE);
	world_finish(&child);
}

void scenario_fork_in_flight(void)
{
	int status;

	world_open(&parent, "sw0:engines=1", 2, world_event_cb);
	EXPECT_OK(doca_pe_run_on_cpu(parent.pe, -1));
	EXPECT_OK(world_submit(&parent, 0));
	pid_t pid = fork();

	if (pid < 0)
		explore_end(VERDICT_HARNESS, "fork");
	if (pid == 0) {
		child_main();
		explore_finish();
	}
	/* the child's schedule needs none of ours: wait with the token held */
	while (waitpid(pid, &status, 0) < 0)
		;
	if (WIFSIGNALED(status))
		explore_end(VERDICT_CRASH, "the fork child was killed by signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) != VERDICT_CLEAN)
		explore_end((enum explore_verdict)WEXITSTATUS(status), "in the fork child (its report is above)");
	while (atomic_load(&parent.events_total) == 0)
		sched_yield();
	EXPECT_OK(doca_pe_stop_run(parent.pe));
	EXPECT_OK(doca_ctx_stop(parent.ctx));
	world_close(&parent);
	world_finish(&parent);
}
