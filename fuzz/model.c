/*
 * fuzz/model.c — the reference model (see model.h). Every rule below cites
 * the contract it restates; checks are written in the contract's order.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

/* 300 characters: longer than the 255 an open string may have. */
static char long_name[301];

const struct m_devstr m_devstrs[] = {
	{ "sw0", DOCA_SUCCESS, 0, 0 },
	{ "sw0:fail_every=3", DOCA_SUCCESS, 3, 0 },
	{ "sw0:partial_every=2", DOCA_SUCCESS, 0, 2 },
	/* descriptor 4k is selected by both: it fails (doca_dev.h) */
	{ "sw0:fail_every=4,partial_every=2", DOCA_SUCCESS, 4, 2 },
	{ "sw0:engines=0,fail_every=1", DOCA_SUCCESS, 1, 0 },
	{ "sw0:partial_every=1", DOCA_SUCCESS, 0, 1 },
	{ NULL, DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ long_name, DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ ":fail_every=1", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:bogus=1", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:fail_every=1000000001", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:fail_every=-1", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:fail_every=", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:engines=65", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:delay_us=10000001", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:engines=1,engines=2", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:cpus=99", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "sw0:\xff\xfe=1", DOCA_ERROR_INVALID_VALUE, 0, 0 },
	{ "nosuchdev0", DOCA_ERROR_NOT_FOUND, 0, 0 },
	{ "\xff\xfe", DOCA_ERROR_NOT_FOUND, 0, 0 },
	{ "sw0,fail_every=1", DOCA_ERROR_NOT_FOUND, 0, 0 },
};
const size_t m_devstr_count = sizeof(m_devstrs) / sizeof(m_devstrs[0]);

/* ---- small helpers ---- */

static void list_init(struct m_list *l)
{
	l->head = l->tail = -1;
	l->n = 0;
}

static void list_push(struct model *m, struct m_list *l, int t)
{
	m->task[t].next = -1;
	if (l->tail >= 0)
		m->task[l->tail].next = t;
	else
		l->head = t;
	l->tail = t;
	l->n++;
}

static int list_pop(struct model *m, struct m_list *l)
{
	int t = l->head;

	if (t < 0)
		return -1;
	l->head = m->task[t].next;
	if (l->head < 0)
		l->tail = -1;
	l->n--;
	return t;
}

static struct m_rec *trace_push(struct model *m, enum m_rec_kind kind, int c)
{
	struct m_rec *r = &m->trace[m->trace_tail++ % M_TRACE];

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->ctx = c;
	return r;
}

struct m_rec *m_trace_pop(struct model *m)
{
	if (m->trace_head == m->trace_tail)
		return NULL;
	return &m->trace[m->trace_head++ % M_TRACE];
}

bool m_trace_empty(const struct model *m)
{
	return m->trace_head == m->trace_tail;
}

/* A state transition, reported to the state callback when the ctx has one. */
static void set_state(struct model *m, int c, enum doca_ctx_state next)
{
	struct m_ctx *x = &m->ctx[c];

	if (x->state_cb) {
		struct m_rec *r = trace_push(m, REC_STATE, c);

		r->prev = x->state;
		r->next = next;
	}
	x->state = next;
}

/* The ctx got work: it joins its PE's ready set unless it is in it. */
static void signal_ready(struct model *m, int c)
{
	struct m_ctx *x = &m->ctx[c];
	struct m_pe *pe = &m->pe[x->pe];

	if (x->queued)
		return;
	if (pe->nsignalled == M_READY)
		abort(); /* the model's bound, not the library's */
	x->queued = true;
	pe->signalled[pe->nsignalled++] = (struct m_ready){ .ctx = c, .incarnation = x->incarnation };
}

void m_init(struct model *m)
{
	memset(long_name, 'x', sizeof(long_name) - 1);
	memset(m, 0, sizeof(*m));
	m->entry = calloc(m_devstr_count, sizeof(*m->entry));
	if (m->entry == NULL)
		abort();
	for (int c = 0; c < M_CTX; c++)
		list_init(&m->ctx[c].mailbox);
	for (int p = 0; p < M_PE; p++)
		list_init(&m->pe[p].ready);
}

void m_fini(struct model *m)
{
	free(m->entry);
	m->entry = NULL;
}

