/*
 * fuzz/harness.c — the API-sequence fuzzer: runs each operation of the input
 * (ops.h) on the library and on the reference model (model.h), and abort()s
 * on the first difference in a returned error code or an observable fact:
 * context states, task pool sizes, memory and buffer geometry, every byte of
 * every memory, the order and content of events and callbacks. At the end of
 * each input everything is torn down in the seed's order (every destroy must
 * succeed) and RCU-deferred frees are flushed, so ASan/LSan see any leak.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/rcu.h"

#include "model.h"
#include "ops.h"

#define M_HELD 32 /* events the application holds at once */
#define M_DEAD 8  /* stale handles kept per kind (the most recent ones) */

/* Keep a handle that just died, for the stale-handle operations. */
#define BURY(kind, h) (H.dead_##kind[H.ndead_##kind++ % M_DEAD] = (h))

static struct {
	struct model m;
	struct doca_ctx *ctx[M_CTX];
	struct doca_dev *dev[M_DEV];
	struct doca_pe *pe[M_PE];
	struct doca_mem *mem[M_MEM];
	struct doca_buf *buf[M_BUF];
	uint8_t *mem_bytes[M_MEM];                /* the library's view of each memory */
	struct doca_event *held[M_HELD];
	int held_task[M_HELD];
	uint32_t nheld;
	/* handles the application kept after their destroy or free */
	struct doca_ctx *dead_ctx[M_DEAD];
	struct doca_mem *dead_mem[M_DEAD];
	struct doca_buf *dead_buf[M_DEAD];
	struct doca_event *dead_ev[M_DEAD];
	uint32_t ndead_ctx, ndead_mem, ndead_buf, ndead_ev;
	_Alignas(64) uint8_t arena[M_ARENA][M_ARENA_LEN]; /* caller-owned regions */
	const uint8_t *in;
	size_t left;
	uint32_t op_no;
	const char *op_name;
} H;

/* A zeroed object that is no doca handle (its first word is no magic). */
static _Alignas(64) uint32_t not_a_handle[16];
static int saved_stderr = -1;
static bool verbose; /* FUZZ_VERBOSE=1: print every call and its result (not the checks) */
static bool checking;

/* ---- reporting ---- */

__attribute__((format(printf, 1, 2), noreturn)) static void diverge(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nfuzz_api: DIVERGENCE at operation %u (%s): ", H.op_no, H.op_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void expect_rc(const char *call, doca_error_t got, doca_error_t want)
{
	if (verbose && !checking)
		fprintf(stderr, "%4u %-18s %s -> %s\n", H.op_no, H.op_name, call, doca_error_get_name(got));
	if (got != want)
		diverge("%s returned %s, the model expects %s", call, doca_error_get_name(got),
			doca_error_get_name(want));
}

/* A create or open: the code the model expects, and a handle in the
 * (free, so NULL) slot exactly when it succeeded: a refusal returns none. */
static void expect_made(const char *call, doca_error_t got, doca_error_t want, const void *slot)
{
	expect_rc(call, got, want);
	if (got != DOCA_SUCCESS && slot != NULL)
		diverge("%s refused (%s) but wrote a handle", call, doca_error_get_name(got));
	if (got == DOCA_SUCCESS && slot == NULL)
		diverge("%s succeeded but wrote no handle", call);
}

/* Unknown device names are logged (doca_dev.h); keep the fuzzer's output readable. */
static void quiet(bool on)
{
	if (saved_stderr < 0)
		return;
	if (on) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 2);
			close(null);
		}
	} else {
		dup2(saved_stderr, 2);
	}
}

/* ---- reading the input ---- */

static uint8_t next_byte(void)
{
	if (H.left == 0)
		return 0;
	H.left--;
	return *H.in++;
}

/* A handle argument: a live slot, ARG_NULL (empty slot) or ARG_WRONG. */
static int pick(int n, bool (*live)(int))
{
	int i = next_byte() % (n + 1);

	if (i == n)
		return ARG_WRONG;
	return live(i) ? i : ARG_NULL;
}

static bool live_ctx(int i) { return H.m.ctx[i].used; }
static bool live_dev(int i) { return H.m.dev[i].used; }
static bool live_pe(int i) { return H.m.pe[i].used; }
static bool live_mem(int i) { return H.m.mem[i].used; }
static bool live_buf(int i) { return H.m.buf[i].used; }

/* The first free slot, or -1 (the operation is skipped). */
static int free_slot(int n, bool (*live)(int))
{
	for (int i = 0; i < n; i++)
		if (!live(i))
			return i;
	return -1;
}

/* A live handle of another type than `self`, else a zeroed non-handle. */
static void *wrong_handle(const void *const *self)
{
	const void *const *tables[] = { (const void *const *)H.ctx, (const void *const *)H.dev,
					(const void *const *)H.pe, (const void *const *)H.mem,
					(const void *const *)H.buf };
	const int sizes[] = { M_CTX, M_DEV, M_PE, M_MEM, M_BUF };

	for (int t = 0; t < 5; t++)
		for (int i = 0; tables[t] != self && i < sizes[t]; i++)
			if (tables[t][i] != NULL)
				return (void *)tables[t][i];
	return not_a_handle;
}

#define HANDLE(table, a) ((a) >= 0 ? H.table[a] : (a) == ARG_WRONG ? wrong_handle((const void *const *)H.table) : NULL)

/* ---- callbacks: each must be the next one the model expects ---- */

static struct m_rec *expect_callback(enum m_rec_kind kind, union doca_data ud)
{
	struct m_rec *r = m_trace_pop(&H.m);

