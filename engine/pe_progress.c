/*
 * engine/pe_progress.c — one turn of a progress-engine actor.
 *
 * A turn has two halves. Inside one RCU read-side section it visits the
 * contexts of its ready set (engine/pe_ready.c: only those with work, in
 * FIFO order; a pinned reference on each that has something to deliver),
 * drains their mailboxes in bounded batches, posts to the device or, for a
 * STOPPING context, flushes, and polls completions into a local array (a
 * device that runs descriptors at once is handed the run's backlog to
 * execute first). After the section it delivers: event callbacks run (and may stop contexts, which waits for a
 * grace period — impossible inside a read-side section), ready events are
 * queued, stops are finished. A context cannot become IDLE (so cannot be
 * destroyed) while the turn holds one of its events, and the pinned
 * reference keeps its memory valid through its state callback anyway. A
 * running context that produced nothing this turn needs nothing after the
 * section, so it is not pinned (two atomic operations less per idle turn);
 * nor does one whose events, with no event callback, join the ready list
 * inside the section (turn_visit says when).
 */
#include <stdlib.h>
#include <string.h>

#include "actors/explore_revert.h"
#include "engine/engine.h"
#include "engine/pe_ready.h"
#include "engine/ring.h"
#include "engine/task_pool.h"

#define TURN_EVENTS 256u    /* completions per turn */
/* A turn's poll onto an empty ready list always fits the ready index
 * (pe_index_ready): an index that turned off comes back with the first
 * poll after the list drains. */
_Static_assert(TURN_EVENTS <= PE_READY_INDEX, "a turn's completions fit an empty ready index");
/* new contexts collected from the ready set's signals per turn (a turn
 * visits those plus the ones kept by the last, turn_collect); also the
 * listed contexts a turn's watch look reaches (pe_watch_turn) */
#define TURN_CTXS 64u
#define TURN_POSTS 256u     /* descriptors posted per context per turn */
#define POST_BATCH 64u      /* descriptors per hw post call */
#ifdef DOCA_EXPLORE
/* the feed's batch: a scenario lowers it (stress/explore/scenario_ring.c,
 * ring_batch) so that a few tasks outlast one batch */
uint32_t explore_feed_batch = POST_BATCH;
#define FEED_BATCH (explore_feed_batch < POST_BATCH ? explore_feed_batch : POST_BATCH)
#else
#define FEED_BATCH POST_BATCH
#endif
#define DRAIN_PER_SHARD 32u /* items per mailbox shard per drain */

struct turn_rec {
	struct doca_ctx *ctx;
	/* its executed events, linked in order, when it has no
	 * event callback (turn_execute); NULL if none */
	struct doca_event *head, *tail;
	uint32_t first; /* index of its first other event in the turn's array */
	uint32_t count;
	bool stop;      /* its qp failed, the run is not stopping: stop the ctx after delivering */
	bool failed_now; /* the failure was seen in this turn */
	uint64_t start; /* the visited run's start number (its stop's, when stop) */
};

struct turn {
	struct turn_rec recs[TURN_CTXS];
	uint32_t nrecs;
	struct doca_event *done[TURN_EVENTS];
	uint32_t ndone;
	/* a visit's polled completions that are not of whole copies, whole
	 * (turn_poll: every polled event is linked by its next); the
	 * execute's completions too (turn_execute) */
	struct hw_cqe cqes[TURN_EVENTS];
};

static void event_flush(struct doca_event *ev)
{
	ev->status = DOCA_EVENT_STATUS_FAILURE;
	ev->error = DOCA_ERROR_SHUTDOWN;
	ev->bytes = 0;
}

/* The mailbox's items after the rings' (ring_feed) in one take of the
 * flags: every item is a free from another thread (RETURNING: a task
 * travels in a ring, engine/ring.c), whose slot goes to @p released.
 * Takes at most @p max from the shards in @p flags; keeps the flags
 * (shard 0's at least) when @p left: the rings hold more (ring_feed).
 * Returns the items taken. */
static uint32_t run_take_frees(struct ctx_run *run, uint32_t flags, uint32_t max, bool left,
			       struct pool_chain *released)
{
	struct mailbox_node *items[POST_BATCH];
	uint32_t n = flags != 0 ? mailbox_drain_flagged_sc(&run->mbox, flags, items, max, DRAIN_PER_SHARD) : 0;

	for (uint32_t i = 0; i < n; i++) {
		struct doca_event *ev = caa_container_of(items[i], struct doca_event, mbox_node);

		if (!event_returning(ev)) {
			doca_log(DOCA_LOG_ERROR, "a task in a run's mailbox: tasks travel in its rings");
			abort();
		}
		event_release_to(ev, released); /* freed on another thread (engine/event.c) */
	}
	if (left)
		mailbox_keep_flags(&run->mbox, flags | 1u);
	return n;
}

/* Put the slots freed on other threads back, and tell the run. */
static void run_put_frees(struct ctx_run *run, struct pool_chain *released)
{
	if (released->n != 0) {
		uint32_t n = released->n;

		task_pool_put(&run->pool, released);
		run_credits_returned(run, n);
	}
}

