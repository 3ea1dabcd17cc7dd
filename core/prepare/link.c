/* SPDX-License-Identifier: MIT */
/* The schedule's code: its distinct functions rendered in translation
 * units (renderer.c), compiled on a thread of their own, so that clang
 * runs while prepare packs the weights (GigaAM full size: 1.2 GB of panels,
 * about as long as the compile), then looked up for each kernel. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/link-private.h"

struct _Link
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
#define LINK_PACKING_ALONE (64u << 20)

static gpointer
compile_units (gpointer data)
{
  Link *l = data;
  morok_compile_units ((const char *const *) l->units->pdata, l->units->len, &l->opts, l->objects,
                       &l->error);
  return NULL;
}

Link *
link_start (const MorokSchedule *sched, MorokIsa isa, const MorokCompileOptions *opts,
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
  Link *l = g_new0 (Link, 1);
  l->rendered = r;
  l->opts = *opts;
  l->opts.lib = lib;
  l->unit_of = g_array_new (FALSE, FALSE, sizeof (guint));
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
  guint max_units = lib && packed > LINK_PACKING_ALONE ? 1 : g_get_num_processors ();
  l->units = morok_render_units (r, max_units, l->unit_of);
  l->objects = g_new0 (MorokObject *, l->units->len);
  /* without a thread (none to be had), the compile runs here and now */
  l->thread = g_thread_try_new ("morok-compile", compile_units, l, NULL);
  if (!l->thread)
    compile_units (l);
  return l;
}

MorokKernelFn *
link_finish (Link *l, MorokProgramBuilder *b, GError **error)
{
  if (l->thread)
    g_thread_join (l->thread);
  const MorokRendered *r = l->rendered;
  MorokKernelFn *fns = NULL;
  if (l->error)
    g_propagate_error (error, g_steal_pointer (&l->error));
  else if (b)
    {
      g_autofree MorokKernelFn *by_function = g_new (MorokKernelFn, MAX (r->functions->len, 1));
      gboolean ok = TRUE;
      for (guint f = 0; ok && f < r->functions->len; f++)
        {
          char name[32];
          g_snprintf (name, sizeof name, "morok_f%u", f);
          MorokObject *object = l->objects[g_array_index (l->unit_of, guint, f)];
          ok = (by_function[f] = (MorokKernelFn) morok_object_lookup (object, name, error)) != NULL;
        }
      for (guint u = 0; u < l->units->len; u++)
        morok_program_builder_add_object (b, g_steal_pointer (&l->objects[u]));
      fns = ok ? g_new (MorokKernelFn, MAX (r->function_of->len, 1)) : NULL;
      for (guint k = 0; fns && k < r->function_of->len; k++)
        fns[k] = by_function[g_array_index (r->function_of, guint, k)];
    }
  for (guint u = 0; u < l->units->len; u++)
    morok_object_free (l->objects[u]);
  g_free (l->objects);
  g_ptr_array_unref (l->units);
  g_array_unref (l->unit_of);
  morok_rendered_free (l->rendered);
  g_free (l);
  return fns;
}
