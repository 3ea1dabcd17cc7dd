/* SPDX-License-Identifier: MIT */
/* Tests of core/io/onnx-reader: the Silero VAD files (v4, v5, v6) against
 * values read by python3-onnx, a small hand-built model with every encoding
 * the Silero files do not use, and malformed input (truncations, bit flips,
 * handmade bad buffers) that must give an error and never crash.
 *
 * The Silero files come from $MOROK_MODEL_DIR (scripts/fetch-silero-models.sh);
 * tests that need them are skipped when they are absent.
 */
#include "io/onnx-reader.h"
#include "onnx-test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* --- Helpers ------------------------------------------------------------ */

static MorokOnnxModel *
load_silero (const char *version)
{
  g_autofree char *path = silero_path (version);
  g_autoptr (GError) error = NULL;
  MorokOnnxModel *model;

  if (path == NULL)
    return NULL;
  model = morok_onnx_model_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (model);
  return model;
}

static MorokOnnxModel *
load_tiny (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "fixtures", "onnx-tiny.onnx", NULL);
  g_autoptr (GError) error = NULL;
  MorokOnnxModel *model = morok_onnx_model_load (path, &error);

  g_assert_no_error (error);
  return model;
}

static double
sum_f32 (const float *v, gsize n)
{
  double s = 0;

  for (gsize k = 0; k < n; k++)
    s += v[k];
  return s;
}

/* --- The Silero files --------------------------------------------------- */

typedef struct
{
  const char *version;
  guint n_graphs, n_nodes, n_tensors;
  const char *producer;
} ModelCounts;

/* Counts from tests/fixtures/onnx-expected.py (python3-onnx 1.12). */
static const ModelCounts silero_counts[] = {
  { "v4", 19, 250, 259, "pytorch" },
  { "v5", 51, 689, 341, "spox" },
  { "v6", 51, 689, 341, "spox" },
};

/* Every Silero file parses, with as many graphs, nodes and tensors as
 * python3-onnx finds, opset 16 and the expected producer. */
static void
test_silero_parses_all_versions (void)
{
  for (guint k = 0; k < G_N_ELEMENTS (silero_counts); k++)
    {
      const ModelCounts *c = &silero_counts[k];
      g_autoptr (MorokOnnxModel) model = load_silero (c->version);
      guint n;

      if (model == NULL)
        return;
      morok_onnx_model_graphs (model, &n);
      g_assert_cmpuint (n, ==, c->n_graphs);
      morok_onnx_model_nodes (model, &n);
      g_assert_cmpuint (n, ==, c->n_nodes);
      morok_onnx_model_tensors (model, &n);
      g_assert_cmpuint (n, ==, c->n_tensors);
      g_assert_cmpstr (morok_onnx_model_producer_name (model), ==, c->producer);
      g_assert_cmpint (morok_onnx_model_ir_version (model), ==, 8);
      g_assert_cmpint (morok_onnx_model_opset_version (model, ""), ==, 16);
      g_assert_cmpint (morok_onnx_model_opset_version (model, "ai.onnx"), ==, 16);
      g_assert_cmpint (morok_onnx_model_opset_version (model, "com.nothing"), ==, -1);
    }
}

typedef struct
{
  const char *path, *name;
  guint rank;
  gint64 dims[3];
  double sum, first, last;
} TensorPick;

/* Printed by tests/fixtures/onnx-expected.py: sum (in double), first and
 * last value of each tensor as python3-onnx reads them. */
