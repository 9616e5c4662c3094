#!/usr/bin/env python3
"""The analyzer's outside reference for crosstalk: a band-pass at 10 kHz
(scipy.signal.iirpeak, Q 2, 0 dB at its centre, at 48 kHz) whose output
leaks into the other channel at -60 dB, beside a flat -80 dB leak, and
what scipy.signal.freqz says the whole leak is relative to the channel's
own path (which is 1).

usage: leakage-scipy.py sections           -> FLAT BAND b0 b1 b2 a1 a2
       leakage-scipy.py crosstalk F1 F2 ... -> JSON: {"F": crosstalk_db, ...}
"""
import json
import sys

import numpy as np
from scipy import signal

RATE, FLAT, BAND = 48000, 1e-4, 1e-3
b, a = signal.iirpeak(10000, 2, fs=RATE)

if sys.argv[1] == "sections":
    print(" ".join("%.17g" % v for v in (FLAT, BAND, b[0] / a[0], b[1] / a[0], b[2] / a[0], a[1] / a[0], a[2] / a[0])))
else:
    frequencies = [float(f) for f in sys.argv[2:]]
    _, h = signal.freqz(b, a, worN=frequencies, fs=RATE)
    print(json.dumps({f: 20 * np.log10(abs(FLAT + BAND * v)) for f, v in zip(sys.argv[2:], h)}))
