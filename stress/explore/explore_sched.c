/*
 * stress/explore/explore_sched.c — the PCT scheduler: the token, the choice
 * at each hook point, blocking and waking, verdicts and reports.
 *
 * Why one thread at a time is enough to be exact: a thread runs only while
 * it holds the token (its semaphore was posted and nobody else's is), and
 * gives it up only inside this file. Between two hook points a thread
 * therefore runs alone, and the schedule is the sequence of choices made
 * here — a function of the seed alone, since every input of a choice
 * (priorities, change points, which threads can run) is. Threads outside
 * the model (liburcu's own) never take the token and never touch what the
 * controlled threads share.
 *
 * PCT (Burckhardt et al., ASPLOS 2010): each thread gets a random priority
 * when it is created; d - 1 change points are drawn from [1, k]; at each
 * step the runnable thread with the highest priority runs, and at a change
 * point the running thread drops below every other. A step is a choice
 * among two or more runnable threads (a point where only one thread can
 * run is no choice, as in shuttle's PctScheduler). For runs without yields
 * PCT finds a bug that needs d ordering constraints among n threads with
 * probability at least 1/(n·k^(d-1)) per schedule. A thread that yields (a
 * spin-wait, sched_yield, a sleep, a wait on fds) drops below every other
 * the same way as at a change point, so a spinning high-priority thread
 * cannot starve the one it waits for; that demotion is outside the proof.
 */
#include "explore.h"

#include "stress_common.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_MUTEXES 64u
#define MAX_GUARDS 8u
#define WATCHDOG_S 60u

struct mutex_owner {
	const void *m;
	unsigned owner;
	unsigned depth;
};

static struct {
	struct explore_opts o;
	struct explore_thread threads[EXPLORE_MAX_THREADS];
	unsigned nthreads;
	struct rng rng;
	uint64_t change[EXPLORE_MAX_DEPTH]; /* change points, in steps */
	unsigned nchange;
	uint64_t demoted;  /* priority for the next demoted thread: below all */
	uint64_t steps;    /* choices among two or more runnable threads */
	uint64_t hooks;    /* hook points passed, all threads */
	uint64_t blocks;   /* blocking waits begun, for their order */
	uint64_t fd_epoch; /* explore_fds_changed calls */
	uint64_t hash;     /* of every choice: equal hashes, equal schedules */
	pthread_key_t exit_key;
	struct mutex_owner mutexes[MAX_MUTEXES];
	int guards[MAX_GUARDS];
	unsigned nguards;
	char guard_writer[256]; /* who first wrote into a guard */
	pid_t pid;              /* the process the records describe */
	bool forking;           /* a controlled thread is inside fork() */
	const char *role;       /* "" or "fork child ": prefixes the report lines */
} X;

static _Thread_local struct explore_thread *self;

static const char *const kind_names[] = {
	[EXPLORE_ATOMIC] = "atomic", [EXPLORE_GUARD] = "guard", [EXPLORE_QUEUE] = "queue",
	[EXPLORE_WAKE] = "wake", [EXPLORE_RCU_LOCK] = "rcu_read_lock",
	[EXPLORE_RCU_UNLOCK] = "rcu_read_unlock", [EXPLORE_SPIN] = "spin",
};

/* The first call into the explorer in a fork child: only the forking
 * thread exists here. */
static void fork_child_reset(void)
{
	X.pid = getpid();
	X.forking = false;
	X.role = "fork child ";
	for (unsigned i = 0; i < X.nthreads; i++)
		if (&X.threads[i] != self && X.threads[i].state != THREAD_FINISHED)
			X.threads[i].state = THREAD_LOST;
	alarm(WATCHDOG_S); /* alarms are not inherited */
}

void explore_forking(bool on)
{
	fflush(stdout); /* the child must not print the parent's buffered lines again */
	X.forking = on;
}

struct explore_thread *explore_self(void)
{
	if (__builtin_expect(X.forking, 0) && getpid() != X.pid)
		fork_child_reset();
	return self;
}

struct explore_thread *explore_thread_at(unsigned id)
{
	return id < X.nthreads ? &X.threads[id] : NULL;
}

struct explore_thread *explore_thread_of(pthread_t thread)
{
	/* newest first: glibc reuses a joined thread's pthread_t */
	for (unsigned i = X.nthreads; i-- > 0;)
		if (pthread_equal(X.threads[i].pthread, thread))
			return &X.threads[i];
	return NULL;
}

