import CJack

/// libjack's own error and info messages, which it prints on stderr by default
/// (every failed connection attempt prints several lines).
public enum LibraryMessages {
    /// Drops libjack's messages: the caller reports failures through `JackError`.
    public static func silence() {
        jack_set_error_function { _ in }
        jack_set_info_function { _ in }
    }
}
