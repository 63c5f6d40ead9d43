/*
 * engine/ctx_run.c — the context state machine: start, the asynchronous
 * stop, and the resources of one run (task pool, mailbox, queue pair).
 *
 * Stop, and why no accepted task is lost: doca_ctx_stop stores STOPPING,
 * then waits an RCU grace period. Every submitter reads the state inside a
 * read-side section and pushes before leaving it, so after the grace period
 * every submission that saw RUNNING is in the run's mailbox, holding a
 * credit; the ones that saw STOPPING were refused. If no credit is out the
 * ctx goes IDLE at once; otherwise the PE flushes the mailbox and the queue
 * pair and turns STOPPING into IDLE once every event has been freed.
 *
 * "No credit is out" means for the whole call, not only after the grace
 * period: a PE running on another thread (a worker) may deliver or flush
 * tasks during that grace period and return their credits before the count
 * is taken. So the stop goes RUNNING → STOPPING → IDLE if any of these
 * holds: a credit was out when it stored STOPPING (a task in flight or an
 * event unreaped as the stop began); the PE took events of the run after
 * seeing STOPPING (flushed tasks, or started ones completing: it sets
 * stop_saw_events before it releases them, so a stop that sees their
 * credits back sees the mark); a credit is out after the grace period. A
 * task accepted while the stop runs, from a submitter that saw RUNNING, and
 * completed by a PE that has not seen STOPPING yet, is not the stop's: it
 * may complete normally under a stop that reports RUNNING → IDLE.
 *
 * The owner's frees. A doca_event_free (or a doca_event_free_bulk route)
 * by the thread that keeps its PE's guard parked, entering it by
 * runner_unpark, takes no read-side section (engine/event.c): its credit
 * keeps the run (a run is retired only with none out), but it still reads
 * the run and its context after putting the credit back (task_pool_put's
 * tail, run_credits_returned), and the grace periods above do not wait
 * for it. Such a free holds the PE's guard as a brief section, so: a
 * retirement by the PE (ctx_try_finalize) holds the guard, which such a
 * free left before the turn entered it (its thread's own turn follows
 * it; another thread's revoked the parked word after seeing it leave);
 * and before the stop's own retirement it counts the credits, then runs
 * runner_quiesce_fenced (actors/runner.h: a heavy fence, then the
 * owner's brief sections waited out), then counts again. A free whose
 * credit the first count saw back pushed its entry before that credit's
 * store, so by the fence pair (the count's load before the heavy half,
 * the entry before the free's light half) the wait finds the entry and
 * waits for its pop, or finds it already popped: either way our acquire
 * of the pop orders the whole free before the retirement. A free whose
 * credit the first count did not see keeps it above 0: no retirement by
 * the stop. A free that enters after the wait finds no credit of this
 * run out: its event is of another run. A free on the slow way keeps
 * the rule above: its section begins before its credit goes back, so the
 * retirement's grace period waits for it. Nor does such a free need the
 * section to see STOPPING (run_credits_returned wakes the PE when it
 * does): a stop handed to the PE is finished by a turn, which holds the
 * guard, so it comes after the free (and counts its credit back) or
 * before it (and then the free, entering after the turn, sees the
 * STOPPING the turn saw).
 *
 * The owner's submits. A doca_task_submit entered the same way takes no
 * read-side section either (engine/task.c): it looks at RUNNING under the
 * brief guard, then takes a credit and reads the run. The same wait
 * covers it, with the second count: a submit whose light half came
 * before the heavy half is found and waited out, and a credit it took is
 * in the second count (no retirement then); one whose light half came
 * after sees STOPPING (stored before the grace period, so before the
 * heavy half) and takes the sectioned way, refused. So a submit that saw
 * RUNNING has left, its credit counted, before the run it read is
 * retired (DOCA_EXPLORE_REVERT=stop_no_recount keeps the first count:
 * stress/explore owner_submit_destroy). A stop that finds a credit out
 * retires nothing and waits for nothing.
 *
 * Why the stop does not count itself in the guard's revoke (the first
 * version: count in revoke, fence, wait, count credits, retire,
 * withdraw; no submit or free entered by runner_unpark while it stood).
 * While the count stands every runner_unpark of the owner's fails, and
 * its slow way leaves the guard free: another thread's brief hold then
 * sends an owner's free through the mailbox, its credit back only at the
 * owner's next turn, after the free returned, and a submit in between is
 * refused with AGAIN while fewer than max_tasks credits are out: a stop
 * of one context broke the exact AGAIN of another of its PE
 * (stress/explore quiesce_again_stop; DOCA_EXPLORE_REVERT=
 * stop_counts_revoke brings that version back; engine/buf.c says the same
 * of a buffer's destroy). The wait now runs under g_config_lock: a brief
 * section never waits for that lock or for the stopper (it may take the
 * cells' lock and the allocator's, making a chunk, or the log's, whose
 * handler may not call the library; no holder of those waits for it).
 *
 * Report order: a thread holds the ctx's report_lock (recursive, so a
 * callback may start or stop its own ctx) from a state change to the end of
 * its report, so the state callback sees transitions in the order they
 * happened. The PE only try-locks it (a PE turn never blocks on a report
 * elsewhere: it retries on its next turn), and may finish a stop only once
 * may_finalize is set, which stop does after reporting RUNNING → STOPPING.
 * The holder of a report may wait for a PE's turns (a state callback in a
 * doca_task_submit_wait for a credit only they return) or for a report of
 * another context (its state callback stopping that context): so a stop
 * made inside a PE turn (an event callback's) or inside a state callback
 * only try-locks too. Busy, it makes the change (RUNNING → STOPPING, the
 * grace period) without the lock and leaves its report owed
 * (stop_report_owed): the context's PE reports RUNNING → STOPPING on a
 * later turn, once the lock is free, and only then may finish the stop.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/ring.h"

/* on_device has one writer, the runner, so a load and a store update it. */
static void run_on_device_add(struct ctx_run *run, uint32_t delta)
{
	EXPLORE_POINT(ATOMIC);
	uint32_t n = atomic_load_explicit(&run->on_device, memory_order_relaxed);

	atomic_store_explicit(&run->on_device, n + delta, memory_order_relaxed);
}

