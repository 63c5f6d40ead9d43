/**
 * @file doca_dev.h
 * @brief Devices: the capability. Opened by name, bound to contexts.
 *
 * Names and open strings:
 * - `"sw0"` — the embedded software DMA engine, executing inline: a copy
 *   happens inside doca_pe_progress, never inside submit.
 * - `"sw0:key=value,key=value"` — the same with options:
 *   `engines=N` (0..64; N engine threads, named "doca-sw0-0" to
 *   "doca-sw0-<N-1>" and blocking every asynchronous signal, execute
 *   descriptors on other cores),
 *   `cpus=LIST` (CPUs for engine threads, e.g. `cpus=1` or `cpus=0-1,3`;
 *   engine i is pinned to the i-th listed CPU, round robin; without it engine
 *   threads may run on every CPU and never inherit the opener's pinning;
 *   it needs `engines=N` with N >= 1 in the same string: `"sw0:cpus=1"`
 *   and `"sw0:engines=0,cpus=1"` are DOCA_ERROR_INVALID_VALUE, as inline
 *   execution has no thread to pin),
 *   `fail_every=N` (0..1,000,000,000, 0: never; every Nth executed
 *   descriptor fails with DOCA_ERROR_IO_FAILED), `partial_every=N` (the
 *   same range; every Nth executed descriptor copies only its first half:
 *   PARTIAL, DOCA_ERROR_IO_FAILED, true count),
 *   `delay_us=N` (0..10,000,000: each descriptor completes no earlier than N µs
 *   after it was posted), `ring_max=N` (0..65,536: the device's rings never
 *   grow beyond N slots, rounded down to a power of two, as when memory runs
 *   out; tasks beyond wait in the engine, in order, until the ring has room:
 *   still accepted, still exactly one event each). Descriptors are counted per device from 1, flushed
 *   ones are not counted; when fail and partial select the same descriptor it
 *   fails.
 * - a verbs device name as the NIC reports it (`"mlx5_0"`, `"rxe0"`), when
 *   such a device exists and the verbs module can be loaded;
 * - `"fab0[:prov=P,addr=IP,port=N,retry_ms=N]"`: libfabric, for remote
 *   memory (doca_mem_export / doca_mem_import): defaults prov=tcp;ofi_rxm,
 *   addr=127.0.0.1, an ephemeral port, retry_ms=3000 (how long an
 *   operation may be refused, or in flight, before it fails with
 *   DOCA_ERROR_CONNECTION_RESET; README "Remote memory"), when the fabric
 *   module can be loaded.
 *
 * In an open string each key is given at most once and no item is empty (a
 * trailing comma is one): anything else is DOCA_ERROR_INVALID_VALUE.
 *
 * Backends other than sw are modules (`libdoca-core-verbs.so` and
 * `libdoca-core-fabric.so` in
 * `<libdir>/doca-core/`, or in the directory named by the environment
 * variable `DOCA_CORE_MODULE_DIR`), loaded the first time a device is listed
 * or a name sw does not have is opened: a program that only opens sw devices
 * never loads libibverbs. A module that cannot be loaded is listed by
 * doca_dev_list under its backend's name, with the reason; it is not tried
 * again by this process.
 *
 * Opening the same open string twice shares one underlying device (reference
 * counted); each open returns its own handle, closed on its own. The
 * underlying device lives while any handle, memory registration or queue
 * pair uses it; queue pairs of stopped contexts are released after an RCU
 * grace period, so an open right after the last close may still share the
 * old device (its fault-injection counter then goes on from where it was)
 * — except for a device bound to a fixed address (fab0:port=N), whose
 * close waits for them (doca_dev_close).
 */
