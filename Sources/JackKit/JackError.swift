import CJack

/// What went wrong in a libjack call, with the C status or return code kept and
/// a message that says which server, client or port, and what to do about it.
public enum JackError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No JACK server with this name is running (libjack status bits in `status`; 0: found without libjack).
    case serverNotRunning(server: String, status: UInt32)
    /// The server is running but refused to open the client.
    case clientOpenFailed(client: String, server: String, status: UInt32)
    /// The client has been closed; nothing can be done with it any more.
    case clientClosed(client: String)
    /// `jack_activate` or `jack_deactivate` failed.
    case activationFailed(client: String, code: Int32)
    /// A port could not be registered (name taken, too long, or server full).
    case portRegistrationFailed(port: String, client: String)
    /// No port by this full name exists on the server.
    case portNotFound(port: String, server: String)
    /// `jack_connect` failed for a reason other than "already connected".
    case connectionFailed(source: String, destination: String, code: Int32)
    /// `jack_disconnect` failed.
    case disconnectionFailed(source: String, destination: String, code: Int32)
    /// The server refused a period-size request (fixed-size backends do).
    case bufferSizeRefused(frames: Int, server: String, code: Int32)
    /// A metadata call failed.
    case propertyFailed(key: String, subject: String, code: Int32)
    /// A callback could not be installed.
    case callbackRegistrationFailed(callback: String, code: Int32)
    /// libjack is stuck in this process (a close that never returned): no
    /// client can be opened or closed in it any more.
    case libraryWedged(reason: String)
    /// A client or server name libjack cannot take (checked before calling it:
    /// libjack aborts the process on some).
    case invalidName(kind: String, name: String, reason: String)
    /// The server's jackd is stopped (SIGSTOP, Ctrl-Z, a debugger): found
    /// before an open, which would never return (JackRuntime's `checkedOpen`).
    case serverStopped(server: String, pid: Int32)
    /// JACK's metadata store at `path` is damaged (`reason`): libjack would
    /// die of SIGBUS opening it (found before an open: JackRuntime's
    /// `MetadataStore`, through `checkedOpen`).
    case metadataStoreDamaged(path: String, reason: String)
    /// JACK's metadata store at `path` is held locked for good (`reason`:
    /// who sleeps on which lock): a program killed inside it left a lock
    /// held, and every JACK program that opens it hangs, jackd too.
    case metadataStoreLocked(path: String, reason: String)

    /// The metadata store is damaged or left locked (found before an open, or by one).
    public var isMetadataStoreProblem: Bool {
        switch self {
        case .metadataStoreDamaged, .metadataStoreLocked: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case let .metadataStoreDamaged(path, reason):
            return "JACK's metadata store '\(path)' is damaged (\(reason)): libjack dies of SIGBUS opening it, and so would every JACK program of this user, "
                + "jackd too; stop the JACK programs of this user and remove that folder (JACK makes it anew)"
        case let .metadataStoreLocked(path, reason):
            return "JACK's metadata store '\(path)' is locked by a program killed inside it (\(reason)): every JACK program "
                + "of this user hangs opening it, jackd too; remove that folder (JACK makes it anew) and kill the programs "
                + "asleep on it (kill -KILL: they never wake)"
        case let .serverNotRunning(server, status):
            let evidence = status == 0 ? "no jackd serves that name" : "libjack status 0x\(String(status, radix: 16))"
            return "no JACK server named '\(server)' is running (\(evidence)); "
                + "start one, e.g. `jackd -n \(server) -d dummy -r 48000 -p 256`, or name a running one"
        case let .clientOpenFailed(client, server, status):
            return "JACK server '\(server)' refused client '\(client)' (libjack status 0x\(String(status, radix: 16))\(Self.statusWords(status))); "
                + "check the server log and that the client name is not taken"
        case let .clientClosed(client):
            return "JACK client '\(client)' is closed; open a new one"
        case let .activationFailed(client, code):
            return "JACK could not (de)activate client '\(client)' (error \(code)); is the server still running?"
        case let .portRegistrationFailed(port, client):
            return "JACK could not register port '\(port)' on client '\(client)'; the name may be taken or too long, or the server has no free ports (jackd -p)"
        case let .portNotFound(port, server):
            return "no port named '\(port)' on JACK server '\(server)'; `jack_lsp -s \(server)` lists them"
        case let .connectionFailed(source, destination, code):
            return "JACK could not connect '\(source)' to '\(destination)' (error \(code)); the first must be an output and the second an input of the same type"
        case let .disconnectionFailed(source, destination, code):
            return "JACK could not disconnect '\(source)' from '\(destination)' (error \(code))"
        case let .bufferSizeRefused(frames, server, code):
            return "JACK server '\(server)' refused a period of \(frames) frames (error \(code)); its backend may have a fixed period, restart it with -p \(frames)"
        case let .propertyFailed(key, subject, code):
            return "JACK metadata call for key '\(key)' on subject \(subject) failed (error \(code))"
        case let .callbackRegistrationFailed(callback, code):
            return "JACK refused to install the \(callback) callback (error \(code)); callbacks must be set before activation"
        case let .libraryWedged(reason):
            return reason
        case let .invalidName(kind, name, reason):
            let shown = name.count > 40 ? String(name.prefix(40)) + "…" : name
            return "the JACK \(kind) name '\(shown)' cannot be used: \(reason)"
        case let .serverStopped(server, pid):
            return "JACK server '\(server)' (jackd, PID \(pid)) is stopped (SIGSTOP, Ctrl-Z or a debugger); no client can "
                + "reach it until it runs again: `kill -CONT \(pid)`"
        }
    }

    static func statusWords(_ status: UInt32) -> String {
        let names: [(UInt32, String)] = [
            (JackFailure.rawValue, "failure"), (JackInvalidOption.rawValue, "invalid option"),
            (JackNameNotUnique.rawValue, "name not unique"), (JackServerStarted.rawValue, "server started"),
            (JackServerFailed.rawValue, "server failed"), (JackServerError.rawValue, "server error"),
            (JackNoSuchClient.rawValue, "no such client"), (JackLoadFailure.rawValue, "load failure"),
            (JackInitFailure.rawValue, "init failure"), (JackShmFailure.rawValue, "shared memory failure"),
            (JackVersionError.rawValue, "protocol version mismatch"), (JackBackendError.rawValue, "backend error"),
            (JackClientZombie.rawValue, "client zombie"),
        ]
        let words = names.filter { status & $0.0 != 0 }.map(\.1)
        return words.isEmpty ? "" : ": " + words.joined(separator: ", ")
    }
}