	if (r == NULL || r->kind != kind)
		diverge("unexpected %s callback (ctx user data %llu)", kind == REC_EVENT ? "event" : "state",
			(unsigned long long)ud.u64);
	if (ud.u64 != (uint64_t)r->ctx)
		diverge("callback for ctx %llu, the model expects ctx %d", (unsigned long long)ud.u64, r->ctx);
	return r;
}

static void check_event(const struct doca_event *ev, const struct m_rec *want)
{
	if (doca_event_get_ctx(ev) != H.ctx[want->ctx])
		diverge("event of another ctx (expected ctx %d)", want->ctx);
	if (doca_event_get_user_data(ev).u64 != want->id)
		diverge("event of task %llu, the model expects task %llu",
			(unsigned long long)doca_event_get_user_data(ev).u64, (unsigned long long)want->id);
	if (doca_event_get_type(ev) != DOCA_TASK_COPY)
		diverge("task %llu: event type %d", (unsigned long long)want->id, (int)doca_event_get_type(ev));
	if (doca_event_get_status(ev) != want->status || doca_event_get_error(ev) != want->error ||
	    doca_event_get_bytes(ev) != want->bytes)
		diverge("task %llu: event status %d / %s / %zu bytes, the model expects %d / %s / %zu bytes",
			(unsigned long long)want->id, (int)doca_event_get_status(ev),
			doca_error_get_name(doca_event_get_error(ev)), doca_event_get_bytes(ev), (int)want->status,
			doca_error_get_name(want->error), want->bytes);
}

static void event_cb(struct doca_event *ev, union doca_data ud)
{
	struct m_rec *r = expect_callback(REC_EVENT, ud);

	check_event(ev, r);
	if (verbose)
		fprintf(stderr, "%4u %-18s event callback, task %llu: status %d, %s, %zu bytes\n", H.op_no,
			H.op_name, (unsigned long long)r->id, (int)r->status, doca_error_get_name(r->error), r->bytes);
	if (r->do_stop)
		expect_rc("doca_ctx_stop (in an event callback)", doca_ctx_stop(H.ctx[r->ctx]), r->stop_rc);
}

static void state_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev, enum doca_ctx_state next)
{
	struct m_rec *r = expect_callback(REC_STATE, ud);
	enum doca_ctx_state now = (enum doca_ctx_state)-1;

	if (ctx != H.ctx[r->ctx] || prev != r->prev || next != r->next)
		diverge("ctx %d reported %d -> %d, the model expects %d -> %d", r->ctx, prev, next, r->prev, r->next);
	if (doca_ctx_get_state(ctx, &now) != DOCA_SUCCESS || now != next)
		diverge("ctx %d is in state %d inside the callback reporting %d", r->ctx, now, next);
}

/* ---- value tables of the variant bytes ---- */

/* Valid pools stay small: a DOCA_CTX_MAX_TASKS_LIMIT pool is ~300 MB per
 * start under ASan (tests/reliability covers the limits instead). */
static const uint32_t max_tasks_values[] = { 1, 2, 3, 8, 64, 0, 1024, DOCA_CTX_MAX_TASKS_LIMIT + 1, UINT32_MAX };
static const size_t mem_len_values[] = { 1, 2, 16, 64, 100, M_MEM_MAX, 0, SIZE_MAX / 2 + 1, SIZE_MAX };
static const uint32_t access_values[] = { DOCA_ACCESS_FLAG_READ, DOCA_ACCESS_FLAG_WRITE,
					  DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, 0, 4,
					  DOCA_ACCESS_FLAG_READ | 8 };
#define PICK(table) (table[next_byte() % (sizeof(table) / sizeof(table[0]))])

/* ---- operations ---- */

static void op_ctx_create(void)
{
	int slot = free_slot(M_CTX, live_ctx);
	bool null_out = next_byte() % 8 == 7;

	if (slot < 0)
		return;
	doca_error_t want = m_ctx_create(&H.m, null_out ? ARG_NULL : slot);

	doca_error_t rc = doca_ctx_create(null_out ? NULL : &H.ctx[slot]);

	expect_made("doca_ctx_create", rc, want, H.ctx[slot]);
}

static void op_ctx_destroy(void)
{
	int c = pick(M_CTX, live_ctx);
	doca_error_t want = m_ctx_destroy(&H.m, c);

	expect_rc("doca_ctx_destroy", doca_ctx_destroy(HANDLE(ctx, c)), want);
	if (want == DOCA_SUCCESS) {
		BURY(ctx, H.ctx[c]);
		H.ctx[c] = NULL;
	}
}

static void op_ctx_set_dev(void)
{
	int c = pick(M_CTX, live_ctx), d = pick(M_DEV, live_dev);
	doca_error_t want = m_ctx_set_dev(&H.m, c, d);

	expect_rc("doca_ctx_set_dev", doca_ctx_set_dev(HANDLE(ctx, c), HANDLE(dev, d)), want);
}

static void op_ctx_set_max(void)
{
	int c = pick(M_CTX, live_ctx);
	uint32_t n = PICK(max_tasks_values);
	doca_error_t want = m_ctx_set_max_tasks(&H.m, c, n);

	expect_rc("doca_ctx_set_max_tasks", doca_ctx_set_max_tasks(HANDLE(ctx, c), n), want);
}