void explore_name(const char *name)
{
	if (self != NULL)
		snprintf(self->name, sizeof(self->name), "%s", name);
}

/* ---- reports ---- */

/* "function+0xoff" for a code address (exported symbols: -rdynamic). */
static void describe_addr(const void *addr, char *out, size_t len)
{
	Dl_info info;

	if (addr != NULL && dladdr(addr, &info) != 0 && info.dli_sname != NULL)
		snprintf(out, len, "%s+%#lx", info.dli_sname,
			 (unsigned long)((const char *)addr - (const char *)info.dli_saddr));
	else
		snprintf(out, len, "%p", addr);
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : (path ? path : "?");
}

static const struct mutex_owner *mutex_find(const void *m)
{
	for (unsigned i = 0; i < MAX_MUTEXES; i++)
		if (X.mutexes[i].m == m && X.mutexes[i].depth != 0)
			return &X.mutexes[i];
	return NULL;
}

static void describe_wait(const struct explore_thread *t, char *out, size_t len)
{
	const struct explore_thread *other = t->obj;
	const struct mutex_owner *mo;
	size_t used;

	switch (t->why) {
	case BLOCK_MUTEX:
		mo = mutex_find(t->obj);
		if (mo != NULL)
			snprintf(out, len, "on mutex %p held by thread %u (%s)", t->obj, mo->owner,
				 X.threads[mo->owner].name);
		else
			snprintf(out, len, "on mutex %p", t->obj);
		break;
	case BLOCK_JOIN:
		snprintf(out, len, "for thread %u (%s) to exit", other->id, other->name);
		break;
	case BLOCK_FDS:
		used = (size_t)snprintf(out, len, "for fd");
		for (unsigned i = 0; i < t->nfds && used < len; i++)
			used += (size_t)snprintf(out + used, len - used, " %d", t->fds[i].fd);
		if (used < len)
			snprintf(out + used, len - used, " to be readable%s", t->timed ? " (timed)" : "");
		break;
	case BLOCK_FUTEX:
		snprintf(out, len, "on futex %p", t->obj);
		break;
	case BLOCK_GRACE:
		used = (size_t)snprintf(out, len, "for a grace period; readers still inside:");
		for (unsigned i = 0; i < X.nthreads && used < len; i++)
			if (t->grace_snap[i] != UINT64_MAX && X.threads[i].rcu_sections == t->grace_snap[i] &&
			    X.threads[i].state != THREAD_FINISHED)
				used += (size_t)snprintf(out + used, len - used, " %u", i);
		break;
	case BLOCK_CALLBACKS:
		snprintf(out, len, "idle: no deferred callback queued");
		break;
	case BLOCK_BARRIER:
		snprintf(out, len, "for every deferred callback to have run");
		break;
	default:
		snprintf(out, len, "?");
	}
}

static void print_threads(FILE *f)
{
	static const char *const states[] = { "starting", "runnable", "blocked", "finished",
					      "lost in the fork (it does not exist in this process)" };

	for (unsigned i = 0; i < X.nthreads; i++) {
		const struct explore_thread *t = &X.threads[i];
		char wait[256] = "", from[128] = "";

		if (t->state == THREAD_BLOCKED)
			describe_wait(t, wait, sizeof(wait));
		if (t->call != NULL)
			describe_addr(t->from, from, sizeof(from));
		fprintf(f, "  thread %u (%s): %s%s%s", t->id, t->name, states[t->state],
			wait[0] ? " " : "", wait);
		if (t->call != NULL)
			fprintf(f, "; in %s called from %s", t->call, from);
		if (t->file != NULL)
			fprintf(f, "; last hook point %s:%d (%s)", base_name(t->file), t->line,
				kind_names[t->kind]);
		if (t->rcu_nesting != 0)
			fprintf(f, "; inside an RCU read-side section");
		fputc('\n', f);
	}
}

static void print_summary(FILE *f)
{
	fprintf(f, "%sschedule: seed %llu depth %u k %llu: %llu hook points, %llu steps, %u threads, hash %016llx\n",
		X.role, (unsigned long long)X.o.seed, X.o.depth, (unsigned long long)X.o.steps,
		(unsigned long long)X.hooks, (unsigned long long)X.steps, X.nthreads,
		(unsigned long long)X.hash);
}

static const char *verdict_name(enum explore_verdict v)
{
	switch (v) {
	case VERDICT_CLEAN: return "clean";
	case VERDICT_DEADLOCK: return "deadlock";
	case VERDICT_LIVELOCK: return "livelock";
	case VERDICT_FD_TOUCHED: return "fd touched";
	case VERDICT_INVARIANT: return "invariant";
	case VERDICT_ABORT: return "abort";
	case VERDICT_CRASH: return "crash";
	default: return "harness";
	}
}

