/* SPDX-License-Identifier: MIT */
/* The morokencoder element: utterances in, NNStreamer flexible tensors out. */
#include "element-checks.h"
#include "fixtures.h"
#include "jit/morok-jit-registry.h"
#include "models/gigaam-encoder-jit.h"
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define RATE 16000

/* NNStreamer's flexible header, read field by field as its headers lay it
 * out: magic, version, type, dimension[16] innermost first, format, media. */
typedef struct
{
  guint32 magic, version, type, dim[16], format, media;
} Header;

static Header
parse_header (const guint8 *p)
{
  Header h;
  guint32 *f = (guint32 *) &h;
  for (guint i = 0; i < sizeof h / 4; i++)
    {
      guint32 v;
      memcpy (&v, p + 4 * i, 4);
      f[i] = GUINT32_FROM_LE (v);
    }
  return h;
}

static GstHarness *
chain_harness (const char *desc)
{
  GstHarness *h = gst_harness_new_parse (desc);
  gst_harness_set_src_caps_str (
      h, "audio/x-raw, format=S16LE, rate=16000, channels=1, layout=interleaved");
  return h;
}

static void
push_pcm (GstHarness *h, const gint16 *pcm, gsize first, gsize n, gsize block)
{
  for (gsize i = 0; i < n; i += block)
    {
      gsize len = MIN (block, n - i);
      GstBuffer *buf = gst_buffer_new_memdup (pcm + first + i, len * 2);
      GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (first + i, GST_SECOND, RATE);
      GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (len, GST_SECOND, RATE);
      g_assert_cmpint (gst_harness_push (h, buf), ==, GST_FLOW_OK);
    }
}

/* morokvad remove-silence=true ! morokencoder @props on speech with pauses:
 * one tensor buffer per speech segment, stamped with the segment's time,
 * with a header NNStreamer parses, holding within @tol (absolute, or
 * relative above 1) what the model computes in f32 on those samples, run
 * @batch consecutive segments at a time (1: each alone). */