static void op_ctx_set_cbs(void)
{
	int c = pick(M_CTX, live_ctx);
	uint8_t mode = next_byte();
	int cb_mode = (mode & 3) % CB_MODES;
	bool state = (mode & 4) != 0;
	doca_error_t want = m_ctx_configure(&H.m, c);
	struct doca_ctx *h = HANDLE(ctx, c);

	expect_rc("doca_ctx_set_user_data", doca_ctx_set_user_data(h, (union doca_data){ .u64 = (uint64_t)c }),
		  want);
	expect_rc("doca_ctx_set_event_cb", doca_ctx_set_event_cb(h, cb_mode != CB_NONE ? event_cb : NULL), want);
	expect_rc("doca_ctx_set_state_changed_cb", doca_ctx_set_state_changed_cb(h, state ? state_cb : NULL),
		  want);
	if (want == DOCA_SUCCESS)
		m_ctx_set_cbs(&H.m, c, cb_mode, state);
}

static void op_dev_open(void)
{
	int str = next_byte() % (int)m_devstr_count;
	bool null_out = next_byte() % 8 == 7;
	int slot = free_slot(M_DEV, live_dev);

	if (slot < 0)
		return;
	doca_error_t want = m_dev_open(&H.m, null_out ? ARG_NULL : slot, str);

	quiet(want == DOCA_ERROR_NOT_FOUND);
	doca_error_t rc = doca_dev_open(m_devstrs[str].str, null_out ? NULL : &H.dev[slot]);

	quiet(false);
	expect_made("doca_dev_open", rc, want, H.dev[slot]);
}

/*
 * The device of a string goes once its last handle is closed and its retired
 * queue pairs are freed, after an RCU grace period on the library's reclaimer
 * thread. Until then a new open of the string revives it
 * with its fault counter. The model says a new open makes a new device, so
 * wait for the grace period when the counter matters.
 */
static void close_dev(int d)
{
	bool last;
	int str = d >= 0 ? H.m.dev[d].str : 0;
	bool counted = H.m.entry[str].executed != 0 &&
		       (m_devstrs[str].fail_every > 1 || m_devstrs[str].partial_every > 1);
	doca_error_t want = m_dev_close(&H.m, d, &last);

	expect_rc("doca_dev_close", doca_dev_close(HANDLE(dev, d)), want);
	if (want != DOCA_SUCCESS)
		return;
	H.dev[d] = NULL;
	if (last && counted)
		doca_rcu_barrier();
}

static void op_dev_close(void)
{
	close_dev(pick(M_DEV, live_dev));
}

/* Both creations: the model decides, then the library's view is recorded. */
static void mem_created(int slot, doca_error_t want, doca_error_t rc, const char *call, uint8_t *expect_addr)
{
	void *addr = NULL;

	if (slot < 0) {
		expect_rc(call, rc, want);
		return;
	}
	expect_made(call, rc, want, H.mem[slot]);
	if (want != DOCA_SUCCESS)
		return;
	expect_rc("doca_mem_get_addr", doca_mem_get_addr(H.mem[slot], &addr), DOCA_SUCCESS);
	if (expect_addr != NULL && addr != expect_addr)
		diverge("memory %d at %p, registered at %p", slot, addr, (void *)expect_addr);
	H.mem_bytes[slot] = addr;
}

static void op_mem_create(void)
{
	int c = pick(M_CTX, live_ctx);
	size_t len = PICK(mem_len_values);
	uint32_t access = PICK(access_values);
	int slot = free_slot(M_MEM, live_mem);
	bool null_out = next_byte() % 8 == 7;

	if (slot < 0)
		return;
	int a = null_out ? ARG_NULL : slot;
	doca_error_t want = m_mem_create(&H.m, a, c, len, access, true, NULL);

	mem_created(a, want, doca_mem_create(HANDLE(ctx, c), len, access, null_out ? NULL : &H.mem[slot]),
		    "doca_mem_create", NULL);
}

/* A region of an arena (valid), NULL, or one whose end overflows. */
static void op_mem_create_from(void)
{
	int c = pick(M_CTX, live_ctx);
	uint8_t where = next_byte();
	size_t off = next_byte() % M_ARENA_LEN;
	size_t len = PICK(mem_len_values);
	uint32_t access = PICK(access_values);
	int slot = free_slot(M_MEM, live_mem);
	int arena = where % M_ARENA;
	uint8_t *addr = H.arena[arena] + off;
	bool addr_ok = true;

	if (slot < 0)
		return;
	if (where % 8 == 6) {
		addr = NULL;
		addr_ok = false;
	} else if (where % 8 == 7) {
		addr = (uint8_t *)(UINTPTR_MAX - 16);
		len = 64; /* addr + len overflows: refused, never touched */
		addr_ok = false;
	} else if (len != 0 && len <= SIZE_MAX / 2 && len > M_ARENA_LEN - off) {
		len = M_ARENA_LEN - off; /* never register bytes that are not ours */
	}
	doca_error_t want = m_mem_create(&H.m, slot, c, len, access, addr_ok, H.m.arena[arena] + off);

	mem_created(slot, want, doca_mem_create_from(HANDLE(ctx, c), addr, len, access, &H.mem[slot]),
		    "doca_mem_create_from", addr);
}

static void op_mem_destroy(void)
{
	int i = pick(M_MEM, live_mem);
	doca_error_t want = m_mem_destroy(&H.m, i);

	expect_rc("doca_mem_destroy", doca_mem_destroy(HANDLE(mem, i)), want);
	if (want == DOCA_SUCCESS) {
		BURY(mem, H.mem[i]);
		H.mem[i] = NULL;
		H.mem_bytes[i] = NULL;
	}
}

