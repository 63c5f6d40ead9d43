/**
 * @file doca_task.h
 * @brief Tasks: submitted asynchronously from any thread; each accepted task
 *        completes with exactly one event on the context's progress engine.
 */
#ifndef DOCA_TASK_H
#define DOCA_TASK_H

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief What to do. The descriptor is copied: it may be reused at once. */
struct doca_task_desc {
	enum doca_task_type type;  /**< DOCA_TASK_COPY. */
	struct doca_buf *src;      /**< Source; its memory needs DOCA_ACCESS_FLAG_READ. */
	struct doca_buf *dst;      /**< Destination; its memory needs DOCA_ACCESS_FLAG_WRITE. */
	union doca_data user_data; /**< Returned by doca_event_get_user_data. */
	uint32_t flags;            /**< OR of enum doca_task_flag. */
};

/**
 * @brief Submit one task. Never blocks, never executes the copy itself.
 *
 * Checks, in this order: NULL or wrong-type ctx/desc/buffers →
 * DOCA_ERROR_INVALID_VALUE; context not RUNNING → DOCA_ERROR_BAD_STATE;
 * unknown type or flag, zero-length source or destination, a buffer whose
 * memory belongs to another context → DOCA_ERROR_INVALID_VALUE; source and
 * destination both remote memories (doca_mem_import) → DOCA_ERROR_NOT_SUPPORTED;
 * source memory without READ or destination memory without WRITE (for a remote
 * memory: the access its exporter granted) → DOCA_ERROR_NOT_PERMITTED; dst shorter
 * than src → DOCA_ERROR_INVALID_VALUE (unless DOCA_TASK_FLAG_ALLOW_PARTIAL);
 * task pool empty (too many tasks in flight or events not freed) →
 * DOCA_ERROR_AGAIN; the first use of a chunk of 32 event slots, or a
 * thread's first submit into a run from a thread other than the PE's (its
 * ring, below), could not allocate it → DOCA_ERROR_NO_MEMORY (the credits
 * are free: a retry may succeed once memory is back, so a loop that
 * retries only on AGAIN must treat this as an error); the context stopped
 * and destroyed while that first submit made its ring →
 * DOCA_ERROR_BAD_STATE (the handle was current when the call began); a
 * buffer destroyed concurrently → DOCA_ERROR_INVALID_VALUE. A refused
 * task changes nothing and gets no event.
 *
 * Where the task goes: while no turn is running and nothing waits in the
 * context's mailbox, straight to the device's submission queue, from the
 * thread that ran the PE's last doca_pe_progress (its own thread) or, while
 * the PE is armed in event mode (doca_pe_request_notification; not a PE a
 * worker runs), from any thread, so the PE is not woken only to post it;
 * otherwise as an entry of a ring, for the PE's next turn: the caller's
 * own ring while it holds one of thread slots 0-15 alone, else the
 * context's one multi-producer (MP) ring, announced in the caller's
 * mailbox shard (a submit that finds the PE armed feeds it the same way,
 * or wakes the PE unless a completion it already owes will). While the
 * PE's turns watch the caller's own ring (from a turn that takes entries
 * from it with the PE not armed, until 256 looks in a row find it empty
 * or the PE arms), the entry is not announced: a turn's look finds it,
 * at most ceil(W / 64) turns after it is written, W the number of
 * contexts of that PE whose rings are watched (a turn looks at 64 of
 * them, round robin). A thread's first such submit into a run makes its
 * ring (the allocator, outside the call's RCU read-side section). Either
 * way one thread's tasks reach the device in submission order.
 *
 * Progress: the call never waits for another thread, whatever the others
 * do (a preempted one included), but for one case: a credit whose count of
 * credits out (from another thread than the PE's, a bound on it) reaches
 * a chunk of 32 event slots not made yet in the run makes the chunk first
 * (the allocator and a mutex); a thread's first submit into a run that needs a
 * ring calls the allocator too. Otherwise the credit is a
 * compare-and-swap retried only when another submitter took a credit
 * meanwhile, the hand-over a few stores into the ring (on the MP ring
 * after one fetch-and-add) and one announce. What a submitter preempted
 * inside this call can delay: doca_ctx_stop on the context (it waits for
 * every submitter that saw RUNNING), and, if preempted on the MP ring
 * between its claim of a position and its entry's last store, every later
 * task of the MP ring, of all threads, until it runs again (the PE takes
 * MP entries in position order; meanwhile the context is visited on every
 * turn of its PE): delayed, never lost. A thread's tasks go to the MP
 * ring when 16 or more other submitting threads held slots when it first
 * submitted, when it submits from one of its thread-exit destructors
 * (after the library gave its slot back), or while its own ring is full
 * (more tasks in flight than the smaller of max_tasks and 1024). The
 * direct post above holds the PE for at most 32 descriptors and a
 * doorbell; calls on the PE from other threads wait for it (doca_pe.h).
 *
 * Source and destination may overlap (even be the same buffer): the result is
 * that of memmove on the software device and for a copy between two local
 * memories on fab0. On verbs devices overlapping copies are undefined (RDMA
 * WRITE ordering), so portable code keeps them apart.
 *
 * @param ctx The context to run the task.
 * @param desc The task (copied; reusable at once).
 * @return DOCA_SUCCESS (the task will get exactly one event) or an error above.
 *
 * Thread safety: any thread, concurrently, lock-free but for a chunk's
 *         first use (see Progress).
 */
