/**
 * @file doca_mem.h
 * @brief Memories: the space. A region the device may read and/or write,
 *        registered once with the context's device; buffers are carved from it.
 */
#ifndef DOCA_MEM_H
#define DOCA_MEM_H

#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Allocate @p len zeroed bytes (64-byte aligned) and register them.
 * @param ctx A context with a bound device, in any state.
 * @param len 1 .. SIZE_MAX/2 bytes.
 * @param access A non-empty OR of DOCA_ACCESS_FLAG_READ / _WRITE, nothing else.
 * @param[out] mem The new memory.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or wrong-type
 *         handles, a destroyed context (a stale handle, also when its
 *         destroy wins during this call: logged and counted by
 *         doca_stale_handle_count), len 0 or too large, bad access flags;
 *         DOCA_ERROR_NOT_CONNECTED when the context has no device;
 *         DOCA_ERROR_NO_MEMORY; the device's registration error:
 *         DOCA_ERROR_DRIVER, DOCA_ERROR_NOT_PERMITTED or
 *         DOCA_ERROR_NOT_SUPPORTED as the driver answers (verbs, fab0:
 *         doca_dev_open), on fab0 also DOCA_ERROR_OPERATING_SYSTEM (no
 *         random key to register with). A refused call creates nothing. When
 *         the device gives a reason for its refusal, the log says it as an
 *         error: "doca_mem_create: REASON (ERROR)".
 *
 * Thread safety: any thread.
 */
doca_error_t doca_mem_create(struct doca_ctx *ctx, size_t len, uint32_t access, struct doca_mem **mem);

/**
 * @brief Register caller-provided memory; the caller keeps ownership and must
 *        keep it valid until doca_mem_destroy returns.
 * @param ctx A context with a bound device, in any state.
 * @param addr Start of the region (not NULL); addr + len must not overflow.
 * @param len 1 .. SIZE_MAX/2 bytes.
 * @param access A non-empty OR of DOCA_ACCESS_FLAG_READ / _WRITE, nothing else.
 * @param[out] mem The new memory.
 * @return As doca_mem_create (a reason the device gives is logged as
 *         "doca_mem_create_from: REASON (ERROR)").
 *
 * Thread safety: any thread.
 */
doca_error_t doca_mem_create_from(struct doca_ctx *ctx, void *addr, size_t len, uint32_t access,
				  struct doca_mem **mem);

/**
 * @brief Start address of the region.
 * @param mem The memory.
 * @param[out] addr The start address.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_NOT_SUPPORTED for a remote memory (doca_mem_import): it has
 *         no address in this process.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_mem_get_addr(const struct doca_mem *mem, void **addr);

/**
 * @brief Length of the region in bytes.
 * @param mem The memory.
 * @param[out] len The length.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_mem_get_len(const struct doca_mem *mem, size_t *len);

/**
 * @brief Deregister (and free, when allocated by doca_mem_create) a memory.
 * @param mem The memory.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL, a wrong-type handle
 *         or a memory already destroyed (also by a concurrent destroy: of
 *         two, one succeeds and the other gets this; a stale handle: logged
 *         and counted by doca_stale_handle_count); DOCA_ERROR_IN_USE while
 *         buffers of it exist (nothing is changed).
 *
 * Thread safety: any thread; races with doca_buf_create on the same memory
 *         resolve to one winner.
 */
doca_error_t doca_mem_destroy(struct doca_mem *mem);

