import Glibc
import SystemPackage

extension Errno {
    /// What a descriptor call threw, as an `Errno` (anything else is an I/O error).
    package static func of(_ error: any Error) -> Errno { error as? Errno ?? .ioError }

    /// The C library's sentence for it ("No space left on device").
    package var sentence: String { String(cString: strerror(rawValue)) }
}
