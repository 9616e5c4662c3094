import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The HTTP side of `--http`: the page, the WebSocket stream, the metrics,
/// the status and the control routes, served by Hummingbird on its own
/// event loops, never on the real-time thread and never waiting for the tool.
///
/// With a token, every route asks for it (`WatchAccess`: 401 without it);
/// without one, the control routes answer 403. `start` binds before the tool starts
/// anything, so a port in use is an error at once; `stop` ends the server
/// through its service group (swift-service-lifecycle), within a bound.
public final class WatchServer: Sendable {
    /// What the control routes do; nil: the route is not offered (404).
    public struct Controls: Sendable {
        public var resetLoudness: (@Sendable () -> Void)?
        public var pauseLoudness: (@Sendable () -> Void)?
        public var resumeLoudness: (@Sendable () -> Void)?
        public var stop: (@Sendable () -> Void)?
        /// What a control route's 403 says after "control routes are off: ",
        /// when no token was set: how whoever started the server turns them on.
        public var howToTurnOn = "this server was started without a token"
        public init() {}
    }

    public let board: WatchBoard
    public let address: WatchAddress
    let token: WatchToken?
    let controls: Controls
    private let group = Mutex<ServiceGroup?>(nil)
    private let running = Mutex<Task<Void, Never>?>(nil)
    /// The port the system gave (for port 0), once listening.
    private let boundPort = Atomic<Int>(0)

    /// Refuses a non-loopback address without a token (`WatchError.tokenRequired`).
    public init(board: WatchBoard, address: WatchAddress, token: WatchToken?, controls: Controls) throws(WatchError) {
        if !address.isLoopback && token == nil { throw .tokenRequired(address.description) }
        self.board = board
        self.address = address
        self.token = token
        self.controls = controls
    }

    /// The page's address once listening, e.g. `http://127.0.0.1:8080/`.
    public var url: String {
        let host = address.host.contains(":") ? "[\(address.host)]" : address.host
        return "http://\(host):\(boundPort.load(ordering: .acquiring))/"
    }

    /// Listens, or throws why it cannot (a port in use, an address this machine does not have).
    public func start() async throws(WatchError) {
        var logger = Logger(label: "jas.http") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .critical
        let ready = AsyncStream<Result<Int, WatchError>>.makeStream()
        let router = makeRouter()
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "jas"),
            onServerRunning: { channel in
                ready.continuation.yield(.success(channel.localAddress?.port ?? 0))
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        self.group.withLock { $0 = group }
        let where_ = address.description
        let task = Task {
            do {
                try await group.run()
                ready.continuation.yield(.failure(.cannotListen(where_, reason: "the server ended at once")))
            } catch {
                ready.continuation.yield(.failure(Self.explain(error, address: where_)))
            }
        }
        running.withLock { $0 = task }
        var iterator = ready.stream.makeAsyncIterator()
        switch await iterator.next() {
        case let .success(port)?:
            boundPort.store(port, ordering: .releasing)
        case let .failure(error)?:
            throw error
        case nil:
            throw .cannotListen(where_, reason: "the server ended at once")
        }
    }

    /// Ends the viewers' streams and the server, waiting at most `seconds`
    /// (a graceful shutdown waits for the connections open, and a viewer may
    /// keep one open as long as it likes).
    public func stop(within seconds: Double = 1) async {
        board.finish()
        if let group = group.withLock({ $0 }) { await group.triggerGracefulShutdown() }
        guard let task = running.withLock({ $0 }) else { return }
        let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let resume: @Sendable () -> Void = { waiting.withLock { $0?.resume(); $0 = nil } }
        await withCheckedContinuation { continuation in
            waiting.withLock { $0 = continuation }
            Task {
                await task.value
                resume()
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { resume() }
        }
    }

    /// `stop` for a caller that is not async (a signal's cleanup): blocks at most `seconds`.
    public func stopBlocking(within seconds: Double = 1) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await stop(within: seconds)
            done.signal()
        }
        _ = done.wait(timeout: .now() + seconds + 0.5)
    }

    private static func explain(_ error: any Error, address: String) -> WatchError {
        if let io = error as? IOError {
            if io.errnoCode == EADDRINUSE { return .portInUse(address) }
            if io.errnoCode == EADDRNOTAVAIL {
                return .cannotListen(address, reason: "this machine has no such address; give one of its own, or 0.0.0.0")
            }
            if io.errnoCode == EACCES {
                return .cannotListen(address, reason: "ports below 1024 need privileges; choose a port from 1024 up")
            }
            return .cannotListen(address, reason: String(cString: strerror(io.errnoCode)))
        }
        return .cannotListen(address, reason: "\(error)")
    }

    // MARK: Routes

    private func makeRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        // Before every route: with a token, reads ask for it as controls do.
        if let token { router.add(middleware: WatchAccess(token: token)) }
        let board = board
        router.get("/") { _, _ in
            Self.response(.ok, type: "text/html; charset=utf-8", WatchPage.html)
        }
        router.get("/metrics") { request, _ in
            board.metrics.setViewers(board.viewers)
            // OpenMetrics for a scraper that asks for it (Prometheus does), else the classic text format.
            let openMetrics = request.headers[.accept]?.contains("application/openmetrics-text") ?? false
            let format: MetricsExposition.Format = openMetrics ? .openMetrics : .text
            return Response(status: .ok, headers: [.contentType: format.contentType],
                            body: .init(byteBuffer: ByteBuffer(bytes: MetricsExposition.render(board.metrics.exposition(), as: format))))
        }
        router.get("/api/status") { _, _ in
            Self.response(.ok, type: "application/json", board.statusLine())
        }
        control(router, "/api/loudness/reset", controls.resetLoudness)
        control(router, "/api/loudness/pause", controls.pauseLoudness)
        control(router, "/api/loudness/resume", controls.resumeLoudness)
        control(router, "/api/stop", controls.stop)
        router.ws("/ws") { _, _ in
            .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            let lines = board.hub.subscribe()
            try await outbound.write(.text(board.statusLine()))
            // Until the viewer goes (its side of the socket ends) or the tool stops (the stream ends).
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    for try await _ in inbound {}
                }
                tasks.addTask {
                    for await line in lines { try await outbound.write(.text(line)) }
                }
                try await tasks.next()
                tasks.cancelAll()
            }
        }
        return router
    }

    private func control(_ router: Router<BasicWebSocketRequestContext>, _ path: RouterPath,
                         _ action: (@Sendable () -> Void)?) {
        guard let action else { return }
        let token = token, howToTurnOn = controls.howToTurnOn
        let name = path.description
        router.post(path) { _, _ in
            guard let token else {
                return Self.response(.forbidden, type: "application/json",
                                     Self.jsonError("control routes are off: " + howToTurnOn))
            }
            // Past WatchAccess, which asked for the token.
            _ = token
            // Off the event loop: a take's stop waits for its disk thread.
            DispatchQueue.global().async { action() }
            return Self.response(.ok, type: "application/json", #"{"ok":true,"done":"\#(name)"}"#)
        }
    }

    /// `{"error": message}`, the message escaped as JSON.
    private static func jsonError(_ message: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: ["error": message])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private static func response(_ status: HTTPResponse.Status, type: String, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