uint32_t run_feed(struct ctx_run *run, uint32_t max)
{
	struct doca_event *evs[POST_BATCH];
	struct hw_desc descs[POST_BATCH];
	uint32_t posted = 0;
	struct pool_chain released = { 0 };
	/* the backlog (what the device refused, what a submit left for this
	 * turn) goes first; while some is left, nothing newer may overtake it */
	bool clear = run_post_backlog(run, &posted, max);

	while (clear && posted < max) {
		uint32_t limit = max - posted < FEED_BATCH ? max - posted : FEED_BATCH;
		/* the flags first, then the rings (engine/ring.c, I6); no flag,
		 * nothing announced or left, and no ring watched: an entry
		 * written since is its producer's to announce */
		bool late = DOCA_REVERTED("ring_look_before_flags"), left = false;
		uint32_t flags = late ? 0 : mailbox_take_flags(&run->mbox);

		if (!late && flags == 0 && !ring_any_watched(run))
			break;
		uint32_t n = ring_feed(run, evs, limit, &left);

		if (late && (flags = mailbox_take_flags(&run->mbox)) == 0 && n == 0)
			break;
		uint32_t frees = run_take_frees(run, flags, POST_BATCH, left, &released);

		if (n + frees == 0)
			break;
		for (uint32_t i = 0; i < n; i++)
			descs[i] = event_desc(evs[i]);
		if (n != 0)
			run_post(run, descs, n);
		posted += n;
		clear = run->backlog_head == NULL; /* the device refused some: stop here */
	}
	run_put_frees(run, &released);
	if (posted != 0)
		hw_qp_doorbell(run->qp);
	return posted;
}

/* Move the rings' tasks to the device, or flush them when not running;
 * take the mailbox's frees. */
static void run_drain(struct turn *t, struct ctx_run *run, bool running)
{
	struct pool_chain released = { 0 };

	if (running) {
		if (run_feed(run, TURN_POSTS) != 0)
			hw_qp_kick(run->qp);
		return;
	}
	/* the backlog's tasks were never on the device: flushed first, in
	 * order; then the rings' (SP, then MP), then the frees */
	for (struct doca_event *ev; t->ndone < TURN_EVENTS && (ev = run_backlog_pop(run)) != NULL;) {
		event_flush(ev);
		t->done[t->ndone++] = ev;
	}
	for (uint32_t flushed = 0; flushed < TURN_POSTS;) {
		uint32_t limit = TURN_EVENTS - t->ndone, flags = mailbox_take_flags(&run->mbox);
		bool left = false;

		/* a watched ring's producer announces nothing (turn_visit) */
		if (flags == 0 && !ring_any_watched(run))
			break;
		/* (the explorer's revert: the rings' tasks never flushed) */
		uint32_t n = DOCA_REVERTED("ring_flush_skips_rings")
				     ? 0
				     : ring_feed(run, &t->done[t->ndone], limit < POST_BATCH ? limit : POST_BATCH, &left);
		uint32_t frees = run_take_frees(run, flags, POST_BATCH, left, &released);

		for (uint32_t i = 0; i < n; i++)
			event_flush(t->done[t->ndone++]);
		if (n + frees == 0)
			break;
		flushed += n + frees;
	}
	run_put_frees(run, &released);
}

/* Turn a completion into its event's status. A whole copy (HW_CQE_OK:
 * every byte, DOCA_SUCCESS, hw/hw.h) stores nothing: its outcome is the
 * fill's (engine/task.c, task_fill: SUCCESS, or PARTIAL with TOO_BIG for
 * an ALLOW_PARTIAL copy to a short destination), and its bytes are its
 * len, the same word (engine.h), as in the turn's execute. Every other
 * status overwrites the outcome and the bytes. */
static void event_complete(struct doca_event *ev, const struct hw_cqe *c, bool *fatal)
{
	*fatal = *fatal || c->fatal;
	if (c->status == HW_CQE_OK)
		return;
	ev->bytes = c->bytes;
	ev->error = c->error;
	switch (c->status) {
	case HW_CQE_PARTIAL:
		ev->status = DOCA_EVENT_STATUS_PARTIAL;
		break;
	case HW_CQE_FLUSHED:
		event_flush(ev);
		break;
	default:
		ev->status = DOCA_EVENT_STATUS_FAILURE;
		break;
	}
}

/* The event a completion's cookie names (engine.h, event_desc). */
static inline struct doca_event *event_of_cookie(uint64_t cookie)
{
	return (struct doca_event *)(uintptr_t)cookie;
}

/* A visit's poll: up to max completions of the run, their events linked
 * in order by their next behind the link word *at (*at then names the
 * last one's next, left unwritten: the caller ends the list) and in
 * t->done[] from t->ndone on, in order, and whole in t->cqes those that
 * are not whole copies (HW_CQE_OK, not fatal: their events store
 * nothing, event_complete), in order, *nodd of them. A device with
 * hw_ops.reap links them so; another is polled and its completions
 * linked and sorted here. */