static void op_buf_create(void)
{
	int mem = pick(M_MEM, live_mem);
	uint8_t ov = next_byte(), lv = next_byte();
	size_t L = mem >= 0 ? H.m.mem[mem].len : 64;
	const size_t offs[] = { 0, 1, L / 2, L, L + 1, SIZE_MAX, ov % (L + 1) };
	size_t off = offs[ov % 7];
	size_t rest = off <= L ? L - off : 0;
	const size_t lens[] = { 0, 1, rest, rest + 1, SIZE_MAX, (size_t)(lv >> 3) % (rest + 1) };
	size_t len = lens[lv % 6];
	int slot = free_slot(M_BUF, live_buf);

	if (slot < 0)
		return;
	doca_error_t want = m_buf_create(&H.m, slot, mem, off, len);

	doca_error_t rc = doca_buf_create(HANDLE(mem, mem), off, len, &H.buf[slot]);

	expect_made("doca_buf_create", rc, want, H.buf[slot]);
}

static void op_buf_destroy(void)
{
	int i = pick(M_BUF, live_buf);
	doca_error_t want = m_buf_destroy(&H.m, i);

	expect_rc("doca_buf_destroy", doca_buf_destroy(HANDLE(buf, i)), want);
	if (want == DOCA_SUCCESS) {
		BURY(buf, H.buf[i]);
		H.buf[i] = NULL;
	}
}

static void op_pe_create(void)
{
	int slot = free_slot(M_PE, live_pe);

	if (slot < 0)
		return;
	doca_error_t want = m_pe_create(&H.m, slot);
	doca_error_t rc = doca_pe_create(&H.pe[slot]);

	expect_made("doca_pe_create", rc, want, H.pe[slot]);
}

static void op_pe_connect(void)
{
	int p = pick(M_PE, live_pe), c = pick(M_CTX, live_ctx);
	doca_error_t want = m_pe_connect(&H.m, p, c);

	expect_rc("doca_pe_connect_ctx", doca_pe_connect_ctx(HANDLE(pe, p), HANDLE(ctx, c)), want);
}

static void op_pe_destroy(void)
{
	int p = pick(M_PE, live_pe);
	doca_error_t want = m_pe_destroy(&H.m, p);

	expect_rc("doca_pe_destroy", doca_pe_destroy(HANDLE(pe, p)), want);
	if (want == DOCA_SUCCESS)
		H.pe[p] = NULL;
}

static void do_start(int c)
{
	doca_error_t want = m_ctx_start(&H.m, c);

	expect_rc("doca_ctx_start", doca_ctx_start(HANDLE(ctx, c)), want);
}

static void do_stop(int c)
{
	doca_error_t want = m_ctx_stop(&H.m, c);

	expect_rc("doca_ctx_stop", doca_ctx_stop(HANDLE(ctx, c)), want);
}

static void op_start(void)
{
	do_start(pick(M_CTX, live_ctx));
}

static void op_stop(void)
{
	do_stop(pick(M_CTX, live_ctx));
}

/* A task's type and flags from its descriptor variant byte. */
static void desc_variant(uint8_t v, uint32_t *type, uint32_t *flags)
{
	const uint32_t flag_values[] = { 0, DOCA_TASK_FLAG_ALLOW_PARTIAL, 0x100, DOCA_TASK_FLAG_ALLOW_PARTIAL };

	*type = (v & 0x30) == 0x30 ? (v & 0x40 ? 0u : 7u) : (uint32_t)DOCA_TASK_COPY;
	*flags = flag_values[v & 3];
}

/* Whether one more task stays within one turn's batch and the model's
 * task table (else the operation submits nothing more). */
static bool submit_has_room(int c)
{
	return !(m_ctx_ok(&H.m, c) && H.m.ctx[c].state == DOCA_CTX_STATE_RUNNING &&
		 (m_pe_queued(&H.m, c) >= M_PE_QUEUED || m_tasks_free(&H.m) == 0));
}

static struct doca_task_desc desc_of(uint32_t type, uint32_t flags, int src, int dst, int t)
{
	return (struct doca_task_desc){
		.type = (enum doca_task_type)type,
		.src = HANDLE(buf, src),
		.dst = HANDLE(buf, dst),
		.user_data = { .u64 = t >= 0 ? H.m.task[t].id : 0 },
		.flags = flags,
	};
}

static void op_submit(void)
{
	int c = pick(M_CTX, live_ctx), src = pick(M_BUF, live_buf), dst = pick(M_BUF, live_buf);
	uint8_t v = next_byte();
	uint32_t type, flags;
	bool null_desc = v == 0xff;
	int t = -1;

	desc_variant(v, &type, &flags);
	if (!submit_has_room(c))
		return;
	doca_error_t want = null_desc ? DOCA_ERROR_INVALID_VALUE : m_submit(&H.m, c, src, dst, type, flags, &t);
	struct doca_task_desc desc = desc_of(type, flags, src, dst, t);

	expect_rc("doca_task_submit", doca_task_submit(HANDLE(ctx, c), null_desc ? NULL : &desc), want);
}

/* A burst in one doca_task_submit_batch. Its count byte: 1-40 tasks
 * (more than 32 cross the call's chunk of 32), or one of four argument
 * variants (an empty burst, NULL descs with and without tasks, a NULL
 * accepted). The model submits the tasks one by one and the burst must stop
 * where the model first refuses, with that refusal and that many accepted
 * (the burst's contract: each task's handles, then the state once, then the
 * rest, in order). Chunks of 8 or more reach the device at once from the
 * PE's thread; smaller ones wait in the backlog of an inline device
 * (engine/task.c). */
