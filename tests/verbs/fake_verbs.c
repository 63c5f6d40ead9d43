/*
 * tests/verbs/fake_verbs.c — the in-memory RC loopback device behind
 * fake_verbs.h: the fake's objects, its slow-path calls (a struct
 * verbs_calls), its context ops (post_send, poll_cq, req_notify_cq) and the
 * NIC model that executes RDMA WRITEs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw/verbs/verbs_internal.h"
#include "tests/verbs/fake_verbs.h"

#define FAKE_MAX_DEVICES 8
#define FAKE_MAX_SGE 4
#define FAKE_GID_TABLE 16

struct fake_device {
	struct ibv_device dev;
	struct fake_dev_config cfg;
};

struct fake_context {
	struct ibv_context ctx;
	struct fake_device *fdev;
	unsigned int children; /* PDs, channels, CQs */
};

struct fake_pd {
	struct ibv_pd pd;
	unsigned int users; /* MRs, QPs */
};

struct fake_mr {
	struct ibv_mr mr;
	int access;
	struct fake_mr *next;
};

struct fake_channel {
	struct ibv_comp_channel ch;
	int wfd;           /* write end of the pipe; ch.fd is the read end */
	unsigned int cqs;
};

struct fake_cq {
	struct ibv_cq cq;
	struct ibv_wc *ring;
	unsigned int head, count;
	bool armed;
	unsigned int events_got, events_acked;
	unsigned int qps;
	struct fake_cq *next;
};

struct fake_block;

static struct fake_state {
	struct fake_device devices[FAKE_MAX_DEVICES];
	int n_devices;
	struct fake_mr *mrs;
	struct fake_cq *cqs;
	struct fake_qp *qps;
	struct fake_block *blocks;
	unsigned int live;
	unsigned int next_key, next_qpn;

	unsigned int calls[FAKE_CALL_COUNT];
	unsigned int fail_at[FAKE_CALL_COUNT]; /* call number that fails, 0 = none */
	int fail_err[FAKE_CALL_COUNT];
	unsigned int wr_posted, fail_post_wr;
	int fail_post_err;
	unsigned int wr_executed, inject_wr;
	enum ibv_wc_status inject_status;
	bool hold;
	unsigned int contexts;  /* open contexts */
	bool nic_thread_wanted; /* a background NIC executes WRs (fake_verbs_nic_thread) */
	bool nic_thread_running;

	unsigned int violations;
	char violation_text[1024];
	char trace[4096];
} fake;

/*
 * One lock serializes every entry point (calls, context ops, controls): the
 * engine destroys queue pairs from its RCU thread and the background NIC
 * thread executes WRs while the PE polls. Entry points take it with
 * FAKE_GUARD() and it is released when they return; helpers assume it.
 */
static pthread_mutex_t fake_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static pthread_mutex_t *fake_lock_take(void)
{
	pthread_mutex_lock(&fake_lock);
	return &fake_lock;
}

static void fake_lock_release(pthread_mutex_t **lock)
{
	pthread_mutex_unlock(*lock);
}

#define FAKE_GUARD()                                                                   \
	pthread_mutex_t *fake_guard_ __attribute__((cleanup(fake_lock_release), unused)) = \
		fake_lock_take()

/* ---- bookkeeping ---- */

__attribute__((format(printf, 1, 2))) static void fake_violation(const char *fmt, ...)
{
	size_t used = strlen(fake.violation_text);
	va_list ap;

	fake.violations++;
	if (used + 2 >= sizeof(fake.violation_text))
		return;
	va_start(ap, fmt);
	vsnprintf(fake.violation_text + used, sizeof(fake.violation_text) - used, fmt, ap);
	va_end(ap);
	used = strlen(fake.violation_text);
	snprintf(fake.violation_text + used, sizeof(fake.violation_text) - used, "; ");
}

static void fake_trace(const char *name, const char *suffix, bool failed)
{
	size_t used = strlen(fake.trace);

	snprintf(fake.trace + used, sizeof(fake.trace) - used, "%s%s%s%s", used ? " " : "", name,
		 suffix, failed ? "!" : "");
}

/**
 * Count a call; true if it is the one chosen to fail (errno is then set).
 * @p name is traced (NULL: the call is not traced).
 */
