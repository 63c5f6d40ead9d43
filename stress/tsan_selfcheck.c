/*
 * stress/tsan_selfcheck.c — proves that the TSan set-up can fail.
 *
 * A stress run under TSan that cannot report anything proves nothing: TSan
 * does not see Concurrency Kit's or liburcu's asm, so the library annotates
 * those hand-offs (actors/tsan_annotate.h, engine/rcu.h); the mailbox is C11
 * atomics, which TSan sees as they are. Each mode below is one hand-off,
 * done right (must run clean) or wrong (must be reported);
 * stress/tsan_expect.sh runs a mode and checks the verdict.
 *
 *   mailbox-ok                producer fills an item, pushes it through the
 *                             library's mailbox; the consumer reads it: clean
 *   mailbox-touch-after-push  the producer writes the item after the push
 *                             while the consumer reads it: a data race
 *   ring-unannotated          the same hand-off through a bare ck_ring
 *                             without the release/acquire annotations: TSan
 *                             reports it, so the annotations are what make
 *                             the library's ck rings (task pool, queue
 *                             pairs) clean
 *   rcu-grace-ok              a writer unpublishes an object, waits for a
 *                             grace period (doca_synchronize_rcu), frees it
 *                             while a reader used it: clean
 *   rcu-call-ok               the same with doca_call_rcu: clean
 *   rcu-call-touch-after-queue  the writer queues the free with doca_call_rcu,
 *                             then writes the object while the library's
 *                             reclaimer thread frees it: a data race / use
 *                             after free, so the mutex that hands work to
 *                             the reclaimer does not hide what follows it
 *   rcu-free-no-grace         the writer frees without waiting while the
 *                             reader still uses it: a data race / use after free
 *
 * The accesses are ordered by relaxed atomics only (which give TSan no
 * happens-before), so a racy mode is reported on every run, not by luck.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ck_ring.h>

#include "actors/mailbox.h"
#include "actors/tsan_annotate.h"
#include "engine/rcu.h"

struct item {
	long payload;
	struct rcu_head rcu;
	struct mailbox_node node;
};

/* Steps of a scripted interleaving; relaxed, so invisible to TSan's clocks. */
static atomic_int step;

static void wait_step(int n)
{
	while (atomic_load_explicit(&step, memory_order_relaxed) < n)
		;
}

static void set_step(int n)
{
	atomic_store_explicit(&step, n, memory_order_relaxed);
}