static uint32_t turn_poll(struct ctx_run *run, struct turn *t, uint32_t max, struct doca_event ***at,
			  uint32_t *nodd)
{
	struct doca_event **done = &t->done[t->ndone];

	if (run->qp->reaps_whole)
		return run_reap(run, at, max, done, t->cqes, nodd);
	uint32_t n = run_poll(run, t->cqes, max), odd = 0;
	struct doca_event **link = *at;

	for (uint32_t j = 0; j < n; j++) {
		struct doca_event *ev = event_of_cookie(t->cqes[j].cookie);

		*link = ev;
		link = &ev->next;
		done[j] = ev;
		if (t->cqes[j].status != HW_CQE_OK || t->cqes[j].fatal)
			t->cqes[odd++] = t->cqes[j]; /* odd <= j: not read again */
	}
	*at = link;
	*nodd = odd;
	return n;
}

/* turn_poll's completions that are not whole copies into their events'
 * status (cold: a failure, a partial copy, a flush, a fatal one); true if
 * one was fatal. */
static __attribute__((cold, noinline)) bool turn_complete_odd(const struct hw_cqe *c, uint32_t n)
{
	bool fatal = false;

	for (uint32_t j = 0; j < n; j++)
		event_complete(event_of_cookie(c[j].cookie), &c[j], &fatal);
	return fatal;
}

/* A visit's polled events, linked in order; head NULL: none. */
struct polled_list {
	struct doca_event *head, *tail;
	uint32_t n;
};

/* A visit's poll (turn_poll) and its events put where the visit hands
 * them: in done[] from t->ndone on, which counts them; a visit that will
 * hand them to the ready list (running, no record yet, no event
 * callback) gets them back linked as well, as pe_deliver_ready would
 * link them, so no second pass is needed (and done[] is the ready
 * index's copy, pe_index_ready); every other visit finds them in done[]
 * (an empty list comes back), before a stop's flushed backlog and
 * mailbox. With events in hand the callback is fixed
 * (doca_ctx_set_event_cb is IDLE only): read after the poll, as the
 * delivery reads it. Out of line: a visit to an idle at-once device
 * makes no poll, and its way keeps its registers. */
static __attribute__((noinline)) struct polled_list turn_poll_visit(struct ctx_run *run, const struct doca_ctx *ctx,
								    struct turn *t, bool running, uint32_t *nodd)
{
	struct doca_event *head, **end = &head;
	uint32_t at = t->ndone, n = turn_poll(run, t, TURN_EVENTS - at, &end, nodd);

	if (n == 0)
		return (struct polled_list){ NULL, NULL, 0 };
	*end = NULL;
	t->ndone = at + n;
	if (running && t->nrecs == 0 && ctx->event_cb == NULL)
		return (struct polled_list){ head, caa_container_of(end, struct doca_event, next), n };
	return (struct polled_list){ NULL, NULL, 0 };
}

/* The event k links after ev (the list has that many). */
static struct doca_event *event_list_skip(struct doca_event *ev, uint32_t k)
{
	for (; k != 0; k--)
		ev = ev->next;
	return ev;
}

/* The copies' memmove without the PLT's jump, as hw/sw/sw_qp.c calls it. */
#if defined(__GNUC__) && !defined(__clang__)
extern __typeof__(memmove) memmove __attribute__((noplt));
#endif

/* One event of turn_copy: the copy. Its status as the device's whole
 * copy gives it is the fill's (engine/task.c, task_fill), and its bytes
 * are len (the same word, engine.h). */
static inline __attribute__((always_inline)) void turn_copy_one(struct doca_event *ev, bool ready,
								 struct doca_event ***done)
{
	struct doca_buf *src = ev->src;
	uint64_t len = ev->len;

	if (!ready)
		*(*done)++ = ev;
	memmove(ev->dst->data, src->data, len);
}

/* turn_execute's way on a device whose execute is a plain copy
 * (hw_qp.copies_plain): the backlog's events, oldest first, copied here
 * in one pass with no copy built and no call but the copy's, four a
 * round (one bound test per four events): at most rounds * TURN_ROUND
 * (rounds >= 1) of them. *evp becomes the first event not executed (NULL:
 * the backlog's end); returns how many were. */
#define TURN_ROUND 4u
static inline __attribute__((always_inline)) uint32_t turn_copy(struct doca_event **evp, uint32_t rounds, bool ready,
								struct doca_event **done)
{
	struct doca_event *ev = *evp;
	uint32_t left = rounds;

	*evp = NULL; /* the backlog's end, unless the bound stops us first */
	do {
		turn_copy_one(ev, ready, &done);
		if ((ev = ev->next) == NULL)
			return TURN_ROUND * (rounds - left) + 1u;
		turn_copy_one(ev, ready, &done);
		if ((ev = ev->next) == NULL)
			return TURN_ROUND * (rounds - left) + 2u;
		turn_copy_one(ev, ready, &done);
		if ((ev = ev->next) == NULL)
			return TURN_ROUND * (rounds - left) + 3u;
		turn_copy_one(ev, ready, &done);
		ev = ev->next;
	} while (ev != NULL && --left != 0);
	*evp = ev;
	return TURN_ROUND * (rounds - left) + (ev == NULL ? TURN_ROUND : 0u); /* left: not counted down at the end */
}

