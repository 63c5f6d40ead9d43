/*
 * bench.h — shared types of doca_bench: options, cases, contenders, results.
 *
 * A *case* is one cell of a scenario (inline 64 B batch 32, offload 1 MiB, ...).
 * A *contender* is one implementation measured on that case: ours (doca) or a
 * peer (memcpy, DPDK dmadev skeleton, io_uring NOP, Concurrency Kit ring).
 * The runner sets every contender of a case up, then runs them interleaved,
 * alternating their order each repetition, and keeps the median of the
 * repetitions and the median of the per-repetition ratio ours/peer.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_SIZES 16
#define BENCH_MAX_REPS 64
#define BENCH_MAX_CONTENDERS 6

/** Command-line options (defaults in bench_cli.c). */
struct bench_opts {
	size_t sizes[BENCH_MAX_SIZES]; /**< copy sizes of the inline and offload scenarios */
	unsigned n_sizes;
	size_t lat_sizes[BENCH_MAX_SIZES]; /**< copy sizes of the latency scenario */
	unsigned n_lat_sizes;
	unsigned batch;       /**< tasks per submit burst */
	unsigned depth;       /**< offload: tasks in flight */
	unsigned threads;     /**< mailbox: most foreign submitters; scaling: most CPUs */
	double duration;      /**< seconds per measurement */
	unsigned reps;        /**< repetitions per contender, interleaved */
	uint64_t seed;        /**< fills the buffers, picks the first contender order */
	uint64_t tasks;       /**< "loop" command: copies to run */
	const char *shape;    /**< "loop" command: "pump" (bench_pump), "task" or "burst" (ours_shapes.c) */
	const char *out_dir;  /**< results directory */
	unsigned contexts;    /**< contexts scenario: the largest count; ctxmem: the count */
	const char *dev;      /**< ctxmem, loop: the device open string */
	bool plot;            /**< run gnuplot at the end */
};

/** One cell of one scenario. */
struct bench_case {
	const char *scenario; /**< "inline", "offload", "latency", "mailbox", "scaling", "events",
			       *   "ctx-idle", "ctx-busy",
			       *   "remote" (QD64 writes), "remote-lat" (QD1 writes) */
	size_t size;          /**< bytes per copy */
	unsigned batch;       /**< tasks per submit burst */
	unsigned depth;       /**< most tasks in flight */
	unsigned threads;     /**< submitters (mailbox), CPUs (scaling) or engine threads (ctx-*) */
	uint64_t seed;
};

/** What one repetition of one contender measured. */
struct bench_measure {
	uint64_t tasks;        /**< completed tasks (or items, or round trips) */
	uint64_t bytes;        /**< payload bytes moved */
	uint64_t ns;           /**< wall time of the measured loop */
	double *lat_ns;        /**< latency samples (owned by the contender), or NULL */
	size_t n_lat;
	double alloc_bytes;    /**< heap bytes allocated by the measuring thread, < 0 unknown */
	uint64_t wakeups;      /**< event mode: epoll_wait returns (0: not event mode) */
	uint64_t empty_wakeups; /**< event mode: wake-ups whose progress + get_event found nothing */
	double bytes_per_ctx;  /**< contexts scenario: RSS per idle started context; 0 or NAN: none */
};

struct bench_contender;

/** A contender's three steps; setup returns NULL or why it cannot run. */
struct bench_contender_ops {
	const char *(*setup)(struct bench_contender *c, const struct bench_case *bc);
	void (*run)(struct bench_contender *c, const struct bench_case *bc, double seconds,
		    struct bench_measure *m);
	void (*teardown)(struct bench_contender *c);
};

struct bench_contender {
	const char *name;      /**< shown in the table: "doca", "dpdk-skeleton", ... */
	const struct bench_contender_ops *ops;
	void *priv;            /**< the contender's state between setup and teardown */
};