static bool fake_enter(enum fake_call call, const char *name)
{
	bool fail = ++fake.calls[call] == fake.fail_at[call];

	if (fail) {
		fake.fail_at[call] = 0;
		errno = fake.fail_err[call];
	}
	if (name)
		fake_trace(name, "", fail);
	return fail;
}

/* Every live fake object sits behind one of these, on fake.blocks. */
struct fake_block {
	struct fake_block *next, *prev;
	max_align_t payload[];
};

static void *fake_alloc(size_t size)
{
	struct fake_block *b = calloc(1, sizeof(*b) + size);

	if (!b) {
		fprintf(stderr, "fake_verbs: out of memory\n");
		abort();
	}
	b->next = fake.blocks;
	if (b->next)
		b->next->prev = b;
	fake.blocks = b;
	fake.live++;
	return b->payload;
}

static void fake_free(void *p)
{
	struct fake_block *b = (struct fake_block *)((char *)p - offsetof(struct fake_block, payload));

	if (b->prev)
		b->prev->next = b->next;
	else
		fake.blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
	fake.live--;
	free(b);
}

static struct fake_context *fake_ctx_of(struct ibv_context *ctx)
{
	return (struct fake_context *)ctx;
}

static struct fake_cq *fake_cq_of(const struct ibv_cq *cq)
{
	return (struct fake_cq *)cq;
}

struct fake_qp *fake_qp_of(struct ibv_qp *qp)
{
	return (struct fake_qp *)qp;
}

static const struct fake_dev_config *fake_cfg_of(const struct ibv_context *ctx)
{
	return &((const struct fake_context *)ctx)->fdev->cfg;
}

/* ---- the NIC: executing WRs, completing them ---- */

static struct fake_mr *fake_find_mr(struct ibv_pd *pd, uint32_t key, bool remote, uint64_t addr,
				    uint64_t len)
{
	for (struct fake_mr *m = fake.mrs; m; m = m->next) {
		uint64_t start = (uintptr_t)m->mr.addr;

		if ((remote ? m->mr.rkey : m->mr.lkey) != key || m->mr.pd != pd)
			continue;
		if (addr < start || len > m->mr.length || addr - start > m->mr.length - len)
			return NULL;
		return m;
	}
	return NULL;
}

static void fake_cq_push(struct fake_cq *cq, struct fake_qp *qp, const struct fake_wr *wr,
			 enum ibv_wc_status status)
{
	struct fake_channel *ch = (struct fake_channel *)cq->cq.channel;
	struct ibv_wc *wc;

	if (status == IBV_WC_SUCCESS && !(wr->send_flags & IBV_SEND_SIGNALED) && !qp->init.sq_sig_all)
		return;
	if (cq->count == (unsigned int)cq->cq.cqe) {
		fake_violation("CQ overrun (%d entries)", cq->cq.cqe);
		return;
	}
	wc = &cq->ring[(cq->head + cq->count++) % (unsigned int)cq->cq.cqe];
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr->wr_id;
	wc->status = status;
	wc->opcode = IBV_WC_RDMA_WRITE;
	wc->byte_len = 0xdeadbeef; /* undefined for a send completion */
	wc->qp_num = qp->qp.qp_num;
	if (cq->armed && ch) {
		cq->armed = false;
		if (write(ch->wfd, &cq, sizeof(cq)) != (ssize_t)sizeof(cq))
			fake_violation("channel write failed");
	}
}

static bool fake_gid_eq(const union ibv_gid *a, const union ibv_gid *b)
{
	return memcmp(a->raw, b->raw, sizeof(a->raw)) == 0;
}

/** Execute one WR as the NIC would; the QP must be past RTS or in ERR. */
static enum ibv_wc_status fake_execute(struct fake_qp *qp, const struct fake_wr *wr)
{
	const struct fake_dev_config *cfg = fake_cfg_of(qp->qp.context);
	struct fake_mr *src, *dst;

