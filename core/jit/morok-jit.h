/* SPDX-License-Identifier: MIT */
/* The JIT wrapper: a model's forward pass, prepared once, replayed per call.
 *
 * A wrapper type is declared with two X-macro lists, its inputs and its
 * symbolic variables, and defined with a build function that turns the model
 * and one placeholder tensor per input into the output tensor. prepare ()
 * calls the build function once, lowers the graph to a plan (compiled
 * kernels, buffers) and from then on execute () only replays that plan: the
 * caller writes the input buffers, executes, reads the output buffer. The
 * DSL is in jit/morok-jit-macros.h; the generated functions forward to the
 * generic MorokJit below. docs/jit-wrapper.md is the user guide.
 *
 *   #define SCALER_JIT_INPUTS(X) X (x)
 *   #define SCALER_JIT_VARS(X)   X (t, 1, model->max_frames)
 *   MOROK_JIT_DECLARE (ScalerJit, scaler_jit, Scaler, SCALER_JIT_INPUTS, SCALER_JIT_VARS)
 *
 *   static MorokTensor *
 *   build (Scaler *model, MorokTensor *x, MorokVariable *t, GError **error)
 *   {
 *     MorokTensor *frames = morok_jit_try_shrink (x, 0, t, error);   // [t, 16] of [max, 16]
 *     return morok_tensor_mul_scalar (frames, model->gain, error);   // gain baked in
 *   }
 *   MOROK_JIT_DEFINE (ScalerJit, scaler_jit, Scaler, SCALER_JIT_INPUTS, SCALER_JIT_VARS,
 *                     build, scaler_free)
 *
 *   g_autoptr (ScalerJit) jit = scaler_jit_new (scaler);             // owns scaler now
 *   g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (100, 16));
 *   if (!scaler_jit_prepare (scaler_jit_with_t_bound (jit, 100), x, &error)) ...
 *   memcpy (scaler_jit_x_mut (jit, &error)->data, frames, 37 * 16 * sizeof (float));
 *   scaler_jit_execute_with_vars (jit, (MorokVarValue[]){ { "t", 37 } }, 1, &error);
 *   const MorokBuffer *y = scaler_jit_output (jit, &error);          // y->shape: [37, 16]
 */
#pragma once

#include <glib.h>
#include <stddef.h>
#include "prepare/morok-prepare.h"
#include "runtime/morok-runtime.h"
#include "tensor/morok-tensor.h"

G_BEGIN_DECLS

/* ---- errors ---- */

#define MOROK_JIT_ERROR (morok_jit_error_quark ())
GQuark morok_jit_error_quark (void);

typedef enum
{
  /* A per-step call (execute, an input or output buffer, the accessors) on a
   * wrapper whose prepare has not succeeded yet. */
  MOROK_JIT_ERROR_NOT_PREPARED,
  /* prepare: a declared input that the output does not read (its buffer
   * would be written for nothing), or the output reads an input placeholder
   * that the wrapper did not make and so has no buffer for; or
   * morok_jit_recurrent_new without an interface on a wrapper that has no
   * inputs named h and c. */
  MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
  /* prepare: the output reads two input placeholders of one declared name
   * (the build function made its own `x` beside the wrapper's), so writing
   * `x` would feed only one of them; or two inputs share one plan buffer. */
  MOROK_JIT_ERROR_DUPLICATE_INPUT_BUFFER,
  /* prepare: the build function failed with an error of its own (its message
   * is kept after "<Type> build: "), returned NULL without an error or a
   * tensor of another graph; or a variable's bounds are empty (min > max,
   * min < 1), e.g. from a model field. */
  MOROK_JIT_ERROR_BUILD,
  /* prepare: a tensor or graph error (MOROK_TENSOR_ERROR, MOROK_GRAPH_ERROR):
   * shapes or dtypes that do not fit, from the build function or lowering. */
  MOROK_JIT_ERROR_TENSOR,
  /* prepare: the kernels cannot be made: compiler missing or failing, object
   * not loadable, an ISA this CPU lacks, or an unusable setting in the
   * environment (MOROK_ISA, MOROK_OPT, MOROK_THREADS). */
  MOROK_JIT_ERROR_DEVICE,
  /* MorokJitRecurrent: the output is not [head | h | c] in f32 with the
   * announced lengths, or a state input buffer does not fit the state. */
  MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH,
  /* execute: a variable value outside its bounds, or a name the wrapper does
   * not declare. The call changes nothing. */
  MOROK_JIT_ERROR_RUNTIME,
  /* prepare: the wrapper is prepared already (a wrapper is prepared once;
   * its plan stays as it was). */
  MOROK_JIT_ERROR_ALREADY_PREPARED,
} MorokJitError;

