#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Live transcription's accuracy on recordings, without waiting for them.

usage: bench/live-wer.py [--props "NAME=VALUE ..."] MODEL WAV...

Each WAV (with make-digits-audio.py's JSON of spoken words beside it) goes
through

  filesrc ! wavparse ! audioconvert ! audioresample !
    morokvad remove-silence=true ! moroktranscriber model=MODEL mode=M PROPS ! appsink

twice: mode=offline, and mode=live, where a file is decoded as it grows
with the decodes at fixed samples (the same words on any machine, as fast
as the decodes go; bench/live-latency.sh plays it in real time for the
delays). Prints per file and in all the WER of the committed words
against the spoken ones, for both:

  RESULT live-wer file=F words=N offline_wer=0.025 live_wer=0.041

PROPS are set on both runs. The element chooses `window` and `interval`
from a decode it times at the start, so on a busy machine they change:
set them (and MOROK_THREADS=1) for figures that do not depend on the load.
Needs PyGObject (Debian: python3-gi) and the build's plugin (build/plugin).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("GST_PLUGIN_PATH", os.path.join(HERE, "..", "build", "plugin"))
os.environ.setdefault("GST_REGISTRY", os.path.join(HERE, "..", "build", "bench",
                                                   "gst-registry-live-wer.bin"))

sys.path.insert(0, os.path.join(HERE, "..", "scripts", "gigaam"))
import gi  # noqa: E402

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402
from word_errors import edit_distance  # noqa: E402


def words_of(model, wav, mode, props):
    """The text buffers' words of one run."""
    pipeline = Gst.parse_launch(
        "filesrc location=%s ! wavparse ! audioconvert ! audioresample ! "
        "morokvad remove-silence=true ! moroktranscriber model=%s mode=%s %s ! "
        "appsink name=sink sync=false" % (wav, model, mode, props))
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    words = []
    bus = pipeline.get_bus()
    while True:
        # an error before the end (a missing model) must not wait forever
        sample = sink.emit("try-pull-sample", Gst.SECOND)
        if sample is None:
            if sink.get_property("eos"):
                break
            error = bus.pop_filtered(Gst.MessageType.ERROR)
            if error:
                pipeline.set_state(Gst.State.NULL)
                raise SystemExit("live-wer: %s: %s" % (wav, error.parse_error()[0].message))
            continue
        buf = sample.get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        words.append(bytes(info.data).decode("utf-8"))
        buf.unmap(info)
    error = bus.pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if error:
        raise SystemExit("live-wer: %s: %s" % (wav, error.parse_error()[0].message))
    return words


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--props", default="", help="moroktranscriber properties, NAME=VALUE ...")
    ap.add_argument("model")
    ap.add_argument("wav", nargs="+")
    args = ap.parse_args()
    Gst.init(None)
    total = {"words": 0, "offline": 0, "live": 0}
    for wav in args.wav:
        with open(os.path.splitext(wav)[0] + ".json") as f:
            spoken = [w["word"] for w in json.load(f)["words"]]
        offline = words_of(args.model, wav, "offline", args.props)
        live = words_of(args.model, wav, "live", args.props)
        e_off, e_live = edit_distance(spoken, offline), edit_distance(spoken, live)
        print("RESULT live-wer file=%s words=%d offline_wer=%.3f live_wer=%.3f"
              % (os.path.basename(wav), len(spoken), e_off / len(spoken), e_live / len(spoken)))
        total["words"] += len(spoken)
        total["offline"] += e_off
        total["live"] += e_live
    if len(args.wav) > 1:
        n = total["words"]
        print("RESULT live-wer file=all words=%d offline_wer=%.3f live_wer=%.3f"
              % (n, total["offline"] / n, total["live"] / n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
