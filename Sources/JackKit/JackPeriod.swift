/// The period sizes JACK accepts: the one definition every layer sizes its
/// real-time buffers by.
public enum JackPeriod {
    /// The largest period a JACK server runs, frames (jack2's `BUFFER_SIZE_MAX`;
    /// libjack refuses a larger `jack_set_buffer_size`). Inlinable, so that
    /// real-time code in other modules reads a constant, not a lazy global.
    @inlinable public static var maximumFrames: Int { 8192 }
}
