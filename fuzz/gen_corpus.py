#!/usr/bin/env python3
"""fuzz/gen_corpus.py — writes the seed corpus (fuzz/corpus/seed-*).

Each seed is a short API script in the fuzzer's input language (ops.h):
an opcode byte, then that operation's argument bytes. Slots count from 0 in
creation order. Run from anywhere: python3 fuzz/gen_corpus.py
"""
import os

# ops.h, in order
(CTX_CREATE, CTX_DESTROY, CTX_SET_DEV, CTX_SET_MAX, CTX_SET_CBS, DEV_OPEN, DEV_CLOSE,
 MEM_CREATE, MEM_CREATE_FROM, MEM_DESTROY, BUF_CREATE, BUF_DESTROY, PE_CREATE,
 PE_CONNECT, PE_DESTROY, START, STOP, SUBMIT, PROGRESS, GET_EVENT, EVENT_FREE,
 FILL, STALE_EVENT_FREE, STALE_USE, GET_EVENTS, EVENT_FREE_BULK, SUBMIT_BATCH,
 GET_EVENTS_OK) = range(28)

# model.c m_devstrs indexes
SW0, FAIL3, PARTIAL2, FAIL4_PARTIAL2, FAIL1, PARTIAL1 = range(6)
NULL_STR, EMPTY, LONG, NOPARAMS, NONAME, BOGUS, BIG, NEG, NOVAL, ENG65, DELAY, DUP, CPUS99, \
    NONUTF8, NOSUCH, NONUTF8_NAME, COMMA = range(6, 23)
# harness.c value tables
LEN_256, LEN_100, LEN_16 = 5, 4, 2
R, W, RW = 0, 1, 2
WHOLE = (0, 2)          # buf_create: offset 0, length = the rest
COPY, COPY_PARTIAL = 0, 1
MAX_0, MAX_1, MAX_3, MAX_8, MAX_ROOM, NULL_ARRAY = range(6)  # get_events variants
NULL_HAS_ERROR = 6  # get_events_ok: its variants are get_events' and this
# free_bulk entries: a held index (times 8), NULL, or a stale handle (times 8)
ENTRY_NULL = 7


def held(i):
    return 8 * i


def stale(i):
    return 8 * i + 6


def bufs_halves():
    # buf_create(mem 0, offset variant 0 -> 0, length variant 2 -> whole) and
    # (offset variant 2 -> L/2, length variant 2 -> rest)
    return [BUF_CREATE, 0, 0, 2, BUF_CREATE, 0, 2, 2]


def base(dev=SW0, extra=()):
    return ([CTX_CREATE, 0, DEV_OPEN, dev, 0, CTX_SET_DEV, 0, 0, PE_CREATE, PE_CONNECT, 0, 0]
            + list(extra)
            + [MEM_CREATE, 0, LEN_256, RW, 0, FILL, 0, 0x41] + bufs_halves())




def batch(ctx, tasks):
    # submit_batch(ctx, count byte: 1 + byte % 40 tasks, then src, dst, variant each)
    return [SUBMIT_BATCH, ctx, len(tasks) - 1] + [b for t in tasks for b in t]


# submit_batch count bytes that submit nothing (harness.c op_submit_batch)
BATCH_EMPTY, BATCH_NULL_DESCS_EMPTY, BATCH_NULL_DESCS, BATCH_NULL_ACCEPTED = range(0xfc, 0x100)


