/* describe_int.h - what memprof found in a target, in words: the process, the PyTorch library,
   and the walk (layout, devices); `memprof info` in the CLI and in gdb print it. */
#ifndef MEMPROF_DESCRIBE_INT_H
#define MEMPROF_DESCRIBE_INT_H

#include "mp_c10.h"
#include "mp_out.h"
#include "mp_target.h"
#include "mp_walk.h"

/* "target:", "pid:", "executable:", "command:" lines. */
void mp_describe_target(mp_out *out, const mp_target *t);
/* The library: path, build-id, load bias, version, C++ ABI, CUDA, DWARF, allocator pointer. */
void mp_describe_library(mp_out *out, const mp_c10 *c10);
/* The walk: backend, layout and its source, each device in brief, trace times, partial. */
void mp_describe_walk(mp_out *out, const mp_walk *w);
/* "python:": the CPython the target runs (version, file, load bias), which names allocation frames. */
void mp_describe_python(mp_out *out, mp_target *t);

#endif
