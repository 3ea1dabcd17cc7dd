#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Live captions with moroktranscriber, read from the bus with PyGObject.

usage: morok-captions.py MODEL [FILE]

    autoaudiosrc ! audioconvert ! audioresample !       (or FILE played in real time)
      morokvad remove-silence=true ! moroktranscriber model=MODEL ! fakesink

Without FILE: the default audio source, until Ctrl-C. With FILE: the
recording, decoded by a second pipeline into an appsink and pushed into an
`appsrc is-live=true` in 20 ms buffers, each when the clock reaches its end,
as a microphone would give it. Each moroktranscriber-interim message rewrites
the caption line (the committed words, then the tentative rest, dim); each
utterance's moroktranscriber message writes its final text on a line of its
own. Output that is not a terminal gets one line per update instead:
`interim COMMITTED [TENTATIVE]` and `final TEXT` (as examples/morok-transcribe
MODEL FILE --live prints them).

From the source tree: GST_PLUGIN_PATH=build/plugin examples/morok-captions.py ...
"""
import os
import shutil
import signal
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, Gst, GstApp  # noqa: E402

CAPS = "audio/x-raw,format=S16LE,rate=16000,channels=1,layout=interleaved"
RATE = 16000
CHUNK = RATE // 50  # samples in a 20 ms buffer


class Captions:
    """Writes the caption line and the final lines."""

    def __init__(self):
        self.tty = os.isatty(sys.stdout.fileno())

    def interim(self, committed, tentative):
        sep = " " if committed and tentative else ""
        if not self.tty:
            print("interim %s%s[%s]" % (committed, sep, tentative), flush=True)
            return
        # only the last columns: a line that wrapped could not be rewritten
        room = shutil.get_terminal_size().columns - 1
        line = committed + sep
        skip = max(0, len(line) + len(tentative) - room)
        shown, rest = line[skip:], tentative[max(0, skip - len(line)):]
        sys.stdout.write("\r\033[K%s\033[2m%s\033[0m" % (shown, rest))
        sys.stdout.flush()

    def final(self, text):
        print(("\r\033[K%s" if self.tty else "final %s") % text, flush=True)


def pull(decoder, pipeline, out):
    """The decoder's next samples; None at its end, or at its error, which
    is then posted on the live pipeline (and ends it)."""
    while True:
        sample = out.emit("try-pull-sample", 100 * Gst.MSECOND)
        if sample or out.props.eos:
            return sample
        error = decoder.get_bus().pop_filtered(Gst.MessageType.ERROR)
        if error:
            pipeline.post_message(error)
            return None


def play(decoder, pipeline, src):
    """Pushes the decoder's samples into src in real time (a thread)."""
    out = decoder.get_by_name("out")
    clock, base = pipeline.get_clock(), pipeline.get_base_time()
    t0, samples = clock.get_time() - base, 0
    flow = Gst.FlowReturn.OK
    while flow == Gst.FlowReturn.OK:
        sample = pull(decoder, pipeline, out)
        if sample is None:
            break
        buf = sample.get_buffer()
        size = buf.get_size()
        for at in range(0, size, 2 * CHUNK):
            n = min(2 * CHUNK, size - at) // 2
            chunk = buf.copy_region(Gst.BufferCopyFlags.MEMORY, at, 2 * n)
            chunk.pts = t0 + samples * Gst.SECOND // RATE
            samples += n
            end = t0 + samples * Gst.SECOND // RATE
            chunk.duration = end - chunk.pts
            wait = base + end - clock.get_time()
            if wait > 0:
                time.sleep(wait / Gst.SECOND)
            flow = src.emit("push-buffer", chunk)
            if flow != Gst.FlowReturn.OK:
                break
    src.emit("end-of-stream")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: morok-captions.py MODEL [FILE]")
    Gst.init(None)
    path = sys.argv[2] if len(sys.argv) == 3 else None
    source = "appsrc name=src is-live=true format=time caps=" + CAPS if path else "autoaudiosrc"
    try:
        pipeline = Gst.parse_launch(
            source + " ! audioconvert ! audioresample ! morokvad remove-silence=true ! "
            "moroktranscriber name=asr ! fakesink")
        decoder = path and Gst.parse_launch(
            "filesrc name=file ! decodebin ! audioconvert ! audioresample ! " + CAPS
            + " ! appsink name=out sync=false max-buffers=8")
    except GLib.Error as e:
        sys.exit(e.message)  # an element missing: the plugin not on GST_PLUGIN_PATH
    # paths set as properties, not in the description: no quoting
    pipeline.get_by_name("asr").set_property("model", sys.argv[1])
    if decoder:
        decoder.get_by_name("file").set_property("location", path)
        decoder.set_state(Gst.State.PLAYING)

    captions, loop, status = Captions(), GLib.MainLoop(), [0]

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            print("error: %s\n%s" % (err.message, debug or ""), file=sys.stderr)
            status[0] = 1
            loop.quit()
        elif msg.type == Gst.MessageType.EOS:
            loop.quit()
        elif msg.type == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if s.has_name("moroktranscriber-interim"):
                captions.interim(s.get_string("committed") or "", s.get_string("tentative") or "")
            elif s.has_name("moroktranscriber"):
                captions.final(s.get_string("text") or "")

    bus = pipeline.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    # Ctrl-C: EOS, so that the last utterance is transcribed before the end
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT,
                         lambda: pipeline.send_event(Gst.Event.new_eos()) and False)
    player = None
    if pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
        status[0] = 1  # the error message on the bus says why
    elif decoder:
        player = threading.Thread(target=play, daemon=True,
                                  args=(decoder, pipeline, pipeline.get_by_name("src")))
        player.start()
    loop.run()
    # the decoder first: a player waiting for its samples then sees none
    if decoder:
        decoder.set_state(Gst.State.NULL)
    pipeline.set_state(Gst.State.NULL)
    if player:
        player.join()
    return status[0]


if __name__ == "__main__":
    sys.exit(main())
