import JackKit
import JackRuntime

/// The render work of a session that has no render block: silent outputs.
/// Real-time code: checked by the compiler for allocation and locks.
@_noAllocation @_noLocks
func renderSilence(_ cycle: ProcessCycle) {
    for buffer in cycle.outputs {
        buffer.update(repeating: 0, count: cycle.frameCount)
    }
}