/* ---- input specs ---- */

/* The shape and dtype of one input at prepare. Symbolic inputs give their
 * maximal shape: the build function shrinks them with the variables. */
typedef struct
{
  MorokDType dtype;
  guint rank;
  gint64 shape[MOROK_MAX_RANK]; /* every dim >= 1 */
} MorokInputSpec;

/* `shape, rank` from a list of dims: morok_input_spec_f32 (MOROK_SHAPE (1, 64)). */
#define MOROK_SHAPE(...)                                                                           \
  (const gint64[]){ __VA_ARGS__ },                                                                 \
      (guint) (sizeof ((const gint64[]){ __VA_ARGS__ }) / sizeof (gint64))

/* (transfer full); NULL (and a critical) if rank > MOROK_MAX_RANK or a dim < 1. */
MorokInputSpec *morok_input_spec_new (const gint64 *shape, guint rank, MorokDType dtype);
MorokInputSpec *morok_input_spec_f32 (const gint64 *shape, guint rank);
MorokInputSpec *morok_input_spec_i32 (const gint64 *shape, guint rank);
MorokInputSpec *morok_input_spec_i64 (const gint64 *shape, guint rank);
/* Elements at the given shape. */
gint64 morok_input_spec_numel (const MorokInputSpec *spec);
void morok_input_spec_free (MorokInputSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokInputSpec, morok_input_spec_free)

/* ---- prepare configuration ---- */

/* How prepare compiles: threads, -O level, disk cache, source dump, compiler
 * and contraction ISA. Maps onto MorokPlanOptions. */
typedef struct _MorokPrepareConfig MorokPrepareConfig;

/* Defaults, reading no environment: all threads, -O2, cache on, the CPU's
 * best ISA, f32; compiler, cache and dump folders left to kernels/ (which reads
 * MOROK_CC, MOROK_CACHE and MOROK_CACHE_DIR itself). (transfer full) */
MorokPrepareConfig *morok_prepare_config_new (void);
/* The defaults overridden by MOROK_THREADS, MOROK_OPT, MOROK_CACHE,
 * MOROK_CACHE_DIR, MOROK_DUMP_DIR, MOROK_CC, MOROK_ISA and MOROK_PRECISION (see
 * docs/jit-wrapper.md). A value that cannot be used is remembered and makes
 * prepare fail with MOROK_JIT_ERROR_DEVICE naming it, unless a setter
 * replaces it first. (transfer full) */
MorokPrepareConfig *morok_prepare_config_from_env (void);
void morok_prepare_config_free (MorokPrepareConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokPrepareConfig, morok_prepare_config_free)

