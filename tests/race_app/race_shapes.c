/*
 * tests/race_app/race_shapes.c — more shapes of an application that embeds
 * doca-core, built with clang -fsanitize=thread against the plain library
 * (README, "Testing your application under ThreadSanitizer"), each correct
 * by the threading contract, so each must get no report. Each is a hand-off
 * inside the library that an application's TSan saw as a race before the
 * library annotated it (found by an audit, 2026-12-03):
 *
 *   race_shapes dev-open    four threads open and close the same device
 *                           string at once (the registry's entries: made
 *                           by one thread, matched by strcmp on another)
 *   race_shapes credit-fd   a submitter sleeps on the credit notification
 *                           fd it made while the PE's thread fires it (the
 *                           eventfd: made on one thread, written on another)
 *   race_shapes fork        the child of a fork makes its own objects and
 *                           copies (the library's fork handlers released
 *                           the locks they took, as TSan sees locks)
 *
 * Public API only; every copy is checked byte for byte and every count is
 * exact.
 */
#include "example_common.h"

#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>

#define OPENERS 4u
#define OPEN_ROUNDS 100u
#define CREDIT_ROUNDS 10u
#define CREDIT_TASKS 100u
#define LEN 64u

static uint64_t start_ns;

/* ---- dev-open ---------------------------------------------------------- */

static pthread_barrier_t open_barrier;

static void *opener_main(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < OPEN_ROUNDS; r++) {
		struct doca_dev *dev;
		const char *name;

		pthread_barrier_wait(&open_barrier); /* all open at once */
		EXAMPLE_CHECK(doca_dev_open("sw0", &dev));
		EXAMPLE_CHECK(doca_dev_get_name(dev, &name));
		if (strcmp(name, "sw0") != 0)
			example_fail("doca_dev_get_name gave \"%s\"", name);
		EXAMPLE_CHECK(doca_dev_close(dev));
	}
	return NULL;
}

static unsigned long dev_open_mode(void)
{
	pthread_t t[OPENERS];

	pthread_barrier_init(&open_barrier, NULL, OPENERS);
	for (unsigned i = 0; i < OPENERS; i++)
		if (pthread_create(&t[i], NULL, opener_main, NULL) != 0)
			example_fail("pthread_create failed");
	for (unsigned i = 0; i < OPENERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&open_barrier);
	return (unsigned long)OPENERS * OPEN_ROUNDS;
}

/* ---- credit-fd --------------------------------------------------------- */

struct credit_round {
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct example_slots slots;
	pthread_mutex_t lock;
	unsigned submitted; /* lock */
	bool done;          /* lock: the submitter has submitted them all */
	unsigned reaped;    /* the PE's thread only, read after the join */
};

static void *credit_pe_main(void *arg)
{
	struct credit_round *r = arg;

	for (;;) {
		struct doca_event *ev;

		doca_pe_progress(r->pe);
		while ((ev = doca_pe_get_event(r->pe)) != NULL) {
			if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS ||
			    doca_event_get_bytes(ev) != LEN)
				example_fail("credit-fd copy: status %s, %zu bytes",
					     example_status_name(doca_event_get_status(ev)),
					     doca_event_get_bytes(ev));
			doca_event_free(ev);
			r->reaped++;
		}
		pthread_mutex_lock(&r->lock);
		bool finished = r->done && r->reaped == r->submitted;
		pthread_mutex_unlock(&r->lock);
		if (finished)
			return NULL;
		example_check_deadline(start_ns, "the credit-fd round's events");
	}
}

