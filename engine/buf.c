/*
 * engine/buf.c — buffers: windows into a memory. A buffer counts the
 * unfreed events of tasks that name it; its memory counts its buffers.
 *
 * Two counts, so that the owner fast path pays no atomic read-modify-write
 * (issue 12). `users` (with the DEAD bit) counts the pins ever taken by
 * tasks submitted from any thread: an atomic increment that backs off on
 * DEAD; `users_left` counts those dropped, on a line of its own, so a
 * task submitted on one CPU and freed by the PE on another moves neither
 * count's line between them. A destroy closes users with a CAS from
 * users_left (read first) + the pins it may hold to that | DEAD
 * (buf_users_close: as users_left only grows and never passes users, a
 * success means that many pins were outstanding). 64-bit counts: they
 * never wrap. `guarded_pins`
 * counts the pins of tasks submitted under the runner guard of the
 * buffer's PE (the buffer's memory's context's PE), and is written only by
 * that guard's holder, with a load and a store; those tasks are released
 * under the same guard. Why a destroy on another thread never frees a
 * buffer a guarded task names: the pinner stores its count, runs the light
 * half of an asymmetric fence (actors/asym_fence.h), then loads users and
 * backs off on DEAD; the destroy stores DEAD (its CAS), runs the heavy
 * half, then loads guarded_pins and reopens (clears DEAD) if it is not 0.
 * Of the two, one sees the other's store. A destroy that reopens was
 * racing a use of the buffer it destroys: a submission naming the buffer
 * in that moment may be refused (INVALID_VALUE) although the destroy ends
 * refused (IN_USE). A task's two pins share one light fence
 * (engine/task.c, task_pin): both counts are stored, then the fence, then
 * both loads of users; for each buffer that is still its store, the
 * fence, its load (the other buffer's store in between is another
 * location), so the pair holds per buffer, and the looks run in the
 * order of two whole pins: source, then destination. A pin that may not
 * stand is taken back with a plain store of the count less one (it was
 * never a task's: buf_pin_guarded_undo); so a destination counted beside
 * a DEAD source is counted for a moment, as the source of a DEAD
 * destination always was, and a destroy of it in that moment ends
 * refused (IN_USE) beside the refused submission, as just said. Inside an event callback the guard's holder is the
 * caller, so there the count is read as it is. The pin and unpin are
 * inline (engine/buf_pin.h): they run twice per task.
 *
 * A freer on another thread that cannot take the guard drops the pins at
 * once too, so a destroy right after its doca_event_free succeeds (the
 * event's credit still travels through the mailbox): a pin in users by
 * counting it in users_left, a guarded one by counting it out in `foreign_unpins`,
 * which only such freers write (an atomic increment: they are many). The
 * guarded pins outstanding are guarded_pins - foreign_unpins
 * (buf_guarded_outstanding); the pinner's Dekker pair above is with
 * guarded_pins alone, which a foreign unpin never writes.
 */
#include <sched.h>

#include "actors/asym_fence.h"
#include "actors/explore_revert.h"
#include "engine/buf_pin.h"
#include "engine/cells.h"
#include "engine/engine.h"
#include "engine/refs.h"

/* The memory behind @p h with one more buffer counted on it (the count
 * keeps it from then on), or NULL with *err. The read-side section keeps
 * the cell this memory's from the check to the count: a destroy hands it
 * on only after a grace period, and a count taken on the cell's next
 * memory would give that memory a buffer it never had. */
static struct doca_mem *buf_mem_enter(struct doca_mem *h, size_t offset, size_t len, bool out_ok,
				      doca_error_t *err)
{
	bool section = !DOCA_REVERTED("handle_lookup_outside_section"), closed = false;

	if (section)
		doca_rcu_read_lock();
	struct doca_mem *mem = mem_of(h);

	if (mem == NULL)
		*err = HANDLE_REFUSAL(h, MAGIC_MEM);
	else if (!out_ok || offset > mem->len || len > mem->len - offset)
		*err = DOCA_ERROR_INVALID_VALUE;
	else if (!users_enter(&mem->bufs))
		closed = true; /* by its destroy, which may not have killed the handle yet */
	else
		*err = DOCA_SUCCESS;
	if (section)
		doca_rcu_read_unlock();
	/* used after its destroy: refused as a stale handle, logged and counted */
	if (closed)
		*err = DOCA_REVERTED("buf_create_refusal_uncounted") ? DOCA_ERROR_INVALID_VALUE : stale_refusal();
	return *err == DOCA_SUCCESS ? mem : NULL;
}

