/*
 * hw/fabric/fabric_dev.c — fab0: probe, open (fabric, domain, AV, the
 * service endpoint bound to the address asked for), close, and the
 * endpoint + CQ pair that the device and each queue pair make.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "hw/fabric/fabric_internal.h"
#include "hw/hw_errno.h"

doca_error_t fab_probe(struct hw_dev_desc *descs, size_t cap, size_t *count)
{
	struct fab_params p;
	struct fi_info *info = NULL;

	(void)fab_params_parse(NULL, &p);
	struct fi_info *hints = fab_hints(&p);

	if (hints == NULL)
		return DOCA_ERROR_NO_MEMORY;
	int rc = fi_getinfo(FAB_FI_VERSION, p.addr, NULL, FI_SOURCE, hints, &info);

	fi_freeinfo(hints);
	*count = rc == 0 ? 1 : 0;
	if (rc == 0 && cap > 0) {
		snprintf(descs[0].name, sizeof(descs[0].name), "%s", FAB_DEVICE_NAME);
		snprintf(descs[0].caps, sizeof(descs[0].caps),
			 "copy,rdma_read,rdma_write,export,import,event,prov=%s",
			 info->fabric_attr->prov_name);
	}
	fi_freeinfo(info);
	return DOCA_SUCCESS;
}

doca_error_t fab_cq_make(struct fab_dev *dev, struct fid_domain *domain, size_t depth,
			 struct fid_cq **cq)
{
	struct fi_cq_attr cq_attr = {
		.size = depth,
		.format = FI_CQ_FORMAT_CONTEXT,
		.wait_obj = FI_WAIT_FD,
	};
	int rc = fi_cq_open(domain, &cq_attr, cq, NULL);

	if (rc == 0)
		return DOCA_SUCCESS;
	*cq = NULL;
	hw_diag("prov=%s: fi_cq_open failed: %s", dev->params.prov, fi_strerror(-rc));
	return -rc == ENOMEM ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_DRIVER;
}

/* Add the service CQ's wait fd (taken now if need be) to one epoll set:
 * NOT_SUPPORTED if the provider gives none. Caller: serve_lock. */
static doca_error_t dev_cq_add(struct fab_dev *dev, int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (dev->cq == NULL)
		return DOCA_SUCCESS; /* a failed renew left none: the next one adds its */
	if (dev->cq_fd < 0) {
		if (fi_control(&dev->cq->fid, FI_GETWAIT, &fd) != 0)
			return DOCA_ERROR_NOT_SUPPORTED;
		dev->cq_fd = fd;
	}
	return epoll_ctl(epfd, EPOLL_CTL_ADD, dev->cq_fd, &ev) == 0 ? DOCA_SUCCESS
								    : DOCA_ERROR_OPERATING_SYSTEM;
}

doca_error_t fab_dev_watch(struct fab_dev *dev, struct fab_qp *qp)
{
	pthread_mutex_lock(&dev->serve_lock);
	doca_error_t err = dev_cq_add(dev, qp->epfd);

	if (err == DOCA_SUCCESS) {
		qp->next_watcher = dev->watchers;
		dev->watchers = qp;
	}
	pthread_mutex_unlock(&dev->serve_lock);
	return err;
}

void fab_dev_unwatch(struct fab_dev *dev, struct fab_qp *qp)
{
	pthread_mutex_lock(&dev->serve_lock);
	for (struct fab_qp **pp = &dev->watchers; *pp != NULL; pp = &(*pp)->next_watcher) {
		if (*pp == qp) {
			*pp = qp->next_watcher;
			break;
		}
	}
	pthread_mutex_unlock(&dev->serve_lock);
}

int fab_dev_trywait(struct fab_dev *dev)
{
	int rc = 0;

	pthread_mutex_lock(&dev->serve_lock);
	if (dev->cq != NULL) {
		struct fid *fid = &dev->cq->fid;

		rc = fi_trywait(dev->fabric, &fid, 1);
	}
	pthread_mutex_unlock(&dev->serve_lock);
	return rc;
}

doca_error_t fab_ep_make(struct fab_dev *dev, struct fid_domain *domain, struct fid_av *av,
			 struct fi_info *info, struct fid_cq *cq, struct fid_ep **ep)
{
	const char *what = "fi_endpoint";
	int rc = fi_endpoint(domain, info, ep, NULL);

