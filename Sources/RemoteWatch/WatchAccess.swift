import Foundation
import HTTPTypes
import Hummingbird

/// With a token set, every route asks for it, reads as well as controls:
/// the meters, the state and the metrics say what a studio or a station is
/// airing, which is nobody else's business. The token is taken as
///
/// * `Authorization: Bearer TOKEN` (curl, Prometheus' `authorization`),
/// * `Authorization: Basic` with the token as password, any user name
///   (Prometheus' `basic_auth`, a browser's login dialog),
/// * `?token=TOKEN` in the address (a browser opening the page once: the
///   answer sets it as a cookie, `HttpOnly`, `SameSite=Strict`),
/// * that cookie (the page's WebSocket and its later loads).
///
/// Anything else is 401 with the ways to give it. Without a token nothing
/// here applies: the server listens on loopback only, and its control routes are off.
struct WatchAccess<Context: RequestContext>: RouterMiddleware {
    let token: WatchToken
    static var cookieName: String { "jas_token" }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let fromQuery = request.uri.queryParameters["token"].map(String.init)
        guard accepts(request, fromQuery: fromQuery) else { return Self.refusal(for: request) }
        var response = try await next(request, context)
        if let fromQuery, token.matches(fromQuery) {
            response.headers[.setCookie] = "\(Self.cookieName)=\(token.value); Path=/; HttpOnly; SameSite=Strict"
        }
        return response
    }

    private func accepts(_ request: Request, fromQuery: String?) -> Bool {
        if let fromQuery, token.matches(fromQuery) { return true }
        if token.accepts(authorization: request.headers[.authorization]) { return true }
        if let header = request.headers[.authorization], header.hasPrefix("Basic "),
           let decoded = Data(base64Encoded: String(header.dropFirst("Basic ".count))),
           let credentials = String(data: decoded, encoding: .utf8), let colon = credentials.firstIndex(of: ":"),
           token.matches(String(credentials[credentials.index(after: colon)...])) {
            return true
        }
        for cookie in request.headers[values: .cookie].flatMap({ $0.split(separator: ";") }) {
            let pair = cookie.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(Self.cookieName + "="), token.matches(String(pair.dropFirst(Self.cookieName.count + 1))) {
                return true
            }
        }
        return false
    }

    /// 401, saying how to give the token: a page for a browser, JSON for a program.
    static func refusal(for request: Request) -> Response {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .wwwAuthenticate, value: "Bearer realm=\"jas\""))
        fields.append(HTTPField(name: .wwwAuthenticate, value: "Basic realm=\"jas (the token is the password)\""))
        let wantsPage = request.uri.path == "/" && (request.headers[.accept] ?? "").contains("text/html")
        if wantsPage {
            fields[.contentType] = "text/html; charset=utf-8"
            let page = "<!doctype html><title>jas: token needed</title><p>This jas watch asks for its token: open "
                + "<code>/?token=TOKEN</code> once (the browser keeps it as a cookie), or give it as the password.</p>"
            return Response(status: .unauthorized, headers: fields, body: .init(byteBuffer: ByteBuffer(string: page)))
        }
        fields[.contentType] = "application/json"
        let message = #"{"error":"this server asks for its token: Authorization: Bearer TOKEN, Basic auth with the token "#
            + #"as password, or ?token=TOKEN"}"#
        return Response(status: .unauthorized, headers: fields, body: .init(byteBuffer: ByteBuffer(string: message)))
    }
}
