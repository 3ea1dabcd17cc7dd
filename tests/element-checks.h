/* SPDX-License-Identifier: MIT */
/* Checks shared by the element tests. */
#pragma once

#include <gst/gst.h>
#include <gst/check/gstharness.h>

/* Runs @pipeline (gst-launch syntax) through NULL -> PLAYING -> NULL once,
 * then @cycles more times, and fails the test if an object made during those
 * cycles is still alive. Needs GST_TRACERS=leaks (tests/meson.build). */
void assert_cycles_leak_nothing (const char *pipeline, guint cycles);

/* @threads threads each run @pipeline (made anew each time) @cycles times
 * through NULL -> PLAYING -> EOS -> NULL, all at once; fails the test if a
 * run does not reach EOS within 60 s. Returns the prepares the JIT registry
 * made meanwhile (morok_jit_registry_prepare_count). */
guint64 run_parallel_cycles (const char *pipeline, guint threads, guint cycles);

/* Creates @factory with property "model" = @model (unset when NULL), asserts
 * that NULL -> PAUSED fails with an error message on the bus whose text or
 * debug text contains @expect, and cleans up. */
void assert_fails_to_start (const char *factory, const char *model, const char *expect);
/* The same with property @prop set from the string @value first. */
void assert_fails_to_start_with (const char *factory, const char *model, const char *prop,
                                 const char *value, const char *expect);
/* With MOROK_CC set to each of tests/broken-compilers.h's compilers (and
 * the cache off), NULL -> PAUSED fails with an error naming the compiler and
 * carrying what it printed; no SIGPIPE ends the process. */
void assert_broken_compilers_fail_to_start (const char *factory, const char *model);
/* Pops the WARNING messages on @bus and returns how many had details named
 * "morok/non-finite-input" (plugin/non-finite.h); the first one's
 * `samples`, `pts` and `pad` (transfer full, NULL when absent) into
 * *@samples, *@pts and *@pad (each may be NULL). */
guint pop_non_finite_warnings (GstBus *bus, guint64 *samples, GstClockTime *pts, char **pad);
/* TRUE if the harness answers the LATENCY query (gst_harness_query_latency
 * gives GST_CLOCK_TIME_NONE when it does not) with a minimum of @min or more. */
gboolean latency_at_least (GstHarness *h, GstClockTime min);
/* Sets @prop of @element from the string @value and returns (transfer full)
 * the name of the debug category in which the element warned that it
 * ignored the change, or NULL when it logged no such warning. */
char *set_property_warning_category (GstElement *element, const char *prop, const char *value);
/* Records what leaves @element's src pad into @timeline (which must outlive
 * the element), space-separated, in order: "G<ts>+<duration>" for a GAP
 * event and "B<pts>+<duration>" for a buffer, in ms, and "F" for a
 * rstranscribe/final-transcript event. */
void timeline_record (GstElement *element, GString *timeline);
/* Parses @desc (gst-launch syntax, with an element named "el") and puts
 * @probe (@data) on the buffers through el's pad @pad_name: returns the
 * pipeline, and el into *@el (both transfer full). */
GstElement *parse_with_probe (const char *desc, const char *pad_name, GstPadProbeCallback probe,
                              gpointer data, GstElement **el);
/* Runs filesrc @wav (a fixture) ! wavparse ! audioconvert ! tee, one branch
 * "queue ! @branch ! fakesink", the other "queue ! fakesink", both queues
 * at their defaults: asserts that it prerolls and reaches EOS without error
 * (waits bounded) and returns the buffers that left the element named "el"
 * in @branch. */
guint assert_tee_prerolls (const char *wav, const char *branch);
