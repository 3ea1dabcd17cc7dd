/* SPDX-License-Identifier: MIT */
/* The C renderer's translation units: the head (ISA macros, the prelude of
 * micro-kernel headers, integer helpers), then the distinct kernel
 * functions (render-kernels.c, render-matmul.c), whose values
 * render-expr.c renders. Kernels read their buffers through a binding
 * table of local slots, so kernels of the same computation over different
 * buffers (the layers of an encoder) render the same body, kept once. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/render-private.h"
#include "kernels/weight-pack.h"
#include <math.h>
#include <string.h>

extern const char morok_kernel_prelude[];

const char *
morok_render_prelude (void)
{
  return morok_kernel_prelude;
}

/* ---- kernels ---- */

/* Kernel @k's body, from its opening brace; NULL with @error set. */
static char *
render_body (const MorokSchedule *sched, guint k, GError **error)
{
  GString *out = g_string_new ("{\n  (void) v;\n");
  Ctx c = { .sched = sched, .out = out, .error = error, .indent = 1,
            .ker = &g_array_index (sched->kernels, MorokScheduleKernel, k),
            .scopes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref) };
  render_declare_buffers (&c);
  gboolean ok = c.ker->kind == MOROK_KERNEL_MATMUL      ? render_matmul_kernel (&c)
                : c.ker->kind == MOROK_KERNEL_ATTENTION ? render_attention_kernel (&c)
                                                         : render_loop_kernel (&c);
  g_string_append (out, "}\n");
  g_ptr_array_unref (c.scopes);
  return g_string_free (out, !ok);
}

MorokRendered *
morok_render_schedule (const MorokSchedule *sched, MorokIsa isa, GError **error)
{
  g_return_val_if_fail (sched != NULL, NULL);
  static const char *const isa_macro[] = { "MOROK_ISA_PORTABLE", "MOROK_ISA_AVX2", "MOROK_ISA_AVX512" };
  g_autoptr (MorokRendered) r = g_new0 (MorokRendered, 1);
  r->head = g_strdup_printf ("#define %s 1\n#define MOROK_GEMM_SMALL %d\n%s\n"
                             "#define MOROK_IMIN(a, b) ((a) < (b) ? (a) : (b))\n"
                             "#define MOROK_IMAX(a, b) ((a) > (b) ? (a) : (b))\n"
                             "#define MOROK_IDIV(a, b) ((a) / (b))\n"
                             "#define MOROK_IMOD(a, b) ((a) %% (b))\n"
                             "#define MOROK_CLAMP(x, lo, hi) MOROK_IMIN (MOROK_IMAX (x, lo), hi)\n",
                             isa_macro[isa], MOROK_GEMM_SMALL, morok_kernel_prelude);
  r->functions = g_ptr_array_new_with_free_func (g_free);
  r->function_of = g_array_sized_new (FALSE, FALSE, sizeof (guint), sched->kernels->len);
  /* body text -> function index + 1 */
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      char *body = render_body (sched, k, error);
      if (!body)
        return NULL;
      guint f = GPOINTER_TO_UINT (g_hash_table_lookup (seen, body));
      if (f == 0)
        {
          const MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
          g_autofree char *what = morok_node_describe (ker->root);
          f = r->functions->len + 1;
          g_ptr_array_add (r->functions,
                           g_strdup_printf ("\n/* %s%s */\nvoid morok_f%u (void *const *bufs, "
                                            "const int64_t *restrict v, uint32_t tid, "
                                            "uint32_t nthreads)\n%s",
                                            what, ker->kind == MOROK_KERNEL_MATMUL ? " (matmul)" : "",
                                            f - 1, body));
          g_hash_table_insert (seen, body, GUINT_TO_POINTER (f));
        }
      else
        g_free (body);
      f--;
      g_array_append_val (r->function_of, f);
    }
  return g_steal_pointer (&r);
}

char *
morok_render_unit (const MorokRendered *r, guint first, guint n)
{
  g_return_val_if_fail (r != NULL && first + n <= r->functions->len, NULL);
  GString *out = g_string_new (r->head);
  for (guint f = first; f < first + n; f++)
    g_string_append (out, g_ptr_array_index (r->functions, f));
  return g_string_free (out, FALSE);
}

void
morok_rendered_free (MorokRendered *r)
{
  if (!r)
    return;
  g_free (r->head);
  if (r->functions)
    g_ptr_array_unref (r->functions);
  if (r->function_of)
    g_array_unref (r->function_of);
  g_free (r);
}
