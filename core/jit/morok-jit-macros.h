/* SPDX-License-Identifier: MIT */
/* The declaration DSL: MOROK_JIT_DECLARE in a header, MOROK_JIT_DEFINE in
 * the source file that holds the build function. Include jit/morok-jit.h,
 * not this file.
 *
 *   #define CELL_JIT_INPUTS(X) X (x) X (h) X (c)           // one X (name) per input
 *   #define CELL_JIT_VARS(X)   X (t, 1, model->max_t)      // X (name, min, max); may be empty
 *   MOROK_JIT_DECLARE (CellJit, cell_jit, CellModel, CELL_JIT_INPUTS, CELL_JIT_VARS)
 *   MOROK_JIT_DEFINE (CellJit, cell_jit, CellModel, CELL_JIT_INPUTS, CELL_JIT_VARS,
 *                     build, cell_model_free)
 *
 * The bounds are expressions evaluated in cell_jit_new (), where `model` is
 * the model pointer. The build function must have exactly the parameters
 *   MorokTensor *build (CellModel *model, MorokTensor *x, MorokTensor *h,
 *                       MorokTensor *c, MorokVariable *t, GError **error);
 * DEFINE declares that prototype, so any other parameter list is a compile
 * error ("conflicting types for 'build'"). The last argument of DEFINE frees
 * the model (`void f (CellModel *)`), or is NULL for a model the wrapper does
 * not own.
 *
 * DECLARE generates (all thin MOROK_JIT__INLINE calls of morok_jit_* in
 * jit/morok-jit.h, except _new, which DEFINE generates):
 *   CellJit *cell_jit_new (CellModel *model);                   takes ownership
 *   CellJit *cell_jit_new_context (CellJit *prepared, GError **); shares its program,
 *                                                               borrows its model
 *   void cell_jit_free (CellJit *self);                         + g_autoptr (CellJit)
 *   CellJit *cell_jit_with_t_bound (CellJit *self, gint64 max);
 *   CellJit *cell_jit_with_t_min_bound (CellJit *self, gint64 min);
 *   CellJit *cell_jit_with_t_fixed (CellJit *self, gint64 value);
 *   gboolean cell_jit_prepare (CellJit *self, const MorokInputSpec *x, ...h, ...c, GError **);
 *   gboolean cell_jit_prepare_with_config (CellJit *self, ...specs,
 *                                          const MorokPrepareConfig *config, GError **);
 *   MorokBuffer *cell_jit_x_mut (CellJit *self, GError **);     one per input
 *   const MorokBuffer *cell_jit_output (CellJit *self, GError **);
 *   gboolean cell_jit_execute (CellJit *self, GError **);
 *   gboolean cell_jit_execute_with_vars (CellJit *self, const MorokVarValue *, gsize, GError **);
 *   GArray *cell_jit_execute_profiled (CellJit *self, GError **);
 *   GArray *cell_jit_execute_with_vars_profiled (CellJit *self, const MorokVarValue *, gsize,
 *                                                GError **);
 *   void *const *cell_jit_buffers (CellJit *self, guint *out_n, GError **);
 *   const MorokBuffer *cell_jit_output_buffers (CellJit *self, guint *out_n, GError **);
 *   const guint *cell_jit_input_buffer_ids (CellJit *self, guint *out_n, GError **);
 *   guint cell_jit_prepared_kernels (CellJit *self, GError **);
 *   MorokJit *cell_jit_jit (CellJit *self);                     the generic wrapper
 *   CellModel *cell_jit_model (CellJit *self);                  (transfer none)
 *
 * CellJit is an opaque handle for a MorokJit. Names `self`, `error`,
 * `config` and `model` cannot be input or variable names. At most 16 inputs
 * and 16 variables. */
#pragma once

/* generated functions: a wrapper declared in a .c file may leave some unused */
#define MOROK_JIT__INLINE static inline G_GNUC_UNUSED

/* ---- one expansion per input: X (name) ---- */
#define MOROK_JIT__IN_STRING(name) #name,
#define MOROK_JIT__IN_SPEC_PARAM(name) const MorokInputSpec *name,
#define MOROK_JIT__IN_SPEC_ARG(name) name,
#define MOROK_JIT__IN_BUILD_PARAM(name) MorokTensor *name,
#define MOROK_JIT__IN_LOCAL(name) MorokTensor *name = *morok_jit__in++;
#define MOROK_JIT__IN_ITEM(name) , name