/* clang-format off */
static const TensorPick picks_v4[] = {
  { "", "model.feature_extractor.forward_basis_buffer", 3, { 258, 1, 256 }, 63.9999999, 0, 0 },
  { "", "model.first_layer.0.dw_conv.0.weight", 3, { 258, 1, 5 },
    -40.1047479, -0.278859884, 0.126658231 },
  { "", "1110", 3, { 16, 16, 1 }, 2.22273838, -0.191388637, 0.0826989785 },
  { "", "model.decoder.decoder.1.bias", 1, { 1 }, -0.198121488, -0.198121488, -0.198121488 },
  { "", "model_8k.adaptive_normalization.filter_", 3, { 1, 1, 7 },
    1.00000001, 0.036632847, 0.036632847 },
  { "If_25:then_branch/If_177:then_branch", "343", 3, { 1, 256, 64 },
    314.546894, 0.0371938944, -0.0785031691 },
  { "If_25:else_branch/If_651:else_branch", "1076", 2, { 1, 512 },
    32.1554074, 0.0641654208, 0.0960950777 },
};
static const TensorPick picks_v5[] = {
  { "If_0:then_branch", "stft.forward_basis_buffer", 3, { 258, 1, 256 }, 63.9999999, 0, 0 },
  { "If_0:then_branch", "encoder.0.reparam_conv.weight", 3, { 128, 129, 3 },
    -1455.57271, 0.0230598636, 0.0474724025 },
  { "If_0:else_branch", "encoder.0.reparam_conv.weight", 3, { 128, 65, 3 },
    -2374.61662, -0.188588709, 0.0346162356 },
  { "If_0:else_branch", "decoder.rnn.weight_hh", 2, { 512, 128 },
    7.94702069, -0.430630058, -0.631135046 },
  { "If_0:then_branch", "decoder.decoder.2.bias", 1, { 1 },
    -0.190637052, -0.190637052, -0.190637052 },
};
static const TensorPick picks_v6[] = {
  { "If_0:then_branch", "encoder.3.reparam_conv.weight", 3, { 128, 64, 3 },
    13.050467, -0.00157829723, -0.0234100092 },
  { "If_0:then_branch", "decoder.rnn.bias_ih", 1, { 512 },
    11.1243946, -0.268610269, -0.0108521851 },
  { "If_0:else_branch", "decoder.decoder.2.bias", 1, { 1 },
    -0.590086699, -0.590086699, -0.590086699 },
};
/* clang-format on */

