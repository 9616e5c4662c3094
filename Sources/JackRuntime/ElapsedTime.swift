/// Durations and deadlines are measured on the monotonic clock
/// (`ContinuousClock`), never on the wall clock: a wall clock that steps
/// (NTP's correction, a person setting the time, the RTC read at boot)
/// would make a downtime negative or an hour long, end a reconnect's limit
/// at once or never, and stretch a 1 s deadline or a watchdog's interval
/// by the size of the step. The wall clock is for saying when (a file's
/// name, `bext`, a line's time), not for how long.
extension Duration {
    /// This duration in seconds.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