#define EXECUTE_CHUNK 32u /* copies built on the stack per execute call */

/* A device that runs descriptors at once (hw_qp.executes_at_once): the
 * backlog's tasks, oldest first, executed here instead of posted and
 * polled, as long as none of the run's posts is on the device (so nothing
 * posted earlier is overtaken) and the turn has room for their events.
 * What is left (the turn is full) is posted by run_drain as before.
 * On a device whose execute is a plain copy (hw_qp.copies_plain) the
 * copies are made here instead (turn_copy; the race detector's one-copy
 * chunks below keep the device's way).
 * One pass over the events: each one's descriptor. Its status as the
 * whole copy the device reports for all but its failures is the fill's
 * (engine/task.c, task_fill: SUCCESS, or PARTIAL for an ALLOW_PARTIAL copy
 * to a short destination; hw_ops.execute returns how many leading ones
 * are whole, without writing their completions; a whole copy's bytes are
 * its len, the same word, engine.h); the completions of the rest
 * overwrite every field.
 * Without an event callback the executed events stay linked as they were
 * in the backlog: *head..*tail, for the turn to splice onto the ready list
 * with one tail update (no array entry, no second walk). They stay QUEUED
 * there (engine.h): a free on another thread refuses them as it refused
 * them before (engine/event.c looks for HELD or CALLBACK), only this
 * thread, which holds the runner guard, reads the ready list, and the
 * handout stores HELD over whatever state it finds. */
static void turn_execute(struct turn *t, struct ctx_run *run, bool *fatal,
			 struct doca_event **head, struct doca_event **tail)
{
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&run->on_device, memory_order_relaxed) != 0)
		return;
	struct doca_event *ev = run->backlog_head, *last = NULL;

	if (ev == NULL)
		return;
	bool failed = false; /* in a local: the event stores below cannot alias it */
	struct hw_qp *qp = run->qp;
	uint32_t ndone = t->ndone;
	struct doca_event *first_ev = ev;
	/* tasks in hand: the ctx is not IDLE, so its event callback is fixed
	 * until they are delivered (doca_ctx_set_event_cb is IDLE only) */
	bool ready = run->ctx->event_cb == NULL, watched = hb_watching();

	/* a room's last ones past a multiple of TURN_ROUND, if the backlog
	 * reaches them: the device's way */
	if (qp->copies_plain && !watched && TURN_EVENTS - ndone >= TURN_ROUND) {
		uint32_t rounds = (TURN_EVENTS - ndone) / TURN_ROUND;
		/* compiled once for each: the loop tests no flag */
		uint32_t n = ready ? turn_copy(&ev, rounds, true, NULL) : turn_copy(&ev, rounds, false, &t->done[ndone]);

		last = ev == NULL ? run->backlog_tail : event_list_skip(first_ev, n - 1u);
		ndone += n;
	}
	while (ev != NULL && ndone < TURN_EVENTS && !failed) {
		struct hw_copy copies[EXECUTE_CHUNK];
		struct doca_event **done = &t->done[ndone], *chunk = ev;
		uint32_t room = TURN_EVENTS - ndone;
		/* the chunk's bound as a pointer: one compare per event; one
		 * copy per call while a race detector watches (below) */
		struct hw_copy *c = copies,
			       *end = copies + (watched ? 1u : room < EXECUTE_CHUNK ? room : EXECUTE_CHUNK);

		/* at least one: ev is not NULL and end > copies (room >= 1) */
		for (;;) {
			struct doca_buf *src = ev->src;
			uint64_t len = ev->len;

			/* event_desc's copy: no registrations, no cookie (hw_copy) */
			*c = (struct hw_copy){ .src = src->data, .dst = ev->dst->data, .len = len };
			/* (its status: the fill's; bytes: len, the same word, engine.h) */
			if (!ready)
				*done++ = ev;
			c++;
			ev = ev->next;
			if (ev == NULL || c == end)
				break;
		}
		uint32_t n = (uint32_t)(c - copies);

		/* the race detector's annotations, which the device leaves to us
		 * (hw_ops.execute; this thread makes the copies), around the one
		 * copy: none orders another task's writes before this copy */
		if (watched)
			hb_acquire(chunk); /* the submitter's writes first */
		uint32_t whole = hw_qp_execute(qp, copies, n, t->cqes);

		if (watched)
			hb_release(chunk); /* then whoever gets the event */
		if (whole < n) {
			struct doca_event *e = event_list_skip(chunk, whole);

			for (uint32_t j = whole; j < n; j++, e = e->next)
				event_complete(e, &t->cqes[j], &failed);
		}
		/* the chunk's last event: the backlog's tail if the chunk took the
		 * rest of it (the common case), else the list walked once */
		last = ev == NULL ? run->backlog_tail : event_list_skip(chunk, n - 1u);
		ndone += n;
	}
	run->backlog_head = ev;
	if (ev == NULL)
		run->backlog_tail = NULL;
	if (ready) {
		/* (last's link: pe_splice_ready's; ev, the backlog's rest, was
		 * read above) */
		*tail = last;
		*head = first_ev;
	}
	t->ndone = ndone;
	*fatal = *fatal || failed;
}

