#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks of the GigaAM scripts against the committed fixtures (run by meson
as the `gigaam-reference` test when PyTorch is installed; a few seconds).

usage: check.py [FIXTURES_DIR]

* convert.py turns the same weights into the same file from every upstream
  layout: .ckpt with a plain-dict cfg, .ckpt with an OmegaConf cfg (made by
  omegaconf if installed, else by look-alike classes), a Hugging Face folder with
  pytorch_model.bin or model.safetensors under a `model.` prefix, and a
  checkpoint without the front-end buffers (computed from the config);
* reference.py, run on the committed model and audio, reproduces the
  committed reference outputs (the CTC fixtures, with pad masking: their
  batch equals alone);
* the decoding fixtures (gigaam-asr-expected.json: RNN-T and e2e CTC) convert
  back from a .ckpt and a Hugging Face folder with their tokenizer, bad
  configs (missing tokenizer, unknown head or model class, wrong LSTM depth)
  are refused, and reference.py reproduces their encoder, joint or CTC
  outputs, tokens, frames, texts and word times, a batch equal to alone;
* sentencepiece-decode.json holds reference.py's texts and words, and the
  texts are SentencePiece's own decoding;
* every model hub folder that make-hub-fixtures.py writes (the six upstream
  kinds, which the C loader reads as they are: tests/test-gigaam-folder.c)
  converts to the fixture it was made from, so the converter and the C
  loader read each folder as the same model.
"""

import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import convert  # noqa: E402
import reference  # noqa: E402
import safetensors_lite  # noqa: E402
import sentencepiece_lite  # noqa: E402

make_transcript_fixture = importlib.import_module("make-transcript-fixture")

FAILURES = []


def check(ok, what):
    print("%s - %s" % ("ok" if ok else "not ok", what))
    if not ok:
        FAILURES.append(what)


def upstream_cfg(m):
    """An upstream-style config equivalent to the morok config `m`."""
    p, e = m["preprocessor"], m["encoder"]
    return {
        "preprocessor": {"sample_rate": p["sample_rate"], "features": p["n_mels"],
                         "n_fft": p["n_fft"], "win_length": p["win_length"],
                         "hop_length": p["hop_length"], "center": p["center"]},
        "encoder": {"feat_in": e["feat_in"], "n_layers": e["n_layers"], "d_model": e["d_model"],
                    "n_heads": e["n_heads"], "subsampling": e["subsampling"],
                    "subs_kernel_size": e["subs_kernel_size"], "subsampling_factor": 4,
                    "ff_expansion_factor": e["ff_expansion_factor"],
                    "self_attention_model": "rotary", "pos_emb_max_len": int(e["rope_base"]),
                    "conv_kernel_size": e["conv_kernel_size"],
                    "conv_norm_type": e["conv_norm_type"]},
        "head": upstream_head(m["head"]),
        "decoding": upstream_decoding(m),
        **({"model_name": m["model_name"]} if "model_name" in m else {}),
    }


def upstream_head(h):
    if h["type"] == "ctc":
        return {"feat_in": h["feat_in"], "num_classes": h["num_classes"]}
    return {"_target_": "gigaam.decoder.RNNTHead",
            "decoder": {"pred_hidden": h["pred_hidden"], "pred_rnn_layers": h["pred_rnn_layers"],
                        "num_classes": h["num_classes"]},
            "joint": {"enc_hidden": h["enc_hidden"], "pred_hidden": h["pred_hidden"],
                      "joint_hidden": h["joint_hidden"], "num_classes": h["num_classes"]}}


def upstream_decoding(m):
    """A character vocabulary, or the tokenizer path upstream's loader sets."""
    if m["vocabulary"]["type"] == "char":
        return {"vocabulary": m["vocabulary"]["tokens"]}
    return {"vocabulary": None,
            "model_path": "/root/.cache/gigaam/%s_tokenizer.model" % m["model_name"]}


