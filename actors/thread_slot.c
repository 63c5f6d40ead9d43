/*
 * actors/thread_slot.c — slot numbers for threads.
 *
 * A bitmap of THREAD_SLOT_MAX bits; a thread claims the first clear bit with
 * a CAS on first use and clears it from a pthread key destructor when it
 * exits. Correctness: a bit is set by exactly one successful CAS and cleared
 * only by the thread that set it, so two live threads never own one slot
 * (except overflow threads, which borrow a slot without owning it).
 */
#include "thread_slot.h"
#include "explore.h"
#include "hb_annotate.h"
#include "tsan_annotate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define SLOT_WORDS (THREAD_SLOT_MAX / 64u)

static _Atomic uint64_t slot_bits[SLOT_WORDS];
static _Atomic unsigned overflow_next;
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
DOCA_TLS int thread_slot_mine = -1;
DOCA_TLS bool thread_slot_exclusive;

/* thread_slot_mine stays set: a later key destructor of this thread that
 * pushes still gets this slot, perhaps a new thread's by then
 * (thread_slot.h). */
static void slot_release(void *value)
{
	unsigned slot = (unsigned)(uintptr_t)value - 1u;

	thread_slot_exclusive = false; /* before the release: a later call of ours is not the holder's */
	EXPLORE_POINT(ATOMIC);
	/* release: our last uses of per-slot data happen before a new owner's. */
	atomic_fetch_and_explicit(&slot_bits[slot / 64u], ~(UINT64_C(1) << (slot % 64u)),
				  memory_order_release);
}

static void slot_key_create(void)
{
	(void)pthread_key_create(&slot_key, slot_release);
	hb_release(&slot_once); /* Helgrind does not see pthread_once's own ordering */
}

static int slot_claim(void)
{
	for (unsigned w = 0; w < SLOT_WORDS; w++) {
		uint64_t bits = atomic_load_explicit(&slot_bits[w], memory_order_relaxed);

		while (bits != UINT64_MAX) {
			unsigned bit = (unsigned)__builtin_ctzll(~bits);

			EXPLORE_POINT(ATOMIC);
			/* acquire: pairs with the previous owner's release in slot_release. */
			if (atomic_compare_exchange_weak_explicit(&slot_bits[w], &bits,
								  bits | (UINT64_C(1) << bit),
								  memory_order_acquire,
								  memory_order_relaxed))
				return (int)(w * 64u + bit);
		}
	}
	return -1;
}

/* First call of a thread: claim a slot (out of line, so thread_slot_get
 * stays a TLS load and a branch). */
unsigned thread_slot_first_use(void)
{
	pthread_once(&slot_once, slot_key_create);
	hb_acquire(&slot_once);
	int slot = slot_claim();

	if (slot >= 0) {
		thread_slot_mine = slot;
		thread_slot_exclusive = true;
		(void)pthread_setspecific(slot_key, (void *)(uintptr_t)(slot + 1));
	} else {
		thread_slot_mine = (int)(atomic_fetch_add_explicit(&overflow_next, 1, memory_order_relaxed) %
				THREAD_SLOT_MAX);
	}
	return (unsigned)thread_slot_mine;
}

void thread_slot_after_fork_child(void)
{
	for (unsigned w = 0; w < SLOT_WORDS; w++)
		atomic_store_explicit(&slot_bits[w], 0, memory_order_relaxed);
	if (thread_slot_mine >= 0 && pthread_getspecific(slot_key) != NULL)
		atomic_store_explicit(&slot_bits[(unsigned)thread_slot_mine / 64u],
				      UINT64_C(1) << ((unsigned)thread_slot_mine % 64u), memory_order_relaxed);
}