doca_error_t doca_buf_create(struct doca_mem *h, size_t offset, size_t len, struct doca_buf **out)
{
	doca_error_t err;
	struct doca_mem *mem = buf_mem_enter(h, offset, len, out != NULL, &err);

	if (mem == NULL)
		return err;
	struct doca_buf *buf = cell_get(CELL_BUF, sizeof(*buf));

	if (buf == NULL) {
		users_leave(&mem->bufs);
		return DOCA_ERROR_NO_MEMORY;
	}
	buf->mem = mem;
	/* A remote memory's addr is NULL: its buffers' data is the offset. */
	buf->data = (uint8_t *)((uintptr_t)mem->addr + offset);
	buf->len = len;
	atomic_store_explicit(&buf->ctx, mem->ctx, memory_order_relaxed); /* published by the head's store */
	buf->access = mem->access;
	buf->remote = mem->remote;
	/* (made from fields fixed from then on; a buffer that is no task's
	 * source, or destination, has NULL there and takes the full checks,
	 * which give the answer) */
	bool task_ok = len != 0 && !mem->remote;

	atomic_store_explicit(&buf->src_ctx, task_ok && (mem->access & DOCA_ACCESS_FLAG_READ) != 0 ? mem->ctx : NULL,
			      memory_order_relaxed); /* (as ctx) */
	atomic_store_explicit(&buf->dst_ctx, task_ok && (mem->access & DOCA_ACCESS_FLAG_WRITE) != 0 ? mem->ctx : NULL,
			      memory_order_relaxed);
	head_store(&buf->epoch, g_fork_epoch);
	head_store(&buf->magic, MAGIC_BUF);
	/* the word, plain until now (the cell's first, or its last kill's:
	 * no buffer check passes with it), folded last: the handle is
	 * current from here on (engine/handle.h, "A buffer's word") */
	struct doca_buf *handle = handle_of(buf);

	atomic_store_explicit(&buf->handle, buf_word_made(handle, g_buf_fold), memory_order_relaxed);
	live_created(LIVE_BUF, 0);
	*out = handle;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data(const struct doca_buf *h, void **data)
{
	/* a remote memory's buffers have no local address: another process's memory */
	HANDLE_READ(buf_of, MAGIC_BUF, h, data, obj->mem->remote ? DOCA_ERROR_NOT_SUPPORTED : DOCA_SUCCESS,
		    obj->data);
}

doca_error_t doca_buf_get_len(const struct doca_buf *h, size_t *len)
{
	HANDLE_READ(buf_of, MAGIC_BUF, h, len, DOCA_SUCCESS, obj->len);
}

/* Close the buffer to new users, if no task of any thread names it; false
 * (and nothing changed) otherwise. @p pe: NULL, or (the reverted first
 * version, buf_destroy_counts_revoke) the buffer's context's PE: then true
 * with us counted in its guard's revoke and its parked owner's brief
 * sections waited out; the caller kills the handle, then withdraws
 * (runner_quiesce_end). The heavy fence: DEAD before the guarded pins are
 * read (and, reverted, our count before the owner's list is). */
static bool buf_close(struct doca_buf *buf, struct doca_pe *pe)
{
	if (buf_guarded_outstanding(buf) != 0)
		return false;
	if (pe != NULL)
		runner_revoke_announce(&pe->runner); /* no runner_unpark succeeds from here on */
	if (buf_users_close(buf, 0)) {
		asym_fence_heavy(); /* DEAD (and our count) visible before we read the guarded pins (the list) */
		if (pe != NULL)
			runner_quiesce_wait(&pe->runner);
		EXPLORE_POINT(ATOMIC);
		if (buf_guarded_outstanding(buf) == 0)
			return true;
		EXPLORE_POINT(ATOMIC);
		atomic_fetch_and_explicit(&buf->users, ~BUF_DEAD, memory_order_relaxed); /* reopen */
	}
	if (pe != NULL)
		runner_quiesce_end(&pe->runner); /* nothing killed: the owner's way is as before */
	return false;
}

static void buf_free_rcu(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	struct doca_buf *buf = caa_container_of(head, struct doca_buf, rcu);

	/* the owner's submit loads the contexts outside any read-side section
	 * (engine/task.c): reset atomically, kept out of the zeroing */
	atomic_store_explicit(&buf->ctx, NULL, memory_order_relaxed);
	atomic_store_explicit(&buf->src_ctx, NULL, memory_order_relaxed);
	atomic_store_explicit(&buf->dst_ctx, NULL, memory_order_relaxed);
	cell_put_keep(CELL_BUF, buf, sizeof(*buf), BUF_CELL_KEEP);
}

void buf_destroy_finish(struct doca_buf *buf)
{
	hb_acquire(buf);
	hb_release(buf->mem); /* the buffer's uses happen before its memory's destroy */
	users_leave(&buf->mem->bufs);
	doca_call_rcu(&buf->rcu, buf_free_rcu);
}

/* Inside the callback of an event naming buf, with no other task using it:
 * close its count over that event's pins, and let the PE finish the
 * destroy after releasing the event (the pins then drop to none). False,
 * nothing changed, otherwise. */
static bool buf_destroy_in_callback(struct doca_buf *buf)
{
	struct doca_pe *pe = ctx_pe(buf->mem->ctx);

	if (pe == NULL || !runner_is_self(&pe->runner) || pe->cb_event == NULL)
		return false;
	const struct doca_event *ev = pe->cb_event;
	uint32_t pins = (uint32_t)(ev->src == buf) + (uint32_t)(ev->dst == buf);
	/* the event's pins are in one count, none in the other; ours to read:
	 * we hold the guard */
	uint32_t users = ev->pins == EV_PINS_GUARDED ? 0 : pins;

	if (pins == 0 || buf_guarded_outstanding(buf) != pins - users)
		return false;
	/* A submit that races us finds DEAD and backs off; its section ends
	 * before the grace period that frees. */
	if (!buf_users_close(buf, users))
		return false;
	pe->cb_doomed[pe->cb_ndoomed++] = buf;
	return true;
}

/* Why a destroy waits out the brief sections of its context's PE that
 * the PE's parked owner entered by runner_unpark: the owner's
 * doca_task_submit checks a buffer's handle in such a section without a
 * read-side one (engine/task.c), after finding the buffer's context
 * (its role's copy, BUF_CELL_KEEP) to be its own, whose PE's guard it
 * holds; the grace period before the cell's zeroing does not wait for it.
 *
 * The wait comes after the kill, with a heavy fence of its own (F2),
 * and the destroy does not count itself in the guard's revoke
 * (buf_quiesce_after_kill). A brief section S pushed its entry, ran the
 * light half, then checks the handle. The Dekker pair with S's entry as
 * the flag and the kill (K) as ours: either S's light half came before
 * F2, and our loads after F2 find the owner word W S entered from (while
 * S's thread is inside a section entered by runner_unpark only its exit
 * changes W: a revoker finds the entry and leaves it) and S's entry, and
 * the wait ends only after S's pop, which we acquire: all of S happens
 * before the finish (its pin, if it stood, was seen by buf_close's
 * guarded-pins read, or is DEAD's back-off: the pins' own pair, top);
 * or F2 came first, and S's handle check after its light half sees K
 * and refuses the buffer. So no section that did not see K outlives
 * the wait, and the finish's grace period covers every other user.
 * The guarded pins' pair (top) is buf_close's, DEAD before its fence,
 * the count read after it. The PE is read before the close, outside
 * g_config_lock: one found stays the context's until the context's
 * destroy, which the buffer's memory holds off until the finish, and its
 * guard's words are atomics that are never zeroed (runner_reset). The
 * wait runs inside our read-side section and perhaps inside a callback of
 * the PE's own progress (a non-brief section of ours, not waited for):
 * it waits for brief holds only, which never wait (actors/runner.h), and
 * doca_buf_destroy is never called inside one.
 *
 * Why no count in revoke, as a context's stop made (engine/ctx_run.c):
 * the count would keep S from starting between the wait and the kill
 * (the first version: count, F, wait, guarded pins, K, withdraw; one
 * heavy fence for both pairs), but while it stands every runner_unpark of
 * the owner's fails, and its slow way enters by a CAS and leaves the
 * guard free (a section already under way leaves the count's mark on
 * the word, which sends the next entry the same way): a freer's brief hold of the free guard then sends an owner's
 * doca_event_free through the mailbox, its credit back only at the
 * owner's next turn, after the free returned, and a submit in between is
 * refused with AGAIN while fewer than max_tasks credits are out: a
 * destroy of a buffer no task names broke the exact AGAIN of its
 * context (stress/explore quiesce_again_buf; DOCA_EXPLORE_REVERT=
 * buf_destroy_counts_revoke brings that version back). The cost is the
 * second heavy fence per destroy of a connected context's buffer.
 *
 * No PE found (NULL): the context was not connected when we looked. After
 * the kill, buf_quiesce_owner looks again under g_config_lock: NULL then
 * comes before a later connect, and so before any start and owner's
 * submit, which then see the kill; a PE found now (a connect raced our
 * destroy) is waited out the same way, after the kill. */
static void buf_quiesce_after_kill(struct doca_pe *pe)
{
	runner_quiesce_fenced(&pe->runner); /* the kill is the access it orders */
}

/* The destroy's wait after buf_close (@p counted: the first version's
 * withdrawal; it waited in buf_close). */
static void buf_quiesce_done(struct doca_pe *pe, bool counted)
{
	if (counted)
		runner_quiesce_end(&pe->runner);
	else
		buf_quiesce_after_kill(pe);
}

static void buf_quiesce_owner(const struct doca_buf *buf)
{
	if (DOCA_REVERTED("buf_destroy_no_quiesce"))
		return;
	pthread_mutex_lock(&g_config_lock);
	struct doca_pe *pe = ctx_pe(buf->mem->ctx);

	pthread_mutex_unlock(&g_config_lock);
	if (pe != NULL)
		buf_quiesce_after_kill(pe);
}

/* The body of doca_buf_destroy, inside a read-side section: a concurrent
 * destroy that wins hands the cell on (zeroed) only after a grace period,
 * so buf's links stay readable while we look. @p pe: the buffer's
 * context's PE, or NULL (buf_quiesce_owner). *finish: the buffer is
 * killed, and its caller finishes the destroy (buf_quiesce_owner if pe is
 * NULL, then buf_destroy_finish) after leaving the section. */
static doca_error_t buf_destroy_checked(struct doca_buf *h, struct doca_buf *buf, struct doca_pe *pe,
					bool *finish)
{
	/* the first version (buf_quiesce_owner, "Why no count") */
	bool counted = pe != NULL && DOCA_REVERTED("buf_destroy_counts_revoke");
	/* the wait before the kill: a section may start in between, see the
	 * handle live and outlive the finish (counted: the count withdrawn
	 * before the kill) */
	bool early = pe != NULL && DOCA_REVERTED("buf_destroy_withdraw_before_kill");

	/* Of two destroys only one closes the count; the other finds it
	 * closed and waits for the outcome: the winner kills the handle
	 * (INVALID_VALUE, as once it is dead) or, in use after all, reopens
	 * the count (look again). Both follow the close within a bounded
	 * number of steps of the winner's. */
	for (unsigned spins = 0;; spins++) {
		if (buf_close(buf, counted ? pe : NULL)) {
			if (early) {
				buf_quiesce_done(pe, counted);
				EXPLORE_POINT(ATOMIC); /* (the kill's stores have no hook point of their own) */
			}
			handle_kill(buf);
			if (pe != NULL && !early)
				buf_quiesce_done(pe, counted); /* after the kill (buf_quiesce_owner) */
			*finish = true;
			return DOCA_SUCCESS;
		}
		if (buf_destroy_in_callback(buf)) {
			handle_kill(buf);
			return DOCA_SUCCESS;
		}
		if (!buf_users_closed(buf))
			return DOCA_ERROR_IN_USE;
		EXPLORE_POINT(ATOMIC);
		if (buf_of(h) != buf) /* a concurrent destroy won: destroyed twice */
			return DOCA_ERROR_INVALID_VALUE; /* refused as stale by our caller */
		EXPLORE_YIELD();
		if (spins % 64u == 63u)
			sched_yield(); /* the winner may have been preempted */
	}
}

doca_error_t doca_buf_destroy(struct doca_buf *h)
{
	doca_error_t err;
	bool finish = false;

	doca_rcu_read_lock();
	struct doca_buf *buf = buf_of(h);
	/* (read outside g_config_lock: see buf_quiesce_owner) */
	struct doca_pe *pe =
		buf == NULL || DOCA_REVERTED("buf_destroy_no_quiesce") ? NULL : ctx_pe(buf->mem->ctx);

	err = buf == NULL ? DOCA_ERROR_INVALID_VALUE : buf_destroy_checked(h, buf, pe, &finish);
	doca_rcu_read_unlock();
	if (finish) {
		/* killed by us: ours to finish, the cell held until then. Inside
		 * an event callback (buf_destroy_in_callback) the turn kills and
		 * finishes under the guard, which no brief section shares. */
		if (pe == NULL)
			buf_quiesce_owner(buf);
		buf_destroy_finish(buf);
	}
	/* not a buffer's handle, or (from buf_destroy_checked) one another
	 * destroy killed while we looked: a stale one is logged and counted */
	if (err == DOCA_ERROR_INVALID_VALUE && (buf == NULL || !DOCA_REVERTED("buf_destroy_refusal_uncounted")))
		return HANDLE_REFUSAL(h, MAGIC_BUF);
	if (err == DOCA_SUCCESS)
		live_destroyed(LIVE_BUF, 0);
	return err;
}