/* A visit's record when its run failed (a fatal completion now or
 * before): its stop, unless the run is stopping already. */
static __attribute__((cold, noinline)) void turn_rec_fatal(struct turn_rec *rec, struct ctx_run *run, bool fatal,
							 bool stopping)
{
	rec->stop = !stopping;
	rec->failed_now = fatal && !run->fatal;
	rec->start = run->start;
	run->fatal = true;
}

/* Events head..tail, linked in order (tail's own link is stored here),
 * onto the end of the ready list. The list's last event links to its end
 * pe_ready_end (engine.h), and the list is empty when its head is the
 * end; its tail is then stale: the getters (engine/pe.c) that take the
 * last event leave it as it was (a test and a store fewer a get), so the
 * tail is read only when the list has events. Every append to the ready
 * list comes here. */
static void pe_splice_ready(struct doca_pe *pe, struct doca_event *head, struct doca_event *tail)
{
	tail->next = &pe_ready_end;
	if (pe->ready_head != &pe_ready_end) {
		pe->ready_tail->next = head;
	} else {
		pe->ready_head = head;
		/* a new list: the index (engine.h) names none of it yet */
		pe->index_at = pe->index_end = 0;
	}
	pe->ready_tail = tail;
}

/* A poll's events evs[0..n), just spliced onto the ready list by
 * pe_splice_ready after @p old_tail (NULL: onto an empty list), copied to
 * the ready index's end (engine.h) when the index then still names the
 * list's first events in order: the list was empty (the splice emptied
 * the index), or the index reaches old_tail, the list's last event
 * before the splice (an event is on the list once, and the index names
 * a prefix of it, so then it names all of it); and when they fit. Else
 * the index stays as it was, a prefix of the list (or empty). */
static void pe_index_ready(struct doca_pe *pe, struct doca_event *const *evs, uint32_t n,
			   const struct doca_event *old_tail)
{
	uint32_t end = pe->index_end;

	if (old_tail != NULL && (end == pe->index_at || pe->ready_index[end - 1u] != old_tail))
		return;
	if (n > PE_READY_INDEX - end)
		return;
	memcpy(&pe->ready_index[end], evs, n * sizeof(*evs));
	pe->index_end = end + n;
}

/* pe_deliver for n (>= 1) events of one context without an event callback
 * (none can be set while it has events: doca_ctx_set_event_cb is IDLE
 * only): linked in order, then spliced onto the ready list with one tail
 * update. */
static void pe_deliver_ready(struct doca_pe *pe, struct doca_event *const *evs, uint32_t n)
{
	for (uint32_t i = 0; i + 1u < n; i++)
		evs[i]->next = evs[i + 1u];
	pe_splice_ready(pe, evs[0], evs[n - 1u]);
}

