/// What the commands that measure say about the period they ran at: a
/// running server keeps its own unless `--period` asked for another, and
/// then every client on it runs at the new one.
enum PeriodNote {
    static func text(spawned: Bool, requested: Int?) -> String {
        if spawned { return "" }
        guard let requested else { return ", the server's own (--period changes it)" }
        return ", requested with --period \(requested): every client on this server now runs at it"
    }
}
