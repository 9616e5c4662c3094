import Foundation
import EventSchema

/// An intermodulation result as one line of `jas analyze imd --json`.
extension IntermodulationMeasurement.Result: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try encodeRun("imd", into: &json)
        try json.encode(SteppedSine.Result.levelConvention, forKey: "level_convention")
        try json.encodeFigure(levelDBFS, forKey: "level_dbfs")
        try json.encode(channels, forKey: "channels")
    }
}

extension IntermodulationMeasurement.Channel: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(outputPort, forKey: "out_port")
        try json.encode(inputPort, forKey: "in_port")
        try json.encode(analyses, forKey: "tests")
    }
}

extension IntermodulationAnalysis: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(test.rawValue, forKey: "test")
        try json.encode(test.definition, forKey: "definition")
        try json.encodeFigure(test.lowFrequency, decimals: 3, forKey: "low_hz")
        try json.encodeFigure(test.highFrequency, decimals: 3, forKey: "high_hz")
        try json.encodeFigure(test.amplitudeRatio, forKey: "amplitude_ratio")
        try json.encodeFigure(lowToneDBFS, forKey: "low_dbfs")
        try json.encodeFigure(highToneDBFS, forKey: "high_dbfs")
        try json.encodeFigure(dB, forKey: "imd_db")
        try json.encodeFigure(percent, decimals: 7, forKey: "imd_percent")
        for order in orders.keys.sorted() {
            try json.encodeFigure(20 * log10(orders[order]!), forKey: EventKey(stringValue: "d\(order)_db"))
        }
        try json.encode(products, forKey: "products")
    }
}

extension IntermodulationAnalysis.Product: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var json = encoder.container(keyedBy: EventKey.self)
        try json.encode(order, forKey: "order")
        try json.encodeFigure(frequency, decimals: 3, forKey: "frequency_hz")
        try json.encodeFigure(levelDB, forKey: "level_db")
    }
}
