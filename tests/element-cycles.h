/* SPDX-License-Identifier: MIT */
/* Element tests: state cycles that must leave nothing alive (leaks tracer). */
#pragma once

#include <gst/gst.h>

/* Runs @pipeline (gst-launch syntax) through NULL -> PLAYING -> NULL once,
 * then @cycles more times, and fails the test if an object made during those
 * cycles is still alive. Needs GST_TRACERS=leaks (tests/meson.build). */
void assert_cycles_leak_nothing (const char *pipeline, guint cycles);