/* Most threads one step may use; 0: the pool's size. */
void morok_prepare_config_set_threads (MorokPrepareConfig *config, guint threads);
/* clang -O level, 0 to 3. */
void morok_prepare_config_set_opt_level (MorokPrepareConfig *config, gint level);
void morok_prepare_config_set_use_cache (MorokPrepareConfig *config, gboolean use_cache);
/* Strings are copied; NULL restores the default. */
void morok_prepare_config_set_cache_dir (MorokPrepareConfig *config, const char *dir);
void morok_prepare_config_set_dump_dir (MorokPrepareConfig *config, const char *dir);
void morok_prepare_config_set_cc (MorokPrepareConfig *config, const char *cc);
void morok_prepare_config_set_isa (MorokPrepareConfig *config, MorokIsa isa);
/* The ISA @config prepares for: set, from MOROK_ISA, or this CPU's best. */
MorokIsa morok_prepare_config_isa (const MorokPrepareConfig *config);
/* The arithmetic of products with constant weights (docs/jit-wrapper.md,
 * "Precision"): MOROK_PRECISION_F32 (the default); MOROK_PRECISION_F16, f16
 * products with f32 sums, about 1e-3 relative error (AVX512-FP16 CPUs);
 * MOROK_PRECISION_BF16, bf16 products with f32 sums, about 4e-3;
 * MOROK_PRECISION_BF16X3, each product as three bf16 products with f32
 * sums, about 1e-5 (both on AMX-BF16, else AVX512-BF16 CPUs);
 * MOROK_PRECISION_INT8, int8 weights per output column and uint8
 * activations per row with int32 sums, about 1e-2 (AVX512-VNNI, or any
 * AVX2 CPU with the avx2 ISA: 7-bit activations there without AVX-VNNI).
 * What a CPU lacks for one: morok_plan_precision_supported. */
void morok_prepare_config_set_precision (MorokPrepareConfig *config, MorokPrecision precision);
MorokPrecision morok_prepare_config_precision (const MorokPrepareConfig *config);
/* "f32", "f16", "bf16", "bf16x3" or "int8"; FALSE for anything else. */
gboolean morok_precision_parse (const char *name, MorokPrecision *out);

/* Fills @out_opts for morok_plan_build; its strings are borrowed from
 * @config. Fails with MOROK_JIT_ERROR_DEVICE for a remembered unusable
 * environment value, an ISA this CPU does not run, or a precision it
 * cannot run (morok_plan_precision_supported). */
gboolean morok_prepare_config_to_plan_options (const MorokPrepareConfig *config,
                                               MorokPlanOptions *out_opts, GError **error);

/* ---- the generic wrapper (what the generated functions call) ---- */

typedef struct _MorokJit MorokJit;

/* One declared variable and its bounds, as evaluated at _new. */
typedef struct
{
  const char *name;
  gint64 min, max;
} MorokJitVarDecl;

/* The build function with its inputs and variables in arrays, in declared
 * order; the DSL generates one that calls the typed build function. */
typedef MorokTensor *(*MorokJitBuildFn) (gpointer model, MorokTensor *const *inputs,
                                         MorokVariable *const *vars, GError **error);

/* At most this many inputs and variables per wrapper. */
#define MOROK_JIT_MAX_INPUTS 16
#define MOROK_JIT_MAX_VARS 16

/* A wrapper around @model, which it owns (@model_free may be NULL). Names
 * and @vars are copied; a name given twice is a critical. (transfer full) */
MorokJit *morok_jit_new (const char *type_name, gpointer model, GDestroyNotify model_free,
                         const char *const *input_names, guint n_inputs,
                         const MorokJitVarDecl *vars, guint n_vars, MorokJitBuildFn build);
/* Frees the plan and the model (a wrapper from morok_jit_new_context: its
 * context only); NULL is a no-op. */
void morok_jit_free (MorokJit *jit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokJit, morok_jit_free)

/* (transfer none) valid while @jit lives. */
gpointer morok_jit_model (MorokJit *jit);
const char *morok_jit_type_name (const MorokJit *jit);
/* The declared input called @name, or -1. */
gint morok_jit_input_index (const MorokJit *jit, const char *name);
gboolean morok_jit_is_prepared (const MorokJit *jit);

/* Bound setters. Misuse is a programmer error: a critical, nothing changed,
 * FALSE: max < min, min > max, a value < 1, a bad index, or after prepare. */
gboolean morok_jit_set_var_max (MorokJit *jit, guint var, gint64 max);
gboolean morok_jit_set_var_min (MorokJit *jit, guint var, gint64 min);
/* min = max = @value: the variable is a constant of the plan. */
gboolean morok_jit_set_var_fixed (MorokJit *jit, guint var, gint64 value);
/* Current bounds of the variable @name; FALSE if there is none. */
gboolean morok_jit_var_bounds (const MorokJit *jit, const char *name, gint64 *out_min,
                               gint64 *out_max);

