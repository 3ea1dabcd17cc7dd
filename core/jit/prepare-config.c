/* SPDX-License-Identifier: MIT */
/* MorokPrepareConfig: how prepare compiles, from code or the environment,
 * and its mapping onto MorokPlanOptions. */
#define G_LOG_DOMAIN "morok-jit"
#include "jit/morok-jit-registry.h"

/* Settings that an environment value can spoil; prepare reports the spoilt
 * one unless a setter replaced it. */
enum
{
  BAD_THREADS,
  BAD_OPT,
  BAD_ISA,
  BAD_PRECISION,
  N_BAD
};

struct _MorokPrepareConfig
{
  guint threads;  /* 0: the pool's size */
  gint opt_level; /* clang -O level */
  gboolean use_cache;
  char *cache_dir; /* NULL: kernels/ decides ($MOROK_CACHE_DIR, XDG cache) */
  char *dump_dir;  /* NULL: no dump */
  char *cc;        /* NULL: kernels/ decides ($MOROK_CC, clang on PATH) */
  MorokIsa isa;
  MorokPrecision precision; /* of products with constant weights */
  char *bad[N_BAD];         /* why an environment value was not used */
};

MorokPrepareConfig *
morok_prepare_config_new (void)
{
  MorokPrepareConfig *config = g_new0 (MorokPrepareConfig, 1);
  config->opt_level = 2;
  config->use_cache = TRUE;
  config->isa = morok_isa_detect ();
  config->precision = MOROK_PRECISION_F32;
  return config;
}

/* $name if set and not empty. */
static const char *
env (const char *name)
{
  const char *v = g_getenv (name);
  return v && *v ? v : NULL;
}

MorokPrepareConfig *
morok_prepare_config_from_env (void)
{
  MorokPrepareConfig *config = morok_prepare_config_new ();
  const char *v;
  guint64 n;
  if ((v = env ("MOROK_THREADS")))
    {
      if (g_ascii_string_to_unsigned (v, 10, 1, G_MAXUINT, &n, NULL))
        config->threads = (guint) n;
      else
        config->bad[BAD_THREADS]
            = g_strdup_printf ("MOROK_THREADS='%s' is not a thread count (1 or more)", v);
    }
  if ((v = env ("MOROK_OPT")))
    {
      if (g_ascii_string_to_unsigned (v, 10, 0, 3, &n, NULL))
        config->opt_level = (gint) n;
      else
        config->bad[BAD_OPT]
            = g_strdup_printf ("MOROK_OPT='%s' is not an optimisation level (0 to 3)", v);
    }
  if ((v = env ("MOROK_ISA")) && !morok_isa_parse (v, &config->isa))
    config->bad[BAD_ISA]
        = g_strdup_printf ("MOROK_ISA='%s' is not one of avx512, avx2, portable", v);
  if ((v = env ("MOROK_PRECISION")) && !morok_precision_parse (v, &config->precision))
    config->bad[BAD_PRECISION]
        = g_strdup_printf ("MOROK_PRECISION='%s' is not one of f32, f16, bf16, bf16x3, int8", v);
  config->use_cache = g_strcmp0 (env ("MOROK_CACHE"), "0") != 0;
  config->cache_dir = g_strdup (env ("MOROK_CACHE_DIR"));
  config->dump_dir = g_strdup (env ("MOROK_DUMP_DIR"));
  config->cc = g_strdup (env ("MOROK_CC"));
  return config;
}

void
morok_prepare_config_free (MorokPrepareConfig *config)
{
  if (!config)
    return;
  for (guint i = 0; i < N_BAD; i++)
    g_free (config->bad[i]);
  g_free (config->cache_dir);
  g_free (config->dump_dir);
  g_free (config->cc);
  g_free (config);
}

/* ---- setters ---- */

void
morok_prepare_config_set_threads (MorokPrepareConfig *config, guint threads)
{
  g_return_if_fail (config != NULL);
  config->threads = threads;
  g_clear_pointer (&config->bad[BAD_THREADS], g_free);
}

void
morok_prepare_config_set_opt_level (MorokPrepareConfig *config, gint level)
{
  g_return_if_fail (config != NULL);
  g_return_if_fail (level >= 0 && level <= 3);
  config->opt_level = level;
  g_clear_pointer (&config->bad[BAD_OPT], g_free);
}

