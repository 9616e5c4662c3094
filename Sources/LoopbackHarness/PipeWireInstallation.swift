import Foundation

/// Where a PipeWire daemon, its tools and its libjack come from: the system's
/// packages, or Debian packages unpacked into a folder (`dpkg -x`), such as
/// bookworm-backports' 1.4 beside bookworm's 0.3.65, which tests run without
/// installing over the system's.
public struct PipeWireInstallation: Sendable, CustomStringConvertible {
    /// The folder the packages were unpacked into; nil: the system's.
    public let root: String?

    /// The system's (`/usr/bin/pipewire`, clients under `pw-jack`).
    public static let system = PipeWireInstallation(root: nil)

    /// Packages unpacked into `root` (it holds `usr/bin/pipewire` and `usr/lib/TRIPLET/…`).
    public init(root: String?) {
        self.root = root
    }

    /// `$JAS_PIPEWIRE_ROOT` when it is set (`make pipewire-lane` sets it), else the system's.
    public static var fromEnvironment: PipeWireInstallation {
        PipeWireInstallation(root: ProcessInfo.processInfo.environment["JAS_PIPEWIRE_ROOT"].flatMap { $0.isEmpty ? nil : $0 })
    }

    public var description: String { root.map { "PipeWire unpacked in \($0)" } ?? "the system's PipeWire" }

    /// A program of the installation (`pipewire`, `pw-cli`, `pw-jack`).
    public func executable(_ name: String) -> String? {
        guard let root else { return LoopbackServer.findExecutable(name) }
        let path = root + "/usr/bin/" + name
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// The folder with `libpipewire-0.3.so.0` (`usr/lib/x86_64-linux-gnu`, …).
    var libraryDirectory: String? {
        guard let root else { return nil }
        let lib = root + "/usr/lib"
        let triplets = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return triplets.map { lib + "/" + $0 }.first { FileManager.default.fileExists(atPath: $0 + "/libpipewire-0.3.so.0") }
    }

    /// What the daemon and its clients need to load this installation's
    /// libraries, SPA plugins, modules and configuration, and, for JACK
    /// clients, its libjack before jackd2's (what `pw-jack` does for the system's).
    public var environment: [String: String] {
        guard let root, let lib = libraryDirectory else { return [:] }
        return ["LD_LIBRARY_PATH": "\(lib)/pipewire-0.3/jack:\(lib)", "SPA_PLUGIN_DIR": "\(lib)/spa-0.2",
                "PIPEWIRE_MODULE_DIR": "\(lib)/pipewire-0.3", "PIPEWIRE_CONFIG_DIR": "\(root)/usr/share/pipewire"]
    }

    /// `arguments` as a JACK client of this installation: under `pw-jack`
    /// for the system's; as they are for an unpacked one, whose
    /// `environment` already puts its libjack first.
    public func jackClient(_ arguments: [String]) -> [String] {
        root == nil ? [executable("pw-jack") ?? "pw-jack"] + arguments : arguments
    }

    /// Why it cannot run: a missing program or library (nil: it can).
    var problem: String? {
        for program in root == nil ? ["pipewire", "pw-jack", "pw-cli"] : ["pipewire", "pw-cli"] where executable(program) == nil {
            return "\(program) not found in \(self): " + (root == nil ? "install pipewire, pipewire-bin and pipewire-jack "
                + "(`make deps` does)" : "unpack pipewire, pipewire-bin, pipewire-jack and their libraries there (`make pipewire-1.4` does)")
        }
        if root != nil, libraryDirectory == nil { return "no libpipewire-0.3.so.0 under \(root!)/usr/lib" }
        return nil
    }
}