static void op_submit_batch(void)
{
	enum { MOST = 40, EMPTY = 0xfc, NULL_DESCS_EMPTY, NULL_DESCS, NULL_ACCEPTED };
	struct doca_task_desc descs[MOST] = { 0 }; /* the variants pass it unfilled */
	int c = pick(M_CTX, live_ctx);
	uint8_t count = next_byte();
	uint32_t n = count >= EMPTY ? 0 : 1u + count % MOST, want_accepted = 0, accepted = MOST + 1u;
	doca_error_t want = DOCA_SUCCESS;

	if (count >= EMPTY) {
		/* nothing submitted: the ctx is looked at only when descs and
		 * accepted are there; the model's state is not touched */
		bool bad_args = count == NULL_DESCS || count == NULL_ACCEPTED;

		want = bad_args ? DOCA_ERROR_INVALID_VALUE :
		       m_ctx_ok(&H.m, c) ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
		if (count == NULL_ACCEPTED) {
			expect_rc("doca_task_submit_batch", doca_task_submit_batch(HANDLE(ctx, c), descs, 1, NULL),
				  want);
			return;
		}
		expect_rc("doca_task_submit_batch",
			  doca_task_submit_batch(HANDLE(ctx, c), count == EMPTY ? descs : NULL,
						 count == NULL_DESCS ? 1u : 0u, &accepted),
			  want);
		if (accepted != 0)
			diverge("doca_task_submit_batch accepted %u of no task", accepted);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		int src = pick(M_BUF, live_buf), dst = pick(M_BUF, live_buf), t = -1;
		uint32_t type, flags;

		desc_variant(next_byte(), &type, &flags);
		if (want == DOCA_SUCCESS) {
			if (!submit_has_room(c)) {
				n = i; /* the burst ends here */
				break;
			}
			want = m_submit(&H.m, c, src, dst, type, flags, &t);
			want_accepted += want == DOCA_SUCCESS;
		}
		descs[i] = desc_of(type, flags, src, dst, t);
	}
	if (n == 0)
		return;
	expect_rc("doca_task_submit_batch", doca_task_submit_batch(HANDLE(ctx, c), descs, n, &accepted), want);
	if (accepted != want_accepted)
		diverge("doca_task_submit_batch accepted %u of %u, the model %u", accepted, n, want_accepted);
}

static void do_progress(int p)
{
	uint32_t want = m_progress(&H.m, p);
	uint32_t got = doca_pe_progress(HANDLE(pe, p));

	if (verbose)
		fprintf(stderr, "%4u %-18s doca_pe_progress -> %u\n", H.op_no, H.op_name, got);
	if (got != want)
		diverge("doca_pe_progress returned %u, the model expects %u", got, want);
}

static void op_progress(void)
{
	do_progress(pick(M_PE, live_pe));
}

static void hold(struct doca_event *ev, int t)
{
	H.held[H.nheld] = ev;
	H.held_task[H.nheld++] = t;
}

/* Returns false when no event was ready. */
static bool do_get_event(int p)
{
	int t = m_get_event(&H.m, p);
	struct doca_event *ev = doca_pe_get_event(HANDLE(pe, p));

	if (t < 0) {
		if (ev != NULL)
			diverge("doca_pe_get_event returned task %llu, the model has no ready event",
				(unsigned long long)doca_event_get_user_data(ev).u64);
		return false;
	}
	if (ev == NULL)
		diverge("doca_pe_get_event returned NULL, the model expects task %llu",
			(unsigned long long)H.m.task[t].id);
	const struct m_task *x = &H.m.task[t];
	struct m_rec want = { .ctx = x->ctx, .id = x->id, .status = x->status, .error = x->error, .bytes = x->bytes };

	check_event(ev, &want);
	if (verbose)
		fprintf(stderr, "%4u %-18s event of task %llu: status %d, %s, %zu bytes\n", H.op_no, H.op_name,
			(unsigned long long)x->id, (int)x->status, doca_error_get_name(x->error), x->bytes);
	hold(ev, t);
	return true;
}

static void op_get_event(void)
{
	int p = pick(M_PE, live_pe);

	if (H.nheld < M_HELD)
		do_get_event(p);
}

static void do_event_free(uint32_t i)
{
	m_event_free(&H.m, H.held_task[i]);
	doca_event_free(H.held[i]);
	BURY(ev, H.held[i]);
	H.nheld--;
	H.held[i] = H.held[H.nheld];
	H.held_task[i] = H.held_task[H.nheld];
}

static void op_event_free(void)
{
	uint8_t b = next_byte();

	if (H.nheld == 0)
		doca_event_free(NULL); /* documented: ignored */
	else
		do_event_free(b % H.nheld);
}

/* The burst getters' outcome: @p got events returned where the model
 * expects @p want, the model's tasks[] in its order (each held after
 * check_event), nothing written past the count (evs was filled with
 * not_a_handle). @p call and @p how name the call for the messages. */
static void check_burst(const char *call, const char *how, uint32_t got, uint32_t want,
			struct doca_event *const *evs, const int *tasks)
{
	if (verbose)
		fprintf(stderr, "%4u %-18s %s(%s) -> %u\n", H.op_no, H.op_name, call, how, got);
	if (got != want)
		diverge("%s(%s) returned %u, the model expects %u", call, how, got, want);
	for (uint32_t i = got; i <= M_HELD; i++)
		if (evs[i] != (struct doca_event *)not_a_handle)
			diverge("%s returned %u and wrote entry %u", call, got, i);
	for (uint32_t i = 0; i < got; i++) {
		const struct m_task *x = &H.m.task[tasks[i]];
		struct m_rec r = { .ctx = x->ctx, .id = x->id, .status = x->status, .error = x->error,
				   .bytes = x->bytes };

		check_event(evs[i], &r);
		hold(evs[i], tasks[i]);
	}
}

