import JackKit

/// A port the session registered, as an activation looks at it to take it
/// again: its short name and direction. `Port` is one; the tests hold ports
/// in memory.
protocol RegisteredPort {
    var shortName: String { get }
    var flags: PortFlags { get }
}

extension Port: RegisteredPort {}

/// Which ports an activation registers and which of the ports kept
/// registered while the session was inactive (where the server needs that)
/// it takes again. No JACK: the session decides here, then registers.
struct PortAssignment<P: RegisteredPort> {
    /// A port the activation needs: its short name and direction.
    struct Wanted: Equatable {
        let shortName: String
        let flags: PortFlags
    }

    /// The ports needed, in order: inputs, then outputs.
    let wanted: [Wanted]
    /// Per wanted port: the kept port of that name and direction, taken
    /// again, or nil when one is registered.
    let reused: [P?]
    /// The kept ports no wanted port takes: unregistered.
    let released: [P]

    /// - Parameters:
    ///   - inputs: the short names of the input ports needed, channel order.
    ///   - outputs: the short names of the output ports needed.
    ///   - kept: the ports kept registered while inactive.
    init(inputs: [String], outputs: [String], kept: [P]) {
        wanted = inputs.map { Wanted(shortName: $0, flags: .input) } + outputs.map { Wanted(shortName: $0, flags: .output) }
        var left = kept
        reused = wanted.map { wanted in
            left.firstIndex { $0.shortName == wanted.shortName && $0.flags.contains(wanted.flags) }
                .map { left.remove(at: $0) }
        }
        released = left
    }

    /// Carries the assignment out: `register` makes each port not taken
    /// again, `unregister` lets go of the released ones. When the server
    /// refuses a port, every port this activation holds (registered or taken
    /// again) is let go before the error is thrown, so no name stays taken
    /// that the next activation would ask for.
    func carryOut(register: (Wanted) throws(JackError) -> P,
                  unregister: (P) -> Void) throws(JackError) -> (inputs: [P], outputs: [P]) {
        for port in released { unregister(port) }
        var held: [P] = []
        do throws(JackError) {
            for (wanted, kept) in zip(wanted, reused) {
                if let kept { held.append(kept) } else { held.append(try register(wanted)) }
            }
        } catch {
            for port in held + reused.dropFirst(held.count).compactMap({ $0 }) { unregister(port) }
            throw error
        }
        let inputCount = wanted.count { $0.flags.contains(.input) }
        return (Array(held.prefix(inputCount)), Array(held.dropFirst(inputCount)))
    }
}
