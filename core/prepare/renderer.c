/* SPDX-License-Identifier: MIT */
/* The C renderer's translation unit: the prelude (the micro-kernel
 * headers), then one function per scheduled kernel (render-kernels.c,
 * render-matmul.c), whose values render-expr.c renders. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/render-private.h"
#include "kernels/weight-pack.h"
#include <math.h>
#include <string.h>

extern const char morok_kernel_prelude[];

/* ---- the translation unit ---- */

const char *
morok_render_prelude (void)
{
  return morok_kernel_prelude;
}

char *
morok_render_schedule (const MorokSchedule *sched, MorokIsa isa, GError **error)
{
  g_return_val_if_fail (sched != NULL, NULL);
  static const char *const isa_macro[] = { "MOROK_ISA_PORTABLE", "MOROK_ISA_AVX2", "MOROK_ISA_AVX512" };
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "#define %s 1\n#define MOROK_GEMM_SMALL %d\n%s\n", isa_macro[isa],
                          MOROK_GEMM_SMALL, morok_kernel_prelude);
  g_string_append (out, "#define MOROK_IMIN(a, b) ((a) < (b) ? (a) : (b))\n"
                        "#define MOROK_IMAX(a, b) ((a) > (b) ? (a) : (b))\n"
                        "#define MOROK_IDIV(a, b) ((a) / (b))\n"
                        "#define MOROK_IMOD(a, b) ((a) % (b))\n"
                        "#define MOROK_CLAMP(x, lo, hi) MOROK_IMIN (MOROK_IMAX (x, lo), hi)\n");
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      Ctx c = { .sched = sched, .out = out, .error = error, .indent = 1,
                .ker = &g_array_index (sched->kernels, MorokScheduleKernel, k),
                .scopes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref) };
      g_autofree char *what = morok_node_describe (c.ker->root);
      g_string_append_printf (out, "\n/* kernel %u: %s%s */\n", k, what,
                              c.ker->kind == MOROK_KERNEL_MATMUL ? " (matmul)" : "");
      g_string_append_printf (out, "void morok_k%u (void *const *bufs, const int64_t *restrict v, "
                                   "uint32_t tid, uint32_t nthreads)\n{\n", k);
      g_string_append (out, "  (void) v;\n");
      render_declare_buffers (&c);
      gboolean ok = c.ker->kind == MOROK_KERNEL_MATMUL      ? render_matmul_kernel (&c)
                    : c.ker->kind == MOROK_KERNEL_ATTENTION ? render_attention_kernel (&c)
                                                             : render_loop_kernel (&c);
      g_string_append (out, "}\n");
      g_ptr_array_unref (c.scopes);
      if (!ok)
        {
          g_string_free (out, TRUE);
          return NULL;
        }
    }
  return g_string_free (out, FALSE);
}
