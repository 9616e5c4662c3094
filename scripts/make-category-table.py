#!/usr/bin/env python3
"""Writes Fixtures/category-mode-options.tsv: every category x mode x option set
with the outcome the seed documents give, written out row by row. This is an
independent reading of the Class Reference (option "Valid only if ..." lines,
Table B-2 of the Programming Guide), so the Swift rules are tested against
it rather than against themselves. Run it again only when the rules change."""
import itertools

CATEGORIES = ["ambient", "soloAmbient", "playback", "record", "playAndRecord", "audioProcessing", "multiRoute"]
MODES = {  # Table B-2 of the Programming Guide (the later edition lists spokenAudio with playback only)
    "default": set(CATEGORIES),
    "voiceChat": {"playAndRecord"},
    "gameChat": {"playAndRecord"},
    "videoRecording": {"playAndRecord", "record"},
    "measurement": {"playAndRecord", "record", "playback"},
    "moviePlayback": {"playback"},
    "videoChat": {"playAndRecord"},
    "spokenAudio": {"playback"},
}
OPTIONS = {  # "Valid only if the session category is ..."
    # The Class Reference: playback and playAndRecord (implicit in ambient); the
    # guide's "Fine-Tuning a Category" adds multiRoute, which docs/SESSION.md's
    # differences table says we follow.
    "mixWithOthers": {"ambient", "playback", "playAndRecord", "multiRoute"},
    "duckOthers": {"playback", "playAndRecord"},
    "allowBluetooth": {"record", "playAndRecord"},
    "defaultToSpeaker": {"playAndRecord"},
    "interruptSpokenAudioAndMixWithOthers": {"playback", "playAndRecord"},
}
ORDER = list(OPTIONS)

rows = ["# category\tmode\toptions\texpected (ok:options in force | !cat | -50)"]
for category in CATEGORIES:
    for mode in MODES:
        for count in range(len(ORDER) + 1):
            for chosen in itertools.combinations(ORDER, count):
                options = ",".join(chosen) or "-"
                if category not in MODES[mode]:
                    expected = "!cat"
                elif any(category not in OPTIONS[o] for o in chosen):
                    expected = "-50"
                else:
                    inforce = set(chosen)
                    if "interruptSpokenAudioAndMixWithOthers" in inforce:
                        inforce.discard("mixWithOthers")  # one name covers both bits
                    if mode in ("voiceChat", "videoChat"):
                        inforce.add("allowBluetooth")
                    if mode == "videoChat":
                        inforce.add("defaultToSpeaker")
                    expected = "ok:" + (",".join(o for o in ORDER if o in inforce) or "-")
                rows.append(f"{category}\t{mode}\t{options}\t{expected}")

with open("Fixtures/category-mode-options.tsv", "w") as out:
    out.write("\n".join(rows) + "\n")
print(f"{len(rows) - 1} rows")