	if (qp->qp.state == IBV_QPS_ERR)
		return IBV_WC_WR_FLUSH_ERR;
	if (++fake.wr_executed == fake.inject_wr)
		return fake.inject_status;
	if (wr->opcode != IBV_WR_RDMA_WRITE)
		return IBV_WC_LOC_QP_OP_ERR;
	src = fake_find_mr(qp->qp.pd, wr->lkey, false, wr->laddr, wr->length);
	if (!src)
		return IBV_WC_LOC_PROT_ERR;
	/* Loopback: the packets must reach this very QP, in sequence. */
	if (qp->dest_qp_num != qp->qp.qp_num || qp->sq_psn != qp->rq_psn ||
	    (qp->ah.is_global ? !fake_gid_eq(&qp->ah.grh.dgid, &cfg->gid) : qp->ah.dlid != cfg->lid))
		return IBV_WC_RETRY_EXC_ERR;
	dst = fake_find_mr(qp->qp.pd, wr->rkey, true, wr->raddr, wr->length);
	if (!dst || !(dst->access & IBV_ACCESS_REMOTE_WRITE) || !(qp->access & IBV_ACCESS_REMOTE_WRITE))
		return IBV_WC_REM_ACCESS_ERR;
	memmove((void *)(uintptr_t)wr->raddr, (void *)(uintptr_t)wr->laddr, wr->length);
	return IBV_WC_SUCCESS;
}

/** Execute (or flush) the oldest WR posted on @p qp; false if there is none. */
static bool fake_qp_step(struct fake_qp *qp)
{
	struct fake_wr *wr;
	enum ibv_wc_status st;

	if (!qp->sq_count)
		return false;
	wr = &qp->sq[qp->sq_head];
	st = fake_execute(qp, wr);
	qp->sq_head = (qp->sq_head + 1) % qp->init.cap.max_send_wr;
	qp->sq_count--;
	if (st != IBV_WC_SUCCESS)
		qp->qp.state = IBV_QPS_ERR;
	else if (!(wr->send_flags & IBV_SEND_SIGNALED) && !qp->init.sq_sig_all)
		qp->sq_owned--; /* no completion will free the slot */
	fake_cq_push(fake_cq_of(qp->qp.send_cq), qp, wr, st);
	return true;
}

/** Execute (or flush) every WR posted on @p qp; returns how many. */
static unsigned int fake_qp_run(struct fake_qp *qp)
{
	unsigned int n = 0;

	while (fake_qp_step(qp))
		n++;
	return n;
}

unsigned int fake_verbs_run(void)
{
	FAKE_GUARD();
	unsigned int n = 0;

	for (struct fake_qp *qp = fake.qps; qp; qp = qp->next)
		n += fake_qp_run(qp);
	return n;
}

/*
 * The background NIC: one WR of each QP per step, a few microseconds apart,
 * raising channel events like hardware. It lives while a context is open.
 */
static void *fake_nic_main(void *arg)
{
	const struct timespec pause = { .tv_nsec = 20000 };

	(void)arg;
	for (;;) {
		{
			FAKE_GUARD();
			if (!fake.contexts) {
				fake.nic_thread_running = false;
				return NULL;
			}
			for (struct fake_qp *qp = fake.qps; qp; qp = qp->next)
				fake_qp_step(qp);
		}
		nanosleep(&pause, NULL);
	}
}

static void fake_nic_thread_start(void)
{
	pthread_t thread;

	if (!fake.nic_thread_wanted || fake.nic_thread_running)
		return;
	if (pthread_create(&thread, NULL, fake_nic_main, NULL) != 0) {
		fprintf(stderr, "fake_verbs: cannot start the NIC thread\n");
		abort();
	}
	pthread_detach(thread);
	fake.nic_thread_running = true;
}

void fake_verbs_nic_thread(bool on)
{
	FAKE_GUARD();
	fake.nic_thread_wanted = on;
	fake.hold = on;
}

/* ---- context ops: the fast path ---- */

static int fake_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	FAKE_GUARD();
	struct fake_qp *qp = fake_qp_of(ibqp);
	int err = 0;

	*bad_wr = NULL;
	if (fake_enter(FAKE_POST_SEND, NULL))
		err = errno;
	else if (qp->qp.state != IBV_QPS_RTS && qp->qp.state != IBV_QPS_ERR)
		err = EINVAL;
	for (; wr && !err; wr = wr->next) {
		struct fake_wr *w;

		if (++fake.wr_posted == fake.fail_post_wr) {
			fake.fail_post_wr = 0;
			err = fake.fail_post_err;
		} else if (qp->sq_owned == qp->init.cap.max_send_wr) {
			fake_violation("post_send on a full SQ (%u WRs)", qp->sq_owned);
			err = ENOMEM;
		} else if (wr->num_sge != 1 || !wr->sg_list) {
			err = EINVAL;
		}
		if (err)
			break;
		w = &qp->sq[(qp->sq_head + qp->sq_count++) % qp->init.cap.max_send_wr];
		*w = (struct fake_wr){ .wr_id = wr->wr_id,
				       .opcode = wr->opcode,
				       .send_flags = wr->send_flags,
				       .laddr = wr->sg_list[0].addr,
				       .length = wr->sg_list[0].length,
				       .lkey = wr->sg_list[0].lkey,
				       .raddr = wr->wr.rdma.remote_addr,
				       .rkey = wr->wr.rdma.rkey };
		qp->sq_owned++;
	}
	if (err)
		*bad_wr = wr;
	if (qp->qp.state == IBV_QPS_ERR)
		fake_qp_run(qp); /* posted to an ERR QP: flushed at once */
	return err;
}

