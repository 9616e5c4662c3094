#!/usr/bin/env python3
"""analyzer-bench's reference: the sweep analysis SweepAnalysis makes (the
recording's spectrum over the sweep's in the band, the impulse response,
each harmonic's response cut out at its advance, the same for a perfect
path), in numpy/scipy on the same samples. Prints the median CPU seconds
(time.process_time) of the computation alone, files already read.

usage: sweep-scipy.py FOLDER RATE START_HZ END_HZ SWEEP_RATE_L ROUNDS
"""
import sys
import time

import numpy as np
from scipy import fft as sfft

folder, rate, f1, f2, L, rounds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
played = np.fromfile(folder + "/played.f32", dtype=np.float32).astype(np.float64)
recorded = np.fromfile(folder + "/recorded.f32", dtype=np.float32).astype(np.float64)


def eased_impulse(response, n, width):
    eased = response.copy()
    freqs = np.arange(len(response)) * width
    low = (freqs >= f1) & (freqs < 2 * f1)
    eased[low] *= 0.5 - 0.5 * np.cos(np.pi * np.log2(freqs[low] / f1))
    return sfft.irfft(eased, n)


def harmonics(impulse, n, delay):
    out = {}
    for k in range(2, 10):
        advance = L * np.log(k) * rate
        after = int(0.5 * (advance - L * np.log(k - 1) * rate))
        before = int(min(0.2 * (L * np.log(k + 1) * rate - advance), 0.005 * rate))
        start = delay - int(round(advance))
        idx = (start + np.arange(-before, after)) % n
        length = sfft.next_fast_len(before + after, real=True)
        window = np.zeros(length)
        window[np.arange(-before, after) % length] = impulse[idx]
        out[k] = 20 * np.log10(np.abs(sfft.rfft(window)) + 1e-300)
    return out


n = sfft.next_fast_len(2 * len(played), real=True)
width = rate / n
freqs = np.arange(n // 2 + 1) * width
band = (freqs >= f1) & (freqs <= f2)
# What belongs to the sweep alone, once: its spectrum and the method's floor (a perfect path, no delay).
x = sfft.rfft(played, n)
perfect = np.zeros_like(x)
perfect[band] = 1
floor = harmonics(eased_impulse(perfect, n, width), n, 0)


def analyse():
    y = sfft.rfft(recorded, n)
    response = np.zeros_like(x)
    response[band] = y[band] / x[band]
    impulse = eased_impulse(response, n, width)
    delay = int(np.argmax(np.abs(impulse)))
    return 20 * np.log10(np.abs(response[band])), harmonics(impulse, n, delay)


times = []
for _ in range(rounds):
    start = time.process_time()
    analyse()
    times.append(time.process_time() - start)
print(sorted(times)[len(times) // 2])
