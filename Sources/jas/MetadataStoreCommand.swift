import ArgumentParser
import JackKit
import JackRuntime

/// `jas metadata-store`: check JACK's metadata store, and remove a damaged
/// one when no JACK program of the user uses it.
struct MetadataStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metadata-store",
        abstract: "Check JACK's metadata store (/dev/shm/jack_db-UID) and repair a damaged one.",
        discussion: """
            libjack opens this Berkeley DB environment in every JACK program; one left damaged by killed programs \
            (an empty region file) makes every JACK program of the user die of SIGBUS at start, jackd too. \
            `check` says whether it is whole (exit status 0) or damaged (1), and which programs use it. \
            `repair` removes a damaged store, only when no JACK program of the user uses it (JACK makes it anew); \
            run it before a logger starts (the README's systemd unit does).
            """,
        subcommands: [Check.self, Repair.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say whether the store is whole, and who uses it.")
        @Flag(help: "One JSON object.") var json = false

        func run() throws {
            let store = MetadataStore()
            let damage = store.damage()
            let users = store.users()
            if json {
                Output.jsonLine(StoreState(path: store.path, damaged: damage != nil, reason: damage?.reason,
                                           usedBy: users.map { "\($0.command) (pid \($0.pid))" }))
            } else {
                Output.line(damage.map { "\($0); `jas metadata-store repair` removes it" } ?? "\(store.path): whole (or absent)")
                if !users.isEmpty {
                    Output.line("used by " + users.map { "\($0.command) (pid \($0.pid))" }.joined(separator: ", "))
                }
            }
            if damage != nil { throw ExitCode.failure }
        }
    }

    struct Repair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the store if it is damaged and no JACK program of this user uses it.")

        func run() throws {
            let store = MetadataStore()
            guard let damage = store.damage() else {
                Output.line("\(store.path): whole (or absent); nothing to repair")
                return
            }
            let users = store.users()
            guard users.isEmpty else {
                Output.diagnostic("jas metadata-store repair: \(damage), but it is in use by "
                                  + users.map { "\($0.command) (pid \($0.pid))" }.joined(separator: ", ")
                                  + "; stop them (a jackd that does not stop: kill -KILL), then repair again")
                throw ExitCode(2)
            }
            do {
                try store.remove()
            } catch {
                Output.diagnostic("jas metadata-store repair: cannot remove '\(store.path)': \(Output.reason(error))")
                throw ExitCode(2)
            }
            Output.line("removed the damaged store \(store.path) (\(damage.reason)); JACK makes it anew at the next start")
        }
    }

    /// What `check --json` prints.
    struct StoreState: Encodable {
        let path: String
        let damaged: Bool
        let reason: String?
        let usedBy: [String]
    }
}
