/* actors/runner.c — the per-thread identity used by the runner guard. */
#include "runner.h"

_Thread_local char runner_self_token;
