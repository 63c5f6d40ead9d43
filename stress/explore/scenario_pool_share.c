/*
 * stress/explore/scenario_pool_share.c — the task pool turning shared
 * under an owner that takes credits with plain stores (pool_share).
 *
 * Since ring21 step 2 the pool's credits are two counters (taken,
 * returned) and its slots the runner guard's holder's (engine/task_pool.c):
 * only takes of credits look at the pool's mode, returns never. The
 * owner thread runs the PE (its progress parks the runner guard) and
 * submits and frees its tasks, so every take of credits is a plain store
 * of taken. A foreign thread submits meanwhile (its task travels in a
 * ring, its credit alone taken): its first take finds the guard parked
 * and turns the pool shared, which must wait for any plain take under
 * way (the busy flag, and the owner's brief sections: the owner's single
 * submit stores no busy). A take lost hands one credit to two tasks
 * (more than max_tasks out: the PE's feed then finds no slot, "a credit
 * taken found no slot", or a slot's second event) or loses one (the stop
 * never ends). At the end, with every event freed, exactly max_tasks
 * submits are accepted and the next is refused with DOCA_ERROR_AGAIN:
 * the count is exact.
 *
 * pool_share_bulk: the owner gets its events with doca_pe_get_events and
 * frees them with doca_event_free_bulk (engine/event.c, route_end_owner:
 * a return, no look at the mode); its submits race the switch as above.
 *
 * pool_share_submit: the switch racing the owner's single submits alone.
 * The owner submits, progresses and frees WARM_TASKS tasks first (every
 * return done before the foreign thread starts), so its next submits pop
 * the pool's stack on doca_task_submit's owner way (engine/task.c
 * task_one_owner), which takes its credit without the busy flag; it frees
 * nothing until the foreign submit is in, so only its takes race the
 * switch. The counts fill the pool exactly: a lost take hands a credit to
 * two tasks or loses one (the foreign thread then spins on AGAIN).
 *
 * pool_share_burst: pool_share_submit with the owner's submits as one
 * doca_task_submit_batch longer than the pool's stack: BURST_WARM task
 * freed first, so the burst's fill pops the one slot on the stack,
 * counted by the stack's depth (engine/task_pool.c, "The stack's
 * depth"), then takes a fresh one, while the foreign thread's first take
 * turns the pool shared (or the burst goes the CAS way after it). The
 * pool holds the owner's burst and the foreign task exactly.
 *
 * pool_share_chunk: the switch racing the owner's single submit that
 * needs a chunk. The owner takes the first chunk's POOL_CHUNK credits
 * from fresh slots (left in the inline device's backlog, none freed), so
 * its next submit's credit needs the next chunk: its owner way
 * (task_one_owner, then task_owner_take: credit_take_covered without the
 * busy flag) makes the chunk inside its brief section, looks at the
 * pool's mode once more, and takes its credit plainly, while the foreign
 * thread's first take turns the pool shared (or makes that chunk itself
 * first). The pool holds the owner's POOL_CHUNK + 1 and the foreign one
 * exactly.
 *
 * pool_switch_in_callback (the review of step 2: its revert of the
 * owner's plain store of taken moved after pool_plain_end escaped every
 * scenario above): the owner resubmits from its event callback, inside
 * its turn, where a switcher waits for busy alone (no brief section to
 * wait out, no parked guard to revoke), while the foreign thread's first
 * submit turns the pool shared. The owner's task 0's callback submits
 * task 1, task 1's submits task 2 (each a plain take with the busy flag:
 * engine/task_pool.h credit_plain_take_end); the foreign thread submits
 * task 3. max_tasks 3: the owner holds 2 at most (the called-back event
 * and its resubmission), the foreign thread 1, so every submit is
 * accepted. With DOCA_EXPLORE_REVERT=owner_take_after_plain_end the
 * owner's store after busy's release overwrites the foreign CAS between
 * them: a credit lost, so the credits are no longer exact (returned
 * passes taken: the end's submits find all out, or the stop never ends).
 */
#include "scenario.h"

#include <sched.h>

#define MAX_TASKS 2u
#define OWNER_TASKS 3u   /* tags 0..2 */
#define FOREIGN_TASKS 2u /* tags 3..4 */

static struct world w;
static bool bulk; /* pool_share_bulk */