static void spawn_join(void *(*a)(void *), void *(*b)(void *), void *arg)
{
	pthread_t ta, tb;

	if (pthread_create(&ta, NULL, a, arg) != 0 || pthread_create(&tb, NULL, b, arg) != 0) {
		perror("pthread_create");
		exit(2);
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
}

/* ---- mailbox hand-off ---- */

struct handoff {
	struct mailbox mb;
	struct ck_ring ring;
	struct ck_ring_buffer *slots;
	struct item *item;
	bool touch_after_push;
	bool bare_ring;
	long seen;
};

static void *producer(void *arg)
{
	struct handoff *h = arg;

	h->item->payload = 42;
	if (h->bare_ring) {
		if (!ck_ring_enqueue_mpsc(&h->ring, h->slots, h->item))
			abort();
	} else {
		mailbox_push_mpsc(&h->mb, &h->item->node);
		mailbox_announce(&h->mb);
	}
	if (h->touch_after_push) {
		wait_step(1); /* the consumer has read it */
		h->item->payload = 43; /* RACE: the item belongs to the consumer now */
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct handoff *h = arg;
	void *got = NULL;
	struct mailbox_node *node;

	for (;;) {
		if (h->bare_ring ? ck_ring_dequeue_mpsc(&h->ring, h->slots, &got)
				 : mailbox_drain_sc(&h->mb, &node, 1, 1) == 1)
			break;
	}
	if (!h->bare_ring)
		got = caa_container_of(node, struct item, node);
	h->seen = ((struct item *)got)->payload;
	((struct item *)got)->payload = 0; /* the consumer owns it */
	set_step(1);
	return NULL;
}

static int run_handoff(bool touch_after_push, bool bare_ring)
{
	struct handoff h = { .touch_after_push = touch_after_push, .bare_ring = bare_ring };

	h.item = calloc(1, sizeof(*h.item));
	h.slots = calloc(8, sizeof(*h.slots));
	if (h.item == NULL || h.slots == NULL)
		return 2;
	mailbox_init(&h.mb);
	ck_ring_init(&h.ring, 8);
	/* as mailbox.c does: the slot copy is ordered by ck's fences */
	TSAN_BENIGN_RACE(h.slots, sizeof(*h.slots) * 8, "ck_ring slots: ordered by ck fences");
	spawn_join(producer, consumer, &h);
	free(h.slots);
	free(h.item);
	printf("hand-off done, consumer saw %ld\n", h.seen);
	return h.seen == 42 ? 0 : 1;
}

/* ---- RCU-protected object ---- */

enum free_kind { FREE_AFTER_SYNC, FREE_CALL_RCU, FREE_CALL_RCU_THEN_TOUCH, FREE_AT_ONCE };

static struct item *gp;
static enum free_kind free_kind;
static long reader_sum;

static void item_free_rcu(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	free(caa_container_of(head, struct item, rcu));
}

static void *reader(void *arg)
{
	(void)arg;
	doca_rcu_read_lock();
	struct item *p = rcu_dereference(gp);

	TSAN_ACQUIRE(p);
	reader_sum += p->payload;
	set_step(1);
	if (free_kind == FREE_AT_ONCE)
		wait_step(2); /* the writer freed it: only the buggy writer gets here */
	reader_sum += p->payload; /* still inside the read-side section */
	doca_rcu_read_unlock();
	return NULL;
}

static void *writer(void *arg)
{
	struct item *p = gp;

	(void)arg;
	wait_step(1);
	rcu_assign_pointer(gp, NULL);
	switch (free_kind) {
	case FREE_AFTER_SYNC:
		doca_synchronize_rcu();
		free(p);
		break;
	case FREE_CALL_RCU:
		doca_call_rcu(&p->rcu, item_free_rcu);
		break;
	case FREE_CALL_RCU_THEN_TOUCH:
		doca_call_rcu(&p->rcu, item_free_rcu);
		p->payload = 0; /* BUG: the reclaimer thread may be freeing it */
		doca_rcu_barrier();
		break;
	case FREE_AT_ONCE:
		free(p); /* BUG: a reader may still hold it */
		set_step(2);
		break;
	}
	return NULL;
}

static int run_rcu(enum free_kind kind)
{
	struct item *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return 2;
	free_kind = kind;
	p->payload = 7;
	TSAN_RELEASE(p);
	rcu_assign_pointer(gp, p);
	spawn_join(reader, writer, NULL);
	printf("rcu done, reader saw %ld\n", reader_sum);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";

	if (strcmp(mode, "mailbox-ok") == 0)
		return run_handoff(false, false);
	if (strcmp(mode, "mailbox-touch-after-push") == 0)
		return run_handoff(true, false);
	if (strcmp(mode, "ring-unannotated") == 0)
		return run_handoff(false, true);
	if (strcmp(mode, "rcu-grace-ok") == 0)
		return run_rcu(FREE_AFTER_SYNC);
	if (strcmp(mode, "rcu-call-ok") == 0)
		return run_rcu(FREE_CALL_RCU);
	if (strcmp(mode, "rcu-call-touch-after-queue") == 0)
		return run_rcu(FREE_CALL_RCU_THEN_TOUCH);
	if (strcmp(mode, "rcu-free-no-grace") == 0)
		return run_rcu(FREE_AT_ONCE);
	fprintf(stderr, "usage: %s mailbox-ok|mailbox-touch-after-push|ring-unannotated|"
			"rcu-grace-ok|rcu-call-ok|rcu-call-touch-after-queue|rcu-free-no-grace\n", argv[0]);
	return 2;
}
