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
 *         handles, len 0 or too large, bad access flags;
 *         DOCA_ERROR_NOT_CONNECTED when the context has no device;
 *         DOCA_ERROR_NO_MEMORY; the device's registration error.
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
 * @return As doca_mem_create.
 *
 * Thread safety: any thread.
 */
doca_error_t doca_mem_create_from(struct doca_ctx *ctx, void *addr, size_t len, uint32_t access,
				  struct doca_mem **mem);

/**
 * @brief Start address of the region.
 * @param mem The memory.
 * @param[out] addr The start address.
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle.
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
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for NULL or a wrong-type handle;
 *         DOCA_ERROR_IN_USE while buffers of it exist (nothing is changed).
 *
 * Thread safety: any thread; races with doca_buf_create on the same memory
 *         resolve to one winner.
 */
doca_error_t doca_mem_destroy(struct doca_mem *mem);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MEM_H */
