/* SPDX-License-Identifier: MIT */
/* The thread that decodes utterances while they grow (live mode), so that
 * the streaming thread only copies audio in and never waits for a decode.
 *
 * The streaming thread appends samples to the open utterance and ends it
 * (at a GAP, DISCONT, EOS or max_samples); the worker calls decode () with
 * the samples so far each time @interval more have come, and once more,
 * final, when the utterance has ended. Up to MOROK_LIVE_SLOTS utterances
 * are held (the one being decoded and those after it): when the worker
 * falls that far behind, append waits for it — memory stays bounded and no
 * audio is dropped. decode () pushes its output itself, on the worker
 * thread; gap () is called when the worker is idle and the streaming
 * thread said downstream may learn that nothing comes before a time.
 *
 *   worker = morok_live_worker_new (16000, max_samples, interval, FALSE, &callbacks, self);
 *   // chain (): for each run of samples
 *   ret = morok_live_worker_append (worker, samples, n, pts_of_samples_0);
 *   // GAP: morok_live_worker_end (worker); morok_live_worker_gap (worker, gap_end);
 *   // EOS: morok_live_worker_end (worker); morok_live_worker_drain (worker);
 *   morok_live_worker_free (worker);   // stops the thread
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define MOROK_LIVE_SLOTS 3

typedef struct
{
  const float *samples; /* the utterance's audio; [0, n) is stable */
  GstClockTime pts;     /* its first sample's time */
  guint64 serial;       /* counts utterances: a new one, a new number */
} MorokLiveUtterance;

typedef struct
{
  /* Decodes the first @n samples of @utt (@final: all of it). */
  GstFlowReturn (*decode) (gpointer user, const MorokLiveUtterance *utt, gint64 n, gboolean final);
  /* Downstream may learn that no output comes before @until. */
  void (*gap) (gpointer user, GstClockTime until);
} MorokLiveCallbacks;

typedef struct _MorokLiveWorker MorokLiveWorker;

/* Utterances of up to @max_samples at @rate Hz, decoded every @interval
 * samples; starts the thread. @paced: append waits for each decode, so
 * that decodes come exactly every @interval samples (a source that is not
 * live, which can wait). */
MorokLiveWorker *morok_live_worker_new (guint rate, gint64 max_samples, gint64 interval,
                                        gboolean paced, const MorokLiveCallbacks *callbacks,
                                        gpointer user);
/* Stops the thread (after the decode in progress) and frees. */
void morok_live_worker_free (MorokLiveWorker *worker);

/* Appends @n samples, the first at @pts (the time of every sample comes
 * from the caller's clock; a new utterance takes its first's), ending the utterance at max_samples
 * and going on in the next. Waits only while every slot is taken (or, paced, until the decodes have
 * caught up). Returns the worker's last flow (FLUSHING once flushing started). */
GstFlowReturn morok_live_worker_append (MorokLiveWorker *worker, const float *samples, gsize n,
                                        GstClockTime pts);
/* Ends the open utterance (nothing when none is open). */
void morok_live_worker_end (MorokLiveWorker *worker);
/* Once every held utterance is done, gap () @until. */
void morok_live_worker_gap (MorokLiveWorker *worker, GstClockTime until);
/* Waits until every held utterance has had its final decode and the worker
 * is idle (EOS, a new segment). */
void morok_live_worker_drain (MorokLiveWorker *worker);
/* FLUSH_START: the decode in progress ends its work, waiting appends
 * return FLUSHING. FLUSH_STOP (@flushing FALSE): the held audio is dropped
 * and the worker starts over. */
void morok_live_worker_set_flushing (MorokLiveWorker *worker, gboolean flushing);

G_END_DECLS
