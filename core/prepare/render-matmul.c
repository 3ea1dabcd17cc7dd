/* SPDX-License-Identifier: MIT */
/* Contractions: the tiling policy (which micro-kernel, blocks, packed or
 * strided operands, threads) and the epilogue over the block. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/render-private.h"
#include "kernels/weight-pack.h"
#include "base/cache-line.h"
#include <math.h>
#include <string.h>

#define MM_ROWS 64   /* rows of C per task, when rows must be shared out too */
#define MM_COLS 512  /* columns of C per task, when N is wide */
#define MM_NARROW 16 /* N at most this, M at least twice: contract transposed */
#define MM_SHARED_COLS                                                                             \
  MOROK_WEIGHT_PACK_TASK_COLS /* columns per task of a product with packed weights */

gboolean
render_matmul_kernel (Ctx *c)
{
  MorokNode *root = c->ker->root, *m = c->ker->matmul;
  guint r = m->rank;
  MorokStrided a, b;
  if (!morok_schedule_strided (c->sched, m->src[0], &a)
      || !morok_schedule_strided (c->sched, m->src[1], &b))
    {
      g_set_error (c->error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                   "renderer: matmul operand is not strided");
      return FALSE;
    }
  guint ba = render_buffer_slot (c, morok_schedule_buffer_of (c->sched, a.base) - 1);
  guint bb = render_buffer_slot (c, morok_schedule_buffer_of (c->sched, b.base) - 1);
  g_autofree char *M = render_sym_c (m->shape[r - 2]), *N = render_sym_c (m->shape[r - 1]);
  g_autofree char *K = render_sym_c (m->src[0]->shape[r - 1]);
  g_autofree char *oa = render_sym_c (a.offset), *ob = render_sym_c (b.offset);
  g_autofree char *sam = render_sym_c (a.stride[r - 2]), *sak = render_sym_c (a.stride[r - 1]);
  g_autofree char *sbk = render_sym_c (b.stride[r - 2]), *sbn = render_sym_c (b.stride[r - 1]);
  g_autofree char *batches = render_dims_product (m, r - 2);
  gboolean narrow = m->shape[r - 1]->hi <= MM_NARROW && m->shape[r - 2]->hi >= 2 * MM_NARROW;
  render_line (c, "const int64_t M = %s, N = %s, K = %s;", M, N, K);
  render_line (c, "const int64_t batches = %s;", batches);
  /* A task is a block of C. When the column blocks give every thread two or
   * more (or there is one thread), a task takes all the rows of its
   * columns, so each slice of B is packed once per call, not once per row
   * block; the column blocks are then evened out over the threads. */
  const MorokScheduleBuffer *pb
      = c->ker->packed_b
            ? &g_array_index (c->sched->buffers, MorokScheduleBuffer, c->ker->packed_b - 1)
            : NULL;
  render_line (c, "int64_t nt = (N + %d - 1) / %d, mb = %d;", MM_COLS, MM_COLS, MM_ROWS);
  if (c->ker->shared_tasks)
    /* B is packed already: blocks of MM_SHARED_COLS columns with all the
     * rows (64-row tasks measured slower), which the threads take in turn,
     * so that one the host holds up leaves its blocks to the other */
    render_line (c, "nt = (N + %d - 1) / %d, mb = M;", MM_SHARED_COLS, MM_SHARED_COLS);
  else if (pb)
    /* AMX: one column block per thread (the kernel converts all of its A
     * once per call) */
    render_line (c, "nt = nthreads, mb = M;");
  else if (!narrow)
    {
      render_line (c, "if (nthreads == 1 || batches * nt >= 2 * (int64_t) nthreads) {");
      render_line (c, "  if (batches == 1) nt = (nt + nthreads - 1) / nthreads * nthreads;");
      render_line (c, "  mb = M;");
      render_line (c, "}");
    }
  /* column blocks of packed B start at a panel */
  const char *align = c->ker->packed_b ? "MOROK_GEMM_NR" : "16";
  render_line (c, "const int64_t nb = MOROK_IMIN (N, ((N + nt - 1) / nt + %s - 1) / %s * %s);",
               align, align, align);
  render_line (c, "nt = (N + nb - 1) / nb;");
  render_line (c, "const int64_t mt = (M + mb - 1) / mb, tasks = batches * mt * nt;");
  /* int8: A quantised, and bf16 and bf16x3 on vdpbf16ps with more than one
   * block of columns: A rounded, into the thread's scratch, after the
   * epilogue's block, once per batch item this thread has tasks in (mb is
   * M); with one block, the product rounds A a block at a time, which runs
   * faster (kernels/include/morok-gemm-bf16.h) */
  gboolean amx = pb && morok_weight_pack_amx_parts (pb->pack.format);
  gboolean int8 = pb && pb->pack.format == MOROK_PRECISION_INT8;
  guint rounded = pb ? morok_weight_pack_rounded_a_parts (pb->pack.format, pb->pack.n) : 0;
  gint64 lda = int8      ? morok_weight_pack_quads (pb->pack.k) * 4
               : rounded ? morok_weight_pack_pairs (pb->pack.k, pb->pack.format)
                         : 0;
  if (int8 || rounded)
    {
      gint64 rows = m->shape[r - 2]->hi;
      gsize block = morok_weight_pack_scratch_bytes (rows, pb->pack.k, pb->pack.n,
                                                     MOROK_PRECISION_F32, root != m);
      gint64 arows = morok_weight_pack_a_rows (rows);
      if (int8)
        {
          gsize qbytes = morok_round_64 ((gsize) arows * lda);
          render_line (c, "uint8_t *restrict qa = (uint8_t *) scratch + %" G_GSIZE_FORMAT ";",
                       block);
          render_line (c, "float *restrict sa = (float *) (qa + %" G_GSIZE_FORMAT ");", qbytes);
        }
      else
        {
          render_line (
              c,
              "uint32_t *restrict ahi = (uint32_t *) ((uint8_t *) scratch + %" G_GSIZE_FORMAT ");",
              block);
          if (rounded == 2)
            render_line (c, "uint32_t *restrict alo = ahi + %" G_GINT64_FORMAT ";", arows * lda);
        }
      render_line (c, "int64_t quantised = -1; /* the batch item in the scratch's A */");
    }
  if (c->ker->shared_tasks)
    render_line (
        c, "for (int64_t task = __atomic_fetch_add (next_task, 1, __ATOMIC_RELAXED); task < tasks;"
           " task = __atomic_fetch_add (next_task, 1, __ATOMIC_RELAXED)) {");
  else
    {
      render_line (c,
                   "const int64_t t0 = tasks * tid / nthreads, t1 = tasks * (tid + 1) / nthreads;");
      render_line (c, "for (int64_t task = t0; task < t1; task++) {");
    }
  c->indent++;
  render_line (c, "const int64_t m0 = (task / nt %% mt) * mb, c0 = task %% nt * nb;");
  render_line (c, "const int64_t ml = MOROK_IMIN (mb, M - m0), c1 = MOROK_IMIN (c0 + nb, N);");
  char *idx[MOROK_MAX_RANK] = { NULL };
  render_split_rows (c, m, r - 2, "task / (nt * mt)", idx);
  GString *offa = g_string_new (oa), *offb = g_string_new (ob);
  for (guint i = 0; i + 2 < r; i++)
    {
      g_autofree char *sa = render_sym_c (a.stride[i]), *sb = render_sym_c (b.stride[i]);
      g_string_append_printf (offa, " + %s * %s", idx[i], sa);
      g_string_append_printf (offb, " + %s * %s", idx[i], sb);
    }
  /* the batch's C block: flat index of (idx..., 0, 0) */
  g_autofree char *batch = render_dims_flat (m, r - 2, idx);
  render_line (c, "float *restrict cb = out + (%s) * M * N;", batch);
  if (int8 || rounded)
    {
      render_line (c, "if (quantised != task / (nt * mt)) {");
      render_line (c, "  quantised = task / (nt * mt);");
      if (int8)
        render_line (
            c, "  morok_gemm_i8_quantize (M, K, b%u + (%s), %s, %s, qa, sa, %" G_GINT64_FORMAT ");",
            ba, offa->str, sam, sak, lda);
      else
        render_line (
            c, "  morok_gemm_bf16_round (M, K, b%u + (%s), %s, %s, ahi, %s, %" G_GINT64_FORMAT ");",
            ba, offa->str, sam, sak, rounded == 2 ? "alo" : "(uint32_t *) 0", lda);
      render_line (c, "}");
    }
  /* An epilogue runs over the columns the GEMM has just stored, MOROK_GEMM_NC
   * at a time, so that it reads them from L2 (FF1 + SiLU, 250 x 3072: the
   * pass over the whole block read 3 MB back from L3). The AMX kernel
   * converts all of A per call: one call. */
  /* f32 and f16 with packed weights store each block into scratch, the
   * epilogue moves it into the output (weight-pack.h) */
  c->mm_block = pb && !amx && root != m;
  g_autofree char *step = c->mm_block ? g_strdup_printf ("%d", MOROK_WEIGHT_PACK_EPILOGUE_COLS)
                          : root != m && !narrow && !amx ? g_strdup ("MOROK_GEMM_NC")
                                                         : g_strdup ("nb");
  if (c->mm_block)
    render_line (c, "float *restrict cs = (float *) scratch;");
  render_line (c, "for (int64_t n0 = c0; n0 < c1; n0 += %s) {", step);
  c->indent++;
  render_line (c, "const int64_t nl = MOROK_IMIN (%s, c1 - n0);", step);
  if (narrow)
    {
      /* N is too narrow for the micro-kernel's vectors: compute the transpose
       * C^T = B^T A^T, which vectorises along M, into a tile on the stack.
       * morok_gemm_f32's unpacked paths cover N <= MOROK_GEMM_SMALL (8) by
       * themselves; this one still pays for 8 < N <= 16 ([128, 387] x
       * [387, 12] runs about three times faster this way than packed). */
      render_line (c, "float ct[%d * %d];", MM_NARROW, MM_ROWS);
      render_line (c,
                   "morok_gemm_f32 (nl, ml, K, b%u + (%s) + n0 * (%s), %s, %s, b%u + (%s) + m0 * "
                   "(%s), %s, %s,"
                   " ct, ml, 0);",
                   bb, offb->str, sbn, sbn, sbk, ba, offa->str, sam, sak, sam);
      render_line (c, NO_UNROLL);
      render_line (c, "for (int64_t i = 0; i < ml; i++)");
      render_line (c, NO_UNROLL); /* nl <= MM_NARROW */
      render_line (c, "for (int64_t j = 0; j < nl; j++)");
      render_line (c, "  cb[(m0 + i) * N + n0 + j] = ct[j * ml + i];");
    }
  else if (pb)
    {
      /* a panel of B is K x NR (f32) or K2 x NR pairs (f16, bf16, bf16x3):
       * column n0 starts n0 / NR panels in, n0 times a column's elements */
      guint bp = render_buffer_slot (c, c->ker->packed_b - 1),
            parts = morok_weight_pack_bf16_parts (pb->pack.format);
      gint64 k2 = morok_weight_pack_pairs (pb->pack.k, pb->pack.format);
      gint64 col = pb->pack.format == MOROK_PRECISION_F32 ? pb->pack.k : k2 * 2;
      g_autofree char *bhi = g_strdup_printf ("b%u + n0 * %" G_GINT64_FORMAT, bp, col);
      /* bf16x3: the lo copy in the buffer's second half */
      g_autofree char *blo
          = parts == 2 ? g_strdup_printf ("b%u + %" G_GSIZE_FORMAT " + n0 * %" G_GINT64_FORMAT, bp,
                                          pb->bytes / 4, col)
                       : g_strdup ("(const uint16_t *) 0");
      if (int8)
        {
          /* the quads, then a scale and a row of corrections per block of k */
          gint64 panels = (pb->pack.n + pb->pack.nr - 1) / pb->pack.nr;
          gsize scales = (gsize) (panels * pb->pack.nr * lda);
          /* on AMX tiles where the CPU has them, else vpdpbusd: the same operands */
          render_line (c,
                       "morok_gemm_i8%s_packed (ml, nl, qa + m0 * %" G_GINT64_FORMAT
                       ", sa + m0, %" G_GINT64_FORMAT ", b%u + n0 * %" G_GINT64_FORMAT
                       ", (const float *) (b%u + %" G_GSIZE_FORMAT
                       ") + n0, (const int32_t *) (b%u + %" G_GSIZE_FORMAT
                       ") + n0, %" G_GINT64_FORMAT ", %s, 0);",
                       morok_weight_pack_int8_amx (pb->pack.nr) ? "_amx" : "", lda, lda, bp, lda,
                       bp, scales, bp, scales + panels * pb->pack.nr * 4,
                       panels * (gint64) pb->pack.nr,
                       c->mm_block ? "cs, nl" : "cb + m0 * N + n0, N");
        }
      else if (amx)
        render_line (c,
                     "morok_gemm_amx_packed (ml, nl, K, b%u + (%s) + m0 * (%s), %s, %s, %s, %s, "
                     "%" G_GINT64_FORMAT ", cb + m0 * N + n0, N, 0, scratch);",
                     ba, offa->str, sam, sam, sak, bhi, blo, k2);
      else if (parts) /* vdpbf16ps on the same layout, where there is no AMX */
        {
          g_autofree char *ahi = rounded ? g_strdup_printf ("ahi + m0 * %" G_GINT64_FORMAT, lda)
                                         : g_strdup ("(const uint32_t *) 0");
          g_autofree char *alo = rounded == 2
                                     ? g_strdup_printf ("alo + m0 * %" G_GINT64_FORMAT, lda)
                                     : g_strdup ("(const uint32_t *) 0");
          render_line (c,
                       "morok_gemm_bf16_packed (ml, nl, K, b%u + (%s) + m0 * (%s), %s, %s, %s, %s, "
                       "%" G_GINT64_FORMAT ", %s, %s, %" G_GINT64_FORMAT ", %s, 0);",
                       ba, offa->str, sam, sam, sak, ahi, alo, lda, bhi, blo, k2,
                       c->mm_block ? "cs, nl" : "cb + m0 * N + n0, N");
        }
      else
        render_line (c,
                     "morok_gemm_%s_packed (ml, nl, K, b%u + (%s) + m0 * (%s), %s, %s, %s, %s, 0);",
                     pb->pack.format == MOROK_PRECISION_F16 ? "f16" : "f32", ba, offa->str, sam,
                     sam, sak, bhi, c->mm_block ? "cs, nl" : "cb + m0 * N + n0, N");
    }
  else
    render_line (
        c,
        "morok_gemm_f32 (ml, nl, K, b%u + (%s) + m0 * (%s), %s, %s, b%u + (%s) + n0 * (%s), %s, %s,"
        " cb + m0 * N + n0, N, 0);",
        ba, offa->str, sam, sam, sak, bb, offb->str, sbn, sbk, sbn);
  g_string_free (offa, TRUE), g_string_free (offb, TRUE);
  gboolean ok = TRUE;
  if (root != m)
    {
      idx[r - 2] = g_strdup_printf ("i%u", r - 2);
      idx[r - 1] = g_strdup_printf ("i%u", r - 1);
      render_line (c, NO_UNROLL);
      render_line (c, "for (int64_t i%u = m0; i%u < m0 + ml; i%u++)", r - 2, r - 2, r - 2);
      render_line (c, render_no_unroll (-1)); /* nl: up to a block of columns */
      render_line (c, "for (int64_t i%u = n0; i%u < n0 + nl; i%u++) {", r - 1, r - 1, r - 1);
      c->indent++;
      ok = render_store_value (c, root, idx, root, idx);
      c->indent--;
      render_line (c, "}");
    }
  c->indent--;
  render_line (c, "}");
  c->indent--;
  render_line (c, "}");
  for (guint i = 0; i < r; i++)
    g_free (idx[i]);
  return ok;
}
