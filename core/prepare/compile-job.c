/* SPDX-License-Identifier: MIT */
/* The schedule's code: its distinct functions rendered in translation
 * units (renderer.c), compiled on a thread of their own, so that clang
 * runs while prepare packs the weights (GigaAM full size: 1.2 GB of panels,
 * about as long as the compile), then looked up for each kernel. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/compile-job-private.h"

struct _CompileJob
{
  MorokRendered *rendered;
  GArray *unit_of;  /* guint per function */
  GPtrArray *units; /* char *: the sources */
  MorokCompileOptions opts;
  MorokObject **objects; /* per unit, once compiled */
  GError *error;
  GThread *thread;
};

/* Bytes of panels from which packing alone outlasts the compile of one unit. */
#define COMPILE_PACKING_ALONE (64u << 20)

static gpointer
compile_units (gpointer data)
{
  CompileJob *job = data;
  morok_compile_units ((const char *const *) job->units->pdata, job->units->len, &job->opts,
                       job->objects, &job->error);
  return NULL;
}

CompileJob *
compile_job_start (const MorokSchedule *sched, MorokIsa isa, const MorokCompileOptions *opts,
                   GError **error)
{
  const char *why = NULL;
  const MorokKernelLib *lib = morok_kernel_lib_find (isa, opts, &why);
  if (!lib)
    g_debug ("the units compile the kernel headers' bodies: no %s kernel library (%s)",
             morok_isa_name (isa), why);
  MorokRendered *r = morok_render_schedule (sched, isa, lib, error);
  if (!r)
    return NULL;
  CompileJob *job = g_new0 (CompileJob, 1);
  job->rendered = r;
  job->opts = *opts;
  job->opts.lib = lib;
  job->unit_of = g_array_new (FALSE, FALSE, sizeof (guint));
  /* compilers side by side, one per core, unless prepare packs many
   * weights meanwhile: with the library, one unit then hides behind the
   * packing, and a second clang slowed the packing threads more than it
   * saved (GigaAM full size, cold) */
  gsize packed = 0;
  for (guint i = 0; i < sched->buffers->len; i++)
    {
      const MorokScheduleBuffer *buf = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
      packed += buf->kind == MOROK_BUFFER_PACKED ? buf->bytes : 0;
    }
  guint max_units = lib && packed > COMPILE_PACKING_ALONE ? 1 : g_get_num_processors ();
  job->units = morok_render_units (r, max_units, job->unit_of);
  job->objects = g_new0 (MorokObject *, job->units->len);
  /* without a thread (none to be had), the compile runs here and now */
  job->thread = g_thread_try_new ("morok-compile", compile_units, job, NULL);
  if (!job->thread)
    compile_units (job);
  return job;
}

MorokKernelFn *
compile_job_finish (CompileJob *job, MorokProgramBuilder *b, GError **error)
{
  if (job->thread)
    g_thread_join (job->thread);
  const MorokRendered *r = job->rendered;
  MorokKernelFn *fns = NULL;
  if (job->error)
    g_propagate_error (error, g_steal_pointer (&job->error));
  else if (b)
    {
      g_autofree MorokKernelFn *by_function = g_new (MorokKernelFn, MAX (r->functions->len, 1));
      gboolean ok = TRUE;
      for (guint f = 0; ok && f < r->functions->len; f++)
        {
          char name[32];
          g_snprintf (name, sizeof name, "morok_f%u", f);
          MorokObject *object = job->objects[g_array_index (job->unit_of, guint, f)];
          ok = (by_function[f] = (MorokKernelFn) morok_object_lookup (object, name, error)) != NULL;
        }
      for (guint u = 0; u < job->units->len; u++)
        morok_program_builder_add_object (b, g_steal_pointer (&job->objects[u]));
      fns = ok ? g_new (MorokKernelFn, MAX (r->function_of->len, 1)) : NULL;
      for (guint k = 0; fns && k < r->function_of->len; k++)
        fns[k] = by_function[g_array_index (r->function_of, guint, k)];
    }
  for (guint u = 0; u < job->units->len; u++)
    morok_object_free (job->objects[u]);
  g_free (job->objects);
  g_ptr_array_unref (job->units);
  g_array_unref (job->unit_of);
  morok_rendered_free (job->rendered);
  g_free (job);
  return fns;
}