/* ---- one expansion per variable: X (name, min, max) ---- */
#define MOROK_JIT__VAR_DECL(name, min, max) { #name, (gint64) (min), (gint64) (max) },
#define MOROK_JIT__VAR_BUILD_PARAM(name, min, max) MorokVariable *name,
#define MOROK_JIT__VAR_LOCAL(name, min, max) MorokVariable *name = *morok_jit__var++;
#define MOROK_JIT__VAR_ARG(name, min, max) name,
#define MOROK_JIT__VAR_ITEM(name, min, max) , name

/* ---- MOROK_JIT__EACH (F, T, p, _ , a, b, ...) expands F (T, p, a) F (T, p, b) ...
 * The X lists become comma lists through the _ITEM expansions above, so the
 * per-item functions can paste the wrapper's prefix to each name. ---- */
#define MOROK_JIT__CAT(a, b) MOROK_JIT__CAT_ (a, b)
#define MOROK_JIT__CAT_(a, b) a##b
#define MOROK_JIT__COUNT(...)                                                                      \
  MOROK_JIT__COUNT_ (__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -)
#define MOROK_JIT__COUNT_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15,    \
                          _16, n, ...)                                                             \
  n
#define MOROK_JIT__EACH(F, T, p, ...)                                                              \
  MOROK_JIT__EACH_N (MOROK_JIT__COUNT (__VA_ARGS__), F, T, p, __VA_ARGS__)
#define MOROK_JIT__EACH_N(n, ...) MOROK_JIT__CAT (MOROK_JIT__EACH_, n) (__VA_ARGS__)
#define MOROK_JIT__EACH_0(F, T, p, _)
#define MOROK_JIT__EACH_1(F, T, p, _, a) F (T, p, a)
#define MOROK_JIT__EACH_2(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_1 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_3(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_2 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_4(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_3 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_5(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_4 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_6(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_5 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_7(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_6 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_8(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_7 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_9(F, T, p, _, a, ...)                                                      \
  F (T, p, a) MOROK_JIT__EACH_8 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_10(F, T, p, _, a, ...)                                                     \
  F (T, p, a) MOROK_JIT__EACH_9 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_11(F, T, p, _, a, ...)                                                     \
  F (T, p, a) MOROK_JIT__EACH_10 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_12(F, T, p, _, a, ...)                                                     \
  F (T, p, a) MOROK_JIT__EACH_11 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_13(F, T, p, _, a, ...)                                                     \
  F (T, p, a) MOROK_JIT__EACH_12 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_14(F, T, p, _, a, ...)                                                     \
  F (T, p, a) MOROK_JIT__EACH_13 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_15(F, T, p, _, a, ...)                                                     \
  F (T, p, a) MOROK_JIT__EACH_14 (F, T, p, _, __VA_ARGS__)
#define MOROK_JIT__EACH_16(F, T, p, _, a, ...)                                                     \
  F (T, p, a) MOROK_JIT__EACH_15 (F, T, p, _, __VA_ARGS__)

/* ---- per-item pieces: indices, input accessors, variable setters ---- */
#define MOROK_JIT__IN_INDEX(T, p, name) p##__in_##name,
#define MOROK_JIT__VAR_INDEX(T, p, name) p##__var_##name,

