import JackKit

extension Client {
    /// Makes `processor` this client's real-time process callback: its
    /// trampoline, handed the processor's cycle block. Call once, before `activate()`.
    public func setProcessor(_ processor: RealtimeProcessor) throws(JackError) {
        processor.touchBeforeActivation()
        try setProcessCallback(processTrampoline, argument: processor.callbackArgument, keepingAlive: processor)
    }
}