static int fake_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	FAKE_GUARD();
	struct fake_cq *cq = fake_cq_of(ibcq);
	int n = 0;

	if (fake_enter(FAKE_POLL_CQ, NULL))
		return -1;
	if (!fake.hold)
		for (struct fake_qp *qp = fake.qps; qp; qp = qp->next)
			if (qp->qp.send_cq == ibcq)
				fake_qp_run(qp);
	while (n < num_entries && cq->count) {
		wc[n] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % (unsigned int)cq->cq.cqe;
		cq->count--;
		for (struct fake_qp *qp = fake.qps; qp; qp = qp->next)
			if (qp->qp.qp_num == wc[n].qp_num)
				qp->sq_owned--;
		n++;
	}
	return n;
}

static int fake_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	FAKE_GUARD();
	(void)solicited_only; /* every completion of this fake is unsolicited-capable */
	if (fake_enter(FAKE_REQ_NOTIFY_CQ, NULL))
		return errno;
	fake_cq_of(ibcq)->armed = true;
	return 0;
}

/* ---- slow-path calls: devices, PDs, MRs ---- */

static struct ibv_device **fake_get_device_list(int *num)
{
	FAKE_GUARD();
	struct ibv_device **list;

	if (fake_enter(FAKE_GET_DEVICE_LIST, "get_device_list")) {
		*num = 0;
		return NULL;
	}
	list = fake_alloc(sizeof(*list) * (FAKE_MAX_DEVICES + 1));
	for (int i = 0; i < fake.n_devices; i++)
		list[i] = &fake.devices[i].dev;
	*num = fake.n_devices;
	return list;
}

static void fake_free_device_list(struct ibv_device **list)
{
	FAKE_GUARD();
	fake_enter(FAKE_FREE_DEVICE_LIST, "free_device_list");
	fake_free(list);
}

static const char *fake_get_device_name(struct ibv_device *dev)
{
	FAKE_GUARD();
	fake_enter(FAKE_GET_DEVICE_NAME, NULL);
	return dev->name;
}

static struct ibv_context *fake_open_device(struct ibv_device *dev)
{
	FAKE_GUARD();
	struct fake_context *c;

	if (fake_enter(FAKE_OPEN_DEVICE, "open_device"))
		return NULL;
	c = fake_alloc(sizeof(*c));
	c->fdev = (struct fake_device *)dev;
	c->ctx.device = dev;
	c->ctx.cmd_fd = -1;
	c->ctx.async_fd = -1;
	c->ctx.num_comp_vectors = 1;
	c->ctx.ops.post_send = fake_post_send;
	c->ctx.ops.poll_cq = fake_poll_cq;
	c->ctx.ops.req_notify_cq = fake_req_notify_cq;
	fake.contexts++;
	fake_nic_thread_start();
	return &c->ctx;
}

static int fake_close_device(struct ibv_context *ctx)
{
	FAKE_GUARD();
	struct fake_context *c = fake_ctx_of(ctx);

	if (fake_enter(FAKE_CLOSE_DEVICE, "close_device"))
		return -1;
	if (c->children) {
		fake_violation("close_device with %u PDs/channels/CQs alive", c->children);
		errno = EBUSY;
		return -1;
	}
	fake.contexts--;
	fake_free(c);
	return 0;
}