def fake_omegaconf(cfg):
    """cfg as objects pickled like OmegaConf's (classes in omegaconf.* modules,
    containers keeping `_content`, leaves `_val`), when omegaconf is absent."""
    import types

    def cls(module, name):
        for m in ("omegaconf", module):
            sys.modules.setdefault(m, types.ModuleType(m))
        c = type(name, (), {"__module__": module})
        setattr(sys.modules[module], name, c)
        return c

    meta = cls("omegaconf.base", "ContainerMetadata")
    dict_config = cls("omegaconf.dictconfig", "DictConfig")
    list_config = cls("omegaconf.listconfig", "ListConfig")
    any_node = cls("omegaconf.nodes", "AnyNode")

    def wrap(v, parent=None):
        node = (dict_config if isinstance(v, dict) else
                list_config if isinstance(v, list) else any_node)()
        node.__dict__.update(_metadata=meta(), _parent=parent)
        if isinstance(v, dict):
            node._content = {k: wrap(x, node) for k, x in v.items()}
        elif isinstance(v, list):
            node._content = [wrap(x, node) for x in v]
        else:
            node._val = v
        return node

    return wrap(cfg)


def same_file(a, b):
    ta, ma = safetensors_lite.read(a)
    tb, mb = safetensors_lite.read(b)
    if list(ta) != list(tb) or ma["morok.config"] != mb["morok.config"]:
        return False
    return all(ta[k].dtype == tb[k].dtype and torch.equal(ta[k], tb[k]) for k in ta)


def check_converter(fixture, tmp):
    state, meta = safetensors_lite.read(fixture)
    mcfg = json.loads(meta["morok.config"])
    dtype = meta["morok.dtype"]
    cfg = upstream_cfg(mcfg)
    state = {k: v.float() if v.is_floating_point() else v for k, v in state.items()}
    name = os.path.basename(fixture)
    out = os.path.join(tmp, "out.safetensors")

    ckpt = os.path.join(tmp, "plain.ckpt")
    torch.save({"cfg": cfg, "state_dict": state}, ckpt)
    convert.convert(ckpt, out, dtype)
    check(same_file(out, fixture), "%s: .ckpt with a plain cfg converts to the fixture" % name)

    try:
        from omegaconf import OmegaConf
        torch.save({"cfg": OmegaConf.create(cfg), "state_dict": state}, ckpt)
        how = "OmegaConf"
    except ImportError:
        torch.save({"cfg": fake_omegaconf(cfg), "state_dict": state}, ckpt)
        for m in [m for m in sys.modules if m.split(".")[0] == "omegaconf"]:
            del sys.modules[m]  # the converter must do without them
        how = "OmegaConf-like (omegaconf not installed)"
    convert.convert(ckpt, out, dtype)
    check(same_file(out, fixture), "%s: .ckpt with an %s cfg converts" % (name, how))

    for weights in ("pytorch_model.bin", "model.safetensors"):
        folder = os.path.join(tmp, "hf-" + weights)
        os.makedirs(folder)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump({"model_type": "gigaam", "cfg": cfg}, f)
        prefixed = {"model." + k: v for k, v in state.items()}
        if weights.endswith(".bin"):
            torch.save(prefixed, os.path.join(folder, weights))
        else:
            safetensors_lite.write(os.path.join(folder, weights), prefixed)
        convert.convert(folder, out, dtype)
        check(same_file(out, fixture), "%s: HF folder with %s converts" % (name, weights))

    bare = {k: v for k, v in state.items() if not k.startswith("preprocessor.")}
    torch.save({"cfg": cfg, "state_dict": bare}, ckpt)
    convert.convert(ckpt, out, dtype)
    check(same_file(out, fixture), "%s: missing front-end buffers are recomputed" % name)

    wrong = dict(cfg, encoder=dict(cfg["encoder"], d_model=128))
    torch.save({"cfg": wrong, "state_dict": state}, ckpt)
    try:
        convert.convert(ckpt, out, dtype)
        check(False, "%s: a config contradicting the weights is refused" % name)
    except convert.ConvertError as e:
        check("d_model" in str(e), "%s: a config contradicting the weights is refused" % name)


