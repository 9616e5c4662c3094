/// Where a client's lifecycle is run: the layer above JackKit that makes
/// libjack's process-wide calls safe (JackRuntime's `ClientLifecycle`). A
/// `Client` is made by that layer and keeps it: its deactivation, its close
/// and its metadata calls go through it, and it hears when the client's
/// server went away. JackKit itself only makes the C calls (`ClientTeardown`).
package protocol ClientLane: Sendable {
    /// A client was opened: `client` is what closing it will take.
    func opened(_ client: ClientTeardown)
    /// Closes a client whose close has begun (`ClientTeardown.beginClose`).
    func close(_ client: ClientTeardown) -> ClientCloseOutcome
    /// Runs a deactivation (`body` calls `jack_deactivate`).
    func deactivate(_ client: ClientTeardown,
                    _ body: @escaping @Sendable () -> Result<Int32, JackError>) throws(JackError) -> Result<Int32, JackError>
    /// Runs a metadata call (`body` calls libjack's metadata API); nil when it could not run.
    func metadataCall<T>(_ what: String, _ body: @escaping @Sendable () -> T?) -> T?
    /// A client's shutdown callback ran: its server went away.
    func serverWentAway()
}
