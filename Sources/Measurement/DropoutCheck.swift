/// A period that came back as digital silence while the stimulus was
/// playing: a dropout. PipeWire's null-sink loop loses a period now and
/// then this way without counting an xrun (selftest sees it, JACK-NOTES);
/// analysed, such a run would give a made-up figure, so it is spoilt and
/// played again.
///
/// Where the input should hear the stimulus is told from the recording
/// itself: from its first non-zero sample (the path's delay shows there)
/// to the stimulus's last non-zero sample moved by that delay. A run of
/// exact zeros at least a period long inside it is a dropout. A path that
/// is silent throughout (nothing leaks into an undriven input) has none.
enum DropoutCheck {
    /// Where the first dropout of `captured` starts (a frame), or nil.
    /// `stimulus`: what its paired output played (nil: its output was silent
    /// in this run, so only the stretch the input itself heard is checked).
    static func firstDropout(in captured: [Float], stimulus: [Float]?, minimumFrames: Int) -> Int? {
        guard minimumFrames > 0, let heard = captured.firstIndex(where: { $0 != 0 }) else { return nil }
        var end = (captured.lastIndex { $0 != 0 } ?? heard) + 1
        if let stimulus, let first = stimulus.firstIndex(where: { $0 != 0 }), let last = stimulus.lastIndex(where: { $0 != 0 }) {
            end = min(captured.count, max(end, last + 1 + max(0, heard - first)))
        }
        var run = 0
        for index in heard..<end {
            if captured[index] == 0 {
                run += 1
                if run >= minimumFrames { return index + 1 - run }
            } else {
                run = 0
            }
        }
        return nil
    }
}