bool m_ctx_ok(const struct model *m, int c)
{
	return c >= 0 && m->ctx[c].used;
}

static bool dev_ok(const struct model *m, int d)
{
	return d >= 0 && m->dev[d].used;
}

static bool pe_ok(const struct model *m, int p)
{
	return p >= 0 && m->pe[p].used;
}

bool m_mem_ok(const struct model *m, int i)
{
	return i >= 0 && m->mem[i].used;
}

bool m_buf_ok(const struct model *m, int i)
{
	return i >= 0 && m->buf[i].used;
}

/* ---- contexts (doca_ctx.h, DESIGN.md §4) ---- */

doca_error_t m_ctx_create(struct model *m, int c)
{
	if (c < 0)
		return DOCA_ERROR_INVALID_VALUE; /* NULL out-parameter */
	m->ctx[c] = (struct m_ctx){ .used = true, .state = DOCA_CTX_STATE_IDLE, .dev = -1, .pe = -1,
				    .max_tasks = DOCA_CTX_DEFAULT_MAX_TASKS,
				    .incarnation = ++m->incarnations };
	list_init(&m->ctx[c].mailbox);
	return DOCA_SUCCESS;
}

/* Destroy: IDLE, no memories, no device; it leaves its PE. */
doca_error_t m_ctx_destroy(struct model *m, int c)
{
	if (!m_ctx_ok(m, c))
		return DOCA_ERROR_INVALID_VALUE;
	struct m_ctx *x = &m->ctx[c];

	if (x->state != DOCA_CTX_STATE_IDLE)
		return DOCA_ERROR_BAD_STATE;
	if (x->nr_mems != 0 || x->dev >= 0)
		return DOCA_ERROR_IN_USE;
	if (x->pe >= 0) {
		struct m_pe *pe = &m->pe[x->pe];

		/* the library's member array: the last entry fills the hole */
		for (uint32_t i = 0; i < pe->count; i++) {
			if (pe->members[i] == c) {
				pe->members[i] = pe->members[--pe->count];
				break;
			}
		}
	}
	x->used = false;
	return DOCA_SUCCESS;
}

/* Configuration needs an IDLE ctx. */
doca_error_t m_ctx_configure(struct model *m, int c)
{
	if (!m_ctx_ok(m, c))
		return DOCA_ERROR_INVALID_VALUE;
	return m->ctx[c].state == DOCA_CTX_STATE_IDLE ? DOCA_SUCCESS : DOCA_ERROR_BAD_STATE;
}

doca_error_t m_ctx_set_dev(struct model *m, int c, int d)
{
	doca_error_t err = dev_ok(m, d) ? m_ctx_configure(m, c) : DOCA_ERROR_INVALID_VALUE;

	if (err == DOCA_SUCCESS && m->ctx[c].dev >= 0)
		err = DOCA_ERROR_NOT_PERMITTED;
	if (err == DOCA_SUCCESS)
		m->ctx[c].dev = d;
	return err;
}

doca_error_t m_ctx_set_max_tasks(struct model *m, int c, uint32_t n)
{
	doca_error_t err = n >= 1 && n <= DOCA_CTX_MAX_TASKS_LIMIT ? m_ctx_configure(m, c)
								    : DOCA_ERROR_INVALID_VALUE;

	if (err == DOCA_SUCCESS)
		m->ctx[c].max_tasks = n;
	return err;
}

void m_ctx_set_cbs(struct model *m, int c, int cb_mode, bool state_cb)
{
	m->ctx[c].cb_mode = cb_mode;
	m->ctx[c].state_cb = state_cb;
}

doca_error_t m_ctx_start(struct model *m, int c)
{
	if (!m_ctx_ok(m, c))
		return DOCA_ERROR_INVALID_VALUE;
	if (m->ctx[c].state != DOCA_CTX_STATE_IDLE)
		return DOCA_ERROR_BAD_STATE;
	if (m->ctx[c].dev < 0 || m->ctx[c].pe < 0)
		return DOCA_ERROR_NOT_CONNECTED;
	set_state(m, c, DOCA_CTX_STATE_RUNNING);
	return DOCA_SUCCESS;
}

