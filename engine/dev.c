/*
 * engine/dev.c — device handles and the device registry.
 *
 * The registry is an RCU hash table (liburcu's cds_lfht) of dev_entry,
 * keyed by the full open string: opening the same string again finds the
 * entry under rcu_read_lock and takes a reference with an
 * increment-if-not-zero, so it shares one backend device. Adding and
 * removing entries is serialised by registry_lock; the last reference
 * (handles, queue pairs and memory registrations all hold one) removes the
 * entry, closes the backend device and frees the entry after a grace period.
 */
#include <stdio.h>
#include <string.h>

#include "engine/cells.h"
#include "engine/engine.h"
#include "engine/refs.h"

pthread_mutex_t g_config_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cds_lfht *registry;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

#define DEV_NAME_MAX 255

/* A fixed 64-bucket table: a process opens a handful of device strings, and
 * without CDS_LFHT_AUTO_RESIZE liburcu starts no resize worker thread, a
 * library thread that would outlive every object. */
static void registry_create(void)
{
	registry = cds_lfht_new(64, 64, 64, 0, NULL);
}

static unsigned long key_hash(const char *key)
{
	unsigned long h = 1469598103934665603ul; /* FNV-1a */

	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 1099511628211ul;
	return h;
}

static int key_match(struct cds_lfht_node *node, const void *key)
{
	const struct dev_entry *e = caa_container_of(node, struct dev_entry, node);

	hb_acquire(e); /* its opener's writes (entry_open) before our strcmp */
	return strcmp(e->key, key) == 0;
}

/* A fork child's inherited registry: never used, kept reachable so leak
 * checkers do not count the parent's entries against the child. */
static struct cds_lfht *registry_inherited;

void dev_after_fork_child(void)
{
	g_config_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	registry_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	if (registry != NULL) {
		registry_inherited = registry; /* its entries name the parent's threads */
		registry_create();
	}
}

static struct dev_entry *registry_lookup(const char *key)
{
	struct cds_lfht_iter iter;
	struct dev_entry *found = NULL;

	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	cds_lfht_lookup(registry, key_hash(key), key_match, key, &iter);
	struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);

	if (node != NULL) {
		struct dev_entry *e = caa_container_of(node, struct dev_entry, node);

		TSAN_ACQUIRE(e);
		if (ref_get_unless_zero(&e->refs))
			found = e;
	}
	doca_rcu_read_unlock();
	return found;
}

void dev_entry_get(struct dev_entry *e)
{
	EXPLORE_POINT(ATOMIC);
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

static void dev_entry_free_rcu(struct rcu_head *head)
{
	struct dev_entry *e = caa_container_of(head, struct dev_entry, rcu);

	DOCA_RCU_CALLBACK_ENTER(head);
	doca_free(e);
}

void dev_entry_put(struct dev_entry *e)
{
	hb_release(&e->refs);
	if (ref_put_unless_one(&e->refs))
		return;
	/* The last reference is dropped under the lock that serialises
	 * openers, together with the entry's removal and the backend's close:
	 * an opener that looks again under the lock either took its reference
	 * before this drop or finds no entry and the backend closed (a backend
	 * that binds an address, fab0:port=N, must find it free). Dropped
	 * outside the lock, an opener could find the dying entry, pass it by
	 * and open a second backend while the first still held the address. */
	pthread_mutex_lock(&registry_lock);
	EXPLORE_POINT(ATOMIC);
	/* acq_rel: the last dropper sees every other holder's writes. */
	if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1) {
		pthread_mutex_unlock(&registry_lock); /* a lookup took one meanwhile */
		return;
	}
	hb_acquire(&e->refs);
	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	(void)cds_lfht_del(registry, &e->node);
	doca_rcu_read_unlock();
	e->ops->close(e->hw);
	pthread_mutex_unlock(&registry_lock);
	doca_call_rcu(&e->rcu, dev_entry_free_rcu);
}

/* doca_dev_list's caps of a backend whose module cannot be loaded. */
#define UNAVAILABLE_CAPS "unavailable: "

static void log_known_devices(const char *wanted)
{
	struct doca_dev_info infos[32];
	size_t count = 0, shown = 0;
	char list[1024] = "";

	(void)doca_dev_list(infos, 32, &count);
	for (size_t i = 0; i < count && i < 32; i++) {
		size_t used = strlen(list);

		if (strncmp(infos[i].caps, UNAVAILABLE_CAPS, strlen(UNAVAILABLE_CAPS)) == 0)
			continue;
		snprintf(list + used, sizeof(list) - used, "%s%.63s (%.15s)", shown++ ? ", " : "",
			 infos[i].name, infos[i].backend);
	}
	if (shown == 0)
		snprintf(list, sizeof(list), "none");
	for (size_t b = 0; b < hw_backend_count; b++) {
		const char *why;
		size_t used = strlen(list);

		if (hw_backend_get(b, &why) == NULL)
			snprintf(list + used, sizeof(list) - used,
				 "; the %s backend is not loaded (%s)", hw_backend_name(b), why);
	}
	doca_log(DOCA_LOG_ERROR, "no device named '%s'; devices that exist: %s", wanted, list);
}