#define MOROK_JIT__IN_MUT(T, p, name)                                                              \
  MOROK_JIT__INLINE MorokBuffer *p##_##name##_mut (T *self, GError **error)                        \
  {                                                                                                \
    return morok_jit_input_mut ((MorokJit *) self, p##__in_##name, error);                         \
  }

#define MOROK_JIT__VAR_SETTERS(T, p, name)                                                         \
  MOROK_JIT__INLINE T *p##_with_##name##_bound (T *self, gint64 max)                               \
  {                                                                                                \
    morok_jit_set_var_max ((MorokJit *) self, p##__var_##name, max);                               \
    return self;                                                                                   \
  }                                                                                                \
  MOROK_JIT__INLINE T *p##_with_##name##_min_bound (T *self, gint64 min)                           \
  {                                                                                                \
    morok_jit_set_var_min ((MorokJit *) self, p##__var_##name, min);                               \
    return self;                                                                                   \
  }                                                                                                \
  MOROK_JIT__INLINE T *p##_with_##name##_fixed (T *self, gint64 value)                             \
  {                                                                                                \
    morok_jit_set_var_fixed ((MorokJit *) self, p##__var_##name, value);                           \
    return self;                                                                                   \
  }

/* ---- MOROK_JIT_DECLARE: the type and its functions, for a header ---- */
#define MOROK_JIT_DECLARE(TypeName, prefix, ModelType, INPUTS, VARS)                               \
  typedef struct _##TypeName TypeName;                                                             \
  enum                                                                                             \
  {                                                                                                \
    MOROK_JIT__EACH (MOROK_JIT__IN_INDEX, TypeName, prefix, _ INPUTS (MOROK_JIT__IN_ITEM))         \
        prefix##__n_inputs                                                                         \
  };                                                                                               \
  enum                                                                                             \
  {                                                                                                \
    MOROK_JIT__EACH (MOROK_JIT__VAR_INDEX, TypeName, prefix, _ VARS (MOROK_JIT__VAR_ITEM))         \
        prefix##__n_vars                                                                           \
  };                                                                                               \
  TypeName *prefix##_new (ModelType *model);                                                       \
  MOROK_JIT__INLINE void prefix##_free (TypeName *self) { morok_jit_free ((MorokJit *) self); }    \
  G_DEFINE_AUTOPTR_CLEANUP_FUNC (TypeName, prefix##_free)                                          \
  MOROK_JIT__INLINE MorokJit *prefix##_jit (TypeName *self) { return (MorokJit *) self; }          \
  MOROK_JIT__INLINE TypeName *prefix##_new_context (TypeName *prepared, GError **error)            \
  {                                                                                                \
    return (TypeName *) morok_jit_new_context ((MorokJit *) prepared, error);                      \
  }                                                                                                \
  MOROK_JIT__INLINE ModelType *prefix##_model (TypeName *self)                                     \
  {                                                                                                \
    return (ModelType *) morok_jit_model ((MorokJit *) self);                                      \
  }                                                                                                \
  MOROK_JIT__EACH (MOROK_JIT__VAR_SETTERS, TypeName, prefix, _ VARS (MOROK_JIT__VAR_ITEM))         \
  MOROK_JIT__EACH (MOROK_JIT__IN_MUT, TypeName, prefix, _ INPUTS (MOROK_JIT__IN_ITEM))             \
  MOROK_JIT__INLINE gboolean prefix##_prepare_with_config (                                        \
      TypeName *self, INPUTS (MOROK_JIT__IN_SPEC_PARAM) const MorokPrepareConfig *config,          \
      GError **error)                                                                              \
  {                                                                                                \
    const MorokInputSpec *specs[] = { INPUTS (MOROK_JIT__IN_SPEC_ARG) NULL };                      \
    return morok_jit_prepare ((MorokJit *) self, specs, config, error);                            \
  }                                                                                                \
  MOROK_JIT__INLINE gboolean prefix##_prepare (TypeName *self,                                     \
                                               INPUTS (MOROK_JIT__IN_SPEC_PARAM) GError **error)   \
  {                                                                                                \
    const MorokInputSpec *specs[] = { INPUTS (MOROK_JIT__IN_SPEC_ARG) NULL };                      \
    return morok_jit_prepare ((MorokJit *) self, specs, NULL, error);                              \
  }                                                                                                \
  MOROK_JIT__INLINE const MorokBuffer *prefix##_output (TypeName *self, GError **error)            \
  {                                                                                                \
    return morok_jit_output ((MorokJit *) self, error);                                            \
  }                                                                                                \
  MOROK_JIT__INLINE gboolean prefix##_execute (TypeName *self, GError **error)                     \
  {                                                                                                \
    return morok_jit_execute ((MorokJit *) self, error);                                           \
  }                                                                                                \
  MOROK_JIT__INLINE gboolean prefix##_execute_with_vars (                                          \
      TypeName *self, const MorokVarValue *vars, gsize n_vars, GError **error)                     \
  {                                                                                                \
    return morok_jit_execute_with_vars ((MorokJit *) self, vars, n_vars, error);                   \
  }                                                                                                \
  MOROK_JIT__INLINE GArray *prefix##_execute_profiled (TypeName *self, GError **error)             \
  {                                                                                                \
    return morok_jit_execute_profiled ((MorokJit *) self, error);                                  \
  }                                                                                                \
  MOROK_JIT__INLINE GArray *prefix##_execute_with_vars_profiled (                                  \
      TypeName *self, const MorokVarValue *vars, gsize n_vars, GError **error)                     \
  {                                                                                                \
    return morok_jit_execute_with_vars_profiled ((MorokJit *) self, vars, n_vars, error);          \
  }                                                                                                \
  MOROK_JIT__INLINE void *const *prefix##_buffers (TypeName *self, guint *out_n, GError **error)   \
  {                                                                                                \
    return morok_jit_buffers ((MorokJit *) self, out_n, error);                                    \
  }                                                                                                \
  MOROK_JIT__INLINE const MorokBuffer *prefix##_output_buffers (TypeName *self, guint *out_n,      \
                                                                GError **error)                    \
  {                                                                                                \
    return morok_jit_output_buffers ((MorokJit *) self, out_n, error);                             \
  }                                                                                                \
  MOROK_JIT__INLINE const guint *prefix##_input_buffer_ids (TypeName *self, guint *out_n,          \
                                                            GError **error)                        \
  {                                                                                                \
    return morok_jit_input_buffer_ids ((MorokJit *) self, out_n, error);                           \
  }                                                                                                \
  MOROK_JIT__INLINE guint prefix##_prepared_kernels (TypeName *self, GError **error)               \
  {                                                                                                \
    return morok_jit_prepared_kernels ((MorokJit *) self, error);                                  \
  }