static int fake_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	FAKE_GUARD();
	const struct fake_dev_config *cfg = fake_cfg_of(ctx);

	if (fake_enter(FAKE_QUERY_DEVICE, "query_device"))
		return errno;
	memset(attr, 0, sizeof(*attr));
	attr->max_qp_wr = cfg->max_qp_wr;
	attr->max_cqe = cfg->max_cqe;
	attr->max_sge = FAKE_MAX_SGE;
	attr->max_mr_size = UINT64_MAX;
	attr->phys_port_cnt = 1;
	return 0;
}

static int fake_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	FAKE_GUARD();
	const struct fake_dev_config *cfg = fake_cfg_of(ctx);

	if (fake_enter(FAKE_QUERY_PORT, "query_port"))
		return errno;
	if (port != 1)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->state = cfg->state;
	attr->max_mtu = IBV_MTU_4096;
	attr->active_mtu = cfg->active_mtu;
	attr->gid_tbl_len = FAKE_GID_TABLE;
	attr->max_msg_sz = cfg->max_msg_sz;
	attr->lid = cfg->link_layer == IBV_LINK_LAYER_ETHERNET ? 0 : cfg->lid;
	attr->link_layer = cfg->link_layer;
	return 0;
}

static int fake_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	FAKE_GUARD();
	if (fake_enter(FAKE_QUERY_GID, "query_gid"))
		return -1;
	if (port != 1 || index < 0 || index >= FAKE_GID_TABLE) {
		errno = EINVAL;
		return -1;
	}
	memset(gid, 0, sizeof(*gid));
	if (index == 0)
		*gid = fake_cfg_of(ctx)->gid;
	return 0;
}

static struct ibv_pd *fake_alloc_pd(struct ibv_context *ctx)
{
	FAKE_GUARD();
	struct fake_pd *pd;

	if (fake_enter(FAKE_ALLOC_PD, "alloc_pd"))
		return NULL;
	pd = fake_alloc(sizeof(*pd));
	pd->pd.context = ctx;
	fake_ctx_of(ctx)->children++;
	return &pd->pd;
}

static int fake_dealloc_pd(struct ibv_pd *ibpd)
{
	FAKE_GUARD();
	struct fake_pd *pd = (struct fake_pd *)ibpd;

	if (fake_enter(FAKE_DEALLOC_PD, "dealloc_pd"))
		return errno;
	if (pd->users) {
		fake_violation("dealloc_pd with %u MRs/QPs alive", pd->users);
		return EBUSY;
	}
	fake_ctx_of(ibpd->context)->children--;
	fake_free(pd);
	return 0;
}

static struct ibv_mr *fake_reg_mr(struct ibv_pd *ibpd, void *addr, size_t len, int access)
{
	FAKE_GUARD();
	struct fake_mr *mr;

	if (fake_enter(FAKE_REG_MR, "reg_mr"))
		return NULL;
	/* The verbs rule: remote write needs local write. */
	if (!addr || !len ||
	    ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	mr = fake_alloc(sizeof(*mr));
	mr->mr.context = ibpd->context;
	mr->mr.pd = ibpd;
	mr->mr.addr = addr;
	mr->mr.length = len;
	mr->mr.lkey = 0x1000 + fake.next_key;
	mr->mr.rkey = 0x8000 + fake.next_key++;
	mr->access = access;
	mr->next = fake.mrs;
	fake.mrs = mr;
	((struct fake_pd *)ibpd)->users++;
	return &mr->mr;
}

static int fake_dereg_mr(struct ibv_mr *ibmr)
{
	FAKE_GUARD();
	struct fake_mr **p = &fake.mrs;

	if (fake_enter(FAKE_DEREG_MR, "dereg_mr"))
		return errno;
	while (*p && &(*p)->mr != ibmr)
		p = &(*p)->next;
	if (!*p) {
		fake_violation("dereg_mr of an unknown MR");
		return EINVAL;
	}
	*p = (*p)->next;
	((struct fake_pd *)ibmr->pd)->users--;
	fake_free(ibmr);
	return 0;
}

/* ---- slow-path calls: channels, CQs, QPs ---- */

static struct ibv_comp_channel *fake_create_comp_channel(struct ibv_context *ctx)
{
	FAKE_GUARD();
	struct fake_channel *ch;
	int fds[2];

