/*
 * actors/word_asm.h — WORD_ASM: where the hot paths may access an atomic
 * word with one x86-64 instruction on memory instead of the C11 calls
 * (gcc keeps an atomic load apart from its compare, and a relaxed load,
 * change and store apart: two or three instructions where one does).
 * Only on x86-64, and never in the TSan and explorer builds, which keep
 * the C11 atomics their tools watch (and the explorer its points and
 * checks). Each use says why its one instruction is the access it
 * replaces: actors/runner.h (the guard's word compares), engine/engine.h
 * (OWNED_RMW_ASM, ATOMIC_IS_ZERO, head_pair_is), engine/task.c.
 */
#ifndef DOCA_ACTORS_WORD_ASM_H
#define DOCA_ACTORS_WORD_ASM_H

/* A TSan build made by CFLAGS alone would keep this asm and liburcu's
 * inline fast paths out of TSan's sight and lack the annotations
 * (actors/tsan_annotate.h): refuse it, naming the way that works. */
#if defined(__SANITIZE_THREAD__)
#define DOCA_TSAN_COMPILER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DOCA_TSAN_COMPILER 1
#endif
#endif
#if defined(DOCA_TSAN_COMPILER) && !defined(DOCA_TSAN)
#error "ThreadSanitizer build without DOCA_TSAN: configure with meson -Db_sanitize=thread"
#endif

#if defined(__x86_64__) && !defined(DOCA_TSAN) && !defined(DOCA_EXPLORE)
#define WORD_ASM 1
#endif

#endif