/* The device took @p took of @p n: count them on it, and say why the rest
 * wait. False if it took them all. */
static bool run_posted(struct ctx_run *run, uint32_t took, uint32_t n)
{
	run_on_device_add(run, took);
	if (took == n)
		return false;
	doca_log(DOCA_LOG_WARN, "the device's queue is full and cannot grow (out of memory, or sw0's ring_max): %u tasks wait for room",
		 n - took);
	return true;
}

void run_post(struct ctx_run *run, const struct hw_desc *descs, uint32_t n)
{
	uint32_t took = hw_qp_post(run->qp, descs, n);

	if (!run_posted(run, took, n))
		return;
	for (uint32_t i = took; i < n; i++) {
		struct doca_event *ev = (struct doca_event *)(uintptr_t)descs[i].cookie;

		event_list_append(&run->backlog_head, &run->backlog_tail, ev);
	}
}

/* hw_ops.post_chain's map of an event: its link, its length, and its
 * buffers' data. */
static const struct hw_chain event_chain = {
	.next = offsetof(struct doca_event, next),
	.len = offsetof(struct doca_event, len),
	.src = offsetof(struct doca_event, src),
	.dst = offsetof(struct doca_event, dst),
	.data = offsetof(struct doca_buf, data),
};

_Static_assert(sizeof(((struct doca_event *)0)->len) == sizeof(uint64_t), "hw_chain: a length is a uint64_t");
_Static_assert(sizeof(((struct doca_buf *)0)->data) == sizeof(void *), "hw_chain: a buffer's data is a pointer");
/* the backends read these three words as addresses (hw_chain_ptr) */
_Static_assert(__builtin_types_compatible_p(__typeof__(((struct doca_event *)0)->next), struct doca_event *),
	       "hw_chain: an event's link is a pointer to an event");
