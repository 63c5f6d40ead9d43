/*
 * hw/fabric/fabric_qp.c — queue pairs on fab0: an endpoint of their own
 * (same address as the device, an ephemeral port) with its own CQ, the
 * rings of hw/fabric/fabric_internal.h, and the notification fd: an epoll
 * set of the queue pair's CQ wait fd and the device's (the service
 * endpoint's), so a PE asleep in event mode wakes both for its own
 * completions and to serve peers' RMA into its exported memory; and a
 * timer fd, armed while operations are in flight, so that it also wakes to
 * fail one past its deadline (hw/fabric/fabric_fastpath.c).
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "hw/fabric/fabric_internal.h"

static void qp_free(struct fab_qp *qp)
{
	if (qp->watching)
		fab_dev_unwatch(qp->dev, qp);
	if (qp->ep != NULL)
		fi_close(&qp->ep->fid);
	if (qp->info != NULL)
		fi_freeinfo(qp->info);
	if (qp->cq != NULL)
		fi_close(&qp->cq->fid);
	if (qp->epfd >= 0)
		close(qp->epfd);
	if (qp->timer_fd >= 0)
		close(qp->timer_fd);
	free(qp->pend);
	free(qp->done);
	free(qp->slots);
	free(qp->free_slots);
	free(qp);
}

/* Put @p cq's wait fd into the queue pair's epoll set. */
static doca_error_t cq_watch(struct fab_qp *qp, struct fid_cq *cq)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (fi_control(&cq->fid, FI_GETWAIT, &fd) != 0)
		return DOCA_ERROR_NOT_SUPPORTED; /* the provider gives no wait fd */
	if (epoll_ctl(qp->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
		return DOCA_ERROR_OPERATING_SYSTEM;
	return DOCA_SUCCESS;
}

doca_error_t fab_qp_create(struct hw_dev *hw, const struct hw_qp_attr *attr, struct hw_qp **out)
{
	struct fab_dev *dev = fab_dev_of(hw);
	struct fab_qp *qp = calloc(1, sizeof(*qp));
	uint32_t size = 1;

	if (qp == NULL)
		return DOCA_ERROR_NO_MEMORY;
	qp->epfd = -1;
	qp->timer_fd = -1;
	while (size < attr->depth)
		size <<= 1;
	qp->hw.ops = &hw_fabric_ops;
	qp->hw.runs_in_poll = false; /* the provider's CQ fd, or our wake, wakes the PE */
	qp->hw.always_polled = true; /* its polls serve the device's exports (serve) */
	qp->dev = dev;
	qp->wake = attr->wake;
	qp->wake_arg = attr->wake_arg;
	qp->mask = size - 1;
	qp->pend = calloc(size, sizeof(*qp->pend));
	qp->done = calloc(size, sizeof(*qp->done));
	qp->slots = calloc(size, sizeof(*qp->slots));
	qp->free_slots = calloc(size, sizeof(*qp->free_slots));
	if (qp->pend == NULL || qp->done == NULL || qp->slots == NULL || qp->free_slots == NULL) {
		qp_free(qp);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (uint32_t i = 0; i < size; i++)
		qp->free_slots[i] = &qp->slots[size - 1 - i];
	qp->nfree = size;

	/* The device's address, any port: the queue pair's own endpoint. */
	qp->info = fi_dupinfo(dev->info);
	if (qp->info == NULL) {
		qp_free(qp);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (qp->info->src_addr != NULL && qp->info->src_addrlen >= sizeof(struct sockaddr_in))
		((struct sockaddr_in *)qp->info->src_addr)->sin_port = 0;
	doca_error_t err = fab_cq_make(dev, dev->domain, size, &qp->cq);

	if (err == DOCA_SUCCESS)
		err = fab_ep_make(dev, dev->domain, dev->av, qp->info, qp->cq, &qp->ep);
	if (err == DOCA_ERROR_INVALID_VALUE)
		err = DOCA_ERROR_DRIVER; /* the device's own address: not a parameter's fault */
	/* The CQs' fds join when event mode first arms (fab_notify_arm); the
	 * timer, disarmed until then, at once. */
	qp->epfd = err == DOCA_SUCCESS ? epoll_create1(EPOLL_CLOEXEC) : -1;
	if (err == DOCA_SUCCESS && qp->epfd < 0)
		err = DOCA_ERROR_OPERATING_SYSTEM;
	if (err == DOCA_SUCCESS) {
		struct epoll_event ev = { .events = EPOLLIN };

		qp->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (qp->timer_fd < 0 || epoll_ctl(qp->epfd, EPOLL_CTL_ADD, qp->timer_fd, &ev) != 0)
			err = DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (err != DOCA_SUCCESS) {
		qp_free(qp);
		return err;
	}
	*out = &qp->hw;
	return DOCA_SUCCESS;
}

bool fab_qp_remake(struct fab_qp *qp)
{
	struct fab_dev *dev = qp->dev;
	struct fid_cq *cq;
	struct fid_ep *ep;

	/* The new CQ first, in the epoll set if the old one was: if either
	 * fails, nothing changed. A CQ is never kept past its endpoint's
	 * close: libfabric 1.17's keeps the closed endpoint on its list, and
	 * the next fi_trywait read it after its free (the service endpoint's
	 * renew closes both for the same reason). */
	if (fab_cq_make(dev, dev->domain, qp->mask + 1u, &cq) != DOCA_SUCCESS)
		return false;
	if (qp->watching && cq_watch(qp, cq) != DOCA_SUCCESS) {
		fi_close(&cq->fid);
		return false;
	}
	/* No endpoint (one could not be made): the queue pair's operations
	 * fail at once and the next issue tries again (ep_broken). The
	 * diagnostic it left is replaced by the thread's next one. */
	if (fab_ep_make(dev, dev->domain, dev->av, qp->info, cq, &ep) != DOCA_SUCCESS)
		ep = NULL;
	if (qp->ep != NULL)
		fi_close(&qp->ep->fid); /* drops what it held: nothing touches our memory after */
	fi_close(&qp->cq->fid);         /* its wait fd leaves the epoll set with it */
	qp->cq = cq;
	qp->ep = ep;
	qp->ep_broken = ep == NULL;
	return true;
}

void fab_qp_timer_set(struct fab_qp *qp, uint64_t at_ns)
{
	/* 0 disarms it, which also drops an expiry not yet read */
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(at_ns / 1000000000u),
						 .tv_nsec = (long)(at_ns % 1000000000u) } };

	if (timerfd_settime(qp->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		qp->timer_at_ns = at_ns;
}

void fab_qp_destroy(struct hw_qp *hw)
{
	qp_free(fab_qp_of(hw));
}

int fab_notify_fd(struct hw_qp *hw)
{
	return fab_qp_of(hw)->epfd;
}

/* Put both CQs' wait fds into the queue pair's epoll set (first arm); the
 * device lists us, to add a renewed service CQ's too. */
static doca_error_t qp_watch(struct fab_qp *qp)
{
	doca_error_t err = cq_watch(qp, qp->cq);

	if (err != DOCA_SUCCESS)
		return err;
	err = fab_dev_watch(qp->dev, qp);
	if (err != DOCA_SUCCESS) {
		/* as it was: the next arm adds both again (else every later
		 * add of the first would fail with EEXIST) */
		int fd;

		if (fi_control(&qp->cq->fid, FI_GETWAIT, &fd) == 0)
			(void)epoll_ctl(qp->epfd, EPOLL_CTL_DEL, fd, NULL);
		return err;
	}
	qp->watching = true;
	return DOCA_SUCCESS;
}

doca_error_t fab_notify_arm(struct hw_qp *hw)
{
	struct fab_qp *qp = fab_qp_of(hw);
	struct fid *fid = &qp->cq->fid;

	if (!qp->watching) {
		doca_error_t err = qp_watch(qp);

		if (err != DOCA_SUCCESS)
			return err;
	}
	/* The timer at the first deadline in flight (the poll that wakes for
	 * it fails what is due), or at the retry of a descriptor the provider
	 * refused for now if that comes first (one due already is work:
	 * fab_pending); one that rang with nothing to wait for is disarmed,
	 * or it would wake us again at once. */
	uint64_t now = fab_now_ns();
	uint64_t want = fab_in_flight(qp) != 0 ? qp->next_expiry_ns : 0;

	if (qp->retry_at_ns > now && (want == 0 || qp->retry_at_ns < want))
		want = qp->retry_at_ns;
	if (want != qp->timer_at_ns && (want != 0 || now >= qp->timer_at_ns))
		fab_qp_timer_set(qp, want);
	/* -FI_EAGAIN: something is there to read now, the fds may not say so. */
	if (fi_trywait(qp->dev->fabric, &fid, 1) != 0 || fab_dev_trywait(qp->dev) != 0)
		qp->must_poll = true;
	return DOCA_SUCCESS;
}

void fab_notify_ack(struct hw_qp *hw)
{
	/* Nothing to consume: the wait fds are level-triggered and reset by
	 * the next fi_trywait once poll has read the CQs. */
	(void)hw;
}
