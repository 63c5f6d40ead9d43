/*
 * fuzz/ops.h — the fuzzer's input language. An input is a sequence of
 * operations: one opcode byte (modulo OP_COUNT), then the argument bytes the
 * operation reads (missing bytes read as 0). gen_corpus.py writes the same
 * numbers: keep the two in step.
 *
 * Argument bytes: a handle byte b names slot b % (N + 1) of its table, where
 * N means "a live handle of another type" and an empty slot means NULL. A
 * "variant" byte picks one entry of the value tables in harness.c.
 */
#ifndef DOCA_FUZZ_OPS_H
#define DOCA_FUZZ_OPS_H

#include <stddef.h>
#include <stdint.h>

enum fuzz_op {
	OP_CTX_CREATE = 0,   /* variant (7: NULL out-parameter) */
	OP_CTX_DESTROY,      /* ctx */
	OP_CTX_SET_DEV,      /* ctx, dev */
	OP_CTX_SET_MAX,      /* ctx, variant */
	OP_CTX_SET_CBS,      /* ctx, mode: bits 0-1 event callback (none/record/stop), bit 2 state callback */
	OP_DEV_OPEN,         /* string index, variant (7: NULL out-parameter) */
	OP_DEV_CLOSE,        /* dev */
	OP_MEM_CREATE,       /* ctx, length variant, access variant */
	OP_MEM_CREATE_FROM,  /* ctx, arena/address variant, offset, length variant, access variant */
	OP_MEM_DESTROY,      /* mem */
	OP_BUF_CREATE,       /* mem, offset variant, length variant */
	OP_BUF_DESTROY,      /* buf */
	OP_PE_CREATE,        /* (none) */
	OP_PE_CONNECT,       /* pe, ctx */
	OP_PE_DESTROY,       /* pe */
	OP_START,            /* ctx */
	OP_STOP,             /* ctx */
	OP_SUBMIT,           /* ctx, src buf, dst buf, descriptor variant */
	OP_PROGRESS,         /* pe */
	OP_GET_EVENT,        /* pe */
	OP_EVENT_FREE,       /* index among held events */
	OP_FILL,             /* mem, seed: the application writes into a memory */
	OP_STALE_EVENT_FREE, /* index among the last freed events */
	OP_STALE_USE,        /* kind (ctx/mem/buf destroy, submit with buffers), index, ctx */
	OP_GET_EVENTS,       /* pe, max variant (0, 1, 3, 8, all the room held, NULL array) */
	OP_EVENT_FREE_BULK,  /* count (0-8; NULL array variant), then per entry: held index, NULL or stale */
	OP_SUBMIT_BATCH,     /* ctx, count (1-40; 0xfc-0xff: empty, NULL descs, NULL accepted), then per task: src, dst, variant */
	OP_GET_EVENTS_OK,    /* pe, variant (max 0, 1, 3, 8, all the room held, NULL array, NULL has_error) */
	OP_COUNT
};

/* The libFuzzer entry point, also driven by replay_main.c. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* DOCA_FUZZ_OPS_H */
