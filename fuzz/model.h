/*
 * fuzz/model.h — the reference model of doca-core's object graph.
 *
 * A small, deliberately naive restatement of DESIGN.md §4 and the Doxygen of
 * include/: which objects exist, their states and children, the tasks in
 * flight and the unreaped events, the bytes of every memory, and the fault
 * counter of every device. Each m_* call returns the error code the library
 * must return for the same call and, on success, applies its effect. The
 * model knows nothing of the library's code; the one execution-order choice
 * the contract leaves open (in which order a turn visits a PE's contexts) is
 * modelled after the library's documented ready set (m_progress): a turn
 * visits the contexts the last one kept, then those given work since, in
 * the order they got it.
 *
 * Handles are slot indexes into fixed tables. An argument is a slot, ARG_NULL
 * (the harness passes NULL) or ARG_WRONG (a live handle of another type).
 * The model never names a destroyed handle: a freed slot becomes ARG_NULL.
 *
 * Scope: inline software devices ("sw0" with fail_every / partial_every, no
 * delay, no engine threads) on one thread: everything is deterministic.
 */
#ifndef DOCA_FUZZ_MODEL_H
#define DOCA_FUZZ_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_core.h>

#define M_CTX 4
#define M_DEV 4
#define M_PE 2
#define M_MEM 6
#define M_BUF 8
#define M_TASK 512       /* accepted tasks whose events are not freed */
#define M_PE_QUEUED 128  /* tasks waiting for one PE turn (the library batches 256 per turn) */
#define M_MEM_MAX 256    /* largest memory the fuzzer creates */
#define M_ARENA 2        /* caller-owned regions for doca_mem_create_from */
#define M_ARENA_LEN 512
#define M_TRACE 1024     /* callbacks expected during one call */
#define M_READY 4096     /* ready-set entries, destroyed contexts' included */

#define ARG_NULL (-1)
#define ARG_WRONG (-2)
#define M_STALE (-3) /* an event handle freed before (m_event_free_bulk) */

/* One open string the fuzzer may pass to doca_dev_open, and what it means. */
struct m_devstr {
	const char *str;      /* NULL: pass NULL */
	doca_error_t expect;  /* doca_dev_open's result */
	uint32_t fail_every;  /* 0: off */
	uint32_t partial_every;
};
extern const struct m_devstr m_devstrs[];
extern const size_t m_devstr_count;

/* An intrusive FIFO of task slots. */
struct m_list {
	int head, tail; /* -1 when empty */
	uint32_t n;
};

enum m_task_where { T_FREE = 0, T_QUEUED, T_READY, T_HELD };

/* An accepted task; its event's facts once it completed. */
struct m_task {
	enum m_task_where where;
	uint64_t id;  /* the descriptor's user data */
	int ctx, src, dst;
	uint32_t flags;
	enum doca_event_status status;
	doca_error_t error;
	size_t bytes;
	int next;     /* m_list link */
};

struct m_ctx {
	bool used;
	enum doca_ctx_state state;
	int dev, pe;           /* -1: none */
	uint32_t max_tasks;
	uint32_t outstanding;  /* accepted tasks whose events are not freed */
	uint32_t nr_mems;
	int cb_mode;           /* enum m_cb_mode */
	bool state_cb;
	struct m_list mailbox; /* accepted, not yet taken by the device */
	uint32_t incarnation;  /* which create made it (ready-set entries name it) */
	bool queued;           /* in its PE's ready set */
};

/* What the event callback of a context does. */
enum m_cb_mode { CB_NONE = 0, CB_RECORD, CB_STOP, CB_MODES };

struct m_dev {
	bool used;
	int str;              /* index in m_devstrs: same string, same device */
	uint32_t nr_mems;     /* memories registered through this handle */
};

/* The device behind every handle opened with one string. */
struct m_entry {
	uint32_t handles;
	uint64_t executed;    /* descriptors executed, the fault counter */
};

/* A context in a PE's ready set; a destroyed one stays until a turn meets it. */
struct m_ready {
	int ctx;
	uint32_t incarnation;
};

struct m_pe {
	bool used;
	int members[M_CTX];   /* connected contexts */
	uint32_t count;
	/* the ready set: contexts kept by the last turn, then those signalled
	 * since, in that order (doca_pe.h) */
	struct m_ready kept[M_READY], signalled[M_READY];
	uint32_t nkept, nsignalled;
	struct m_list ready;  /* events for doca_pe_get_event, oldest first */
};

struct m_mem {
	bool used;
	int ctx, dev;
	size_t len;
	uint32_t access;
	uint32_t nbufs;
	uint8_t *shadow;      /* the model's copy of its bytes */
	uint8_t own[M_MEM_MAX];
};

