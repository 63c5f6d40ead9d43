/*
 * engine/pe_notify.c — event mode: the PE's one notification fd.
 *
 * The fd is an epoll set holding an eventfd (software wakes: mailbox pushes,
 * engine-thread completions, stop requests) and each queue pair's completion
 * channel fd when its backend has one.
 *
 * No lost wake-up (a Dekker pair): request_notification stores ARMED, then a
 * full fence, then looks for pending work; a waker publishes its work (ring
 * store), then a full fence, then loads armed. Either the requester sees the
 * work (and fires at once) or the waker sees ARMED (and fires). ARMED → FIRED
 * by CAS makes one write per arming.
 *
 * One wake-up per completion burst: work the requester can do itself it
 * does instead of firing. After the fence it moves the mailbox of every
 * running context of the ready set to the device (what the next turn would
 * do first; a context with pushes is in the set, or its pusher is still to
 * signal it and look at armed, engine/pe_ready.c), so a wake-up
 * never only moves tasks out of a mailbox: the pushes it saw are posted and
 * their completions will wake, and a push it did not see is its pusher's
 * to wake for (the pair above). It feeds once before storing ARMED too, so
 * the moment in which a pusher sees ARMED but cannot take the guard to
 * feed for itself is short. Submitters post straight to the device while
 * the PE is armed (engine/task.c), and an engine thread wakes only while a
 * completion is still unread (hw/sw/sw_engine.c): once pe_wake_cb finds
 * ARMED it looks at the CQ, and once more before firing
 * (pe_wake_fenced_if), since the PE may have taken the completion in
 * between and armed after. Each look reads what the PE did before
 * arming (the ARMED store is a release, the loads acquire); whatever it
 * reads, skipping is safe: a PE that took every entry has their events.
 *
 * A backend's completions (pe_wake_cb: an engine thread's, or a fabric
 * doorbell's) signal the context and wake the PE only while the PE is
 * ARMED. The backend published its entries, fenced, and we load armed:
 * the waker's half of the pair above. Not ARMED, nothing is lost by
 * skipping: (1) the context is in the ready set, or its release's look
 * again will requeue it, as long as one of its descriptors is on the
 * device (run->on_device, counted by the runner before its post's visit
 * and uncounted only by the poll that takes the completion;
 * engine/pe_ready.c visits such a context every turn), so turns find
 * the entries without our signal; (2) a PE that arms after our load
 * stores ARMED, fences and walks its ready set, which holds the context
 * by (1), and its look at the queue pair (hw_ops.pending) sees our
 * entries, by the pair: it fires for them itself instead of sleeping.
 * FIRED means a wake-up is on its way; DISARMED, that the PE does not
 * sleep on its fd (it sleeps only armed). So an unarmed PE (a
 * polling loop: every busy pass of an engine thread) costs the backend
 * one load of armed's line, which the PE writes only when it arms or
 * clears, instead of a look at the CQ's consumer index (a line the PE
 * writes on every slot it takes) and at the context's ready flag.
 *
 * A pusher that sees ARMED takes the brief runner guard and feeds the
 * mailbox itself: its own pushes are then posted (or were, by whoever
 * drained them) and their completions wake the PE. If the guard is taken,
 * it skips the wake-up while run->on_device (descriptors posted and not
 * yet polled; written by the runner only) is not 0. Why no wake-up is
 * lost: suppose the PE sleeps for ever after its last arming R (a turn
 * run while armed re-arms, pe_turn_rearm, so R follows every poll) and
 * the push was never drained. R's feed missed it, so the pusher's fence
 * comes after R's in the fences' total order, and its loads see what the
 * runner stored before R's fence. Nothing was posted after R, by R or
 * by a submitter (those completions would wake the PE), and only turns
 * lower on_device, so it holds its value at R. Were it not 0,
 * those descriptors' completions, not pending at R, come later and find
 * ARMED: a wake-up. So it is 0, the pusher sees ARMED and 0, and fires.
 *
 * A PE never armed costs its wakers no fence (the owner fast path posts
 * and wakes on every submit, issue 12). The first request_notification
 * stores notify_used, then waits for an RCU grace period before it takes
 * the guard and arms. pe_wake's callers run inside a read-side section
 * and load notify_used after publishing their work. A caller whose
 * section began before the grace period is waited for, so the arming
 * check after it sees that work; one whose section began after sees
 * notify_used and takes the fenced path above. Every caller waits for a
 * grace period of its own until one has passed (notify_settled): one that
 * only saw another caller's store, armed and looked before that caller's
 * grace period ended, could miss a skipping waker's work. Backend wakers
 * (pe_wake_fenced, after their own fence) do not skip.
 *
 * A refused arming (a device cannot arm its channel) changes nothing:
 * armed goes back to what it was before the call, so turns do not retry
 * the arming and submitters do not take the PE for asleep; its own look
 * fires for pending work only if an earlier arming stands (that one owes
 * the wake-up). What it cannot take back costs at most a spurious
 * wake-up (the fd readable with nothing new to do, drained by the next
 * clear_notification): a channel armed earlier in the same walk stays
 * armed (its next completion makes the fd readable), and a waker that saw
 * ARMED before it was taken back may have fired (armed is then FIRED, as
 * after any fire, and stays so). A turn's re-arm under a standing arming
 * (pe_turn_rearm) has no caller to tell: the channel it could not arm
 * again was spent by the turn, so the PE fires instead, and the
 * request_notification after that wake-up reports the error.
 *
 * Arming and clearing belong to the runner, like progress: they read its
 * ready list and reset the eventfd, so each takes the runner guard and a
 * caller on another thread while the PE runs is refused (DOCA_ERROR_IN_USE).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "actors/explore_revert.h"
#include "engine/engine.h"
#include "engine/ring.h"

#define FEED_BRIEF 32u /* descriptors a submitter posts under the brief guard */