/* world_progress, or its burst form (pool_share_bulk) */
static unsigned owner_progress(void)
{
	struct doca_event *evs[MAX_TASKS];
	unsigned n;
	uint32_t got;

	if (!bulk)
		return world_progress(&w);
	n = doca_pe_progress(w.pe);
	while ((got = doca_pe_get_events(w.pe, evs, MAX_TASKS)) != 0) {
		for (uint32_t i = 0; i < got; i++)
			world_event(&w, evs[i]);
		doca_event_free_bulk(evs, got);
		n += got;
	}
	return n;
}

/* Submit tag until a credit is free, progressing (owner) or yielding. */
static void submit_retrying(unsigned tag, bool progress)
{
	doca_error_t err;

	while ((err = world_submit(&w, tag)) == DOCA_ERROR_AGAIN)
		if (!progress || owner_progress() == 0)
			sched_yield();
	if (err != DOCA_SUCCESS)
		explore_end(VERDICT_INVARIANT, "result: submit of task %u: %s", tag, doca_error_get_name(err));
}

static void *owner(void *unused)
{
	explore_name("owner");
	(void)owner_progress(); /* this thread runs the PE: its guard is parked */
	for (unsigned tag = 0; tag < OWNER_TASKS; tag++)
		submit_retrying(tag, true);
	while (atomic_load(&w.events_total) < OWNER_TASKS + FOREIGN_TASKS)
		if (owner_progress() == 0)
			sched_yield();
	return NULL;
}

static void *foreign(void *unused)
{
	explore_name("foreign");
	for (unsigned tag = OWNER_TASKS; tag < OWNER_TASKS + FOREIGN_TASKS; tag++)
		submit_retrying(tag, false);
	return NULL;
}

#define WARM_TASKS 2u   /* pool_share_submit: tags 0..1, freed first */
#define SUBMIT_TASKS 2u /* then tags 2..3 from the stack, and one foreign, 4 */

static atomic_bool warm, foreign_done;

#define BURST_WARM 1u /* pool_share_burst: tag 0, freed first; then tags 1..2 in one burst */

/* pool_share_burst's burst: tags @p first to @p first + @p n - 1 (n at
 * most SUBMIT_TASKS), each counted accepted as world_submit counts it. */
static void submit_burst(unsigned first, uint32_t n)
{
	struct doca_task_desc d[SUBMIT_TASKS];
	uint32_t accepted = 0;

	for (uint32_t i = 0; i < n; i++) {
		d[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY, .src = w.src[first + i], .dst = w.dst[first + i],
			.user_data = { .u64 = first + i }
		};
		atomic_fetch_add(&w.accepted[first + i], 1);
	}
	doca_error_t err = doca_task_submit_batch(w.ctx, d, n, &accepted);

	atomic_fetch_add(&w.accepted_total, accepted);
	for (uint32_t i = accepted; i < n; i++)
		atomic_fetch_sub(&w.accepted[first + i], 1);
	if (err != DOCA_SUCCESS || accepted != n)
		explore_end(VERDICT_INVARIANT, "result: a burst of %u: %u accepted, %s", n, accepted,
			    doca_error_get_name(err));
}

/* The owner's end: once the foreign submit is in, progress until @p total
 * events are taken. */
static void owner_finish(unsigned total)
{
	while (!atomic_load(&foreign_done))
		sched_yield();
	while (atomic_load(&w.events_total) < total)
		if (owner_progress() == 0)
			sched_yield();
}

static bool burst; /* pool_share_burst */

static void *owner_submits(void *unused)
{
	const unsigned warm_tasks = burst ? BURST_WARM : WARM_TASKS;

	explore_name("owner");
	for (unsigned tag = 0; tag < warm_tasks; tag++)
		submit_retrying(tag, true);
	while (atomic_load(&w.events_total) < warm_tasks)
		if (owner_progress() == 0)
			sched_yield();
	atomic_store(&warm, true); /* every return done: the stack holds the warm slots */
	if (burst)
		submit_burst(warm_tasks, SUBMIT_TASKS);
	else
		for (unsigned tag = warm_tasks; tag < warm_tasks + SUBMIT_TASKS; tag++)
			EXPECT_OK(world_submit(&w, tag));
	owner_finish(warm_tasks + SUBMIT_TASKS + 1u);
	return NULL;
}

/* The foreign thread of pool_share_submit and pool_share_chunk: its one
 * submit (tag @p arg) once the owner is warm. */
