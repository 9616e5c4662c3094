import Foundation

/// A small C program of the tests (a JACK client in a process of its own:
/// a device under test, a probe), compiled with cc against libjack once per
/// test process, and started so that it says `ready` once active.
public enum TestProgram {
    case clickProbe, polynomial, quantizer, iir, leakage

    private var source: (folder: String, file: String) {
        switch self {
        case .clickProbe: ("ClickProbe", "clickprobe.c")
        case .polynomial: ("DeviceUnderTest", "polynomial.c")
        case .quantizer: ("DeviceUnderTest", "quantizer.c")
        case .iir: ("DeviceUnderTest", "iir.c")
        case .leakage: ("DeviceUnderTest", "leakage.c")
        }
    }

    /// The program's binary, compiled with cc once per test process (removed when it exits).
    public func path() throws -> String {
        let (folder, file) = source
        return try CSourceBuild.once(folder: folder, file: file,
                                     output: "\(file.replacingOccurrences(of: ".c", with: ""))-\(getpid())") { source, output in
            ["-O2", "-o", output, source.path, "-ljack", "-lm"]
        }
    }

    /// Starts the program with `arguments` and waits for its `ready` line.
    public func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path())
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let ready = output.fileHandleForReading.readData(ofLength: 6)
        guard String(decoding: ready, as: UTF8.self) == "ready\n" else {
            process.terminate()
            throw NSError(domain: "TestProgram", code: 1,
                          userInfo: [NSLocalizedDescriptionKey: "\(source.file) did not start: \(arguments)"])
        }
        return process
    }
}
