import ArgumentParser

/// The one rule for option values: a value out of its range is a usage
/// error, found before anything starts, naming the option, its range and the
/// value given; `jas` exits 64 for it (what ArgumentParser gives every
/// ValidationError). Failures met while working (a server, a port, a file)
/// exit 2.
enum OptionCheck {
    /// The longest `--for`: a year.
    static let longestRun = 31_536_000.0

    /// A number of seconds: finite, more than 0 (or 0 too with `allowZero`), at most `maximum`.
    static func seconds(_ value: Double?, _ option: String, allowZero: Bool = false, maximum: Double = longestRun) throws {
        guard let value else { return }
        guard value.isFinite, allowZero ? value >= 0 : value > 0, value <= maximum else {
            throw ValidationError("\(option) must be \(allowZero ? "0" : "more than 0") to \(format(maximum)) seconds, "
                                  + "not \(value)")
        }
    }

    /// A finite number within `range`.
    static func number(_ value: Double, _ option: String, in range: ClosedRange<Double>, unit: String) throws {
        guard value.isFinite, range.contains(value) else {
            throw ValidationError("\(option) must be \(format(range.lowerBound)) to \(format(range.upperBound)) \(unit), "
                                  + "not \(value)")
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
