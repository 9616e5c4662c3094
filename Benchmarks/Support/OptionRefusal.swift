import Foundation

/// What a benchmark says to an option it does not take: `--help` (or `-h`)
/// prints its usage and exits 0; anything else is named on standard error
/// with the usage, exit status 2: a usage error, not a crash with a backtrace.
public func refuseOption(_ flag: String, tool: String, usage: String) -> Never {
    if flag == "--help" || flag == "-h" {
        print(usage)
        exit(0)
    }
    FileHandle.standardError.write(Data("\(tool): unknown option \(flag)\n\(usage)\n".utf8))
    exit(2)
}