static void
check_segments (const char *props, guint batch, double tol)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("morokvad remove-silence=true ! morokencoder model=%s "
                                           "output=log-probs %s",
                                           model, props);
  GstHarness *h = chain_harness (desc);
  /* not live, as behind filesrc: morokvad then passes exactly its segments */
  gst_harness_set_live (h, FALSE);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  push_pcm (h, pcm, 0, n, 1000);
  gst_harness_push_event (h, gst_event_new_eos ());

  /* the segments, from morokvad's messages */
  GArray *starts = g_array_new (FALSE, FALSE, sizeof (guint64));
  GArray *ends = g_array_new (FALSE, FALSE, sizeof (guint64));
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)))
    {
      const GstStructure *s = gst_message_get_structure (msg);
      guint64 ts;
      if (gst_structure_has_name (s, "morokvad") && gst_structure_get_uint64 (s, "timestamp", &ts))
        g_array_append_val (
            g_str_equal (gst_structure_get_string (s, "type"), "speech-start") ? starts : ends, ts);
      gst_message_unref (msg);
    }
  fail_unless (starts->len >= 3 && starts->len <= 16);
  fail_unless_equals_int (starts->len, ends->len);

  g_autoptr (MorokGigaAm) gigaam = morok_gigaam_load (model, NULL);
  fail_unless (gigaam != NULL);
  morok_gigaam_set_limits (gigaam, batch, 30 * RATE);
  g_autoptr (GigaAmCtcJit) ref = gigaam_ctc_jit_new (morok_gigaam_ref (gigaam));
  fail_unless (gigaam_ctc_jit_prepare_at_bounds (ref, NULL, NULL));
  guint classes = morok_gigaam_config (gigaam)->n_classes;

  GstBuffer *outs[16];
  float *waves[16];
  gint64 lens[16];
  for (guint i = 0; i < starts->len; i++)
    {
      GstBuffer *out = outs[i] = gst_harness_try_pull (h);
      fail_unless (out != NULL, "no tensor for segment %u", i);
      guint64 t0 = g_array_index (starts, guint64, i), t1 = g_array_index (ends, guint64, i);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (out), t0);
      fail_unless (ABS ((gint64) GST_BUFFER_DURATION (out) - (gint64) (t1 - t0)) <= GST_MSECOND);
      GstMapInfo map;
      gst_buffer_map (out, &map, GST_MAP_READ);
      Header hd = parse_header (map.data);
      fail_unless_equals_int (hd.magic, 0xfeedcced);
      fail_unless_equals_int (hd.version & 0xDE000000, 0xDE000000);
      fail_unless_equals_int (hd.type, 7);   /* float32 */
      fail_unless_equals_int (hd.format, 1); /* flexible */
      fail_unless_equals_int (hd.dim[0], classes);
      fail_unless_equals_int (hd.dim[2], 0);
      gint64 s0 = (gint64) gst_util_uint64_scale_round (t0, RATE, GST_SECOND);
      gint64 len = lens[i]
          = (gint64) gst_util_uint64_scale_round (GST_BUFFER_DURATION (out), RATE, GST_SECOND);
      fail_unless_equals_int (hd.dim[1], morok_gigaam_encoded_frames (gigaam, len));
      fail_unless_equals_int (map.size, 128 + 4 * hd.dim[0] * hd.dim[1]);
      gst_buffer_unmap (out, &map);
      waves[i] = g_new (float, len);
      for (gint64 k = 0; k < len; k++)
        waves[i][k] = pcm[s0 + k] / 32768.0f;
    }
  fail_unless (gst_harness_try_pull (h) == NULL, "more tensors than segments");

  /* the same samples through the model directly, batch by batch */
  for (guint first = 0; first < starts->len; first += batch)
    {
      guint count = MIN (batch, starts->len - first);
      fail_unless (gigaam_ctc_jit_run (ref, (const float *const *) waves + first, lens + first,
                                       count, NULL));
      const MorokBuffer *lp = gigaam_ctc_jit_output (ref, NULL); /* [count, T', C] */
      for (guint j = 0; j < count; j++)
        {
          guint i = first + j;
          GstMapInfo map;
          gst_buffer_map (outs[i], &map, GST_MAP_READ);
          const float *got = (const float *) (map.data + 128);
          const float *want = (const float *) lp->data + j * lp->shape[1] * lp->shape[2];
          double err = 0;
          for (gsize k = 0; k < (map.size - 128) / 4; k++)
            err = fmax (err, fabs (got[k] - want[k]) / fmax (1.0, fabs (want[k])));
          fail_unless (err < tol, "%s: segment %u differs by %g", props, i, err);
          gst_buffer_unmap (outs[i], &map);
          gst_buffer_unref (outs[i]);
          g_free (waves[i]);
        }
    }
  g_array_unref (starts);
  g_array_unref (ends);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_START_TEST (test_one_tensor_per_segment) { check_segments ("", 1, 1e-5); }
GST_END_TEST;

/* max-batch=2: segments run two at a time (the last alone, at EOS), each
 * still its own buffer, and each the same as the segment run alone: a
 * batch's items do not see each other's padding. */
GST_START_TEST (test_max_batch) { check_segments ("max-batch=2", 1, 1e-5); }
GST_END_TEST;

/* precision=@precision, where the element's ISA (MOROK_ISA, or this CPU's
 * best) runs it: within @tol of f32, the tolerance docs/gigaam-model.md
 * gives for it; otherwise skipped, saying which instruction is missing. */
static void
check_precision (MorokPrecision precision, double tol)
{
  g_autoptr (MorokPrepareConfig) env = morok_prepare_config_from_env ();
  g_autoptr (GError) why = NULL;
  if (!morok_plan_precision_supported (morok_prepare_config_isa (env), precision, &why))
    {
      g_print ("skipped precision %s: %s\n", morok_precision_name (precision), why->message);
      return;
    }
  g_autofree char *props = g_strdup_printf ("precision=%s", morok_precision_name (precision));
  check_segments (props, 1, tol);
}

/* f16 on CPUs with AVX512-FP16 */
GST_START_TEST (test_precision_f16) { check_precision (MOROK_PRECISION_F16, 3e-2); }
GST_END_TEST;