static void *foreign_submit(void *arg)
{
	explore_name("foreign");
	while (!atomic_load(&warm))
		sched_yield();
	submit_retrying((unsigned)(uintptr_t)arg, false);
	atomic_store(&foreign_done, true);
	return NULL;
}

#define CHUNK_FIRST 32u /* pool_share_chunk: POOL_CHUNK, the first chunk's slots (engine/engine.h) */
#define CHUNK_CREDITS (CHUNK_FIRST + 2u) /* then the owner's one more and the foreign one */

static void *owner_chunk(void *unused)
{
	explore_name("owner");
	(void)owner_progress(); /* this thread runs the PE: its guard is parked */
	for (unsigned i = 0; i < CHUNK_FIRST; i++)
		EXPECT_OK(world_submit(&w, i % WORLD_TASKS));
	atomic_store(&warm, true); /* the first chunk is used up, none returned */
	EXPECT_OK(world_submit(&w, CHUNK_FIRST % WORLD_TASKS));
	owner_finish(CHUNK_CREDITS);
	return NULL;
}

static void pool_share_run(void)
{
	pthread_t t[2];

	world_open(&w, "sw0", MAX_TASKS, NULL);
	if (pthread_create(&t[0], NULL, owner, NULL) != 0 || pthread_create(&t[1], NULL, foreign, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	world_end_with_exact_credits(&w, MAX_TASKS);
}

void scenario_pool_share(void)
{
	pool_share_run();
}

void scenario_pool_share_bulk(void)
{
	bulk = true;
	pool_share_run();
}

void scenario_pool_share_submit(void)
{
	pthread_t t[2];
	const unsigned foreign_tag = (burst ? BURST_WARM : WARM_TASKS) + SUBMIT_TASKS;

	world_open(&w, "sw0", SUBMIT_TASKS + 1u, NULL);
	if (pthread_create(&t[0], NULL, owner_submits, NULL) != 0 ||
	    pthread_create(&t[1], NULL, foreign_submit, (void *)(uintptr_t)foreign_tag) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	world_end_with_exact_credits(&w, SUBMIT_TASKS + 1u);
}

void scenario_pool_share_burst(void)
{
	burst = true;
	scenario_pool_share_submit();
}

void scenario_pool_share_chunk(void)
{
	pthread_t t[2];

	world_open(&w, "sw0", CHUNK_CREDITS, NULL);
	if (pthread_create(&t[0], NULL, owner_chunk, NULL) != 0 ||
	    pthread_create(&t[1], NULL, foreign_submit, (void *)(uintptr_t)((CHUNK_FIRST + 1u) % WORLD_TASKS)) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	world_end_with_exact_credits(&w, CHUNK_CREDITS);
}

#define CALLBACK_TASKS 3u  /* pool_switch_in_callback: the owner's tags 0..2 */
#define CALLBACK_CREDITS 3u

static atomic_bool resubmitting; /* the race; not the end's submits (world_end_with_exact_credits) */

static void switch_cb(struct doca_event *ev, union doca_data ctx_user_data)
{
	struct world *cw = ctx_user_data.ptr;
	unsigned tag = (unsigned)doca_event_get_user_data(ev).u64;

	world_event(cw, ev);
	if (atomic_load(&resubmitting) && tag + 1u < CALLBACK_TASKS)
		EXPECT_OK(world_submit(cw, tag + 1u)); /* inside the turn: the busy flag's plain take */
}

static void *owner_callbacks(void *unused)
{
	explore_name("owner");
	(void)doca_pe_progress(w.pe); /* this thread runs the PE: its guard is parked */
	EXPECT_OK(world_submit(&w, 0));
	while (atomic_load(&w.events_total) < CALLBACK_TASKS + 1u)
		if (doca_pe_progress(w.pe) == 0)
			sched_yield();
	atomic_store(&resubmitting, false);
	return NULL;
}

static void *foreign_first(void *unused)
{
	explore_name("foreign");
	submit_retrying(CALLBACK_TASKS, false);
	return NULL;
}

void scenario_pool_switch_in_callback(void)
{
	pthread_t t[2];

	atomic_store(&resubmitting, true);
	world_open(&w, "sw0", CALLBACK_CREDITS, switch_cb);
	if (pthread_create(&t[0], NULL, owner_callbacks, NULL) != 0 ||
	    pthread_create(&t[1], NULL, foreign_first, NULL) != 0)
		explore_end(VERDICT_HARNESS, "pthread_create");
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	world_end_with_exact_credits(&w, CALLBACK_CREDITS);
}