doca_error_t doca_task_submit(struct doca_ctx *ctx, const struct doca_task_desc *desc);

/**
 * @brief Submit a burst of tasks in one call: one RCU read-side section (left
 *        only to make the thread's ring, on its first submit into a run,
 *        after a wake-up for the tasks written before) and at most one
 *        wake-up of the PE for the tasks after that. Tasks are taken in
 *        order and the first refused one ends the burst.
 * @param ctx The context.
 * @param descs @p n descriptors (copied; reusable at once).
 * @param n Number of descriptors; 0 is allowed.
 * @param[out] accepted Set to how many of the first descriptors were accepted
 *        (each gets exactly one event); 0 on a NULL argument.
 * @return DOCA_SUCCESS when all @p n were accepted; otherwise the error
 *         doca_task_submit would return for descs[*accepted] (so
 *         DOCA_ERROR_AGAIN when the task pool runs dry in the middle, with
 *         the tasks before it accepted); DOCA_ERROR_INVALID_VALUE for a NULL
 *         ctx or accepted, or NULL descs with n > 0.
 *
 * Thread safety: any thread, concurrently, lock-free but for a chunk's
 *         first use (see doca_task_submit's Progress).
 */
doca_error_t doca_task_submit_batch(struct doca_ctx *ctx, const struct doca_task_desc *descs, uint32_t n,
				    uint32_t *accepted);

/**
 * @brief doca_task_submit that, when the task pool is empty, sleeps until a
 *        credit returns, the timeout passes or the context leaves RUNNING —
 *        back-pressure without spinning. The sleep is a futex wait; a
 *        return of credits wakes one sleeper, a stop wakes all.
 *
 * Checks, in this order: NULL @p desc, NULL or wrong-type @p ctx →
 * DOCA_ERROR_INVALID_VALUE; the caller runs the context's progress engine
 * (inside one of its callbacks, on its worker or within doca_pe_progress)
 * while the context is RUNNING → DOCA_ERROR_NOT_PERMITTED at once, whether
 * or not a credit is free (it could wait for ever: only that thread returns
 * credits); then every check of doca_task_submit, in its order, except that
 * an empty pool makes the call wait instead of returning DOCA_ERROR_AGAIN.
 * A context destroyed before the call has looked at it (its
 * doca_task_submit, or the look that follows an empty pool) is a stale
 * handle: DOCA_ERROR_INVALID_VALUE, with a log line, counted by
 * doca_stale_handle_count.
 *
 * Do not call it from the only thread that progresses the PE in polling or
 * event mode outside a callback either: nothing would return a credit, and
 * the call returns DOCA_ERROR_TIME_OUT (or never, with no timeout).
 * @param ctx The context.
 * @param desc The task (copied; reusable at once).
 * @param timeout_ms The longest wait in milliseconds; 0: do not wait for
 *        a credit (DOCA_ERROR_TIME_OUT at once if none is free); any
 *        negative value: no limit. The first calls on a context that find
 *        the pool empty (0 included), until one of them is done with it,
 *        also wait once for an RCU grace period, which marks the context as
 *        waited on (engine/ctx_credits.c).
 * @return DOCA_SUCCESS (the task will get exactly one event);
 *         DOCA_ERROR_TIME_OUT when the pool stayed empty for @p timeout_ms
 *         (the task was not accepted); DOCA_ERROR_BAD_STATE when the context
 *         is not RUNNING, or leaves RUNNING while the call waits (the call
 *         returns promptly then; also when a new doca_ctx_start followed
 *         before the sleeper ran again: a waiting task never lands in a
 *         later run; and when the context was destroyed too before the
 *         sleeper ran again: the handle was current when the call began,
 *         so this is not a stale handle and is not counted; once woken so,
 *         the call checks the run before the task's buffers);
 *         DOCA_ERROR_NOT_PERMITTED as above;
 *         otherwise doca_task_submit's error. A refused task changes
 *         nothing and gets no event.
 *
 * Thread safety: any thread that does not run the context's PE,
 *         concurrently with other submitters; blocks (the only submit that
 *         does), and never spins.
 */
doca_error_t doca_task_submit_wait(struct doca_ctx *ctx, const struct doca_task_desc *desc, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TASK_H */