_Static_assert(__builtin_types_compatible_p(__typeof__(((struct doca_event *)0)->src), struct doca_buf *),
	       "hw_chain: an event's source is a pointer to a buffer");
_Static_assert(__builtin_types_compatible_p(__typeof__(((struct doca_event *)0)->dst), struct doca_buf *),
	       "hw_chain: an event's destination is a pointer to a buffer");

void run_post_chain(struct ctx_run *run, struct doca_event *first, uint32_t n)
{
	uint32_t took = hw_qp_post_chain(run->qp, first, n, &event_chain);
	struct doca_event *ev = first;

	if (!run_posted(run, took, n))
		return;
	for (uint32_t i = 0; i < took; i++)
		ev = ev->next;
	for (uint32_t i = took; i < n; i++) {
		struct doca_event *next = ev->next; /* the append ends the list at ev */

		event_list_append(&run->backlog_head, &run->backlog_tail, ev);
		ev = next;
	}
}

struct doca_event *run_backlog_pop(struct ctx_run *run)
{
	struct doca_event *ev = run->backlog_head;

	if (ev != NULL) {
		run->backlog_head = ev->next;
		if (run->backlog_head == NULL)
			run->backlog_tail = NULL;
	}
	return ev;
}

#define BACKLOG_POST_CHUNK 32u /* descriptors built on the stack per device post */

bool run_post_backlog(struct ctx_run *run, uint32_t *posted, uint32_t max)
{
	while (run->backlog_head != NULL && *posted < max) {
		struct hw_desc descs[BACKLOG_POST_CHUNK];
		struct doca_event *evs[BACKLOG_POST_CHUNK], *ev = run->backlog_head;
		uint32_t chunk = max - *posted < BACKLOG_POST_CHUNK ? max - *posted : BACKLOG_POST_CHUNK;
		uint32_t n = 0, took;

		for (; ev != NULL && n < chunk; ev = ev->next) {
			evs[n] = ev;
			descs[n++] = event_desc(ev);
		}
		took = hw_qp_post(run->qp, descs, n);
		run_on_device_add(run, took);
		*posted += took;
		/* the taken ones leave the list at once; ev: the first not looked at */
		run->backlog_head = took < n ? evs[took] : ev;
		if (run->backlog_head == NULL)
			run->backlog_tail = NULL;
		if (took < n)
			return false;
	}
	return run->backlog_head == NULL;
}

uint32_t run_poll(struct ctx_run *run, struct hw_cqe *cqes, uint32_t max)
{
	uint32_t n = hw_qp_poll(run->qp, cqes, max);

	if (n != 0)
		run_on_device_add(run, (uint32_t)-n);
	return n;
}

uint32_t run_reap(struct ctx_run *run, struct doca_event ***at, uint32_t max, struct doca_event **evs,
		  struct hw_cqe *odd, uint32_t *nodd)
{
	void *link = *at; /* the cookies are the events (event_desc, event_chain) */
	uint32_t n = hw_qp_reap(run->qp, &link, offsetof(struct doca_event, next), max, evs, odd, nodd);

	*at = link;
	if (n != 0)
		run_on_device_add(run, (uint32_t)-n);
	return n;
}

uint32_t run_outstanding(const struct ctx_run *run)
{
	/* (task_pool_free's acquire: a caller that sees a credit back sees
	 * the PE done with its slot) */
	uint32_t n = run->pool.size - task_pool_free(&run->pool);

	TSAN_ACQUIRE(&run->pool);
	return n;
}

