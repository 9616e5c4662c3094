@testable import JackAudioSession
@testable import Capture
import Foundation
@testable import Metering
@testable import Recording

/// One value of every kind of output, with awkward numbers in it (−∞, nil,
/// −0.001 that rounds to −0, whole doubles, long fractions, names that need escaping).
enum EventSamples {
    static let time = Date(timeIntervalSince1970: 1_795_000_000.125)

    static let route = RouteDescription(
        inputs: [PortDescription(portName: "system \"in\"", portType: .lineIn, uid: "system:capture",
                                 channels: [ChannelDescription(channelName: "capture_1", channelNumber: 1,
                                                               jackPort: "system:capture_1")])],
        outputs: [PortDescription(portName: "HDMI/1", portType: .HDMI, uid: "hdmi", channels: [])])

    static let sessionEvents: [(String, AudioSessionEvent)] = [
        ("interruption-began", .interruption(type: .began, options: [], reason: .default)),
        ("interruption-ended", .interruption(type: .ended, options: .shouldResume, reason: .callStarted)),
        ("route-change", .routeChange(reason: .newDeviceAvailable, previousRoute: RouteDescription(), currentRoute: route,
                                      streams: ["main", "cue\n"])),
        ("media-lost", .mediaServicesWereLost(reason: "jackd went away\u{1B}[2J")),
        ("media-reset", .mediaServicesWereReset(MediaServicesReset(previousSampleRate: 48000, sampleRate: 44100,
                                                                   previousIOBufferFrames: 256, ioBufferFrames: 1024,
                                                                   reactivated: true, downtime: 0.0421337))),
        ("secondary-hint", .silenceSecondaryAudioHint(begin: true)),
        ("xrun", .xrun(count: 2, total: 7, delayMicroseconds: 1234.5, atFrameTime: 96_000)),
        ("io-buffer", .ioBufferDurationChange(seconds: 256.0 / 48000, frames: 256)),
        ("limitation", .serverLimitation(.pipeWireDefaultMetadata)),
        ("rate-mismatch", .sampleRateMismatch(SampleRateMismatch(preferredSampleRate: 96000, sampleRate: 48000))),
    ]

    static let channels = [
        ChannelReading(channel: 1, source: "system:capture_1", samplePeakDBFS: -0.001, truePeakDBTP: 0.123456,
                       rmsDBFS: -20.004, ppmTypeIDBFS: -.infinity, ppmTypeIIbDBFS: -18.5, vu: -2, kMeter: -.nan),
        ChannelReading(channel: 2, source: "", samplePeakDBFS: -.infinity, truePeakDBTP: -.infinity,
                       rmsDBFS: -.infinity, ppmTypeIDBFS: -.infinity, ppmTypeIIbDBFS: -.infinity, vu: -.infinity,
                       kMeter: -.infinity),
    ]

    static let readings: [(String, MeterReading)] = [
        ("reading", MeterReading(seconds: 12.3, momentaryLUFS: -23.456, shortTermLUFS: -22.999, integratedLUFS: -23,
                                 loudnessRangeLU: 4.44444, channels: channels)),
        ("reading-gated", MeterReading(seconds: 0.1, momentaryLUFS: nil, shortTermLUFS: -.infinity, integratedLUFS: nil,
                                       loudnessRangeLU: nil, channels: [])),
    ]

    static let summary = MeterSummary(seconds: 60, programmeSeconds: 59.5, sampleRate: 48000, layout: "stereo",
                                      integratedLUFS: -23.04, lraLU: nil, truePeakDBTP: -1.00001, samplePeakDBFS: -.infinity,
                                      maxMomentaryLUFS: -18.2, maxShortTermLUFS: nil, channels: channels, xruns: 3)