	if (rc != 0)
		*ep = NULL;
	if (rc == 0) {
		what = "fi_ep_bind(av)";
		rc = fi_ep_bind(*ep, &av->fid, 0);
	}
	if (rc == 0) {
		what = "fi_ep_bind(cq)";
		rc = fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_RECV);
	}
	if (rc == 0) {
		what = "fi_enable";
		rc = fi_enable(*ep);
	}
	if (rc == 0)
		return DOCA_SUCCESS;
	hw_diag("addr=%s port=%u: cannot make an endpoint there (%s: %s)", dev->params.addr,
		(unsigned)dev->params.port, what, fi_strerror(-rc));
	if (*ep != NULL)
		fi_close(&(*ep)->fid);
	*ep = NULL;
	/* Only bind(2)'s answers about the address are the address's fault
	 * (doca_dev_open: INVALID_VALUE; an export: AGAIN, until the port is
	 * free). Any other refusal is the driver's, as for a registration:
	 * mapped to INVALID_VALUE, a provider's EINVAL or ENOSYS made every
	 * later export return AGAIN, "retry later", for a failure no retry
	 * mends (a review). */
	switch (-rc) {
	case EADDRINUSE:
	case EADDRNOTAVAIL:
	case EACCES: /* a privileged port */
		return DOCA_ERROR_INVALID_VALUE;
	default:
		return hw_driver_errno_to_doca(-rc);
	}
}

/* The service endpoint and its CQ closed (the CQ too: libfabric 1.17's
 * keeps a closed endpoint on its list, and the next fi_trywait read it
 * after its free). Caller: serve_lock. */
static void service_close(struct fab_dev *dev)
{
	if (dev->ep != NULL)
		fi_close(&dev->ep->fid);
	dev->ep = NULL;
	dev->cq_fd = -1; /* closed with the CQ: it leaves every epoll set */
	if (dev->cq != NULL)
		fi_close(&dev->cq->fid);
	dev->cq = NULL;
}

/* The service CQ, and the endpoint on info's address bound to it. */
static doca_error_t service_make(struct fab_dev *dev, struct fi_info *info)
{
	doca_error_t err = fab_cq_make(dev, dev->sdomain, 64, &dev->cq);

	return err != DOCA_SUCCESS ? err : fab_ep_make(dev, dev->sdomain, dev->sav, info, dev->cq, &dev->ep);
}

doca_error_t fab_service_renew(struct fab_dev *dev)
{
	/* the cut first, before anything that can fail: the port must be free
	 * to bind again, and no access under way may move on */
	service_close(dev);
	struct fi_info *info = fi_dupinfo(dev->info);
	void *name = malloc(dev->name_len);
	doca_error_t err = DOCA_ERROR_NO_MEMORY;

	if (info != NULL && name != NULL) {
		/* the same address and port (an ephemeral one too): the
		 * descriptors of the device's other exports name it */
		memcpy(name, dev->name, dev->name_len);
		free(info->src_addr);
		info->src_addr = name;
		info->src_addrlen = dev->name_len;
		name = NULL;
		err = service_make(dev, info);
		/* the sleepers' sets get the new CQ (a sleeping PE wakes for
		 * peers on it without being told) */
		for (struct fab_qp *w = dev->watchers; err == DOCA_SUCCESS && w != NULL; w = w->next_watcher)
			err = dev_cq_add(dev, w->epfd);
		if (err == DOCA_ERROR_NOT_SUPPORTED || err == DOCA_ERROR_OPERATING_SYSTEM)
			hw_diag("the service endpoint's new CQ: %s",
				err == DOCA_ERROR_NOT_SUPPORTED ? "the provider gives no wait fd"
								: "epoll_ctl failed for a sleeping PE's set");
	}
	fi_freeinfo(info);
	free(name);
	if (err != DOCA_SUCCESS) {
		service_close(dev);
		dev->renew_after_ns = fab_now_ns() + (uint64_t)dev->params.retry_ms * 1000000u;
	}
	return err;
}

static void dev_free(struct fab_dev *dev)
{
	service_close(dev);
	if (dev->av != NULL)
		fi_close(&dev->av->fid);
	if (dev->domain != NULL)
		fi_close(&dev->domain->fid);
	if (dev->sav != NULL)
		fi_close(&dev->sav->fid);
	if (dev->sdomain != NULL)
		fi_close(&dev->sdomain->fid);
	if (dev->fabric != NULL)
		fi_close(&dev->fabric->fid);
	if (dev->info != NULL)
		fi_freeinfo(dev->info);
	fab_peers_free(dev);
	pthread_mutex_destroy(&dev->serve_lock);
	pthread_mutex_destroy(&dev->peer_lock);
	free(dev);
}