void explore_end(enum explore_verdict verdict, const char *what, ...)
{
	va_list ap;

	doca_explore_hook = NULL;
	fflush(stdout);
	fflush(stderr);
	printf("%sVERDICT: %s: ", X.role, verdict_name(verdict));
	va_start(ap, what);
	vprintf(what, ap);
	va_end(ap);
	printf("\n");
	print_threads(stdout);
	print_summary(stdout);
	fflush(stdout);
	_exit((int)verdict);
}

void explore_finish(void)
{
	doca_explore_hook = NULL;
	if (stress_violation_count() != 0)
		explore_end(VERDICT_INVARIANT, "result: %lu calls returned an unexpected code",
			    stress_violation_count());
	fflush(stderr);
	print_summary(stdout);
	printf("%sVERDICT: clean\n", X.role);
	fflush(stdout);
	_exit(VERDICT_CLEAN);
}

static void on_fatal_signal(int sig)
{
	if (sig == SIGALRM)
		explore_end(VERDICT_HARNESS, "watchdog: the schedule ran %u s; a thread is blocked outside the model",
			    WATCHDOG_S);
	if (sig == SIGABRT)
		explore_end(VERDICT_ABORT, "the process aborted (thread %u)", self ? self->id : 0u);
	explore_end(VERDICT_CRASH, "signal %d (%s) in thread %u", sig, strsignal(sig), self ? self->id : 0u);
}

/* ---- the choice ---- */

static uint64_t new_priority(void)
{
	for (;;) {
		uint64_t p = rng_next(&X.rng) >> 24; /* below every demoted value */
		bool taken = false;

		for (unsigned i = 0; i < X.nthreads; i++)
			taken = taken || X.threads[i].prio == p;
		if (!taken)
			return p;
	}
}

static bool is_change_point(uint64_t step)
{
	for (unsigned i = 0; i < X.nchange; i++)
		if (X.change[i] == step)
			return true;
	return false;
}

/* Can @p t run now? A blocked thread whose condition the scheduler can
 * check (fds, grace period, barrier) becomes runnable when it holds. */
static bool can_run(struct explore_thread *t)
{
	bool ready = false;

	if (t->state == THREAD_RUNNABLE)
		return true;
	if (t->state != THREAD_BLOCKED)
		return false;
	switch (t->why) {
	case BLOCK_FDS:
		if (t->fds_seen != X.fd_epoch) {
			t->fds_seen = X.fd_epoch;
			ready = __real_poll(t->fds, t->nfds, 0) > 0;
		}
		break;
	case BLOCK_GRACE:
		ready = explore_grace_over(t);
		break;
	case BLOCK_BARRIER:
		ready = explore_barrier_done();
		break;
	default:
		break; /* woken by explore_wake */
	}
	if (ready)
		t->state = THREAD_RUNNABLE;
	return ready;
}

static struct explore_thread *pick(struct explore_thread *me, bool yielding)
{
	struct explore_thread *best = NULL;
	unsigned runnable = 0;

	for (unsigned i = 0; i < X.nthreads; i++)
		runnable += can_run(&X.threads[i]);
	if (runnable == 0) {
		/* nothing can run: time passes, the oldest timed wait expires */
		struct explore_thread *oldest = NULL;

		for (unsigned i = 0; i < X.nthreads; i++) {
			struct explore_thread *t = &X.threads[i];

			if (t->state == THREAD_BLOCKED && t->timed &&
			    (oldest == NULL || t->blocked_at < oldest->blocked_at))
				oldest = t;
		}
		if (oldest == NULL)
			return NULL;
		oldest->timed_out = true;
		oldest->state = THREAD_RUNNABLE;
		runnable = 1;
	}
	if (runnable > 1) {
		X.steps++;
		if (me->state == THREAD_RUNNABLE && (yielding || is_change_point(X.steps))) {
			me->prio = X.demoted++;
			if (X.o.trace && !yielding)
				printf("trace: step %llu: change point, thread %u drops\n",
				       (unsigned long long)X.steps, me->id);
		}
	}
	for (unsigned i = 0; i < X.nthreads; i++) {
		struct explore_thread *t = &X.threads[i];

		if (t->state == THREAD_RUNNABLE && (best == NULL || t->prio < best->prio))
			best = t;
	}
	return best;
}

