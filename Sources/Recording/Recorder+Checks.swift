import Foundation
import JackRuntime
import SystemPackage

/// What is checked before anything of a take starts: its settings, and its
/// destination (the folder, a FIFO, the free space).
extension Recorder {
    static func checkParameters(_ config: Configuration) throws(RecordingError) {
        if let channels = config.channels, channels < 1 { throw .invalidSetting(.channels, reason: "must be at least 1, not \(channels)") }
        if let duration = config.duration, !(duration.isFinite && duration > 0 && duration <= 31_536_000) {
            throw .invalidSetting(.duration, reason: "must be more than 0 to 31536000 seconds (a year), not \(duration)")
        }
        for (setting, seconds) in [(RecordingSetting.rotation, config.rotateSeconds), (.buffer, config.bufferSeconds),
                                   (.preroll, config.prerollSeconds), (.silenceHold, config.silenceHoldSeconds)] {
            guard let seconds, let range = setting.secondsRange, !range.contains(seconds) else { continue }
            throw .invalidSetting(setting, reason: "must be \(Self.spoken(range.lowerBound)) to \(Self.spoken(range.upperBound)) "
                                  + "seconds, not \(seconds)")
        }
        if let trigger = config.triggerDBFS, !(trigger < 0 && trigger > -200) {
            throw .invalidSetting(.trigger, reason: "must be a level below 0 dBFS (e.g. -40), not \(trigger)")
        }
        guard config.silenceThresholdDBFS < 0 && config.silenceThresholdDBFS > -200 else {
            throw .invalidSetting(.silenceThreshold, reason: "must be a level below 0 dBFS (e.g. -60), not \(config.silenceThresholdDBFS)")
        }
        for (setting, command) in [(RecordingSetting.onSilence, config.onSilence), (.onSignal, config.onSignal)]
        where command?.trimmingCharacters(in: .whitespaces).isEmpty == true {
            throw .invalidSetting(setting, reason: "is empty; give a command, e.g. 'logger dead air'")
        }
        if config.prerollSeconds > 0 && config.triggerDBFS == nil && !config.waitsForStartCommand {
            throw .invalidSetting(.preroll, reason: "needs a start that comes later: a trigger or a start command")
        }
    }

    /// A bound in seconds as a message writes it: 600, 0.1, 86400 (a day).
    private static func spoken(_ seconds: Double) -> String {
        let number = seconds == seconds.rounded() ? String(Int64(seconds)) : String(seconds)
        return number + (seconds == 86_400 ? " (a day)" : seconds == 31_536_000 ? " (a year)" : "")
    }

    static func isFIFO(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
    }

    /// `folder`, or its nearest ancestor that exists.
    static func existingFolder(_ folder: String) -> String {
        var existing = folder
        while !FileManager.default.fileExists(atPath: existing) && existing != "/" && existing != "." {
            let parent = (existing as NSString).deletingLastPathComponent
            existing = parent.isEmpty ? "." : parent
        }
        return existing
    }

    /// Checks the output path (folder exists and is writable, not a folder
    /// itself; a FIFO only for FLAC) and the free space; returns an open
    /// descriptor when the destination is a FIFO.
    static func checkDestination(_ config: Configuration, path: String, channels: Int,
                                 sampleRate: Int) throws(RecordingError) -> FileDescriptor? {
        let folder = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue {
            throw .unwritablePath(path: path, reason: "it is a folder")
        }
        // The folders the pattern names by time (one per day) are made as
        // needed; those before them must exist (a mistyped folder is not made).
        let patternFolder = (config.outputPath as NSString).deletingLastPathComponent
        var fixed = folder
        if patternFolder.contains("%") {
            let components = (patternFolder as NSString).pathComponents.prefix { !$0.contains("%") }
            fixed = components.isEmpty ? "." : NSString.path(withComponents: Array(components))
        }
        guard FileManager.default.fileExists(atPath: fixed, isDirectory: &isFolder), isFolder.boolValue else {
            throw .unwritablePath(path: path, reason: "the folder '\(fixed)' does not exist")
        }
        let existing = existingFolder(folder)
        guard FileManager.default.fileExists(atPath: existing, isDirectory: &isFolder), isFolder.boolValue else {
            throw .unwritablePath(path: path, reason: "'\(existing)' is not a folder")
        }
        guard access(existing, W_OK) == 0 else {
            throw .unwritablePath(path: path, reason: existing == folder ? "no permission to write in '\(folder)'"
                                  : "no permission to make the folder '\(folder)' in '\(existing)'")
        }
        var status = stat()
        if stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO {
            guard config.rotateSeconds == nil else { throw .pipeOutput(path: path, rotates: true) }
            guard config.format.container == .flac, !config.perChannelFiles else { throw .pipeOutput(path: path, rotates: false) }
            do {
                return try FileDescriptor.open(path, .writeOnly, options: .closeOnExec)
            } catch {
                throw .unwritablePath(path: path, reason: Errno.of(error).sentence)
            }
        }
        guard let space = FreeSpace(folder: existing) else { return nil }
        // With --for, the whole recording; without, at least one minute. A
        // logger that deletes its own files needs its next file and the room it keeps free.
        func room(_ seconds: Double) -> Int64 {
            FreeSpace.bytes(seconds: seconds, sampleRate: sampleRate, channels: channels, format: config.format)
        }
        var needed = room((config.duration ?? 60) + config.prerollSeconds)
        if config.retention.isActive {
            let keptFree = config.retention.minimumFree?.bytes(ofFileSystemSize: space.sizeBytes) ?? 0
            needed = min(needed, room(config.rotateSeconds ?? 60) + keptFree)
        }
        if needed > space.availableBytes { throw .insufficientSpace(path: path, neededBytes: needed, freeBytes: space.availableBytes) }
        return nil
    }
}