/* bf16x3 on CPUs with AMX-BF16: within f32's own tolerance */
GST_START_TEST (test_precision_bf16x3) { check_precision (MOROK_PRECISION_BF16X3, 1e-4); }
GST_END_TEST;

/* bf16 on CPUs with AMX-BF16 */
GST_START_TEST (test_precision_bf16) { check_precision (MOROK_PRECISION_BF16, 6e-2); }
GST_END_TEST;

/* precision=f16, bf16 or bf16x3 where it cannot run (here: the avx2 kernels) is
 * an error message that says so. */
GST_START_TEST (test_precision_unsupported)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_setenv ("MOROK_ISA", "avx2", TRUE);
  assert_fails_to_start_with ("morokencoder", model, "precision", "f16", "precision f16");
  assert_fails_to_start_with ("morokencoder", model, "precision", "bf16", "precision bf16");
  assert_fails_to_start_with ("morokencoder", model, "precision", "bf16x3", "precision bf16x3");
  g_unsetenv ("MOROK_ISA");
}
GST_END_TEST;

/* Continuous audio is cut at max-duration, and the encoder output has
 * d_model rows; the LATENCY query includes max-duration. */
GST_START_TEST (test_max_duration_cuts)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("morokencoder model=%s max-duration=1.0", model);
  GstHarness *h = chain_harness (desc);
  push_pcm (h, pcm, RATE, 3 * RATE + RATE / 2, 777); /* 3.5 s from 1.0 s on */
  gst_harness_push_event (h, gst_event_new_eos ());
  for (int i = 0; i < 4; i++)
    {
      GstBuffer *out = gst_harness_try_pull (h);
      fail_unless (out != NULL);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (out), (guint64) (1 + i) * GST_SECOND);
      fail_unless_equals_uint64 (GST_BUFFER_DURATION (out), i < 3 ? GST_SECOND : GST_SECOND / 2);
      GstMapInfo map;
      gst_buffer_map (out, &map, GST_MAP_READ);
      Header hd = parse_header (map.data);
      fail_unless_equals_int (hd.dim[1], 64); /* d_model of the tiny model, outer dim */
      gst_buffer_unmap (out, &map);
      gst_buffer_unref (out);
    }
  fail_unless (latency_at_least (h, GST_SECOND));
  gst_harness_teardown (h);

  /* with batches of 3, up to 3 utterances wait */
  g_free (desc);
  desc = g_strdup_printf ("morokencoder model=%s max-duration=1.0 max-batch=3", model);
  h = chain_harness (desc);
  push_pcm (h, pcm, RATE, RATE / 2, 800);
  fail_unless (latency_at_least (h, 3 * GST_SECOND));
  gst_harness_teardown (h);
}
GST_END_TEST;

/* 1 s of speech as F32, the samples in [8000, 8064) NaN, +inf and -inf
 * when @specials, else zeros, through morokencoder: its tensor (transfer
 * full), and the non-finite input warnings into *@warnings. */
static GstBuffer *
encode_f32 (const gint16 *pcm, gboolean specials, guint *warnings)
{
  static const float odd[] = { NAN, INFINITY, -INFINITY };
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("morokencoder model=%s", model);
  GstHarness *h = gst_harness_new_parse (desc);
  gst_harness_set_src_caps_str (
      h, "audio/x-raw, format=F32LE, rate=16000, channels=1, layout=interleaved");
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, RATE * sizeof (float), NULL);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  float *x = (float *) map.data;
  for (gsize i = 0; i < RATE; i++)
    x[i] = i < 8000 || i >= 8064 ? pcm[i] / 32768.0f : specials ? odd[i % 3] : 0.0f;
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND;
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  gst_harness_push_event (h, gst_event_new_eos ());
  GstBuffer *out = gst_harness_try_pull (h);
  fail_unless (out != NULL);
  guint64 samples = 0;
  *warnings = pop_non_finite_warnings (bus, &samples, NULL, NULL);
  if (*warnings > 0)
    fail_unless_equals_uint64 (samples, 64);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  return out;
}

/* NaN and infinite samples count as silence, as zeros would, and a
 * warning says they came. */