struct m_buf {
	bool used;
	int mem;
	size_t off, len;
	uint32_t users;       /* unfreed events of tasks naming it */
};

/* One callback the library must make, in order. */
enum m_rec_kind { REC_EVENT, REC_STATE };
struct m_rec {
	enum m_rec_kind kind;
	int ctx;
	/* REC_EVENT: the event's facts, and whether the callback stops its ctx */
	uint64_t id;
	enum doca_event_status status;
	doca_error_t error;
	size_t bytes;
	bool do_stop;
	doca_error_t stop_rc;
	/* REC_STATE */
	enum doca_ctx_state prev, next;
};

struct model {
	struct m_ctx ctx[M_CTX];
	struct m_dev dev[M_DEV];
	struct m_pe pe[M_PE];
	struct m_mem mem[M_MEM];
	struct m_buf buf[M_BUF];
	struct m_task task[M_TASK];
	struct m_entry *entry;     /* m_devstr_count of them */
	uint8_t arena[M_ARENA][M_ARENA_LEN];
	uint64_t next_id;
	struct m_rec trace[M_TRACE];
	uint32_t trace_head, trace_tail;
	uint32_t incarnations;     /* contexts created so far */
};

void m_init(struct model *m);
void m_fini(struct model *m);

/* A slot argument that names a live object of that table. */
bool m_ctx_ok(const struct model *m, int c);
bool m_mem_ok(const struct model *m, int i);
bool m_buf_ok(const struct model *m, int i);

doca_error_t m_ctx_create(struct model *m, int c);
doca_error_t m_ctx_destroy(struct model *m, int c);
doca_error_t m_ctx_set_dev(struct model *m, int c, int d);
doca_error_t m_ctx_set_max_tasks(struct model *m, int c, uint32_t n);
/* doca_ctx_set_user_data / _set_event_cb / _set_state_changed_cb share one rule. */
doca_error_t m_ctx_configure(struct model *m, int c);
void m_ctx_set_cbs(struct model *m, int c, int cb_mode, bool state_cb);
doca_error_t m_ctx_start(struct model *m, int c);
doca_error_t m_ctx_stop(struct model *m, int c);

doca_error_t m_dev_open(struct model *m, int d, int str);
/* *last: the last handle of its string was closed (the device goes away). */
doca_error_t m_dev_close(struct model *m, int d, bool *last);

/* region: the shadow of the bytes registered (NULL for doca_mem_create). */
doca_error_t m_mem_create(struct model *m, int i, int c, size_t len, uint32_t access, bool addr_ok,
			  uint8_t *region);
doca_error_t m_mem_destroy(struct model *m, int i);
doca_error_t m_buf_create(struct model *m, int i, int mem, size_t off, size_t len);
doca_error_t m_buf_destroy(struct model *m, int i);

doca_error_t m_pe_create(struct model *m, int p);
doca_error_t m_pe_connect(struct model *m, int p, int c);
doca_error_t m_pe_destroy(struct model *m, int p);

/* *task: the accepted task's slot. */
doca_error_t m_submit(struct model *m, int c, int src, int dst, uint32_t type, uint32_t flags, int *task);
/* Tasks accepted but not yet executed on the contexts of c's PE. */
uint32_t m_pe_queued(const struct model *m, int c);
uint32_t m_tasks_free(const struct model *m);

/* One turn: the value doca_pe_progress returns; callbacks go to the trace. */
uint32_t m_progress(struct model *m, int p);
/* The oldest ready event's task slot (now held by the application), or -1. */
int m_get_event(struct model *m, int p);
/* doca_pe_get_events: m_get_event up to max times, the task slots into
 * tasks[]; 0 when the array is NULL (!evs_ok). @return how many. */
uint32_t m_get_events(struct model *m, int p, bool evs_ok, uint32_t max, int *tasks);
/* doca_pe_get_events_ok: m_get_event up to max times while the oldest
 * ready event's status is SUCCESS; *has_error true when one that is not
 * stopped it (it stays first), false otherwise; 0 and false when the
 * array or the flag is NULL (!evs_ok, !flag_ok: no flag is written then). */
uint32_t m_get_events_ok(struct model *m, int p, bool evs_ok, bool flag_ok, uint32_t max, int *tasks,
			 bool *has_error);
void m_event_free(struct model *m, int task);
/* doca_event_free_bulk, entry by entry: ARG_NULL is skipped, a held task's
 * event is freed, M_STALE and a task freed by an earlier entry are refused.
 * @return the refusals (each counted by doca_stale_handle_count). */
uint32_t m_event_free_bulk(struct model *m, const int *entry, uint32_t n);

/* Expected callbacks, consumed in order by the harness. */
struct m_rec *m_trace_pop(struct model *m);
bool m_trace_empty(const struct model *m);

#endif /* DOCA_FUZZ_MODEL_H */