void pe_wake(struct doca_pe *pe)
{
	pe_wake_if(pe, NULL, NULL);
}

void pe_wake_if(struct doca_pe *pe, bool (*needed)(const void *), const void *what)
{
	EXPLORE_POINT(WAKE);
	if (!atomic_load_explicit(&pe->notify_used, memory_order_relaxed))
		return; /* never armed: see "A PE never armed" at the top */
	/* seq_cst fence: order the caller's work store before the armed load. */
	atomic_thread_fence(memory_order_seq_cst);
	pe_wake_fenced_if(pe, needed, what);
}

void pe_wake_fenced(struct doca_pe *pe)
{
	pe_wake_fenced_if(pe, NULL, NULL);
}

void pe_wake_fenced_if(struct doca_pe *pe, bool (*needed)(const void *), const void *what)
{
	int armed = PE_ARMED;

	EXPLORE_POINT(WAKE);
	/* acquire: pairs with the arming's release, so needed() sees what the
	 * PE took before it armed */
	if (atomic_load_explicit(&pe->armed, memory_order_acquire) != PE_ARMED)
		return;
	EXPLORE_POINT(WAKE);
	if (needed != NULL && !needed(what))
		return; /* taken since the caller looked, before the arming */
	if (atomic_compare_exchange_strong_explicit(&pe->armed, &armed, PE_FIRED, memory_order_relaxed,
						    memory_order_relaxed)) {
		uint64_t one = 1;

		while (write(pe->evfd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
	}
}

/* A context whose mailbox a turn would post to the device (not flush). */
static bool ctx_feedable(struct doca_ctx *ctx, const struct ctx_run *run)
{
	return ctx_state(ctx) == DOCA_CTX_STATE_RUNNING && !run->fatal && !run->flush_sent;
}

void pe_wake_after_push_armed(struct doca_ctx *ctx, struct ctx_run *run, bool pushed)
{
	struct doca_pe *pe = ctx_pe(ctx);

	/* Armed: the PE sleeps, or is arming and its feed may have missed our
	 * pushes. Feeding them ourselves (a bounded batch, as a direct post)
	 * takes our own pushes (the mailbox keeps one thread's items in order)
	 * unless more than the batch waits; their completions wake the PE. We
	 * wake it ourselves when something is left only a turn can do: items
	 * beyond the batch, a context to flush, an inline device to run. The
	 * system calls come after letting go of the guard (engine/task.c).
	 * Not a worker's PE: its turns never wait for a submitter. */
	EXPLORE_POINT(ATOMIC);
	if (!atomic_load_explicit(&pe->has_worker, memory_order_relaxed) &&
	    runner_enter_brief(&pe->runner) == RUNNER_ENTERED) {
		bool fed = ctx_feedable(ctx, run);
		uint32_t posted = fed ? run_feed(run, FEED_BRIEF) : 0;
		/* After our push and fence, a look at ctx's work (we are the
		 * set's consumer now): the other signaller's work came before its
		 * fence, so either ours follows it and sees that work, or its
		 * wake-up follows our visible push and is not spent. */
		bool left = !fed || (posted != 0 && run->qp->runs_in_poll) ||
			    (pushed && run_needs_visit(ctx, run));

		runner_exit(&pe->runner);
		if (posted != 0)
			hw_qp_kick(run->qp);
		if (left)
			pe_wake(pe);
		return;
	}
	/* Busy: the PE arms or runs a turn, or another submitter posts; each
	 * may have missed our pushes. While descriptors of this run are on the
	 * device, a completion will wake the PE, and the turn it runs drains
	 * the mailbox (before polling while running; once the device has given
	 * everything back while stopping, and the last completion wakes it):
	 * no wake-up of ours is needed (top) — unless we queued ctx, and the
	 * completion's wake-up may be spent. */
	EXPLORE_POINT(ATOMIC);
	if (!pushed && atomic_load_explicit(&run->on_device, memory_order_relaxed) != 0)
		return;
	pe_wake_fenced(pe);
}

void pe_wake_cb(void *arg, hw_unread_fn unread, const void *cq)
{
	struct ctx_run *run = arg;

	/* The backend fenced after its completions (hw_qp_attr.wake). A PE
	 * not armed needs neither the signal nor the wake-up: see "A backend's
	 * completions" at the top. acquire: pairs with the arming's release,
	 * so unread() sees what the PE took before it armed. */
	EXPLORE_POINT(WAKE);
	if (atomic_load_explicit(&run->pe->armed, memory_order_acquire) != PE_ARMED)
		return;
	if (unread != NULL && !unread(cq))
		return; /* the PE took every entry: it has their events */
	pe_ready_signal_wake_fenced_if(run->pe, run->ctx, unread, cq);
}

doca_error_t pe_watch_qp(struct doca_pe *pe, struct hw_qp *qp)
{
	int fd = qp->ops->notify_fd(qp);
	struct epoll_event watch = { .events = EPOLLIN, .data.ptr = qp };

	if (fd < 0)
		return DOCA_SUCCESS;
	if (epoll_ctl(pe->epfd, EPOLL_CTL_ADD, fd, &watch) != 0)
		return DOCA_ERROR_OPERATING_SYSTEM;
	atomic_fetch_add_explicit(&pe->channels, 1, memory_order_relaxed);
	return DOCA_SUCCESS;
}

void pe_unwatch_qp(struct doca_pe *pe, struct hw_qp *qp)
{
	int fd = qp->ops->notify_fd(qp);

	if (fd >= 0) {
		(void)epoll_ctl(pe->epfd, EPOLL_CTL_DEL, fd, NULL);
		atomic_fetch_sub_explicit(&pe->channels, 1, memory_order_relaxed);
	}
}

/* Work a progress call would do now (runner thread, inside a read section),
 * once a feedable context's mailbox was fed: its pushes since are its
 * pushers' to wake for. */
static bool ctx_has_pending(struct doca_ctx *ctx, struct ctx_run *run, bool fed)
{
	enum doca_ctx_state st = ctx_state(ctx);

	if (st != DOCA_CTX_STATE_RUNNING && st != DOCA_CTX_STATE_STOPPING)
		return false;
	EXPLORE_POINT(ATOMIC);
	/* A stop's backlog and mailbox wait until the device has given every
	 * descriptor back (engine/pe_progress.c): not work for a turn now; the
	 * last completion wakes the PE (or, inline, is pending work itself). */
	uint32_t on_device = atomic_load_explicit(&run->on_device, memory_order_relaxed);
	bool waits = (st != DOCA_CTX_STATE_RUNNING || run->fatal) && run->flush_sent && on_device != 0;
	/* The backlog (what the device refused, what a submit left for the
	 * turn) is work now only with nothing of the run on the device: else
	 * the device was full, and the completion that makes room wakes the
	 * PE (an inline device's pending says so itself). Counted always, a
	 * full ring made every arm fire: a busy loop (found by a review). */
	bool backlog = run->backlog_head != NULL && on_device == 0;

	if ((!fed && !waits && (mailbox_nonempty(&run->mbox) || ring_any(run))) || (!waits && backlog) ||
	    run->qp->ops->pending(run->qp) || run_fatal_stop_due(run))
		return true;
	return st == DOCA_CTX_STATE_STOPPING &&
	       (atomic_load_explicit(&ctx->stop_report_owed, memory_order_relaxed) ||
		(atomic_load_explicit(&ctx->may_finalize, memory_order_acquire) && run_outstanding(run) == 0));
}

/* What a walk over the PE's contexts does to each one with a run. */
enum walk {
	WALK_FEED, /* move a running context's mailbox to its device */
	WALK_ARM,  /* that, then arm its completion channel and look for work */
	WALK_ACK,  /* consume what made its completion channel readable */
};

/* One context of a walk (inside its read-side section). */
static void walk_ctx(struct doca_ctx *ctx, enum walk what, bool *pending, doca_error_t *err)
{
	EXPLORE_POINT(ATOMIC);
	struct ctx_run *run = rcu_dereference(ctx->run);

	TSAN_ACQUIRE(run);
	if (run == NULL)
		return;
	if (what == WALK_ACK) {
		run->qp->ops->notify_ack(run->qp);
		return;
	}
	bool fed = ctx_feedable(ctx, run);

	if (fed && run_feed(run, run->pool.size) != 0)
		hw_qp_kick(run->qp);
	if (what != WALK_ARM)
		return;
	if (*err == DOCA_SUCCESS)
		*err = run->qp->ops->notify_arm(run->qp);
	*pending = *pending || ctx_has_pending(ctx, run, fed);
}

/* Walk the PE's contexts (runner guard held); WALK_ARM reports in *pending
 * whether work is pending and returns the first arming error. Which ones:
 * those of the ready set, when no queue pair of the PE has a completion
 * channel — a context with work is in the set, or the thread that gave it
 * the work signals it and then wakes the PE itself (engine/pe_ready.c), so
 * an armed PE with thousands of idle contexts looks at none of them. A
 * completion channel (verbs) must be armed and acknowledged whether or not
 * its context has work (a post while the PE sleeps counts on it), so a PE
 * with channels walks every context, as it always did. */
static doca_error_t pe_walk(struct doca_pe *pe, enum walk what, bool *pending)
{
	doca_error_t err = DOCA_SUCCESS;

	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&pe->channels, memory_order_relaxed) != 0) {
		struct pe_members *m = rcu_dereference(pe->members);
		uint32_t count = atomic_load_explicit(&m->count, memory_order_acquire);

		for (uint32_t i = 0; i < count; i++)
			walk_ctx(atomic_load_explicit(&m->ctx[i], memory_order_acquire), what, pending, &err);
	} else if (what != WALK_ACK) {
		(void)ready_collect_sc(&pe->ready, UINT32_MAX);
		for (struct ready_node *n = ready_iter_sc(&pe->ready, NULL); n != NULL;
		     n = ready_iter_sc(&pe->ready, n))
			walk_ctx(caa_container_of(n, struct doca_ctx, ready), what, pending, &err);
	}
	doca_rcu_read_unlock();
	return err;
}