/* Why backend `name` is not loaded, or NULL when it is or no backend has that name. */
static const char *backend_unavailable(const char *name)
{
	const char *why;

	for (size_t b = 0; b < hw_backend_count; b++)
		if (strcmp(hw_backend_name(b), name) == 0 && hw_backend_get(b, &why) == NULL)
			return why;
	return NULL;
}

/* Open the backend device for `key` (registry_lock held). */
static doca_error_t entry_open(const char *key, const char *name, const char *params,
			       struct dev_entry **out)
{
	doca_error_t err = DOCA_ERROR_NOT_FOUND;
	struct dev_entry *e = doca_zalloc(sizeof(*e));

	if (e == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (size_t i = 0; i < hw_backend_count && err == DOCA_ERROR_NOT_FOUND; i++) {
		const char *why;
		const struct hw_ops *ops = hw_backend_get(i, &why);

		if (ops == NULL) /* listed under its backend's name: say why it cannot open */
			err = strcmp(name, hw_backend_name(i)) == 0 ? DOCA_ERROR_NOT_SUPPORTED
								   : DOCA_ERROR_NOT_FOUND;
		else if ((err = ops->open(name, params, &e->hw)) != DOCA_ERROR_NOT_FOUND)
			e->ops = ops;
	}
	if (err != DOCA_SUCCESS) {
		doca_free(e);
		return err;
	}
	snprintf(e->key, sizeof(e->key), "%s", key);
	atomic_store_explicit(&e->refs, 1, memory_order_relaxed);
	cds_lfht_node_init(&e->node);
	TSAN_RELEASE(e);
	/* an opener on another thread finds it with no lock, and its key
	 * match is a strcmp an application's race detector sees */
	hb_release(e);
	doca_rcu_read_lock();
	EXPLORE_POINT(ATOMIC);
	cds_lfht_add(registry, key_hash(e->key), &e->node);
	doca_rcu_read_unlock();
	*out = e;
	return DOCA_SUCCESS;
}

static doca_error_t entry_get_or_open(const char *key, struct dev_entry **out)
{
	char name[DEV_NAME_MAX + 1];
	const char *colon = strchr(key, ':');
	size_t name_len = colon ? (size_t)(colon - key) : strlen(key);
	const char *why;
	doca_error_t err;

	if (name_len == 0 || (colon != NULL && colon[1] == '\0')) {
		doca_log(DOCA_LOG_ERROR, "doca_dev_open(\"%s\"): %s", key,
			 name_len == 0 ? "no device name before ':' (NAME[:KEY=VALUE,...])"
				       : "nothing after ':' (NAME[:KEY=VALUE,...])");
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(name, key, name_len);
	name[name_len] = '\0';

	*out = registry_lookup(key);
	if (*out != NULL)
		return DOCA_SUCCESS;
	(void)hw_diag_take(); /* a reason left by an earlier failure is not ours */
	pthread_mutex_lock(&registry_lock);
	*out = registry_lookup(key);
	err = *out != NULL ? DOCA_SUCCESS : entry_open(key, name, colon ? colon + 1 : NULL, out);
	pthread_mutex_unlock(&registry_lock);
	if (err == DOCA_ERROR_NOT_FOUND)
		log_known_devices(name);
	else if (err == DOCA_ERROR_NOT_SUPPORTED && (why = backend_unavailable(name)) != NULL)
		doca_log(DOCA_LOG_ERROR, "doca_dev_open(\"%s\"): the %s backend is not loaded: %s", key,
			 name, why);
	else if (err != DOCA_SUCCESS) {
		char call[DEV_NAME_MAX + sizeof("doca_dev_open(\"\")")];

		snprintf(call, sizeof(call), "doca_dev_open(\"%s\")", key);
		if (!log_device_reason(call, err) && err == DOCA_ERROR_INVALID_VALUE)
			doca_log(DOCA_LOG_ERROR, "%s: the backend refused its parameters", call);
	}
	(void)hw_diag_take(); /* whatever the path, no reason is left behind */
	return err;
}

doca_error_t doca_dev_open(const char *name, struct doca_dev **dev)
{
	struct dev_entry *e;
	doca_error_t err;

	if (name == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	size_t len = strnlen(name, DEV_NAME_MAX + 1);

	if (len == 0 || len > DEV_NAME_MAX)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_once(&registry_once, registry_create);
	if (registry == NULL)
		return DOCA_ERROR_NO_MEMORY;

	struct doca_dev *d = cell_get(CELL_DEV, sizeof(*d));

	if (d == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = entry_get_or_open(name, &e);
	if (err != DOCA_SUCCESS) {
		cell_put(CELL_DEV, d, sizeof(*d));
		return err;
	}
	d->entry = e;
	CDS_INIT_LIST_HEAD(&d->ctxs);
	snprintf(d->name, sizeof(d->name), "%.*s", (int)strcspn(name, ":"), name);
	head_store(&d->epoch, g_fork_epoch);
	head_store(&d->magic, MAGIC_DEV);
	live_created(LIVE_DEV, 0);
	*dev = handle_of(d);
	return DOCA_SUCCESS;
}

static void dev_free_rcu(struct rcu_head *head)
{
	DOCA_RCU_CALLBACK_ENTER(head);
	cell_put(CELL_DEV, caa_container_of(head, struct doca_dev, rcu), sizeof(struct doca_dev));
}

doca_error_t doca_dev_close(struct doca_dev *h)
{
	doca_error_t err;
	bool retiring = false;
	struct doca_dev *dev = dev_of(h);

	if (dev == NULL)
		return HANDLE_REFUSAL(h, MAGIC_DEV);
	pthread_mutex_lock(&g_config_lock);
	if (dev_of(h) != dev) /* a concurrent close won */
		err = DOCA_ERROR_INVALID_VALUE;
	else
		err = dev->nr_mems != 0 ? DOCA_ERROR_IN_USE : ctx_unbind_all_locked(dev);
	if (err == DOCA_SUCCESS) {
		handle_kill(dev);
		/* runs retire under this lock, so each of our contexts' is
		 * counted; acquire: one counted down has made its put (ctx_run.c) */
		retiring = dev->entry->hw->holds_address &&
			   atomic_load_explicit(&dev->entry->retiring, memory_order_acquire) != 0;
	}
	pthread_mutex_unlock(&g_config_lock);
	if (err != DOCA_SUCCESS)
		return err;
	dev_entry_put(dev->entry);
	doca_call_rcu(&dev->rcu, dev_free_rcu);
	live_destroyed(LIVE_DEV, 0);
	/* A stopped context's queue pair holds the device until its run is
	 * freed, a grace period after the stop. For a device bound to an
	 * address, wait for that (for the frees queued before this point), so
	 * that a close of the last handle has closed the backend device when
	 * it returns (a fab0:port=N bound again at once, by us or another
	 * process, would find the port still taken). Other devices' closes
	 * never wait, as no destroy does. */
	if (retiring)
		doca_rcu_wait_queued();
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_get_name(const struct doca_dev *h, const char **name)
{
	HANDLE_READ(dev_of, MAGIC_DEV, h, name, DOCA_SUCCESS, obj->name);
}

static void info_fill(struct doca_dev_info *info, const char *name, const char *backend,
		      const char *caps_prefix, const char *caps)
{
	snprintf(info->name, sizeof(info->name), "%.63s", name);
	snprintf(info->backend, sizeof(info->backend), "%.15s", backend);
	snprintf(info->caps, sizeof(info->caps), "%s%s", caps_prefix, caps);
}

doca_error_t doca_dev_list(struct doca_dev_info *infos, size_t cap, size_t *count)
{
	size_t total = 0;

	if (count == NULL || (infos == NULL && cap > 0))
		return DOCA_ERROR_INVALID_VALUE;
	for (size_t b = 0; b < hw_backend_count; b++) {
		struct hw_dev_desc descs[32];
		const char *why;
		const struct hw_ops *ops = hw_backend_get(b, &why);
		size_t n = 0;

		if (ops == NULL) { /* one entry, under the backend's name, saying why */
			if (total < cap)
				info_fill(&infos[total], hw_backend_name(b), hw_backend_name(b),
					  UNAVAILABLE_CAPS, why);
			total++;
			continue;
		}
		if (ops->probe(descs, 32, &n) != DOCA_SUCCESS)
			continue;
		for (size_t i = 0; i < n && i < 32; i++, total++)
			if (total < cap)
				info_fill(&infos[total], descs[i].name, ops->name, "", descs[i].caps);
	}
	*count = total;
	return DOCA_SUCCESS;
}