#ifndef DOCA_DEV_H
#define DOCA_DEV_H

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Open a device by name or open string.
 * @param name Device name with optional options (see the file comment).
 * @param[out] dev The new handle.
 * @return DOCA_SUCCESS;
 *         DOCA_ERROR_INVALID_VALUE for NULL arguments, an empty or over-long
 *         string, an unknown option, a malformed or out-of-range value
 *         (also `cpus` without `engines=N`, N >= 1; a `cpus` CPU that is
 *         offline or outside the process's cpuset: the kernel refuses the
 *         engine thread's pin; and for fab0
 *         a provider libfabric does not have, or an address or port it
 *         cannot bind: not this host's, taken, or privileged —
 *         EADDRNOTAVAIL, EADDRINUSE, EACCES);
 *         DOCA_ERROR_NOT_FOUND when no loaded backend has a device of that name
 *         (the log then lists the devices that exist and the backends whose
 *         module cannot be loaded, with the reason);
 *         DOCA_ERROR_NOT_SUPPORTED for the name of a backend whose module
 *         cannot be loaded, as doca_dev_list shows it (e.g. `"verbs"`; the log
 *         names the missing module or library);
 *         DOCA_ERROR_NO_MEMORY; DOCA_ERROR_OPERATING_SYSTEM when an engine
 *         thread cannot be started; DOCA_ERROR_DRIVER when the device refuses;
 *         a verbs device's or fab0's driver may also answer
 *         DOCA_ERROR_NOT_PERMITTED (access denied: EPERM, EACCES; on fab0
 *         an address it may not bind is DOCA_ERROR_INVALID_VALUE, above)
 *         or DOCA_ERROR_NOT_SUPPORTED (a call it does not implement:
 *         EOPNOTSUPP, ENOSYS). The same mapping gives the driver's errors
 *         of doca_mem_create, doca_mem_export and doca_ctx_start.
 *         When the device gives a reason for its refusal, whatever the
 *         error, the log says it: "doca_dev_open("NAME"): REASON (ERROR)"
 *         (an INVALID_VALUE refusal with no reason is logged too).
 *
 * Thread safety: any thread.
 */
doca_error_t doca_dev_open(const char *name, struct doca_dev **dev);

/**
 * @brief Close a device handle. Contexts bound to it (all IDLE) are unbound.
 *
 * Closing the last handle of an open string closes the backend device
 * (its engine threads end, a fab0 port is unbound) once nothing else of
 * it is left: a context stopped shortly before holds it through its queue
 * pair until a grace period has passed. For a device bound to a fixed
 * address (fab0:port=N), a close waits for that (milliseconds: a grace
 * period and the deferred frees queued before the call), so after the
 * last handle's close the port can be bound again at once; other closes
 * never wait for that (closing a fab0 device's libfabric objects takes
 * tens of milliseconds by itself).
 *
 * @param dev The handle from doca_dev_open.
 * @return DOCA_SUCCESS;
 *         DOCA_ERROR_INVALID_VALUE for NULL, a handle of another type or
 *         a handle already closed (a stale handle: logged and counted by
 *         doca_stale_handle_count);
 *         DOCA_ERROR_IN_USE while a memory is registered through it or a
 *         context bound to it is not IDLE (nothing is changed).
 *
 * Thread safety: any thread; not concurrently with other calls on the same handle.
 */
doca_error_t doca_dev_close(struct doca_dev *dev);

/**
 * @brief The name the device was opened with (the part before ':').
 * @param dev A device handle.
 * @param[out] name Points to a string that lives as long as the handle.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_dev_get_name(const struct doca_dev *dev, const char **name);

/** @brief One entry of doca_dev_list. */
struct doca_dev_info {
	char name[64];     /**< Name to pass to doca_dev_open. */
	char backend[16];  /**< "sw", "verbs" or "fabric". */
	/** Human-readable capabilities, e.g. "copy,inline,engines"; for a backend
	 *  whose module cannot be loaded, "unavailable: " and the reason (then
	 *  name and backend are the backend's name). */
	char caps[128];
};

/**
 * @brief List every device that can be opened, software and hardware, and
 *        each backend whose module cannot be loaded (one entry saying why).
 * @param[out] infos Array of @p cap entries to fill (may be NULL when cap is 0).
 * @param cap Number of entries in @p infos.
 * @param[out] count Number of devices that exist (may exceed @p cap; only
 *             min(cap, count) entries are written).
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE when count is NULL or
 *         infos is NULL with cap > 0.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_dev_list(struct doca_dev_info *infos, size_t cap, size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H */