/* ---- MOROK_JIT_DEFINE: _new and the typed call of the build function ---- */
#define MOROK_JIT_DEFINE(TypeName, prefix, ModelType, INPUTS, VARS, build_function, model_free)    \
  /* the exact prototype: a build function with other parameters does not compile */               \
  MorokTensor *build_function (ModelType *model, INPUTS (MOROK_JIT__IN_BUILD_PARAM) VARS (         \
                                                     MOROK_JIT__VAR_BUILD_PARAM) GError **error);  \
  static MorokTensor *prefix##__build (                                                            \
      gpointer morok_jit__model, MorokTensor *const *morok_jit__in,                                \
      MorokVariable *const *morok_jit__var, GError **morok_jit__error)                             \
  {                                                                                                \
    INPUTS (MOROK_JIT__IN_LOCAL)                                                                   \
    VARS (MOROK_JIT__VAR_LOCAL)                                                                    \
    (void) morok_jit__in;                                                                          \
    (void) morok_jit__var;                                                                         \
    return build_function ((ModelType *) morok_jit__model,                                         \
                           INPUTS (MOROK_JIT__IN_SPEC_ARG) VARS (MOROK_JIT__VAR_ARG)               \
                               morok_jit__error);                                                  \
  }                                                                                                \
  static void prefix##__model_free (gpointer morok_jit__model)                                     \
  {                                                                                                \
    void (*morok_jit__free) (ModelType *) = model_free;                                            \
    if (morok_jit__free)                                                                           \
      morok_jit__free ((ModelType *) morok_jit__model);                                            \
  }                                                                                                \
  TypeName *prefix##_new (ModelType *model)                                                        \
  {                                                                                                \
    g_return_val_if_fail (model != NULL, NULL);                                                    \
    static const char *const morok_jit__inputs[] = { INPUTS (MOROK_JIT__IN_STRING) NULL };         \
    const MorokJitVarDecl morok_jit__vars[] = { VARS (MOROK_JIT__VAR_DECL){ NULL, 0, 0 } };        \
    return (TypeName *) morok_jit_new (#TypeName, model, prefix##__model_free, morok_jit__inputs,  \
                                       prefix##__n_inputs, morok_jit__vars, prefix##__n_vars,      \
                                       prefix##__build);                                           \
  }
