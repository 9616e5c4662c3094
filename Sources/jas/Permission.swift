import ArgumentParser
import JackAudioSession
import Foundation
import Synchronization

/// `jas permission`: the record-permission decisions of this machine's user.
struct Permission: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Grant, deny, reset or show record permission per application (no dialog on a headless machine).",
        subcommands: [Grant.self, Deny.self, Reset.self, Show.self, Request.self]
    )

    struct Grant: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let APP record.")
        @Argument(help: "The application name.") var app: String
        func run() throws { try Permission.set(.granted, app) }
    }

    struct Deny: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give APP only silence when it records.")
        @Argument(help: "The application name.") var app: String
        func run() throws { try Permission.set(.denied, app) }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget the decision: APP will be asked again.")
        @Argument(help: "The application name.") var app: String
        func run() throws { try Permission.set(.undetermined, app) }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the decision for APP, or all decisions.")
        @Argument(help: "The application name.") var app: String?
        @Flag(help: "Print JSON Lines.") var json = false

        func run() throws {
            let store = RecordPermissionStore()
            if let damage = store.damage {
                Output.diagnostic("jas permission: \(damage); until then no application may record")
            }
            let rows = app.map { [($0, store.permission(for: $0))] }
                ?? store.decisions().sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            for (app, permission) in rows {
                if json {
                    Output.jsonLine(PermissionLine(app: app, permission: permission.rawValue))
                } else {
                    Output.line("\(app): \(permission.rawValue)")
                }
            }
        }
    }

    struct Request: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask on this terminal whether APP may record, as its session would (an answer already given stands).")
        @Argument(help: "The application name.") var app: String
        @OptionGroup var server: ServerOption

        func run() throws {
            let session = AudioSession(clientName: "jas-permission", serverName: server.name, applicationName: app)
            session.setRecordPermissionPrompt { application, server in
                guard isatty(STDIN_FILENO) != 0 else { return nil }
                Output.diagnostic("Allow '\(application)' to record audio from JACK server '\(server)'? [y/N] ", newline: false)
                let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
                return answer == "y" || answer == "yes"
            }
            let answered = DispatchSemaphore(value: 0)
            let granted = Mutex(false)
            session.requestRecordPermission { allowed in
                granted.withLock { $0 = allowed }
                answered.signal()
            }
            answered.wait()
            let permission = session.recordPermission
            Output.line("\(app): \(permission.rawValue)" + (permission == .undetermined ? " (no terminal to ask on; "
                        + "`jas permission grant \(app)` or `deny` decides)" : ""))
            if !granted.withLock({ $0 }) { throw ExitCode(1) }
        }
    }

    static func set(_ permission: RecordPermission, _ app: String) throws {
        let store = RecordPermissionStore()
        do {
            try store.set(permission, for: app)
        } catch {
            let reason = Output.reason(error)
            Output.diagnostic("jas permission: cannot record the decision: \(reason)")
            throw ExitCode(2)
        }
        Output.line("\(app): \(permission.rawValue) (\(store.path))")
    }
}

/// One application's record permission, as `jas permission --json` lists it.
struct PermissionLine: Encodable {
    let app: String
    let permission: String
}