SEEDS = {
    # bursts from the PE's thread on inline sw0: 10 (posted at once), 2 and a
    # single task (left for the turn), then a stop before any turn: flushed in
    # submission order; then a pool of 8 refusing the 9th task of a burst
    # with AGAIN, and a burst stopped at a destroyed buffer
    "submit-batch": base() + [START, 0, PROGRESS, 0]
                    + batch(0, [(1, 0, COPY)] * 10) + batch(0, [(1, 0, COPY)] * 2)
                    + [SUBMIT, 0, 1, 0, COPY, STOP, 0, PROGRESS, 0, GET_EVENTS, 0, MAX_ROOM,
                       EVENT_FREE_BULK, 8] + [held(i) for i in range(8)]
                    + [GET_EVENTS, 0, MAX_ROOM, EVENT_FREE_BULK, 5] + [held(i) for i in range(5)]
                    + [PROGRESS, 0, CTX_SET_MAX, 0, 3, START, 0, PROGRESS, 0]
                    + batch(0, [(1, 0, COPY)] * 10) + [PROGRESS, 0, GET_EVENTS, 0, MAX_ROOM,
                                                       EVENT_FREE_BULK, 8] + [held(i) for i in range(8)]
                    + [BUF_DESTROY, 1] + batch(0, [(0, 0, COPY), (1, 0, COPY), (0, 0, COPY)])
                    + [PROGRESS, 0, STOP, 0, PROGRESS, 0],
    # bursts past the call's chunk of 32 from the PE's thread: 40 (32 + 8, both
    # posted at once), 33 (32 posted, 1 left for the turn); the four argument
    # variants on the live ctx and on a slot with no ctx; a stop before any
    # turn flushes all 73 in submission order
    "submit-batch-chunks": base() + [START, 0, PROGRESS, 0]
                           + batch(0, [(1, 0, COPY)] * 40) + batch(0, [(1, 0, COPY_PARTIAL)] * 33)
                           + [b for v in range(BATCH_EMPTY, BATCH_NULL_ACCEPTED + 1)
                              for b in (SUBMIT_BATCH, 0, v, SUBMIT_BATCH, 1, v)]
                           + [STOP, 0, PROGRESS, 0, GET_EVENTS, 0, MAX_ROOM, PROGRESS, 0],
    # bursts: two ctxs of one PE (pools of 8 and 3); get_events with max 0, a NULL
    # array, 1, 3, then all the room (more than is ready); free_bulk with NULL
    # entries, an event named twice, stale handles, a NULL array; refill to AGAIN
    "burst": base(SW0, [CTX_SET_MAX, 0, 3])
             + [CTX_CREATE, 0, CTX_SET_MAX, 1, 2, CTX_SET_DEV, 1, 0, PE_CONNECT, 0, 1,
                MEM_CREATE, 1, LEN_256, RW, 0, FILL, 1, 0x17, BUF_CREATE, 1, 0, 2, BUF_CREATE, 1, 2, 2,
                START, 0, START, 1]
             + [SUBMIT, 0, 1, 0, COPY, SUBMIT, 1, 3, 2, COPY] * 3 + [SUBMIT, 1, 3, 2, COPY]
             + [GET_EVENTS, 0, MAX_8, PROGRESS, 0, GET_EVENTS, 0, NULL_ARRAY, GET_EVENTS, 0, MAX_0,
                GET_EVENTS, 0, MAX_1, GET_EVENTS, 0, MAX_3, GET_EVENTS, 0, MAX_ROOM, GET_EVENTS, 0, MAX_ROOM]
             + [EVENT_FREE_BULK, 8, ENTRY_NULL, held(0), held(1), held(1), ENTRY_NULL, held(2), stale(0),
                held(3)]
             + [EVENT_FREE_BULK, 3, stale(0), stale(1), held(0)]
             + [EVENT_FREE_BULK, 9 * 7 + 2, held(0), held(1)]
             + [SUBMIT, 0, 1, 0, COPY] * 9 + [PROGRESS, 0, GET_EVENTS, 0, MAX_ROOM]
             + [EVENT_FREE_BULK, 8] + [held(i) for i in range(8)] + [STOP, 0, STOP, 1],
    # get_events_ok on every third descriptor failing (3, 6, 9 of 9): stops
    # before each failure (again while it is first), which get_event takes;
    # max 0, 1, 3, a NULL array and a NULL has_error on the way
    "get-events-ok": base(FAIL3) + [START, 0] + [SUBMIT, 0, 1, 0, COPY] * 9
                     + [PROGRESS, 0, GET_EVENTS_OK, 0, MAX_ROOM, GET_EVENTS_OK, 0, MAX_ROOM,
                        GET_EVENT, 0, GET_EVENTS_OK, 0, MAX_0, GET_EVENTS_OK, 0, NULL_ARRAY,
                        GET_EVENTS_OK, 0, NULL_HAS_ERROR, GET_EVENTS_OK, 0, MAX_1,
                        GET_EVENTS_OK, 0, MAX_3, GET_EVENT, 0, GET_EVENTS_OK, 0, MAX_8,
                        GET_EVENTS_OK, 0, MAX_8, GET_EVENT, 0, GET_EVENTS_OK, 0, MAX_ROOM]
                     + [EVENT_FREE_BULK, 9] + [held(i) for i in range(9)] + [STOP, 0],
    # stale handles: an event freed again after its slot holds a newer event
    # (max_tasks 1), buffers and a memory destroyed again, a submit naming
    # destroyed buffers; each refused and counted, nothing changed
    "stale-handles": base(SW0, [CTX_SET_MAX, 0, 0]) + [START, 0, SUBMIT, 0, 1, 0, COPY,
                                                       PROGRESS, 0, GET_EVENT, 0, EVENT_FREE, 0,
                                                       SUBMIT, 0, 1, 0, COPY, PROGRESS, 0,
                                                       GET_EVENT, 0, STALE_EVENT_FREE, 0,
                                                       SUBMIT, 0, 1, 0, COPY, EVENT_FREE, 0,
                                                       STALE_EVENT_FREE, 1, STOP, 0,
                                                       BUF_DESTROY, 1, STALE_USE, 2, 0, 0,
                                                       STALE_USE, 3, 0, 0, BUF_DESTROY, 0,
                                                       MEM_DESTROY, 0, STALE_USE, 1, 0, 0,
                                                       STALE_USE, 2, 1, 0],
    # the seed lifecycle: copy the upper half into... (buf 1 -> buf 0) and back
    "lifecycle": base() + [START, 0, SUBMIT, 0, 1, 0, COPY, PROGRESS, 0, GET_EVENT, 0,
                           EVENT_FREE, 0, STOP, 0, BUF_DESTROY, 0, BUF_DESTROY, 1,
                           MEM_DESTROY, 0, DEV_CLOSE, 0, CTX_DESTROY, 0, PE_DESTROY, 0],
    # every third descriptor fails
    "fail-every-3": base(FAIL3) + [START, 0] + [SUBMIT, 0, 1, 0, COPY] * 7
                    + [PROGRESS, 0] + [GET_EVENT, 0, EVENT_FREE, 0] * 7 + [STOP, 0],
    # partials (first half), and a short dst with ALLOW_PARTIAL
    "partial": base(PARTIAL2) + [BUF_CREATE, 0, 0, 1, START, 0,
                                 SUBMIT, 0, 1, 0, COPY, SUBMIT, 0, 0, 1, COPY,
                                 SUBMIT, 0, 0, 2, COPY_PARTIAL, SUBMIT, 0, 0, 2, COPY,
                                 PROGRESS, 0, GET_EVENT, 0, GET_EVENT, 0, GET_EVENT, 0,
                                 EVENT_FREE, 0, EVENT_FREE, 0, EVENT_FREE, 0],
    # stop with tasks queued: flushed (FAILURE, SHUTDOWN), then IDLE after the frees
    "stop-flush": base(FAIL4_PARTIAL2) + [START, 0] + [SUBMIT, 0, 1, 0, COPY] * 5
                  + [STOP, 0, STOP, 0, SUBMIT, 0, 1, 0, COPY, PROGRESS, 0]
                  + [GET_EVENT, 0, EVENT_FREE, 0] * 5 + [PROGRESS, 0, START, 0],
    # a tiny task pool: AGAIN until an event is freed
    "credits": base(SW0, [CTX_SET_MAX, 0, 1]) + [START, 0, SUBMIT, 0, 1, 0, COPY,
                                                 SUBMIT, 0, 1, 0, COPY, PROGRESS, 0,
                                                 SUBMIT, 0, 1, 0, COPY, GET_EVENT, 0,
                                                 EVENT_FREE, 0, SUBMIT, 0, 1, 0, COPY,
                                                 PROGRESS, 0, STOP, 0],
    # callbacks: state reports, and an event callback that stops its ctx
    "callbacks": base(FAIL3, [CTX_SET_CBS, 0, 4 | 2]) + [START, 0]
                 + [SUBMIT, 0, 1, 0, COPY] * 3 + [PROGRESS, 0, STOP, 0, CTX_SET_CBS, 0, 4 | 1,
                                                  START, 0, SUBMIT, 0, 0, 1, COPY, PROGRESS, 0],
    # two ctxs share one device opened twice with the same string (one fault counter)
    "shared-device": [CTX_CREATE, 0, CTX_CREATE, 0, DEV_OPEN, FAIL3, 0, DEV_OPEN, FAIL3, 0,
                      CTX_SET_DEV, 0, 0, CTX_SET_DEV, 1, 1, PE_CREATE, PE_CONNECT, 0, 0,
                      PE_CONNECT, 0, 1, MEM_CREATE, 0, LEN_100, RW, 0, MEM_CREATE, 1, LEN_100, RW, 0,
                      FILL, 0, 7, FILL, 1, 9, BUF_CREATE, 0, 0, 2, BUF_CREATE, 0, 2, 2,
                      BUF_CREATE, 1, 0, 2, BUF_CREATE, 1, 2, 2, START, 0, START, 1]
                     + [SUBMIT, 0, 0, 1, COPY, SUBMIT, 1, 2, 3, COPY] * 3
                     + [PROGRESS, 0] + [GET_EVENT, 0, EVENT_FREE, 0] * 6
                     + [SUBMIT, 1, 3, 2, COPY, SUBMIT, 0, 1, 0, COPY, PROGRESS, 0, PROGRESS, 0],
    # misuse: destroy a running ctx, a mem with buffers, a dev with memories, a PE in use,
    # a second PE, a second device, submit across ctxs, wrong-type handles
    "misuse": base() + [CTX_CREATE, 0, PE_CREATE, START, 0, CTX_DESTROY, 0, MEM_DESTROY, 0,
                        DEV_CLOSE, 0, PE_DESTROY, 0, PE_CONNECT, 1, 0, CTX_SET_DEV, 0, 0,
                        CTX_SET_MAX, 0, 2, START, 0, START, 1, SUBMIT, 1, 0, 1, COPY,
                        SUBMIT, 0, 0, 1, 0x30, SUBMIT, 0, 0, 1, 2, SUBMIT, 0, 8, 1, COPY,
                        SUBMIT, 4, 0, 1, COPY, SUBMIT, 0, 0, 1, 0xff, BUF_DESTROY, 0,
                        STOP, 0, STOP, 0, CTX_DESTROY, 0, DEV_CLOSE, 0, CTX_DESTROY, 0,
                        MEM_DESTROY, 0, BUF_DESTROY, 1, BUF_DESTROY, 0, MEM_DESTROY, 0,
                        DEV_CLOSE, 0, CTX_DESTROY, 0, PE_DESTROY, 0, PE_DESTROY, 1],
    # hostile open strings, then a valid one
    "open-strings": sum(([DEV_OPEN, i, 0, DEV_CLOSE, 0] for i in range(23)), []) + [DEV_OPEN, SW0, 7],
    # buffers at the edges: zero-length, out of range, overflowing; access rights
    "buffers": [CTX_CREATE, 0, DEV_OPEN, SW0, 0, CTX_SET_DEV, 0, 0, PE_CREATE, PE_CONNECT, 0, 0,
                MEM_CREATE, 0, LEN_16, R, 0, MEM_CREATE, 0, LEN_16, W, 0, MEM_CREATE, 0, 6, RW, 0,
                MEM_CREATE, 0, 7, RW, 0, MEM_CREATE, 0, LEN_16, 3, 0, MEM_CREATE, 0, LEN_16, 4, 0,
                BUF_CREATE, 0, 0, 2, BUF_CREATE, 1, 0, 2, BUF_CREATE, 0, 3, 0, BUF_CREATE, 0, 4, 0,
                BUF_CREATE, 0, 5, 0, BUF_CREATE, 0, 1, 4, BUF_CREATE, 0, 1, 3, BUF_CREATE, 1, 1, 1,
                START, 0, SUBMIT, 0, 0, 1, COPY, SUBMIT, 0, 1, 0, COPY, SUBMIT, 0, 2, 1, COPY,
                SUBMIT, 0, 0, 3, COPY_PARTIAL, PROGRESS, 0, GET_EVENT, 0],
    # memory registered twice over one caller region; overlapping copies
    "aliasing": [CTX_CREATE, 0, DEV_OPEN, PARTIAL1, 0, CTX_SET_DEV, 0, 0, PE_CREATE, PE_CONNECT, 0, 0,
                 MEM_CREATE_FROM, 0, 0, 10, LEN_256, RW, MEM_CREATE_FROM, 0, 0, 74, LEN_256, RW,
                 MEM_CREATE_FROM, 0, 6, 0, LEN_16, RW, MEM_CREATE_FROM, 0, 7, 0, LEN_16, RW,
                 FILL, 0, 3, BUF_CREATE, 0, 0, 2, BUF_CREATE, 1, 0, 2, BUF_CREATE, 0, 1, 2,
                 START, 0, SUBMIT, 0, 0, 1, COPY, SUBMIT, 0, 2, 0, COPY_PARTIAL, SUBMIT, 0, 1, 1, COPY,
                 PROGRESS, 0, FILL, 1, 5, SUBMIT, 0, 1, 2, COPY_PARTIAL, PROGRESS, 0, MEM_DESTROY, 1],
    # two PEs, round robin over three ctxs, a ctx destroyed (leaves its PE)
    "round-robin": [PE_CREATE, PE_CREATE, DEV_OPEN, FAIL4_PARTIAL2, 0]
                   + sum(([CTX_CREATE, 0, CTX_SET_DEV, c, 0, PE_CONNECT, 0, c,
                           MEM_CREATE, c, LEN_16, RW, 0, FILL, c, c + 1,
                           BUF_CREATE, c, 0, 2, BUF_CREATE, c, 2, 2, START, c] for c in range(3)), [])
                   + sum(([SUBMIT, c, 2 * c + 1, 2 * c, COPY] for c in (0, 1, 2, 1, 0, 2)), [])
                   + [PROGRESS, 0, PROGRESS, 1] + [GET_EVENT, 0] * 7 + [EVENT_FREE, 0] * 6
                   + [STOP, 1, PROGRESS, 0, CTX_DESTROY, 1]
                   + sum(([SUBMIT, c, 2 * c + 1, 2 * c, COPY] for c in (0, 2, 0)), [])
                   + [PROGRESS, 0, PROGRESS, 0],
}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, ops in SEEDS.items():
        with open(os.path.join(out, "seed-" + name), "wb") as f:
            f.write(bytes(b % 256 for b in ops))
    print("wrote %d seeds to %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()
