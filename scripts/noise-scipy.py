#!/usr/bin/env python3
"""The analyzer's outside reference for noise: levels of a block of float32
samples in 20 Hz-20 kHz, unweighted and A- and C-weighted, computed with
scipy (a boxcar periodogram, and the weightings' analogue responses from
IEC 61672-1's pole frequencies through scipy.signal.freqs), for the tests to
compare with NoiseAnalysis.

usage: noise-scipy.py BLOCK.f32 SAMPLE_RATE
       noise-scipy.py --white SAMPLE_RATE LENGTH
prints one JSON object: unweighted, a, c in dBFS (a full-scale sine is
0 dBFS); with --white, a and c less unweighted (dB) for white noise on the
bins of a LENGTH-sample block.
"""
import json
import sys

import numpy as np
from scipy import signal

F1, F2, F3, F4 = 20.598997, 107.65265, 737.86223, 12194.217


def weighting(zeros, poles_hz, freqs):
    """|H(f)|^2 of an analogue filter with `zeros` zeros at 0 and poles at poles_hz, 1 at 1 kHz."""
    poles = [-2 * np.pi * f for f in poles_hz]
    b, a = signal.zpk2tf([0] * zeros, poles, 1)
    w = 2 * np.pi * np.append(freqs, 1000.0)
    _, h = signal.freqs(b, a, worN=w)
    gain = np.abs(h) / np.abs(h[-1])
    return gain[:-1] ** 2


def band_bins(rate, length):
    freqs = np.arange(length // 2 + 1) * rate / length
    band = (freqs >= 20) & (freqs <= min(20000, rate / 2)) & (np.arange(len(freqs)) > 0) & (np.arange(len(freqs)) < length // 2)
    return freqs, band


def weights(freqs):
    return {"unweighted": np.ones_like(freqs),
            "a": weighting(4, [F1, F1, F2, F3, F4, F4], freqs),
            "c": weighting(2, [F1, F1, F4, F4], freqs)}


if sys.argv[1] == "--white":
    rate, length = int(sys.argv[2]), int(sys.argv[3])
    freqs, band = band_bins(rate, length)
    w = weights(freqs[band])
    print(json.dumps({k: 10 * np.log10(np.mean(v)) for k, v in w.items() if k != "unweighted"}))
else:
    path, rate = sys.argv[1], int(sys.argv[2])
    block = np.fromfile(path, dtype=np.float32).astype(np.float64)
    freqs, power = signal.periodogram(block, fs=rate, window="boxcar", scaling="spectrum", detrend=False)
    _, band = band_bins(rate, len(block))
    peak_squared = 2 * power[band]  # a sine's peak amplitude squared: 1 for a full-scale sine
    w = weights(freqs[band])
    print(json.dumps({k: 10 * np.log10(np.sum(peak_squared * v)) for k, v in w.items()}))