/* Free a run that no thread can reach any more. */
static void run_free(struct ctx_run *run)
{
	if (run->qp != NULL) {
		run->entry->ops->qp_destroy(run->qp);
		dev_entry_put(run->entry);
	}
	task_pool_fini(&run->pool);
	ring_free_all(run);
#ifdef DOCA_EXPLORE
	/* the explorer's check: a use after the free reads these bytes,
	 * and a pointer made of them faults (verdict "crash") */
	memset(run, 0xa5, sizeof(*run));
#endif
	doca_free(run);
}

/* Make every resource of a new run (g_config_lock held). */
static doca_error_t run_create(struct doca_ctx *ctx, struct ctx_run **out)
{
	struct dev_entry *entry = ctx->dev->entry;
	struct hw_qp_attr attr = {
		.depth = ctx->max_tasks,
		.wake = pe_wake_cb,
	};
	struct hw_qp *qp;
	doca_error_t err;
	struct ctx_run *run = doca_zalloc(sizeof(*run));

	if (run == NULL)
		return DOCA_ERROR_NO_MEMORY;
	mailbox_init(&run->mbox);
	run->start = ++ctx->starts;
	run->ctx = ctx;
	run->pe = ctx_pe(ctx);
	attr.wake_arg = run;
	run->credits = &ctx->credits;
	err = task_pool_init(&run->pool, run, ctx->max_tasks);
	if (err == DOCA_SUCCESS)
		err = entry->ops->qp_create(entry->hw, &attr, &qp);
	if (err == DOCA_SUCCESS) {
		dev_entry_get(entry);
		run->qp = qp;
		run->posts_outside_poll = !qp->runs_in_poll;
		run->entry = entry;
		err = pe_watch_qp(ctx_pe(ctx), qp);
	}
	if (err != DOCA_SUCCESS) {
		run_free(run);
		return err;
	}
	*out = run;
	return DOCA_SUCCESS;
}

static void run_free_rcu(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	struct ctx_run *run = caa_container_of(head, struct ctx_run, rcu);
	struct dev_entry *e = run->entry;

	run_free(run);
	/* Counted down after the put: a close that reads 0 either made the
	 * last put itself or finds the backend closed. (The entry is freed by
	 * a callback that put queued only now, a grace period later.)
	 * release: pairs with doca_dev_close's acquire. */
	atomic_fetch_sub_explicit(&e->retiring, 1, memory_order_release);
}

/* Unpublish the run; free it once no submitter or PE turn can still use it
 * (g_config_lock held). */
static void run_retire_locked(struct doca_ctx *ctx)
{
	struct ctx_run *run = ctx->run;

	EXPLORE_POINT(ATOMIC);
	rcu_assign_pointer(ctx->run, NULL);
	pe_unwatch_qp(ctx_pe(ctx), run->qp);
	/* counted until its free: a close of the device waits for that */
	atomic_fetch_add_explicit(&run->entry->retiring, 1, memory_order_relaxed);
	doca_call_rcu(&run->rcu, run_free_rcu);
}

/* Mark run's returns to look for waiters if its context ever had one
 * (engine/ctx_credits.c, "Per run"). Called once the run is published
 * (g_config_lock held), before RUNNING lets a task into it. */
static void run_watch_credits(struct doca_ctx *ctx, struct ctx_run *run)
{
	EXPLORE_POINT(WAKE);
	if (atomic_load_explicit(&ctx->credits.used, memory_order_relaxed))
		atomic_fetch_or_explicit(&run->credit_watch, RUN_WATCH_USED, memory_order_relaxed);
}

