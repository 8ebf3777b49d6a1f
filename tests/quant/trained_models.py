#!/usr/bin/python3
"""Trained models still do their job after `kiln quantize --mode static`: the same recognized text
from PP-OCRv4's recognizer on text rendered with ImageMagick, the same speech decisions from Silero
VAD v5 on speech made with espeak-ng, as the float models give.

    tests/quant/trained_models.py KILN MODELS_DIR WORK [--models ppocr_rec,silero_vad]

MODELS_DIR holds ppocr_rec.onnx and silero_vad.onnx (scripts/get-models.sh) and ppocr_keys_v1.txt
(the recognizer's dictionary, from the same npm package). Calibration uses other inputs than the
evaluation (other words, another utterance). Prints one line per input and a verdict per model;
exits 1 when a quantized model decides otherwise than the float one, 2 on a setup problem.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import wave

import numpy as np
import onnx
from onnx import numpy_helper

# What the recognizer reads at evaluation, and other words it is calibrated on.
EVAL_TEXTS = ["KILN 2026", "Hello World", "quantize", "ONNX Runtime", "0123456789", "int8 speed"]
CALIB_TEXTS = ["calibration", "Debian 12", "oneDNN", "PaddleOCR", "Silero VAD", "The quick fox",
               "ResNet-50", "zero point", "scale 0.5", "per channel", "AMX tiles", "VNNI"]
EVAL_SPEECH = "The compiler quantizes the model. Then it runs twice as fast."
CALIB_SPEECH = "Speech detection should not change when the weights are eight bits."
SAMPLE_RATE = 16000
CHUNK = 512


def fail_setup(msg):
    print(f"trained_models: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail_setup(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()[-400:]}")
    return r.stdout


def write_set(folder, arrays):
    os.makedirs(folder, exist_ok=True)
    for i, a in enumerate(arrays):
        with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())


def read_outputs(folder):
    outs = []
    i = 0
    while os.path.exists(os.path.join(folder, f"output_{i}.pb")):
        t = onnx.TensorProto()
        with open(os.path.join(folder, f"output_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        outs.append(numpy_helper.to_array(t))
        i += 1
    return outs


def kiln_run(kiln, model, inputs, outputs):
    shutil.rmtree(outputs, ignore_errors=True)
    run([kiln, "run", model, "--inputs", inputs, "--outputs", outputs])
    return read_outputs(outputs)


# ---- PP-OCRv4 recognizer ---------------------------------------------------------------------


def render_text(text, work):
    """The text in black on white, 48 pixels high, as PP-OCR's recognizer reads it: float[1,3,48,W]."""
    png = os.path.join(work, "text.png")
    run(["convert", "-size", "1200x80", "xc:white", "-font", "DejaVu-Sans", "-pointsize", "40",
         "-fill", "black", "-gravity", "west", "-annotate", "+10+0", text, "-trim", "-bordercolor",
         "white", "-border", "10", png])
    ppm = subprocess.run(["convert", png, "-resize", "x48", "-depth", "8", "ppm:-"],
                         capture_output=True, check=True).stdout
    # P6\n<w> <h>\n255\n<rgb bytes>
    parts = ppm.split(b"\n", 3)
    w, h = map(int, parts[1].split())
    rgb = np.frombuffer(parts[3][: w * h * 3], dtype=np.uint8).reshape(h, w, 3)
    x = (rgb.astype(np.float32) / 255.0 - 0.5) / 0.5
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


def ctc_decode(probs, keys):
    """Greedy CTC: the best class per step, repeats merged, blanks (class 0) dropped."""
    best = probs[0].argmax(axis=-1)
    text, last = [], 0
    for c in best:
        if c != last and c != 0:
            text.append(keys[c - 1] if c - 1 < len(keys) else "?")
        last = c
    return "".join(text)