/* The burst getters' max: 0, 1, 3, 8, or all the room the application
 * has (usually more than is ready), for variant @p v (0..4). */
static uint32_t burst_max(uint8_t v)
{
	static const uint32_t max_values[] = { 0, 1, 3, 8, M_HELD };
	uint32_t room = M_HELD - H.nheld;

	return max_values[v] < room ? max_values[v] : room;
}

/*
 * doca_pe_get_events with max 0, 1, 3, 8, all the room the application has
 * (usually more than is ready), or a NULL array: the same events, in the same
 * order, as the model's m_get_event calls; nothing written past the count.
 */
static void op_get_events(void)
{
	int p = pick(M_PE, live_pe);
	uint8_t v = next_byte() % 6;
	bool null_array = v == 5;
	uint32_t max = burst_max(null_array ? 4 : v);
	struct doca_event *evs[M_HELD + 1];
	int tasks[M_HELD];
	char how[40];

	for (uint32_t i = 0; i <= M_HELD; i++)
		evs[i] = (struct doca_event *)not_a_handle;
	uint32_t want = m_get_events(&H.m, p, !null_array, max, tasks);
	uint32_t got = doca_pe_get_events(HANDLE(pe, p), null_array ? NULL : evs, max);

	snprintf(how, sizeof(how), "max %u%s", max, null_array ? ", NULL array" : "");
	check_burst("doca_pe_get_events", how, got, want, evs, tasks);
}

/*
 * doca_pe_get_events_ok with the same max variants and a NULL array, or a
 * NULL has_error: the model's successes before its first ready event that
 * did not succeed, in its order, and has_error exactly when the call
 * stopped there (m_get_events_ok); a refused call takes nothing and
 * clears has_error.
 */
static void op_get_events_ok(void)
{
	int p = pick(M_PE, live_pe);
	uint8_t v = next_byte() % 7;
	bool null_array = v == 5, null_flag = v == 6;
	uint32_t max = burst_max(v >= 5 ? 4 : v);
	struct doca_event *evs[M_HELD + 1];
	int tasks[M_HELD];
	bool want_error, has_error = true;
	char how[48];

	for (uint32_t i = 0; i <= M_HELD; i++)
		evs[i] = (struct doca_event *)not_a_handle;
	uint32_t want = m_get_events_ok(&H.m, p, !null_array, !null_flag, max, tasks, &want_error);
	uint32_t got = doca_pe_get_events_ok(HANDLE(pe, p), null_array ? NULL : evs, max,
					     null_flag ? NULL : &has_error);

	snprintf(how, sizeof(how), "max %u%s", max,
		 null_array ? ", NULL array" : null_flag ? ", NULL has_error" : "");
	check_burst("doca_pe_get_events_ok", how, got, want, evs, tasks);
	if (!null_flag && has_error != want_error)
		diverge("doca_pe_get_events_ok(%s) set has_error %d, the model expects %d", how, has_error,
			want_error);
}

/*
 * doca_event_free_bulk of up to 8 entries, each a held event (perhaps one
 * named twice), NULL, or a handle freed before; or a NULL array. Held events
 * are freed; every other non-NULL entry is refused and counted once, exactly
 * as the model says.
 */
static void op_event_free_bulk(void)
{
	enum { BULK_MAX = 8 };
	uint8_t c = next_byte();
	uint32_t n = c % (BULK_MAX + 1);
	bool null_array = (c / (BULK_MAX + 1)) % 8 == 7;
	uint32_t ndead = H.ndead_ev < M_DEAD ? H.ndead_ev : M_DEAD;
	struct doca_event *evs[BULK_MAX];
	int entry[BULK_MAX], held_at[BULK_MAX];
	bool freed[M_HELD] = { false };
	uint64_t before = doca_stale_handle_count();

	for (uint32_t i = 0; i < n; i++) {
		uint8_t e = next_byte();

		held_at[i] = -1;
		if (e % 8 == 7 || (e % 8 == 6 && ndead == 0) || (e % 8 < 6 && H.nheld == 0)) {
			evs[i] = NULL;
			entry[i] = ARG_NULL;
		} else if (e % 8 == 6) {
			evs[i] = H.dead_ev[(e / 8) % ndead];
			entry[i] = M_STALE;
		} else {
			held_at[i] = (int)((e / 8) % H.nheld);
			evs[i] = H.held[held_at[i]];
			entry[i] = H.held_task[held_at[i]];
		}
	}
	if (null_array) {
		doca_event_free_bulk(NULL, n); /* documented: ignored */
		return;
	}
	uint32_t refused = m_event_free_bulk(&H.m, entry, n);

	quiet(refused != 0);
	doca_event_free_bulk(evs, n);
	quiet(false);
	if (verbose)
		fprintf(stderr, "%4u %-18s doca_event_free_bulk(%u entries): %u refused\n", H.op_no, H.op_name, n,
			refused);
	if (doca_stale_handle_count() != before + refused)
		diverge("doca_event_free_bulk: stale count %llu -> %llu, the model expects %u refusals",
			(unsigned long long)before, (unsigned long long)doca_stale_handle_count(), refused);
	/* Drop the freed events from the held table, keeping the rest. */
	for (uint32_t i = 0; i < n; i++)
		if (held_at[i] >= 0)
			freed[held_at[i]] = true;
	uint32_t kept = 0;

	for (uint32_t i = 0; i < H.nheld; i++) {
		if (freed[i]) {
			BURY(ev, H.held[i]);
			continue;
		}
		H.held[kept] = H.held[i];
		H.held_task[kept++] = H.held_task[i];
	}
	H.nheld = kept;
}