doca_error_t doca_ctx_start(struct doca_ctx *h)
{
	struct ctx_run *run;
	doca_error_t err;
	bool device_called = false;
	struct doca_ctx *ctx = ctx_hold(h);

	if (ctx == NULL)
		return HANDLE_REFUSAL(h, MAGIC_CTX);
	pthread_mutex_lock(&ctx->report_lock);
	pthread_mutex_lock(&g_config_lock);
	bool gone = ctx_of(h) != ctx; /* destroyed since the check above */

	if (gone)
		err = DOCA_ERROR_INVALID_VALUE;
	else if (ctx_state(ctx) != DOCA_CTX_STATE_IDLE)
		err = DOCA_ERROR_BAD_STATE;
	else if (ctx->dev == NULL || ctx_pe(ctx) == NULL)
		err = DOCA_ERROR_NOT_CONNECTED;
	else if (ctx->event_cb == NULL && atomic_load_explicit(&ctx_pe(ctx)->has_worker, memory_order_relaxed))
		err = DOCA_ERROR_NOT_PERMITTED; /* its events would have no taker */
	else
		err = DOCA_SUCCESS;
	if (err == DOCA_SUCCESS) {
		ctx_set_state(ctx, DOCA_CTX_STATE_STARTING);
		(void)hw_diag_take(); /* a reason left by an earlier failure is not ours */
		err = run_create(ctx, &run);
		device_called = true;
		if (err == DOCA_SUCCESS) {
			atomic_store_explicit(&ctx->may_finalize, false, memory_order_relaxed);
			/* the defect scenario credit_watch_start catches: `used`
			 * looked at before the publish, so a first waiter between
			 * the two is seen by neither side */
			bool naive = DOCA_REVERTED("credit_watch_before_publish");

			if (naive)
				run_watch_credits(ctx, run);
			TSAN_RELEASE(run);
			EXPLORE_POINT(ATOMIC);
			rcu_assign_pointer(ctx->run, run);
			if (!naive) {
				/* seq_cst fence: the run is published before we load
				 * `used` (pairs with credits_first_use's fence between
				 * its store of `used` and its load of ctx->run) */
				atomic_thread_fence(memory_order_seq_cst);
				run_watch_credits(ctx, run);
			}
		}
		/* release (in ctx_set_state): a submitter that sees RUNNING sees the run. */
		ctx_set_state(ctx, err == DOCA_SUCCESS ? DOCA_CTX_STATE_RUNNING : DOCA_CTX_STATE_IDLE);
		/* A queue pair always polled is visited from now on, work or
		 * not. One whose completions wake the PE through a channel
		 * (verbs) raises nothing until an arming arms it: a PE armed
		 * before this start would sleep through its completions, so it
		 * wakes once and its next arming arms this channel too. */
		if (err == DOCA_SUCCESS &&
		    (run->qp->always_polled || run->qp->ops->notify_fd(run->qp) >= 0)) {
			doca_rcu_read_lock(); /* the signal's rule (engine/pe_ready.c) */
			pe_ready_signal_wake(ctx_pe(ctx), ctx);
			doca_rcu_read_unlock();
		}
	}
	pthread_mutex_unlock(&g_config_lock);
	if (err == DOCA_SUCCESS)
		ctx_report(ctx, DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_RUNNING);
	pthread_mutex_unlock(&ctx->report_lock);
	if (device_called)
		log_device_reason("doca_ctx_start", err);
	if (gone) /* used after its destroy: refused as a stale handle is */
		err = ctx_gone_refusal(h);
	ctx_ref_put(ctx);
	return err;
}

/* Let the PE finish the stop (@p flag: may_finalize), or report it first
 * (stop_report_owed), and wake it if it sleeps. */
static void stop_hand_to_pe(struct doca_ctx *ctx, struct doca_pe *pe, _Atomic bool *flag)
{
	/* The read-side section keeps the PE's memory alive: once the flag
	 * is set, the ctx may go IDLE and both may be destroyed. */
	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	/* release: the PE's acquire sees STOPPING reported (may_finalize), or
	 * the stop's grace period over (stop_report_owed), before it may finish. */
	atomic_store_explicit(flag, true, memory_order_release);
	pe_ready_signal_wake(pe, ctx); /* its PE visits it to flush and finish */
	doca_rcu_read_unlock();
}

/* How a stop takes the report lock. */
enum stop_lock {
	STOP_WAIT,  /* waits for it */
	STOP_TRY,   /* busy: DOCA_ERROR_AGAIN, nothing changed */
	STOP_DEFER, /* busy: the stop is made, its report owed (file comment) */
};