def check_ppocr(kiln, models, work):
    keys_file = os.path.join(models, "ppocr_keys_v1.txt")
    if not os.path.exists(keys_file):
        fail_setup(f"no {keys_file} (scripts/get-models.sh ppocr_rec fetches it)")
    with open(keys_file, encoding="utf-8") as f:
        keys = [line.rstrip("\n") for line in f] + [" "]
    model = os.path.join(models, "ppocr_rec.onnx")
    calib = os.path.join(work, "ppocr_calib")
    for i, t in enumerate(CALIB_TEXTS):
        write_set(os.path.join(calib, f"test_data_set_{i}"), [render_text(t, work)])
    quantized = os.path.join(work, "ppocr_rec_int8.onnx")
    run([kiln, "quantize", model, "-o", quantized, "--mode", "static", "--calibrate", calib,
         "--no-progress", "--latency-runs", "0"])
    same = 0
    for i, t in enumerate(EVAL_TEXTS):
        inputs = os.path.join(work, f"ppocr_eval_{i}")
        write_set(inputs, [render_text(t, work)])
        fp = ctc_decode(kiln_run(kiln, model, inputs, inputs + "_fp32")[0], keys)
        q = ctc_decode(kiln_run(kiln, quantized, inputs, inputs + "_int8")[0], keys)
        same += fp == q
        print(f"  ppocr_rec  rendered {t!r:16} float {fp!r:16} int8 {q!r:16} {'same' if fp == q else 'DIFFERENT'}")
    print(f"ppocr_rec: {same} of {len(EVAL_TEXTS)} texts read the same by the int8 model")
    return same == len(EVAL_TEXTS)


# ---- Silero VAD v5 -----------------------------------------------------------------------------


def speak(text, work):
    """espeak-ng's speech at 16 kHz, with half a second of silence before and after."""
    wav = os.path.join(work, "speech.wav")
    run(["espeak-ng", "-w", wav, "-s", "150", text])
    with wave.open(wav) as w:
        rate = w.getframerate()
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768
    n = int(len(pcm) * SAMPLE_RATE / rate)
    speech = np.interp(np.linspace(0, len(pcm) - 1, n), np.arange(len(pcm)), pcm).astype(np.float32)
    silence = np.zeros(SAMPLE_RATE // 2, dtype=np.float32)
    return np.concatenate([silence, speech, silence])


def vad_probabilities(kiln, model, audio, work, tag, keep_sets=None):
    """The speech probability of each 512-sample chunk, the state carried from chunk to chunk."""
    state = np.zeros((2, 1, 128), dtype=np.float32)
    sr = np.array(SAMPLE_RATE, dtype=np.int64)
    probs = []
    for c in range(len(audio) // CHUNK):
        chunk = audio[c * CHUNK:(c + 1) * CHUNK][None].astype(np.float32)
        inputs = os.path.join(work, f"vad_{tag}_in")
        shutil.rmtree(inputs, ignore_errors=True)
        write_set(inputs, [chunk, state, sr])
        if keep_sets is not None:
            write_set(os.path.join(keep_sets, f"test_data_set_{c}"), [chunk, state, sr])
        out, state = kiln_run(kiln, model, inputs, os.path.join(work, f"vad_{tag}_out"))[:2]
        probs.append(float(out.reshape(-1)[0]))
    return np.array(probs)


def check_silero(kiln, models, work):
    model = os.path.join(models, "silero_vad.onnx")
    calib = os.path.join(work, "vad_calib")
    shutil.rmtree(calib, ignore_errors=True)
    # The calibration sets are the float model's own inputs on another utterance, states included.
    vad_probabilities(kiln, model, speak(CALIB_SPEECH, work), work, "calib", keep_sets=calib)
    quantized = os.path.join(work, "silero_vad_int8.onnx")
    run([kiln, "quantize", model, "-o", quantized, "--mode", "static", "--calibrate", calib,
         "--no-progress", "--latency-runs", "0"])
    audio = speak(EVAL_SPEECH, work)
    fp = vad_probabilities(kiln, model, audio, work, "fp32")
    q = vad_probabilities(kiln, quantized, audio, work, "int8")
    speech_fp, speech_q = fp > 0.5, q > 0.5
    agree = int((speech_fp == speech_q).sum())
    print(f"  silero_vad float speech chunks {''.join('#' if s else '.' for s in speech_fp)}")
    print(f"  silero_vad int8  speech chunks {''.join('#' if s else '.' for s in speech_q)}")
    print(f"silero_vad: {agree} of {len(fp)} chunks decided the same; speech in {int(speech_fp.sum())} "
          f"(float) and {int(speech_q.sum())} (int8); max probability difference {np.abs(fp - q).max():.3f}")
    if not speech_fp.any() or speech_fp.all():
        fail_setup("the float model found no speech/silence contrast: the test input is wrong")
    return agree == len(fp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("--models", dest="which", default="ppocr_rec,silero_vad")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    for tool in ("convert", "espeak-ng"):
        if not shutil.which(tool):
            fail_setup(f"{tool} is not installed (scripts/install-deps.sh installs it)")
    work = tempfile.mkdtemp(dir=a.work)
    ok = True
    for name in a.which.split(","):
        ok &= {"ppocr_rec": check_ppocr, "silero_vad": check_silero}[name](a.kiln, a.models, work)
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