GST_START_TEST (test_non_finite_samples)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  guint with_zeros, with_specials;
  GstBuffer *zeros = encode_f32 (pcm + 3 * RATE, FALSE, &with_zeros);
  GstBuffer *specials = encode_f32 (pcm + 3 * RATE, TRUE, &with_specials);
  fail_unless_equals_int (with_zeros, 0);
  fail_unless_equals_int (with_specials, 1);
  fail_unless (gst_buffer_get_size (zeros) == gst_buffer_get_size (specials));
  GstMapInfo a, b;
  gst_buffer_map (zeros, &a, GST_MAP_READ);
  gst_buffer_map (specials, &b, GST_MAP_READ);
  fail_unless (memcmp (a.data, b.data, a.size) == 0);
  gst_buffer_unmap (zeros, &a);
  gst_buffer_unmap (specials, &b);
  gst_buffer_unref (zeros);
  gst_buffer_unref (specials);
}
GST_END_TEST;

/* A compiler that exits early or rejects a flag fails the state change
 * with an error naming it and what it printed; the host process lives on. */
GST_START_TEST (test_broken_compiler)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  assert_broken_compilers_fail_to_start ("morokencoder", model);
}
GST_END_TEST;

/* A harness around morokencoder @props on the tiny v3 model, whose output
 * (GAPs and buffers) is recorded into @timeline. */
static GstHarness *
timeline_harness (const char *props, GString *timeline)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("morokencoder model=%s %s", model, props);
  GstHarness *h = chain_harness (desc);
  GstElement *encoder = gst_harness_find_element (h, "morokencoder");
  timeline_record (encoder, timeline);
  gst_object_unref (encoder);
  return h;
}

/* Before the first utterance is complete, a GAP from the segment's start up
 * to the first sample tells downstream it may preroll; it does not reach
 * into the utterance, whose buffer comes at EOS. */
GST_START_TEST (test_gap_before_first_output)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GString) timeline = g_string_new (NULL);
  GstHarness *h = timeline_harness ("max-duration=2", timeline);
  push_pcm (h, pcm, RATE, RATE / 2, 800); /* 0.5 s from 1.0 s on */
  fail_unless_equals_string (timeline->str, "G0+1000");
  fail_unless (gst_harness_try_pull (h) == NULL);
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_string (timeline->str, "G0+1000 B1000+500");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* With max-batch=2, the GAPs that end utterances are not passed on ahead
 * of the utterances still waiting for their batch: each GAP comes after the
 * buffers before it, the time between utterances told once they are out
 * (0.5 s of speech, 0.5 s GAP, 0.5 s, 0.5 s GAP, 0.3 s, EOS). */
GST_START_TEST (test_gaps_after_waiting_utterances)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GString) timeline = g_string_new (NULL);
  GstHarness *h = timeline_harness ("max-duration=2 max-batch=2", timeline);
  push_pcm (h, pcm, 0, RATE / 2, 800);
  gst_harness_push_event (h, gst_event_new_gap (GST_SECOND / 2, GST_SECOND / 2));
  push_pcm (h, pcm, RATE, RATE / 2, 800);
  gst_harness_push_event (h, gst_event_new_gap (3 * GST_SECOND / 2, GST_SECOND / 2));
  push_pcm (h, pcm, 2 * RATE, 3 * RATE / 10, 800);
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_string (timeline->str, "G0+0 B0+500 G500+500 B1000+500 G1500+500 B2000+300");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Buffers without PTS get their utterances' times from the samples and the
 * segment (start 0); a GAP event resyncs them: 1.5 s unstamped with
 * max-duration=1, a GAP [3 s, 4 s), 0.5 s unstamped. */