/* Stop semantics (DESIGN.md §4): IDLE at once when nothing is outstanding. */
doca_error_t m_ctx_stop(struct model *m, int c)
{
	if (!m_ctx_ok(m, c))
		return DOCA_ERROR_INVALID_VALUE;
	switch (m->ctx[c].state) {
	case DOCA_CTX_STATE_STOPPING:
		return DOCA_ERROR_IN_PROGRESS;
	case DOCA_CTX_STATE_RUNNING:
		break;
	default:
		return DOCA_ERROR_BAD_STATE;
	}
	if (m->ctx[c].outstanding == 0) {
		set_state(m, c, DOCA_CTX_STATE_IDLE);
		return DOCA_SUCCESS;
	}
	set_state(m, c, DOCA_CTX_STATE_STOPPING);
	signal_ready(m, c); /* its PE finishes the stop */
	return DOCA_ERROR_IN_PROGRESS;
}

/* ---- devices (doca_dev.h) ---- */

doca_error_t m_dev_open(struct model *m, int d, int str)
{
	if (d < 0)
		return DOCA_ERROR_INVALID_VALUE; /* NULL out-parameter */
	if (m_devstrs[str].expect != DOCA_SUCCESS)
		return m_devstrs[str].expect;
	m->dev[d] = (struct m_dev){ .used = true, .str = str };
	m->entry[str].handles++;
	return DOCA_SUCCESS;
}

/* Close: no memories through it, every bound ctx IDLE (those get unbound). */
doca_error_t m_dev_close(struct model *m, int d, bool *last)
{
	*last = false;
	if (!dev_ok(m, d))
		return DOCA_ERROR_INVALID_VALUE;
	if (m->dev[d].nr_mems != 0)
		return DOCA_ERROR_IN_USE;
	for (int c = 0; c < M_CTX; c++)
		if (m->ctx[c].used && m->ctx[c].dev == d && m->ctx[c].state != DOCA_CTX_STATE_IDLE)
			return DOCA_ERROR_IN_USE;
	for (int c = 0; c < M_CTX; c++)
		if (m->ctx[c].used && m->ctx[c].dev == d)
			m->ctx[c].dev = -1;
	m->dev[d].used = false;
	struct m_entry *e = &m->entry[m->dev[d].str];

	if (--e->handles == 0) {
		*last = true;
		e->executed = 0; /* a later open makes a new device */
	}
	return DOCA_SUCCESS;
}

/* ---- memories and buffers (doca_mem.h, doca_buf.h) ---- */

doca_error_t m_mem_create(struct model *m, int i, int c, size_t len, uint32_t access, bool addr_ok,
			  uint8_t *region)
{
	const uint32_t all = DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE;

	if (!m_ctx_ok(m, c) || i < 0 || len == 0 || len > SIZE_MAX / 2 || access == 0 ||
	    (access & ~all) != 0 || !addr_ok)
		return DOCA_ERROR_INVALID_VALUE;
	if (m->ctx[c].dev < 0)
		return DOCA_ERROR_NOT_CONNECTED;
	struct m_mem *x = &m->mem[i];

	*x = (struct m_mem){ .used = true, .ctx = c, .dev = m->ctx[c].dev, .len = len, .access = access };
	x->shadow = region != NULL ? region : x->own; /* doca_mem_create zeroes */
	m->ctx[c].nr_mems++;
	m->dev[x->dev].nr_mems++;
	return DOCA_SUCCESS;
}

doca_error_t m_mem_destroy(struct model *m, int i)
{
	if (!m_mem_ok(m, i))
		return DOCA_ERROR_INVALID_VALUE;
	struct m_mem *x = &m->mem[i];

	if (x->nbufs != 0)
		return DOCA_ERROR_IN_USE;
	m->ctx[x->ctx].nr_mems--;
	m->dev[x->dev].nr_mems--;
	x->used = false;
	return DOCA_SUCCESS;
}

/* A window [off, off + len) of the memory, without overflow; len may be 0. */
doca_error_t m_buf_create(struct model *m, int i, int mem, size_t off, size_t len)
{
	if (!m_mem_ok(m, mem) || i < 0 || off > m->mem[mem].len || len > m->mem[mem].len - off)
		return DOCA_ERROR_INVALID_VALUE;
	m->buf[i] = (struct m_buf){ .used = true, .mem = mem, .off = off, .len = len };
	m->mem[mem].nbufs++;
	return DOCA_SUCCESS;
}