def check_sentencepiece(tmp):
    """A hand-encoded ModelProto: pieces (field 1: piece, score, type) around a
    trainer_spec (2) naming a negative pad id; then sentencepiece_lite's own
    writer, read back and (where the sentencepiece package imports) decoded
    by SentencePiece itself as reference.detokenize decodes it."""
    def ld(field, payload):  # length-delimited field
        return bytes([field << 3 | 2, len(payload)]) + payload

    def piece(text, score, kind=b""):
        return ld(1, ld(1, text.encode()) + b"\x15" + score + kind)

    pad_minus_1 = b"\xd8\x02" + b"\xff" * 9 + b"\x01"  # field 43, varint -1
    proto = piece("<unk>", b"\0\0\0\0", b"\x18\x02") + ld(2, ld(1, b"x.txt") + pad_minus_1) + \
        piece("\u2581при", b"\0\0\x80\xbf") + piece("вет", b"\0\0\0\xc0", b"\x18\x01")
    path = os.path.join(tmp, "sp.model")
    with open(path, "wb") as f:
        f.write(proto)
    sp = sentencepiece_lite.read(path)
    check(sp["pieces"] == ["<unk>", "\u2581при", "вет"] and sp["scores"] == [0.0, -1.0, -2.0]
          and sp["types"] == ["unknown", "normal", "normal"] and sp["pad_id"] == -1
          and sp["unk_id"] == 0, "SentencePiece pieces, types and ids are read")

    pieces = ["<unk>", "<s>", "</s>", "\u2581", "\u2581при", "вет", "\u2581Мир", ",", "."]
    types = ["unknown", "control", "control"] + ["normal"] * 6
    sentencepiece_lite.write(path, pieces, types, bos_id=1, eos_id=2)
    sp = sentencepiece_lite.read(path)
    check(sp["pieces"] == pieces and sp["types"] == types and sp["bos_id"] == 1,
          "sentencepiece_lite reads back what it writes")
    vocab = dict({k: sp[k] for k in sentencepiece_lite.DEFAULTS}, type="sentencepiece",
                 tokens=pieces, piece_types=types)
    cases = [[4, 5, 7, 6, 8], [3, 4, 5], [1, 3, 3, 4], [0, 4], [4, 0, 5], [5, 6, 3], [3], [1, 2]]
    texts = [reference.detokenize(ids, vocab) for ids in cases]
    check(texts[0] == "привет, Мир." and texts[1] == "привет" and texts[3] == " \u2047  при",
          "SentencePiece pieces detokenize (%r)" % texts[:4])
    try:
        import sentencepiece
    except ImportError:
        print("ok - # SKIP sentencepiece not installed: decoding not compared with it")
        return
    proc = sentencepiece.SentencePieceProcessor()
    proc.load(path)
    want = [proc.decode(ids) for ids in cases]
    check(texts == want, "reference.detokenize decodes as SentencePiece (%r)" % want)


def check_transcript_fixture(path):
    """sentencepiece-decode.json (make-transcript-fixture.py): its texts and
    words are reference.py's, and its texts SentencePiece's own."""
    with open(path, encoding="utf-8") as f:
        fx = json.load(f)
    vocab, cases = fx["vocabulary"], fx["cases"]
    ok = all(reference.detokenize(c["ids"], vocab) == c["text"]
             and [[w["word"], w["start_frame"], w["end_frame"]] for w in reference.word_times(
                 c["ids"], list(range(len(c["ids"]))), vocab, fx["frame_seconds"])] == c["words"]
             for c in cases)
    check(ok, "%s: texts and words are reference.py's" % os.path.basename(path))
    want = make_transcript_fixture.sentencepiece_texts(vocab, [c["ids"] for c in cases])
    if want is None:
        print("ok - # SKIP sentencepiece not installed: fixture texts not compared with it")
        return
    check(want == [c["text"] for c in cases],
          "%s: texts are SentencePiece's (%d cases)" % (os.path.basename(path), len(cases)))


def check_reference(model_path, ref_path, audio_path):
    """The CTC fixtures, made with pad masking (each batch item as if alone)."""
    model, cfg = reference.load_model(model_path, torch.float64)
    audio, _ = safetensors_lite.read(audio_path)
    ref, _ = safetensors_lite.read(ref_path)
    waves = [audio["audio.%d" % i].double() for i in range(3)]
    batch, lengths = reference.pad_batch(waves)
    with torch.no_grad():
        out = model(batch, lengths)
    name = os.path.basename(ref_path)
    for key in ("features", "encoded", "log_probs"):
        diff = (out[key].float() - ref["batch." + key]).abs().max().item()
        check(diff < 1e-5, "%s: batch.%s reproduced (max diff %.1e)" % (name, key, diff))
    check(torch.equal(out["encoded_lengths"], ref["batch.encoded_lengths"]),
          "%s: batch.encoded_lengths reproduced" % name)
    ids = [hyp["ids"] for hyp in model.decode(out)]
    check(all(ids[i] == ref["batch.tokens.%d" % i].tolist() for i in range(3)),
          "%s: greedy tokens reproduced" % name)