GST_START_TEST (test_times_without_pts)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GString) timeline = g_string_new (NULL);
  GstHarness *h = timeline_harness ("max-duration=1", timeline);
  for (guint k = 0; k < 4; k++) /* 1.5 s then 0.5 s, in 0.5 s buffers */
    {
      if (k == 3)
        gst_harness_push_event (h, gst_event_new_gap (3 * GST_SECOND, GST_SECOND));
      GstBuffer *buf = gst_buffer_new_memdup (pcm + k * RATE / 2, RATE / 2 * 2);
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    }
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_string (timeline->str, "G0+0 B0+1000 B1000+500 G1500+2500 B4000+500");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* A tee feeding morokencoder on one branch and a plain sink on the other,
 * with default queues, prerolls (the fixture's 29.4 s is under the default
 * max-duration of 30 s: without GAPs the encoder's sink would wait for all
 * of it while the other branch's full queue blocks the tee) and reaches
 * EOS with the one utterance encoded. The waits are bounded: a hang fails. */
GST_START_TEST (test_tee_prerolls)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *branch = g_strdup_printf ("morokencoder name=el model=%s", model);
  fail_unless_equals_int (assert_tee_prerolls ("speech-16k.wav", branch), 1);
}
GST_END_TEST;

/* In PLAYING, max-duration (read at prepare) is ignored with a warning in
 * morokencoder's debug category. */
GST_START_TEST (test_ready_only_properties)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("morokencoder model=%s max-duration=2", model);
  GstHarness *h = chain_harness (desc);
  GstElement *encoder = gst_harness_find_element (h, "morokencoder");
  fail_unless (GST_STATE (encoder) == GST_STATE_PLAYING);
  g_autofree char *category = set_property_warning_category (encoder, "max-duration", "5");
  fail_unless_equals_string (category, "morokencoder");
  gdouble max_duration;
  g_object_get (encoder, "max-duration", &max_duration, NULL);
  fail_unless_equals_float (max_duration, 2.0);
  gst_object_unref (encoder);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* A missing, wrong or absent model is an error message naming the file;
 * the state change fails and nothing crashes. */
GST_START_TEST (test_bad_model)
{
  assert_fails_to_start ("morokencoder", NULL, "model property");
  assert_fails_to_start ("morokencoder", "/nonexistent/gigaam.safetensors",
                         "/nonexistent/gigaam.safetensors");
  g_autofree char *wrong = fixture_path ("onnx-tiny.onnx");
  assert_fails_to_start ("morokencoder", wrong, "onnx-tiny.onnx");
  g_autofree char *wav = fixture_path ("speech-16k.wav");
  assert_fails_to_start ("morokencoder", wav, "speech-16k.wav");
}
GST_END_TEST;

static void
edit_sample_rate_48k (JsonObject *header, JsonObject *config)
{
  json_object_set_int_member (json_object_get_object_member (config, "preprocessor"), "sample_rate",
                              48000);
}

/* A model made for 48 kHz audio, where the element takes 16 kHz, is an error
 * message naming the file and the rates; the state change fails. */
GST_START_TEST (test_model_of_another_rate)
{
  g_autofree char *dir = g_dir_make_tmp ("morok-encoder-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "gigaam-48k.safetensors", NULL);
  fixture_write_gigaam (path, edit_sample_rate_48k, 0);
  assert_fails_to_start ("morokencoder", path,
                         "gigaam-48k.safetensors: 'preprocessor.sample_rate' is 48000 Hz, "
                         "the audio is 16000 Hz");
  g_unlink (path);
  g_rmdir (dir);
}
GST_END_TEST;

/* 20 cycles NULL <-> PLAYING, each preparing the model, leave nothing behind. */
GST_START_TEST (test_state_cycles)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("audiotestsrc num-buffers=8 samplesperbuffer=1600 ! "
                                           "audio/x-raw,rate=16000,channels=1 ! morokencoder "
                                           "model=%s max-duration=2 ! fakesink",
                                           model);
  assert_cycles_leak_nothing (desc, 20);
}
GST_END_TEST;

/* morokencoder on the tiny model with @props, started. */
static GstHarness *
encoder_harness (const char *props)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("morokencoder model=%s %s", model, props);
  GstHarness *h = chain_harness (desc);
  gst_harness_play (h);
  return h;
}

/* The tensor of 1.5 s of speech (one utterance, cut by EOS) through @h. */
static GBytes *
encode_utterance (GstHarness *h, const gint16 *pcm)
{
  push_pcm (h, pcm, 8000, 24000, 1600);
  gst_harness_push_event (h, gst_event_new_eos ());
  GstBuffer *out = gst_harness_try_pull (h);
  fail_unless (out != NULL);
  GstMapInfo map;
  gst_buffer_map (out, &map, GST_MAP_READ);
  GBytes *b = g_bytes_new (map.data, map.size);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  return b;
}