doca_error_t m_buf_destroy(struct model *m, int i)
{
	if (!m_buf_ok(m, i))
		return DOCA_ERROR_INVALID_VALUE;
	if (m->buf[i].users != 0)
		return DOCA_ERROR_IN_USE;
	m->mem[m->buf[i].mem].nbufs--;
	m->buf[i].used = false;
	return DOCA_SUCCESS;
}

/* ---- progress engines (doca_pe.h) ---- */

doca_error_t m_pe_create(struct model *m, int p)
{
	if (p < 0)
		return DOCA_ERROR_INVALID_VALUE;
	m->pe[p] = (struct m_pe){ .used = true };
	list_init(&m->pe[p].ready);
	return DOCA_SUCCESS;
}

doca_error_t m_pe_connect(struct model *m, int p, int c)
{
	if (!pe_ok(m, p) || !m_ctx_ok(m, c))
		return DOCA_ERROR_INVALID_VALUE;
	if (m->ctx[c].state != DOCA_CTX_STATE_IDLE)
		return DOCA_ERROR_BAD_STATE;
	if (m->ctx[c].pe >= 0)
		return DOCA_ERROR_NOT_PERMITTED; /* this PE or another */
	m->ctx[c].pe = p;
	m->pe[p].members[m->pe[p].count++] = c;
	return DOCA_SUCCESS;
}

doca_error_t m_pe_destroy(struct model *m, int p)
{
	if (!pe_ok(m, p))
		return DOCA_ERROR_INVALID_VALUE;
	if (m->pe[p].count != 0)
		return DOCA_ERROR_IN_USE;
	m->pe[p].used = false;
	return DOCA_SUCCESS;
}

/* ---- tasks (doca_task.h: the checks, in this order) ---- */

uint32_t m_tasks_free(const struct model *m)
{
	uint32_t n = 0;

	for (int t = 0; t < M_TASK; t++)
		n += m->task[t].where == T_FREE;
	return n;
}

uint32_t m_pe_queued(const struct model *m, int c)
{
	const struct m_pe *pe = &m->pe[m->ctx[c].pe];
	uint32_t n = 0;

	for (uint32_t i = 0; i < pe->count; i++)
		n += m->ctx[pe->members[i]].mailbox.n;
	return n;
}

doca_error_t m_submit(struct model *m, int c, int src, int dst, uint32_t type, uint32_t flags, int *task)
{
	if (!m_ctx_ok(m, c) || !m_buf_ok(m, src) || !m_buf_ok(m, dst))
		return DOCA_ERROR_INVALID_VALUE;
	struct m_ctx *x = &m->ctx[c];
	const struct m_buf *s = &m->buf[src], *d = &m->buf[dst];
	const struct m_mem *sm = &m->mem[s->mem], *dm = &m->mem[d->mem];

	if (x->state != DOCA_CTX_STATE_RUNNING)
		return DOCA_ERROR_BAD_STATE;
	if (type != DOCA_TASK_COPY || (flags & ~(uint32_t)DOCA_TASK_FLAG_ALLOW_PARTIAL) != 0 || s->len == 0 ||
	    d->len == 0 || sm->ctx != c || dm->ctx != c)
		return DOCA_ERROR_INVALID_VALUE;
	if (!(sm->access & DOCA_ACCESS_FLAG_READ) || !(dm->access & DOCA_ACCESS_FLAG_WRITE))
		return DOCA_ERROR_NOT_PERMITTED;
	if (d->len < s->len && !(flags & DOCA_TASK_FLAG_ALLOW_PARTIAL))
		return DOCA_ERROR_INVALID_VALUE;
	if (x->outstanding == x->max_tasks)
		return DOCA_ERROR_AGAIN;

	int t = 0;

	while (m->task[t].where != T_FREE)
		t++; /* the harness keeps a free slot (m_tasks_free) */
	m->task[t] = (struct m_task){ .where = T_QUEUED, .id = ++m->next_id, .ctx = c, .src = src, .dst = dst,
				      .flags = flags };
	list_push(m, &x->mailbox, t);
	signal_ready(m, c);
	x->outstanding++;
	m->buf[src].users++;
	m->buf[dst].users++;
	*task = t;
	return DOCA_SUCCESS;
}