/** The medians of one contender on one case. */
struct bench_result {
	struct bench_case bc;
	char contender[32];
	char skip[128];        /**< non-empty: not measured, and why */
	unsigned reps;
	double tasks_per_s;    /**< median */
	double gb_per_s;       /**< median (1e9 bytes per second) */
	double spread;         /**< (max - min) / median of tasks/s, a noise gauge */
	double p50_ns, p99_ns, p999_ns; /**< medians over reps; NAN without samples */
	double ratio;          /**< median over reps of ours/peer (tasks/s, or p50 for latency); NAN for ours */
	double alloc_per_task; /**< heap bytes per task; NAN unknown */
	double wakeups_per_task; /**< event mode: median wake-ups per completion; NAN otherwise */
	double empty_share;    /**< event mode: median share of wake-ups that found no event; NAN otherwise */
	double tps_reps[BENCH_MAX_REPS]; /**< tasks/s of each repetition, for bench_pair_ratio */
	char note[64];         /**< shown in the note column (bench_note_ratio) */
	double bytes_per_ctx;  /**< contexts scenario: median RSS per idle started context; NAN otherwise */
};

/** Loop turns between two clock reads: every turn when a turn moves 64 KiB or more. */
static inline unsigned bench_clock_every(const struct bench_case *bc)
{
	return bc->size * bc->batch >= 65536 ? 1 : 64;
}

/** A submission/completion queue seen by the shared measuring loops. */
struct bench_queue {
	void (*submit_burst)(void *q, unsigned n); /**< submit n tasks, one doorbell */
	uint64_t (*reap)(void *q, unsigned max);   /**< poll once; @return tasks completed */
	void *q;
};

/* bench_main.c: this program's path, to run itself (strace, callgrind, ctxmem) */
const char *bench_self_path(void);

/* bench_pump.c */
uint64_t bench_pump(const struct bench_queue *q, unsigned batch, unsigned depth, uint64_t max_tasks,
		    uint64_t deadline, unsigned every);
size_t bench_latency_loop(const struct bench_queue *q, double *lat, size_t cap, uint64_t deadline,
			  uint64_t *ns);
/** Source/destination pairs for @p size bytes and up to @p depth in flight. */
size_t bench_slots(size_t size, unsigned depth);
#define BENCH_LAT_CAP (1u << 20) /* latency samples per repetition, at most */

/* bench_cli.c */
int bench_parse(int argc, char **argv, struct bench_opts *o, const char **cmd);

/* bench_time.c */
uint64_t bench_now_ns(void);
int bench_pin_self(int cpu);
int bench_cpu_count(void);
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_progress_done(void);
_Noreturn void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *bench_alloc_aligned(size_t len);
void bench_fill(void *p, size_t len, uint64_t seed);

/* bench_stats.c */
double bench_median(double *v, size_t n);
double bench_percentile(double *v, size_t n, double pct);

/* bench_runner.c: measure @p n contenders on @p bc; contender 0 is ours. */
void bench_run_case(const struct bench_opts *o, const struct bench_case *bc,
		    struct bench_contender *cs, size_t n);
const struct bench_result *bench_results(size_t *n);
const struct bench_result *bench_find(const char *scenario, size_t size, unsigned batch,
				      unsigned threads, const char *contender);
void bench_add_note(const char *scenario, const char *contender, const char *why);
/* Median over repetitions of a's tasks/s over b's (rows of one case); NAN if either is missing. */
double bench_pair_ratio(const struct bench_result *a, const struct bench_result *b);
/* Note "<a>/<b> = ratio" on the row of @p a in the case last measured, against its row of @p b. */
void bench_note_ratio(const char *a, const char *b);

/* bench_alloc.c: bytes allocated so far by the calling thread, < 0 unknown */
double bench_thread_allocated(void);
const char *bench_alloc_method(void);

/* bench_report.c */
void bench_report(const struct bench_opts *o, double syscalls_per_task, const char *syscalls_line);
/* The instruction counts of bench_instr for the MET/MISSED list (default: not measured). */
void bench_report_instr(double task, double burst);

/* bench_plot.c */
void bench_plot(const struct bench_opts *o, const char *stamp);