/* ARMED is stored: full fence, then do the work a wake-up would be for,
 * or fire if some remains (runner guard held) — when a channel could not
 * arm, only if @p fire_on_error (an arming that stands). @p unwatched:
 * the arming ended watches of rings whose producers announce nothing
 * (pe_watch_arm_clear; engine/ring.c, the arm pair): the fence is the
 * heavy half, and the look at those rings (pe_watch_arm_look) signals
 * the contexts it finds READY before WALK_ARM walks the set. */
static doca_error_t pe_arm_check(struct doca_pe *pe, bool fire_on_error, bool unwatched)
{
	bool pending = pe->ready_head != &pe_ready_end;

	if (unwatched)
		asym_fence_heavy(); /* the clears and ARMED visible before we look; a producer's READY before its watch load */
	else /* seq_cst fence: ARMED is visible before we look for work (see top). */
		atomic_thread_fence(memory_order_seq_cst);
	pe_watch_arm_look(pe); /* its contexts signalled: the walk below feeds them */
	doca_error_t err = pe_walk(pe, WALK_ARM, &pending);

	if (pending && (err == DOCA_SUCCESS || fire_on_error))
		pe_wake(pe);
	return err;
}

void pe_turn_rearm(struct doca_pe *pe)
{
	EXPLORE_POINT(WAKE);
	if (atomic_load_explicit(&pe->armed, memory_order_relaxed) != PE_ARMED)
		return;
	/* Refused: a channel this arming stood on is spent (the turn took
	 * its completions, verbs drained its event) and not armed again, so
	 * its next completion would wake no one while the application sleeps
	 * on an arming it was told succeeded. Fire instead: the wake-up
	 * leads to a request_notification, which reports the device's error
	 * (see "A refused arming" at the top). */
	if (pe_arm_check(pe, true, false) != DOCA_SUCCESS) /* (no ring is watched while armed) */
		pe_wake(pe);
}