/* A refused call with a stale handle: exactly one more stale handle
 * counted; check_all then proves nothing else changed. */
static void expect_stale(const char *call, doca_error_t got, uint64_t before)
{
	expect_rc(call, got, DOCA_ERROR_INVALID_VALUE);
	if (doca_stale_handle_count() != before + 1)
		diverge("%s with a stale handle: stale count %llu -> %llu, expected one more", call,
			(unsigned long long)before, (unsigned long long)doca_stale_handle_count());
}

/* Free again an event freed before (its slot may hold a newer event now). */
static void op_stale_event_free(void)
{
	uint8_t b = next_byte();
	uint64_t before = doca_stale_handle_count();
	uint32_t n = H.ndead_ev < M_DEAD ? H.ndead_ev : M_DEAD;

	if (n == 0)
		return;
	quiet(true);
	doca_event_free(H.dead_ev[b % n]);
	quiet(false);
	if (doca_stale_handle_count() != before + 1)
		diverge("a stale doca_event_free was not refused and counted once");
}

/* Destroy again a destroyed context, memory or buffer, or submit with a
 * destroyed buffer. */
static void op_stale_use(void)
{
	uint8_t kind = next_byte(), b = next_byte();
	uint64_t before = doca_stale_handle_count();
	uint32_t nc = H.ndead_ctx < M_DEAD ? H.ndead_ctx : M_DEAD;
	uint32_t nm = H.ndead_mem < M_DEAD ? H.ndead_mem : M_DEAD;
	uint32_t nb = H.ndead_buf < M_DEAD ? H.ndead_buf : M_DEAD;
	int c = pick(M_CTX, live_ctx);

	quiet(true);
	if (kind % 4 == 0 && nc != 0) {
		expect_stale("doca_ctx_destroy", doca_ctx_destroy(H.dead_ctx[b % nc]), before);
	} else if (kind % 4 == 1 && nm != 0) {
		expect_stale("doca_mem_destroy", doca_mem_destroy(H.dead_mem[b % nm]), before);
	} else if (kind % 4 == 2 && nb != 0) {
		expect_stale("doca_buf_destroy", doca_buf_destroy(H.dead_buf[b % nb]), before);
	} else if (kind % 4 == 3 && nb != 0 && c >= 0) {
		struct doca_task_desc d = { .type = DOCA_TASK_COPY, .src = H.dead_buf[b % nb],
					    .dst = H.dead_buf[(b + 1u) % nb] };

		expect_stale("doca_task_submit", doca_task_submit(H.ctx[c], &d), before);
	}
	quiet(false);
}

static void op_fill(void)
{
	int i = pick(M_MEM, live_mem);
	uint8_t seed = next_byte();

	if (i < 0)
		return;
	for (size_t k = 0; k < H.m.mem[i].len; k++)
		H.mem_bytes[i][k] = H.m.mem[i].shadow[k] = (uint8_t)(seed + k * 31u);
}

/* ---- after every operation: every observable fact matches ---- */

static void check_all(void)
{
	checking = true;
	if (!m_trace_empty(&H.m))
		diverge("a callback the model expects did not happen (ctx %d)", H.m.trace[H.m.trace_head % M_TRACE].ctx);
	for (int c = 0; c < M_CTX; c++) {
		enum doca_ctx_state s;
		uint32_t n;

		if (!H.m.ctx[c].used)
			continue;
		expect_rc("doca_ctx_get_state", doca_ctx_get_state(H.ctx[c], &s), DOCA_SUCCESS);
		if (s != H.m.ctx[c].state)
			diverge("ctx %d is in state %d, the model says %d", c, s, H.m.ctx[c].state);
		expect_rc("doca_ctx_get_max_tasks", doca_ctx_get_max_tasks(H.ctx[c], &n), DOCA_SUCCESS);
		if (n != H.m.ctx[c].max_tasks)
			diverge("ctx %d has %u tasks, the model says %u", c, n, H.m.ctx[c].max_tasks);
	}
	for (int i = 0; i < M_MEM; i++) {
		size_t len;

		if (!H.m.mem[i].used)
			continue;
		expect_rc("doca_mem_get_len", doca_mem_get_len(H.mem[i], &len), DOCA_SUCCESS);
		if (len != H.m.mem[i].len)
			diverge("memory %d has %zu bytes, the model says %zu", i, len, H.m.mem[i].len);
		for (size_t k = 0; k < len; k++)
			if (H.mem_bytes[i][k] != H.m.mem[i].shadow[k])
				diverge("memory %d byte %zu is 0x%02x, the model says 0x%02x", i, k,
					H.mem_bytes[i][k], H.m.mem[i].shadow[k]);
	}
	for (int i = 0; i < M_BUF; i++) {
		size_t len;
		void *data;

		if (!H.m.buf[i].used)
			continue;
		expect_rc("doca_buf_get_len", doca_buf_get_len(H.buf[i], &len), DOCA_SUCCESS);
		expect_rc("doca_buf_get_data", doca_buf_get_data(H.buf[i], &data), DOCA_SUCCESS);
		if (len != H.m.buf[i].len || data != H.mem_bytes[H.m.buf[i].mem] + H.m.buf[i].off)
			diverge("buffer %d is %p+%zu, the model says offset %zu length %zu", i, data, len,
				H.m.buf[i].off, H.m.buf[i].len);
	}
	checking = false;
}

/* ---- teardown: the seed's order; every step must succeed ---- */

static bool all_idle(void)
{
	for (int c = 0; c < M_CTX; c++)
		if (H.m.ctx[c].used && H.m.ctx[c].state != DOCA_CTX_STATE_IDLE)
			return false;
	return true;
}