def read_model(path):
    """(state as f32, morok config, storage dtype) of a model fixture."""
    state, meta = safetensors_lite.read(path)
    state = {k: v.float() if v.is_floating_point() else v for k, v in state.items()}
    return state, json.loads(meta["morok.config"]), meta["morok.dtype"]


def read_waves(audio_path):
    audio, _ = safetensors_lite.read(audio_path)
    return [audio["audio.%d" % i].double() for i in range(3)]


def check_asr_converter(fixture, tokenizer, tmp):
    """The decoding fixtures convert back from upstream's layouts, their
    tokenizer found or given, and bad configs are refused by name."""
    state, mcfg, dtype = read_model(fixture)
    cfg = upstream_cfg(mcfg)
    name = os.path.basename(fixture)
    sp = mcfg["vocabulary"]["type"] == "sentencepiece"
    out = os.path.join(tmp, "out.safetensors")
    ckpt = os.path.join(tmp, mcfg["model_name"] + ".ckpt")
    torch.save({"cfg": cfg, "state_dict": state}, ckpt)
    convert.convert(ckpt, out, dtype, tokenizer if sp else None)
    check(same_file(out, fixture), "%s: .ckpt converts to the fixture" % name)

    def refused(what, want, src=ckpt, tok=None, bad_cfg=None):
        if bad_cfg is not None:
            torch.save({"cfg": bad_cfg, "state_dict": state}, src)
        try:
            convert.convert(src, out, dtype, tok)
            check(False, "%s: %s is refused" % (name, what))
        except convert.ConvertError as e:
            check(want in str(e), "%s: %s is refused (%s)" % (name, what, e))

    if sp:
        refused("a missing tokenizer", "%s_tokenizer.model" % mcfg["model_name"])
        shutil.copy(tokenizer, os.path.join(tmp, "%s_tokenizer.model" % mcfg["model_name"]))
        convert.convert(ckpt, out, dtype)
        check(same_file(out, fixture), "%s: the tokenizer beside the .ckpt is found" % name)
        folder = os.path.join(tmp, "hf")
        os.makedirs(folder)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump({"model_type": "gigaam", "cfg": cfg}, f)
        safetensors_lite.write(os.path.join(folder, "model.safetensors"),
                               {"model." + k: v for k, v in state.items()})
        shutil.copy(tokenizer, os.path.join(folder, "tokenizer.model"))
        convert.convert(folder, out, dtype)
        check(same_file(out, fixture), "%s: HF folder with tokenizer.model converts" % name)
    else:
        refused("--tokenizer for a character vocabulary", "character vocabulary", tok=tokenizer)
    head = cfg["head"]
    refused("an unknown head class", "unsupported head class",
            bad_cfg=dict(cfg, head=dict(head, _target_="gigaam.decoder.EmoHead")))
    refused("an unknown model class", "unsupported model_class",
            bad_cfg=dict(cfg, model_class="ssl"))
    if mcfg["head"]["type"] == "rnnt":
        layers = head["decoder"]["pred_rnn_layers"]
        refused("a wrong pred_rnn_layers", "pred_rnn_layers",
                bad_cfg=dict(cfg, head=dict(head, decoder=dict(head["decoder"],
                                                               pred_rnn_layers=layers + 1))))
        refused("a CTC model_class on an RNN-T head", "disagrees",
                bad_cfg=dict(cfg, model_class="ctc"))