/* Visit one context of the ready set: drain, post or flush, poll. */
static void turn_visit(struct doca_pe *pe, struct turn *t, struct doca_ctx *ctx)
{
	enum doca_ctx_state st = ctx_state(ctx);

	if (st != DOCA_CTX_STATE_RUNNING && st != DOCA_CTX_STATE_STOPPING) {
		pe_ready_after_visit(pe, ctx, false);
		return;
	}
	EXPLORE_POINT(ATOMIC);
	struct ctx_run *run = rcu_dereference(ctx->run);

	if (run == NULL) {
		pe_ready_after_visit(pe, ctx, false);
		return;
	}
	TSAN_ACQUIRE(run);
	struct hw_qp *qp = run->qp;
	uint32_t first = t->ndone;
	/* acquire: with it the STOPPING store before it (ctx_stop). The run's
	 * own flag: st may be an earlier run's, the stop, IDLE and a restart
	 * having passed since it was loaded. */
	bool stopping = DOCA_REVERTED("turn_stop_from_ctx_state")
				? st == DOCA_CTX_STATE_STOPPING
				: atomic_load_explicit(&run->stopping, memory_order_acquire);
	bool running = !stopping && !run->fatal, fatal = false;
	struct doca_event *head = NULL, *tail = NULL;
	/* set at the qp's creation: in a local, not loaded again after the copies */
	bool at_once = qp->executes_at_once;

	if (running && at_once)
		turn_execute(t, run, &fatal, &head, &tail);
	uint32_t rest = head != NULL ? t->ndone : first; /* where done[] starts */
	/* Nothing to feed (an at-once device executed the backlog, no one
	 * pushed): no call. mailbox_idle makes the loads a drain's first look
	 * makes, and when they find nothing the drain takes nothing. */
	bool fed = false;

	if (running) {
		/* a watched ring's producer announces nothing: the visit its
		 * turn's look brought feeds (pe_watch_turn) */
		fed = run->backlog_head != NULL || !mailbox_idle(&run->mbox) || ring_any_watched(run);
		if (fed) {
			run->watch_took = 0; /* what feeds outside a visit took sets no bit */
			run_drain(t, run, true);
			/* the watch (engine/ring.c, I6): no bit set while armed
			 * (relaxed: DISARMED and ARMED are stored under the
			 * guard, which we hold; a waker's FIRED is not DISARMED
			 * either); a set bit puts the context on the PE's watch
			 * list, whose turns look at the ring (round robin) */
			bool armed = atomic_load_explicit(&pe->armed, memory_order_relaxed) != PE_DISARMED;

			if (ring_watch_visit(run, armed) != 0)
				pe_watch_link(pe, ctx);
		}
	} else {
		/* flushing. Stopping: no ring watched (the stop announces
		 * for the producers that saw a bit, ring_watch_stop). Failed
		 * and not yet stopping: the bits stay, since a producer that
		 * saw one announced nothing and the stop may be put off for
		 * ever (its report lock's holder waiting for a credit only
		 * this flush returns, ctx_stop_on_fatal); the context stays
		 * on the watch list, whose turns look at the rings, and the
		 * flush looks at them while a bit is set (run_drain). */
		if (stopping)
			(void)ring_watch_clear(run, false);
		if (!run->flush_sent) {
			qp->ops->flush(qp);
			run->flush_sent = true;
		}
	}
	/* A device that executes at once completes only what was posted to
	 * it, inside poll: with nothing on it (on_device's one writer is the
	 * runner, this thread) a poll would find nothing. */
	bool idle_dev = at_once && !qp->always_polled &&
			atomic_load_explicit(&run->on_device, memory_order_relaxed) == 0;
	uint32_t nodd = 0, polled_at = t->ndone;
	/* the polled events, linked in order (turn_poll_visit) */
	struct polled_list polled = idle_dev ? (struct polled_list){ NULL, NULL, 0 }
					     : turn_poll_visit(run, ctx, t, running, &nodd);

	if (__builtin_expect(nodd != 0, 0))
		fatal = turn_complete_odd(t->cqes, nodd) || fatal;
	/* A stop flushes in submission order: what is on the device first,
	 * then the backlog, then the mailbox. A thread's tasks are in that
	 * order of age: it posts directly only while nothing of its waits in
	 * the mailbox, and to the backlog only while it holds tasks. So the
	 * backlog and the mailbox wait until the device gave everything back. */
	if (!running && atomic_load_explicit(&run->on_device, memory_order_relaxed) == 0)
		run_drain(t, run, false);
	if (stopping && t->ndone != first) /* before their release */
		atomic_store_explicit(&run->stop_saw_events, true, memory_order_relaxed);
	/* The first look (pe_ready.c): what run_needs_visit would find is
	 * known without it for a running context whose at-once device has
	 * nothing posted and whose backlog and mailbox were empty above (no
	 * fatal completion, the state RUNNING when loaded): nothing. Work
	 * that came since is work that could have come just after the look;
	 * the release's look after its fence finds it, as it would then. */
	bool known_idle = running && !fed && idle_dev && !fatal && st == DOCA_CTX_STATE_RUNNING;
	/* A visit that produced events keeps its context for the next turn,
	 * whatever the look would find: a context busy now is likely busy
	 * then (the application submits again after it reaps), and a kept
	 * context costs its next visit one look, where a released one costs
	 * the release (a CAS, a fence, the look again) and the next
	 * submitter's signal or requeue. A visit more is never wrong: the
	 * set's rule (a context leaves only after a visit that finds nothing,
	 * pe_ready.c) holds, one visit later. */
	bool more = t->ndone != first || (!known_idle && run_needs_visit(ctx, run));

	pe_ready_after_visit(pe, ctx, more);
	if (t->ndone == first && running && !fatal)
		return; /* nothing to deliver or finish */
	/* A running context with no failure and no event callback, its
	 * visit the turn's first to produce events (no record yet): its
	 * events join the ready list now, in the order the delivery after
	 * the section would give them (nothing is appended before them
	 * there), and nothing of the context is left for after the section:
	 * no record, so no reference (the section's end is our last access).
	 * A stop that came meanwhile cannot finish before these events are
	 * freed; its report, if put off, comes with the visit its signal
	 * brings (stop_hand_to_pe), as it does when the visit produced no
	 * events. */
	if (running && !fatal && t->nrecs == 0 && (head != NULL || ctx->event_cb == NULL)) {
		if (head != NULL) /* executed first, so first in order */
			pe_splice_ready(pe, head, tail);
		if (polled.head != NULL) {
			/* the list's tail before the splice (NULL: empty) */
			const struct doca_event *old_tail = pe->ready_head != &pe_ready_end ? pe->ready_tail : NULL;

			pe_splice_ready(pe, polled.head, polled.tail);
			/* done[] holds them in order (turn_poll_visit) */
			pe_index_ready(pe, &t->done[polled_at], polled.n, old_tail);
		}
		else if (t->ndone != rest)
			pe_deliver_ready(pe, &t->done[rest], t->ndone - rest);
		return;
	}
	/* Events in hand mean tasks outstanding, so the ctx cannot have
	 * reached IDLE and been destroyed: the reference cannot fail then. */
	if (!ctx_ref_get(ctx)) {
		if (t->ndone != first) {
			doca_log(DOCA_LOG_ERROR, "a context with events in flight was destroyed");
			abort();
		}
		return;
	}
	struct turn_rec *rec = &t->recs[t->nrecs++];

	rec->ctx = ctx;
	rec->head = head;
	rec->tail = tail;
	rec->first = rest;
	rec->count = t->ndone - rest;
	rec->stop = false;
	rec->failed_now = false;
	/* (start: read only with stop) */
	if (__builtin_expect(fatal || run->fatal, 0))
		turn_rec_fatal(rec, run, fatal, stopping);
}

