// catch-check: the seeds' `catch let error as NSError`, from top-level code,
// as a small tool ported from iOS writes it. The session's errors are
// NSErrors of AVAudioSession's domain and code, so the clause matches, with
// the code and the message. Needs no JACK server: the refusal comes first.
// Exits 1 when a clause does not match as the guide says.
//
// No closure and no `&&`, `||` or `??` in this file's top-level code: with
// one, Swift 6.3.1 crashes on such a catch at top level ("Found ownership
// error"; docs/SESSION.md's "Errors" row has the smallest case and the ways round).
import Foundation
import JackAudioSession

let session = AudioSession(clientName: "catch-check")
var failures = 0

// voiceChat is no mode of playback: AVAudioSession throws '!cat' (560161140).
do {
    try session.setCategory(AVAudioSessionCategoryPlayback, mode: AVAudioSessionModeVoiceChat, options: [])
    print("catch-check: setCategory did not throw")
    failures += 1
} catch let error as NSError {
    print("typed throws: caught as NSError: \(error.domain) \(error.code): \(error.localizedDescription)")
    let asTheGuideSays = error.domain == NSOSStatusErrorDomain ? error.code == 560_161_140 : false
    if !asTheGuideSays {
        print("catch-check: NOT as the guide says")
        failures += 1
    }
    if !error.localizedDescription.contains("voiceChat") {
        print("catch-check: the message does not name the mode")
        failures += 1
    }
}

// Through code that throws untyped errors, as ported code often does: the cast is a real one.
func configureForVoiceChat() throws {
    try session.setCategory(AVAudioSessionCategoryPlayback, mode: AVAudioSessionModeVoiceChat, options: [])
}
do {
    try configureForVoiceChat()
    failures += 1
} catch let error as NSError {
    print("untyped throws: caught as NSError: \(error.code)")
    if error.code != 560_161_140 { failures += 1 }
} catch {
    print("catch-check: not caught as NSError: \(error)")
    failures += 1
}

// A plain catch keeps the typed error: its typed code and the JACK cause.
do {
    try session.setCategory(AVAudioSessionCategoryPlayback, mode: AVAudioSessionModeVoiceChat, options: [])
} catch {
    print("plain catch: \(error.sessionCode) ('\(error.sessionCode.fourCharacterCode)')")
    if error.sessionCode != .incompatibleCategory { failures += 1 }
}
session.close()
print(failures == 0 ? "catch-check: every catch as the guide says" : "catch-check: \(failures) not as the guide says")
exit(failures == 0 ? 0 : 1)
