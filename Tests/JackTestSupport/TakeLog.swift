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
