import ArgumentParser
import Foundation
import RemoteWatch

/// `--http` and `--http-token` of `jas meter` and `jas record`: a page, a
/// WebSocket stream, Prometheus metrics and control routes (RemoteWatch).
struct HTTPOptions: ParsableArguments {
    @Option(name: .customLong("http"), help: ArgumentHelp(
        "Serve a live page (/), a WebSocket stream (/ws), Prometheus metrics (/metrics) and the state (/api/status) on ADDR:PORT (PORT alone: 127.0.0.1).",
        valueName: "addr:port"))
    var address: String?

    @Option(name: .customLong("http-token"), help: ArgumentHelp(
        "The token every route then asks for (the page, /ws, /metrics, /api/...): 'Authorization: Bearer TOKEN', Basic auth with TOKEN as password, or ?token=TOKEN once in a browser. Without it the control routes answer 403. Needed to listen on an address other machines reach.",
        valueName: "token"))
    var token: String?

    /// Starts the watch server before the command starts anything; exits
    /// with status 2 and the reason when it cannot (a bad address or token,
    /// a port in use). Says where it listens: a `http` event with --json,
    /// else a line on stderr. Its stop is a cleanup of the command's end.
    func start(_ board: WatchBoard, controls: WatchServer.Controls, command: String, json: Bool) async throws -> WatchServer? {
        guard let address else {
            if token != nil {
                Output.diagnostic("jas \(command): --http-token is for --http ADDR:PORT; give both, or neither")
                throw ExitCode(2)
            }
            return nil
        }
        let server: WatchServer
        var controls = controls
        controls.howToTurnOn = "start jas with --http-token TOKEN to use them"
        do throws(WatchError) {
            let parsed = try WatchAddress(parsing: address)
            server = try WatchServer(board: board, address: parsed, token: try token.map { token throws(WatchError) in
                try WatchToken(token)
            }, controls: controls)
            try await server.start()
        } catch {
            Output.diagnostic("jas \(command): \(error.description) (\(Self.option(for: error)))")
            throw ExitCode(2)
        }
        // Registered before the command's own cleanup, so it runs after it: viewers get the summary.
        Signals.onInterrupt { server.stopBlocking() }
        if json {
            Output.jsonEvent(Serving(url: server.url, control: token != nil))
        } else {
            Output.diagnostic("watch at \(server.url) (metrics: \(server.url)metrics)"
                              + (token == nil ? "" : "; control routes need the token"))
        }
        return server
    }

    /// The option that changes what a watch server's error names.
    private static func option(for error: WatchError) -> String {
        switch error {
        case .badAddress, .portInUse, .cannotListen: "--http"
        case .tokenRequired: "--http-token TOKEN, or --http 127.0.0.1:PORT"
        case .badToken: "--http-token"
        }
    }
}

/// Where a tool's watch is served, and whether its control routes are on (`--json`'s first line with `--http`).
struct Serving: Encodable {
    var event = "http"
    let url: String
    let control: Bool
}
