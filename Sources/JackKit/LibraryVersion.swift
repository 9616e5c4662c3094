import CJack

/// The libjack this process runs on.
public enum LibraryVersion {
    /// What libjack says of itself (`jack_get_version_string`): "1.9.21" for
    /// jack2, PipeWire's own version for PipeWire's libjack.
    public static var text: String {
        guard let text = jack_get_version_string() else { return "unknown" }
        return String(cString: text)
    }

    /// Whether this is PipeWire's libjack ("3.0.0.0 (using PipeWire 0.3.65)").
    public static let isPipeWire = text.contains("PipeWire")
}