	if (fake_enter(FAKE_CREATE_COMP_CHANNEL, "create_comp_channel"))
		return NULL;
	if (pipe(fds))
		return NULL;
	ch = fake_alloc(sizeof(*ch));
	ch->ch.context = ctx;
	ch->ch.fd = fds[0];
	ch->wfd = fds[1];
	fake_ctx_of(ctx)->children++;
	return &ch->ch;
}

static int fake_destroy_comp_channel(struct ibv_comp_channel *ibch)
{
	FAKE_GUARD();
	struct fake_channel *ch = (struct fake_channel *)ibch;

	if (fake_enter(FAKE_DESTROY_COMP_CHANNEL, "destroy_comp_channel"))
		return errno;
	if (ch->cqs) {
		fake_violation("destroy_comp_channel with %u CQs alive", ch->cqs);
		return EBUSY;
	}
	fake_ctx_of(ibch->context)->children--;
	close(ch->ch.fd);
	close(ch->wfd);
	fake_free(ch);
	return 0;
}

static struct ibv_cq *fake_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				     struct ibv_comp_channel *channel, int comp_vector)
{
	FAKE_GUARD();
	struct fake_cq *cq;

	if (fake_enter(FAKE_CREATE_CQ, "create_cq"))
		return NULL;
	if (cqe < 1 || cqe > fake_cfg_of(ctx)->max_cqe || comp_vector >= ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = fake_alloc(sizeof(*cq));
	cq->ring = calloc((size_t)cqe, sizeof(*cq->ring));
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	if (channel)
		((struct fake_channel *)channel)->cqs++;
	fake_ctx_of(ctx)->children++;
	cq->next = fake.cqs;
	fake.cqs = cq;
	return &cq->cq;
}

static int fake_destroy_cq(struct ibv_cq *ibcq)
{
	FAKE_GUARD();
	struct fake_cq *cq = fake_cq_of(ibcq), **p = &fake.cqs;

	if (fake_enter(FAKE_DESTROY_CQ, "destroy_cq"))
		return errno;
	if (cq->qps) {
		fake_violation("destroy_cq with %u QP references alive", cq->qps);
		return EBUSY;
	}
	if (cq->events_got != cq->events_acked) {
		/* ibv_destroy_cq waits for the acks: it would hang. */
		fake_violation("destroy_cq with %u events not acked", cq->events_got - cq->events_acked);
		return EBUSY;
	}
	while (*p != cq)
		p = &(*p)->next;
	*p = cq->next;
	if (ibcq->channel)
		((struct fake_channel *)ibcq->channel)->cqs--;
	fake_ctx_of(ibcq->context)->children--;
	free(cq->ring);
	fake_free(cq);
	return 0;
}

static struct ibv_qp *fake_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	FAKE_GUARD();
	const struct fake_dev_config *cfg;
	struct fake_qp *qp;

	if (fake_enter(FAKE_CREATE_QP, "create_qp"))
		return NULL;
	cfg = fake_cfg_of(pd->context);
	if (!init->send_cq || !init->recv_cq || init->qp_type != IBV_QPT_RC || init->srq ||
	    init->cap.max_send_wr < 1 || init->cap.max_send_wr > (uint32_t)cfg->max_qp_wr ||
	    init->cap.max_recv_wr > (uint32_t)cfg->max_qp_wr || init->cap.max_send_sge < 1 ||
	    init->cap.max_send_sge > FAKE_MAX_SGE || init->cap.max_recv_sge > FAKE_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	qp = fake_alloc(sizeof(*qp));
	qp->sq = calloc(init->cap.max_send_wr, sizeof(*qp->sq));
	qp->init = *init;
	qp->qp.context = pd->context;
	qp->qp.qp_context = init->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = init->send_cq;
	qp->qp.recv_cq = init->recv_cq;
	qp->qp.qp_num = 0x100 + fake.next_qpn++;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = IBV_QPT_RC;
	fake_cq_of(init->send_cq)->qps++;
	fake_cq_of(init->recv_cq)->qps++;
	((struct fake_pd *)pd)->users++;
	qp->next = fake.qps;
	fake.qps = qp;
	return &qp->qp;
}

static int fake_destroy_qp(struct ibv_qp *ibqp)
{
	FAKE_GUARD();
	struct fake_qp *qp = fake_qp_of(ibqp), **p = &fake.qps;

	if (fake_enter(FAKE_DESTROY_QP, "destroy_qp"))
		return errno;
	while (*p != qp)
		p = &(*p)->next;
	*p = qp->next;
	fake_cq_of(ibqp->send_cq)->qps--;
	fake_cq_of(ibqp->recv_cq)->qps--;
	((struct fake_pd *)ibqp->pd)->users--;
	free(qp->sq);
	fake_free(qp);
	return 0;
}

static const char *const fake_state_names[] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS",     [IBV_QPS_SQD] = "SQD",   [IBV_QPS_SQE] = "SQE",
	[IBV_QPS_ERR] = "ERR",
};

