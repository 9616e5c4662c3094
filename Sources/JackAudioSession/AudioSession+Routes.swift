import JackKit

extension AudioSession {
    /// The devices the session's audio goes through now; while inactive, the
    /// devices an activation would take (empty until the session has reached
    /// its server: `open()` or an activation).
    public var currentRoute: RouteDescription { board.read { $0.activation.plan.route }.linked(to: self) }

    /// The input devices on the server: empty under a category without input
    /// or on a server without any; nil while the session has not reached its
    /// server (nothing is known yet), as the seeds' `guard let` expects.
    public var availableInputs: [PortDescription]? {
        guard let client = openClient else { return nil }
        return RoutePlanner.availableInputs(DeviceCatalog(reading: client), category: category, options: categoryOptions)
            .map { $0.linked(to: self) }
    }

    /// Whether the server has any input device.
    public var isInputAvailable: Bool {
        guard let client = openClient else { return false }
        return !DeviceCatalog(reading: client).inputs.isEmpty
    }

    /// The input device the app prefers, if set.
    public var preferredInput: PortDescription? {
        let uid = board.read { $0.preferences.preferredInput }
        guard let uid, let client = openClient else { return nil }
        return DeviceCatalog(reading: client).input(uid)?.linked(to: self)
    }

    /// Prefers an input device; it must be one of `availableInputs` (`badParam`
    /// otherwise); nil clears the preference. While active the route follows at once.
    public func setPreferredInput(_ input: PortDescription?) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.setPreferredInput(input) }
    }

    /// Sends playAndRecord audio to the built-in speaker and microphone
    /// (`.speaker`: a device of that type, else the server's `system` ports)
    /// or back to the route rules (`.none`); posts a route change with reason
    /// `override`. As the Class Reference says, the override lasts "until the
    /// current route changes": a device that comes or goes ends it. Under any
    /// other category it is `badParam`.
    public func overrideOutputAudioPort(_ override: PortOverride) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.overrideOutputAudioPort(override) }
    }

    // MARK: Data sources

    /// The selectable inputs of the current input device (its banks: JACK
    /// port groups of one interface), or nil when there is nothing to switch.
    public var inputDataSources: [DataSourceDescription]? { currentRoute.inputs.first?.dataSources }

    /// The data source the current input uses (nil: no choice to make).
    public var inputDataSource: DataSourceDescription? { currentRoute.inputs.first?.selectedDataSource }

    /// Chooses one of `inputDataSources` (`badParam` for anything else; nil:
    /// the device's first bank); the route follows at once with a route
    /// change of reason `routeConfigurationChange`.
    public func setInputDataSource(_ source: DataSourceDescription?) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.setInputDataSource(source) }
    }

    /// Output data sources: JACK output banks are devices of their own (for
    /// multiRoute's distinct destinations), so there are none to switch: nil.
    public var outputDataSources: [DataSourceDescription]? { nil }

    /// Always nil (see `outputDataSources`).
    public var outputDataSource: DataSourceDescription? { nil }

    /// Chooses one of `outputDataSources`: as there are none, only nil is
    /// accepted (a no-op); any source is `badParam`, as the seeds say for a
    /// source not in that array.
    public func setOutputDataSource(_ source: DataSourceDescription?) throws(AudioSessionError) {
        if let source {
            throw AudioSessionError(.badParam, "'\(source.dataSourceName)' is not an output data source: outputs have "
                                        + "none here (an interface's output banks are devices of their own, in currentRoute.outputs)")
        }
    }

    /// `device.setPreferredDataSource(source)` of a description read from this session.
    func setPreferredDataSource(_ source: DataSourceDescription?, of device: PortDescription) throws(AudioSessionError) {
        try core.sync { core throws(AudioSessionError) in try core.setPreferredDataSource(source, of: device.uid) }
    }

    /// `source.setPreferredPolarPattern(pattern)` of a description read from this session.
    func setPreferredPolarPattern(_ pattern: PolarPattern?, of source: DataSourceDescription) throws(AudioSessionError) {
        if let pattern, !(source.supportedPolarPatterns ?? []).contains(pattern) {
            throw AudioSessionError(.badParam, "data source '\(source.dataSourceName)' cannot switch to \(pattern.rawValue)"
                                        + (source.supportedPolarPatterns.map { " (it has " + $0.map(\.rawValue).joined(separator: ", ") + ")" }
                                           ?? " (it has no polar patterns to choose from)"))
        }
        guard let client = openClient, !client.isClosed else {
            throw AudioSessionError(.mediaServicesFailed, "the session has not reached its server: nothing to ask the device")
        }
        for channel in source.channels {
            guard let port = client.port(named: channel.jackPort) else {
                throw AudioSessionError(.badParam, "\(channel.jackPort) of data source '\(source.dataSourceName)' is gone")
            }
            do throws(JackError) {
                if let pattern {
                    try client.setProperty(DataSourceTraits.preferredPolarPatternKey, value: pattern.rawValue, on: port.uuid)
                } else if client.property(DataSourceTraits.preferredPolarPatternKey, on: port.uuid) != nil {
                    try client.removeProperty(DataSourceTraits.preferredPolarPatternKey, on: port.uuid)
                }
            } catch {
                throw AudioSessionError(.mediaServicesFailed, "cannot set the preferred polar pattern on \(channel.jackPort): "
                                            + error.description, cause: error)
            }
        }
        scheduleRouteRefresh()
    }
}
