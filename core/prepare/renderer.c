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
  Ctx c = { .sched = sched,
            .out = out,
            .error = error,
            .indent = 1,
            .ker = &g_array_index (sched->kernels, MorokScheduleKernel, k),
            .scopes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref) };
  render_declare_buffers (&c);
  gboolean ok = c.ker->kind == MOROK_KERNEL_MATMUL      ? render_matmul_kernel (&c)
                : c.ker->kind == MOROK_KERNEL_ATTENTION ? render_attention_kernel (&c)
                : c.ker->kind == MOROK_KERNEL_DFT       ? render_dft_kernel (&c)
                                                        : render_loop_kernel (&c);
  g_string_append (out, "}\n");
  g_ptr_array_unref (c.scopes);
  return g_string_free (out, !ok);
}

/* Relative compile time of a function by kind, clang -O2 here. Without
 * the kernel library most of a unit's time goes to the GEMM micro-kernels
 * it calls (noinline, compiled once per unit, so a second unit costs
 * nearly as much as the first), and a contraction adds little; attention,
 * with two general GEMMs inlined and its softmax loops, costs most of
 * GigaAM's unit alone. With the library, both are calls. */
static const guint compile_cost[] = { [MOROK_KERNEL_LOOP] = 1,
                                      [MOROK_KERNEL_MATMUL] = 3,
                                      [MOROK_KERNEL_ATTENTION] = 90,
                                      [MOROK_KERNEL_DFT] = 3 };

/* Units are split only when there is a function as costly as the
 * micro-kernels that every further unit compiles again. With the library
 * what each unit compiles again is the prelude's declarations and inline
 * helpers, about a fifth of a unit of cost 33 (Silero v5's 17 functions):
 * split from 12, where two units end sooner on two cores (for Silero v5's
 * cold prepare, clang then its whole time). */
#define UNIT_SPLIT_COST 90
#define UNIT_SPLIT_COST_LIB 12

/* A kernel: its body as an inline function. A step that never splits
 * over threads (morok_schedule_kernel_splits) calls it with nthreads a
 * literal 1, so that the shares of rows and the matmuls' blocks and tasks
 * fold to constants (their 64-bit divisions by nthreads, nt and mt were 5
 * to 8 a kernel, a measurable share of Silero's small kernels); one that
 * may split calls it as it is (its divisions are nothing beside its
 * 4 MFLOP, and a second copy for one thread doubled its compile time). */
#define KERNEL_HEAD                                                                                \
  "\n/* %s%s */\nstatic inline __attribute__ ((always_inline)) void\nmorok_b%u (void *const "      \
  "*bufs, const int64_t *restrict v, uint32_t tid, uint32_t nthreads)\n%s"                         \
  "void morok_f%u (void *const *bufs, const int64_t *restrict v, uint32_t tid, "                   \
  "uint32_t nthreads)\n{\n"
#define KERNEL_SPLIT KERNEL_HEAD "  morok_b%u (bufs, v, tid, nthreads);\n}\n"
#define KERNEL_ONE_THREAD                                                                          \
  KERNEL_HEAD "  (void) tid, (void) nthreads;\n  morok_b%u (bufs, v, 0, 1);\n}\n"

