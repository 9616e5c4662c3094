import JackTestSupport
import Foundation
@testable import Metering
import SoundFile
import XCTest

/// `BlockLoudness` (what every recorded file's loudness is measured with)
/// against libebur128 through `ProgrammeMeter` (what `jas meter` reads with),
/// on the same samples fed in different pieces: the EBU test signals, and
/// noise on 16 and on 2 channels whose level moves and stops. No server.
final class BlockLoudnessTests: XCTestCase {
    /// The four figures of both meters after the same frames; `pieces` gives each call's frame count.
    private func compare(_ name: String, _ samples: [Float], channels: Int, sampleRate: Int,
                         pieces: (Int) -> Int, file: StaticString = #filePath, line: UInt = #line) throws {
        var blocks = BlockLoudness(channels: channels, sampleRate: sampleRate)
        let reference = try ProgrammeMeter(configuration: .init(channels: channels, sampleRate: sampleRate, layout: nil,
                                                                sources: []))
        let frames = samples.count / channels
        samples.withUnsafeBufferPointer { buffer in
            var offset = 0, call = 0
            while offset < frames {
                let take = min(frames - offset, max(1, pieces(call)))
                blocks.add(buffer.baseAddress! + offset * channels, frames: take)
                offset += take
                call += 1
            }
            // libebur128 in other pieces: 4096 frames at a time.
            offset = 0
            while offset < frames {
                let take = min(frames - offset, 4096)
                reference.add(buffer.baseAddress! + offset * channels, frames: take)
                offset += take
            }
        }
        let theirs = reference.summary()
        func agree(_ ours: Double?, _ libebur128: Double?, _ figure: String) {
            let finite = libebur128.flatMap { $0.isFinite ? $0 : nil }
            XCTAssertEqual(ours == nil, finite == nil, "\(name) \(figure): ours \(String(describing: ours)), "
                           + "libebur128 \(String(describing: libebur128))", file: file, line: line)
            if let ours, let finite {
                XCTAssertEqual(ours, finite, accuracy: 0.001, "\(name) \(figure)", file: file, line: line)
            }
        }
        agree(blocks.integratedLUFS, theirs.integratedLUFS, "integrated")
        agree(blocks.loudnessRangeLU, theirs.lraLU, "range")
        agree(blocks.maxMomentaryLUFS, theirs.maxMomentaryLUFS, "max momentary")
        agree(blocks.maxShortTermLUFS, theirs.maxShortTermLUFS, "max short-term")
    }

    /// Stereo, 5.1 (six channels of weight 1 here), a range case and a one-second mono tone.
    func testTheEBUSignalsReadAsLibebur128ReadsThem() throws {
        let names = ["3341-case1", "3341-case6", "3342-case1", "3341-truepeak-fs4-0"]
        let signals = try EBUSignals.all().filter { names.contains($0.name) }
        XCTAssertEqual(signals.map(\.name).sorted(), names.sorted())
        for signal in signals {
            let reader = try SoundFileReader(path: signal.path)
            var samples: [Float] = []
            var chunk = [Float](repeating: 0, count: 48000 * reader.channels)
            while true {
                let frames = chunk.withUnsafeMutableBufferPointer { reader.read(into: $0.baseAddress!, frames: 48000) }
                guard frames > 0 else { break }
                samples += chunk[0..<(frames * reader.channels)]
            }
            try compare(signal.name, samples, channels: reader.channels, sampleRate: reader.sampleRate) { _ in 256 }
        }
    }

    /// Noise at 44.1 kHz (blocks of 4410 frames), each channel at its own
    /// level, which steps every second and is silent for a second twice
    /// (the gates have work), fed in pieces of every size: 16 channels for
    /// 7 s, and 2 channels for 40 s (37 short-term blocks of different
    /// loudness, so that the range's percentiles fall on different blocks).
    func testMovingNoiseInPiecesOfEverySize() throws {
        for (channels, seconds) in [(16, 7), (2, 40)] {
            let rate = 44100
            var samples = [Float](repeating: 0, count: seconds * rate * channels)
            for second in 0..<seconds where second != 2 && second != 5 {
                for channel in 0..<channels {
                    let level = Float.random(in: 0.0005...0.5)
                    for frame in (second * rate)..<((second + 1) * rate) {
                        samples[frame * channels + channel] = level * Float.random(in: -1...1)
                    }
                }
            }
            try compare("\(channels) channels", samples, channels: channels, sampleRate: rate) { _ in Int.random(in: 1...9000) }
        }
    }

    func testSilenceAndAShortSignalHaveNoFigures() {
        var silent = BlockLoudness(channels: 2, sampleRate: 48000)
        let zeros = [Float](repeating: 0, count: 2 * 48000 * 5)
        zeros.withUnsafeBufferPointer { silent.add($0.baseAddress!, frames: 48000 * 5) }
        XCTAssertNil(silent.integratedLUFS)
        XCTAssertNil(silent.loudnessRangeLU)
        XCTAssertNil(silent.maxMomentaryLUFS)
        XCTAssertNil(silent.maxShortTermLUFS)

        // 300 ms of a tone: a momentary window, no gating block yet.
        var short = BlockLoudness(channels: 1, sampleRate: 48000)
        let tone = (0..<14400).map { Float(0.1 * sin(2 * Double.pi * 997 * Double($0) / 48000)) }
        tone.withUnsafeBufferPointer { short.add($0.baseAddress!, frames: 14400) }
        XCTAssertNil(short.integratedLUFS, "integrated loudness needs a 400 ms block")
        XCTAssertNil(short.loudnessRangeLU)
        XCTAssertNotNil(short.maxMomentaryLUFS)
    }
}