/* The fabric, and each domain with its AV, of dev->info. */
static doca_error_t dev_domain(struct fab_dev *dev)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	const char *what = "fi_fabric";
	int rc = fi_fabric(dev->info->fabric_attr, &dev->fabric, NULL);

	if (rc == 0) {
		what = "fi_domain";
		rc = fi_domain(dev->fabric, dev->info, &dev->domain, NULL);
	}
	if (rc == 0) {
		what = "fi_av_open";
		rc = fi_av_open(dev->domain, &av_attr, &dev->av, NULL);
	}
	if (rc == 0) {
		what = "fi_domain";
		rc = fi_domain(dev->fabric, dev->info, &dev->sdomain, NULL);
	}
	if (rc == 0) {
		what = "fi_av_open";
		rc = fi_av_open(dev->sdomain, &av_attr, &dev->sav, NULL);
	}
	if (rc == 0)
		return DOCA_SUCCESS;
	hw_diag("prov=%s: %s failed: %s", dev->params.prov, what, fi_strerror(-rc));
	/* fi_getinfo found the provider: what refuses now is its driver */
	return hw_driver_errno_to_doca(-rc);
}

doca_error_t fab_open(const char *name, const char *params, struct hw_dev **out)
{
	char port[8];
	doca_error_t err;

	if (strcmp(name, FAB_DEVICE_NAME) != 0)
		return DOCA_ERROR_NOT_FOUND;
	struct fab_dev *dev = calloc(1, sizeof(*dev));

	if (dev == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pthread_mutex_init(&dev->serve_lock, NULL);
	pthread_mutex_init(&dev->peer_lock, NULL);
	dev->cq_fd = -1;
	dev->hw.ops = &hw_fabric_ops;
	err = fab_params_parse(params, &dev->params);
	if (err != DOCA_SUCCESS) {
		dev_free(dev);
		return err;
	}
	struct fi_info *hints = fab_hints(&dev->params);

	if (hints == NULL) {
		dev_free(dev);
		return DOCA_ERROR_NO_MEMORY;
	}
	snprintf(port, sizeof(port), "%u", (unsigned)dev->params.port);
	dev->hw.holds_address = dev->params.port != 0; /* (an ephemeral port nobody names) */
	int rc = fi_getinfo(FAB_FI_VERSION, dev->params.addr, port, FI_SOURCE, hints, &dev->info);

	fi_freeinfo(hints);
	if (rc != 0) {
		hw_diag("prov=%s addr=%s: no libfabric provider by that name offers reliable (FI_EP_RDM) "
			"RMA there (fi_getinfo: %s)",
			dev->params.prov, dev->params.addr, fi_strerror(-rc));
		dev->info = NULL;
		dev_free(dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	uint64_t mr_mode = (uint64_t)dev->info->domain_attr->mr_mode;

	dev->virt_addr = (mr_mode & FI_MR_VIRT_ADDR) != 0;
	dev->prov_key = (mr_mode & FI_MR_PROV_KEY) != 0;
	dev->mr_local = (mr_mode & FI_MR_LOCAL) != 0;
	dev->max_msg = dev->info->ep_attr->max_msg_size;
	size_t key_size = dev->info->domain_attr->mr_key_size;

	/* requested keys are random (fabric_mr.c), as wide as the domain's */
	dev->key_mask = key_size == 0 || key_size >= sizeof(uint64_t) ? UINT64_MAX
									: ((uint64_t)1 << (8 * key_size)) - 1u;
	atomic_init(&dev->next_gen, 1);
	err = dev_domain(dev);
	if (err == DOCA_SUCCESS)
		err = service_make(dev, dev->info);
	dev->name_len = sizeof(dev->name);
	if (err == DOCA_SUCCESS && (rc = fi_getname(&dev->ep->fid, dev->name, &dev->name_len)) != 0) {
		hw_diag("fi_getname: %s", fi_strerror(-rc));
		err = DOCA_ERROR_DRIVER;
	}
	if (err != DOCA_SUCCESS) {
		dev_free(dev);
		return err;
	}
	*out = &dev->hw;
	return DOCA_SUCCESS;
}

void fab_close(struct hw_dev *hw)
{
	dev_free(fab_dev_of(hw));
}