MorokRendered *
morok_render_schedule (const MorokSchedule *sched, MorokIsa isa, const MorokKernelLib *lib,
                       GError **error)
{
  g_return_val_if_fail (sched != NULL, NULL);
  static const char *const isa_macro[]
      = { "MOROK_ISA_PORTABLE", "MOROK_ISA_AVX2", "MOROK_ISA_AVX512" };
  g_autoptr (MorokRendered) r = g_new0 (MorokRendered, 1);
  /* the library's identity is in the source, so in the cache key */
  g_autofree char *calls = lib ? g_strdup_printf ("/* calls kernel library %s */\n"
                                                  "#define MOROK_KERNEL_LIB 1\n",
                                                  morok_kernel_lib_id (lib))
                               : g_strdup ("");
  r->head = g_strdup_printf ("%s#define %s 1\n#define MOROK_GEMM_SMALL %d\n%s\n"
                             "#define MOROK_IMIN(a, b) ((a) < (b) ? (a) : (b))\n"
                             "#define MOROK_IMAX(a, b) ((a) > (b) ? (a) : (b))\n"
                             "#define MOROK_IDIV(a, b) ((a) / (b))\n"
                             "#define MOROK_IMOD(a, b) ((a) %% (b))\n"
                             "#define MOROK_CLAMP(x, lo, hi) MOROK_IMIN (MOROK_IMAX (x, lo), hi)\n",
                             calls, isa_macro[isa], MOROK_GEMM_SMALL, morok_kernel_prelude);
  r->functions = g_ptr_array_new_with_free_func (g_free);
  r->function_of = g_array_sized_new (FALSE, FALSE, sizeof (guint), sched->kernels->len);
  r->cost = g_array_new (FALSE, FALSE, sizeof (guint));
  r->split_cost = lib ? UNIT_SPLIT_COST_LIB : UNIT_SPLIT_COST;
  /* whether it splits, then the body's text -> function index + 1 */
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      const MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      g_autofree char *body = render_body (sched, k, error);
      if (!body)
        return NULL;
      gboolean splits = morok_schedule_kernel_splits (ker);
      char *key = g_strconcat (splits ? "split\n" : "one\n", body, NULL);
      guint f = GPOINTER_TO_UINT (g_hash_table_lookup (seen, key));
      if (f == 0)
        {
          g_autofree char *what = morok_node_describe (ker->root);
          const char *kind = ker->kind == MOROK_KERNEL_MATMUL ? " (matmul)" : "";
          f = r->functions->len + 1;
          g_ptr_array_add (
              r->functions,
              splits ? g_strdup_printf (KERNEL_SPLIT, what, kind, f - 1, body, f - 1, f - 1)
                     : g_strdup_printf (KERNEL_ONE_THREAD, what, kind, f - 1, body, f - 1, f - 1));
          g_hash_table_insert (seen, key, GUINT_TO_POINTER (f));
          guint cost = lib && ker->kind == MOROK_KERNEL_ATTENTION
                           ? compile_cost[MOROK_KERNEL_MATMUL]
                           : compile_cost[ker->kind];
          g_array_append_val (r->cost, cost);
        }
      else
        g_free (key);
      f--;
      g_array_append_val (r->function_of, f);
    }
  return g_steal_pointer (&r);
}

GPtrArray *
morok_render_units (const MorokRendered *r, guint max_units, GArray *out_unit_of)
{
  g_return_val_if_fail (r != NULL && max_units >= 1 && out_unit_of != NULL, NULL);
  guint n = r->functions->len, total = 0;
  for (guint f = 0; f < n; f++)
    total += g_array_index (r->cost, guint, f);
  guint units = total >= r->split_cost ? MIN (max_units, MAX (n, 1)) : 1;
  /* the costliest first, each to the unit with the least so far */
  g_autofree guint *order = g_new (guint, MAX (n, 1));
  for (guint f = 0; f < n; f++)
    order[f] = f;
  for (guint i = 1; i < n; i++)
    for (guint j = i;
         j > 0
         && g_array_index (r->cost, guint, order[j]) > g_array_index (r->cost, guint, order[j - 1]);
         j--)
      {
        guint t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
  g_autofree guint *load = g_new0 (guint, units);
  g_array_set_size (out_unit_of, n);
  for (guint i = 0; i < n; i++)
    {
      guint u = 0;
      for (guint v = 1; v < units; v++)
        u = load[v] < load[u] ? v : u;
      load[u] += g_array_index (r->cost, guint, order[i]);
      g_array_index (out_unit_of, guint, order[i]) = u;
    }
  GPtrArray *sources = g_ptr_array_new_with_free_func (g_free);
  for (guint u = 0; u < units; u++)
    {
      GString *src = g_string_new (r->head);
      for (guint f = 0; f < n; f++)
        if (g_array_index (out_unit_of, guint, f) == u)
          g_string_append (src, g_ptr_array_index (r->functions, f));
      g_ptr_array_add (sources, g_string_free (src, FALSE));
    }
  return sources;
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
  if (r->cost)
    g_array_unref (r->cost);
  g_free (r);
}