    static let recordingEvents: [(String, RecordingEvent)] = [
        ("started", .started(firstFrameTime: 4_000_000_000, prerollFrames: 48000)),
        ("armed", .armed(prerollSeconds: 2.5, triggerDBFS: nil)),
        ("armed-trigger", .armed(prerollSeconds: 0, triggerDBFS: -30)),
        ("gap", .gap(atFrame: 480_000, frames: 256, reason: "overrun", resumedFrameTime: 12345)),
        ("source-lost", .sourceLost(ports: ["a:out_1", "b:out/2"], atFrame: 96000)),
        ("source-gap", .sourceGap(atFrame: 96000, frames: 1024, ports: ["a:out_1"], resumedFrameTime: nil)),
        ("source-gap-back", .sourceGap(atFrame: 96000, frames: 1024, ports: ["a:out_1"], resumedFrameTime: 777)),
        ("interrupted", .interrupted(by: "jas-interrupt", atFrame: 5)),
        ("resumed", .resumed(attempts: 3)),
        ("resume-refused", .resumeRefused(reason: "busy")),
        ("interruption-gap", .interruptionGap(atFrame: 10, frames: 20, by: "x", resumedFrameTime: nil)),
        ("silence", .silence(channels: [1, 2], levelDBFS: -.infinity, atFrame: 100, silentFrames: 48000)),
        ("signal", .signal(channels: [2], levelDBFS: -12.345678, atFrame: 200, silentFrames: 96000)),
        ("hook-failed", .hookFailed(event: "silence", command: "notify \"x\"", reason: "exit status 1")),
        ("xrun", .xrun(atFrame: 300, delayMicroseconds: 87.25)),
        ("server-lost", .serverLost(atFrame: 400, reason: "shutdown")),
        ("server-back", .serverBack(sampleRate: 48000, downtimeSeconds: 1.23456789)),
        ("new-file", .newFile(path: "/tmp/a/take-2.wav", sampleRate: 44100, atFrame: 500)),
        ("rotated", .rotated(path: "/tmp/a/take-3.wav", atFrame: 600)),
        ("part-skipped", .partSkipped(reason: "taken")),
        ("clock", .clock(rateErrorPPM: 12.3456)),
        ("clock-step", .clockStep(seconds: 3.70000049, atFrame: 700)),
        ("disk-full", .diskFull(atFrame: 800, path: "/tmp/a/take-4.wav")),
        ("unwritten-gap", .unwrittenGap(atFrame: 900, frames: 48000, reason: "disk-full", resumed: true)),
        ("deleted", .deleted(path: "/tmp/a/old.wav", ageSeconds: 86400.12345, reason: "--keep 1d")),
        ("delete-failed", .deleteFailed(path: "/tmp/a/old.wav", reason: "EPERM")),
        ("recovered", .recovered(path: "/tmp/a/take-5.wav")),
        ("write-failed", .writeFailed(atFrame: 1000, reason: "EIO")),
        ("stopped", .stopped(framesWritten: 1_234_567, reason: "SIGTERM")),
        ("loudness-alarm", .loudnessAlarm(LoudnessAlarm.Change(kind: .truePeakOver, on: true, sinceSeconds: 12.3, seconds: 12.3,
                                                               level: -0.42, threshold: -1, lastedSeconds: nil), target: .a85)),
    ]

    static let progress: [(String, RecordingProgress)] = [
        ("progress", RecordingProgress(isRecording: true, framesWritten: 480_000, sampleRate: 48000,
                                       peakDBFS: [-6.04, -.infinity, -0.01], ringFill: 0.01234, overruns: 1, xruns: 2,
                                       gaps: 3, gapFrames: 4096, path: "/tmp/a/take.wav", serverLost: false,
                                       rateErrorPPM: 3.14159)),
        ("progress-armed", RecordingProgress(isRecording: false, framesWritten: 0, sampleRate: 0, peakDBFS: [],
                                             ringFill: 0, overruns: 0, xruns: 0, gaps: 0, gapFrames: 0, path: nil,
                                             serverLost: true, rateErrorPPM: nil)),
    ]

    static let recordingSummaries: [(String, RecordingSummary)] = [
        ("summary", RecordingSummary(path: "/tmp/a/take.wav", paths: ["/tmp/a/take.wav", "/tmp/a/take-2.wav"],
                                     logPath: "/tmp/a/take.log", framesWritten: 960_000, durationSeconds: 20,
                                     sampleRate: 48000, channels: 2, ports: ["system:capture_1", "system:capture_2"],
                                     overruns: 0, overrunFrames: 0, xruns: 1, gaps: 2, gapFrames: 512, interruptions: 1,
                                     interruptionFrames: 256, firstFrameTime: 123, prerollFrames: 0,
                                     timeReference: 1_728_000_000, captureLatencyFrames: 512, bufferSeconds: 2.5,
                                     problem: nil, stopReason: "duration reached", unwrittenFrames: 0,
                                     manifestPath: "/tmp/a/manifest.jsonl")),
        ("summary-empty", RecordingSummary(path: "/dev/null", paths: [], logPath: nil, framesWritten: 0,
                                           durationSeconds: 0.5, sampleRate: 44100, channels: 1, ports: [],
                                           overruns: 0, overrunFrames: 0, xruns: 0, gaps: 0, gapFrames: 0,
                                           interruptions: 0, interruptionFrames: 0, firstFrameTime: nil,
                                           prerollFrames: 0, timeReference: nil, captureLatencyFrames: 0,
                                           bufferSeconds: 4, problem: "disk full", stopReason: nil, manifestPath: nil)),
    ]

    static let silenceChanges: [(String, SilenceAlarm.Change)] = [
        ("meter-silence", SilenceAlarm.Change(kind: .silence, channels: [1], levelDBFS: -.infinity, atFrame: 48000,
                                              silentFrames: 96000)),
        ("meter-signal", SilenceAlarm.Change(kind: .signal, channels: [1, 2], levelDBFS: -40.126, atFrame: 144_000,
                                             silentFrames: 96000)),
    ]

    static let sourceChanges: [(String, LiveMeter.SourceChange)] = [
        ("meter-source-lost", LiveMeter.SourceChange(ports: ["a:out"], seconds: 3.5, awaySeconds: nil, returned: false)),
        ("meter-source-back", LiveMeter.SourceChange(ports: ["a:out"], seconds: 9, awaySeconds: 5.5, returned: true)),
    ]
}
