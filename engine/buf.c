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
	buf->task_ok = len == 0 || mem->remote ? 0u
						: ((mem->access & DOCA_ACCESS_FLAG_READ) != 0 ? BUF_TASK_SRC : 0u) |
							  ((mem->access & DOCA_ACCESS_FLAG_WRITE) != 0 ? BUF_TASK_DST : 0u);
	head_store(&buf->epoch, g_fork_epoch);
	head_store(&buf->magic, MAGIC_BUF);
	live_created(LIVE_BUF, 0);
	*out = handle_of(buf);
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
 * (and nothing changed) otherwise. With @p pe (the buffer's context's PE,
 * see buf_quiesce_owner): true with us counted in its guard's revoke and
 * its parked owner's brief sections waited out; the caller kills the
 * handle, then withdraws (runner_quiesce_end). One heavy fence for both
 * pairs: DEAD before the guarded pins are read, our count before the
 * owner's list is. */
static bool buf_close(struct doca_buf *buf, struct doca_pe *pe)
{
	if (buf_guarded_outstanding(buf) != 0)
		return false;
	if (pe != NULL)
		runner_revoke_announce(&pe->runner); /* no runner_unpark succeeds from here on */
	if (buf_users_close(buf, 0)) {
		asym_fence_heavy(); /* DEAD and our count are visible before we read the guarded pins, the list */
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

	/* the owner's submit loads ctx outside any read-side section
	 * (engine/task.c): reset atomically, kept out of the zeroing */
	atomic_store_explicit(&buf->ctx, NULL, memory_order_relaxed);
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
 * (BUF_CELL_KEEP) to be its own, whose PE's guard it holds; the grace
 * period before the cell's zeroing does not wait for it.
 *
 * One heavy fence per destroy, buf_close's, serves both this and the
 * guarded pins. The PE is read before the close, outside g_config_lock:
 * one found stays the context's until the context's destroy, which the
 * buffer's memory holds off until the finish, and its guard's words are
 * atomics that are never zeroed (runner_reset). With it, buf_close
 * counts us in its revoke (C), runs the heavy fence (F), waits until the
 * owner found parked is in no brief section of it (runner_quiesce_wait),
 * and reads the guarded pins; the caller kills the handle (K) and then
 * withdraws the count (W, runner_quiesce_end); the finish comes after.
 * A brief section S pushed its entry, ran the light half and loaded revoke
 * (acquire) 0 (runner_unpark). Either that load read a value before C
 * in revoke's modification order: then by the fence pair (S: push, light,
 * load revoke; we: C, F, load the list) our loads after F see S's push
 * or a later word of its list, and the wait ends only after S's pop,
 * which we acquire: all of S happens before our guarded-pins read (a pin
 * of S that stood is counted there: IN_USE, nothing killed) and before
 * the finish. Or it read C or later: then 0 only from W on (every write
 * of revoke is a read-modify-write, so W heads the release sequence S
 * read), S's load synchronizes with W, the kill happens before S's
 * handle check, and S takes the sectioned way, which the grace period
 * waits for. Between C and W no runner_unpark succeeds. So C goes before
 * F (the first case's pair) and W after K (the second's; the explorer's
 * owner_submit_destroy undoes it: buf_destroy_withdraw_before_kill). The
 * guarded pins' pair (see top) is unchanged: DEAD is stored before F,
 * the count read after it; the wait in between changes neither. The wait
 * runs inside our read-side section and perhaps inside a callback of the
 * PE's own progress (a non-brief section of ours, not waited for): it
 * waits for brief holds only, which never wait (actors/runner.h), and
 * doca_buf_destroy is never called inside one.
 *
 * No PE found (NULL): the context was not connected when we looked. After
 * the kill, buf_quiesce_owner looks again under g_config_lock: NULL then
 * comes before a later connect, and so before any start and owner's
 * submit, which then see the kill; a PE found now (a connect raced our
 * destroy) is quiesced the whole way, runner_quiesce_begin/_end, the same
 * argument with a fence of its own. */
static void buf_quiesce_owner(const struct doca_buf *buf)
{
	if (DOCA_REVERTED("buf_destroy_no_quiesce"))
		return;
	pthread_mutex_lock(&g_config_lock);
	struct doca_pe *pe = ctx_pe(buf->mem->ctx);

	pthread_mutex_unlock(&g_config_lock);
	if (pe == NULL)
		return;
	runner_quiesce_begin(&pe->runner);
	runner_quiesce_end(&pe->runner);
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
	bool withdraw_early = pe != NULL && DOCA_REVERTED("buf_destroy_withdraw_before_kill");

	/* Of two destroys only one closes the count; the other finds it
	 * closed and waits for the outcome: the winner kills the handle
	 * (INVALID_VALUE, as once it is dead) or, in use after all, reopens
	 * the count (look again). Both follow the close within a bounded
	 * number of steps of the winner's. */
	for (unsigned spins = 0;; spins++) {
		if (buf_close(buf, pe)) {
			if (withdraw_early) {
				runner_quiesce_end(&pe->runner);
				EXPLORE_POINT(ATOMIC); /* (the kill's stores have no hook point of their own) */
			}
			handle_kill(buf);
			if (pe != NULL && !withdraw_early)
				runner_quiesce_end(&pe->runner); /* after the kill (buf_quiesce_owner) */
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