/* The stop of a context (engine-internal callers pass the object); @p
 * only_start not 0: only the run that start made (ctx_run.start), BAD_STATE
 * and nothing changed if another run (or none) is the context's now. */
static doca_error_t ctx_stop(struct doca_ctx *ctx, uint64_t only_start, enum stop_lock how)
{
	bool busy_at_stop = false, deferred = false;
	enum doca_ctx_state st;
	struct doca_pe *pe;
	doca_error_t err;

	if (!ctx_ref_get(ctx))
		return DOCA_ERROR_INVALID_VALUE;
	if (how == STOP_WAIT)
		pthread_mutex_lock(&ctx->report_lock);
	else if (pthread_mutex_trylock(&ctx->report_lock) != 0) {
		if (how == STOP_TRY) {
			ctx_ref_put(ctx);
			return DOCA_ERROR_AGAIN;
		}
		deferred = true;
	}
	pthread_mutex_lock(&g_config_lock);
	st = ctx_state(ctx);
	pe = ctx_pe(ctx);
	if (only_start != 0 && (ctx->run == NULL || ctx->run->start != only_start))
		st = DOCA_CTX_STATE_IDLE; /* that run has ended: not ours to stop */
	if (st == DOCA_CTX_STATE_RUNNING) {
		atomic_store_explicit(&ctx->run->stopping, true, memory_order_relaxed); /* published by the state's release */
		/* before STOPPING, as the state's load it replaces was (engine/ctx_credits.c) */
		atomic_fetch_or_explicit(&ctx->run->credit_watch, RUN_WATCH_STOP, memory_order_relaxed);
		ctx_set_state(ctx, DOCA_CTX_STATE_STOPPING);
		busy_at_stop = run_outstanding(ctx->run) != 0;
	}
	pthread_mutex_unlock(&g_config_lock);
	if (st == DOCA_CTX_STATE_RUNNING)
		ctx_credits_left_running(&ctx->credits); /* blocked submitters: BAD_STATE now */

	if (st == DOCA_CTX_STATE_STOPPING) {
		err = DOCA_ERROR_IN_PROGRESS;
	} else if (st != DOCA_CTX_STATE_RUNNING) {
		err = DOCA_ERROR_BAD_STATE;
	} else {
		/* Every submitter that saw RUNNING has pushed once this returns. */
		doca_synchronize_rcu();
		/* some with no announce, their rings watched: announce for them
		 * (engine/ring.c, I6 (a)) before the PE is handed the flush */
		ring_watch_stop(ctx->run);
		err = DOCA_ERROR_IN_PROGRESS; /* put off: the PE reports it */
	}
	if (!deferred && st == DOCA_CTX_STATE_RUNNING) {
		/* The PE's parked owner submits and frees without a read-side
		 * section (engine/task.c, engine/event.c): before a retirement,
		 * wait out its brief sections and count again (file comment). */
		bool quiesce = !DOCA_REVERTED("stop_ignores_owner_frees");
		bool counted = quiesce && DOCA_REVERTED("stop_counts_revoke"); /* the first version */

		if (counted)
			runner_quiesce_begin(&pe->runner);
		pthread_mutex_lock(&g_config_lock);
		/* (the acquire in run_outstanding orders the mark's load) */
		bool idle = run_outstanding(ctx->run) == 0 && !busy_at_stop &&
			    !atomic_load_explicit(&ctx->run->stop_saw_events, memory_order_relaxed);

		if (idle && quiesce && !counted) {
			runner_quiesce_fenced(&pe->runner); /* the count's load is the access it orders */
			if (!DOCA_REVERTED("stop_no_recount"))
				idle = run_outstanding(ctx->run) == 0 &&
				       !atomic_load_explicit(&ctx->run->stop_saw_events, memory_order_relaxed);
		}
		if (idle) {
			run_retire_locked(ctx);
			ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
		}
		/* before the lock goes: then the ctx, and with it the PE,
		 * may be destroyed, and the count must not outlive the PE */
		if (counted)
			runner_quiesce_end(&pe->runner);
		pthread_mutex_unlock(&g_config_lock);
		ctx_report(ctx, DOCA_CTX_STATE_RUNNING, idle ? DOCA_CTX_STATE_IDLE : DOCA_CTX_STATE_STOPPING);
		err = idle ? DOCA_SUCCESS : DOCA_ERROR_IN_PROGRESS;
	}
	if (!deferred)
		pthread_mutex_unlock(&ctx->report_lock);
	if (st == DOCA_CTX_STATE_RUNNING && err == DOCA_ERROR_IN_PROGRESS)
		stop_hand_to_pe(ctx, pe, deferred ? &ctx->stop_report_owed : &ctx->may_finalize);
	ctx_ref_put(ctx);
	return err;
}

