/// When a run of latency readings that wants `wanted` valid ones is over:
/// once they came, or it gives up: after 2·wanted + 8 readings that found no
/// number in the signal, or after 60 readings spoilt by xruns (about 20 s
/// of a server too loaded to measure). Without `wanted` it never ends.
public struct LatencyReadingTally: Sendable, Equatable {
    /// Valid readings wanted (nil: read until stopped).
    public let wanted: Int?
    /// The valid readings so far.
    public private(set) var valid: [LatencyReading] = []
    /// Readings counted, and of them spoilt by an xrun the server reported.
    public private(set) var total = 0
    /// Readings spoilt (an xrun, no signal) so far.
    public private(set) var spoilt = 0

    /// A tally that ends after `wanted` valid readings (nil: never).
    public init(wanted: Int?) {
        self.wanted = wanted
    }

    /// Counts one reading.
    public mutating func count(_ reading: LatencyReading) {
        total += 1
        if reading.valid { valid.append(reading) }
        if reading.problem == .xrun { spoilt += 1 }
    }

    /// Whether more readings are wanted.
    public var wantsMore: Bool {
        guard let wanted else { return true }
        return valid.count < wanted && total - spoilt < 2 * wanted + 8 && spoilt < 60
    }

    /// Why the run ended short of what it wanted (nil: it did not).
    public var shortfall: String? {
        guard let wanted, valid.count < wanted else { return nil }
        return "\(valid.count) valid reading(s) of \(wanted) wanted after \(total) reading(s)"
            + (spoilt > 0 ? ", \(spoilt) of them spoilt by xruns the server reported" : "")
    }
}