/** The attributes a transition requires (IB spec, RC), or -1 if it is illegal. */
static int fake_required_mask(enum ibv_qp_state from, enum ibv_qp_state to)
{
	if (to == IBV_QPS_ERR || to == IBV_QPS_RESET)
		return IBV_QP_STATE;
	if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	if (from == IBV_QPS_INIT && to == IBV_QPS_RTR)
		return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (from == IBV_QPS_RTR && to == IBV_QPS_RTS)
		return IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return -1;
}

static int fake_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	FAKE_GUARD();
	struct fake_qp *qp = fake_qp_of(ibqp);
	const struct fake_dev_config *cfg = fake_cfg_of(ibqp->context);
	enum ibv_qp_state to = (mask & IBV_QP_STATE) ? attr->qp_state : ibqp->state;
	int required = fake_required_mask(ibqp->state, to);
	bool failed = fake_enter(FAKE_MODIFY_QP, NULL);

	fake_trace("modify_qp:", to <= IBV_QPS_ERR ? fake_state_names[to] : "?", failed);
	if (failed)
		return errno;
	if (required < 0 || (mask & required) != required)
		return EINVAL;
	if (to == IBV_QPS_INIT && attr->port_num != 1)
		return EINVAL;
	if (to == IBV_QPS_RTR &&
	    (attr->ah_attr.port_num != 1 || attr->path_mtu > IBV_MTU_4096 ||
	     (cfg->link_layer == IBV_LINK_LAYER_ETHERNET && !attr->ah_attr.is_global)))
		return EINVAL; /* RoCE needs a GRH */
	if (qp->n_modify < sizeof(qp->modify) / sizeof(qp->modify[0])) {
		qp->modify[qp->n_modify] = *attr;
		qp->modify_mask[qp->n_modify++] = mask;
	}
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IBV_QP_AV)
		qp->ah = attr->ah_attr;
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qp_num = attr->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn;
	ibqp->state = to;
	if (to == IBV_QPS_ERR)
		fake_qp_run(qp); /* every outstanding WR is flushed */
	return 0;
}

static int fake_get_cq_event(struct ibv_comp_channel *ibch, struct ibv_cq **ibcq, void **cq_context)
{
	FAKE_GUARD();
	struct fake_cq *cq;
	ssize_t got;

	if (fake_enter(FAKE_GET_CQ_EVENT, NULL))
		return -1;
	if (!(fcntl(ibch->fd, F_GETFL) & O_NONBLOCK)) {
		fake_violation("get_cq_event on a blocking channel fd");
		errno = EAGAIN;
		return -1;
	}
	got = read(ibch->fd, &cq, sizeof(cq));
	if (got != (ssize_t)sizeof(cq))
		return -1; /* errno EAGAIN: no event */
	cq->events_got++;
	*ibcq = &cq->cq;
	*cq_context = cq->cq.cq_context;
	return 0;
}

static void fake_ack_cq_events(struct ibv_cq *ibcq, unsigned int n)
{
	FAKE_GUARD();
	struct fake_cq *cq = fake_cq_of(ibcq);

	fake_enter(FAKE_ACK_CQ_EVENTS, NULL);
	cq->events_acked += n;
	if (cq->events_acked > cq->events_got)
		fake_violation("ack_cq_events acked %u events, %u were read", cq->events_acked,
			       cq->events_got);
}

static const struct verbs_calls fake_calls = {
	.get_device_list = fake_get_device_list,
	.free_device_list = fake_free_device_list,
	.get_device_name = fake_get_device_name,
	.open_device = fake_open_device,
	.close_device = fake_close_device,
	.query_device = fake_query_device,
	.query_port = fake_query_port,
	.query_gid = fake_query_gid,
	.alloc_pd = fake_alloc_pd,
	.dealloc_pd = fake_dealloc_pd,
	.reg_mr = fake_reg_mr,
	.dereg_mr = fake_dereg_mr,
	.create_comp_channel = fake_create_comp_channel,
	.destroy_comp_channel = fake_destroy_comp_channel,
	.create_cq = fake_create_cq,
	.destroy_cq = fake_destroy_cq,
	.create_qp = fake_create_qp,
	.destroy_qp = fake_destroy_qp,
	.modify_qp = fake_modify_qp,
	.get_cq_event = fake_get_cq_event,
	.ack_cq_events = fake_ack_cq_events,
};

