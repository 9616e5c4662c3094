import Foundation

/// The events of a recording's sidecar log (`take.log`: JSON Lines).
public func logEvents(_ path: String) -> [[String: Any]] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

/// The frames of a take that its log's `gap` events say are silence the recorder wrote.
public func gapRanges(_ events: [[String: Any]]) -> [Range<Int>] {
    events.compactMap { event in
        guard event["event"] as? String == "gap", let at = event["at_frame"] as? Int, let frames = event["frames"] as? Int
        else { return nil }
        return at..<(at + frames)
    }
}

/// The stretches of `frames` (a take's first frames) between `gaps`, in order.
public func stretches(of frames: Range<Int>, between gaps: [Range<Int>]) -> [Range<Int>] {
    var stretches: [Range<Int>] = []
    var from = frames.lowerBound
    for gap in gaps.sorted(by: { $0.lowerBound < $1.lowerBound }) {
        if gap.lowerBound > from { stretches.append(from..<min(gap.lowerBound, frames.upperBound)) }
        from = max(from, gap.upperBound)
    }
    if from < frames.upperBound { stretches.append(from..<frames.upperBound) }
    return stretches.filter { !$0.isEmpty }
}

/// The seconds of a take (its first `frames`) a clock's rate can be measured
/// over, from its log: the stretches between its gaps and xruns, each less
/// two seconds (`FrameClock` keeps one reading a second and measures between
/// pairs of them; a gap starts a new segment, an xrun of a dummy jackd is a
/// step of its clock that spoils the pair of seconds it falls in).
public func measurableSeconds(_ events: [[String: Any]], frames: Int, rate: Double) -> Double {
    let xruns = events.filter { $0["event"] as? String == "xrun" }.compactMap { $0["at_frame"] as? Int }.map { $0..<($0 + 1) }
    return stretches(of: 0..<frames, between: gapRanges(events) + xruns).map { max(0, Double($0.count) / rate - 2) }
        .reduce(0, +)
}

/// Another program takes all the room left on the disk of `path`: a file
/// written there until the disk is full. Returns the bytes it holds.
@discardableResult
public func fillDisk(with path: String) -> Int {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { return 0 }
    defer { close(descriptor) }
    let block = [UInt8](repeating: 0x55, count: 65536)
    var total = 0
    while true {
        let written = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written > 0 else { return total }
        total += written
    }
}
