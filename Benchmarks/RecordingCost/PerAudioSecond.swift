import Foundation

/// CPU per audio second of `jas record` and of jack_capture, each alone on
/// the server: the CPU of a long take less that of a short one, over the
/// difference of their lengths, so what a take costs once (the program's
/// start, the ring written once, the file's close and digest of a short
/// file) drops out. Takes of the two alternate; each length is taken
/// `rounds` times and its CPU averaged.
struct PerAudioSecond {
    let jasSeconds: Double
    let captureSeconds: Double
    let shortTake: Double
    let longTake: Double

    init(server: String, options: Options, rounds: Int) throws {
        longTake = options.seconds.rounded()
        shortTake = max(1, min(4, (longTake / 4).rounded()))
        var jas: [Double: [Double]] = [:], capture: [Double: [Double]] = [:]
        for _ in 0..<rounds {
            for take in [shortTake, longTake] {
                let output = "\(options.folder)/per-second"
                jas[take, default: []].append(try TimedCommand(
                    "\(options.jas) record --server \(server) --ports 'loopback:capture_*' --output \(output).wav "
                        + "--for \(take) --overwrite --json").finish().cpu)
                capture[take, default: []].append(try TimedCommand(
                    "jack_capture --no-stdin --disable-console -c \(options.channels) -p 'loopback:capture*' "
                        + "-d \(Int(take)) -f wav -b FLOAT \(output)-capture.wav",
                    environment: ["JACK_DEFAULT_SERVER": server]).finish().cpu)
                for leftover in (try? FileManager.default.contentsOfDirectory(atPath: options.folder)) ?? []
                where leftover.hasPrefix("per-second") {
                    try? FileManager.default.removeItem(atPath: "\(options.folder)/\(leftover)")
                }
            }
        }
        jasSeconds = Self.slope(jas, short: shortTake, long: longTake)
        captureSeconds = Self.slope(capture, short: shortTake, long: longTake)
    }

    /// CPU per second of take between the two lengths, from each length's mean.
    static func slope(_ cpu: [Double: [Double]], short: Double, long: Double) -> Double {
        func mean(_ take: Double) -> Double { (cpu[take] ?? []).reduce(0, +) / Double(max(1, cpu[take]?.count ?? 0)) }
        return (mean(long) - mean(short)) / (long - short)
    }
}