doca_error_t doca_ctx_stop(struct doca_ctx *h)
{
	struct doca_ctx *ctx = ctx_hold(h);
	doca_error_t err;

	if (ctx == NULL)
		return HANDLE_REFUSAL(h, MAGIC_CTX);
	/* Inside a PE turn or a state callback, waiting for a report under
	 * way could wait for ever (file comment): put off instead. */
	bool defer = (pe_in_turn() && !DOCA_REVERTED("stop_in_turn_waits")) || ctx_in_state_callback();

	err = ctx_stop(ctx, 0, defer ? STOP_DEFER : STOP_WAIT);
	ctx_ref_put(ctx);
	return err;
}

bool ctx_try_finalize(struct doca_ctx *ctx)
{
	bool done = false, owed;

	if (ctx_state(ctx) != DOCA_CTX_STATE_STOPPING)
		return false;
	/* acquire: the stop's grace period is over (stop_hand_to_pe) */
	owed = atomic_load_explicit(&ctx->stop_report_owed, memory_order_acquire);
	if (!owed && (!atomic_load_explicit(&ctx->may_finalize, memory_order_acquire) ||
		      run_outstanding(ctx->run) != 0))
		return false;
	if (pthread_mutex_trylock(&ctx->report_lock) != 0)
		return false; /* a report is under way elsewhere: next turn */
	if (owed) { /* a put-off stop's report, then the stop is ours to finish */
		atomic_store_explicit(&ctx->stop_report_owed, false, memory_order_relaxed);
		atomic_store_explicit(&ctx->may_finalize, true, memory_order_relaxed);
		ctx_report(ctx, DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING);
	}
	pthread_mutex_lock(&g_config_lock);
	/* (a STOPPING context takes no credit: outstanding only falls) */
	if (ctx_state(ctx) == DOCA_CTX_STATE_STOPPING && run_outstanding(ctx->run) == 0) {
		run_retire_locked(ctx);
		atomic_store_explicit(&ctx->may_finalize, false, memory_order_relaxed);
		ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
		done = true;
	}
	pthread_mutex_unlock(&g_config_lock);
	if (done)
		ctx_report(ctx, DOCA_CTX_STATE_STOPPING, DOCA_CTX_STATE_IDLE);
	pthread_mutex_unlock(&ctx->report_lock);
	return done;
}

void ctx_stop_on_fatal(struct doca_ctx *ctx, uint64_t start, bool first)
{
	if (first)
		doca_log(DOCA_LOG_ERROR, "device queue pair failed: stopping its context, flushing its tasks");
	/* The failed run's stop only: since the turn saw the failure, another
	 * thread may have stopped that run and started the next one. Never
	 * waiting for the report lock: its holder (a state callback) may wait
	 * for this PE's turns (a doca_task_submit_wait for a credit only they
	 * return), and a turn that waited would never come back. Busy, the
	 * stop is put off: the run is failed, so its turns flush its tasks, and
	 * each turn asks again (run_needs_visit) until the run is stopping. */
	(void)ctx_stop(ctx, start, STOP_TRY);
}