/* Give the token to the thread PCT chooses; return once it is ours again
 * (at once when we are chosen, never when we have finished). */
static void run_next(struct explore_thread *me, bool yielding)
{
	struct explore_thread *next = pick(me, yielding);

	if (next == NULL)
		explore_end(VERDICT_DEADLOCK, "no thread can run");
	X.hash = (X.hash ^ (next->id + 1u)) * 0x100000001b3ull;
	if (next == me)
		return;
	if (X.o.trace)
		printf("trace: hook %llu step %llu: thread %u -> thread %u\n", (unsigned long long)X.hooks,
		       (unsigned long long)X.steps, me->id, next->id);
	sem_post(&next->turn);
	if (me->state == THREAD_FINISHED)
		return;
	while (sem_wait(&me->turn) != 0)
		;
}

static void count_hook(void)
{
	const struct explore_thread *me = self;

	if (++X.hooks > X.o.max_hooks)
		explore_end(VERDICT_LIVELOCK, "no progress: %llu hook points passed",
			    (unsigned long long)X.o.max_hooks);
	if (!X.o.trace)
		return;
	if (me->call != NULL) {
		char from[128];

		describe_addr(me->from, from, sizeof(from));
		printf("trace: hook %llu thread %u: %s from %s\n", (unsigned long long)X.hooks, me->id,
		       me->call, from);
	} else {
		printf("trace: hook %llu thread %u: %s:%d %s\n", (unsigned long long)X.hooks, me->id,
		       base_name(me->file), me->line, kind_names[me->kind]);
	}
}

void explore_hook(enum explore_kind kind, const char *file, int line)
{
	struct explore_thread *me = explore_self();

	if (me == NULL)
		return;
	me->kind = kind;
	me->file = file;
	me->line = line;
	me->call = NULL;
	count_hook();
	run_next(me, kind == EXPLORE_SPIN);
	/* the operation after the point happens now, with the token held */
	if (kind == EXPLORE_RCU_LOCK) {
		me->rcu_nesting++;
	} else if (kind == EXPLORE_RCU_UNLOCK) {
		if (me->rcu_nesting == 0)
			explore_end(VERDICT_INVARIANT, "rcu: read unlock outside a read-side section");
		if (--me->rcu_nesting == 0)
			me->rcu_sections++;
	}
}

void explore_libc_point(const char *call, const void *from, bool yielding)
{
	struct explore_thread *me = self;

	me->call = call;
	me->from = from;
	count_hook();
	run_next(me, yielding);
}

bool explore_block(enum explore_block why, const void *obj, bool timed)
{
	struct explore_thread *me = self;

	me->state = THREAD_BLOCKED;
	me->why = why;
	me->obj = obj;
	me->timed = timed;
	me->timed_out = false;
	me->blocked_at = X.blocks++;
	me->fds_seen = X.fd_epoch; /* the caller has just polled them */
	count_hook();
	run_next(me, false);
	me->why = BLOCK_NONE;
	return me->timed_out;
}

unsigned explore_wake(enum explore_block why, const void *obj, unsigned max)
{
	unsigned woken = 0;

	for (unsigned i = 0; i < X.nthreads && woken < max; i++) {
		struct explore_thread *t = &X.threads[i];

		if (t->state == THREAD_BLOCKED && t->why == why && t->obj == obj) {
			t->state = THREAD_RUNNABLE;
			woken++;
		}
	}
	return woken;
}

void explore_wait_fds(struct pollfd *fds, unsigned n)
{
	self->fds = fds;
	self->nfds = n;
}

void explore_fds_changed(void)
{
	X.fd_epoch++;
}

void explore_mutex_owned(const void *m, bool taken)
{
	struct mutex_owner *free_slot = NULL;

	for (unsigned i = 0; i < MAX_MUTEXES; i++) {
		struct mutex_owner *mo = &X.mutexes[i];

		if (mo->m == m && mo->depth != 0) {
			mo->depth += taken ? 1u : (unsigned)-1;
			return;
		}
		if (free_slot == NULL && mo->depth == 0)
			free_slot = mo;
	}
	if (taken && free_slot != NULL)
		*free_slot = (struct mutex_owner){ .m = m, .owner = self->id, .depth = 1 };
}

/* ---- threads ---- */

static void *thread_trampoline(void *arg)
{
	struct explore_thread *t = arg;

	self = t;
	(void)pthread_setspecific(X.exit_key, t);
	while (sem_wait(&t->turn) != 0)
		;
	return t->fn(t->arg);
}

