#!/usr/bin/env python3
"""Writes the EBU Tech 3341 / Tech 3342 test signals that are defined by
numbers (sine tones at stated levels and durations, the true-peak tones) into
a folder, as 32-bit float WAV at 48 kHz, with a JSON index of what each one
must read. Generated from the specifications' descriptions, not downloaded.

usage: make-ebu-signals.py FOLDER
"""
import json
import math
import os
import struct
import sys

import numpy

RATE = 48000


def write_wav(path, channels, frames):
    """frames: an array of shape (frame count, channels) of float64, written
    rounded to the nearest float as WAVE_FORMAT_IEEE_FLOAT."""
    data = numpy.ascontiguousarray(frames, dtype="<f4").tobytes()
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 3, channels, RATE,
                         RATE * 4 * channels, 4 * channels, 32, b"data", len(data))
    with replacing(path, "wb") as file:
        file.write(header)
        file.write(data)


class replacing:
    """A file written beside `path` and renamed onto it when complete: test
    processes side by side may generate the signals at once, and one must
    never read a file the other is writing."""

    def __init__(self, path, mode):
        self.path, self.temporary = path, f"{path}.{os.getpid()}.tmp"
        self.file = open(self.temporary, mode)

    def __enter__(self):
        return self.file

    def __exit__(self, kind, value, traceback):
        self.file.close()
        if kind is None:
            os.replace(self.temporary, self.path)
        else:
            os.remove(self.temporary)


def tone(seconds, levels_dbfs, frequency=1000.0, phase_degrees=0.0, start=0):
    """A sine on every channel, each at its own peak level (None: silence):
    an array of shape (frames, channels)."""
    count = int(round(seconds * RATE))
    amplitudes = numpy.array([0.0 if level is None else 10 ** (level / 20) for level in levels_dbfs])
    phase = math.radians(phase_degrees)
    step = 2 * math.pi * frequency / RATE
    value = numpy.sin(step * numpy.arange(start, start + count, dtype=numpy.float64) + phase)
    return value[:, None] * amplitudes[None, :]


def faded(frames, seconds=0.02):
    """Raised-cosine fade in and out: a tone that starts at full amplitude has a
    band-limited onset whose reconstruction overshoots its steady peak, which
    is not what the true-peak cases measure."""
    frames = frames.copy()
    count = int(seconds * RATE)
    gain = 0.5 - 0.5 * numpy.cos(math.pi * numpy.arange(count, dtype=numpy.float64) / count)
    frames[:count] *= gain[:, None]
    frames[::-1][:count] *= gain[:, None]
    return frames


def sequence(parts, channels):
    """Concatenates (seconds, dBFS) stereo-or-more segments of a 1 kHz tone, phase continuous."""
    segments, length = [], 0
    for seconds, level in parts:
        segments.append(tone(seconds, [level] * channels, start=length))
        length += len(segments[-1])
    return numpy.concatenate(segments)


def main(folder):
    os.makedirs(folder, exist_ok=True)
    index = {}

    def add(name, channels, frames, **expected):
        write_wav(os.path.join(folder, name + ".wav"), channels, frames)
        index[name] = dict(channels=channels, **expected)

    # Tech 3341, table 1 (minimum requirements): cases 1-5 stereo 1 kHz, case 6 5.0 channels.
    add("3341-case1", 2, sequence([(20, -23)], 2), integrated=-23.0, momentary=-23.0, short_term=-23.0)
    add("3341-case2", 2, sequence([(20, -33)], 2), integrated=-33.0, momentary=-33.0, short_term=-33.0)
    add("3341-case3", 2, sequence([(10, -36), (60, -23), (10, -36)], 2), integrated=-23.0)
    add("3341-case4", 2, sequence([(10, -72), (10, -36), (60, -23), (10, -36), (10, -72)], 2), integrated=-23.0)
    add("3341-case5", 2, sequence([(20, -26), (20.1, -20), (20, -26)], 2), integrated=-23.0)
    # 5.1 in L R C LFE Ls Rs order; the LFE channel carries nothing and is not measured.
    add("3341-case6", 6, tone(20, [-28, -28, -24, None, -30, -30]), integrated=-23.0, layout="5.1")
    # Tech 3342, cases 1-4: loudness range of stepped 1 kHz tones.
    add("3342-case1", 2, sequence([(20, -20), (20, -30)], 2), lra=10.0)
    add("3342-case2", 2, sequence([(20, -20), (20, -15)], 2), lra=5.0)
    add("3342-case3", 2, sequence([(20, -40), (20, -20)], 2), lra=20.0)
    add("3342-case4", 2, sequence([(20, -50), (20, -35), (20, -20), (20, -35), (20, -50)], 2), lra=15.0)
    # Tech 3341 true-peak cases: tones whose samples miss the peak between them.
    # fs/4 at 0 and 45 degrees, fs/6 at 60 degrees, fs/8 at 67.5 degrees, all peaking at -6.02 dBFS (0.5);
    # fs/4 at 45 degrees peaking at 0 dBFS (samples at -3.01 dBFS). Each faded in and out over 20 ms.
    half = 20 * math.log10(0.5)
    add("3341-truepeak-fs4-0", 1, faded(tone(1, [half], RATE / 4, 0)), true_peak=round(half, 2))
    add("3341-truepeak-fs4-45", 1, faded(tone(1, [half], RATE / 4, 45)), true_peak=round(half, 2))
    add("3341-truepeak-fs6-60", 1, faded(tone(1, [half], RATE / 6, 60)), true_peak=round(half, 2))
    add("3341-truepeak-fs8-67.5", 1, faded(tone(1, [half], RATE / 8, 67.5)), true_peak=round(half, 2))
    add("3341-truepeak-fs4-45-0dB", 1, faded(tone(1, [0.0], RATE / 4, 45)), true_peak=0.0)
    with replacing(os.path.join(folder, "index.json"), "w") as file:
        json.dump(index, file, indent=1, sort_keys=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
