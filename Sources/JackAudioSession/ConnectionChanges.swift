/// One JACK connection: an output port to an input port, full names.
struct PortConnection: Hashable, CustomStringConvertible {
    let source: String
    let destination: String

    var description: String { "\(source) -> \(destination)" }
}

/// What connecting a session's ports to a route plan changes in the graph,
/// decided from the connections as they are: the connections to drop, the
/// ones to make, and how many of those were missing. No JACK: the session
/// reads the graph, decides here, then connects and disconnects.
struct ConnectionChanges: Equatable {
    /// One of the session's ports and the ports it is connected to now.
    struct OwnPort {
        let name: String
        let connections: [String]
    }

    /// The session's connections to drop, inputs' first: those to a route
    /// port (hardware, or a port the plan named before) that the plan does
    /// not want. Connections other clients made to the session's ports (a
    /// recorder tapping its outputs) stay.
    let drops: [PortConnection]
    /// The plan's connections to make, channel order, inputs first (one that
    /// is there already is made again: JACK takes that as success).
    let makes: [PortConnection]
    /// How many of `makes` were not there.
    let missing: Int

    /// - Parameters:
    ///   - inputs: the session's input ports, channel order, with their sources now.
    ///   - outputs: the session's output ports, with their destinations now.
    ///   - planInputs: the port each input is to be connected from.
    ///   - planOutputs: the port each output is to be connected to (nil: none).
    ///   - routedBefore: the ports the plan in force named.
    ///   - isPhysical: whether the server's port of that name is a hardware port.
    ///   - exists: with missing ports tolerated (a device going away), whether
    ///     the server has a port of that name; a connection to one it lacks is
    ///     not made. nil: every connection of the plan is made.
    init(inputs: [OwnPort], outputs: [OwnPort], planInputs: [String], planOutputs: [String?],
         routedBefore: Set<String>, isPhysical: (String) -> Bool, exists: ((String) -> Bool)? = nil) {
        let wanted = zip(planInputs, inputs).map { PortConnection(source: $0, destination: $1.name) }
            + zip(outputs, planOutputs).compactMap { port, destination in
                destination.map { PortConnection(source: port.name, destination: $0) }
            }
        let wantedSet = Set(wanted)
        func isRoute(_ name: String) -> Bool { routedBefore.contains(name) || isPhysical(name) }
        // Each connection there now, with the port at its other end.
        let current = inputs.flatMap { port in
            port.connections.map { (connection: PortConnection(source: $0, destination: port.name), other: $0) }
        } + outputs.flatMap { port in
            port.connections.map { (connection: PortConnection(source: port.name, destination: $0), other: $0) }
        }
        drops = current.filter { isRoute($0.other) && !wantedSet.contains($0.connection) }.map(\.connection)
        makes = wanted.filter { connection in
            exists.map { $0(connection.source) && $0(connection.destination) } ?? true
        }
        let before = Set(current.map(\.connection))
        missing = makes.count { !before.contains($0) }
    }
}