/* ---- control and inspection ---- */

void fake_verbs_install(void)
{
	FAKE_GUARD();
	memset(&fake, 0, sizeof(fake));
	verbs_calls = &fake_calls;
}

void fake_verbs_uninstall(void)
{
	FAKE_GUARD();
	/* Free what a failing test left, so only the backend's own leaks show. */
	for (struct fake_qp *qp = fake.qps; qp; qp = qp->next)
		free(qp->sq);
	for (struct fake_cq *cq = fake.cqs; cq; cq = cq->next)
		free(cq->ring);
	while (fake.blocks)
		fake_free(fake.blocks->payload);
	verbs_calls = &verbs_calls_real;
}

struct fake_dev_config fake_verbs_default_config(void)
{
	struct fake_dev_config cfg = {
		.link_layer = IBV_LINK_LAYER_INFINIBAND,
		.state = IBV_PORT_ACTIVE,
		.lid = 0x11,
		.active_mtu = IBV_MTU_1024,
		.max_msg_sz = 1u << 31,
		.max_qp_wr = 16384,
		.max_cqe = 16384,
	};

	cfg.gid.raw[0] = 0xfe;
	cfg.gid.raw[1] = 0x80;
	cfg.gid.raw[15] = 0x01;
	return cfg;
}

void fake_verbs_add_device(const char *name, const struct fake_dev_config *cfg)
{
	FAKE_GUARD();
	struct fake_device *d = &fake.devices[fake.n_devices++];

	snprintf(d->dev.name, sizeof(d->dev.name), "%s", name);
	d->dev.node_type = IBV_NODE_CA;
	d->dev.transport_type = IBV_TRANSPORT_IB;
	d->cfg = cfg ? *cfg : fake_verbs_default_config();
}

void fake_verbs_fail(enum fake_call call, unsigned int nth, int err)
{
	FAKE_GUARD();
	fake.fail_at[call] = fake.calls[call] + nth;
	fake.fail_err[call] = err;
}

void fake_verbs_fail_post_at_wr(unsigned int nth, int err)
{
	FAKE_GUARD();
	fake.fail_post_wr = fake.wr_posted + nth;
	fake.fail_post_err = err;
}

void fake_verbs_inject_wc(unsigned int nth, enum ibv_wc_status status)
{
	FAKE_GUARD();
	fake.inject_wr = fake.wr_executed + nth;
	fake.inject_status = status;
}

void fake_verbs_hold(bool hold)
{
	FAKE_GUARD();
	fake.hold = hold;
}

void fake_verbs_kill_qp(struct ibv_qp *qp)
{
	FAKE_GUARD();
	qp->state = IBV_QPS_ERR;
	fake_qp_run(fake_qp_of(qp));
}

unsigned int fake_verbs_calls(enum fake_call call)
{
	FAKE_GUARD();
	return fake.calls[call];
}

unsigned int fake_verbs_live(void)
{
	FAKE_GUARD();
	return fake.live;
}

unsigned int fake_verbs_violations(void)
{
	FAKE_GUARD();
	return fake.violations;
}

const char *fake_verbs_violation_text(void)
{
	FAKE_GUARD();
	return fake.violation_text;
}

const char *fake_verbs_trace(void)
{
	FAKE_GUARD();
	return fake.trace;
}

void fake_verbs_trace_clear(void)
{
	FAKE_GUARD();
	fake.trace[0] = '\0';
}

int fake_verbs_mr_access(const struct ibv_mr *mr)
{
	FAKE_GUARD();
	return ((const struct fake_mr *)mr)->access;
}

int fake_verbs_cq_unacked(const struct ibv_cq *cq)
{
	FAKE_GUARD();
	const struct fake_cq *c = fake_cq_of(cq);

	return (int)(c->events_got - c->events_acked);
}

unsigned int fake_verbs_cq_depth(const struct ibv_cq *cq)
{
	FAKE_GUARD();
	return fake_cq_of(cq)->count;
}