/**
 * @brief Export a memory to other processes (on this host or another) for
 *        RDMA READ and/or WRITE through a fabric device (fab0).
 *
 * The descriptor is opaque and versioned (the provider, the exporter's
 * endpoint address, the base, the length, a key, the access granted and a
 * registration number). It is a bearer capability: whoever holds its bytes
 * may access the memory with the access granted, so grant only what the
 * peer needs and pass it over a channel you trust. Each access set gets its
 * own registration and key, never used before in this process; exporting
 * the same access again returns the same descriptor. Destroying the memory
 * revokes every export (a peer's later access fails); a descriptor of a
 * destroyed memory never reaches another memory. An access under way when
 * the destroy comes is cut, not finished: no byte moves into or out of the
 * memory once doca_mem_destroy returns. To cut it the device drops its
 * peers' connections; a peer's operation that finds its connection reset
 * is issued once more on a new one, so the peers' next accesses, and
 * those in flight to the device's other exports, connect again and
 * succeed (a second failure is final: DOCA_ERROR_CONNECTION_RESET, with no
 * partial result to rely on). fab0 drops them by closing its
 * service endpoint and making it again on the same address and port; where
 * that fails (the port taken meanwhile, e.g. by a forked child's copy of
 * the fd, or no memory) the destroy still succeeds and logs a warning, the
 * device's other exports are unreachable, and the PE tries again every
 * retry_ms (as does the next export, refused with DOCA_ERROR_AGAIN while
 * the port is still taken).
 *
 * Peers' accesses are served by this process's progress engine: the PE of a
 * started context on the same device must run (a worker from
 * doca_pe_run_on_cpu, doca_pe_progress, or event mode). An exporter whose PE
 * never runs serves nothing (the peer's tasks fail after its retry time).
 *
 * @param mem A local memory.
 * @param access A non-empty OR of DOCA_ACCESS_FLAG_READ (peers may read it)
 *        and DOCA_ACCESS_FLAG_WRITE (peers may write it), a subset of the
 *        memory's own flags.
 * @param[out] desc The descriptor; owned by the memory, valid until
 *        doca_mem_destroy.
 * @param[out] len Its length in bytes.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or wrong-type
 *         handles and pointers, empty or unknown access flags;
 *         DOCA_ERROR_NOT_PERMITTED when @p access is not a subset of the
 *         memory's flags; DOCA_ERROR_NOT_SUPPORTED for a remote memory or a
 *         device that cannot export (sw0); DOCA_ERROR_AGAIN while the
 *         device cannot serve peers for the moment (fab0's service endpoint
 *         cannot be bound to its address again after a destroy, above:
 *         its port is taken, or the address is not this host's now; retry
 *         later);
 *         DOCA_ERROR_NO_MEMORY; the device's error registering the
 *         memory or, after such a destroy, making its service endpoint
 *         again for another reason (DOCA_ERROR_DRIVER,
 *         DOCA_ERROR_NOT_PERMITTED or DOCA_ERROR_NOT_SUPPORTED as the
 *         driver answers, see doca_dev_open; on fab0 also
 *         DOCA_ERROR_OPERATING_SYSTEM: no random key to register with, or
 *         a sleeping PE's epoll set refused the new endpoint's fd). A
 *         refused call exports nothing. When the device gives a reason for
 *         its refusal, the log says it: "doca_mem_export: REASON (ERROR)",
 *         a warning for DOCA_ERROR_AGAIN, an error otherwise.
 *
 * Thread safety: any thread; races with doca_mem_destroy of the same memory
 *         resolve to one winner.
 */
doca_error_t doca_mem_export(struct doca_mem *mem, uint32_t access, const void **desc, size_t *len);

/**
 * @brief Make a remote memory from another process's descriptor
 *        (doca_mem_export), bound to the context's fabric device.
 *
 * Buffers are carved from it as from local memory (bounds checked against
 * the exported length); doca_buf_get_data and doca_mem_get_addr on it
 * return DOCA_ERROR_NOT_SUPPORTED. A COPY task with a remote source is an
 * RDMA READ, with a remote destination an RDMA WRITE whose event means the
 * bytes are in the exporter's memory; both remote is
 * DOCA_ERROR_NOT_SUPPORTED; the access checks of submit use the access the
 * exporter granted. A task whose peer died or revoked the memory completes
 * once with FAILURE (DOCA_ERROR_CONNECTION_RESET or
 * DOCA_ERROR_NOT_PERMITTED); the context stays usable. Destroy it with
 * doca_mem_destroy (same rules as a local memory).
 *
 * The import checks the descriptor's bytes only; it does not contact the
 * exporter. So the descriptor of a memory already destroyed (revoked), or
 * of an exporter that has ended, is imported with DOCA_SUCCESS, and so are
 * buffers carved from it: the refusal comes with the first task through
 * it, which completes with FAILURE and DOCA_ERROR_NOT_PERMITTED (the
 * exporter lives, the memory is gone) or DOCA_ERROR_CONNECTION_RESET (the
 * exporter cannot be reached). A successful import is no proof that the
 * memory still exists.
 *
 * @param ctx A context whose bound device is a fabric device of the
 *        exporter's provider.
 * @param desc The descriptor's bytes.
 * @param len Their length.
 * @param[out] remote The remote memory.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or wrong-type
 *         handles and pointers, and for a malformed, truncated, damaged,
 *         wrong-version or wrong-provider descriptor (nothing is created;
 *         the log says why); DOCA_ERROR_NOT_CONNECTED when the context has
 *         no device; DOCA_ERROR_NOT_SUPPORTED when its device has no remote
 *         memory (sw0); DOCA_ERROR_NO_MEMORY. A reason the device gives
 *         for any refusal is logged as an error: "doca_mem_import: REASON
 *         (ERROR)".
 *
 * Thread safety: any thread.
 */
doca_error_t doca_mem_import(struct doca_ctx *ctx, const void *desc, size_t len,
			     struct doca_mem **remote);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MEM_H */