/* Builds the graph (one placeholder per @specs entry, variables at their
 * current bounds), calls the build function and compiles the plan. @config
 * NULL: morok_prepare_config_from_env (). Prepares once: a second call fails
 * with ALREADY_PREPARED and keeps the plan. Fails with BUILD, TENSOR,
 * INPUT_BUFFER_NOT_FOUND, DUPLICATE_INPUT_BUFFER or DEVICE, leaving @jit
 * unprepared. */
gboolean morok_jit_prepare (MorokJit *jit, const MorokInputSpec *const *specs,
                            const MorokPrepareConfig *config, GError **error);

/* Another wrapper of @prepared's type running @prepared's program in a new
 * context of its own: own input and output buffers, arena and variable
 * values, so it executes independently of @prepared and of its other
 * contexts (on another thread, too). It shares the program (compiled code,
 * packed weights) and borrows the model: it must not outlive @prepared.
 * Freeing it frees neither. Fails with NOT_PREPARED before @prepared's
 * prepare, DEVICE when the buffers cannot be allocated. (transfer full) */
MorokJit *morok_jit_new_context (MorokJit *prepared, GError **error);

/* Input @input's buffer, for the caller to fill before execute: maximal
 * (InputSpec) shape and layout. (transfer none) valid while @jit lives. */
MorokBuffer *morok_jit_input_mut (MorokJit *jit, guint input, GError **error);
/* The output; its shape is the last execute's (before any: at the upper
 * bounds). (transfer none) valid while @jit lives. */
const MorokBuffer *morok_jit_output (MorokJit *jit, GError **error);

/* Runs the plan with every variable at its upper bound. Allocates nothing. */
gboolean morok_jit_execute (MorokJit *jit, GError **error);
/* Runs the plan with the listed variables at the given values and every
 * other one at its upper bound (not at the previous call's value). Fails
 * with RUNTIME, changing nothing, for a value out of bounds or an unknown
 * name. Allocates nothing. */
gboolean morok_jit_execute_with_vars (MorokJit *jit, const MorokVarValue *vars, gsize n_vars,
                                      GError **error);
/* As above, timing each kernel. (transfer full) GArray of MorokKernelProfile */
GArray *morok_jit_execute_profiled (MorokJit *jit, GError **error);
GArray *morok_jit_execute_with_vars_profiled (MorokJit *jit, const MorokVarValue *vars,
                                              gsize n_vars, GError **error);

/* ---- low-level accessors (all valid while @jit lives) ---- */

/* Every buffer pointer the kernels see, inputs first; *out_n gets the count. */
void *const *morok_jit_buffers (MorokJit *jit, guint *out_n, GError **error);
/* The plan's outputs (one for a DSL wrapper). */
const MorokBuffer *morok_jit_output_buffers (MorokJit *jit, guint *out_n, GError **error);
/* For each input in declared order, its index in morok_jit_buffers (). */
const guint *morok_jit_input_buffer_ids (MorokJit *jit, guint *out_n, GError **error);
/* Kernels (steps) of the plan; a prepared plan has at least one, so 0 means
 * an error. */
guint morok_jit_prepared_kernels (MorokJit *jit, GError **error);
/* The plan itself, or NULL before prepare. (transfer none) */
MorokPlan *morok_jit_plan (MorokJit *jit);

/* ---- helpers for build functions ---- */

/* The "try_shrink" pattern: @x's first @var elements along @axis, i.e.
 * morok_tensor_slice (x, axis, 0, var). @x itself when that axis already is
 * @var. Fails (MOROK_TENSOR_ERROR) when var's max exceeds the axis. */
MorokTensor *morok_jit_try_shrink (MorokTensor *x, gint axis, MorokVariable *var, GError **error);

G_END_DECLS

#include "jit/morok-jit-macros.h"
