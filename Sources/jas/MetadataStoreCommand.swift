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
            A program killed inside it can also leave one of its locks held: every JACK program that opens it \
            then hangs, jackd too. \
            `check` says whether it is whole (exit status 0), damaged or locked (1), and which programs use it; \
            a lock that only an open meets is found by a probe, a jas process of its own that opens the store \
            (about 2 s when it is locked). \
            `repair` removes a damaged store only when no JACK program of the user uses it, and a locked one \
            (JACK makes it anew); run it before a logger starts (the shipped systemd unit does).
            """,
        subcommands: [Check.self, Repair.self, Probe.self]
    )

    /// How the library runs an open in a process of its own: this command's hidden `probe`.
    static let probe = ["/proc/self/exe", "metadata-store", "probe"]

    /// Programs as the output names them: "jackd (pid 123), jack_lsp (pid 456)".
    static func named(_ programs: [(pid: Int32, command: String)]) -> String {
        programs.map { "\($0.command) (pid \($0.pid))" }.joined(separator: ", ")
    }

    /// `jas metadata-store probe`: the probe's process (`MetadataStore.runOpenProbe`).
    struct Probe: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open the store as a JACK program does, in this process (what check and repair run).",
            shouldDisplay: false)

        func run() throws {
            MetadataStore.runOpenProbe()
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say whether the store is whole, and who uses it.")
        @Flag(help: "One JSON object.") var json = false

        func run() throws {
            let store = MetadataStore()
            let damage = store.condition(probe: MetadataStoreCommand.probe)
            let users = store.users()
            if json {
                Output.jsonLine(StoreState(path: store.path, damaged: damage != nil, locked: damage?.isLock == true,
                                           reason: damage?.reason, usedBy: users.map { "\($0.command) (pid \($0.pid))" }))
            } else {
                Output.line(damage.map { "\($0); `jas metadata-store repair` removes it" } ?? "\(store.path): whole (or absent)")
                if !users.isEmpty { Output.line("used by " + MetadataStoreCommand.named(users)) }
            }
            if damage != nil { throw ExitCode.failure }
        }
    }

    struct Repair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the store if it is damaged and no JACK program of this user uses it.")

        func run() throws {
            let store = MetadataStore()
            let repair: MetadataStore.Repair
            do {
                repair = try store.repair(probe: MetadataStoreCommand.probe)
            } catch {
                Output.diagnostic("jas metadata-store repair: cannot remove '\(store.path)': \(Output.reason(error))")
                throw ExitCode(2)
            }
            switch repair {
            case .nothingToRepair:
                Output.line("\(store.path): whole (or absent); nothing to repair")
            case let .inUse(damage, users):
                Output.diagnostic("jas metadata-store repair: \(damage), but it is in use by " + MetadataStoreCommand.named(users)
                                  + "; stop them (a jackd that does not stop: kill -KILL), then repair again")
                throw ExitCode(2)
            case let .removed(damage, asleep, running):
                Output.line("removed the \(damage.isLock ? "locked" : "damaged") store \(store.path) (\(damage.reason)); "
                            + "JACK makes it anew at the next start")
                if !asleep.isEmpty {
                    Output.line("still asleep on the removed store, for good: " + MetadataStoreCommand.named(asleep)
                        + "; kill them: kill -KILL " + asleep.map { String($0.pid) }.joined(separator: " "))
                }
                if !running.isEmpty {
                    Output.line("still using the removed store: " + MetadataStoreCommand.named(running)
                        + "; programs started from now on use a new one and do not see the "
                        + "metadata these set, and each will sleep on the same lock when it closes the store (a clean "
                        + "stop that hangs: kill -KILL it); restart them when you can")
                }
            }
        }
    }

    /// What `check --json` prints.
    struct StoreState: Encodable {
        let path: String
        let damaged: Bool
        /// Damaged by a lock left held, not by its files.
        let locked: Bool
        let reason: String?
        let usedBy: [String]
    }
}
