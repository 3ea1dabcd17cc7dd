/* SPDX-License-Identifier: MIT */
/* libmorok-1.0: the one header a program includes.
 *
 * Build a program against the installed library with pkg-config:
 *
 *   cc $(pkg-config --cflags morok-1.0) app.c $(pkg-config --libs morok-1.0) -o app
 *
 *   #include <morok.h>
 *
 *   g_autoptr (GError) error = NULL;
 *   g_autoptr (MorokSileroVad) vad = morok_silero_vad_load ("silero_vad_v5.onnx", &error);
 *   if (!vad) g_printerr ("%s\n", error->message);
 *
 * Each area's header opens with an example of its own, listed here in the
 * order of the stages (docs/architecture.md): base/ (element types),
 * kernels/ (ISA, compiler), runtime/ (programs, contexts, plans), tensor/
 * (lazy tensors, symbolic shapes), graph/ (IR, rewrites, schedule),
 * prepare/ (the pipeline, the renderer), jit/ (typed wrappers, recurrent
 * execution), io/ (weight readers), models/ (Silero VAD, GigaAM and their
 * decoders). docs/jit-wrapper.md is the guide. */
#pragma once

#include "base/morok-dtype.h"
#include "kernels/morok-isa.h"
#include "kernels/morok-compiler.h"
#include "runtime/morok-runtime.h"
#include "runtime/morok-program-builder.h"
#include "base/morok-sym.h"
#include "tensor/morok-tensor.h"
#include "graph/morok-graph.h"
#include "graph/morok-pattern.h"
#include "graph/morok-schedule.h"
#include "prepare/morok-prepare.h"
#include "prepare/morok-rules.h"
#include "prepare/morok-renderer.h"
#include "jit/morok-jit.h"
#include "jit/morok-jit-macros.h"
#include "jit/morok-jit-recurrent.h"
#include "jit/morok-jit-registry.h"
#include "io/morok-io.h"
#include "io/onnx-reader.h"
#include "io/safetensors.h"
#include "models/silero-vad.h"
#include "models/silero-vad-jit.h"
#include "models/silero-vad-batch.h"
#include "models/vad-segmenter.h"
#include "models/gigaam.h"
#include "models/gigaam-encoder-jit.h"
#include "models/ctc-decode.h"
#include "models/rnnt-decode.h"
#include "models/transcript.h"
