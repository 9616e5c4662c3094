/// A test's set-up that did not come about (a kill that did not leave the
/// lock it was to leave): thrown, the test fails and says why; it does not
/// skip, so no run passes without checking what the test names.
public struct SetupDidNotHold: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