/* ---- execution: what the software device does with one descriptor ---- */

static uint8_t *buf_bytes(struct model *m, int b)
{
	return m->mem[m->buf[b].mem].shadow + m->buf[b].off;
}

/*
 * The device's Nth descriptor (counted per device from 1) fails when N is a
 * multiple of fail_every, else copies its first half when N is a multiple of
 * partial_every, else copies min(src, dst) bytes — PARTIAL/TOO_BIG when that
 * is less than the source (DOCA_TASK_FLAG_ALLOW_PARTIAL). memmove semantics.
 */
static void execute(struct model *m, struct m_task *t)
{
	int str = m->dev[m->ctx[t->ctx].dev].str;
	const struct m_devstr *ds = &m_devstrs[str];
	uint64_t k = ++m->entry[str].executed;
	size_t src_len = m->buf[t->src].len, dst_len = m->buf[t->dst].len;
	size_t len = dst_len < src_len ? dst_len : src_len;

	if (ds->fail_every != 0 && k % ds->fail_every == 0) {
		t->status = DOCA_EVENT_STATUS_FAILURE;
		t->error = DOCA_ERROR_IO_FAILED;
		t->bytes = 0;
	} else if (ds->partial_every != 0 && k % ds->partial_every == 0) {
		t->status = DOCA_EVENT_STATUS_PARTIAL;
		t->error = DOCA_ERROR_IO_FAILED;
		t->bytes = len / 2;
	} else if (len < src_len) {
		t->status = DOCA_EVENT_STATUS_PARTIAL;
		t->error = DOCA_ERROR_TOO_BIG;
		t->bytes = len;
	} else {
		t->status = DOCA_EVENT_STATUS_SUCCESS;
		t->error = DOCA_SUCCESS;
		t->bytes = len;
	}
	memmove(buf_bytes(m, t->dst), buf_bytes(m, t->src), t->bytes);
}

/* A task not started when its ctx stopped: FAILURE, SHUTDOWN, not counted. */
static void flush(struct m_task *t)
{
	t->status = DOCA_EVENT_STATUS_FAILURE;
	t->error = DOCA_ERROR_SHUTDOWN;
	t->bytes = 0;
}

/* The event is freed: its credit returns, its buffers stop being in use. */
static void release(struct model *m, int t)
{
	struct m_task *x = &m->task[t];

	m->ctx[x->ctx].outstanding--;
	m->buf[x->src].users--;
	m->buf[x->dst].users--;
	x->where = T_FREE;
	if (m->ctx[x->ctx].state == DOCA_CTX_STATE_STOPPING)
		signal_ready(m, x->ctx); /* its last credit lets the PE finish */
}

/* STOPPING → IDLE once every event of the ctx is freed. */
static void try_finalize(struct model *m, int c)
{
	if (m->ctx[c].state == DOCA_CTX_STATE_STOPPING && m->ctx[c].outstanding == 0)
		set_state(m, c, DOCA_CTX_STATE_IDLE);
}

/* An event goes to the ctx's callback (then is freed) or to the ready list. */
static void deliver(struct model *m, struct m_pe *pe, int t)
{
	struct m_task *x = &m->task[t];
	int c = x->ctx;

	if (m->ctx[c].cb_mode == CB_NONE) {
		x->where = T_READY;
		list_push(m, &pe->ready, t);
		return;
	}
	struct m_rec *r = trace_push(m, REC_EVENT, c);

	r->id = x->id;
	r->status = x->status;
	r->error = x->error;
	r->bytes = x->bytes;
	if (m->ctx[c].cb_mode == CB_STOP) {
		r->do_stop = true;
		r->stop_rc = m_ctx_stop(m, c); /* inside the callback: the event still holds its credit */
	}
	release(m, t);
}