def check_asr_reference(model_path, ref_path, audio_path, want):
    """reference.py reproduces the decoding fixture: each utterance alone
    (encoder output, joint or CTC log-probs, tokens, frames, text, words) and
    the batch, which equals the utterances alone."""
    model, cfg = reference.load_model(model_path, torch.float64)
    waves = read_waves(audio_path)
    ref, _ = safetensors_lite.read(ref_path)
    name = os.path.basename(ref_path)
    worst = {}
    alone = []
    for i, (w, u) in enumerate(zip(waves, want["utterances"])):
        with torch.no_grad():
            out = model(w[None], torch.tensor([w.numel()]))
            hyp = model.decode(out)[0]
        alone.append(out["encoded"][0])
        p = "alone.%d." % i
        pairs = [("encoded", out["encoded"])]
        pairs += [("joint", hyp["joint"]), ("predictor", hyp["predictor"])] if "joint" in hyp \
            else [("log_probs", out["log_probs"])]
        for key, got in pairs:
            diff = (got.float() - ref[p + key]).abs().max().item()
            worst[key] = max(worst.get(key, 0.0), diff)
        words = reference.word_times(hyp["ids"], hyp["frames"], cfg["vocabulary"],
                                     reference.frame_seconds(cfg))
        check(hyp["ids"] == ref[p + "tokens"].tolist() == u["tokens"]
              and hyp["frames"] == ref[p + "token_frames"].tolist() == u["token_frames"]
              and reference.detokenize(hyp["ids"], cfg["vocabulary"]) == u["text"]
              and words == u["words"],
              "%s: audio.%d tokens, frames, text and words reproduced (%r)" % (name, i, u["text"]))
    for key, diff in sorted(worst.items()):
        check(diff < 1e-5, "%s: alone.*.%s reproduced (max diff %.1e)" % (name, key, diff))
    with torch.no_grad():
        out = model(*reference.pad_batch(waves))
        hyps = model.decode(out)
    diff = max((out["encoded"][i, :, :e.shape[1]] - e).abs().max().item()
               for i, e in enumerate(alone))
    check(diff < 1e-5, "%s: batched encoder output equals each alone (max diff %.1e)"
          % (name, diff))
    check(all(h["ids"] == u["tokens"] and h["frames"] == u["token_frames"]
              for h, u in zip(hyps, want["utterances"])),
          "%s: the batch decodes as each utterance alone" % name)


def check_ctc_masked(model_path, audio_path):
    """With pad masking the CTC fixtures' batch equals its items alone too
    (v2 included: each row's front-end reflects at its own end)."""
    model, _ = reference.load_model(model_path, torch.float64)
    waves = read_waves(audio_path)
    with torch.no_grad():
        out = model(*reference.pad_batch(waves))
        diff = 0.0
        for i, w in enumerate(waves):
            one = model(w[None], torch.tensor([w.numel()]))["encoded"][0]
            diff = max(diff, (out["encoded"][i, :, :one.shape[1]] - one).abs().max().item())
    check(diff < 1e-5, "%s: with pad masking a batch equals its items alone (max diff %.1e)"
          % (os.path.basename(model_path), diff))


def check_hub_folders(fixtures, tmp):
    hub = os.path.join(tmp, "hub")
    script = os.path.join(HERE, "make-hub-fixtures.py")
    spec = importlib.util.spec_from_file_location("make_hub_fixtures", script)
    make_hub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_hub)
    for kind, (fixture, *_rest) in make_hub.KINDS.items():
        make_hub.make_kind(fixtures, hub, kind)
        source = os.path.join(fixtures, fixture)
        dtype = safetensors_lite.read(source)[1]["morok.dtype"]
        out = os.path.join(tmp, kind + ".safetensors")
        convert.convert(os.path.join(hub, kind), out, dtype)
        check(same_file(out, source), "convert.py makes %s of the hub folder %s" % (fixture, kind))


def main(argv):
    fixtures = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "..", "tests", "fixtures")
    torch.set_num_threads(1)
    audio = os.path.join(fixtures, "gigaam-audio.safetensors")
    with tempfile.TemporaryDirectory() as tmp:
        check_sentencepiece(tmp)
    check_transcript_fixture(os.path.join(fixtures, "sentencepiece-decode.json"))
    for version in ("v3", "v2"):
        model = os.path.join(fixtures, "gigaam-%s-tiny.safetensors" % version)
        with tempfile.TemporaryDirectory() as tmp:
            check_converter(model, tmp)
        check_reference(model, os.path.join(fixtures, "gigaam-%s-tiny-ref.safetensors" % version),
                        audio)
        check_ctc_masked(model, audio)
    with tempfile.TemporaryDirectory() as tmp:
        check_hub_folders(fixtures, tmp)
    with open(os.path.join(fixtures, "gigaam-asr-expected.json"), encoding="utf-8") as f:
        expected = json.load(f)
    tokenizer = os.path.join(fixtures, expected.pop("tokenizer"))
    for name, want in expected.items():
        model = os.path.join(fixtures, want["model"])
        with tempfile.TemporaryDirectory() as tmp:
            check_asr_converter(model, tokenizer, tmp)
        check_asr_reference(model, os.path.join(fixtures, want["reference"]), audio, want)
    print("all checks passed" if not FAILURES else "%d checks failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