static void
check_picks (const char *version, const TensorPick *picks, guint n_picks)
{
  g_autoptr (MorokOnnxModel) model = load_silero (version);

  if (model == NULL)
    return;
  for (guint k = 0; k < n_picks; k++)
    {
      const TensorPick *p = &picks[k];
      g_autoptr (GError) error = NULL;
      const MorokOnnxGraph *graph = morok_onnx_model_find_graph (model, p->path);
      g_assert_nonnull (graph);
      const MorokOnnxTensor *t = morok_onnx_graph_require_tensor (graph, p->name, &error);
      g_assert_no_error (error);
      g_assert_true (morok_onnx_tensor_check_dims (t, p->rank, p->dims, &error));
      g_assert_no_error (error);
      g_assert_cmpint (t->dtype, ==, MOROK_ONNX_DTYPE_FLOAT);

      gsize n = 0;
      g_autofree float *v = morok_onnx_tensor_to_f32 (t, &n, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (n, ==, (gsize) t->n_elements);
      g_assert_cmpfloat_with_epsilon (sum_f32 (v, n), p->sum, 1e-6 * MAX (1.0, fabs (p->sum)));
      g_assert_cmpfloat_with_epsilon (v[0], p->first, 1e-8);
      g_assert_cmpfloat_with_epsilon (v[n - 1], p->last, 1e-8);
    }
}

/* Tensor dims and values equal what python3-onnx reads, in every version. */
static void
test_silero_values_match_python (void)
{
  check_picks ("v4", picks_v4, G_N_ELEMENTS (picks_v4));
  check_picks ("v5", picks_v5, G_N_ELEMENTS (picks_v5));
  check_picks ("v6", picks_v6, G_N_ELEMENTS (picks_v6));
}

/* v5 keeps its weights in Constant nodes inside the branches of If_0: a
 * short name found from the top is the first branch in the file (8 kHz,
 * else_branch), the Constant's output name is unique, and the If node's
 * attributes lead to the same graphs as their paths. */
static void
test_silero_finds_tensors_in_if_branches (void)
{
  g_autoptr (MorokOnnxModel) model = load_silero ("v5");
  g_autoptr (GError) error = NULL;

  if (model == NULL)
    return;
  const MorokOnnxTensor *t = morok_onnx_model_find_tensor (model, "encoder.0.reparam_conv.weight");
  g_assert_nonnull (t);
  g_assert_cmpstr (t->graph->path, ==, "If_0:else_branch");
  g_assert_cmpstr (t->node->op_type, ==, "Constant");
  g_assert_cmpint (t->dims[1], ==, 65);

  t = morok_onnx_model_find_tensor (model,
                                    "If_0_then_branch__Inline_0__encoder.0.reparam_conv.weight");
  g_assert_nonnull (t);
  g_assert_cmpstr (t->graph->path, ==, "If_0:then_branch");
  g_assert_cmpstr (t->name, ==, "encoder.0.reparam_conv.weight");
  g_assert_cmpint (t->dims[1], ==, 129);

  const MorokOnnxNode *if0 = morok_onnx_graph_find_node (morok_onnx_model_graph (model), "If_0");
  g_assert_nonnull (if0);
  g_assert_cmpstr (if0->op_type, ==, "If");
  const MorokOnnxAttribute *then_branch = morok_onnx_node_find_attribute (if0, "then_branch");
  g_assert_nonnull (then_branch);
  g_assert_cmpint (then_branch->type, ==, MOROK_ONNX_ATTR_GRAPH);
  g_assert_true (then_branch->g == morok_onnx_model_find_graph (model, "If_0:then_branch"));
  g_assert_true (then_branch->g->parent == if0);
  g_assert_cmpuint (then_branch->g->depth, ==, 1);

  /* The sample-rate test of the main graph: Constant_0 holds int64 16000. */
  t = morok_onnx_model_find_tensor (model, "Constant_0_output");
  g_assert_nonnull (t);
  g_assert_cmpint (t->dtype, ==, MOROK_ONNX_DTYPE_INT64);
  g_assert_cmpuint (t->rank, ==, 0);
  gsize n;
  g_autofree gint64 *sr = morok_onnx_tensor_to_i64 (t, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (sr[0], ==, 16000);

  /* A name that lives only in the 16 kHz branch is not in the 8 kHz one. */
  const MorokOnnxGraph *g8 = morok_onnx_model_find_graph (model, "If_0:else_branch");
  g_assert_null (morok_onnx_graph_find_tensor (
      g8, "If_0_then_branch__Inline_0__encoder.0.reparam_conv.weight"));
}

/* The node structure model code identifies versions by: v5's main graph
 * signature, its STFT convolution, and v4's LSTMs two subgraphs deep. */
static void
test_silero_exposes_nodes_and_attributes (void)
{
  g_autoptr (MorokOnnxModel) v5 = load_silero ("v5");
  g_autoptr (MorokOnnxModel) v4 = load_silero ("v4");
  guint n, lstm = 0;

  if (v5 == NULL || v4 == NULL)
    return;
  const MorokOnnxGraph *main_graph = morok_onnx_model_graph (v5);
  g_assert_cmpuint (main_graph->n_inputs, ==, 3);
  g_assert_cmpstr (main_graph->inputs[0], ==, "input");
  g_assert_cmpstr (main_graph->inputs[1], ==, "state");
  g_assert_cmpstr (main_graph->inputs[2], ==, "sr");
  g_assert_cmpuint (main_graph->n_outputs, ==, 2);
  g_assert_cmpstr (main_graph->outputs[1], ==, "stateN");

  const MorokOnnxGraph *g16 = morok_onnx_model_find_graph (v5, "If_0:then_branch");
  const MorokOnnxNode *stft
      = morok_onnx_graph_find_node (g16, "If_0_then_branch__Inline_0__/stft/Conv");
  g_assert_nonnull (stft);
  g_assert_cmpuint (stft->n_inputs, ==, 2);
  g_assert_cmpstr (stft->inputs[1], ==, "If_0_then_branch__Inline_0__stft.forward_basis_buffer");
  const MorokOnnxAttribute *a = morok_onnx_node_find_attribute (stft, "strides");
  g_assert_cmpint (a->type, ==, MOROK_ONNX_ATTR_INTS);
  g_assert_cmpuint (a->n_ints, ==, 1);
  g_assert_cmpint (a->ints[0], ==, 128);
  a = morok_onnx_node_find_attribute (stft, "kernel_shape");
  g_assert_cmpint (a->ints[0], ==, 256);

  const MorokOnnxNode *const *nodes = morok_onnx_model_nodes (v4, &n);
  for (guint k = 0; k < n; k++)
    if (strcmp (nodes[k]->op_type, "LSTM") == 0)
      {
        lstm++;
        g_assert_cmpuint (nodes[k]->graph->depth, ==, 2);
        g_assert_cmpuint (nodes[k]->n_inputs, ==, 7);
        g_assert_cmpstr (nodes[k]->inputs[4], ==, ""); /* no sequence_lens */
        a = morok_onnx_node_find_attribute (nodes[k], "hidden_size");
        g_assert_cmpint (a->i, ==, 64);
        a = morok_onnx_node_find_attribute (nodes[k], "direction");
        g_assert_cmpint (a->type, ==, MOROK_ONNX_ATTR_STRING);
        g_assert_cmpstr (a->s, ==, "forward");
      }
  g_assert_cmpuint (lstm, ==, 8); /* 2 layers x (16k, 8k) x (given, zero state) */
}

/* The usage example at the top of onnx-reader.h, verbatim. */
static gboolean
header_example (const char *path, GError **error)
{
  g_autoptr (MorokOnnxModel) model = morok_onnx_model_load (path, error);
  if (model == NULL)
    return FALSE;
  // v5 holds its 16 kHz network in the then-branch of the If node "If_0".
  const MorokOnnxGraph *g16 = morok_onnx_model_find_graph (model, "If_0:then_branch");
  const MorokOnnxTensor *w
      = morok_onnx_graph_require_tensor (g16, "encoder.0.reparam_conv.weight", error);
  static const gint64 want[] = { 128, 129, 3 };
  if (w == NULL || !morok_onnx_tensor_check_dims (w, 3, want, error))
    return FALSE;
  gsize n;
  g_autofree float *data = morok_onnx_tensor_to_f32 (w, &n, error); // 49536 floats
  return data != NULL && n == 49536;
}

/* The header's usage example runs as written. */
static void
test_silero_header_example (void)
{
  g_autofree char *path = silero_path ("v5");
  g_autoptr (GError) error = NULL;

  if (path == NULL)
    return;
  g_assert_true (header_example (path, &error));
  g_assert_no_error (error);
}

/* --- The hand-built model ----------------------------------------------- */

/* Every data type and encoding converts to the values
 * tests/fixtures/onnx-expected.py wrote. */
static void
test_tiny_converts_every_encoding (void)
{
  g_autoptr (MorokOnnxModel) m = load_tiny ();
  static const struct
  {
    const char *name;
    gint32 dtype;
    gsize n;
    float values[6];
  } f32_cases[] = {
    { "f32_typed", MOROK_ONNX_DTYPE_FLOAT, 6, { 1.5f, -2, 3.25f, 0, 1e-3f, -7 } },
    { "f16_raw", MOROK_ONNX_DTYPE_FLOAT16, 4, { 1, -2.5f, 65504, 5.9604644775390625e-8f } },
    { "f16_typed", MOROK_ONNX_DTYPE_FLOAT16, 4, { 1, -2.5f, 65504, 5.9604644775390625e-8f } },
    { "bf16_typed", MOROK_ONNX_DTYPE_BFLOAT16, 3, { 1, -3.5f, 0.15625f } },
    { "f64_typed", MOROK_ONNX_DTYPE_DOUBLE, 2, { 0.1f, -1e10f } },
    { "i8_raw", MOROK_ONNX_DTYPE_INT8, 3, { -128, 0, 127 } },
    { "u8_typed", MOROK_ONNX_DTYPE_UINT8, 2, { 0, 255 } },
    { "bool_typed", MOROK_ONNX_DTYPE_BOOL, 3, { 1, 0, 1 } },
    { "i32_typed", MOROK_ONNX_DTYPE_INT32, 2, { -5, 2147483647.0f } },
    { "u64_typed", MOROK_ONNX_DTYPE_UINT64, 1, { 18446744073709551615.0f } },
    { "scalar", MOROK_ONNX_DTYPE_FLOAT, 1, { 42 } },
    { "empty", MOROK_ONNX_DTYPE_FLOAT, 0, { 0 } },
  };

  for (guint k = 0; k < G_N_ELEMENTS (f32_cases); k++)
    {
      g_autoptr (GError) error = NULL;
      const MorokOnnxTensor *t = morok_onnx_model_find_tensor (m, f32_cases[k].name);
      gsize n = 99;
      g_assert_nonnull (t);
      g_assert_cmpint (t->dtype, ==, f32_cases[k].dtype);
      g_autofree float *v = morok_onnx_tensor_to_f32 (t, &n, &error);
      g_assert_no_error (error);
      g_assert_nonnull (v);
      g_assert_cmpuint (n, ==, f32_cases[k].n);
      for (gsize i = 0; i < n; i++)
        g_assert_cmpfloat (v[i], ==, f32_cases[k].values[i]);
    }

  g_autoptr (GError) error = NULL;
  gsize n;
  g_autofree gint64 *i64
      = morok_onnx_tensor_to_i64 (morok_onnx_model_find_tensor (m, "i64_typed"), &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpint (i64[0], ==, -1);
  g_assert_cmpint (i64[2], ==, G_MAXINT64);
  g_autofree gint64 *i8
      = morok_onnx_tensor_to_i64 (morok_onnx_model_find_tensor (m, "i8_raw"), &n, &error);
  g_assert_cmpint (i8[0], ==, -128);
  const MorokOnnxTensor *empty = morok_onnx_model_find_tensor (m, "empty");
  g_assert_cmpuint (empty->rank, ==, 2);
  g_assert_cmpint (empty->n_elements, ==, 0);
  g_autofree char *dims = morok_onnx_tensor_format_dims (empty);
  g_assert_cmpstr (dims, ==, "[0,4]");
}

/* Strings, external data and floats asked for as integers are refused with
 * MOROK_IO_ERROR_UNSUPPORTED, naming the tensor. */
static void
test_tiny_refuses_unconvertible (void)
{
  g_autoptr (MorokOnnxModel) m = load_tiny ();
  g_autoptr (GError) error = NULL;
  const MorokOnnxTensor *t;

  t = morok_onnx_model_find_tensor (m, "strings");
  g_assert_cmpint (t->n_elements, ==, 2);
  g_assert_null (morok_onnx_tensor_to_f32 (t, NULL, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED);
  g_assert_cmpstr (error->message, ==,
                   "onnx-tiny.onnx: tensor 'strings' is STRING, cannot convert it to float");
  g_clear_error (&error);

  t = morok_onnx_model_find_tensor (m, "external");
  g_assert_true (t->external);
  g_assert_cmpint (t->n_elements, ==, 1000);
  g_assert_null (morok_onnx_tensor_to_f32 (t, NULL, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED);
  g_clear_error (&error);

  g_assert_null (
      morok_onnx_tensor_to_i64 (morok_onnx_model_find_tensor (m, "f32_typed"), NULL, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED);
}

/* Every attribute type reads back, and subgraphs get their paths, including
 * unnamed nodes ("#<index>") and a Loop body. */
static void
test_tiny_reads_attributes_and_subgraphs (void)
{
  g_autoptr (MorokOnnxModel) m = load_tiny ();
  static const char *const paths[] = {
    "",
    "outer_if:else_branch",
    "outer_if:then_branch",
    "outer_if:then_branch/#1:else_branch",
    "outer_if:then_branch/#1:then_branch",
    "#3:body",
  };
  guint n;

  const MorokOnnxGraph *const *graphs = morok_onnx_model_graphs (m, &n);
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (paths));
  for (guint k = 0; k < n; k++)
    g_assert_cmpstr (graphs[k]->path, ==, paths[k]);
  morok_onnx_model_nodes (m, &n);
  g_assert_cmpuint (n, ==, 11);
  morok_onnx_model_tensors (m, &n);
  g_assert_cmpuint (n, ==, 19);
  g_assert_cmpint (morok_onnx_model_opset_version (m, "test"), ==, 1);
  g_assert_cmpstr (morok_onnx_model_producer_version (m), ==, "1");

  const MorokOnnxNode *probe = morok_onnx_graph_find_node (morok_onnx_model_graph (m), "probe");
  g_assert_cmpstr (probe->domain, ==, "test");
  g_assert_cmpuint (probe->n_inputs, ==, 3);
  g_assert_cmpstr (probe->inputs[1], ==, "");
  const MorokOnnxAttribute *a = morok_onnx_node_find_attribute (probe, "f");
  g_assert_cmpint (a->type, ==, MOROK_ONNX_ATTR_FLOAT);
  g_assert_cmpfloat (a->f, ==, 0.5f);
  a = morok_onnx_node_find_attribute (probe, "i");
  g_assert_cmpint (a->i, ==, -3);
  a = morok_onnx_node_find_attribute (probe, "s");
  g_assert_cmpuint (a->s_len, ==, 5);
  g_assert_cmpstr (a->s, ==, "hello");
  a = morok_onnx_node_find_attribute (probe, "t");
  g_assert_cmpstr (a->t->name, ==, "t_attr");
  g_assert_true (a->t->node == probe);
  a = morok_onnx_node_find_attribute (probe, "floats");
  g_assert_cmpuint (a->n_floats, ==, 2);
  g_assert_cmpfloat (a->floats[1], ==, 2.0f);
  a = morok_onnx_node_find_attribute (probe, "ints");
  g_assert_cmpuint (a->n_ints, ==, 3);
  g_assert_cmpint (a->ints[1], ==, -5);
  a = morok_onnx_node_find_attribute (probe, "strings");
  g_assert_cmpuint (a->n_strings, ==, 2);
  g_assert_cmpstr (a->strings[1], ==, "yz");
  a = morok_onnx_node_find_attribute (probe, "tensors");
  g_assert_cmpint (a->type, ==, MOROK_ONNX_ATTR_TENSORS);
  g_assert_cmpuint (a->n_tensors, ==, 2);
  g_assert_cmpstr (a->tensors[1]->name, ==, "tb");
  g_assert_null (morok_onnx_node_find_attribute (probe, "absent"));

  /* An unnamed Constant tensor is found by the node's output. */
  const MorokOnnxTensor *c0 = morok_onnx_model_find_tensor (m, "c0_out");
  g_assert_nonnull (c0);
  g_assert_cmpstr (c0->name, ==, "");
  g_assert_cmpstr (c0->value_name, ==, "c0_out");

  /* Tensors two levels down, found from the top and from their branch. */
  const MorokOnnxTensor *deep = morok_onnx_model_find_tensor (m, "deep");
  g_assert_cmpstr (deep->graph->path, ==, "outer_if:then_branch/#1:else_branch");
  g_assert_true (deep
                 == morok_onnx_graph_find_tensor (
                     morok_onnx_model_find_graph (m, "outer_if:then_branch"), "deep"));
  g_assert_null (morok_onnx_graph_find_tensor (
      morok_onnx_model_find_graph (m, "outer_if:else_branch"), "deep"));
  g_assert_cmpstr (morok_onnx_model_find_tensor (m, "inner")->graph->path, ==,
                   "outer_if:then_branch");
  g_assert_cmpstr (morok_onnx_model_find_tensor (m, "loop_w")->graph->path, ==, "#3:body");
  g_assert_null (morok_onnx_model_find_graph (m, "no:such_graph"));
}

/* --- Errors a user can cause ---------------------------------------------- */

/* A missing file, a directory, an empty file and a corrupt file each give
 * an error that names the file. */
static void
test_errors_name_the_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("morok-onnx-XXXXXX", &error);
  g_autofree char *missing = g_build_filename (dir, "missing.onnx", NULL);
  g_autofree char *empty = g_build_filename (dir, "empty.onnx", NULL);
  g_autofree char *corrupt = g_build_filename (dir, "corrupt.onnx", NULL);
  static const guint8 garbage[] = { 0x3a, 0xff, 0xff, 0xff, 0x0f, 'g', 'a', 'r', 'b' };

  g_assert_no_error (error);
  g_assert_null (morok_onnx_model_load (missing, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
  g_assert_true (g_str_has_prefix (error->message, missing));
  g_clear_error (&error);

  g_assert_null (morok_onnx_model_load (dir, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
  g_clear_error (&error);

  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  g_assert_null (morok_onnx_model_load (empty, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_TRUNCATED);
  g_assert_cmpstr (error->message, ==, "empty.onnx: empty file");
  g_clear_error (&error);

  /* Field 7 (graph) claims 4294967295 bytes. */
  g_assert_true (g_file_set_contents (corrupt, (const char *) garbage, sizeof garbage, NULL));
  g_assert_null (morok_onnx_model_load (corrupt, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_TRUNCATED);
  g_assert_true (g_str_has_prefix (error->message,
                                   "corrupt.onnx: truncated length-delimited field 7 at offset 1"));
  g_clear_error (&error);

  g_remove (empty);
  g_remove (corrupt);
  g_rmdir (dir);
}

/* A tensor of the wrong shape and an absent tensor are reported by name. */
static void
test_errors_name_the_tensor (void)
{
  g_autoptr (MorokOnnxModel) m = load_tiny ();
  g_autoptr (GError) error = NULL;
  static const gint64 want[] = { 3, 2 };

  g_assert_false (morok_onnx_tensor_check_dims (morok_onnx_model_find_tensor (m, "f32_typed"), 2,
                                                want, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED);
  g_assert_cmpstr (error->message, ==,
                   "onnx-tiny.onnx: tensor 'f32_typed' is [2,3], expected [3,2]");
  g_clear_error (&error);

  g_assert_null (morok_onnx_graph_require_tensor (
      morok_onnx_model_find_graph (m, "outer_if:else_branch"), "deep", &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND);
  g_assert_cmpstr (error->message, ==,
                   "onnx-tiny.onnx: no tensor 'deep' in graph 'outer_if:else_branch'");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/onnx-reader/silero/parses-all-versions", test_silero_parses_all_versions);
  g_test_add_func ("/onnx-reader/silero/values-match-python", test_silero_values_match_python);
  g_test_add_func ("/onnx-reader/silero/finds-tensors-in-if-branches",
                   test_silero_finds_tensors_in_if_branches);
  g_test_add_func ("/onnx-reader/silero/exposes-nodes-and-attributes",
                   test_silero_exposes_nodes_and_attributes);
  g_test_add_func ("/onnx-reader/silero/header-example", test_silero_header_example);
  g_test_add_func ("/onnx-reader/tiny/converts-every-encoding", test_tiny_converts_every_encoding);
  g_test_add_func ("/onnx-reader/tiny/refuses-unconvertible", test_tiny_refuses_unconvertible);
  g_test_add_func ("/onnx-reader/tiny/reads-attributes-and-subgraphs",
                   test_tiny_reads_attributes_and_subgraphs);
  g_test_add_func ("/onnx-reader/errors/name-the-file", test_errors_name_the_file);
  g_test_add_func ("/onnx-reader/errors/name-the-tensor", test_errors_name_the_tensor);
  return g_test_run ();
}