/*
 * One turn (doca_pe.h): visit the contexts of the ready set — those kept by
 * the last turn, then those signalled since, each once — a RUNNING ctx's
 * queued tasks execute in order, a STOPPING ctx's are flushed; a ctx whose
 * visit produced events stays in the set, as does a STOPPING ctx with
 * nothing outstanding (its stop to finish), every other leaves it (the
 * kept ones in visit order, engine/pe_ready.c); then deliver every
 * completion in visit order and finish the stops whose events are all
 * freed.
 *
 * This visit order is the single-threaded owner's: every submit signals
 * (or finds queued) its context at the submit. The engine promises no
 * order across contexts (include/doca_pe.h, doca_pe_get_event): a
 * foreign thread's task on a watched SP ring signals nobody and joins
 * the order only at a turn's look (engine/pe_ready.c). The fuzzer has
 * no foreign submitter (one thread, the PE's after its first progress),
 * and its thread never writes a watched ring unannounced: outside a
 * progress call it takes the PE's guard and posts directly, its own ring
 * drained (task_guard_take, ring_own_drained); and it never submits from
 * a callback, where the guard is the turn's (the harness's event_cb only
 * stops a context). So the model's order is the engine's for what the
 * fuzzer does; a foreign submitter op would need the per-context rule.
 */
uint32_t m_progress(struct model *m, int p)
{
	if (!pe_ok(m, p))
		return 0;
	struct m_pe *pe = &m->pe[p];
	struct m_ready todo[2 * M_READY];
	uint32_t ntodo = 0;
	struct m_list done[M_CTX];
	int visited[M_CTX];
	uint32_t nvisited = 0, total = 0;

	for (uint32_t i = 0; i < pe->nkept; i++)
		todo[ntodo++] = pe->kept[i];
	for (uint32_t i = 0; i < pe->nsignalled; i++)
		todo[ntodo++] = pe->signalled[i];
	pe->nkept = pe->nsignalled = 0;
	for (uint32_t i = 0; i < ntodo; i++) {
		int c = todo[i].ctx;
		struct m_ctx *x = &m->ctx[c];
		int t;

		if (!x->used || x->incarnation != todo[i].incarnation)
			continue; /* destroyed while in the set: dropped */
		if (x->state != DOCA_CTX_STATE_RUNNING && x->state != DOCA_CTX_STATE_STOPPING) {
			x->queued = false;
			continue;
		}
		list_init(&done[nvisited]);
		while ((t = list_pop(m, &x->mailbox)) >= 0) {
			if (x->state == DOCA_CTX_STATE_RUNNING)
				execute(m, &m->task[t]);
			else
				flush(&m->task[t]);
			list_push(m, &done[nvisited], t);
			total++;
		}
		visited[nvisited++] = c;
		if (done[nvisited - 1u].n != 0 || (x->state == DOCA_CTX_STATE_STOPPING && x->outstanding == 0))
			pe->kept[pe->nkept++] = todo[i];
		else
			x->queued = false;
	}
	for (uint32_t v = 0; v < nvisited; v++) {
		int t;

		while ((t = list_pop(m, &done[v])) >= 0)
			deliver(m, pe, t);
		try_finalize(m, visited[v]);
	}
	return total;
}

int m_get_event(struct model *m, int p)
{
	if (!pe_ok(m, p))
		return -1;
	int t = list_pop(m, &m->pe[p].ready);

	if (t >= 0)
		m->task[t].where = T_HELD;
	return t;
}

uint32_t m_get_events(struct model *m, int p, bool evs_ok, uint32_t max, int *tasks)
{
	uint32_t n = 0;

	if (!evs_ok)
		return 0;
	while (n < max && (tasks[n] = m_get_event(m, p)) >= 0)
		n++;
	return n;
}

uint32_t m_get_events_ok(struct model *m, int p, bool evs_ok, bool flag_ok, uint32_t max, int *tasks,
			 bool *has_error)
{
	uint32_t n = 0;

	*has_error = false;
	if (!evs_ok || !flag_ok || !pe_ok(m, p))
		return 0;
	for (int t; n < max && (t = m->pe[p].ready.head) >= 0; n++) {
		if (m->task[t].status != DOCA_EVENT_STATUS_SUCCESS) {
			*has_error = true;
			break;
		}
		tasks[n] = m_get_event(m, p);
	}
	return n;
}

void m_event_free(struct model *m, int t)
{
	release(m, t);
}

uint32_t m_event_free_bulk(struct model *m, const int *entry, uint32_t n)
{
	uint32_t refused = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (entry[i] == ARG_NULL)
			continue;
		if (entry[i] >= 0 && m->task[entry[i]].where == T_HELD)
			m_event_free(m, entry[i]);
		else
			refused++; /* M_STALE, or freed by an earlier entry */
	}
	return refused;
}