void
morok_prepare_config_set_use_cache (MorokPrepareConfig *config, gboolean use_cache)
{
  g_return_if_fail (config != NULL);
  config->use_cache = use_cache;
}

static void
replace (char **field, const char *value)
{
  g_free (*field);
  *field = g_strdup (value);
}

void
morok_prepare_config_set_cache_dir (MorokPrepareConfig *config, const char *dir)
{
  g_return_if_fail (config != NULL);
  replace (&config->cache_dir, dir);
}

void
morok_prepare_config_set_dump_dir (MorokPrepareConfig *config, const char *dir)
{
  g_return_if_fail (config != NULL);
  replace (&config->dump_dir, dir);
}

void
morok_prepare_config_set_cc (MorokPrepareConfig *config, const char *cc)
{
  g_return_if_fail (config != NULL);
  replace (&config->cc, cc);
}

MorokIsa
morok_prepare_config_isa (const MorokPrepareConfig *config)
{
  g_return_val_if_fail (config != NULL, MOROK_ISA_PORTABLE);
  return config->isa;
}

void
morok_prepare_config_set_isa (MorokPrepareConfig *config, MorokIsa isa)
{
  g_return_if_fail (config != NULL);
  g_return_if_fail (isa >= MOROK_ISA_PORTABLE && isa <= MOROK_ISA_AVX512);
  config->isa = isa;
  g_clear_pointer (&config->bad[BAD_ISA], g_free);
}

MorokPrecision
morok_prepare_config_precision (const MorokPrepareConfig *config)
{
  g_return_val_if_fail (config != NULL, MOROK_PRECISION_F32);
  return config->precision;
}

gboolean
morok_precision_parse (const char *name, MorokPrecision *out)
{
  for (guint p = 0; p < MOROK_PRECISION_COUNT; p++)
    if (g_strcmp0 (name, morok_precision_name (p)) == 0)
      {
        *out = p;
        return TRUE;
      }
  return FALSE;
}

void
morok_prepare_config_set_precision (MorokPrepareConfig *config, MorokPrecision precision)
{
  g_return_if_fail (config != NULL);
  g_return_if_fail ((guint) precision < MOROK_PRECISION_COUNT);
  config->precision = precision;
  g_clear_pointer (&config->bad[BAD_PRECISION], g_free);
}

/* ---- onto the plan ---- */

gboolean
morok_prepare_config_to_plan_options (const MorokPrepareConfig *config, MorokPlanOptions *out_opts,
                                      GError **error)
{
  g_return_val_if_fail (config != NULL && out_opts != NULL, FALSE);
  for (guint i = 0; i < N_BAD; i++)
    if (config->bad[i])
      {
        g_set_error_literal (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DEVICE, config->bad[i]);
        return FALSE;
      }
  MorokIsa best = morok_isa_detect ();
  if (config->isa > best)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DEVICE,
                   "ISA '%s' was asked for, but this CPU runs at most '%s'",
                   morok_isa_name (config->isa), morok_isa_name (best));
      return FALSE;
    }
  GError *why = NULL;
  if (!morok_plan_precision_supported (config->isa, config->precision, &why))
    {
      g_set_error_literal (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DEVICE, why->message);
      g_error_free (why);
      return FALSE;
    }
  morok_plan_options_init (out_opts);
  out_opts->threads = config->threads;
  out_opts->isa = config->isa;
  out_opts->precision = config->precision;
  out_opts->compile.cc = config->cc;
  out_opts->compile.opt_level = config->opt_level;
  out_opts->compile.use_cache = config->use_cache;
  out_opts->compile.cache_dir = config->cache_dir;
  out_opts->compile.dump_dir = config->dump_dir;
  return TRUE;
}

/* ---- as a registry key ---- */

char *
morok_prepare_config_key (const MorokPrepareConfig *config)
{
  g_return_val_if_fail (config != NULL, NULL);
  GString *key = g_string_new (NULL);
  g_string_append_printf (key, "threads=%u opt=%d isa=%s precision=%s cc=%s", config->threads,
                          config->opt_level, morok_isa_name (config->isa),
                          morok_precision_name (config->precision),
                          config->cc ? config->cc : "(default)");
  for (guint i = 0; i < N_BAD; i++)
    if (config->bad[i])
      g_string_append_printf (key, " bad=%s", config->bad[i]);
  return g_string_free (key, FALSE);
}