/* First half: inside the read-side section. Only the contexts in the
 * ready set (engine/pe_ready.c), each at most once, in FIFO order. */
static void turn_collect(struct doca_pe *pe, struct turn *t)
{
	uint32_t todo = ready_collect_sc(&pe->ready, TURN_CTXS);

	/* the room looked at after each visit: the first finds the turn empty */
	for (uint32_t i = 0; i < todo;) {
		struct ready_node *n = ready_peek_sc(&pe->ready); /* left there until its visit ends */

		turn_visit(pe, t, caa_container_of(n, struct doca_ctx, ready));
		if (++i == todo || t->nrecs >= TURN_CTXS || t->ndone >= TURN_EVENTS)
			break;
	}
}

static void pe_deliver(struct doca_pe *pe, struct doca_event *ev)
{
	struct doca_ctx *ctx = ev->ctx;

	if (ctx->event_cb != NULL) {
		ev_set_state(ev, EV_CALLBACK);
		hb_acquire(ev); /* the device's writes happen before the callback */
		pe->cb_event = ev;
		ctx->event_cb(event_handle(ev), ctx->user_data);
		pe->cb_event = NULL;
		doca_rcu_read_lock(); /* event_release's rule */
		struct ctx_run *run = ev->run;
		struct pool_chain c = { 0 };
		bool late = DOCA_REVERTED("doomed_after_credit");

		event_release_to(ev, &c); /* unpins the buffers */
		/* The buffers the callback destroyed go with their event: no
		 * longer counted by their memory before its credit is back, so
		 * a stop that finds no event outstanding (IDLE) is followed by
		 * a memory destroy that finds them gone (the pool's release
		 * CAS publishes the counts). */
		for (; !late && pe->cb_ndoomed != 0; pe->cb_ndoomed--)
			buf_destroy_finish(pe->cb_doomed[pe->cb_ndoomed - 1]);
		task_pool_put(&run->pool, &c);
		run_credits_returned(run, 1);
		doca_rcu_read_unlock();
		for (; pe->cb_ndoomed != 0; pe->cb_ndoomed--)
			buf_destroy_finish(pe->cb_doomed[pe->cb_ndoomed - 1]);
		return;
	}
	pe_splice_ready(pe, ev, ev); /* QUEUED until handed out */
}

/* PE turns the calling thread is inside (a callback may progress another PE). */
static DOCA_TLS uint32_t turn_depth;

bool pe_in_turn(void)
{
	return turn_depth != 0;
}

/* What is left of a record after its ready events (pe_turn): its event
 * callbacks, its stop on a fatal completion, the end of its stop; inside
 * turn_depth, since user code runs here (a doca_ctx_stop in a callback
 * is put off, engine/ctx_run.c). */
static __attribute__((noinline)) void turn_rec_finish(struct doca_pe *pe, struct doca_event *const *done,
							const struct turn_rec *rec, bool callbacks)
{
	turn_depth++;
	if (callbacks)
		for (uint32_t i = 0; i < rec->count; i++)
			pe_deliver(pe, done[i]);
	if (rec->stop)
		ctx_stop_on_fatal(rec->ctx, rec->start, rec->failed_now);
	ctx_try_finalize(rec->ctx);
	turn_depth--;
}

uint32_t pe_turn(struct doca_pe *pe)
{
	struct turn t;

	t.nrecs = 0;
	t.ndone = 0;
	EXPLORE_POINT(ATOMIC);
	if (atomic_load_explicit(&pe->home, memory_order_relaxed) != runner_self())
		atomic_store_explicit(&pe->home, runner_self(), memory_order_relaxed);
	doca_rcu_read_lock();
	if (pe->watch_head != NULL) /* (the runner's) */
		pe_watch_turn(pe, TURN_CTXS); /* before the collect: what it signals is visited now */
	turn_collect(pe, &t);
	doca_rcu_read_unlock();

	for (uint32_t r = 0; r < t.nrecs; r++) {
		struct turn_rec *rec = &t.recs[r];
		bool callbacks = rec->count != 0 && rec->ctx->event_cb != NULL;

		if (rec->head != NULL) /* executed first, so first in order */
			pe_splice_ready(pe, rec->head, rec->tail);
		if (rec->count != 0 && !callbacks)
			pe_deliver_ready(pe, &t.done[rec->first], rec->count);
		/* ctx_try_finalize's first look made here, after every callback
		 * run before it: no call for a context that is not stopping */
		if (callbacks || rec->stop || ctx_state(rec->ctx) == DOCA_CTX_STATE_STOPPING)
			turn_rec_finish(pe, &t.done[rec->first], rec, callbacks);
		ctx_ref_put(rec->ctx);
	}
	pe_turn_rearm(pe);
	return t.ndone;
}

