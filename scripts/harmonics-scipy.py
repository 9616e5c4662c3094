#!/usr/bin/env python3
"""The analyzer's outside reference: harmonic levels, THD and THD+N of a
block of float32 samples computed with scipy, for the tests to compare with
HarmonicAnalysis on the same samples.

usage: harmonics-scipy.py BLOCK.f32 SAMPLE_RATE FUNDAMENTAL_HZ HIGHEST_ORDER
prints one JSON object: fundamental_dbfs, harmonics (order -> dB re the
fundamental), thd_db, thd_n_db (20 Hz-20 kHz, all but the fundamental).
"""
import json
import sys

import numpy as np
from scipy import signal

path, rate, fundamental, highest = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
block = np.fromfile(path, dtype=np.float32).astype(np.float64)
# A boxcar window on a coherent block; 'spectrum' scaling gives each bin's power as a sine's RMS².
freqs, power = signal.periodogram(block, fs=rate, window="boxcar", scaling="spectrum", detrend=False)
peak = np.sqrt(2 * power)  # a sine's peak amplitude
step = freqs[1] - freqs[0]
k0 = int(round(fundamental / step))
a1 = peak[k0]
harmonics = {m: 20 * np.log10(peak[m * k0] / a1) for m in range(2, highest + 1) if m * k0 < len(block) // 2}
thd = np.sqrt(sum(peak[m * k0] ** 2 for m in harmonics)) / a1
band = (freqs >= 20) & (freqs <= min(20000, rate / 2)) & (np.arange(len(freqs)) != k0) & (np.arange(len(freqs)) < len(block) // 2)
thd_n = np.sqrt(np.sum(peak[band] ** 2)) / a1
print(json.dumps({"fundamental_dbfs": 20 * np.log10(a1), "harmonics": {str(m): v for m, v in harmonics.items()},
                  "thd_db": 20 * np.log10(thd), "thd_n_db": 20 * np.log10(thd_n)}))