static void *credit_submitter_main(void *arg)
{
	struct credit_round *r = arg;

	for (unsigned i = 0; i < CREDIT_TASKS;) {
		doca_error_t err = example_slots_submit(r->ctx, &r->slots, 0, i);
		struct pollfd p = { .events = POLLIN };

		if (err == DOCA_SUCCESS) {
			pthread_mutex_lock(&r->lock);
			r->submitted++;
			pthread_mutex_unlock(&r->lock);
			i++;
			continue;
		}
		if (err != DOCA_ERROR_AGAIN)
			example_fail("doca_task_submit: %s", doca_error_get_name(err));
		EXAMPLE_CHECK(doca_ctx_get_credit_notification_handle(r->ctx, &p.fd));
		EXAMPLE_CHECK(doca_ctx_request_credit_notification(r->ctx));
		(void)poll(&p, 1, 1000);
		EXAMPLE_CHECK(doca_ctx_clear_credit_notification(r->ctx));
		example_check_deadline(start_ns, "a credit");
	}
	pthread_mutex_lock(&r->lock);
	r->done = true;
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* A new context every round: every round makes the fd anew. */
static unsigned long credit_fd_mode(void)
{
	unsigned long reaped = 0;

	for (unsigned k = 0; k < CREDIT_ROUNDS; k++) {
		struct credit_round r = { .submitted = 0 };
		struct doca_dev *dev;
		pthread_t pe_thread, submitter;

		pthread_mutex_init(&r.lock, NULL);
		EXAMPLE_CHECK(doca_ctx_create(&r.ctx));
		EXAMPLE_CHECK(doca_dev_open("sw0:engines=1", &dev));
		EXAMPLE_CHECK(doca_ctx_set_dev(r.ctx, dev));
		EXAMPLE_CHECK(doca_ctx_set_max_tasks(r.ctx, 2));
		example_slots_create(r.ctx, 1, LEN, &r.slots);
		example_slots_fill(&r.slots, 0, example_seed(0, 0));
		EXAMPLE_CHECK(doca_pe_create(&r.pe));
		EXAMPLE_CHECK(doca_pe_connect_ctx(r.pe, r.ctx));
		EXAMPLE_CHECK(doca_ctx_start(r.ctx));
		if (pthread_create(&pe_thread, NULL, credit_pe_main, &r) != 0 ||
		    pthread_create(&submitter, NULL, credit_submitter_main, &r) != 0)
			example_fail("pthread_create failed");
		pthread_join(submitter, NULL);
		pthread_join(pe_thread, NULL);
		if (r.reaped != CREDIT_TASKS)
			example_fail("credit-fd round %u: %u events for %u copies", k, r.reaped, CREDIT_TASKS);
		example_slots_verify(&r.slots, 0, example_seed(0, 0)); /* every event is in */
		reaped += r.reaped;
		EXAMPLE_CHECK(doca_ctx_stop(r.ctx)); /* every event freed: IDLE at once */
		example_slots_destroy(&r.slots);
		EXAMPLE_CHECK(doca_dev_close(dev));
		EXAMPLE_CHECK(doca_ctx_destroy(r.ctx));
		EXAMPLE_CHECK(doca_pe_destroy(r.pe));
		pthread_mutex_destroy(&r.lock);
	}
	return reaped;
}

/* ---- fork -------------------------------------------------------------- */

/* One copy on inline sw0 with objects of the calling process. */
static void one_copy(uint64_t seed)
{
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct example_slots slots;
	struct doca_event *ev = NULL;

	EXAMPLE_CHECK(doca_ctx_create(&ctx));
	EXAMPLE_CHECK(doca_dev_open("sw0", &dev));
	EXAMPLE_CHECK(doca_ctx_set_dev(ctx, dev));
	example_slots_create(ctx, 1, 4096, &slots);
	example_slots_fill(&slots, 0, seed);
	EXAMPLE_CHECK(doca_pe_create(&pe));
	EXAMPLE_CHECK(doca_pe_connect_ctx(pe, ctx));
	EXAMPLE_CHECK(doca_ctx_start(ctx));
	EXAMPLE_CHECK(example_slots_submit(ctx, &slots, 0, 0));
	while (ev == NULL) {
		doca_pe_progress(pe);
		ev = doca_pe_get_event(pe);
		example_check_deadline(start_ns, "the copy's event");
	}
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		example_fail("the copy failed: %s", doca_error_get_name(doca_event_get_error(ev)));
	example_slots_verify(&slots, 0, seed);
	doca_event_free(ev);
	EXAMPLE_CHECK(doca_ctx_stop(ctx));
	example_slots_destroy(&slots);
	EXAMPLE_CHECK(doca_dev_close(dev));
	EXAMPLE_CHECK(doca_ctx_destroy(ctx));
	EXAMPLE_CHECK(doca_pe_destroy(pe));
}

/* The parent makes no thread of the library before the fork: TSan does
 * not support a multithreaded process's child starting threads. */
static unsigned long fork_mode(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		example_fail("fork failed");
	if (pid == 0) {
		one_copy(example_seed(1, 0));
		one_copy(example_seed(1, 1));
		exit(0); /* the library's exit handler ends its threads */
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		example_fail("the child did not exit 0 (status %#x)", status);
	one_copy(example_seed(2, 0)); /* the parent goes on too */
	return 3;
}

int main(int argc, char **argv)
{
	unsigned long n;

	if (argc != 2)
		example_fail("usage: %s dev-open|credit-fd|fork", argv[0]);
	start_ns = example_now_ns();
	if (strcmp(argv[1], "dev-open") == 0)
		n = dev_open_mode();
	else if (strcmp(argv[1], "credit-fd") == 0)
		n = credit_fd_mode();
	else if (strcmp(argv[1], "fork") == 0)
		n = fork_mode();
	else
		example_fail("unknown mode '%s' (dev-open, credit-fd, fork)", argv[1]);
	printf("race_shapes %s: %lu done\n", argv[1], n);
	return 0;
}
