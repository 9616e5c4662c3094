// close-race: the jack2 #395 close/open deadlock, made deterministic.
//
//   close-race SERVER raw|safe live|stopped|locked HOLD_MS
//
// Opens and activates a client "victim", arms the shm_open hook, prints
// "armed", and waits until the victim's notification thread sleeps in the
// hook (another client must arrive on the server: the test opens one). It
// prints "inside"; with "stopped" it then waits for a line on stdin (the test
// stops the server first). Then it closes the victim: "raw" as libjack's
// callers do (jack_client_close at once), "safe" through the lane (JackRuntime). It prints
// the outcome and opens another client to show whether libjack still answers.
// With "locked" it closes at once instead, after a line on stdin and while
// the thread is still quiet ("closing"), and prints "inside" whenever the
// thread enters the hook: the test holds the victim's client-name lock, so
// the close waits for it, and lets go once another client's arrival has sent
// the thread into the hook.
// Exit status: 0 closed, 75 libjack wedged (reported, not hung), 2 usage.
import CJack
import CloseRaceHook
import Dispatch
import Glibc
import JackKit
import JackRuntime

func say(_ line: String) {
    print(line)
    fflush(nil)
}

let arguments = CommandLine.arguments
guard arguments.count == 5, ["raw", "safe"].contains(arguments[2]), ["live", "stopped", "locked"].contains(arguments[3]),
      let hold = Int32(arguments[4]) else {
    say("usage: close-race SERVER raw|safe live|stopped|locked HOLD_MS")
    exit(2)
}
let (server, safe, stopped, locked) = (arguments[1], arguments[2] == "safe", arguments[3] == "stopped", arguments[3] == "locked")
LibraryMessages.silence()
// The raw close writes to a stopped server's socket: let it reach the deadlock, not die of SIGPIPE.
signal(SIGPIPE, SIG_IGN)

let victim: Client
do {
    victim = try Client(name: "victim", serverName: server)
    try victim.setEventHandler { event in
        if case .shutdown = event { say("shutdown") }
    }
    try victim.activate()
} catch {
    say("cannot open the victim: \(error)")
    exit(2)
}
close_race_arm(hold)
say("armed")
if locked {
    DispatchQueue.global().async {
        while close_race_state() == 0 { usleep(1000) }
        say("inside")
    }
    _ = readLine()
    say("closing")
} else {
    while close_race_state() == 0 { usleep(1000) }
    say("inside")
    if stopped { _ = readLine() }
}

if safe {
    switch victim.close() {
    case .closed, .alreadyClosed: say("closed")
    case let .wedged(reason): say("wedged: \(reason)")
    }
} else {
    jack_client_close(victim.handle)
    say("closed")
}
do {
    let after = try Client(name: "after", serverName: server)
    after.close()
    say("reopened")
} catch {
    say("reopen failed: \(error)")
}
// libjack's global destructors would wait for a wedged client: leave at once.
_exit(ClientLifecycle.shared.wedgedReason == nil ? 0 : 75)
