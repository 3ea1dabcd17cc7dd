/* SPDX-License-Identifier: MIT */
/* compile-job-private.h (private to core/prepare): a schedule's code,
 * rendered and compiled on a thread of its own while prepare packs the
 * weights, then handed to the program. */
#pragma once

#include "prepare/morok-renderer.h"
#include "runtime/morok-program-builder.h"

G_BEGIN_DECLS

typedef struct _CompileJob CompileJob;

/* Renders @sched and starts compiling it in the background. (transfer
 * full) NULL with @error set when a kernel cannot be rendered. */
G_GNUC_INTERNAL CompileJob *compile_job_start (const MorokSchedule *sched, MorokIsa isa,
                                               const MorokCompileOptions *opts, GError **error);
/* Waits for the compilers; gives @b the objects and returns each schedule
 * kernel's function (transfer full, g_free), or NULL with @error set. Frees
 * @job. With @b NULL it only waits and frees (prepare failed meanwhile). */
G_GNUC_INTERNAL MorokKernelFn *compile_job_finish (CompileJob *job, MorokProgramBuilder *b,
                                                   GError **error);

G_END_DECLS