doca_error_t doca_pe_request_notification(struct doca_pe *ph)
{
	struct doca_pe *pe = pe_of(ph);

	if (pe == NULL)
		return HANDLE_REFUSAL(ph, MAGIC_PE);
	if (pe_worker_elsewhere(pe))
		return pe_refusal(ph, pe, DOCA_ERROR_BAD_STATE);
	/* inside a section, a current handle's cell holds this PE until we
	 * leave it (a destroy hands the cell on after a grace period) */
	doca_rcu_read_lock();
	EXPLORE_POINT(WAKE);
	/* not settled yet: a grace period of our own, even if another caller
	 * stored notify_used and still waits for its one (as credits_first_use) */
	bool first = pe_of(ph) == pe && !atomic_load_explicit(&pe->notify_settled, memory_order_acquire);

	if (first)
		atomic_store_explicit(&pe->notify_used, true, memory_order_relaxed);
	doca_rcu_read_unlock();
	if (first)
		doca_synchronize_rcu(); /* every waker that missed it has left (see top) */
	/* armed and the pending checks below belong to the runner */
	pe_lookup_lock();
	enum runner_entry entry = pe_of(ph) == pe ? runner_enter(&pe->runner) : RUNNER_BUSY;
	bool current = entry != RUNNER_BUSY && pe_entered_current(ph, pe, entry);

	pe_lookup_unlock();
	if (entry == RUNNER_BUSY)
		return pe_refusal(ph, pe, DOCA_ERROR_IN_USE);
	if (!current)
		return HANDLE_REFUSAL(ph, MAGIC_PE); /* destroyed meanwhile */
	if (first) /* release: a caller that sees it skips its grace period after ours */
		atomic_store_explicit(&pe->notify_settled, true, memory_order_release);
	/* Feed first, while submitters still see the PE unarmed: one that
	 * sees ARMED while we hold the guard cannot feed for itself and may
	 * wake us for what we post anyway (see top). */
	(void)pe_walk(pe, WALK_FEED, NULL);
	/* the arm pair's first half (engine/ring.c, I6): no ring watched
	 * once ARMED is stored */
	bool unwatched = pe_watch_arm_clear(pe);

	EXPLORE_POINT(WAKE);
	int before = atomic_load_explicit(&pe->armed, memory_order_relaxed);

	/* release: a waker that reads ARMED sees what our turns took (pe_wake_fenced_if) */
	atomic_store_explicit(&pe->armed, PE_ARMED, memory_order_release);
	doca_error_t err = pe_arm_check(pe, before == PE_ARMED, unwatched);

	if (err != DOCA_SUCCESS) {
		/* Refused: as armed as before (see "A refused arming" at the
		 * top); a waker that fired meanwhile left it FIRED. */
		int armed = PE_ARMED;

		(void)atomic_compare_exchange_strong_explicit(&pe->armed, &armed, before, memory_order_relaxed,
							      memory_order_relaxed);
	}
	if (entry == RUNNER_ENTERED)
		runner_exit(&pe->runner);
	/* about to sleep: other threads may post and free for themselves */
	runner_unpark_for_others(&pe->runner);
	return err;
}