/* bench_syscalls.c: syscalls per task of the inline loop under strace */
double bench_syscalls(const char *self, unsigned batch, char *line, size_t cap);
#define BENCH_LOOP_BEGIN "doca-loop-go" /* under 16 bytes: a thread name */
#define BENCH_LOOP_END "doca-loop-end"
/* A system call naming @p what (the thread's name), for bench_syscalls to
 * count only the calls made between the two marks. */
void bench_syscall_marker(const char *what);

/* bench_instr.c: instructions per task of both loop shapes under callgrind,
 * printed unless @p quiet, stored in per_task[0] (task) and [1] (burst), NAN
 * if not measured; @return 0, or 1 when valgrind could not measure */
int bench_instr(const char *self, unsigned batch, bool quiet, double per_task[2]);
#define BENCH_INSTR_TASK_GOAL 250.0  /* issue 12: instructions per task, per-task calls */
#define BENCH_INSTR_BURST_GOAL 150.0 /* issue 12: instructions per task, burst calls */

/* scenario_*.c */
void scenario_inline(const struct bench_opts *o);
void scenario_offload(const struct bench_opts *o);
void scenario_latency(const struct bench_opts *o);
void scenario_mailbox(const struct bench_opts *o);
void scenario_scaling(const struct bench_opts *o);
void scenario_events(const struct bench_opts *o);
void scenario_contexts(const struct bench_opts *o);
void scenario_watched(const struct bench_opts *o);
void scenario_remote(const struct bench_opts *o);

/* ours_*.c and peer_*.c: each fills a contender */
void ours_copy_contender(struct bench_contender *c, const char *dev_open);
void ours_copy_per_event_contender(struct bench_contender *c, const char *dev_open);
void ours_latency_contender(struct bench_contender *c);
void ours_mailbox_contender(struct bench_contender *c);
void ours_mailbox_baseline_contender(struct bench_contender *c, unsigned submitters);
void ours_shape_contender(struct bench_contender *c, const char *shape);
void ours_scaling_contender(struct bench_contender *c, unsigned cpus);
void ours_events_contender(struct bench_contender *c, bool producer);
/** @p nctx started contexts on one PE, one active: empty progress calls (busy
 *  false) or the active one's tasks (busy true). */
void ours_contexts_contender(struct bench_contender *c, const char *dev_open, unsigned nctx, bool busy);
/** The ctxmem command: print the RSS bytes each of --contexts idle started
 *  contexts on --dev adds, measured in this fresh process. */
int ours_ctxmem(const struct bench_opts *o);
/** A foreign submitter's tasks to one context while @p w other contexts of
 *  its PE are watched (the watched scenario). */
void ours_watched_contender(struct bench_contender *c, unsigned w);
/** The pump alone on @p dev_open (ours_copy.c); *empty: reaps that found
 *  nothing (an engine device's, each followed by a yield). */
uint64_t ours_pump_loop(const char *dev_open, size_t size, unsigned batch, unsigned depth, uint64_t tasks,
			uint64_t *empty);
uint64_t ours_shape_loop(const char *shape, size_t size, unsigned batch, uint64_t tasks);
void peer_memcpy_contender(struct bench_contender *c);
void peer_dpdk_contender(struct bench_contender *c, bool latency);
void peer_uring_contender(struct bench_contender *c);
void peer_ck_pingpong_contender(struct bench_contender *c);
void peer_ck_spsc_contender(struct bench_contender *c);
void peer_dpdk_cleanup(void);
struct remote_target;
void ours_remote_contender(struct bench_contender *c, const struct remote_target *t);
void peer_fabric_contender(struct bench_contender *c, const struct remote_target *t);

/* CPUs: the application thread and the "other" CPU (engine, peer worker). */
#define BENCH_APP_CPU 0
#define BENCH_OTHER_CPU 1
/* Device open strings: inline (copies inside doca_pe_progress) and offload
 * (one engine thread pinned to the other CPU). */
#define BENCH_INLINE_DEV "sw0"
#define BENCH_OFFLOAD_DEV "sw0:engines=1,cpus=1"

#endif /* BENCH_H */
