import Foundation
import XCTest

extension JackTestCase {
    /// A tmpfs of `megabytes` mounted on a new folder (skips the test where
    /// mounting is not allowed); `unmountSmallDisk` takes it away.
    public func mountSmallDisk(megabytes: Int) throws -> String {
        let mountPoint = temporaryFolder()
        guard try run(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint]).status == 0 else {
            try? FileManager.default.removeItem(atPath: mountPoint)
            throw XCTSkip("cannot mount a small tmpfs here (needs root)")
        }
        return mountPoint
    }

    public func unmountSmallDisk(_ mountPoint: String) {
        _ = try? run(["umount", mountPoint])
        try? FileManager.default.removeItem(atPath: mountPoint)
    }
}
