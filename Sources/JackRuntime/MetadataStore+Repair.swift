/// When a metadata store may be repaired (removed, for JACK to make anew),
/// and what is left to say afterwards: the library's rule, which
/// `jas metadata-store` only carries out and prints.
extension MetadataStore {
    /// A program as the store's users are listed: its process id and command.
    public typealias User = (pid: Int32, command: String)

    /// What a repair did.
    public enum Repair: Sendable {
        /// The store is whole (or absent): nothing was removed.
        case nothingToRepair
        /// The files are damaged but programs use them: nothing was removed;
        /// they must stop first.
        case inUse(Damage, by: [User])
        /// The store was removed. For a lock left held: the programs asleep
        /// on it for good (to be killed), and those still using the removed
        /// store (to be restarted when they can).
        case removed(Damage, asleep: [User], running: [User])
    }

    /// The store's damage, or else a lock left held that programs sleep on
    /// now, or else one an open meets (`probe`: the command that runs
    /// `runOpenProbe` in a process of its own).
    public func condition(probe: [String]) -> Damage? {
        damage() ?? lockLeftHeld() ?? lockMetByAnOpen(probe: probe)
    }

    /// Repairs the store if it may be: a locked one always (the programs
    /// asleep on it never wake), a damaged one only when no program of the
    /// user uses it. Throws what removing it threw.
    public func repair(probe: [String]) throws -> Repair {
        if damage() == nil, let lock = lockLeftHeld() ?? lockMetByAnOpen(probe: probe) {
            let running = runningUsers(besides: 0)   // pid 0: no program is set apart
            let asleep = users().filter { user in !running.contains { $0.pid == user.pid } }
            try remove()
            return .removed(lock, asleep: asleep, running: running)
        }
        guard let damage = damage() else { return .nothingToRepair }
        let users = users()
        guard users.isEmpty else { return .inUse(damage, by: users) }
        try remove()
        return .removed(damage, asleep: [], running: [])
    }
}