/* Elements of one model, plan, bounds and options share one prepared
 * program: the second prepares nothing and computes exactly what the first
 * does; another plan (output) or bound (max-batch) is a program of its own;
 * the last element to stop frees it. */
GST_START_TEST (test_shared_program)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  guint64 before = morok_jit_registry_prepare_count ();
  GstHarness *a = encoder_harness ("output=log-probs");
  fail_unless_equals_int (morok_jit_registry_prepare_count () - before, 1);
  GstHarness *b = encoder_harness ("output=log-probs");
  fail_unless_equals_int (morok_jit_registry_prepare_count () - before, 1);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 1);
  GstHarness *c = encoder_harness ("output=log-probs max-batch=2");
  GstHarness *d = encoder_harness ("output=encoder");
  fail_unless_equals_int (morok_jit_registry_prepare_count () - before, 3);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 3);

  g_autoptr (GBytes) out_a = encode_utterance (a, pcm);
  g_autoptr (GBytes) out_b = encode_utterance (b, pcm);
  g_autoptr (GBytes) batched = encode_utterance (c, pcm);
  g_autoptr (GBytes) encoded = encode_utterance (d, pcm);
  fail_unless (g_bytes_equal (out_a, out_b), "the second element computed another result");
  /* the same numbers from another program of the same plan, within f32's
   * tolerance: the comparison can tell programs apart, and they agree */
  fail_unless_equals_int (g_bytes_get_size (batched), g_bytes_get_size (out_a));
  const float *x = g_bytes_get_data (out_a, NULL), *y = g_bytes_get_data (batched, NULL);
  for (gsize i = 32; i < g_bytes_get_size (out_a) / 4; i++)
    fail_unless (fabsf (x[i] - y[i]) <= 1e-4f * MAX (1.0f, fabsf (x[i])), "%zu: %g, %g", i, x[i],
                 y[i]);
  fail_if (g_bytes_get_size (encoded) == g_bytes_get_size (out_a));
  gst_harness_teardown (a);
  gst_harness_teardown (c);
  gst_harness_teardown (d);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 1);
  gst_harness_teardown (b);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 0);
}
GST_END_TEST;

/* Four threads start and stop five pipelines each, at once: every run
 * reaches EOS, the registry prepares at least once and at most once a run,
 * and holds nothing once all have stopped. */
GST_START_TEST (test_parallel_start_stop)
{
  g_autofree char *model = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("audiotestsrc num-buffers=8 samplesperbuffer=1600 ! "
                                           "audio/x-raw,rate=16000,channels=1 ! morokencoder "
                                           "model=%s max-duration=2 ! fakesink",
                                           model);
  guint64 prepares = run_parallel_cycles (desc, 4, 5);
  fail_unless (prepares >= 1 && prepares <= 20, "%" G_GUINT64_FORMAT, prepares);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 0);
}
GST_END_TEST;

static Suite *
morokencoder_suite (void)
{
  Suite *s = suite_create ("morokencoder");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 180);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_one_tensor_per_segment);
  tcase_add_test (tc, test_max_batch);
  tcase_add_test (tc, test_precision_f16);
  tcase_add_test (tc, test_precision_bf16);
  tcase_add_test (tc, test_precision_bf16x3);
  tcase_add_test (tc, test_precision_unsupported);
  tcase_add_test (tc, test_max_duration_cuts);
  tcase_add_test (tc, test_non_finite_samples);
  tcase_add_test (tc, test_gap_before_first_output);
  tcase_add_test (tc, test_gaps_after_waiting_utterances);
  tcase_add_test (tc, test_times_without_pts);
  tcase_add_test (tc, test_tee_prerolls);
  tcase_add_test (tc, test_ready_only_properties);
  tcase_add_test (tc, test_bad_model);
  tcase_add_test (tc, test_broken_compiler);
  tcase_add_test (tc, test_model_of_another_rate);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_shared_program);
  tcase_add_test (tc, test_parallel_start_stop);
  return s;
}

GST_CHECK_MAIN (morokencoder);
