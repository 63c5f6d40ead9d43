/*
 * actors/tsan_annotate.h — ThreadSanitizer annotations for synchronisation
 * TSan cannot see: Concurrency Kit rings and liburcu are inline asm. In
 * non-TSan builds every macro compiles to nothing.
 *
 * The pattern (TOOLCHAIN.md): release on a payload before handing it over
 * through a ring, acquire on it after taking it out; mark a ring's slot array
 * as a benign race once, because the slot copy itself is ordered by ck's
 * fenced index stores, which TSan does not see.
 */
#ifndef DOCA_TSAN_ANNOTATE_H
#define DOCA_TSAN_ANNOTATE_H

#include <stddef.h>

#ifdef DOCA_TSAN
#include <sanitizer/tsan_interface.h>
void AnnotateBenignRaceSized(const char *file, int line, const volatile void *mem, size_t size,
			     const char *desc);
#define TSAN_RELEASE(p) __tsan_release((void *)(p))
#define TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#define TSAN_BENIGN_RACE(p, size, why) AnnotateBenignRaceSized(__FILE__, __LINE__, (p), (size), (why))
#else
#define TSAN_RELEASE(p) ((void)(p))
#define TSAN_ACQUIRE(p) ((void)(p))
#define TSAN_BENIGN_RACE(p, size, why) ((void)(p), (void)(size))
#endif

/*
 * liburcu's grace periods, for TSan: every RCU reader (engine or backend
 * thread) releases this token when it leaves a read-side section; code that
 * really follows a grace period (after synchronize_rcu, at the start of a
 * call_rcu callback) acquires it. See engine/rcu.h.
 */
extern char tsan_rcu_token;
#define TSAN_RCU_READER_EXIT() TSAN_RELEASE(&tsan_rcu_token)
#define TSAN_RCU_GRACE_PASSED() TSAN_ACQUIRE(&tsan_rcu_token)

/* Thread-locals on the hot path: initial-exec, so an access is one
 * fs-relative load instead of a __tls_get_addr call. */
#define DOCA_TLS _Thread_local __attribute__((tls_model("initial-exec")))

#endif /* DOCA_TSAN_ANNOTATE_H */