/* A controlled thread's exit: the library's own key destructors (RCU
 * unregistration, the thread slot) run in the first round of destructors,
 * with the token still held; this one re-arms itself once, so in the second
 * round it is the last code of the thread that touches anything shared, and
 * only then does it hand the token on. */
static void thread_exit_key(void *arg)
{
	struct explore_thread *t = arg;

	if (!t->exit_armed) {
		t->exit_armed = true;
		(void)pthread_setspecific(X.exit_key, t);
		return;
	}
	if (t->rcu_nesting != 0)
		explore_end(VERDICT_INVARIANT, "rcu: thread %u exited inside a read-side section", t->id);
	t->state = THREAD_FINISHED;
	explore_wake(BLOCK_JOIN, t, UINT32_MAX);
	count_hook();
	run_next(t, false);
	self = NULL;
}

static struct explore_thread *thread_new(void *(*fn)(void *), void *arg)
{
	if (X.nthreads == EXPLORE_MAX_THREADS)
		explore_end(VERDICT_HARNESS, "more than %u threads", EXPLORE_MAX_THREADS);
	struct explore_thread *t = &X.threads[X.nthreads];

	memset(t, 0, sizeof(*t));
	t->id = X.nthreads;
	snprintf(t->name, sizeof(t->name), "thread %u", t->id);
	t->prio = new_priority();
	t->fn = fn;
	t->arg = arg;
	sem_init(&t->turn, 0, 0);
	return t;
}

int explore_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg, const void *from)
{
	struct explore_thread *t = thread_new(fn, arg);
	Dl_info info;

	if (dladdr(from, &info) != 0 && info.dli_sname != NULL)
		snprintf(t->name, sizeof(t->name), "%s", info.dli_sname);
	int err = __real_pthread_create(thread, attr, thread_trampoline, t);

	if (err != 0) {
		sem_destroy(&t->turn);
		return err;
	}
	t->pthread = *thread;
	t->state = THREAD_RUNNABLE;
	X.nthreads++;
	return 0;
}

void explore_start(const struct explore_opts *o)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	static const int fatal[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM };

	X.o = *o;
	X.pid = getpid();
	X.role = "";
	rng_init(&X.rng, o->seed, 0x5c4ed);
	X.demoted = UINT64_C(1) << 62;
	(void)pthread_key_create(&X.exit_key, thread_exit_key);
	struct explore_thread *main_thread = thread_new(NULL, NULL);

	snprintf(main_thread->name, sizeof(main_thread->name), "main");
	main_thread->pthread = pthread_self();
	main_thread->state = THREAD_RUNNABLE;
	X.nthreads = 1;
	self = main_thread;
	/* d - 1 distinct change points in [1, k] */
	X.nchange = 0;
	while (X.nchange + 1u < o->depth && X.nchange < o->steps && X.nchange < EXPLORE_MAX_DEPTH) {
		uint64_t c = 1 + rng_next(&X.rng) % o->steps;

		if (!is_change_point(c))
			X.change[X.nchange++] = c;
	}
	for (unsigned i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	alarm(WATCHDOG_S);
	doca_explore_hook = explore_hook;
	explore_rcu_start();
}

/* ---- the application's fds ---- */

void explore_guards_open(unsigned n)
{
	for (unsigned i = 0; i < n && X.nguards < MAX_GUARDS; i++) {
		int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

		if (fd < 0)
			explore_end(VERDICT_HARNESS, "eventfd: %s", strerror(errno));
		X.guards[X.nguards++] = fd;
	}
}

void explore_guard_written(int fd, const void *from)
{
	for (unsigned i = 0; i < X.nguards; i++) {
		if (X.guards[i] != fd || X.guard_writer[0] != '\0')
			continue;
		char where[128];

		describe_addr(from, where, sizeof(where));
		snprintf(X.guard_writer, sizeof(X.guard_writer), "thread %u (%s), write called from %s",
			 self->id, self->name, where);
	}
}

void explore_guards_check(void)
{
	for (unsigned i = 0; i < X.nguards; i++) {
		uint64_t count = 0;

		if (__real_read(X.guards[i], &count, sizeof(count)) == (ssize_t)sizeof(count))
			explore_end(VERDICT_FD_TOUCHED,
				    "the application's eventfd %d (opened after teardown) holds %llu; written by %s",
				    X.guards[i], (unsigned long long)count,
				    X.guard_writer[0] ? X.guard_writer : "?");
		__real_close(X.guards[i]);
	}
	X.nguards = 0;
}
