/*
 * engine/api_visibility.h — the public API keeps default visibility while
 * the library is compiled with -fvisibility=hidden.
 *
 * meson.build force-includes this file (-include) first into every library
 * source, so the first declaration of each public function the compiler sees
 * is the one below, marked default; a later declaration or the definition
 * keeps that visibility. Everything else is hidden: the compiler may then
 * call and inline internal functions directly, and engine/libdoca-core.map
 * exports exactly the public API from what is left.
 */
#ifndef DOCA_API_VISIBILITY_H
#define DOCA_API_VISIBILITY_H

#pragma GCC visibility push(default)
#include "doca_core.h"
#pragma GCC visibility pop

#endif /* DOCA_API_VISIBILITY_H */
