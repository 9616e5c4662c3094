#!/usr/bin/env python3
"""The analyzer's outside reference for a response: a 4th-order Butterworth
high-pass at 80 Hz (scipy.signal.butter) followed by a peaking EQ of +6 dB
at 3 kHz, Q 2 (the Audio EQ Cookbook's biquad), at 48 kHz, as second-order
sections, and what scipy.signal.sosfreqz says of them.

usage: iir-scipy.py sections            -> the sections, b0 b1 b2 a1 a2 each, one line
       iir-scipy.py response F1 F2 ...  -> JSON: {"F": [magnitude_db, phase_deg], ...}
       iir-scipy.py ir FILE.wav         -> JSON: the WAV's rate and length, and the largest
                                           distance, dB, of its spectrum's magnitude from
                                           sosfreqz's at 1/12-octave points from 100 Hz to 15 kHz
"""
import json
import sys

import numpy as np
from scipy import signal

RATE = 48000


def sections():
    high_pass = signal.butter(4, 80, btype="highpass", fs=RATE, output="sos")
    gain, frequency, q = 6.0, 3000.0, 2.0
    a = 10 ** (gain / 40)
    w0 = 2 * np.pi * frequency / RATE
    alpha = np.sin(w0) / (2 * q)
    b = [1 + alpha * a, -2 * np.cos(w0), 1 - alpha * a]
    den = [1 + alpha / a, -2 * np.cos(w0), 1 - alpha / a]
    peak = np.array([[b[0] / den[0], b[1] / den[0], b[2] / den[0], 1.0, den[1] / den[0], den[2] / den[0]]])
    return np.vstack([high_pass, peak])


sos = sections()
if sys.argv[1] == "sections":
    print(" ".join("%.17g" % v for row in sos for v in (row[0], row[1], row[2], row[4], row[5])))
elif sys.argv[1] == "ir":
    from scipy.io import wavfile
    rate, impulse = wavfile.read(sys.argv[2])
    frequencies = 100 * 2 ** (np.arange(0, int(12 * np.log2(15000 / 100)) + 1) / 12)
    _, measured = signal.freqz(impulse.astype(np.float64), worN=frequencies, fs=rate)
    _, expected = signal.sosfreqz(sos, worN=frequencies, fs=RATE)
    error = np.abs(20 * np.log10(np.abs(measured)) - 20 * np.log10(np.abs(expected)))
    print(json.dumps({"sample_rate": rate, "frames": len(impulse), "dtype": str(impulse.dtype),
                      "peak_index": int(np.argmax(np.abs(impulse))), "worst_db": float(error.max()),
                      "points": len(frequencies)}))
else:
    frequencies = [float(f) for f in sys.argv[2:]]
    _, h = signal.sosfreqz(sos, worN=frequencies, fs=RATE)
    print(json.dumps({str(f): [20 * np.log10(abs(v)), float(np.angle(v, deg=True))] for f, v in zip(sys.argv[2:], h)}))