/* doca_pe_try_progress's way for every call but a parked owner's: the
 * handle checked and the guard taken inside one read-side section
 * (pe_lookup_lock says why). Out of line: the owner's way (below) keeps
 * fewer values across it. @p sectioned false only for the explorer's
 * planted bug (pe_try_progress). */
static __attribute__((noinline)) doca_error_t pe_progress_locked(struct doca_pe *ph, uint32_t *events,
								  bool sectioned)
{
	if (events != NULL)
		*events = 0;
	if (sectioned)
		pe_lookup_lock();
	struct doca_pe *pe = pe_of(ph);

	if (pe == NULL || events == NULL) {
		if (sectioned)
			pe_lookup_unlock();
		return pe == NULL ? HANDLE_REFUSAL(ph, MAGIC_PE) : DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx_in_state_callback()) {
		/* a state callback runs inside doca_ctx_start or doca_ctx_stop
		 * (or a turn): a turn in it would run other callbacks inside it */
		if (sectioned)
			pe_lookup_unlock();
#ifndef NDEBUG
		doca_log(DOCA_LOG_WARN, "doca_pe_progress: refused inside a state callback");
#endif
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (pe_worker_elsewhere(pe)) {
		if (sectioned)
			pe_lookup_unlock();
#ifndef NDEBUG
		doca_log(DOCA_LOG_WARN, "doca_pe_progress: refused, a worker thread runs this PE");
#endif
		return pe_refusal(ph, pe, DOCA_ERROR_BAD_STATE);
	}
	enum runner_entry entry = runner_enter(&pe->runner);
	bool stale = entry != RUNNER_BUSY && !pe_entered_current(ph, pe, entry);

	if (sectioned)
		pe_lookup_unlock();
	if (stale)
		return HANDLE_REFUSAL(ph, MAGIC_PE); /* destroyed while we entered */
	switch (entry) {
	case RUNNER_ENTERED:
		break;
	case RUNNER_NESTED:
#ifndef NDEBUG
		doca_log(DOCA_LOG_WARN, "doca_pe_progress: refused inside one of the PE's callbacks");
#endif
		return DOCA_ERROR_NOT_PERMITTED;
	default:
#ifndef NDEBUG
		doca_log(DOCA_LOG_WARN, "doca_pe_progress: refused, another thread runs this PE");
#endif
		return pe_refusal(ph, pe, DOCA_ERROR_IN_USE);
	}
	*events = pe_turn(pe);
	runner_exit_park(&pe->runner); /* this thread's next call takes it back cheaply */
	return DOCA_SUCCESS;
}

/* The owner's way: a thread in no parked section (depth 0: not nested in
 * one of ours, its entry the list's first) that enters its own parked
 * guard by runner_unpark needs no read-side section, by pe_get's argument
 * (engine/pe.c): pe_of found h current before the owner word was loaded
 * as the caller's parked word W, W is written only by the caller parking,
 * and a destroy that held the guard since would have replaced it; so h
 * stays current until we leave, and before the unpark the call reads
 * only the handle head and the guard's words (atomics never zeroed).
 * The turn runs inside, as after runner_enter's unpark: its callbacks run
 * on this thread at depth 1, so their entries of this guard are NESTED
 * (runner_in_parked finds ours) and never leave or park it, and a revoker
 * finds us in the list; the owner word is W until we leave, which
 * runner_exit_unparked_at uses (runner_exit_park read it again). Every
 * other case (no record, a nested call, a state callback, a handle not
 * current, a word not ours, a revocation under way, a worker's PE) takes
 * the sectioned way, which looks everything up again: a worker's claim
 * found after the entry leaves the guard first, as the getters do. */
static inline __attribute__((always_inline)) doca_error_t pe_try_progress(struct doca_pe *ph, uint32_t *events)
{
	struct runner_thread *t = runner_me;
	struct doca_pe *pe = pe_of(ph);
	/* the explorer's planted bug: any entry outside a section */
	bool sectioned = !DOCA_REVERTED("progress_any_entry_outside_section");

	if (pe == NULL || events == NULL || t == NULL || runner_nested(t) || ctx_in_state_callback())
		return pe_progress_locked(ph, events, sectioned);
	EXPLORE_POINT(GUARD);
	const void *cur = atomic_load_explicit(&pe->runner.owner, memory_order_relaxed);

	if (!runner_parked_by(cur, t) || !runner_unpark_at(&pe->runner, cur, t, 0, false, false))
		return pe_progress_locked(ph, events, sectioned);
	EXPLORE_POINT(ATOMIC);
	/* acquire: as pe_worker_elsewhere's */
	if (!ATOMIC_IS_ZERO(&pe->has_worker, memory_order_acquire)) {
		runner_exit_unparked_at(&pe->runner, cur, t, 0);
		return pe_progress_locked(ph, events, sectioned);
	}
	*events = pe_turn(pe);
	runner_exit_unparked_at(&pe->runner, cur, t, 0);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_try_progress(struct doca_pe *ph, uint32_t *events)
{
	return pe_try_progress(ph, events);
}

/* The same, inline: no call through the PLT to the exported symbol. */
uint32_t doca_pe_progress(struct doca_pe *pe)
{
	uint32_t n;

	(void)pe_try_progress(pe, &n);
	return n;
}