doca_error_t doca_pe_clear_notification(struct doca_pe *ph)
{
	uint64_t count;

	pe_lookup_lock();
	struct doca_pe *pe = pe_of(ph);

	if (pe == NULL) {
		pe_lookup_unlock();
		return HANDLE_REFUSAL(ph, MAGIC_PE);
	}
	if (pe_worker_elsewhere(pe)) {
		pe_lookup_unlock();
		return pe_refusal(ph, pe, DOCA_ERROR_BAD_STATE);
	}
	enum runner_entry entry = runner_enter(&pe->runner);
	bool current = entry != RUNNER_BUSY && pe_entered_current(ph, pe, entry);

	pe_lookup_unlock();
	if (entry == RUNNER_BUSY)
		return pe_refusal(ph, pe, DOCA_ERROR_IN_USE);
	if (!current)
		return HANDLE_REFUSAL(ph, MAGIC_PE); /* destroyed meanwhile */
	EXPLORE_POINT(WAKE);
	atomic_store_explicit(&pe->armed, PE_DISARMED, memory_order_relaxed);
	while (read(pe->evfd, &count, sizeof(count)) < 0 && errno == EINTR)
		;
	(void)pe_walk(pe, WALK_ACK, NULL);
	if (entry == RUNNER_ENTERED)
		runner_exit(&pe->runner);
	return DOCA_SUCCESS;
}