#define TEARDOWN(n, table, destroy)                                                          \
	for (int i_ = 0; i_ < (n); i_++) {                                                    \
		if (!H.m.table[i_].used)                                                      \
			continue;                                                             \
		destroy;                                                                      \
		if (H.m.table[i_].used)                                               \
			diverge("teardown: %s %d could not be destroyed", #table, i_);        \
	}

static void teardown(void)
{
	H.op_name = "teardown";
	while (H.nheld > 0)
		do_event_free(0);
	for (int round = 0; round < 4 && !all_idle(); round++) {
		for (int c = 0; c < M_CTX; c++)
			if (H.m.ctx[c].used && H.m.ctx[c].state == DOCA_CTX_STATE_RUNNING)
				do_stop(c);
		for (int p = 0; p < M_PE; p++) {
			if (!H.m.pe[p].used)
				continue;
			do_progress(p);
			while (do_get_event(p))
				do_event_free(0);
		}
		check_all();
	}
	if (!all_idle())
		diverge("teardown: a ctx did not reach IDLE");
	TEARDOWN(M_BUF, buf, {
		expect_rc("doca_buf_destroy", doca_buf_destroy(H.buf[i_]), m_buf_destroy(&H.m, i_));
		H.buf[i_] = NULL;
	});
	TEARDOWN(M_MEM, mem, {
		expect_rc("doca_mem_destroy", doca_mem_destroy(H.mem[i_]), m_mem_destroy(&H.m, i_));
		H.mem[i_] = NULL;
	});
	TEARDOWN(M_DEV, dev, close_dev(i_));
	TEARDOWN(M_CTX, ctx, {
		expect_rc("doca_ctx_destroy", doca_ctx_destroy(H.ctx[i_]), m_ctx_destroy(&H.m, i_));
		H.ctx[i_] = NULL;
	});
	TEARDOWN(M_PE, pe, {
		expect_rc("doca_pe_destroy", doca_pe_destroy(H.pe[i_]), m_pe_destroy(&H.m, i_));
		H.pe[i_] = NULL;
	});
	/* RCU-deferred frees run later on the library's reclaimer thread; the
	 * library's exit destructor waits for them, so LSan's check at exit sees any leak. */
}

/* ---- entry points ---- */

static void (*const ops[OP_COUNT])(void) = {
	[OP_CTX_CREATE] = op_ctx_create,     [OP_CTX_DESTROY] = op_ctx_destroy,
	[OP_CTX_SET_DEV] = op_ctx_set_dev,   [OP_CTX_SET_MAX] = op_ctx_set_max,
	[OP_CTX_SET_CBS] = op_ctx_set_cbs,   [OP_DEV_OPEN] = op_dev_open,
	[OP_DEV_CLOSE] = op_dev_close,       [OP_MEM_CREATE] = op_mem_create,
	[OP_MEM_CREATE_FROM] = op_mem_create_from, [OP_MEM_DESTROY] = op_mem_destroy,
	[OP_BUF_CREATE] = op_buf_create,     [OP_BUF_DESTROY] = op_buf_destroy,
	[OP_PE_CREATE] = op_pe_create,       [OP_PE_CONNECT] = op_pe_connect,
	[OP_PE_DESTROY] = op_pe_destroy,     [OP_START] = op_start,
	[OP_STOP] = op_stop,                 [OP_SUBMIT] = op_submit,
	[OP_PROGRESS] = op_progress,         [OP_GET_EVENT] = op_get_event,
	[OP_EVENT_FREE] = op_event_free,     [OP_FILL] = op_fill,
	[OP_STALE_EVENT_FREE] = op_stale_event_free, [OP_STALE_USE] = op_stale_use,
	[OP_GET_EVENTS] = op_get_events,     [OP_EVENT_FREE_BULK] = op_event_free_bulk,
	[OP_SUBMIT_BATCH] = op_submit_batch, [OP_GET_EVENTS_OK] = op_get_events_ok,
};

static const char *const op_names[OP_COUNT] = {
	"ctx_create", "ctx_destroy", "ctx_set_dev", "ctx_set_max_tasks", "ctx_set_callbacks", "dev_open",
	"dev_close", "mem_create", "mem_create_from", "mem_destroy", "buf_create", "buf_destroy", "pe_create",
	"pe_connect_ctx", "pe_destroy", "ctx_start", "ctx_stop", "task_submit", "pe_progress", "pe_get_event",
	"event_free", "fill", "stale_event_free", "stale_use", "pe_get_events", "event_free_bulk",
	"task_submit_batch", "pe_get_events_ok",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("DOCA_LOG_LEVEL", "error", 0);
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	saved_stderr = dup(2);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	memset(&H, 0, sizeof(H));
	m_init(&H.m);
	H.in = data;
	H.left = size;
	/* the event getters' neutral values (doca_event.h) */
	if (doca_event_get_status(NULL) != DOCA_EVENT_STATUS_FAILURE ||
	    doca_event_get_error(NULL) != DOCA_ERROR_INVALID_VALUE || doca_event_get_bytes(NULL) != 0 ||
	    doca_event_get_ctx(NULL) != NULL || doca_pe_get_event(NULL) != NULL || doca_pe_progress(NULL) != 0)
		diverge("an event/PE getter's NULL value differs from doca_event.h / doca_pe.h");
	while (H.left > 0) {
		int op = next_byte() % OP_COUNT;

		H.op_no++;
		H.op_name = op_names[op];
		ops[op]();
		check_all();
	}
	teardown();
	m_fini(&H.m);
	return 0;
}
